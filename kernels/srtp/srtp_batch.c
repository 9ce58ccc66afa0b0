/* srtp_batch.c: many packets of many contexts per call. The per-context state
 * (ROC, SRTCP index, replay window) is handled in array order by the same
 * code as the scalar path, so results are identical; only the bulk math
 * changes: AES-NI counter mode (8 blocks in flight), PCLMUL GHASH and SHA-NI
 * SHA-1 (or, without SHA-NI, 8-lane AVX2 SHA-1 over a chunk's HMACs:
 * srtp_sha1_mb.c), chosen at run time, with the GS_HD reference as fallback. AES-GCM
 * goes through srtp_gcm_accel.c (AES + GHASH in one pass) where the CPU allows. */
#include <string.h>
#include "common/cpu.h"
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_internal.h"
#include "srtp/srtp_gcm_accel.h"
#include "srtp/srtp_sha1_mb.h"

#if defined(__x86_64__) || defined(__i386__)
#define GS_X86 1
#include <immintrin.h>
#endif

/* ---- primitives, two implementations each ---- */
typedef void (*CtrFn) (const uint32_t *rk, int nr, const uint8_t ctr0[16], uint8_t *buf, uint32_t len);
typedef void (*Sha1Fn) (uint32_t st[5], const uint8_t *data, size_t nblocks);
/* x = GHASH_H(x, buf zero-padded): x, h as 16 bytes in GCM byte order.
 * Without PCLMUL: ghash_ref, the reference multiply, which is constant time
 * (masks, no table). Without AES-NI, counter mode is gsrtp_aes_ctr_portable
 * (srtp_portable.c), not the reference's T-tables. */
typedef void (*GhashFn) (uint8_t x[16], const uint8_t h[16], const uint8_t *buf, uint32_t len);

static void
sha1_ref (uint32_t st[5], const uint8_t *data, size_t nblocks)
{
  while (nblocks--) {
    gs_sha1_compress (st, data);
    data += 64;
  }
}

static void
ghash_ref (uint8_t x[16], const uint8_t h[16], const uint8_t *buf, uint32_t len)
{
  GsU128 xx = gs_ld128 (x);
  xx = gs_ghash_update (xx, gs_ld128 (h), buf, len);
  gs_st32 (x, (uint32_t) (xx.hi >> 32));
  gs_st32 (x + 4, (uint32_t) xx.hi);
  gs_st32 (x + 8, (uint32_t) (xx.lo >> 32));
  gs_st32 (x + 12, (uint32_t) xx.lo);
}

#ifdef GS_X86
__attribute__ ((target ("aes,sse4.1"))) static void
ctr_aesni (const uint32_t *rk, int nr, const uint8_t ctr0[16], uint8_t *buf, uint32_t len)
{
  /* round keys are big-endian words: byte-swap each 32-bit lane */
  const __m128i bs32 = _mm_set_epi8 (12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i k[15], base = _mm_loadu_si128 ((const __m128i *) ctr0);
  uint32_t c = gs_ld32 (ctr0 + 12), off = 0;
  int r, j;
  for (r = 0; r <= nr; r++)
    k[r] = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (rk + 4 * r)), bs32);
  for (; off + 128 <= len; off += 128, c += 8) {
    __m128i b[8];
    for (j = 0; j < 8; j++)
      b[j] = _mm_xor_si128 (_mm_insert_epi32 (base, (int) __builtin_bswap32 (c + j), 3), k[0]);
    for (r = 1; r < nr; r++)
      for (j = 0; j < 8; j++)
        b[j] = _mm_aesenc_si128 (b[j], k[r]);
    for (j = 0; j < 8; j++) {
      __m128i *p = (__m128i *) (buf + off + 16 * j);
      b[j] = _mm_aesenclast_si128 (b[j], k[nr]);
      _mm_storeu_si128 (p, _mm_xor_si128 (b[j], _mm_loadu_si128 (p)));
    }
  }
  for (; off < len; off += 16, c++) {
    __m128i b = _mm_xor_si128 (_mm_insert_epi32 (base, (int) __builtin_bswap32 (c), 3), k[0]);
    for (r = 1; r < nr; r++)
      b = _mm_aesenc_si128 (b, k[r]);
    b = _mm_aesenclast_si128 (b, k[nr]);
    if (len - off >= 16) {
      __m128i *p = (__m128i *) (buf + off);
      _mm_storeu_si128 (p, _mm_xor_si128 (b, _mm_loadu_si128 (p)));
    } else {
      uint8_t ks[16];
      uint32_t i;
      _mm_storeu_si128 ((__m128i *) ks, b);
      for (i = 0; off + i < len; i++)
        buf[off + i] ^= ks[i];
    }
  }
}

/* Two independent SHA-1 streams in lockstep: sha1rnds4 is latency-bound, so
 * interleaving two packets' hashes nearly doubles throughput. */
