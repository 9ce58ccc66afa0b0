/* srtp_kernels.h: SRTP / SRTCP (RFC 3711, RFC 6188 AES-256, RFC 7714 AES-GCM)
 * protection for gpusrtpenc / gpusrtpdec, in plain C11 with no dependency
 * beyond libc.
 *
 * One GsSrtpCtx per SSRC and direction (a sender context protects, a receiver
 * context unprotects). Packets are processed in place: protect needs room for
 * the tag (and the 4-byte SRTCP trailer) after the packet; cap says how much.
 *
 * Three ways to run the same math:
 *  - gsrtp_rtp_protect() & co: one packet, scalar reference (srtp_hd.h,
 *    table AES: not constant time; the elements never call them for a
 *    packet, they go through the batch API, a batch of one included);
 *  - gsrtp_protect_batch() / gsrtp_unprotect_batch(): many packets of many
 *    contexts in one call, AES-NI / PCLMUL / SHA-NI when the CPU has them;
 *  - the CUDA kernels (srtp_cuda.h): the host calls gsrtp_prepare_protect()
 *    per packet (ROC / SRTCP index bookkeeping), the device runs
 *    gs_srtp_hd_protect() per packet; for unprotect the host prepares with
 *    gsrtp_prepare_unprotect_desc(), the device runs gs_srtp_hd_unprotect(),
 *    the host commits in order with gsrtp_commit_unprotect_desc().
 * All three give identical bytes; the tests check that, and against libsrtp. */
#ifndef SRTP_KERNELS_H
#define SRTP_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "srtp/srtp_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same names as srtpenc's rtp-cipher / rtp-auth properties. */
typedef enum {
  GSRTP_CIPHER_NULL = 0,
  GSRTP_CIPHER_AES_128_CM,    /* AES_CM_128 (aes-128-icm) */
  GSRTP_CIPHER_AES_256_CM,    /* AES_256_CM (RFC 6188) */
  GSRTP_CIPHER_AES_128_GCM,   /* AEAD_AES_128_GCM (RFC 7714), auth implied */
  GSRTP_CIPHER_AES_256_GCM    /* AEAD_AES_256_GCM */
} GsSrtpCipher;

typedef enum {
  GSRTP_AUTH_NULL = 0,
  GSRTP_AUTH_HMAC_SHA1_32,
  GSRTP_AUTH_HMAC_SHA1_80
} GsSrtpAuth;

typedef struct {
  GsSrtpCipher cipher;
  GsSrtpAuth auth;            /* ignored for the GCM ciphers */
} GsSrtpPolicy;

/* The SDES crypto-suites, as policies. */
#define GSRTP_AES_CM_128_HMAC_SHA1_80  ((GsSrtpPolicy) { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80 })
#define GSRTP_AES_CM_128_HMAC_SHA1_32  ((GsSrtpPolicy) { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_32 })
#define GSRTP_AES_256_CM_HMAC_SHA1_80  ((GsSrtpPolicy) { GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_80 })
#define GSRTP_AES_256_CM_HMAC_SHA1_32  ((GsSrtpPolicy) { GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_32 })
#define GSRTP_AEAD_AES_128_GCM         ((GsSrtpPolicy) { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL })
#define GSRTP_AEAD_AES_256_GCM         ((GsSrtpPolicy) { GSRTP_CIPHER_AES_256_GCM, GSRTP_AUTH_NULL })

typedef enum {
  GSRTP_OK = 0,
  GSRTP_ERR_AUTH,             /* tag mismatch: nothing was decrypted */
  GSRTP_ERR_REPLAY,           /* index already received */
  GSRTP_ERR_REPLAY_OLD,       /* index older than the replay window */
  GSRTP_ERR_TOO_SHORT,        /* shorter than header + tag (+ trailer) */
  GSRTP_ERR_BAD_HEADER,       /* not RTP/RTCP version 2, or header overruns */
  GSRTP_ERR_NO_SPACE,         /* cap too small for the tag / trailer */
  GSRTP_ERR_BAD_PARAM,        /* bad policy, key length, window size */
  GSRTP_ERR_INDEX_EXHAUSTED,  /* ROC or SRTCP index would wrap: rekey */
  GSRTP_ERR_BAD_MKI           /* the packet's MKI is not the context's */
} GsSrtpResult;

const char *gsrtp_result_name (GsSrtpResult r);

#define GSRTP_DEFAULT_WINDOW 64
#define GSRTP_MAX_WINDOW 32768    /* srtpdec's replay-window-size maximum */
#define GSRTP_MAX_TRAILER 20      /* most bytes protect adds (GCM SRTCP), MKI aside */
#define GSRTP_MAX_MKI GS_SRTP_MAX_MKI
#define GSRTP_GCM_ACCEL_BYTES 832     /* >= sizeof (GsGcmAccelKey), asserted */

/* Anti-replay window over 48-bit (SRTP) or 31-bit (SRTCP) indices: a ring,
 * bit (i mod GSRTP_MAX_WINDOW) says index i (top - size < i <= top) was
 * accepted, so moving top costs the indices it skips, not the window. */
