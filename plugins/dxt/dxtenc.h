/* dxtenc: DXT (BC1/BC3/YCoCg-DXT5) compression of raw video, raw or HAP
 * frames. */
#ifndef GST_DXT_ENC_H
#define GST_DXT_ENC_H

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

typedef enum {
  GST_DXT_ENC_FORMAT_DXT1 = 0,
  GST_DXT_ENC_FORMAT_DXT5 = 1,
  GST_DXT_ENC_FORMAT_YCOCG_DXT5 = 2,
} GstDxtEncFormat;

typedef enum {
  GST_DXT_ENC_QUALITY_FAST = 0,
  GST_DXT_ENC_QUALITY_HIGH = 1,
} GstDxtEncQuality;

GType gst_dxt_enc_format_get_type (void);
#define GST_TYPE_DXT_ENC_FORMAT (gst_dxt_enc_format_get_type ())
GType gst_dxt_enc_quality_get_type (void);
#define GST_TYPE_DXT_ENC_QUALITY (gst_dxt_enc_quality_get_type ())

#define GST_TYPE_DXT_ENC (gst_dxt_enc_get_type ())
G_DECLARE_FINAL_TYPE (GstDxtEnc, gst_dxt_enc, GST, DXT_ENC, GstVideoEncoder)

GST_ELEMENT_REGISTER_DECLARE (dxtenc);

G_END_DECLS

#endif /* GST_DXT_ENC_H */