__attribute__ ((target ("sha,sse4.1,ssse3"))) static void
sha1_shani_x2 (uint32_t sa[5], const uint8_t *da, uint32_t sb[5], const uint8_t *db, size_t nblocks)
{
  const __m128i mask = _mm_set_epi64x (0x0001020304050607ll, 0x08090a0b0c0d0e0fll);
  __m128i abcd = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) sa), 0x1b);
  __m128i e0 = _mm_set_epi32 ((int) sa[4], 0, 0, 0);
  __m128i abcd2 = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) sb), 0x1b);
  __m128i e02 = _mm_set_epi32 ((int) sb[4], 0, 0, 0);
  for (; nblocks--; da += 64, db += 64) {
    __m128i abcd_save = abcd, e_save = e0, w[4], ecur, prev = abcd;
    __m128i abcd_save2 = abcd2, e_save2 = e02, w2[4], ecur2, prev2 = abcd2;
    int i;
    for (i = 0; i < 4; i++) {
      w[i] = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (da + 16 * i)), mask);
      w2[i] = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (db + 16 * i)), mask);
    }
    ecur = _mm_add_epi32 (e0, w[0]);
    ecur2 = _mm_add_epi32 (e02, w2[0]);
#define GS_SHA1_STEP2(g, f) do { \
      prev = abcd; prev2 = abcd2; \
      abcd = _mm_sha1rnds4_epu32 (abcd, ecur, f); \
      abcd2 = _mm_sha1rnds4_epu32 (abcd2, ecur2, f); \
      if ((g) < 19) { \
        __m128i wn, wn2; \
        if ((g) + 1 < 4) { \
          wn = w[((g) + 1) & 3]; wn2 = w2[((g) + 1) & 3]; \
        } else { \
          wn = _mm_sha1msg2_epu32 (_mm_xor_si128 (_mm_sha1msg1_epu32 (w[((g) + 1) & 3], \
                  w[((g) + 2) & 3]), w[((g) + 3) & 3]), w[(g) & 3]); \
          wn2 = _mm_sha1msg2_epu32 (_mm_xor_si128 (_mm_sha1msg1_epu32 (w2[((g) + 1) & 3], \
                  w2[((g) + 2) & 3]), w2[((g) + 3) & 3]), w2[(g) & 3]); \
          w[((g) + 1) & 3] = wn; w2[((g) + 1) & 3] = wn2; \
        } \
        ecur = _mm_sha1nexte_epu32 (prev, wn); \
        ecur2 = _mm_sha1nexte_epu32 (prev2, wn2); \
      } \
    } while (0)
    GS_SHA1_STEP2 (0, 0); GS_SHA1_STEP2 (1, 0); GS_SHA1_STEP2 (2, 0); GS_SHA1_STEP2 (3, 0);
    GS_SHA1_STEP2 (4, 0); GS_SHA1_STEP2 (5, 1); GS_SHA1_STEP2 (6, 1); GS_SHA1_STEP2 (7, 1);
    GS_SHA1_STEP2 (8, 1); GS_SHA1_STEP2 (9, 1); GS_SHA1_STEP2 (10, 2); GS_SHA1_STEP2 (11, 2);
    GS_SHA1_STEP2 (12, 2); GS_SHA1_STEP2 (13, 2); GS_SHA1_STEP2 (14, 2); GS_SHA1_STEP2 (15, 3);
    GS_SHA1_STEP2 (16, 3); GS_SHA1_STEP2 (17, 3); GS_SHA1_STEP2 (18, 3); GS_SHA1_STEP2 (19, 3);
#undef GS_SHA1_STEP2
    e0 = _mm_sha1nexte_epu32 (prev, e_save);
    abcd = _mm_add_epi32 (abcd, abcd_save);
    e02 = _mm_sha1nexte_epu32 (prev2, e_save2);
    abcd2 = _mm_add_epi32 (abcd2, abcd_save2);
  }
  _mm_storeu_si128 ((__m128i *) sa, _mm_shuffle_epi32 (abcd, 0x1b));
  sa[4] = (uint32_t) _mm_extract_epi32 (e0, 3);
  _mm_storeu_si128 ((__m128i *) sb, _mm_shuffle_epi32 (abcd2, 0x1b));
  sb[4] = (uint32_t) _mm_extract_epi32 (e02, 3);
}

/* GF(2^128) multiply on byte-reflected operands (carry-less multiply, shift
 * by one for the reflection, reduction by x^128 + x^7 + x^2 + x + 1). */
__attribute__ ((target ("pclmul,sse4.1"))) static inline __m128i
gfmul_clmul (__m128i a, __m128i b)
{
  __m128i t3 = _mm_clmulepi64_si128 (a, b, 0x00);
  __m128i t4 = _mm_clmulepi64_si128 (a, b, 0x10);
  __m128i t5 = _mm_clmulepi64_si128 (a, b, 0x01);
  __m128i t6 = _mm_clmulepi64_si128 (a, b, 0x11);
  __m128i t7, t8, t9, t2;
  t4 = _mm_xor_si128 (t4, t5);
  t5 = _mm_slli_si128 (t4, 8);
  t4 = _mm_srli_si128 (t4, 8);
  t3 = _mm_xor_si128 (t3, t5);
  t6 = _mm_xor_si128 (t6, t4);
  t7 = _mm_srli_epi32 (t3, 31);
  t8 = _mm_srli_epi32 (t6, 31);
  t3 = _mm_slli_epi32 (t3, 1);
  t6 = _mm_slli_epi32 (t6, 1);
  t9 = _mm_srli_si128 (t7, 12);
  t8 = _mm_slli_si128 (t8, 4);
  t7 = _mm_slli_si128 (t7, 4);
  t3 = _mm_or_si128 (t3, t7);
  t6 = _mm_or_si128 (t6, t8);
  t6 = _mm_or_si128 (t6, t9);
  t7 = _mm_slli_epi32 (t3, 31);
  t8 = _mm_slli_epi32 (t3, 30);
  t9 = _mm_slli_epi32 (t3, 25);
  t7 = _mm_xor_si128 (t7, t8);
  t7 = _mm_xor_si128 (t7, t9);
  t8 = _mm_srli_si128 (t7, 4);
  t7 = _mm_slli_si128 (t7, 12);
  t3 = _mm_xor_si128 (t3, t7);
  t2 = _mm_srli_epi32 (t3, 1);
  t4 = _mm_srli_epi32 (t3, 2);
  t5 = _mm_srli_epi32 (t3, 7);
  t2 = _mm_xor_si128 (t2, t4);
  t2 = _mm_xor_si128 (t2, t5);
  t2 = _mm_xor_si128 (t2, t8);
  t3 = _mm_xor_si128 (t3, t2);
  return _mm_xor_si128 (t6, t3);
}

