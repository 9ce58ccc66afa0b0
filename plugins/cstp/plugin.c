/* The gpustreamcstp plugin: cstpsink and cstpsrc, frames over parallel UDP
 * streams with cross-stream coding. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/gpustream/gstgpustream.h>

#include "cstpsink.h"
#include "cstpsrc.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  /* the project's debug categories and device rescans, as every plugin of
   * the set (the code has no GPU path yet) */
  gst_gpustream_plugin_init (plugin);

  ret |= GST_ELEMENT_REGISTER (cstpsink, plugin);
  ret |= GST_ELEMENT_REGISTER (cstpsrc, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpustreamcstp,
    "Frames over parallel UDP streams with cross-stream coding (CSTP)",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
