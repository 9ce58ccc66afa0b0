/* ncdecoder: progressive RLNC decoding back to the original bytes. */
#ifndef GST_NC_DECODER_H
#define GST_NC_DECODER_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_NC_DECODER (gst_nc_decoder_get_type ())
G_DECLARE_FINAL_TYPE (GstNcDecoder, gst_nc_decoder, GST, NC_DECODER, GstElement)

GST_ELEMENT_REGISTER_DECLARE (ncdecoder);

G_END_DECLS

#endif /* GST_NC_DECODER_H */