typedef struct {
  uint64_t top;
  uint64_t bits[GSRTP_MAX_WINDOW / 64];
  uint32_t size;
  uint32_t have;
} GsSrtpReplay;

typedef struct {
  GsSrtpKeys rtp_keys;        /* derived session keys (plain data, GPU-copyable) */
  GsSrtpKeys rtcp_keys;
  GsSrtpPolicy rtp, rtcp;
  uint32_t roc;               /* RTP rollover counter */
  uint32_t s_l;               /* highest sequence number seen (RFC 3711 3.3.1) */
  uint32_t have_seq;          /* s_l is valid */
  uint32_t srtcp_index;       /* sender: last SRTCP index sent */
  GsSrtpReplay rtp_replay;    /* receiver windows */
  GsSrtpReplay rtcp_replay;
  /* The batch path's AES-GCM expanded keys of rtp_keys and rtcp_keys (an
   * srtp_gcm_accel.h GsGcmAccelKey each: round keys and 16 powers of H),
   * built on first use and rebuilt whenever the round keys differ from
   * gcm_accel_of, so a batch of one packet does not pay for them every
   * time and no key change leaves a stale one. Host only; wiped with the
   * context. Each starts at its first 32-byte boundary: a context comes
   * from malloc, which promises only 16. */
  uint8_t gcm_accel[2][GSRTP_GCM_ACCEL_BYTES + 32];
  uint32_t gcm_accel_of[2][8];
  uint32_t gcm_accel_valid[2];
} GsSrtpCtx;

/* Master key / salt lengths (bytes) a cipher expects: 16/32 key, 14 salt
 * (12 for GCM; the NULL cipher takes an AES-128 master key as libsrtp does). */
size_t gsrtp_master_key_len (GsSrtpCipher c);
size_t gsrtp_master_salt_len (GsSrtpCipher c);
/* Bytes protect appends: tag for RTP; trailer + tag for RTCP (an MKI adds
 * its length to both: gsrtp_ctx_overhead counts it). */
size_t gsrtp_rtp_overhead (GsSrtpPolicy p);
size_t gsrtp_rtcp_overhead (GsSrtpPolicy p);
size_t gsrtp_ctx_overhead (const GsSrtpCtx *ctx, int is_rtcp);

/* key = master key || master salt, as libsrtp and srtpenc's "key" take it,
 * gsrtp_master_key_len (rtp.cipher) + gsrtp_master_salt_len (rtp.cipher)
 * bytes. The RTCP policy must use a cipher of the same master key and salt
 * sizes (NULL counts as AES-128-CM). replay_window: 0 = default (64). */
GsSrtpResult gsrtp_ctx_init (GsSrtpCtx *ctx, GsSrtpPolicy rtp, GsSrtpPolicy rtcp,
    const uint8_t *key, size_t key_len, uint32_t replay_window);
/* Wipes the keys. */
void gsrtp_ctx_clear (GsSrtpCtx *ctx);
/* The master key identifier (RFC 3711 3.1), 0..GSRTP_MAX_MKI bytes, of the
 * context's master key: protect writes it into every packet, unprotect
 * drops packets that carry another (GSRTP_ERR_BAD_MKI). */
GsSrtpResult gsrtp_ctx_set_mki (GsSrtpCtx *ctx, const uint8_t *mki, size_t mki_len);
/* Where the MKI of a received packet of ctx's policy is, or NULL when the
 * context has no MKI or the packet is too short to hold one. A receiver
 * with several master keys (srtpdec's mki / mki2 ...) reads it to choose. */
const uint8_t *gsrtp_packet_mki (const GsSrtpCtx *ctx, const uint8_t *pkt, size_t len,
    int is_rtcp);
/* Switches ctx to the session keys (and MKI) of from, keeping ctx's ROC,
 * SRTCP index and replay windows: the same stream under another master key. */
void gsrtp_ctx_take_keys (GsSrtpCtx *ctx, const GsSrtpCtx *from);
/* Sets the ROC (receiver joining a stream, or "roc" from caps / signaling);
 * the next packet's sequence number is taken as is with this ROC. */
void gsrtp_ctx_set_roc (GsSrtpCtx *ctx, uint32_t roc);

/* RFC 3711 4.3 key derivation, key_derivation_rate 0: out = first n bytes of
 * AES-CM(master key, IV = (master_salt ^ (label << 48)) << 16). master_salt
 * is 14 bytes (a 12-byte GCM salt zero-padded, as libsrtp does). */
void gsrtp_kdf (const uint8_t *master_key, size_t key_len, const uint8_t master_salt[14],
    uint8_t label, uint8_t *out, size_t n);

/* RFC 3711 3.3.1: the packet index for sequence number seq given the
 * context's ROC and s_l; *v gets the guessed ROC (-1: before the stream). */
uint64_t gsrtp_estimate_index (const GsSrtpCtx *ctx, uint16_t seq, int64_t *v);

