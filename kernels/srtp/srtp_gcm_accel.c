/* srtp_gcm_accel.c: one-pass AES-GCM (AES-NI + PCLMUL, or VAES + VPCLMULQDQ)
 * for srtp_batch.c; see srtp_gcm_accel.h for the approach.
 *
 * POLYVAL-domain GHASH (RFC 8452 appendix A): with blocks and state byte-
 * reversed into little-endian 128-bit integers and the key taken as H*x,
 * GHASH's multiply becomes dot(a, b) = a * b * x^-128 mod
 * x^128 + x^127 + x^126 + x^121 + 1, which is a plain carry-less product
 * followed by a Montgomery reduction: two multiplies by 0xc2 << 56.
 * dot is associative, so dot-powers of the key aggregate as usual. */
#include <stdlib.h>
#include <string.h>
#include "common/cpu.h"
#include "srtp/srtp_gcm_accel.h"

#if defined(__x86_64__) || defined(__i386__)
#define GS_X86 1
#include <immintrin.h>
#endif

#ifdef GS_X86

unsigned
gs_gcm_accel_level (void)
{
  static int level = -1;
  if (level < 0) {
    const unsigned f = gs_cpu_features ();
    const unsigned need1 = GS_CPU_AES | GS_CPU_PCLMUL | GS_CPU_AVX;
    int l = 0;
    if ((f & need1) == need1)
      l = (f & GS_CPU_AVX2) && (f & GS_CPU_VAES) ? 2 : 1;
    /* GS_SRTP_GCM_LEVEL caps the level, so that the tests run every
     * implementation on a CPU that has the best one */
    {
      const char *cap = getenv ("GS_SRTP_GCM_LEVEL");
      if (cap && *cap >= '0' && *cap <= '2' && *cap - '0' < l)
        l = *cap - '0';
    }
    level = l;
  }
  return (unsigned) level;
}

/* ---- 128-bit: AES-NI + PCLMUL ---- */
#define GS_TGT1 __attribute__ ((target ("aes,pclmul,sse4.1,avx")))

