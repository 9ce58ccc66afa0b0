/* The gpustreamsrtp plugin: SRTP protection on the GPU or the CPU. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/gpustream/gstgpustream.h>

#include <gst/gpustream/gpssrtp.h>
#include "gpusrtpenc.h"
#include "gpusrtpdec.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  gst_gpustream_plugin_init (plugin);
  gst_gpu_srtp_mark_plugin_api ();

  ret |= GST_ELEMENT_REGISTER (gpusrtpenc, plugin);
  ret |= GST_ELEMENT_REGISTER (gpusrtpdec, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpustreamsrtp,
    "SRTP / SRTCP protection (RFC 3711, 6188, 7714) on the GPU or the CPU, "
    "a drop-in for srtpenc / srtpdec",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
