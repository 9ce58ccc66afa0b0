/* dxtdec: raw DXT and HAP frames to RGBA / BGRA. */
#ifndef GST_DXT_DEC_H
#define GST_DXT_DEC_H

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_DXT_DEC (gst_dxt_dec_get_type ())
G_DECLARE_FINAL_TYPE (GstDxtDec, gst_dxt_dec, GST, DXT_DEC, GstVideoDecoder)

GST_ELEMENT_REGISTER_DECLARE (dxtdec);

G_END_DECLS

#endif /* GST_DXT_DEC_H */