__attribute__ ((target ("pclmul,sse4.1,ssse3"))) static void
ghash_clmul (uint8_t x[16], const uint8_t h[16], const uint8_t *buf, uint32_t len)
{
  const __m128i rev = _mm_set_epi8 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m128i hh = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) h), rev);
  __m128i xx = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) x), rev);
  uint32_t off = 0;
  if (len >= 64) {
    /* four independent multiplies per 4 blocks (H^4..H^1), one XOR chain:
     * the multiplier is no longer waiting on the previous block */
    __m128i h2 = gfmul_clmul (hh, hh), h3 = gfmul_clmul (h2, hh), h4 = gfmul_clmul (h3, hh);
    for (; off + 64 <= len; off += 64) {
      __m128i b0 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (buf + off)), rev);
      __m128i b1 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (buf + off + 16)), rev);
      __m128i b2 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (buf + off + 32)), rev);
      __m128i b3 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (buf + off + 48)), rev);
      xx = _mm_xor_si128 (_mm_xor_si128 (gfmul_clmul (_mm_xor_si128 (xx, b0), h4), gfmul_clmul (b1, h3)),
          _mm_xor_si128 (gfmul_clmul (b2, h2), gfmul_clmul (b3, hh)));
    }
  }
  for (; off + 16 <= len; off += 16) {
    __m128i b = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (buf + off)), rev);
    xx = gfmul_clmul (_mm_xor_si128 (xx, b), hh);
  }
  if (off < len) {
    uint8_t blk[16] = { 0 };
    memcpy (blk, buf + off, len - off);
    __m128i b = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) blk), rev);
    xx = gfmul_clmul (_mm_xor_si128 (xx, b), hh);
  }
  _mm_storeu_si128 ((__m128i *) x, _mm_shuffle_epi8 (xx, rev));
}
#endif /* GS_X86 */

unsigned
gsrtp_cpu_features (void)
{
  return gs_cpu_features () & (GS_CPU_AES | GS_CPU_PCLMUL | GS_CPU_SHA | GS_CPU_AVX2
      | GS_CPU_AVX512F);
}

typedef void (*Sha1x2Fn) (uint32_t sa[5], const uint8_t *da, uint32_t sb[5], const uint8_t *db,
    size_t nblocks);

static void
sha1x2_ref (uint32_t sa[5], const uint8_t *da, uint32_t sb[5], const uint8_t *db, size_t nblocks)
{
  sha1_ref (sa, da, nblocks);
  sha1_ref (sb, db, nblocks);
}

/* Expanded AES-GCM keys (round keys in AES-NI order, H^1..H^16). A context's
 * own key sets keep theirs in the context (GsSrtpCtx.gcm_accel), checked
 * against the round keys on every use: the batch loops name the packet's
 * context in ctx before the crypto. A key set that is not the named
 * context's (no caller passes one today) is expanded into the call's one
 * spare slot, on its stack and wiped before the call returns. */
_Static_assert (sizeof (GsGcmAccelKey) <= GSRTP_GCM_ACCEL_BYTES,
    "GsSrtpCtx.gcm_accel is too small for a GsGcmAccelKey");

typedef struct {
  GsSrtpCtx *ctx;            /* the packet's context, or NULL */
  const GsSrtpKeys *spare_of;
  GsGcmAccelKey spare;
} GcmKeyCache;

static const GsGcmAccelKey *
gcm_key_get (GcmKeyCache *c, const GsSrtpKeys *k)
{
  GsSrtpCtx *ctx = c->ctx;
  if (ctx && (k == &ctx->rtp_keys || k == &ctx->rtcp_keys)) {
    const int s = k == &ctx->rtcp_keys;
    GsGcmAccelKey *key = (GsGcmAccelKey *) (void *)
        (((uintptr_t) ctx->gcm_accel[s] + 31) & ~(uintptr_t) 31);
    if (!ctx->gcm_accel_valid[s] || memcmp (ctx->gcm_accel_of[s], k->rk, sizeof ctx->gcm_accel_of[s])) {
      gs_gcm_accel_key_init (key, k);
      memcpy (ctx->gcm_accel_of[s], k->rk, sizeof ctx->gcm_accel_of[s]);
      ctx->gcm_accel_valid[s] = 1;
    }
    return key;
  }
  if (c->spare_of != k) {
    gs_gcm_accel_key_init (&c->spare, k);
    c->spare_of = k;
  }
  return &c->spare;
}

static void
gcm_key_cache_wipe (GcmKeyCache *c)
{
  if (c->spare_of)
    gsrtp_wipe (&c->spare, sizeof c->spare);
}

