/* gpssrtp.h: what the SRTP elements (gpusrtpenc, gpusrtpdec, rtgpuqueue)
 * share: one batch of protects or unprotects, as one launch of the
 * srtp_protect_batch / srtp_unprotect_batch kernel on the GPU or through the
 * kernels' batch API on the CPU; the cipher / auth enums (srtpenc's types,
 * values and nicks); caps fields; key hygiene; stats. gpssrtp.c also holds
 * the scheduler processor "srtp-protect" (gpsprocessor.h), whose
 * configuration fields are listed there. */
#ifndef GPS_SRTP_H
#define GPS_SRTP_H

#include <gst/gst.h>
#include "gstgpustream.h"
#include "srtp/srtp_kernels.h"

G_BEGIN_DECLS

/* Protects pkts in place, exactly as gsrtp_protect_batch (pkts, n,
 * GSRTP_IMPL_AUTO) does: the same bytes, the same per-context state (ROC,
 * SRTCP index) advanced in array order, results in pkts[i].result and the
 * protected length in pkts[i].len.
 *
 * With backend GPU or HYBRID and a GstCudaContext, the host prepares every
 * packet (header checks, index bookkeeping), the batch goes to the device in
 * one copy, one launch protects it and one copy brings it back. If any CUDA
 * step fails, the prepared packets are finished on the CPU by
 * gsrtp_protect_desc (AES-NI or the constant-time path; no packet protected
 * twice, no index advanced twice) and a warning is logged. *used_gpu (may be NULL) says which ran.
 *
 * The caller serialises calls that share a GsSrtpCtx. Returns the number of
 * packets with result GSRTP_OK. */
gsize gst_gpustream_srtp_protect_batch (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context,
    gboolean * used_gpu);

/* The two halves of gst_gpustream_srtp_protect_batch, for the scheduler's
 * split processors (gpsscheduler.h): _submit prepares every packet (the
 * per-context state moves here, in array order) and queues the copies and
 * the launch on the CUDA stream and staging area of `lane`, one per lane and
 * context; _finish waits for them and gives every packet its bytes and
 * result, as gst_gpustream_srtp_protect_batch would. pkts stays the
 * caller's until _finish returns; one thread calls both (the lane's staging
 * lock is held in between). The caller serialises _submit calls that share
 * a GsSrtpCtx; _finish touches no context. Without a GPU, _submit protects
 * on the CPU and _finish only counts. Returns the number with GSRTP_OK.
 * GST_GPUSTREAM_SRTP_LANE_NONE: the context's own stream and staging area,
 * shared by every caller outside the scheduler (what
 * gst_gpustream_srtp_protect_batch uses). */
typedef struct _GstGpuStreamSrtpBatch GstGpuStreamSrtpBatch;
#define GST_GPUSTREAM_SRTP_LANE_NONE G_MAXUINT

GstGpuStreamSrtpBatch *gst_gpustream_srtp_protect_submit (GsSrtpPacket *
    pkts, gsize n, GstGpuStreamBackend backend, GstObject * cuda_context,
    guint lane);
gsize gst_gpustream_srtp_protect_finish (GstGpuStreamSrtpBatch * batch,
    gboolean * used_gpu);

/* Unprotects pkts in place, exactly as gsrtp_unprotect_batch (pkts, n,
 * GSRTP_IMPL_AUTO) does: the same results in pkts[i].result, the same
 * unprotected bytes and length (pkts[i].len) for the packets accepted, the
 * same per-context state (ROC, replay windows) as the packets one by one in
 * array order. A rejected packet is left byte for byte as it came.
 *
 * With backend GPU or HYBRID and a GstCudaContext: every packet is prepared
 * against the committed state (MKI, header, index estimate, replay check;
 * nothing committed), copies of the parseable ones go to the device in one
 * copy, one launch of srtp_unprotect_batch checks their tags and decrypts
 * the copies, one copy brings them back. Then, in packet order, each packet
 * is prepared again against the state the packets before it left: a replay
 * inside the batch gets its replay result, a packet whose index estimate
 * moved (a ROC step inside the batch) is redone on the CPU from its
 * untouched original, a failed tag gives GSRTP_ERR_AUTH, and an accepted
 * packet is committed and takes its decrypted copy. If any CUDA step fails,
 * the whole batch goes through gsrtp_unprotect_batch (nothing was committed
 * yet) and a warning is logged. *used_gpu (may be NULL) says whether the
 * GPU ran. cap is not used.
 *
 * The caller serialises calls that share a GsSrtpCtx. Returns the number of
 * packets with result GSRTP_OK. */
