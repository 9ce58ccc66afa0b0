/* rlnc_rowops.h: AVX2 GF(2^8) row operations for the progressive decoder.
 * Rows are short (2m bytes, a few 32-byte chunks), so per-call overhead of
 * ISA-L's generic routines dominates there; these loops keep the whole row
 * (up to 4 chunks at a time) in registers and take the multiplier tables
 * straight from the decoder's gf_vect_mul_init table of every constant
 * (32 bytes: low-nibble products, then high-nibble products). */
#ifndef RLNC_ROWOPS_H
#define RLNC_ROWOPS_H
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RLNC_HAVE_AVX2_ROWOPS 1
#include <stdint.h>
#include <immintrin.h>

#define RLNC_AVX2 __attribute__ ((target ("avx2")))

/* x * c for each byte of x, tbl = mtab[c]. */
static inline RLNC_AVX2 __m256i
rlnc_mul32 (__m256i x, __m256i tlo, __m256i thi, __m256i mask)
{
  __m256i lo = _mm256_and_si256 (x, mask);
  __m256i hi = _mm256_and_si256 (_mm256_srli_epi64 (x, 4), mask);
  return _mm256_xor_si256 (_mm256_shuffle_epi8 (tlo, lo),
                           _mm256_shuffle_epi8 (thi, hi));
}

/* v[0..32*NC) ^= sum_i coef-table tb[i] * rows[i][off..]: one group of NC
 * chunks held in registers across all rows. NC is a constant per copy. */
#define RLNC_DOT_GROUP(NC)                                                   \
  static inline RLNC_AVX2 __attribute__ ((always_inline)) void             \
  rlnc_dot_group##NC (uint8_t *v, size_t off, int ns,                      \
                      const uint8_t *const *rows, const uint8_t *const *tb)  \
  {                                                                          \
    const __m256i mask = _mm256_set1_epi8 (0x0f);                            \
    __m256i acc[NC];                                                         \
    for (int j = 0; j < NC; j++)                                             \
      acc[j] = _mm256_loadu_si256 ((const __m256i *) (v + off + 32 * j));    \
    for (int i = 0; i < ns; i++) {                                           \
      __m256i tlo = _mm256_broadcastsi128_si256 (                            \
          _mm_loadu_si128 ((const __m128i *) tb[i]));                        \
      __m256i thi = _mm256_broadcastsi128_si256 (                            \
          _mm_loadu_si128 ((const __m128i *) (tb[i] + 16)));                 \
      const uint8_t *r = rows[i] + off;                                      \
      for (int j = 0; j < NC; j++)                                           \
        acc[j] = _mm256_xor_si256 (acc[j], rlnc_mul32 (                      \
            _mm256_loadu_si256 ((const __m256i *) (r + 32 * j)), tlo, thi,   \
            mask));                                                          \
    }                                                                        \
    for (int j = 0; j < NC; j++)                                             \
      _mm256_storeu_si256 ((__m256i *) (v + off + 32 * j), acc[j]);          \
  }
RLNC_DOT_GROUP (1)
RLNC_DOT_GROUP (2)
RLNC_DOT_GROUP (3)
RLNC_DOT_GROUP (4)

/* v[0..w) ^= sum over i < ns of tb[i]-multiple of rows[i]; w % 32 == 0. */
static RLNC_AVX2 void
rlnc_dot_avx2 (uint8_t *v, int w, int ns, const uint8_t *const *rows,
               const uint8_t *const *tb)
{
  size_t off = 0;
  int nc = w / 32;
  for (; nc >= 4; nc -= 4, off += 128)
    rlnc_dot_group4 (v, off, ns, rows, tb);
  switch (nc) {
  case 3: rlnc_dot_group3 (v, off, ns, rows, tb); break;
  case 2: rlnc_dot_group2 (v, off, ns, rows, tb); break;
  case 1: rlnc_dot_group1 (v, off, ns, rows, tb); break;
  default: break;
  }
}

/* v[0..w) *= the constant of tbl, in place. */
static RLNC_AVX2 void
rlnc_scale_avx2 (uint8_t *v, int w, const uint8_t *tbl)
{
  const __m256i mask = _mm256_set1_epi8 (0x0f);
  __m256i tlo = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) tbl));
  __m256i thi = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) (tbl + 16)));
  for (int j = 0; j < w; j += 32) {
    __m256i x = _mm256_loadu_si256 ((const __m256i *) (v + j));
    _mm256_storeu_si256 ((__m256i *) (v + j), rlnc_mul32 (x, tlo, thi, mask));
  }
}

/* rows[i][0..w) ^= tb[i]-multiple of v, for i < ns. v's nibbles are split
 * once (w <= 512 bytes: 16 chunks), then each row is one pass. */
static RLNC_AVX2 void
rlnc_axpy_rows_avx2 (const uint8_t *v, int w, int ns, uint8_t *const *rows,
                     const uint8_t *const *tb)
{
  const __m256i mask = _mm256_set1_epi8 (0x0f);
  __m256i vlo[16], vhi[16];
  const int nc = w / 32;
  for (int j = 0; j < nc; j++) {
    __m256i x = _mm256_loadu_si256 ((const __m256i *) (v + 32 * j));
    vlo[j] = _mm256_and_si256 (x, mask);
    vhi[j] = _mm256_and_si256 (_mm256_srli_epi64 (x, 4), mask);
  }
  for (int i = 0; i < ns; i++) {
    __m256i tlo = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) tb[i]));
    __m256i thi = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) (tb[i] + 16)));
    uint8_t *r = rows[i];
    for (int j = 0; j < nc; j++) {
      __m256i p = _mm256_xor_si256 (_mm256_shuffle_epi8 (tlo, vlo[j]),
                                    _mm256_shuffle_epi8 (thi, vhi[j]));
      __m256i *rp = (__m256i *) (r + 32 * j);
      _mm256_storeu_si256 (rp, _mm256_xor_si256 (_mm256_loadu_si256 (rp), p));
    }
  }
}
#endif
#endif