typedef struct {
  CtrFn ctr;
  Sha1Fn sha1;
  Sha1x2Fn sha1x2;
  GhashFn ghash;
  GcmKeyCache *gcm;     /* non-NULL: AES-GCM through srtp_gcm_accel.c */
  int sha1_mb;          /* a chunk's HMACs through the multi-buffer SHA-1 */
  size_t sha1_mb_min;   /* ... when it has at least this many */
} Prims;

/* With SHA-NI at hand, fewer HMACs than this leave most of the 16 AVX-512
 * lanes idle: they run one or two at a time on SHA-NI instead. */
#define MB_MIN_WITH_SHANI 8

/* gcm_cache: storage for p->gcm, used when the CPU can run the GCM path. */
static void
prims_get (Prims *p, GsSrtpImpl impl, GcmKeyCache *gcm_cache)
{
  /* GS_SRTP_FORCE_PORTABLE: what a CPU without AES-NI and PCLMUL runs */
  const int portable = gsrtp_force_portable ();
  unsigned f = impl == GSRTP_IMPL_SCALAR ? 0 : gs_cpu_features ();
  if (portable)
    f &= ~(unsigned) (GS_CPU_AES | GS_CPU_PCLMUL);
  p->ctr = gsrtp_aes_ctr_portable;
  p->sha1 = sha1_ref;
  p->sha1x2 = sha1x2_ref;
  p->ghash = ghash_ref;
  p->gcm = NULL;
  p->sha1_mb = impl != GSRTP_IMPL_SCALAR && (gs_sha1_level () == GS_SHA1_AVX2 ||
      gs_sha1_level () == GS_SHA1_AVX512);
  p->sha1_mb_min = 2;
  if (impl != GSRTP_IMPL_SCALAR && !portable && gs_gcm_accel_level () > 0) {
    gcm_cache->ctx = NULL;
    gcm_cache->spare_of = NULL;
    p->gcm = gcm_cache;
  }
#ifdef GS_X86
  if (f & GS_CPU_AES)
    p->ctr = ctr_aesni;
  if (f & GS_CPU_PCLMUL)
    p->ghash = ghash_clmul;
  /* also under AVX-512: a chunk too small for the lanes (a packet pushed
   * alone) runs on SHA-NI, not on the scalar SHA-1 */
  if ((f & GS_CPU_SHA) && gs_sha1_shani_ok ()) {
    p->sha1 = gs_sha1_shani;
    p->sha1x2 = sha1_shani_x2;
    p->sha1_mb_min = MB_MIN_WITH_SHANI;
  }
#else
  (void) f;
#endif
}

/* ---- per-packet operations over the primitives ---- */
static void
hmac_fast (const Prims *p, const GsSrtpKeys *k, const uint8_t *m1, uint32_t n1,
    const uint8_t *m2, uint32_t n2, uint8_t out[20])
{
  uint8_t tail[192];
  uint32_t st[5], full = n1 / 64, r = n1 % 64, tl, i;
  uint64_t bits = (64 + (uint64_t) n1 + n2) * 8;
  memcpy (st, k->hmac_i, sizeof st);
  p->sha1 (st, m1, full);
  memcpy (tail, m1 + 64 * full, r);
  memcpy (tail + r, m2, n2);
  tl = r + n2;
  tail[tl++] = 0x80;
  while (tl % 64 != 56)
    tail[tl++] = 0;
  gs_st32 (tail + tl, (uint32_t) (bits >> 32));
  gs_st32 (tail + tl + 4, (uint32_t) bits);
  tl += 8;
  p->sha1 (st, tail, tl / 64);
  /* outer: ostate + 20-byte digest, one padded block of 84 bytes total */
  for (i = 0; i < 5; i++)
    gs_st32 (tail + 4 * i, st[i]);
  memset (tail + 20, 0, 44);
  tail[20] = 0x80;
  gs_st32 (tail + 60, 84 * 8);
  memcpy (st, k->hmac_o, sizeof st);
  p->sha1 (st, tail, 1);
  for (i = 0; i < 5; i++)
    gs_st32 (out + 4 * i, st[i]);
}

/* packets per chunk of a batch call */
#define CHUNK 64

/* HMAC of two messages at once (two packets of a batch): common whole blocks
 * through the 2-way SHA-1, the rest one way. */
typedef struct {
  const GsSrtpKeys *k;
  const uint8_t *m1, *m2;
  uint32_t n1, n2;
  uint8_t *out;
} HmacJob;

static uint32_t
hmac_tail (const HmacJob *j, uint8_t tail[192])
{
  uint32_t full = j->n1 / 64, r = j->n1 % 64, tl;
  uint64_t bits = (64 + (uint64_t) j->n1 + j->n2) * 8;
  memcpy (tail, j->m1 + 64 * full, r);
  memcpy (tail + r, j->m2, j->n2);
  tl = r + j->n2;
  tail[tl++] = 0x80;
  while (tl % 64 != 56)
    tail[tl++] = 0;
  gs_st32 (tail + tl, (uint32_t) (bits >> 32));
  gs_st32 (tail + tl + 4, (uint32_t) bits);
  return (tl + 8) / 64;
}