GS_TGT1 static inline __m128i
bswap128 (__m128i x)
{
  return _mm_shuffle_epi8 (x, _mm_set_epi8 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/* Sums of unreduced 256-bit products, Karatsuba style: lo * lo, hi * hi and
 * (lo ^ hi) * (lo ^ hi) halves kept apart until the one reduction. */
typedef struct {
  __m128i lo, mid, hi;
} Acc;

/* a += x * hpow[i] */
GS_TGT1 static inline void
acc_mul (Acc *a, __m128i x, const GsGcmAccelKey *key, int i)
{
  __m128i h = _mm_load_si128 ((const __m128i *) key->hpow[i]);
  __m128i hk = _mm_load_si128 ((const __m128i *) key->hkar[i]);
  a->lo ^= _mm_clmulepi64_si128 (x, h, 0x00);
  a->hi ^= _mm_clmulepi64_si128 (x, h, 0x11);
  a->mid ^= _mm_clmulepi64_si128 (x ^ _mm_shuffle_epi32 (x, 0x4e), hk, 0x00);
}

/* Montgomery reduction of the 256-bit sum: (hi:lo) * x^-128 mod the
 * POLYVAL polynomial. Each step cancels the low qword with a multiple of
 * the polynomial (its low qword is 1, its high one 0xc2 << 56). */
GS_TGT1 static inline __m128i
acc_reduce (Acc a)
{
  const __m128i poly = _mm_set_epi64x ((long long) 0xc200000000000000ull, 1);
  __m128i mid = a.mid ^ a.lo ^ a.hi, lo, hi;
  lo = a.lo ^ _mm_slli_si128 (mid, 8);
  hi = a.hi ^ _mm_srli_si128 (mid, 8);
  lo = _mm_clmulepi64_si128 (lo, poly, 0x10) ^ _mm_shuffle_epi32 (lo, 0x4e);
  lo = _mm_clmulepi64_si128 (lo, poly, 0x10) ^ _mm_shuffle_epi32 (lo, 0x4e);
  return lo ^ hi;
}

GS_TGT1 static inline __m128i
dot (__m128i a, __m128i b)
{
  Acc acc = { _mm_clmulepi64_si128 (a, b, 0x00),
    _mm_clmulepi64_si128 (a ^ _mm_shuffle_epi32 (a, 0x4e), b ^ _mm_shuffle_epi32 (b, 0x4e), 0x00),
    _mm_clmulepi64_si128 (a, b, 0x11) };
  return acc_reduce (acc);
}

/* One block of up to 16 bytes, zero-padded, byte-reversed. */
GS_TGT1 static inline __m128i
load_block (const uint8_t *p, uint32_t n)
{
  uint8_t b[16] = { 0 };
  if (n >= 16)
    return bswap128 (_mm_loadu_si128 ((const __m128i *) p));
  memcpy (b, p, n);
  return bswap128 (_mm_loadu_si128 ((const __m128i *) b));
}

/* s = GHASH state after buf (zero-padded), 8 blocks per reduction. */
GS_TGT1 static __m128i
ghash1 (const GsGcmAccelKey *key, __m128i s, const uint8_t *p, uint32_t len)
{
  int j;
  for (; len >= 128; p += 128, len -= 128) {
    Acc a = { _mm_setzero_si128 (), _mm_setzero_si128 (), _mm_setzero_si128 () };
    for (j = 0; j < 8; j++)
      acc_mul (&a, bswap128 (_mm_loadu_si128 ((const __m128i *) (p + 16 * j))) ^ (j ? _mm_setzero_si128 () : s),
          key, 8 + j);
    s = acc_reduce (a);
  }
  if (len) {
    int nb = (int) (len + 15) / 16;
    Acc a = { _mm_setzero_si128 (), _mm_setzero_si128 (), _mm_setzero_si128 () };
    for (j = 0; j < nb; j++)
      acc_mul (&a, load_block (p + 16 * j, len - 16 * (uint32_t) j) ^ (j ? _mm_setzero_si128 () : s),
          key, 16 - nb + j);
    s = acc_reduce (a);
  }
  return s;
}

/* Final GHASH block (bit lengths) and tag = E(K, J0) ^ S. */
GS_TGT1 static void
finish_tag (const GsGcmAccelKey *key, __m128i s, uint32_t alen, uint32_t len, __m128i ej0,
    uint8_t tag[16])
{
  s ^= _mm_set_epi64x ((long long) alen * 8, (long long) len * 8);
  s = dot (s, _mm_load_si128 ((const __m128i *) key->hpow[15]));
  _mm_storeu_si128 ((__m128i *) tag, ej0 ^ bswap128 (s));
}

GS_TGT1 static void
key_init1 (GsGcmAccelKey *key, const GsSrtpKeys *k)
{
  /* round keys are big-endian words: byte-swap each 32-bit lane */
  const __m128i bs32 = _mm_set_epi8 (12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  uint64_t hi = 0, lo = 0, carry;
  __m128i h, p;
  int r, i;
  for (r = 0; r <= k->rounds; r++)
    _mm_store_si128 ((__m128i *) key->rk[r],
        _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (k->rk + 4 * r)), bs32));
  key->rounds = k->rounds;
  /* POLYVAL key: byte-reversed H times x */
  for (i = 0; i < 8; i++) {
    hi = (hi << 8) | k->gcm_h[i];
    lo = (lo << 8) | k->gcm_h[8 + i];
  }
  carry = hi >> 63;
  hi = (hi << 1) | (lo >> 63);
  lo <<= 1;
  if (carry) {
    hi ^= 0xc200000000000000ull;
    lo ^= 1;
  }
  h = p = _mm_set_epi64x ((long long) hi, (long long) lo);
  for (i = 15; i >= 0; i--) {
    _mm_store_si128 ((__m128i *) key->hpow[i], p);
    _mm_store_si128 ((__m128i *) key->hkar[i], _mm_set1_epi64x (_mm_cvtsi128_si64 (p ^ _mm_srli_si128 (p, 8))));
    if (i)
      p = dot (p, h);
  }
}

/* The end of a seal: the last 0..8 blocks (rem bytes at p) and E(K, J0) as
 * one AES batch, overlapping the GHASH of the 8 blocks before them (prev, if
 * any), then the GHASH of those last blocks. ctr is the last counter used;
 * *j0 is replaced by E(K, J0). Returns the GHASH state. */
GS_TGT1 static inline __m128i
seal_tail1 (const GsGcmAccelKey *key, __m128i ctr, __m128i *j0, const uint8_t *prev, __m128i s,
    uint8_t *p, uint32_t rem)
{
  const __m128i one = _mm_set_epi32 (0, 0, 0, 1);
  __m128i b[9], rk;
  uint32_t nt = (rem + 15) / 16, i;
  int nr = key->rounds, r;
  rk = _mm_load_si128 ((const __m128i *) key->rk[0]);
  for (i = 0; i < nt; i++) {
    ctr = _mm_add_epi32 (ctr, one);
    b[i] = bswap128 (ctr) ^ rk;
  }
  b[nt] = *j0 ^ rk;
  if (prev)
    s = ghash1 (key, s, prev, 128);
  for (r = 1; r < nr; r++) {
    rk = _mm_load_si128 ((const __m128i *) key->rk[r]);
    for (i = 0; i <= nt; i++)
      b[i] = _mm_aesenc_si128 (b[i], rk);
  }
  rk = _mm_load_si128 ((const __m128i *) key->rk[nr]);
  for (i = 0; i <= nt; i++)
    b[i] = _mm_aesenclast_si128 (b[i], rk);
  for (i = 0; i < nt; i++) {
    uint8_t *q = p + 16 * i;
    if (rem - 16 * i >= 16) {
      _mm_storeu_si128 ((__m128i *) q, b[i] ^ _mm_loadu_si128 ((const __m128i *) q));
    } else {
      uint8_t ks[16];
      uint32_t n;
      _mm_storeu_si128 ((__m128i *) ks, b[i]);
      for (n = 0; n < rem - 16 * i; n++)
        q[n] ^= ks[n];
    }
  }
  *j0 = b[nt];
  return ghash1 (key, s, p, rem);
}

#define AES_ROUND8(b, k) do { \
    int q_; \
    for (q_ = 0; q_ < 8; q_++) \
      (b)[q_] = _mm_aesenc_si128 ((b)[q_], (k)); \
  } while (0)

