/* gpusrtpenc: SRTP / SRTCP protection, a drop-in for srtpenc. */
#ifndef GST_GPU_SRTP_ENC_H
#define GST_GPU_SRTP_ENC_H

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_GPU_SRTP_ENC (gst_gpu_srtp_enc_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuSrtpEnc, gst_gpu_srtp_enc, GST, GPU_SRTP_ENC,
    GstElement)

GST_ELEMENT_REGISTER_DECLARE (gpusrtpenc);

G_END_DECLS

#endif /* GST_GPU_SRTP_ENC_H */