static void
hmac_pair (const Prims *p, const HmacJob *a, const HmacJob *b)
{
  uint8_t ta[192], tb[192];
  uint32_t sa[5], sb[5], fa = a->n1 / 64, fb = b->n1 / 64, c = fa < fb ? fa : fb, na, nb, i;
  memcpy (sa, a->k->hmac_i, sizeof sa);
  memcpy (sb, b->k->hmac_i, sizeof sb);
  p->sha1x2 (sa, a->m1, sb, b->m1, c);
  p->sha1 (sa, a->m1 + 64 * c, fa - c);
  p->sha1 (sb, b->m1 + 64 * c, fb - c);
  na = hmac_tail (a, ta);
  nb = hmac_tail (b, tb);
  c = na < nb ? na : nb;
  p->sha1x2 (sa, ta, sb, tb, c);
  p->sha1 (sa, ta + 64 * c, na - c);
  p->sha1 (sb, tb + 64 * c, nb - c);
  for (i = 0; i < 5; i++) {
    gs_st32 (ta + 4 * i, sa[i]);
    gs_st32 (tb + 4 * i, sb[i]);
  }
  memset (ta + 20, 0, 44);
  memset (tb + 20, 0, 44);
  ta[20] = tb[20] = 0x80;
  gs_st32 (ta + 60, 84 * 8);
  gs_st32 (tb + 60, 84 * 8);
  memcpy (sa, a->k->hmac_o, sizeof sa);
  memcpy (sb, b->k->hmac_o, sizeof sb);
  p->sha1x2 (sa, ta, sb, tb, 1);
  for (i = 0; i < 5; i++) {
    gs_st32 (a->out + 4 * i, sa[i]);
    gs_st32 (b->out + 4 * i, sb[i]);
  }
}

/* The HMACs of a chunk through the multi-buffer SHA-1: all inner hashes
 * (the packet in place, then its padded tail), then all outer ones. Longest
 * first, so that the lanes the scheduler refills last get the short jobs
 * and end together. */
static void
hmac_mb (const HmacJob *jobs, size_t nj)
{
  uint8_t tail[CHUNK][192];
  GsSha1Job sj[CHUNK];
  uint32_t order[CHUNK] = { 0 }, nb[CHUNK];   /* (zeroed: GCC 12 -Wmaybe-uninitialized) */
  size_t i, j;
  for (i = 0; i < nj; i++) {
    memcpy (sj[i].st, jobs[i].k->hmac_i, sizeof sj[i].st);
    sj[i].p[0] = jobs[i].m1;
    sj[i].nb[0] = jobs[i].n1 / 64;
    sj[i].p[1] = tail[i];
    sj[i].nb[1] = hmac_tail (&jobs[i], tail[i]);
    nb[i] = sj[i].nb[0] + sj[i].nb[1];
    order[i] = (uint32_t) i;
  }
  /* insertion sort by block count, descending: next to nothing for the
   * usual chunk of equal packets */
  for (i = 1; i < nj; i++) {
    uint32_t o = order[i];
    for (j = i; j > 0 && nb[order[j - 1]] < nb[o]; j--)
      order[j] = order[j - 1];
    order[j] = o;
  }
  gs_sha1_mb (sj, nj, order);
  for (i = 0; i < nj; i++) {
    for (j = 0; j < 5; j++)
      gs_st32 (tail[i] + 4 * j, sj[i].st[j]);
    memset (tail[i] + 20, 0, 44);
    tail[i][20] = 0x80;
    gs_st32 (tail[i] + 60, 84 * 8);
    memcpy (sj[i].st, jobs[i].k->hmac_o, sizeof sj[i].st);
    sj[i].nb[0] = 0;
    sj[i].nb[1] = 1;
  }
  gs_sha1_mb (sj, nj, NULL);
  for (i = 0; i < nj; i++)
    for (j = 0; j < 5; j++)
      gs_st32 (jobs[i].out + 4 * j, sj[i].st[j]);
}

/* nj HMACs (at most CHUNK): multi-buffer, or two at a time */
static void
hmac_jobs (const Prims *p, const HmacJob *jobs, size_t nj)
{
  size_t i;
  if (p->sha1_mb && nj >= p->sha1_mb_min) {
    hmac_mb (jobs, nj);
    return;
  }
  for (i = 0; i < nj; i += 2) {
    if (i + 1 < nj)
      hmac_pair (p, &jobs[i], &jobs[i + 1]);
    else
      hmac_fast (p, jobs[i].k, jobs[i].m1, jobs[i].n1, jobs[i].m2, jobs[i].n2, jobs[i].out);
  }
}

static void
gcm_tag_fast (const Prims *p, const GsSrtpKeys *k, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, const uint8_t *ct, uint32_t clen, uint8_t tag[16])
{
  uint8_t x[16] = { 0 }, lens[16], j0[16];
  uint32_t i;
  if (p->gcm) {
    gs_gcm_accel_tag (gcm_key_get (p->gcm, k), iv, aad, alen, ct, clen, tag);
    return;
  }
  p->ghash (x, k->gcm_h, aad, alen);
  p->ghash (x, k->gcm_h, ct, clen);
  gs_st32 (lens, 0);
  gs_st32 (lens + 4, alen * 8);
  gs_st32 (lens + 8, clen >> 29);
  gs_st32 (lens + 12, clen * 8);
  p->ghash (x, k->gcm_h, lens, 16);
  memcpy (j0, iv, 12);
  gs_st32 (j0 + 12, 1);
  memset (tag, 0, 16);
  p->ctr (k->rk, k->rounds, j0, tag, 16);
  for (i = 0; i < 16; i++)
    tag[i] ^= x[i];
}

