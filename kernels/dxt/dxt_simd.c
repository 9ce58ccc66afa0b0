/* dxt_simd.c: SSE4.1 and AVX2 versions of dxt_bc1_fast. Compiled with
 * target attributes (no global -m flags), picked at run time in dxt.c.
 *
 * The block is turned into structure-of-arrays 16-bit R, G, B vectors; the
 * per-pixel loops of the scalar code (bounds, diagonal covariance, nearest
 * palette entry, least-squares sums) become vector ops on all 16 pixels;
 * the per-block steps (endpoints, quantisation, palette, solve) are the
 * very scalar GS_HD functions. All integer, with the same tie-breaking
 * (strictly smaller distance wins, index order 0..3), so the result is the
 * scalar one bit for bit (checked by test_dxt).
 *
 * Also the input conversion of dxt_encode_slice: rows of YUV / BGR(A/x)
 * pixels to RGBA blocks, the integer BT.601 formula of dxt_yuv_to_rgb on
 * 32-bit lanes. */
#include "dxt/dxt_simd.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define T41 __attribute__ ((target ("sse4.1")))
#define TAVX __attribute__ ((target ("avx2")))

T41 static inline int
hsum32 (__m128i v)
{
  v = _mm_add_epi32 (v, _mm_shuffle_epi32 (v, 0x4e));
  v = _mm_add_epi32 (v, _mm_shuffle_epi32 (v, 0xb1));
  return _mm_cvtsi128_si32 (v);
}

/* 16 bytes of R (G, B) in pixel order. */
T41 static inline void
soa8 (const uint8_t *px, __m128i *r8, __m128i *g8, __m128i *b8)
{
  const __m128i shuf = _mm_setr_epi8 (0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m128i q0 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) px), shuf);
  __m128i q1 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (px + 16)), shuf);
  __m128i q2 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (px + 32)), shuf);
  __m128i q3 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (px + 48)), shuf);
  __m128i t0 = _mm_unpacklo_epi32 (q0, q1), t1 = _mm_unpackhi_epi32 (q0, q1);
  __m128i t2 = _mm_unpacklo_epi32 (q2, q3), t3 = _mm_unpackhi_epi32 (q2, q3);
  *r8 = _mm_unpacklo_epi64 (t0, t2);
  *g8 = _mm_unpackhi_epi64 (t0, t2);
  *b8 = _mm_unpacklo_epi64 (t1, t3);
}

T41 static inline void
bounds8 (__m128i v, int *mn, int *mx)
{
  __m128i a = _mm_min_epu8 (v, _mm_srli_si128 (v, 8));
  __m128i b = _mm_max_epu8 (v, _mm_srli_si128 (v, 8));
  a = _mm_min_epu8 (a, _mm_srli_si128 (a, 4)); b = _mm_max_epu8 (b, _mm_srli_si128 (b, 4));
  a = _mm_min_epu8 (a, _mm_srli_si128 (a, 2)); b = _mm_max_epu8 (b, _mm_srli_si128 (b, 2));
  a = _mm_min_epu8 (a, _mm_srli_si128 (a, 1)); b = _mm_max_epu8 (b, _mm_srli_si128 (b, 1));
  *mn = _mm_cvtsi128_si32 (a) & 255;
  *mx = _mm_cvtsi128_si32 (b) & 255;
}

/* 16 indices (bytes 0..3, pixel order) -> 2-bit packed word. */
T41 static inline uint32_t
pack_idx (__m128i i8)
{
  __m128i p = _mm_maddubs_epi16 (i8, _mm_set1_epi16 (0x0401));   /* i0 + 4 i1 */
  p = _mm_madd_epi16 (p, _mm_set1_epi32 (0x00100001));           /* + 16 (i2 + 4 i3) */
  p = _mm_packus_epi32 (p, p);
  p = _mm_packus_epi16 (p, p);
  return (uint32_t) _mm_cvtsi128_si32 (p);
}

/* Least-squares sums from the per-pixel index bytes k8 (pixel order);
 * x16 = R, G, B vectors (two halves of 8 pixels each). */
