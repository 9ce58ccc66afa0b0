/* bench_srtp.c: SRTP protect throughput on one core, 12-byte RTP header +
 * 1316- or 188-byte payload, AES_CM_128_HMAC_SHA1_80 and AEAD_AES_128_GCM:
 *   batched  gsrtp_protect_batch (AES-NI / SHA-NI / PCLMUL), 64 packets a call
 *   batched-shani, batched-avx2, batched-sha1ref (HMAC profile): the same
 *            with the SHA-1 capped (gs_sha1_level_cap, as GS_SRTP_SHA1 does)
 *            to SHA-NI / the 8-lane AVX2 multi-buffer code / the scalar one,
 *            i.e. what a CPU without AVX-512 (or SHA-NI) runs; shown where
 *            the CPU has that one and a faster one as well
 *   scalar   gsrtp_rtp_protect, the GS_HD reference, per packet
 *   anchor   OpenSSL per packet the way libsrtp's OpenSSL backend does it:
 *            EVP AES-128-CTR re-IV'd per packet + EVP_MAC HMAC-SHA1 re-init
 *            per packet (GCM: EVP AES-128-GCM re-IV'd, AAD, tag)
 *   libsrtp  Debian's libsrtp2 srtp_protect (NSS backend), for information
 * Prints a table and one JSON line per figure (also to --json FILE). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_sha1_mb.h"
#ifdef HAVE_LIBSRTP2
#include <srtp2/srtp.h>
#endif
#ifdef HAVE_LIBCRYPTO
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#endif

#define BATCH 64
#define MIN_SECONDS 0.4

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t pkts[BATCH][1600];
static uint16_t seq;
static uint8_t key[46];

static void
fill_headers (size_t payload)
{
  for (int i = 0; i < BATCH; i++) {
    uint8_t *p = pkts[i];
    p[0] = 0x80; p[1] = 96;
    p[4] = p[5] = p[6] = 0; p[7] = (uint8_t) i;
    p[8] = 0x12; p[9] = 0x34; p[10] = 0x56; p[11] = 0x78;
    for (size_t j = 0; j < payload; j++)
      p[12 + j] = (uint8_t) (j * 7 + i);
  }
}

static void
set_seqs (void)
{
  for (int i = 0; i < BATCH; i++) {
    seq++;
    pkts[i][2] = (uint8_t) (seq >> 8);
    pkts[i][3] = (uint8_t) seq;
  }
}

typedef void (*RunFn) (void *st, size_t len);

/* packets per second of fn over batches of BATCH */
static double
measure (RunFn fn, void *st, size_t len)
{
  double t0 = now (), t;
  long n = 0;
  fn (st, len);   /* warm up */
  do {
    for (int r = 0; r < 16; r++) {
      set_seqs ();
      fn (st, len);
    }
    n += 16 * BATCH;
    t = now () - t0;
  } while (t < MIN_SECONDS);
  return n / t;
}

/* ---- ours ---- */
static void
run_batched (void *st, size_t len)
{
  GsSrtpPacket p[BATCH];
  for (int i = 0; i < BATCH; i++)
    p[i] = (GsSrtpPacket) { (GsSrtpCtx *) st, pkts[i], (uint32_t) len, 1600, 0, 0 };
  gsrtp_protect_batch (p, BATCH, GSRTP_IMPL_AUTO);
}

static void
run_scalar (void *st, size_t len)
{
  size_t ol;
  for (int i = 0; i < BATCH; i++)
    gsrtp_rtp_protect ((GsSrtpCtx *) st, pkts[i], len, 1600, &ol);
}

#ifdef HAVE_LIBCRYPTO
/* ---- the anchor: OpenSSL per packet, as libsrtp's OpenSSL backend ---- */
typedef struct {
  EVP_CIPHER_CTX *c;
  EVP_MAC_CTX *m;
  GsSrtpCtx keys;     /* only for the derived session keys (same KDF) */
  uint8_t sk[16], salt[14];
  uint32_t roc;
  int gcm;
} Anchor;