/* Encrypt/decrypt the body of a packet (same operation both ways). */
static void
crypt_fast (const Prims *p, const GsSrtpKeys *k, uint8_t *pkt, const GsSrtpDesc *d)
{
  uint8_t ctr[16];
  uint32_t hl = d->hdr_len;
  if (!k->encrypt)
    return;
  if (!d->is_rtcp) {
    uint32_t ssrc = gs_ld32 (pkt + 8), seq = ((uint32_t) pkt[2] << 8) | pkt[3];
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      gs_srtp_gcm_iv (k, ssrc, d->roc, seq, 0, ctr);
      gs_st32 (ctr + 12, 2);
    } else {
      gs_srtp_cm_iv (k, ssrc, ((uint64_t) d->roc << 16) | seq, ctr);
    }
  } else {
    uint32_t ssrc = gs_ld32 (pkt + 4), idx = d->roc & 0x7fffffffu;
    if (!(d->roc >> 31))
      return;
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      gs_srtp_gcm_iv (k, ssrc, 0, idx, 1, ctr);
      gs_st32 (ctr + 12, 2);
    } else {
      gs_srtp_cm_iv (k, ssrc, idx, ctr);
    }
  }
  if (k->cipher == GS_SRTP_C_AES_GCM && p->gcm)
    gs_gcm_accel_ctr (gcm_key_get (p->gcm, k), ctr, pkt + hl, d->len - hl);
  else
    p->ctr (k->rk, k->rounds, ctr, pkt + hl, d->len - hl);
}

/* The tag of a packet whose body is in its protected form (d->len without
 * tag / trailer; for SRTCP-CM the trailer is at pkt + d->len). */
static void
tag_fast (const Prims *p, const GsSrtpKeys *k, const uint8_t *pkt, const GsSrtpDesc *d,
    uint8_t tag[20])
{
  uint8_t b[16];
  if (k->cipher == GS_SRTP_C_AES_GCM) {
    uint8_t iv[12];
    if (!d->is_rtcp) {
      uint32_t seq = ((uint32_t) pkt[2] << 8) | pkt[3];
      gs_srtp_gcm_iv (k, gs_ld32 (pkt + 8), d->roc, seq, 0, iv);
      gcm_tag_fast (p, k, iv, pkt, d->hdr_len, pkt + d->hdr_len, d->len - d->hdr_len, tag);
    } else {
      memcpy (b, pkt, 8);
      gs_st32 (b + 8, d->roc);
      gs_srtp_gcm_iv (k, gs_ld32 (pkt + 4), 0, d->roc & 0x7fffffffu, 1, iv);
      gcm_tag_fast (p, k, iv, b, 12, pkt + 8, d->len - 8, tag);
    }
  } else if (k->hmac) {
    if (!d->is_rtcp) {
      gs_st32 (b, d->roc);
      hmac_fast (p, k, pkt, d->len, b, 4, tag);
    } else {
      hmac_fast (p, k, pkt, d->len + 4, pkt, 0, tag);
    }
  }
}

/* AES-GCM protect in one pass over the body (encryption and GHASH together);
 * same bytes as crypt_fast then tag_fast. */
static uint32_t
protect_gcm_accel (const Prims *p, const GsSrtpKeys *k, uint8_t *pkt, const GsSrtpDesc *d)
{
  const GsGcmAccelKey *key = gcm_key_get (p->gcm, k);
  uint8_t iv[12], aad[12];
  uint32_t len = d->len;
  if (!d->is_rtcp) {
    uint32_t seq = ((uint32_t) pkt[2] << 8) | pkt[3];
    gs_srtp_gcm_iv (k, gs_ld32 (pkt + 8), d->roc, seq, 0, iv);
    gs_gcm_accel_seal (key, iv, pkt, d->hdr_len, pkt + d->hdr_len, len - d->hdr_len, pkt + len);
    return len + 16;
  }
  /* SRTCP: AAD = 8 header bytes || E + SRTCP index, trailer after the tag */
  memcpy (aad, pkt, 8);
  gs_st32 (aad + 8, d->roc);
  gs_srtp_gcm_iv (k, gs_ld32 (pkt + 4), 0, d->roc & 0x7fffffffu, 1, iv);
  gs_gcm_accel_seal (key, iv, aad, 12, pkt + 8, len - 8, pkt + len);
  gs_st32 (pkt + len + 16, d->roc);
  return len + 20;
}

static uint32_t
protect_fast (const Prims *p, const GsSrtpKeys *k, uint8_t *pkt, const GsSrtpDesc *d)
{
  uint8_t tag[20];
  uint32_t len = d->len;
  /* the one-pass path always encrypts: SRTCP without the E bit goes the
   * two-pass way */
  if (p->gcm && k->cipher == GS_SRTP_C_AES_GCM && k->encrypt && (!d->is_rtcp || (d->roc >> 31)))
    return protect_gcm_accel (p, k, pkt, d);
  crypt_fast (p, k, pkt, d);
  if (d->is_rtcp && k->cipher != GS_SRTP_C_AES_GCM) {
    gs_st32 (pkt + len, d->roc);
    tag_fast (p, k, pkt, d, tag);
    memcpy (pkt + len + 4, tag, k->tag_len);
    return len + 4 + k->tag_len;
  }
  tag_fast (p, k, pkt, d, tag);
  memcpy (pkt + len, tag, k->tag_len);
  if (d->is_rtcp) {
    gs_st32 (pkt + len + 16, d->roc);
    return len + 20;
  }
  return len + k->tag_len;
}