T41 static inline void
lsq_sums_sse (__m128i k8, const __m128i x16[3][2], DxtLsqSums *s)
{
  const __m128i wtab = _mm_setr_epi8 (0, 3, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  __m128i b8 = _mm_shuffle_epi8 (wtab, k8);
  __m128i a8 = _mm_sub_epi8 (_mm_set1_epi8 (3), b8);
  const __m128i ones = _mm_set1_epi16 (1);
  s->saa = hsum32 (_mm_madd_epi16 (_mm_maddubs_epi16 (a8, a8), ones));
  s->sab = hsum32 (_mm_madd_epi16 (_mm_maddubs_epi16 (a8, b8), ones));
  s->sbb = hsum32 (_mm_madd_epi16 (_mm_maddubs_epi16 (b8, b8), ones));
  __m128i a0 = _mm_cvtepu8_epi16 (a8), a1 = _mm_cvtepu8_epi16 (_mm_srli_si128 (a8, 8));
  __m128i b0 = _mm_cvtepu8_epi16 (b8), b1 = _mm_cvtepu8_epi16 (_mm_srli_si128 (b8, 8));
  for (int c = 0; c < 3; c++) {
    s->sax[c] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (a0, x16[c][0]), _mm_madd_epi16 (a1, x16[c][1])));
    s->sbx[c] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (b0, x16[c][0]), _mm_madd_epi16 (b1, x16[c][1])));
  }
}

/* ---------------------------------------------------------------- SSE4.1 */

T41 static inline void
dist_half (__m128i r, __m128i g, __m128i b, const int p[3], __m128i *lo, __m128i *hi)
{
  __m128i dr = _mm_sub_epi16 (r, _mm_set1_epi16 ((short) p[0]));
  __m128i dg = _mm_sub_epi16 (g, _mm_set1_epi16 ((short) p[1]));
  __m128i db = _mm_sub_epi16 (b, _mm_set1_epi16 ((short) p[2]));
  __m128i z = _mm_setzero_si128 ();
  __m128i l = _mm_unpacklo_epi16 (dr, dg), h = _mm_unpackhi_epi16 (dr, dg);
  __m128i bl = _mm_unpacklo_epi16 (db, z), bh = _mm_unpackhi_epi16 (db, z);
  *lo = _mm_add_epi32 (_mm_madd_epi16 (l, l), _mm_madd_epi16 (bl, bl));
  *hi = _mm_add_epi32 (_mm_madd_epi16 (h, h), _mm_madd_epi16 (bh, bh));
}

T41 static int
try_sse (const __m128i x16[3][2], uint32_t c0, uint32_t c1, DxtBc1Cand *best, __m128i *k8)
{
  if (c0 < c1) { uint32_t t = c0; c0 = c1; c1 = t; }
  int pal[4][3];
  dxt_bc1_palette4 (c0, c1, pal);
  __m128i bd[4], bi[4];
  for (int h = 0; h < 2; h++)
    dist_half (x16[0][h], x16[1][h], x16[2][h], pal[0], &bd[2 * h], &bd[2 * h + 1]);
  for (int q = 0; q < 4; q++) bi[q] = _mm_setzero_si128 ();
  for (int k = 1; k < 4; k++) {
    __m128i d[4], kk = _mm_set1_epi32 (k);
    for (int h = 0; h < 2; h++)
      dist_half (x16[0][h], x16[1][h], x16[2][h], pal[k], &d[2 * h], &d[2 * h + 1]);
    for (int q = 0; q < 4; q++) {
      __m128i m = _mm_cmpgt_epi32 (bd[q], d[q]);
      bd[q] = _mm_min_epi32 (bd[q], d[q]);
      bi[q] = _mm_blendv_epi8 (bi[q], kk, m);
    }
  }
  int err = hsum32 (_mm_add_epi32 (_mm_add_epi32 (bd[0], bd[1]), _mm_add_epi32 (bd[2], bd[3])));
  if (err >= best->err)
    return 0;
  __m128i i8 = _mm_packus_epi16 (_mm_packs_epi32 (bi[0], bi[1]), _mm_packs_epi32 (bi[2], bi[3]));
  best->c0 = c0; best->c1 = c1; best->err = err;
  best->idx = pack_idx (i8);
  *k8 = i8;
  return 1;
}