static void
run_anchor (void *st, size_t len)
{
  Anchor *a = st;
  for (int i = 0; i < BATCH; i++) {
    uint8_t *p = pkts[i], iv[16], roc[4], mac[EVP_MAX_MD_SIZE];
    size_t ml;
    int ol;
    uint32_t s = ((uint32_t) p[2] << 8) | p[3];
    if (!a->gcm) {
      memcpy (iv, a->salt, 14);
      iv[14] = iv[15] = 0;
      for (int j = 0; j < 4; j++) iv[4 + j] ^= p[8 + j];
      iv[12] ^= (uint8_t) (s >> 8);
      iv[13] ^= (uint8_t) s;
      EVP_EncryptInit_ex (a->c, NULL, NULL, NULL, iv);
      EVP_EncryptUpdate (a->c, p + 12, &ol, p + 12, (int) len - 12);
      EVP_MAC_init (a->m, NULL, 0, NULL);
      EVP_MAC_update (a->m, p, len);
      roc[0] = roc[1] = roc[2] = roc[3] = 0;
      EVP_MAC_update (a->m, roc, 4);
      EVP_MAC_final (a->m, mac, &ml, sizeof mac);
      memcpy (p + len, mac, 10);
    } else {
      for (int j = 0; j < 12; j++) iv[j] = a->salt[j];
      for (int j = 0; j < 4; j++) iv[2 + j] ^= p[8 + j];
      iv[10] ^= (uint8_t) (s >> 8);
      iv[11] ^= (uint8_t) s;
      EVP_EncryptInit_ex (a->c, NULL, NULL, NULL, iv);
      EVP_EncryptUpdate (a->c, NULL, &ol, p, 12);
      EVP_EncryptUpdate (a->c, p + 12, &ol, p + 12, (int) len - 12);
      EVP_EncryptFinal_ex (a->c, p + len, &ol);
      EVP_CIPHER_CTX_ctrl (a->c, EVP_CTRL_GCM_GET_TAG, 16, p + len);
    }
  }
}

static void
anchor_init (Anchor *a, int gcm)
{
  uint8_t salt14[14] = { 0 }, ak[20];
  size_t sl = gcm ? 12 : 14;
  memset (a, 0, sizeof *a);
  a->gcm = gcm;
  memcpy (salt14, key + 16, sl);
  gsrtp_kdf (key, 16, salt14, 0, a->sk, 16);
  gsrtp_kdf (key, 16, salt14, 2, a->salt, sl);
  a->c = EVP_CIPHER_CTX_new ();
  EVP_EncryptInit_ex (a->c, gcm ? EVP_aes_128_gcm () : EVP_aes_128_ctr (), NULL, a->sk, NULL);
  if (!gcm) {
    EVP_MAC *mac = EVP_MAC_fetch (NULL, "HMAC", NULL);
    OSSL_PARAM prm[2] = { OSSL_PARAM_construct_utf8_string (OSSL_MAC_PARAM_DIGEST, (char *) "SHA1", 0),
      OSSL_PARAM_construct_end () };
    gsrtp_kdf (key, 16, salt14, 1, ak, 20);
    a->m = EVP_MAC_CTX_new (mac);
    EVP_MAC_init (a->m, ak, 20, prm);
    EVP_MAC_free (mac);
  }
}

static void
anchor_free (Anchor *a)
{
  EVP_CIPHER_CTX_free (a->c);
  if (a->m)
    EVP_MAC_CTX_free (a->m);
}
#endif

#ifdef HAVE_LIBSRTP2
static void
run_libsrtp (void *st, size_t len)
{
  for (int i = 0; i < BATCH; i++) {
    int l = (int) len;
    srtp_protect (*(srtp_t *) st, pkts[i], &l);
  }
}
#endif

static FILE *json;

static void
report (const char *op, const char *impl, size_t payload, double pps, double anchor)
{
  double gbps = pps * payload * 8 / 1e9;
  char line[512];
  printf ("%-26s %-15s %6zu %12.0f %8.2f %8.2f\n", op, impl, payload, pps, gbps, anchor > 0 ? pps / anchor : 0);
  snprintf (line, sizeof line,
      "{\"bench\":\"srtp\",\"op\":\"%s\",\"impl\":\"%s\",\"payload\":%zu,\"pps\":%.0f,\"gbps\":%.3f,"
      "\"anchor\":%.0f,\"ratio\":%.3f,\"device\":\"cpu\"}", op, impl, payload, pps, gbps, anchor,
      anchor > 0 ? pps / anchor : 0);
  fprintf (stderr, "%s\n", line);
  if (json)
    fprintf (json, "%s\n", line);
}