GS_TGT1 static void
seal1 (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad, uint32_t alen,
    uint8_t *buf, uint32_t len, uint8_t tag[16])
{
  const __m128i one = _mm_set_epi32 (0, 0, 0, 1);
  const uint8_t *prev = NULL;   /* the 8 ciphertext blocks not yet in the GHASH */
  __m128i rk[15], s, ctr, j0;
  uint8_t j0b[16];
  uint32_t off = 0;
  int nr = key->rounds, r, j;
  for (r = 0; r <= nr; r++)
    rk[r] = _mm_load_si128 ((const __m128i *) key->rk[r]);
  memcpy (j0b, iv, 12);
  gs_st32 (j0b + 12, 1);
  j0 = _mm_loadu_si128 ((const __m128i *) j0b);
  ctr = bswap128 (j0);    /* counter = low dword, incremented mod 2^32 as GCM's inc32 */
  s = ghash1 (key, _mm_setzero_si128 (), aad, alen);

  for (; off + 128 <= len; off += 128) {
    Acc a = { _mm_setzero_si128 (), _mm_setzero_si128 (), _mm_setzero_si128 () };
    __m128i b[8];
    for (j = 0; j < 8; j++) {
      ctr = _mm_add_epi32 (ctr, one);
      b[j] = bswap128 (ctr) ^ rk[0];
    }
    /* one GHASH block per AES round: rounds 1..8 of AES-128 and up */
    for (j = 0; j < 8; j++) {
      AES_ROUND8 (b, rk[j + 1]);
      if (prev)
        acc_mul (&a, bswap128 (_mm_loadu_si128 ((const __m128i *) (prev + 16 * j))) ^ (j ? _mm_setzero_si128 () : s),
            key, 8 + j);
    }
    for (r = 9; r < nr; r++)
      AES_ROUND8 (b, rk[r]);
    for (j = 0; j < 8; j++) {
      __m128i *p = (__m128i *) (buf + off + 16 * j);
      _mm_storeu_si128 (p, _mm_aesenclast_si128 (b[j], rk[nr]) ^ _mm_loadu_si128 (p));
    }
    if (prev)
      s = acc_reduce (a);
    prev = buf + off;
  }

  s = seal_tail1 (key, ctr, &j0, prev, s, buf + off, len - off);
  finish_tag (key, s, alen, len, j0, tag);
}

GS_TGT1 static __m128i
encrypt_block1 (const GsGcmAccelKey *key, __m128i b)
{
  int r;
  b ^= _mm_load_si128 ((const __m128i *) key->rk[0]);
  for (r = 1; r < key->rounds; r++)
    b = _mm_aesenc_si128 (b, _mm_load_si128 ((const __m128i *) key->rk[r]));
  return _mm_aesenclast_si128 (b, _mm_load_si128 ((const __m128i *) key->rk[key->rounds]));
}

