/* The gpustreamrtgpu plugin: rtgpuqueue, the real-time GPU scheduler. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/gpustream/gstgpustream.h>

#include "rtgpuqueue.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gst_gpustream_plugin_init (plugin);

  return GST_ELEMENT_REGISTER (rtgpuqueue, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpustreamrtgpu,
    "Real-time GPU scheduling of packet streams with admission control",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