/* dxt_block_sums on the 16-bit channel vectors: the channel sums, and the
 * products only when sxy is not NULL */
T41 static void
block_sums_sse (const __m128i x16[3][2], int sum[3], int sxy[6])
{
  const __m128i one = _mm_set1_epi16 (1);
  static const int pr[6][2] = { { 0, 0 }, { 0, 1 }, { 0, 2 }, { 1, 1 }, { 1, 2 }, { 2, 2 } };
  for (int c = 0; c < 3; c++)
    sum[c] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (x16[c][0], one), _mm_madd_epi16 (x16[c][1], one)));
  for (int k = 0; sxy && k < 6; k++) {
    const __m128i *a = x16[pr[k][0]], *b = x16[pr[k][1]];
    sxy[k] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (a[0], b[0]), _mm_madd_epi16 (a[1], b[1])));
  }
}

/* The second half of dxt_bc1_fast: the near-flat mean pair, then the
 * principal-axis ends and their least-squares step, same order and ties. */
T41 static void
fast_more_sse (const uint8_t *px, const __m128i x16[3][2], const int mn[3], const int mx[3],
    DxtBc1Cand *best)
{
  uint32_t c0, c1;
  __m128i k8;
  int e0[3], e1[3], sum[3], sxy[6], axis[3];
  int flat = dxt_bc1_near_flat (mn, mx);
  if (!flat && best->err <= DXT_AXIS_ERR)
    return;
  block_sums_sse (x16, sum, NULL);
  if (flat) {
    dxt_bc1_mean_pair (sum, &c0, &c1);
    try_sse (x16, c0, c1, best, &k8);
  }
  if (best->err <= DXT_AXIS_ERR)
    return;
  block_sums_sse (x16, sum, sxy);
  if (dxt_principal_axis_sums (sum, sxy, axis)) {
    DxtBc1Cand pca;
    DxtLsqSums s;
    pca.err = 0x7fffffff;
    dxt_bc1_axis_ends (px, axis, &c0, &c1);
    try_sse (x16, c0, c1, &pca, &k8);
    if (pca.err < best->err)
      *best = pca;
    lsq_sums_sse (k8, x16, &s);
    if (dxt_bc1_lsq_solve (&s, e0, e1))
      try_sse (x16, dxt_pack565 (e0), dxt_pack565 (e1), best, &k8);
  }
}

T41 DxtBc1Cand
dxt_bc1_fast_sse41 (const uint8_t *px)
{
  DxtBc1Cand best;
  best.c0 = best.c1 = best.idx = 0;
  best.err = 0x7fffffff;
  __m128i ch8[3];
  soa8 (px, &ch8[0], &ch8[1], &ch8[2]);
  int mn[3], mx[3], cov[3], e0[3], e1[3];
  for (int c = 0; c < 3; c++) bounds8 (ch8[c], &mn[c], &mx[c]);
  if (dxt_is_solid (mn, mx)) {
    dxt_bc1_solid (px, &best);
    return best;
  }
  __m128i x16[3][2], dc[3][2];
  for (int c = 0; c < 3; c++) {
    x16[c][0] = _mm_cvtepu8_epi16 (ch8[c]);
    x16[c][1] = _mm_cvtepu8_epi16 (_mm_srli_si128 (ch8[c], 8));
    __m128i ctr = _mm_set1_epi16 ((short) (mn[c] + mx[c]));
    for (int h = 0; h < 2; h++)
      dc[c][h] = _mm_sub_epi16 (_mm_add_epi16 (x16[c][h], x16[c][h]), ctr);
  }
  cov[0] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (dc[0][0], dc[1][0]), _mm_madd_epi16 (dc[0][1], dc[1][1])));
  cov[1] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (dc[2][0], dc[1][0]), _mm_madd_epi16 (dc[2][1], dc[1][1])));
  cov[2] = hsum32 (_mm_add_epi32 (_mm_madd_epi16 (dc[0][0], dc[2][0]), _mm_madd_epi16 (dc[0][1], dc[2][1])));
  dxt_bc1_box_endpoints (mn, mx, cov, e0, e1);
  __m128i k8 = _mm_setzero_si128 ();
  try_sse (x16, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8);
  DxtLsqSums s;
  lsq_sums_sse (k8, x16, &s);
  if (dxt_bc1_lsq_solve (&s, e0, e1))
    try_sse (x16, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8);
  fast_more_sse (px, x16, mn, mx, &best);
  return best;
}