GS_TGT1 static void
tag1 (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad, uint32_t alen,
    const uint8_t *ct, uint32_t len, uint8_t tag[16])
{
  uint8_t j0b[16];
  __m128i s;
  memcpy (j0b, iv, 12);
  gs_st32 (j0b + 12, 1);
  s = ghash1 (key, _mm_setzero_si128 (), aad, alen);
  s = ghash1 (key, s, ct, len);
  finish_tag (key, s, alen, len, encrypt_block1 (key, _mm_loadu_si128 ((const __m128i *) j0b)), tag);
}

/* Counter mode over the last len bytes, one block at a time after ctr. */
GS_TGT1 static void
ctr_tail1 (const GsGcmAccelKey *key, __m128i ctr, uint8_t *buf, uint32_t len)
{
  const __m128i one = _mm_set_epi32 (0, 0, 0, 1);
  uint32_t off;
  for (off = 0; off < len; off += 16) {
    __m128i b;
    ctr = _mm_add_epi32 (ctr, one);
    b = encrypt_block1 (key, bswap128 (ctr));
    if (len - off >= 16) {
      __m128i *p = (__m128i *) (buf + off);
      _mm_storeu_si128 (p, b ^ _mm_loadu_si128 (p));
    } else {
      uint8_t ks[16];
      uint32_t q;
      _mm_storeu_si128 ((__m128i *) ks, b);
      for (q = 0; off + q < len; q++)
        buf[off + q] ^= ks[q];
    }
  }
}

GS_TGT1 static void
ctr1 (const GsGcmAccelKey *key, const uint8_t iv[12], uint8_t *buf, uint32_t len)
{
  const __m128i one = _mm_set_epi32 (0, 0, 0, 1);
  __m128i rk[15], ctr;
  uint8_t j0b[16];
  uint32_t off = 0;
  int nr = key->rounds, r, j;
  for (r = 0; r <= nr; r++)
    rk[r] = _mm_load_si128 ((const __m128i *) key->rk[r]);
  memcpy (j0b, iv, 12);
  gs_st32 (j0b + 12, 1);
  ctr = bswap128 (_mm_loadu_si128 ((const __m128i *) j0b));
  for (; off + 128 <= len; off += 128) {
    __m128i b[8];
    for (j = 0; j < 8; j++) {
      ctr = _mm_add_epi32 (ctr, one);
      b[j] = bswap128 (ctr) ^ rk[0];
    }
    for (r = 1; r < nr; r++)
      AES_ROUND8 (b, rk[r]);
    for (j = 0; j < 8; j++) {
      __m128i *p = (__m128i *) (buf + off + 16 * j);
      _mm_storeu_si128 (p, _mm_aesenclast_si128 (b[j], rk[nr]) ^ _mm_loadu_si128 (p));
    }
  }
  ctr_tail1 (key, ctr, buf + off, len - off);
}

/* ---- 256-bit: VAES + VPCLMULQDQ, two blocks per register ----
 * 16 blocks (8 registers) per AES batch and per GHASH reduction: vaesenc's
 * latency needs that many in flight. What is left of a packet after the
 * 16-block groups goes through one 8-block step and then the 128-bit tail. */
#define GS_TGT2 __attribute__ ((target ("aes,pclmul,sse4.1,avx,avx2,vaes,vpclmulqdq")))

