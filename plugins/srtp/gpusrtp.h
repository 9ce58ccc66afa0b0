/* What gpusrtpenc and gpusrtpdec share: the cipher / auth enums (srtpenc's
 * values and nicks under our own GType names), caps fields, key hygiene. */
#ifndef GST_GPU_SRTP_H
#define GST_GPU_SRTP_H

#include <gst/gst.h>
#include <srtp/srtp_kernels.h>

G_BEGIN_DECLS

/* Same numeric values as srtpenc's GstSrtpCipherType / GstSrtpAuthType, and
 * as the kernel's GsSrtpCipher / GsSrtpAuth. */
typedef enum {
  GST_GPU_SRTP_CIPHER_NULL = 0,
  GST_GPU_SRTP_CIPHER_AES_128_ICM = 1,
  GST_GPU_SRTP_CIPHER_AES_256_ICM = 2,
  GST_GPU_SRTP_CIPHER_AES_128_GCM = 3,
  GST_GPU_SRTP_CIPHER_AES_256_GCM = 4,
} GstGpuSrtpCipherType;

typedef enum {
  GST_GPU_SRTP_AUTH_NULL = 0,
  GST_GPU_SRTP_AUTH_HMAC_SHA1_32 = 1,
  GST_GPU_SRTP_AUTH_HMAC_SHA1_80 = 2,
} GstGpuSrtpAuthType;

GType gst_gpu_srtp_cipher_type_get_type (void);
#define GST_TYPE_GPU_SRTP_CIPHER_TYPE (gst_gpu_srtp_cipher_type_get_type ())
GType gst_gpu_srtp_auth_type_get_type (void);
#define GST_TYPE_GPU_SRTP_AUTH_TYPE (gst_gpu_srtp_auth_type_get_type ())

/* srtpenc's defaults (and range) for replay-window-size; the kernel keeps at
 * most GSRTP_MAX_WINDOW, larger values are clamped. */
#define GST_GPU_SRTP_DEFAULT_WINDOW 128
#define GST_GPU_SRTP_MIN_WINDOW 64
#define GST_GPU_SRTP_MAX_WINDOW_PROP 32768

GsSrtpPolicy gst_gpu_srtp_policy (GstGpuSrtpCipherType cipher,
    GstGpuSrtpAuthType auth);
const gchar *gst_gpu_srtp_cipher_nick (GstGpuSrtpCipherType cipher);
const gchar *gst_gpu_srtp_auth_nick (GstGpuSrtpAuthType auth);
gboolean gst_gpu_srtp_cipher_from_nick (const gchar * nick,
    GstGpuSrtpCipherType * cipher);
gboolean gst_gpu_srtp_auth_from_nick (const gchar * nick,
    GstGpuSrtpAuthType * auth);
/* master key || salt length the RTP cipher expects */
gsize gst_gpu_srtp_key_length (GstGpuSrtpCipherType cipher);

/* A copy of caps without the key material (srtp-key, mki), for logging:
 * every GST_*_OBJECT call that prints caps goes through this. */
GstCaps *gst_gpu_srtp_caps_for_log (const GstCaps * caps);

/* len bytes from the kernel's CSPRNG (getrandom); FALSE if it failed. */
gboolean gst_gpu_srtp_random_bytes (guint8 * out, gsize len);

/* The policies, key and ROC carried by an SRTP caps structure (sink caps of
 * srtpdec, or what request-key returns). The key is copied into key. */
typedef struct {
  GsSrtpPolicy rtp, rtcp;
  guint8 key[64];
  gsize key_len;
  gboolean have_roc;
  guint32 roc;
} GstGpuSrtpKeyInfo;

/* FALSE (and *why set) when fields are missing, unknown or inconsistent. */
gboolean gst_gpu_srtp_key_info_from_structure (const GstStructure * s,
    GstGpuSrtpKeyInfo * info, const gchar ** why);
void gst_gpu_srtp_key_info_clear (GstGpuSrtpKeyInfo * info);

/* Rate limit for warnings about dropped packets: TRUE at most once a second
 * per *last (monotonic microseconds). */
gboolean gst_gpu_srtp_warn_ok (gint64 * last);

void gst_gpu_srtp_mark_plugin_api (void);

/* Appends one entry of the `streams` array both elements put in their stats
 * (as srtpenc does): a structure with the SSRC and its rollover counter.
 * streams is a GValue holding a GST_TYPE_ARRAY. */
void gst_gpu_srtp_stats_add_stream (GValue * streams, guint32 ssrc,
    guint32 roc);

G_END_DECLS

#endif /* GST_GPU_SRTP_H */