/* ------------------------------------------------------------------ AVX2 */

TAVX static inline __m256i
dist_avx (__m256i r, __m256i g, __m256i b, const int p[3], __m256i *hi)
{
  __m256i dr = _mm256_sub_epi16 (r, _mm256_set1_epi16 ((short) p[0]));
  __m256i dg = _mm256_sub_epi16 (g, _mm256_set1_epi16 ((short) p[1]));
  __m256i db = _mm256_sub_epi16 (b, _mm256_set1_epi16 ((short) p[2]));
  __m256i z = _mm256_setzero_si256 ();
  __m256i l = _mm256_unpacklo_epi16 (dr, dg), h = _mm256_unpackhi_epi16 (dr, dg);
  __m256i bl = _mm256_unpacklo_epi16 (db, z), bh = _mm256_unpackhi_epi16 (db, z);
  *hi = _mm256_add_epi32 (_mm256_madd_epi16 (h, h), _mm256_madd_epi16 (bh, bh));
  return _mm256_add_epi32 (_mm256_madd_epi16 (l, l), _mm256_madd_epi16 (bl, bl));
}

TAVX static inline int
hsum256 (__m256i v)
{
  return hsum32 (_mm_add_epi32 (_mm256_castsi256_si128 (v), _mm256_extracti128_si256 (v, 1)));
}

TAVX static int
try_avx (const __m256i x[3], uint32_t c0, uint32_t c1, DxtBc1Cand *best, __m128i *k8)
{
  if (c0 < c1) { uint32_t t = c0; c0 = c1; c1 = t; }
  int pal[4][3];
  dxt_bc1_palette4 (c0, c1, pal);
  /* lo: pixels 0-3 | 8-11, hi: 4-7 | 12-15 (in-lane unpack) */
  __m256i bh, bl = dist_avx (x[0], x[1], x[2], pal[0], &bh);
  __m256i il = _mm256_setzero_si256 (), ih = _mm256_setzero_si256 ();
  for (int k = 1; k < 4; k++) {
    __m256i dh, dl = dist_avx (x[0], x[1], x[2], pal[k], &dh), kk = _mm256_set1_epi32 (k);
    __m256i ml = _mm256_cmpgt_epi32 (bl, dl), mh = _mm256_cmpgt_epi32 (bh, dh);
    bl = _mm256_min_epi32 (bl, dl); bh = _mm256_min_epi32 (bh, dh);
    il = _mm256_blendv_epi8 (il, kk, ml); ih = _mm256_blendv_epi8 (ih, kk, mh);
  }
  int err = hsum256 (_mm256_add_epi32 (bl, bh));
  if (err >= best->err)
    return 0;
  __m256i i16 = _mm256_packs_epi32 (il, ih);                  /* pixel order */
  __m256i i8 = _mm256_permute4x64_epi64 (_mm256_packus_epi16 (i16, i16), 0x08);
  best->c0 = c0; best->c1 = c1; best->err = err;
  *k8 = _mm256_castsi256_si128 (i8);
  best->idx = pack_idx (*k8);
  return 1;
}