GS_TGT2 static inline __m256i
bswap256 (__m256i x)
{
  return _mm256_shuffle_epi8 (x, _mm256_set_epi8 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
          0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

typedef struct {
  __m256i lo, mid, hi;
} Acc2;

#define ACC2_ZERO { _mm256_setzero_si256 (), _mm256_setzero_si256 (), _mm256_setzero_si256 () }

GS_TGT2 static inline __m128i
fold_lanes (__m256i v)
{
  return _mm256_castsi256_si128 (v) ^ _mm256_extracti128_si256 (v, 1);
}

GS_TGT2 static inline __m128i
acc_reduce2 (Acc2 a)
{
  Acc r = { fold_lanes (a.lo), fold_lanes (a.mid), fold_lanes (a.hi) };
  return acc_reduce (r);
}

/* Blocks 2j and 2j + 1 of the group at p into a, with powers hpow[i0 + 2j]
 * and hpow[i0 + 2j + 1]; the state s goes into the group's first block. */
GS_TGT2 static inline void
ghash_step2 (Acc2 *a, const GsGcmAccelKey *key, __m128i s, const uint8_t *p, int j, int i0)
{
  __m256i x = bswap256 (_mm256_loadu_si256 ((const __m256i *) (p + 32 * j)));
  __m256i h = _mm256_load_si256 ((const __m256i *) key->hpow[i0 + 2 * j]);
  __m256i hk = _mm256_load_si256 ((const __m256i *) key->hkar[i0 + 2 * j]);
  if (j == 0)
    x ^= _mm256_zextsi128_si256 (s);
  a->lo ^= _mm256_clmulepi64_epi128 (x, h, 0x00);
  a->hi ^= _mm256_clmulepi64_epi128 (x, h, 0x11);
  a->mid ^= _mm256_clmulepi64_epi128 (x ^ _mm256_shuffle_epi32 (x, 0x4e), hk, 0x00);
}

GS_TGT2 static __m128i
ghash2 (const GsGcmAccelKey *key, __m128i s, const uint8_t *p, uint32_t len)
{
  int j;
  for (; len >= 256; p += 256, len -= 256) {
    Acc2 a = ACC2_ZERO;
    for (j = 0; j < 8; j++)
      ghash_step2 (&a, key, s, p, j, 0);
    s = acc_reduce2 (a);
  }
  return ghash1 (key, s, p, len);
}

/* Counter blocks ctr + 1 .. ctr + 2n, two per register, AES round 0 applied */
GS_TGT2 static inline void
ctr_blocks2 (__m256i *b, int n, __m128i ctr, __m256i rk0)
{
  __m256i base = _mm256_broadcastsi128_si256 (ctr);
  int j;
  for (j = 0; j < n; j++)
    b[j] = bswap256 (_mm256_add_epi32 (base, _mm256_set_epi32 (0, 0, 0, 2 * j + 2, 0, 0, 0, 2 * j + 1))) ^ rk0;
}

#define AES_ROUND2(b, n, k) do { \
    int q_; \
    for (q_ = 0; q_ < (n); q_++) \
      (b)[q_] = _mm256_aesenc_epi128 ((b)[q_], (k)); \
  } while (0)

/* buf ^= the last AES round of the n registers */
#define AES_LAST2_XOR(b, n, k, buf) do { \
    int q_; \
    for (q_ = 0; q_ < (n); q_++) { \
      __m256i *p_ = (__m256i *) ((buf) + 32 * q_); \
      _mm256_storeu_si256 (p_, _mm256_aesenclast_epi128 ((b)[q_], (k)) ^ _mm256_loadu_si256 (p_)); \
    } \
  } while (0)

/* Per 16 blocks: AES, then the GHASH of those same blocks while they are
 * hot; out-of-order execution overlaps that GHASH with the next group's
 * AES (they are independent). On AMD Zen 3 this measured as fast as
 * interleaving the two in the source, which makes the compiler spill. */
GS_TGT2 static void
seal2 (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad, uint32_t alen,
    uint8_t *buf, uint32_t len, uint8_t tag[16])
{
  const uint8_t *prev = NULL;   /* 8 ciphertext blocks not yet in the GHASH */
  __m256i rk[15];
  __m128i s, ctr, j0;
  uint8_t j0b[16];
  uint32_t off = 0;
  int nr = key->rounds, r, j;
  for (r = 0; r <= nr; r++)
    rk[r] = _mm256_broadcastsi128_si256 (_mm_load_si128 ((const __m128i *) key->rk[r]));
  memcpy (j0b, iv, 12);
  gs_st32 (j0b + 12, 1);
  j0 = _mm_loadu_si128 ((const __m128i *) j0b);
  ctr = bswap128 (j0);
  s = ghash1 (key, _mm_setzero_si128 (), aad, alen);

  for (; off + 256 <= len; off += 256) {
    Acc2 a = ACC2_ZERO;
    __m256i b[8];
    ctr_blocks2 (b, 8, ctr, rk[0]);
    ctr = _mm_add_epi32 (ctr, _mm_set_epi32 (0, 0, 0, 16));
    for (r = 1; r < nr; r++)
      AES_ROUND2 (b, 8, rk[r]);
    AES_LAST2_XOR (b, 8, rk[nr], buf + off);
    for (j = 0; j < 8; j++)
      ghash_step2 (&a, key, s, buf + off, j, 0);
    s = acc_reduce2 (a);
  }
  /* 8 more blocks; their GHASH overlaps the tail's AES */
  if (off + 128 <= len) {
    __m256i b[4];
    ctr_blocks2 (b, 4, ctr, rk[0]);
    ctr = _mm_add_epi32 (ctr, _mm_set_epi32 (0, 0, 0, 8));
    for (r = 1; r < nr; r++)
      AES_ROUND2 (b, 4, rk[r]);
    AES_LAST2_XOR (b, 4, rk[nr], buf + off);
    prev = buf + off;
    off += 128;
  }
  s = seal_tail1 (key, ctr, &j0, prev, s, buf + off, len - off);
  finish_tag (key, s, alen, len, j0, tag);
}

