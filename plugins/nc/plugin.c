/* The gpustreamnc plugin: network coding elements and their RTP payloading. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>
#include <gst/gpustream/gstgpustream.h>

#include "ncencoder.h"
#include "ncdecoder.h"
#include "gstrtpncpay.h"
#include "gstrtpncdepay.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  gst_gpustream_plugin_init (plugin);

  ret |= GST_ELEMENT_REGISTER (ncencoder, plugin);
  ret |= GST_ELEMENT_REGISTER (ncdecoder, plugin);
  ret |= GST_ELEMENT_REGISTER (rtpncpay, plugin);
  ret |= GST_ELEMENT_REGISTER (rtpncdepay, plugin);

  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpustreamnc,
    "Random linear network coding (RLNC) over GF(2^8) on the GPU or the CPU",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