TAVX DxtBc1Cand
dxt_bc1_fast_avx2 (const uint8_t *px)
{
  DxtBc1Cand best;
  best.c0 = best.c1 = best.idx = 0;
  best.err = 0x7fffffff;
  __m128i ch8[3];
  soa8 (px, &ch8[0], &ch8[1], &ch8[2]);
  int mn[3], mx[3], cov[3], e0[3], e1[3];
  for (int c = 0; c < 3; c++) bounds8 (ch8[c], &mn[c], &mx[c]);
  if (dxt_is_solid (mn, mx)) {
    dxt_bc1_solid (px, &best);
    return best;
  }
  __m256i x[3], dc[3];
  __m128i x16[3][2];
  for (int c = 0; c < 3; c++) {
    x[c] = _mm256_cvtepu8_epi16 (ch8[c]);
    x16[c][0] = _mm256_castsi256_si128 (x[c]);
    x16[c][1] = _mm256_extracti128_si256 (x[c], 1);
    dc[c] = _mm256_sub_epi16 (_mm256_add_epi16 (x[c], x[c]),
                              _mm256_set1_epi16 ((short) (mn[c] + mx[c])));
  }
  cov[0] = hsum256 (_mm256_madd_epi16 (dc[0], dc[1]));
  cov[1] = hsum256 (_mm256_madd_epi16 (dc[2], dc[1]));
  cov[2] = hsum256 (_mm256_madd_epi16 (dc[0], dc[2]));
  dxt_bc1_box_endpoints (mn, mx, cov, e0, e1);
  __m128i k8 = _mm_setzero_si128 ();
  try_avx (x, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8);
  DxtLsqSums s;
  lsq_sums_sse (k8, (const __m128i (*)[2]) x16, &s);
  if (dxt_bc1_lsq_solve (&s, e0, e1))
    try_avx (x, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8);
  /* the rest on 128-bit vectors: it runs for few blocks */
  fast_more_sse (px, x16, mn, mx, &best);
  return best;
}


/* dxt_bc1_high with the per-pixel loops on AVX2 (same steps, same order). */
TAVX DxtBc1Cand
dxt_bc1_high_avx2 (const uint8_t *px, int lock_blue)
{
  DxtBc1Cand best;
  best.c0 = best.c1 = best.idx = 0;
  best.err = 0x7fffffff;
  __m128i ch8[3];
  soa8 (px, &ch8[0], &ch8[1], &ch8[2]);
  int mn[3], mx[3], cov[3], e0[3], e1[3];
  for (int c = 0; c < 3; c++) bounds8 (ch8[c], &mn[c], &mx[c]);
  if (dxt_is_solid (mn, mx)) {
    dxt_bc1_solid (px, &best);
    return best;
  }
  __m256i x[3], dc[3];
  __m128i x16[3][2];
  for (int c = 0; c < 3; c++) {
    x[c] = _mm256_cvtepu8_epi16 (ch8[c]);
    x16[c][0] = _mm256_castsi256_si128 (x[c]);
    x16[c][1] = _mm256_extracti128_si256 (x[c], 1);
    dc[c] = _mm256_sub_epi16 (_mm256_add_epi16 (x[c], x[c]),
                              _mm256_set1_epi16 ((short) (mn[c] + mx[c])));
  }
  cov[0] = hsum256 (_mm256_madd_epi16 (dc[0], dc[1]));
  cov[1] = hsum256 (_mm256_madd_epi16 (dc[2], dc[1]));
  cov[2] = hsum256 (_mm256_madd_epi16 (dc[0], dc[2]));
  dxt_bc1_box_endpoints (mn, mx, cov, e0, e1);
  __m128i k8 = _mm_setzero_si128 ();
  try_avx (x, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8);
  int axis[3];
  if (dxt_principal_axis (px, axis)) {
    int lo = 0, hi = 0, plo = 0x7fffffff, phi = -0x7fffffff;
    for (int i = 0; i < 16; i++) {
      int p = px[4 * i] * axis[0] + px[4 * i + 1] * axis[1] + px[4 * i + 2] * axis[2];
      if (p < plo) { plo = p; lo = i; }
      if (p > phi) { phi = p; hi = i; }
    }
    for (int c = 0; c < 3; c++) { e0[c] = px[4 * hi + c]; e1[c] = px[4 * lo + c]; }
    try_avx (x, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8);
  }
  for (int it = 0; it < 3; it++) {
    DxtLsqSums s;
    lsq_sums_sse (k8, (const __m128i (*)[2]) x16, &s);
    if (!dxt_bc1_lsq_solve (&s, e0, e1))
      break;
    if (!try_avx (x, dxt_pack565 (e0), dxt_pack565 (e1), &best, &k8))
      break;
  }
  const int fsh[3] = { 11, 5, 0 }, fmax[3] = { 31, 63, 31 };
  for (int pass = 0; pass < 2 && best.err > 0; pass++) {
    int improved = 0;
    for (int f = 0; f < 6; f++) {
      int ch = f % 3;
      if (lock_blue && ch == 2)
        continue;
      for (int d = -1; d <= 1; d += 2) {
        uint32_t w[2] = { best.c0, best.c1 };
        int v = (int) ((w[f / 3] >> fsh[ch]) & (uint32_t) fmax[ch]) + d;
        if (v < 0 || v > fmax[ch])
          continue;
        w[f / 3] = (w[f / 3] & ~((uint32_t) fmax[ch] << fsh[ch])) | ((uint32_t) v << fsh[ch]);
        improved |= try_avx (x, w[0], w[1], &best, &k8);
      }
    }
    if (!improved)
      break;
  }
  return best;
}


