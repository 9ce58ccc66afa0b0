/* gpusrtpdec: SRTP / SRTCP authentication and decryption, a drop-in for
 * srtpdec. */
#ifndef GST_GPU_SRTP_DEC_H
#define GST_GPU_SRTP_DEC_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_GPU_SRTP_DEC (gst_gpu_srtp_dec_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuSrtpDec, gst_gpu_srtp_dec, GST, GPU_SRTP_DEC,
    GstElement)

GST_ELEMENT_REGISTER_DECLARE (gpusrtpdec);

G_END_DECLS

#endif /* GST_GPU_SRTP_DEC_H */