/* Scalar reference, one packet in place. */
GsSrtpResult gsrtp_rtp_protect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t cap, size_t *out_len);
GsSrtpResult gsrtp_rtp_unprotect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t *out_len);
GsSrtpResult gsrtp_rtcp_protect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t cap, size_t *out_len);
GsSrtpResult gsrtp_rtcp_unprotect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t *out_len);

/* ---- batches ---- */
typedef struct {
  GsSrtpCtx *ctx;
  uint8_t *data;              /* the packet, in place */
  uint32_t len;               /* in: packet length; out: result length */
  uint32_t cap;               /* protect: bytes available at data */
  uint32_t is_rtcp;
  GsSrtpResult result;        /* out */
} GsSrtpPacket;

typedef enum {
  GSRTP_IMPL_AUTO = 0,        /* best the CPU has */
  GSRTP_IMPL_SCALAR,          /* the GS_HD reference, per packet */
  GSRTP_IMPL_ACCEL            /* AES-NI + PCLMUL + SHA-NI; falls back per primitive */
} GsSrtpImpl;

/* Packets are processed in array order as far as per-context state goes
 * (ROC, SRTCP index, replay), so a batch gives exactly what the same packets
 * one by one would. Returns the number of packets with result GSRTP_OK. */
size_t gsrtp_protect_batch (GsSrtpPacket *pkts, size_t n, GsSrtpImpl impl);
size_t gsrtp_unprotect_batch (GsSrtpPacket *pkts, size_t n, GsSrtpImpl impl);

/* The device half of a protect (what gs_srtp_hd_protect computes: encrypt,
 * tag, trailer, MKI; returns the protected length) for a packet prepared
 * already with gsrtp_prepare_protect, on the host through the batch path's
 * primitives (AES-NI, or without it the constant-time portable AES), never
 * the table AES. k: the keys d was prepared for. A GPU batch whose launch
 * failed is finished this way: its indices moved at prepare, so no packet
 * is protected twice and no index advanced twice. */
uint32_t gsrtp_protect_desc (const GsSrtpKeys *k, uint8_t *pkt, const GsSrtpDesc *d);

/* Which accelerations the CPU offers (bit 0 AES-NI, 1 PCLMUL, 2 SHA-NI, 3 AVX2,
 * 4 AVX-512F). */
unsigned gsrtp_cpu_features (void);

/* The batch path as a CPU without AES-NI and PCLMUL runs it (constant-time
 * AES through OpenSSL, the masked GHASH multiply), also where the CPU has
 * both: for tests and timing comparisons. Starts as the environment variable
 * GS_SRTP_FORCE_PORTABLE says (set and not "0": forced). */
void gsrtp_set_force_portable (int on);
int gsrtp_force_portable (void);

/* ---- GPU / emulation support ----
 * Host half of a protect: header checks, index and ROC / SRTCP index update,
 * fills d (len, hdr_len, roc, is_rtcp; the caller sets offset and keys). The
 * device half is gs_srtp_hd_protect (t, &keys[d->keys], buf + d->offset, d). */
GsSrtpResult gsrtp_prepare_protect (GsSrtpCtx *ctx, const uint8_t *pkt, size_t len,
    size_t cap, int is_rtcp, GsSrtpDesc *d);
/* Host half of an unprotect, committing nothing (ctx is only read): MKI,
 * header and length checks, index / ROC estimate against ctx's state as it
 * is, replay check. On GSRTP_OK fills d (len without tag, trailer and MKI,
 * hdr_len, roc = the estimated ROC or for SRTCP the E | index trailer,
 * is_rtcp; the caller sets offset and keys). The device half is
 * gs_srtp_hd_unprotect (t, &keys[d->keys], buf + d->offset, d), 1 when the
 * tag matched. Prepared twice against different states, a packet whose
 * d->roc is the same was estimated at the same index. */
GsSrtpResult gsrtp_prepare_unprotect_desc (const GsSrtpCtx *ctx, const uint8_t *pkt,
    size_t len, int is_rtcp, GsSrtpDesc *d);
/* After the tag matched: records the packet of d (prepared against ctx's
 * current state) in the replay window and moves the ROC. pkt: the packet,
 * whose header is in clear either way. */
void gsrtp_commit_unprotect_desc (GsSrtpCtx *ctx, const uint8_t *pkt, const GsSrtpDesc *d);
/* The host copy of the AES tables (the kernel copies the same data). */
const GsAesTables *gsrtp_aes_tables (void);

/* Test helpers (full-message SHA-1 / HMAC-SHA1 over the GS_HD compression). */
void gsrtp_sha1 (const uint8_t *msg, size_t len, uint8_t out[20]);
void gsrtp_hmac_sha1 (const uint8_t *key, size_t key_len, const uint8_t *msg, size_t len,
    uint8_t out[20]);
void gsrtp_hmac_sha1_midstates (const uint8_t *key, size_t key_len, uint32_t istate[5],
    uint32_t ostate[5]);

#ifdef __cplusplus
}
#endif

#endif /* SRTP_KERNELS_H */