/* ------------------------------------------------- rows of input -> RGBA */

/* Byte of pixel j (0..7) of a step within its source (dxt_load_block's
 * addressing): Y, U, V; packed 4:2:2 from one 16-byte source, I420 from
 * the Y, U, V rows, NV12 from the Y and UV rows. */
static const uint8_t yuv_idx[4][3][8] = {
  { { 1, 3, 5, 7, 9, 11, 13, 15 }, { 0, 0, 4, 4, 8, 8, 12, 12 }, { 2, 2, 6, 6, 10, 10, 14, 14 } },
  { { 0, 2, 4, 6, 8, 10, 12, 14 }, { 1, 1, 5, 5, 9, 9, 13, 13 }, { 3, 3, 7, 7, 11, 11, 15, 15 } },
  { { 0, 1, 2, 3, 4, 5, 6, 7 }, { 0, 0, 1, 1, 2, 2, 3, 3 }, { 0, 0, 1, 1, 2, 2, 3, 3 } },
  { { 0, 1, 2, 3, 4, 5, 6, 7 }, { 0, 0, 2, 2, 4, 4, 6, 6 }, { 1, 1, 3, 3, 5, 5, 7, 7 } },
};

/* pshufb masks: pixel j's byte into the low byte of 32-bit lane j (lane j
 * of the high 128 bits for j >= 4: sources are broadcast to both halves) */
static void
yuv_masks (int f, uint8_t m[3][32])
{
  for (int c = 0; c < 3; c++)
    for (int j = 0; j < 8; j++) {
      m[c][4 * j] = yuv_idx[f - DXT_FMT_UYVY][c][j];
      m[c][4 * j + 1] = m[c][4 * j + 2] = m[c][4 * j + 3] = 0x80;
    }
}

static inline uint32_t
ld32 (const uint8_t *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}

static inline uint16_t
ld16 (const uint8_t *p)
{
  uint16_t v;
  memcpy (&v, p, 2);
  return v;
}

/* dxt_yuv_to_rgb on 32-bit lanes: R | G << 8 | B << 16 | 255 << 24 */
T41 static inline __m128i
yuv_rgba_sse (__m128i y, __m128i u, __m128i v)
{
  const __m128i z = _mm_setzero_si128 (), m255 = _mm_set1_epi32 (255);
  __m128i c = _mm_add_epi32 (_mm_mullo_epi32 (_mm_sub_epi32 (y, _mm_set1_epi32 (16)),
          _mm_set1_epi32 (298)), _mm_set1_epi32 (128));
  __m128i d = _mm_sub_epi32 (u, _mm_set1_epi32 (128)), e = _mm_sub_epi32 (v, _mm_set1_epi32 (128));
  __m128i r = _mm_add_epi32 (c, _mm_mullo_epi32 (e, _mm_set1_epi32 (409)));
  __m128i g = _mm_sub_epi32 (c, _mm_add_epi32 (_mm_mullo_epi32 (d, _mm_set1_epi32 (100)),
          _mm_mullo_epi32 (e, _mm_set1_epi32 (208))));
  __m128i b = _mm_add_epi32 (c, _mm_mullo_epi32 (d, _mm_set1_epi32 (516)));
  r = _mm_min_epi32 (_mm_max_epi32 (_mm_srai_epi32 (r, 8), z), m255);
  g = _mm_min_epi32 (_mm_max_epi32 (_mm_srai_epi32 (g, 8), z), m255);
  b = _mm_min_epi32 (_mm_max_epi32 (_mm_srai_epi32 (b, 8), z), m255);
  return _mm_or_si128 (_mm_or_si128 (r, _mm_slli_epi32 (g, 8)),
      _mm_or_si128 (_mm_slli_epi32 (b, 16), _mm_set1_epi32 ((int) 0xff000000u)));
}

