/* ncencoder: random linear network coding of a byte stream or of buffers. */
#ifndef GST_NC_ENCODER_H
#define GST_NC_ENCODER_H

#include <gst/gst.h>

G_BEGIN_DECLS

typedef enum {
  GST_NC_COEFFICIENTS_SEED = 0,
  GST_NC_COEFFICIENTS_VECTOR = 1,
} GstNcCoefficients;

GType gst_nc_coefficients_get_type (void);
#define GST_TYPE_NC_COEFFICIENTS (gst_nc_coefficients_get_type ())

typedef enum {
  GST_NC_FRAMING_AUTO = 0,
  GST_NC_FRAMING_BYTES = 1,
  GST_NC_FRAMING_BUFFERS = 2,
} GstNcFraming;

GType gst_nc_framing_get_type (void);
#define GST_TYPE_NC_FRAMING (gst_nc_framing_get_type ())

#define GST_TYPE_NC_ENCODER (gst_nc_encoder_get_type ())
G_DECLARE_FINAL_TYPE (GstNcEncoder, gst_nc_encoder, GST, NC_ENCODER, GstElement)

GST_ELEMENT_REGISTER_DECLARE (ncencoder);

G_END_DECLS

#endif /* GST_NC_ENCODER_H */