GS_TGT2 static void
tag2 (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad, uint32_t alen,
    const uint8_t *ct, uint32_t len, uint8_t tag[16])
{
  uint8_t j0b[16];
  __m128i s;
  memcpy (j0b, iv, 12);
  gs_st32 (j0b + 12, 1);
  s = ghash1 (key, _mm_setzero_si128 (), aad, alen);
  s = ghash2 (key, s, ct, len);
  finish_tag (key, s, alen, len, encrypt_block1 (key, _mm_loadu_si128 ((const __m128i *) j0b)), tag);
}

GS_TGT2 static void
ctr2 (const GsGcmAccelKey *key, const uint8_t iv[12], uint8_t *buf, uint32_t len)
{
  __m256i rk[15];
  __m128i ctr;
  uint8_t j0b[16];
  uint32_t off = 0;
  int nr = key->rounds, r;
  for (r = 0; r <= nr; r++)
    rk[r] = _mm256_broadcastsi128_si256 (_mm_load_si128 ((const __m128i *) key->rk[r]));
  memcpy (j0b, iv, 12);
  gs_st32 (j0b + 12, 1);
  ctr = bswap128 (_mm_loadu_si128 ((const __m128i *) j0b));
  for (; off + 256 <= len; off += 256) {
    __m256i b[8];
    ctr_blocks2 (b, 8, ctr, rk[0]);
    ctr = _mm_add_epi32 (ctr, _mm_set_epi32 (0, 0, 0, 16));
    for (r = 1; r < nr; r++)
      AES_ROUND2 (b, 8, rk[r]);
    AES_LAST2_XOR (b, 8, rk[nr], buf + off);
  }
  if (off + 128 <= len) {
    __m256i b[4];
    ctr_blocks2 (b, 4, ctr, rk[0]);
    ctr = _mm_add_epi32 (ctr, _mm_set_epi32 (0, 0, 0, 8));
    for (r = 1; r < nr; r++)
      AES_ROUND2 (b, 4, rk[r]);
    AES_LAST2_XOR (b, 4, rk[nr], buf + off);
    off += 128;
  }
  ctr_tail1 (key, ctr, buf + off, len - off);
}

/* ---- dispatch ---- */
void
gs_gcm_accel_key_init (GsGcmAccelKey *key, const GsSrtpKeys *k)
{
  key_init1 (key, k);
}

void
gs_gcm_accel_seal (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, uint8_t *buf, uint32_t len, uint8_t tag[16])
{
  if (gs_gcm_accel_level () >= 2)
    seal2 (key, iv, aad, alen, buf, len, tag);
  else
    seal1 (key, iv, aad, alen, buf, len, tag);
}

void
gs_gcm_accel_tag (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, const uint8_t *ct, uint32_t len, uint8_t tag[16])
{
  if (gs_gcm_accel_level () >= 2)
    tag2 (key, iv, aad, alen, ct, len, tag);
  else
    tag1 (key, iv, aad, alen, ct, len, tag);
}

void
gs_gcm_accel_ctr (const GsGcmAccelKey *key, const uint8_t iv[12], uint8_t *buf, uint32_t len)
{
  if (gs_gcm_accel_level () >= 2)
    ctr2 (key, iv, buf, len);
  else
    ctr1 (key, iv, buf, len);
}

#else /* !GS_X86 */

unsigned
gs_gcm_accel_level (void)
{
  return 0;
}

void
gs_gcm_accel_key_init (GsGcmAccelKey *key, const GsSrtpKeys *k)
{
  (void) key; (void) k;
}

void
gs_gcm_accel_seal (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, uint8_t *buf, uint32_t len, uint8_t tag[16])
{
  (void) key; (void) iv; (void) aad; (void) alen; (void) buf; (void) len; (void) tag;
}

void
gs_gcm_accel_tag (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, const uint8_t *ct, uint32_t len, uint8_t tag[16])
{
  (void) key; (void) iv; (void) aad; (void) alen; (void) ct; (void) len; (void) tag;
}

void
gs_gcm_accel_ctr (const GsGcmAccelKey *key, const uint8_t iv[12], uint8_t *buf, uint32_t len)
{
  (void) key; (void) iv; (void) buf; (void) len;
}

#endif /* GS_X86 */