gsize gst_gpustream_srtp_unprotect_batch (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context,
    gboolean * used_gpu);

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

/* The enum GTypes of the cipher / auth properties: srtpenc's own
 * GstSrtpCipherType / GstSrtpAuthType when gst-plugins-bad's srtp plugin was
 * loaded first, else GstGpuSrtpCipherType / GstGpuSrtpAuthType with the same
 * values and nicks (taking srtpenc's names before its plugin loads would
 * leave srtpenc without its types). */
GType gst_gpu_srtp_cipher_type_get_type (void);
#define GST_TYPE_GPU_SRTP_CIPHER_TYPE (gst_gpu_srtp_cipher_type_get_type ())
GType gst_gpu_srtp_auth_type_get_type (void);
#define GST_TYPE_GPU_SRTP_AUTH_TYPE (gst_gpu_srtp_auth_type_get_type ())

/* Makes g_type_from_name ("GstSrtpCipherType") / ("GstSrtpAuthType") work,
 * as code written for srtpenc expects: loads srtpenc's plugin (which
 * registers them) when the registry has it, else registers ours under those
 * names. Once per process; called from the elements' instance init, never
 * while a plugin is loading (loading another plugin there deadlocks). */
void gst_gpu_srtp_publish_srtpenc_types (void);

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

/* A stream's source caps: sink_caps (NULL: application/x-rtp) renamed
 * application/x-srtp, or x-srtcp when is_rtcp, with the fields srtpdec keys
 * from (mki only when mki is not NULL). With GCM the auth announced is null,
 * as srtpenc's caps say (the auth setting does not apply; srtpdec reads GCM
 * plus an HMAC auth as another policy). */
GstCaps *gst_gpu_srtp_make_src_caps (const GstCaps * sink_caps,
    gboolean is_rtcp, GstBuffer * key, GstBuffer * mki,
    GstGpuSrtpCipherType rtp_cipher,
    GstGpuSrtpAuthType rtp_auth, GstGpuSrtpCipherType rtcp_cipher,
    GstGpuSrtpAuthType rtcp_auth);

/* A copy of caps without the key material (srtp-key, mki), for logging:
 * every GST_*_OBJECT call that prints caps goes through this. */
GstCaps *gst_gpu_srtp_caps_for_log (const GstCaps * caps);

/* len bytes from the kernel's CSPRNG (getrandom); FALSE if it failed. */
gboolean gst_gpu_srtp_random_bytes (guint8 * out, gsize len);

/* srtpdec reads srtp-key + mki, then srtp-key2 + mki2 ... up to libsrtp's
 * SRTP_MAX_NUM_MASTER_KEYS. */
#define GST_GPU_SRTP_MAX_KEYS 16

/* The policies, master keys and ROC carried by an SRTP caps structure
 * (sink caps of srtpdec, or what request-key returns). Keys are copied. */
typedef struct {
  GsSrtpPolicy rtp, rtcp;
  guint n_keys;                 /* 1, or more with MKIs */
  gsize key_len;                /* the same for every key */
  gsize mki_len;                /* 0: no MKI; else the same for every key */
  guint8 key[GST_GPU_SRTP_MAX_KEYS][64];
  guint8 mki[GST_GPU_SRTP_MAX_KEYS][GSRTP_MAX_MKI];
  gboolean have_roc;
  guint32 roc;
} GstGpuSrtpKeyInfo;

/* FALSE (and *why set) when fields are missing, unknown or inconsistent. */
gboolean gst_gpu_srtp_key_info_from_structure (const GstStructure * s,
    GstGpuSrtpKeyInfo * info, const gchar ** why);
void gst_gpu_srtp_key_info_clear (GstGpuSrtpKeyInfo * info);

void gst_gpu_srtp_mark_plugin_api (void);

/* Appends one entry of the `streams` array both elements put in their stats
 * (as srtpenc / srtpdec do): an application/x-srtp-stream structure with the
 * SSRC and its rollover counter (guint both), then the fields given as
 * gst_structure_set takes them (NULL: none). streams is a GValue holding a
 * GST_TYPE_ARRAY. */
void gst_gpu_srtp_stats_add_stream (GValue * streams, guint32 ssrc,
    guint32 roc, const gchar * firstfield, ...);

G_END_DECLS

#endif /* GPS_SRTP_H */