/* One packet prepared against the context as it is (now), checked,
 * committed and decrypted on the fast primitives, not the reference: a
 * packet re-estimated inside a batch takes the same constant-time path as
 * the others. Returns 1 when it was unprotected. */
static int
unprotect_one_fast (const Prims *p, GsSrtpPacket *q, const GsSrtpUnprot *now)
{
  const GsSrtpKeys *k = q->is_rtcp ? &q->ctx->rtcp_keys : &q->ctx->rtp_keys;
  uint8_t tag[20];
  if (p->gcm)
    p->gcm->ctx = q->ctx;
  if (k->tag_len) {
    tag_fast (p, k, q->data, &now->d, tag);
    if (!gs_srtp_hd_ct_equal (tag, gs_srtp_hd_received_tag (k, q->data, &now->d), k->tag_len)) {
      q->result = GSRTP_ERR_AUTH;
      return 0;
    }
  }
  gsrtp_commit_unprotect (q->ctx, now);
  crypt_fast (p, k, q->data, &now->d);
  q->len = now->d.len;
  q->result = GSRTP_OK;
  return 1;
}

uint32_t
gsrtp_protect_desc (const GsSrtpKeys *k, uint8_t *pkt, const GsSrtpDesc *d)
{
  Prims p;
  GcmKeyCache gcm_cache;
  uint32_t len;
  prims_get (&p, GSRTP_IMPL_AUTO, &gcm_cache);
  /* k is a copy (a GPU batch's key array), not a context's: GCM keys are
   * expanded into the call's spare slot, wiped below */
  len = gs_srtp_hd_place_mki (k, pkt, protect_fast (&p, k, pkt, d));
  if (p.gcm)
    gcm_key_cache_wipe (p.gcm);
  return len;
}

/* ---- batches (of CHUNK packets, defined above) ---- */

/* Protect in chunks: host bookkeeping and encryption per packet, then the
 * HMACs of the chunk together (hmac_jobs). */
size_t
gsrtp_protect_batch (GsSrtpPacket *pkts, size_t n, GsSrtpImpl impl)
{
  Prims p;
  GcmKeyCache gcm_cache;
  size_t base, ok = 0;
  prims_get (&p, impl, &gcm_cache);
  for (base = 0; base < n; base += CHUNK) {
    size_t m = n - base < CHUNK ? n - base : CHUNK, i, nj = 0;
    GsSrtpDesc d[CHUNK];
    HmacJob jobs[CHUNK];
    uint8_t rocs[CHUNK][4], tags[CHUNK][20];
    uint32_t jpkt[CHUNK];
    for (i = 0; i < m; i++) {
      GsSrtpPacket *q = &pkts[base + i];
      const GsSrtpKeys *k = q->is_rtcp ? &q->ctx->rtcp_keys : &q->ctx->rtp_keys;
      if (p.gcm)
        p.gcm->ctx = q->ctx;
      q->result = gsrtp_prepare_protect (q->ctx, q->data, q->len, q->cap, (int) q->is_rtcp, &d[i]);
      if (q->result != GSRTP_OK)
        continue;
      ok++;
      if (impl == GSRTP_IMPL_SCALAR) {
        q->len = gs_srtp_hd_protect (gsrtp_aes_tables (), k, q->data, &d[i]);
        continue;
      }
      if (!k->hmac || k->cipher == GS_SRTP_C_AES_GCM) {
        q->len = gs_srtp_hd_place_mki (k, q->data, protect_fast (&p, k, q->data, &d[i]));
        continue;
      }
      /* HMAC profiles: encrypt (and write the SRTCP trailer) now, MAC below */
      crypt_fast (&p, k, q->data, &d[i]);
      jobs[nj].k = k;
      jobs[nj].m1 = q->data;
      jobs[nj].out = tags[nj];
      if (!q->is_rtcp) {
        gs_st32 (rocs[nj], d[i].roc);
        jobs[nj].n1 = d[i].len;
        jobs[nj].m2 = rocs[nj];
        jobs[nj].n2 = 4;
        q->len = d[i].len + k->tag_len;
      } else {
        gs_st32 (q->data + d[i].len, d[i].roc);
        jobs[nj].n1 = d[i].len + 4;
        jobs[nj].m2 = q->data;
        jobs[nj].n2 = 0;
        q->len = d[i].len + 4 + k->tag_len;
      }
      jpkt[nj++] = (uint32_t) i;
    }
    hmac_jobs (&p, jobs, nj);
    for (i = 0; i < nj; i++) {
      GsSrtpPacket *q = &pkts[base + jpkt[i]];
      memcpy (q->data + q->len - jobs[i].k->tag_len, tags[i], jobs[i].k->tag_len);
      q->len = gs_srtp_hd_place_mki (jobs[i].k, q->data, q->len);
    }
  }
  if (p.gcm)
    gcm_key_cache_wipe (p.gcm);
  return ok;
}

/* Unprotect in chunks: (A) parse and estimate against the committed state,
 * (B) compute all tags (the HMACs together, as in protect), (C) in order, re-check against the state as the
 * packets before left it (a packet whose index estimate changed, e.g. right
 * after a ROC step inside the batch, is redone alone on the same primitives,
 * unprotect_one_fast), replay
 * check, commit; (D) decrypt what passed. Same results as one by one. */