/* BGRA / RGBx / BGRx: 4 pixels a step (RGBA never comes here) */
T41 static uint32_t
row_rgb_sse (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out)
{
  const int f = img->format, rb = f == DXT_FMT_BGRA || f == DXT_FMT_BGRX;
  const __m128i shuf = rb ? _mm_setr_epi8 (2, 1, 0, 3, 6, 5, 4, 7, 10, 9, 8, 11, 14, 13, 12, 15)
      : _mm_setr_epi8 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m128i alpha = _mm_set1_epi32 (f == DXT_FMT_BGRA ? 0 : (int) 0xff000000u);
  const uint8_t *row = img->plane[0] + (size_t) y * img->stride[0] + 4 * (size_t) x;
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4, out += 64) {
    __m128i p = _mm_loadu_si128 ((const __m128i *) (row + 4 * i));
    _mm_storeu_si128 ((__m128i *) out, _mm_or_si128 (_mm_shuffle_epi8 (p, shuf), alpha));
  }
  return i;
}

T41 uint32_t
dxt_row_rgba_sse41 (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out)
{
  const int f = img->format;
  if (f == DXT_FMT_RGBA)
    return 0;
  if (f < DXT_FMT_UYVY)
    return row_rgb_sse (img, y, x, n, out);
  uint8_t mb[3][32];
  yuv_masks (f, mb);
  const __m128i my = _mm_loadu_si128 ((const __m128i *) mb[0]);
  const __m128i mu = _mm_loadu_si128 ((const __m128i *) mb[1]);
  const __m128i mv = _mm_loadu_si128 ((const __m128i *) mb[2]);
  const uint8_t *row = img->plane[0] + (size_t) y * img->stride[0];
  const uint8_t *c1 = f >= DXT_FMT_I420 ? img->plane[1] + (size_t) (y >> 1) * img->stride[1] : NULL;
  const uint8_t *c2 = f == DXT_FMT_I420 ? img->plane[2] + (size_t) (y >> 1) * img->stride[2] : NULL;
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4, out += 64) {
    const uint32_t px = x + i;   /* even: x is a multiple of 4 */
    __m128i sy, su, sv;
    if (f <= DXT_FMT_YUY2) {
      sy = su = sv = _mm_loadl_epi64 ((const __m128i *) (row + 2 * (size_t) px));
    } else if (f == DXT_FMT_I420) {
      sy = _mm_cvtsi32_si128 ((int) ld32 (row + px));
      su = _mm_cvtsi32_si128 (ld16 (c1 + px / 2));
      sv = _mm_cvtsi32_si128 (ld16 (c2 + px / 2));
    } else {
      sy = _mm_cvtsi32_si128 ((int) ld32 (row + px));
      su = sv = _mm_cvtsi32_si128 ((int) ld32 (c1 + px));
    }
    _mm_storeu_si128 ((__m128i *) out, yuv_rgba_sse (_mm_shuffle_epi8 (sy, my),
            _mm_shuffle_epi8 (su, mu), _mm_shuffle_epi8 (sv, mv)));
  }
  return i;
}

