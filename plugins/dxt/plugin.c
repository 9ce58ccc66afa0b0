/* The gpustreamdxt plugin: DXT / HAP compression of raw video, after Kim,
 * Yoo, Kim and Kim, "In-network Processing of the GPU-based Real-time DXT
 * Compression" (2011), and HAP in QuickTime files. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/gpustream/gstgpustream.h>

#include "dxtenc.h"
#include "dxtdec.h"
#include "hapmovmux.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  gst_gpustream_plugin_init (plugin);

  ret |= GST_ELEMENT_REGISTER (dxtenc, plugin);
  ret |= GST_ELEMENT_REGISTER (dxtdec, plugin);
  ret |= GST_ELEMENT_REGISTER (hapmovmux, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpustreamdxt,
    "Real-time DXT (S3TC) and HAP compression of raw video on the GPU or the CPU",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