size_t
gsrtp_unprotect_batch (GsSrtpPacket *pkts, size_t n, GsSrtpImpl impl)
{
  Prims p;
  GcmKeyCache gcm_cache;
  size_t base, ok = 0;
  prims_get (&p, impl, &gcm_cache);
  for (base = 0; base < n; base += CHUNK) {
    size_t m = n - base < CHUNK ? n - base : CHUNK, i;
    GsSrtpUnprot u[CHUNK];
    uint8_t auth_ok[CHUNK], parsed[CHUNK], dec[CHUNK];
    HmacJob jobs[CHUNK];
    uint8_t rocs[CHUNK][4], tags[CHUNK][20];
    uint32_t jpkt[CHUNK];
    size_t nj = 0;
    for (i = 0; i < m; i++) {
      GsSrtpPacket *q = &pkts[base + i];
      GsSrtpResult r = gsrtp_prepare_unprotect (q->ctx, q->data, q->len, (int) q->is_rtcp, &u[i]);
      parsed[i] = r == GSRTP_OK;
      auth_ok[i] = 0;
    }
    for (i = 0; i < m; i++) {
      GsSrtpPacket *q = &pkts[base + i];
      const GsSrtpKeys *k = q->is_rtcp ? &q->ctx->rtcp_keys : &q->ctx->rtp_keys;
      uint8_t tag[20];
      if (!parsed[i])
        continue;
      if (p.gcm)
        p.gcm->ctx = q->ctx;
      if (!k->tag_len) {
        auth_ok[i] = 1;
        continue;
      }
      if (impl != GSRTP_IMPL_SCALAR && k->hmac && k->cipher != GS_SRTP_C_AES_GCM) {
        /* the tag_fast HMAC, left for hmac_jobs below */
        jobs[nj].k = k;
        jobs[nj].m1 = q->data;
        jobs[nj].out = tags[nj];
        if (!q->is_rtcp) {
          gs_st32 (rocs[nj], u[i].d.roc);
          jobs[nj].n1 = u[i].d.len;
          jobs[nj].m2 = rocs[nj];
          jobs[nj].n2 = 4;
        } else {
          jobs[nj].n1 = u[i].d.len + 4;
          jobs[nj].m2 = q->data;
          jobs[nj].n2 = 0;
        }
        jpkt[nj++] = (uint32_t) i;
        continue;
      }
      if (impl == GSRTP_IMPL_SCALAR)
        gs_srtp_hd_expected_tag (gsrtp_aes_tables (), k, q->data, &u[i].d, tag);
      else
        tag_fast (&p, k, q->data, &u[i].d, tag);
      auth_ok[i] = (uint8_t) gs_srtp_hd_ct_equal (tag, gs_srtp_hd_received_tag (k, q->data, &u[i].d),
          k->tag_len);
    }
    hmac_jobs (&p, jobs, nj);
    for (i = 0; i < nj; i++) {
      GsSrtpPacket *q = &pkts[base + jpkt[i]];
      const GsSrtpKeys *k = jobs[i].k;
      auth_ok[jpkt[i]] = (uint8_t) gs_srtp_hd_ct_equal (tags[i],
          gs_srtp_hd_received_tag (k, q->data, &u[jpkt[i]].d), k->tag_len);
    }
    for (i = 0; i < m; i++) {
      GsSrtpPacket *q = &pkts[base + i];
      GsSrtpUnprot now;
      GsSrtpResult r = gsrtp_prepare_unprotect (q->ctx, q->data, q->len, (int) q->is_rtcp, &now);
      dec[i] = 0;
      if (r != GSRTP_OK) {
        q->result = r;
        continue;
      }
      if (!parsed[i] || now.index != u[i].index || now.d.roc != u[i].d.roc) {
        if (impl == GSRTP_IMPL_SCALAR) {
          size_t out;
          q->result = q->is_rtcp ? gsrtp_rtcp_unprotect (q->ctx, q->data, q->len, &out)
                                 : gsrtp_rtp_unprotect (q->ctx, q->data, q->len, &out);
          if (q->result == GSRTP_OK) {
            q->len = (uint32_t) out;
            ok++;
          }
        } else if (unprotect_one_fast (&p, q, &now)) {
          ok++;
        }
        continue;
      }
      if (!auth_ok[i]) {
        q->result = GSRTP_ERR_AUTH;
        continue;
      }
      gsrtp_commit_unprotect (q->ctx, &now);
      q->result = GSRTP_OK;
      dec[i] = 1;      /* decrypt below */
    }
    for (i = 0; i < m; i++) {
      GsSrtpPacket *q = &pkts[base + i];
      const GsSrtpKeys *k = q->is_rtcp ? &q->ctx->rtcp_keys : &q->ctx->rtp_keys;
      if (!dec[i])
        continue;
      if (p.gcm)
        p.gcm->ctx = q->ctx;
      if (impl == GSRTP_IMPL_SCALAR)
        gs_srtp_hd_decrypt (gsrtp_aes_tables (), k, q->data, &u[i].d);
      else
        crypt_fast (&p, k, q->data, &u[i].d);
      q->len = u[i].d.len;
      ok++;
    }
  }
  if (p.gcm)
    gcm_key_cache_wipe (p.gcm);
  return ok;
}