TAVX static inline __m256i
yuv_rgba_avx (__m256i y, __m256i u, __m256i v)
{
  const __m256i z = _mm256_setzero_si256 (), m255 = _mm256_set1_epi32 (255);
  __m256i c = _mm256_add_epi32 (_mm256_mullo_epi32 (_mm256_sub_epi32 (y, _mm256_set1_epi32 (16)),
          _mm256_set1_epi32 (298)), _mm256_set1_epi32 (128));
  __m256i d = _mm256_sub_epi32 (u, _mm256_set1_epi32 (128));
  __m256i e = _mm256_sub_epi32 (v, _mm256_set1_epi32 (128));
  __m256i r = _mm256_add_epi32 (c, _mm256_mullo_epi32 (e, _mm256_set1_epi32 (409)));
  __m256i g = _mm256_sub_epi32 (c, _mm256_add_epi32 (_mm256_mullo_epi32 (d, _mm256_set1_epi32 (100)),
          _mm256_mullo_epi32 (e, _mm256_set1_epi32 (208))));
  __m256i b = _mm256_add_epi32 (c, _mm256_mullo_epi32 (d, _mm256_set1_epi32 (516)));
  r = _mm256_min_epi32 (_mm256_max_epi32 (_mm256_srai_epi32 (r, 8), z), m255);
  g = _mm256_min_epi32 (_mm256_max_epi32 (_mm256_srai_epi32 (g, 8), z), m255);
  b = _mm256_min_epi32 (_mm256_max_epi32 (_mm256_srai_epi32 (b, 8), z), m255);
  return _mm256_or_si256 (_mm256_or_si256 (r, _mm256_slli_epi32 (g, 8)),
      _mm256_or_si256 (_mm256_slli_epi32 (b, 16), _mm256_set1_epi32 ((int) 0xff000000u)));
}

TAVX uint32_t
dxt_row_rgba_avx2 (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out)
{
  const int f = img->format;
  if (f < DXT_FMT_UYVY)
    return dxt_row_rgba_sse41 (img, y, x, n, out);
  uint8_t mb[3][32];
  yuv_masks (f, mb);
  const __m256i my = _mm256_loadu_si256 ((const __m256i *) mb[0]);
  const __m256i mu = _mm256_loadu_si256 ((const __m256i *) mb[1]);
  const __m256i mv = _mm256_loadu_si256 ((const __m256i *) mb[2]);
  const uint8_t *row = img->plane[0] + (size_t) y * img->stride[0];
  const uint8_t *c1 = f >= DXT_FMT_I420 ? img->plane[1] + (size_t) (y >> 1) * img->stride[1] : NULL;
  const uint8_t *c2 = f == DXT_FMT_I420 ? img->plane[2] + (size_t) (y >> 1) * img->stride[2] : NULL;
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8, out += 128) {
    const uint32_t px = x + i;
    __m128i sy, su, sv;
    if (f <= DXT_FMT_YUY2) {
      sy = su = sv = _mm_loadu_si128 ((const __m128i *) (row + 2 * (size_t) px));
    } else if (f == DXT_FMT_I420) {
      sy = _mm_loadl_epi64 ((const __m128i *) (row + px));
      su = _mm_cvtsi32_si128 ((int) ld32 (c1 + px / 2));
      sv = _mm_cvtsi32_si128 ((int) ld32 (c2 + px / 2));
    } else {
      sy = _mm_loadl_epi64 ((const __m128i *) (row + px));
      su = sv = _mm_loadl_epi64 ((const __m128i *) (c1 + px));
    }
    __m256i p = yuv_rgba_avx (_mm256_shuffle_epi8 (_mm256_broadcastsi128_si256 (sy), my),
        _mm256_shuffle_epi8 (_mm256_broadcastsi128_si256 (su), mu),
        _mm256_shuffle_epi8 (_mm256_broadcastsi128_si256 (sv), mv));
    /* pixels 0-3 are a row of one block, 4-7 of the next */
    _mm_storeu_si128 ((__m128i *) out, _mm256_castsi256_si128 (p));
    _mm_storeu_si128 ((__m128i *) (out + 64), _mm256_extracti128_si256 (p, 1));
  }
  return i + dxt_row_rgba_sse41 (img, y, x + i, n - i, out);
}

#else /* not x86: dxt.c never selects these */

DxtBc1Cand dxt_bc1_fast_sse41 (const uint8_t *px) { return dxt_bc1_fast (px); }
DxtBc1Cand dxt_bc1_fast_avx2 (const uint8_t *px) { return dxt_bc1_fast (px); }
DxtBc1Cand dxt_bc1_high_avx2 (const uint8_t *px, int lock_blue) { return dxt_bc1_high (px, lock_blue); }
uint32_t dxt_row_rgba_sse41 (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out) { return 0; }
uint32_t dxt_row_rgba_avx2 (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out) { return 0; }

#endif