int
main (int argc, char **argv)
{
  cpu_set_t set;
  for (int i = 1; i < argc; i++)
    if (!strcmp (argv[i], "--json") && i + 1 < argc)
      json = fopen (argv[++i], "w");
  CPU_ZERO (&set);
  CPU_SET (0, &set);
  sched_setaffinity (0, sizeof set, &set);   /* one core */
  for (int i = 0; i < 46; i++)
    key[i] = (uint8_t) (i * 13 + 1);
#ifdef HAVE_LIBSRTP2
  srtp_init ();
#endif
  printf ("cpu features 0x%x (1 AES-NI, 2 PCLMUL, 4 SHA-NI, 8 AVX2, 16 AVX-512F), batch %d\n", gsrtp_cpu_features (), BATCH);
  printf ("SHA-1 for batches: %s (GS_SRTP_SHA1 caps it)\n",
      (const char *[]) { "scalar", "avx2 multi-buffer", "shani", "avx512 multi-buffer" }
      [gs_sha1_level ()]);
  printf ("%-26s %-15s %6s %12s %8s %8s\n", "profile", "impl", "payload", "packets/s", "Gbit/s", "x anchor");
  for (int gcm = 0; gcm < 2; gcm++) {
    const char *op = gcm ? "AEAD_AES_128_GCM" : "AES_CM_128_HMAC_SHA1_80";
    GsSrtpPolicy pol = gcm ? GSRTP_AEAD_AES_128_GCM : GSRTP_AES_CM_128_HMAC_SHA1_80;
    size_t kl = gcm ? 28 : 30;
    const size_t sizes[2] = { 1316, 188 };
    for (int si = 0; si < 2; si++) {
      size_t payload = sizes[si], len = 12 + payload;
      double anchor = 0, pps;
      GsSrtpCtx ctx;
      fill_headers (payload);
#ifdef HAVE_LIBCRYPTO
      {
        Anchor a;
        anchor_init (&a, gcm);
        anchor = measure (run_anchor, &a, len);
        anchor_free (&a);
        report (op, "openssl", payload, anchor, anchor);
      }
#endif
      gsrtp_ctx_init (&ctx, pol, pol, key, kl, 0);
      pps = measure (run_batched, &ctx, len);
      report (op, "batched", payload, pps, anchor);
      if (!gcm) {
        /* the slower SHA-1 paths, where the CPU runs a faster one by default */
        static const struct { unsigned cap; const char *name; } caps[] = {
          { GS_SHA1_SHANI, "batched-shani" }, { GS_SHA1_AVX2, "batched-avx2" },
          { GS_SHA1_SCALAR, "batched-sha1ref" } };
        unsigned best = gs_sha1_level ();
        for (int c = 0; c < 3; c++) {
          gs_sha1_level_cap (caps[c].cap);
          if (gs_sha1_level () == caps[c].cap && caps[c].cap < best) {
            gsrtp_ctx_init (&ctx, pol, pol, key, kl, 0);
            pps = measure (run_batched, &ctx, len);
            report (op, caps[c].name, payload, pps, anchor);
          }
        }
        gs_sha1_level_cap (GS_SHA1_AVX512);
      }
      gsrtp_ctx_init (&ctx, pol, pol, key, kl, 0);
      pps = measure (run_scalar, &ctx, len);
      report (op, "scalar", payload, pps, anchor);
      gsrtp_ctx_clear (&ctx);
#ifdef HAVE_LIBSRTP2
      {
        srtp_policy_t p;
        srtp_t s;
        memset (&p, 0, sizeof p);
        if (gcm) {
          srtp_crypto_policy_set_aes_gcm_128_16_auth (&p.rtp);
          srtp_crypto_policy_set_aes_gcm_128_16_auth (&p.rtcp);
        } else {
          srtp_crypto_policy_set_rtp_default (&p.rtp);
          srtp_crypto_policy_set_rtcp_default (&p.rtcp);
        }
        p.ssrc.type = ssrc_any_outbound;
        p.key = key;
        p.allow_repeat_tx = 1;
        if (srtp_create (&s, &p) == srtp_err_status_ok) {
          pps = measure (run_libsrtp, &s, len);
          report (op, "libsrtp", payload, pps, anchor);
          srtp_dealloc (s);
        }
      }
#endif
    }
  }
  if (json)
    fclose (json);
  return 0;
}
