/* dxt_block.h: the per-block DXT math, written once (GS_HD) for the CPU
 * reference and the CUDA kernel (dxt_cuda.cu), so the CPU tests exercise the
 * exact lines the GPU runs.
 *
 * Determinism: everything is integer arithmetic (no float at all), so host
 * and device agree bit for bit whatever the compiler does with FMA
 * contraction or reassociation. Ties are broken by a fixed order (first
 * minimum in index order 0,1,2,3 / 0..7).
 *
 * A block is 16 pixels RGBA8, row-major: px[4*i + c]. */
#ifndef GS_DXT_BLOCK_H
#define GS_DXT_BLOCK_H

#include <stdint.h>
#include <string.h>
#include "common/gs_hd.h"
#include "dxt/dxt.h"

/* ---------------------------------------------------------------- basics */

GS_HD int dxt_clamp255 (int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }
/* Decoder rounding follows libavcodec's hap decoder (the reference players
 * use), pinned by probing it exhaustively (kernels/tests/test_dxt.c keeps
 * observed values): endpoints expand by an approximate v * 255 / max with
 * rounding, t = v * 255 + (max + 1) / 2, (t + t / (max + 1)) / (max + 1)
 * (not bit replication: 5-bit 3 -> 25, 20 -> 164), interpolated entries
 * truncate. The encoder measures its error through the same functions,
 * so it optimises what is decoded. */
GS_HD int dxt_exp5 (int v) { int t = v * 255 + 16; return (t + (t >> 5)) >> 5; }
GS_HD int dxt_exp6 (int v) { int t = v * 255 + 32; return (t + (t >> 6)) >> 6; }
/* palette entry 2/3 of the way to a, 1/3 to b (entries 2 and 3): truncated */
GS_HD int dxt_lerp3 (int a, int b) { return (2 * a + b) / 3; }

/* Nearest 5/6-bit value whose expansion is nearest to v (0..255, ties to
 * the lower value): closed forms checked against a search for all v. */
GS_HD int
dxt_q_bits (int v, int bits)
{
  return bits == 5 ? (v * 997 + 3639) >> 13 : (v * 253 + 395) >> 10;
}

GS_HD uint32_t
dxt_pack565 (const int c[3])
{
  return ((uint32_t) dxt_q_bits (c[0], 5) << 11) | ((uint32_t) dxt_q_bits (c[1], 6) << 5)
      | (uint32_t) dxt_q_bits (c[2], 5);
}

GS_HD void
dxt_unpack565 (uint32_t c, int rgb[3])
{
  rgb[0] = dxt_exp5 ((c >> 11) & 31);
  rgb[1] = dxt_exp6 ((c >> 5) & 63);
  rgb[2] = dxt_exp5 (c & 31);
}

/* 4-colour palette of colour words c0, c1 (any order). */
GS_HD void
dxt_bc1_palette4 (uint32_t c0, uint32_t c1, int pal[4][3])
{
  dxt_unpack565 (c0, pal[0]);
  dxt_unpack565 (c1, pal[1]);
  for (int c = 0; c < 3; c++) {
    pal[2][c] = dxt_lerp3 (pal[0][c], pal[1][c]);
    pal[3][c] = dxt_lerp3 (pal[1][c], pal[0][c]);
  }
}

/* Nearest palette entry per pixel (RGB squared distance): indices packed
 * 2 bits per pixel, pixel 0 in the low bits; *err = summed distance. */
GS_HD uint32_t
dxt_bc1_select (const uint8_t *px, const int pal[4][3], int *err)
{
  uint32_t idx = 0;
  int total = 0;
  for (int i = 0; i < 16; i++) {
    int best = 0, bd = 0;
    for (int k = 0; k < 4; k++) {
      int dr = px[4 * i] - pal[k][0], dg = px[4 * i + 1] - pal[k][1], db = px[4 * i + 2] - pal[k][2];
      int d = dr * dr + dg * dg + db * db;
      if (k == 0 || d < bd) { bd = d; best = k; }
    }
    idx |= (uint32_t) best << (2 * i);
    total += bd;
  }
  *err = total;
  return idx;
}

typedef struct {
  uint32_t c0, c1, idx;
  int err;
} DxtBc1Cand;

/* Evaluate endpoint words (c0 >= c1 after the swap, 4-colour mode) and keep
 * them in *best when they lower the error. Returns 1 when kept. */
GS_HD int
dxt_bc1_try (const uint8_t *px, uint32_t c0, uint32_t c1, DxtBc1Cand *best)
{
  if (c0 < c1) { uint32_t t = c0; c0 = c1; c1 = t; }
  int pal[4][3];
  dxt_bc1_palette4 (c0, c1, pal);
  int err;
  uint32_t idx = dxt_bc1_select (px, pal, &err);
  if (err < best->err) {
    best->c0 = c0; best->c1 = c1; best->idx = idx; best->err = err;
    return 1;
  }
  return 0;
}

/* Write the block. c0 >= c1 on entry; c0 == c1 cannot be 4-colour mode, so
 * move green by one step and point every pixel at the unchanged endpoint
 * (keeps red/blue bits: YCoCg stores its scale in blue). */
GS_HD void
dxt_bc1_emit (uint32_t c0, uint32_t c1, uint32_t idx, uint8_t *out)
{
  if (c0 == c1) {
    if (c0 & 0x7e0u) { c1 = c0 - 0x20u; idx = 0; }
    else { c0 = c1 + 0x20u; idx = 0x55555555u; }
  }
  out[0] = (uint8_t) c0; out[1] = (uint8_t) (c0 >> 8);
  out[2] = (uint8_t) c1; out[3] = (uint8_t) (c1 >> 8);
  out[4] = (uint8_t) idx; out[5] = (uint8_t) (idx >> 8);
  out[6] = (uint8_t) (idx >> 16); out[7] = (uint8_t) (idx >> 24);
}

/* Least-squares endpoints for fixed indices. Index k puts the pixel at
 * ((3-w) e0 + w e1) / 3 with w = {0,3,1,2}[k]; normal equations solved
 * exactly in integers (sums are small: |n| < 2^24). Returns 0 when all
 * pixels share one weight (singular). e0/e1 are 0..255 values. */
typedef struct {
  int saa, sab, sbb, sax[3], sbx[3];
} DxtLsqSums;

GS_HD void
dxt_bc1_lsq_sums (const uint8_t *px, uint32_t idx, DxtLsqSums *s)
{
  s->saa = s->sab = s->sbb = 0;
  for (int c = 0; c < 3; c++) s->sax[c] = s->sbx[c] = 0;
  for (int i = 0; i < 16; i++) {
    int k = (idx >> (2 * i)) & 3;
    int b = (0x2130 >> (4 * k)) & 15;   /* {0,3,1,2}[k] */
    int a = 3 - b;
    s->saa += a * a; s->sab += a * b; s->sbb += b * b;
    for (int c = 0; c < 3; c++) {
      s->sax[c] += a * px[4 * i + c];
      s->sbx[c] += b * px[4 * i + c];
    }
  }
}

GS_HD int
dxt_lsq_round (int n, int det)
{
  if (n <= 0)
    return 0;
  int v = (2 * n + det) / (2 * det);
  return v > 255 ? 255 : v;
}

GS_HD int
dxt_bc1_lsq_solve (const DxtLsqSums *s, int e0[3], int e1[3])
{
  int det = s->saa * s->sbb - s->sab * s->sab;
  if (det == 0)
    return 0;
  for (int c = 0; c < 3; c++) {
    e0[c] = dxt_lsq_round (3 * (s->sbb * s->sax[c] - s->sab * s->sbx[c]), det);
    e1[c] = dxt_lsq_round (3 * (s->saa * s->sbx[c] - s->sab * s->sax[c]), det);
  }
  return 1;
}

/* Per-channel endpoint pair whose 1/3 point reproduces v best (one
 * channel of a solid block): searched on the device, no tables, so device
 * code needs no constant memory; the host reads dxt_solid_tab. */
GS_HD void
dxt_solid_pair_search (int v, int bits, int *q0, int *q1)
{
  int maxq = (1 << bits) - 1;
  int bq0 = dxt_q_bits (v, bits), bq1 = bq0;
  int be = (bits == 5 ? dxt_exp5 (bq0) : dxt_exp6 (bq0)) - v;
  be = be < 0 ? -be : be;
  for (int a = 0; a <= maxq && be > 0; a++) {
    int ea = bits == 5 ? dxt_exp5 (a) : dxt_exp6 (a);
    int g = dxt_q_bits (dxt_clamp255 (3 * v - 2 * ea), bits);
    for (int d = -1; d <= 1; d++) {
      int b = g + d;
      if (b < 0 || b > maxq)
        continue;
      int eb = bits == 5 ? dxt_exp5 (b) : dxt_exp6 (b);
      int e = dxt_lerp3 (ea, eb) - v;
      e = e < 0 ? -e : e;
      if (e < be) { be = e; bq0 = a; bq1 = b; }
    }
  }
  *q0 = bq0; *q1 = bq1;
}

#ifndef __CUDA_ARCH__
/* Host: dxt_solid_pair_search's answer for every v, q0 | q1 << 8, [0] 5-bit,
 * [1] 6-bit (generated by it; elements-dxt checks every entry). The search,
 * up to ~400 steps a block, was ~75 % of the CPU time of a test-card
 * frame, nearly all solid blocks. */
static const uint16_t dxt_solid_tab[2][256] = {
  {
    0x0000, 0x0000, 0x0100, 0x0100, 0x0200, 0x0200, 0x0200, 0x0101,
    0x0101, 0x0101, 0x0201, 0x0400, 0x0400, 0x0500, 0x0500, 0x0202,
    0x0202, 0x0202, 0x0700, 0x0700, 0x0700, 0x0601, 0x0800, 0x0800,
    0x0900, 0x0303, 0x0303, 0x0a00, 0x0a00, 0x0b00, 0x0b00, 0x0b00,
    0x0a01, 0x0404, 0x0404, 0x0d00, 0x0703, 0x0e00, 0x0e00, 0x0e00,
    0x0b02, 0x0505, 0x0505, 0x0e01, 0x1000, 0x1000, 0x1100, 0x0307,
    0x0606, 0x0606, 0x0606, 0x0f02, 0x1300, 0x1300, 0x1400, 0x0e03,
    0x1500, 0x1500, 0x0707, 0x0707, 0x1600, 0x1600, 0x1302, 0x1700,
    0x1700, 0x1800, 0x0808, 0x0808, 0x1900, 0x1900, 0x1a00, 0x1a00,
    0x1a00, 0x1901, 0x0909, 0x0909, 0x1c00, 0x1603, 0x1d00, 0x1d00,
    0x1d00, 0x0a0a, 0x0a0a, 0x0a0a, 0x1d01, 0x1f00, 0x1f00, 0x1e01,
    0x1a03, 0x0b0b, 0x0b0b, 0x0b0b, 0x1e02, 0x1e02, 0x1e02, 0x1f02,
    0x1d03, 0x1d03, 0x1c04, 0x0c0c, 0x0c0c, 0x1f03, 0x1f03, 0x1e04,
    0x1e04, 0x1e04, 0x1d05, 0x0d0d, 0x0d0d, 0x1e05, 0x1a07, 0x1f05,
    0x1f05, 0x1f05, 0x140b, 0x0e0e, 0x0e0e, 0x1f06, 0x1d07, 0x1d07,
    0x1c08, 0x1e07, 0x0f0f, 0x0f0f, 0x0f0f, 0x180b, 0x1e08, 0x1e08,
    0x1d09, 0x1f08, 0x1f08, 0x1e09, 0x1010, 0x1010, 0x1f09, 0x1f09,
    0x1c0b, 0x1e0a, 0x1e0a, 0x1f0a, 0x1111, 0x1111, 0x1e0b, 0x1e0b,
    0x1f0b, 0x1f0b, 0x1f0b, 0x180f, 0x1212, 0x1212, 0x1d0d, 0x1f0c,
    0x1f0c, 0x1e0d, 0x1e0d, 0x1313, 0x1313, 0x1313, 0x1c0f, 0x1e0e,
    0x1e0e, 0x1f0e, 0x1b10, 0x1414, 0x1414, 0x1414, 0x0b19, 0x1f0f,
    0x1f0f, 0x1813, 0x1e10, 0x1e10, 0x1d11, 0x1515, 0x1515, 0x1e11,
    0x1e11, 0x1914, 0x1f11, 0x1f11, 0x1c13, 0x1616, 0x1616, 0x1f12,
    0x071e, 0x1e13, 0x1e13, 0x1e13, 0x1d14, 0x1717, 0x1717, 0x1e14,
    0x1c15, 0x1f14, 0x1f14, 0x1f14, 0x1818, 0x1818, 0x1818, 0x1918,
    0x1f15, 0x1f15, 0x1c17, 0x1e16, 0x1919, 0x1919, 0x1919, 0x1e17,
    0x1e17, 0x1e17, 0x1d18, 0x1f17, 0x1f17, 0x1e18, 0x1a1a, 0x1a1a,
    0x1f18, 0x1f18, 0x1e19, 0x1e19, 0x1e19, 0x1f19, 0x1b1b, 0x1b1b,
    0x1c1b, 0x1e1a, 0x1e1a, 0x1f1a, 0x1f1a, 0x1c1c, 0x1c1c, 0x1c1c,
    0x1d1c, 0x1f1b, 0x1f1b, 0x1e1c, 0x1a1e, 0x1d1d, 0x1d1d, 0x1d1d,
    0x1e1d, 0x1e1d, 0x1e1d, 0x1f1d, 0x1d1e, 0x1d1e, 0x1c1f, 0x1e1e,
    0x1e1e, 0x1f1e, 0x1f1e, 0x1e1f, 0x1e1f, 0x1e1f, 0x1f1f, 0x1f1f,
  },
  {
    0x0000, 0x0100, 0x0200, 0x0101, 0x0101, 0x0400, 0x0500, 0x0202,
    0x0202, 0x0700, 0x0800, 0x0303, 0x0303, 0x0a00, 0x0901, 0x0b00,
    0x0404, 0x0d00, 0x0a02, 0x0e00, 0x0505, 0x1000, 0x0904, 0x1100,
    0x0606, 0x1300, 0x0a05, 0x1400, 0x0707, 0x1600, 0x0907, 0x1700,
    0x0808, 0x1900, 0x0a08, 0x1a00, 0x0909, 0x1c00, 0x090a, 0x1d00,
    0x0a0a, 0x1f00, 0x090b, 0x2000, 0x2100, 0x0b0b, 0x2200, 0x2300,
    0x2400, 0x0c0c, 0x2500, 0x2600, 0x2700, 0x0d0d, 0x2800, 0x2900,
    0x2a00, 0x0e0e, 0x2b00, 0x2c00, 0x2d00, 0x0f0f, 0x2e00, 0x2f00,
    0x3000, 0x1010, 0x3100, 0x3200, 0x3300, 0x1111, 0x3400, 0x3500,
    0x3401, 0x1212, 0x3700, 0x3800, 0x3502, 0x1313, 0x3a00, 0x3b00,
    0x3404, 0x1414, 0x3d00, 0x3e00, 0x3505, 0x1515, 0x3e01, 0x3f01,
    0x3407, 0x1616, 0x3f02, 0x3e03, 0x3508, 0x1717, 0x3e04, 0x3f04,
    0x340a, 0x1818, 0x3f05, 0x3e06, 0x340b, 0x1919, 0x3e07, 0x3f07,
    0x370b, 0x1a1a, 0x3f08, 0x3e09, 0x3a0b, 0x1b1b, 0x3e0a, 0x3f0a,
    0x3d0b, 0x1c1c, 0x3510, 0x3f0b, 0x3e0c, 0x1d1d, 0x3412, 0x3e0d,
    0x3f0d, 0x1e1e, 0x3513, 0x3f0e, 0x3e0f, 0x1f1f, 0x3415, 0x3e10,
    0x3f10, 0x3e11, 0x2020, 0x3f11, 0x3e12, 0x3f12, 0x2121, 0x3e13,
    0x3f13, 0x3e14, 0x2222, 0x3f14, 0x3e15, 0x3f15, 0x2323, 0x3e16,
    0x3f16, 0x3e17, 0x2424, 0x3f17, 0x3e18, 0x3f18, 0x2525, 0x3e19,
    0x3f19, 0x3e1a, 0x2626, 0x3f1a, 0x3e1b, 0x3f1b, 0x2727, 0x3e1c,
    0x3f1c, 0x3e1d, 0x2828, 0x3f1d, 0x3e1e, 0x3f1e, 0x2929, 0x3e1f,
    0x3f1f, 0x3d20, 0x2a2a, 0x3f20, 0x3426, 0x3e21, 0x2b2b, 0x3e22,
    0x3527, 0x3f22, 0x2c2c, 0x3f23, 0x3429, 0x3e24, 0x2d2d, 0x3e25,
    0x352a, 0x3f25, 0x2e2e, 0x3f26, 0x342c, 0x3e27, 0x2f2f, 0x3e28,
    0x352d, 0x3f28, 0x3030, 0x3f29, 0x342f, 0x3e2a, 0x3131, 0x3e2b,
    0x3530, 0x3f2b, 0x3232, 0x3f2c, 0x3432, 0x3e2d, 0x3333, 0x3e2e,
    0x3533, 0x3f2e, 0x3434, 0x3f2f, 0x3435, 0x3e30, 0x3535, 0x3e31,
    0x3436, 0x3f31, 0x3e32, 0x3636, 0x3736, 0x3e33, 0x3f33, 0x3737,
    0x3a36, 0x3f34, 0x3e35, 0x3838, 0x3d36, 0x3e36, 0x353b, 0x3939,
    0x3e37, 0x3f37, 0x343d, 0x3a3a, 0x3f38, 0x3e39, 0x353e, 0x3b3b,
    0x3e3a, 0x3f3a, 0x3c3c, 0x3c3c, 0x3f3b, 0x3e3c, 0x3d3d, 0x3d3d,
    0x3e3d, 0x3f3d, 0x3e3e, 0x3e3e, 0x3f3e, 0x3e3f, 0x3f3f, 0x3f3f,
  },
};
#endif

GS_HD void
dxt_solid_pair (int v, int bits, int *q0, int *q1)
{
#ifdef __CUDA_ARCH__
  dxt_solid_pair_search (v, bits, q0, q1);
#else
  const uint16_t t = dxt_solid_tab[bits == 6][v];
  *q0 = t & 0xff;
  *q1 = t >> 8;
#endif
}

GS_HD void
dxt_bc1_solid (const uint8_t *px, DxtBc1Cand *best)
{
  int q0[3], q1[3];
  dxt_solid_pair (px[0], 5, &q0[0], &q1[0]);
  dxt_solid_pair (px[1], 6, &q0[1], &q1[1]);
  dxt_solid_pair (px[2], 5, &q0[2], &q1[2]);
  uint32_t c0 = ((uint32_t) q0[0] << 11) | ((uint32_t) q0[1] << 5) | (uint32_t) q0[2];
  uint32_t c1 = ((uint32_t) q1[0] << 11) | ((uint32_t) q1[1] << 5) | (uint32_t) q1[2];
  /* dxt_bc1_try with its 16 equal pixels done once */
  if (c0 < c1) { uint32_t t = c0; c0 = c1; c1 = t; }
  int pal[4][3];
  dxt_bc1_palette4 (c0, c1, pal);
  int bk = 0, bd = 0;
  for (int k = 0; k < 4; k++) {
    int dr = px[0] - pal[k][0], dg = px[1] - pal[k][1], db = px[2] - pal[k][2];
    int d = dr * dr + dg * dg + db * db;
    if (k == 0 || d < bd) { bd = d; bk = k; }
  }
  if (16 * bd < best->err) {
    best->c0 = c0; best->c1 = c1; best->idx = (uint32_t) bk * 0x55555555u; best->err = 16 * bd;
  }
}

/* Channel bounds of the block: mn/mx[3]. */
GS_HD void
dxt_bc1_bounds (const uint8_t *px, int mn[3], int mx[3])
{
  for (int c = 0; c < 3; c++) { mn[c] = 255; mx[c] = 0; }
  for (int i = 0; i < 16; i++)
    for (int c = 0; c < 3; c++) {
      int v = px[4 * i + c];
      mn[c] = v < mn[c] ? v : mn[c];
      mx[c] = v > mx[c] ? v : mx[c];
    }
}

/* Sums of (x - centre) products used to pick the box diagonal: cov[0] =
 * (r,g), cov[1] = (b,g), cov[2] = (r,b). Centre is 2*(min+max)/2, the
 * products use doubled coordinates so the centre is an integer. */
GS_HD void
dxt_bc1_diag_cov (const uint8_t *px, const int mn[3], const int mx[3], int cov[3])
{
  cov[0] = cov[1] = cov[2] = 0;
  for (int i = 0; i < 16; i++) {
    int r = 2 * px[4 * i] - mn[0] - mx[0];
    int g = 2 * px[4 * i + 1] - mn[1] - mx[1];
    int b = 2 * px[4 * i + 2] - mn[2] - mx[2];
    cov[0] += r * g; cov[1] += b * g; cov[2] += r * b;
  }
}

/* Box diagonal + inset (van Waveren): endpoints e0 (high end), e1. */
GS_HD void
dxt_bc1_box_endpoints (const int mn[3], const int mx[3], const int cov[3],
                       int e0[3], int e1[3])
{
  for (int c = 0; c < 3; c++) {
    int inset = (mx[c] - mn[c]) >> 4;
    e0[c] = mx[c] - inset;
    e1[c] = mn[c] + inset;
  }
  /* green is the reference axis; with flat green decide blue against red */
  int flip_r = cov[0] < 0, flip_b = cov[1] < 0;
  if (mx[1] == mn[1]) { flip_r = 0; flip_b = cov[2] < 0; }
  if (flip_r) { int t = e0[0]; e0[0] = e1[0]; e1[0] = t; }
  if (flip_b) { int t = e0[2]; e0[2] = e1[2]; e1[2] = t; }
}

GS_HD int
dxt_is_solid (const int mn[3], const int mx[3])
{
  return mn[0] == mx[0] && mn[1] == mx[1] && mn[2] == mx[2];
}

/* ------------------------------------------------------------ BC1 colour */

/* fast: the box diagonal with inset and one least-squares step (van
 * Waveren), then two candidates the diagonal misses, each kept only when it
 * lowers the error:
 * - a near-flat block (every channel within DXT_FLAT_RANGE levels: smooth
 *   gradients) gets the pair whose 1/3 point is the block's mean, as a solid
 *   block does; the box corners quantised to 565 land up to 4 levels off;
 * - where the fit is still poor (DXT_AXIS_ERR), the pixels at the ends of
 *   the principal axis, plus one least-squares step from their own indices
 *   (stb_dxt's normal mode: the diagonal only knows the sign of each
 *   channel's correlation with green, which picks the wrong axis on noise
 *   and sharp multi-colour edges).
 * The SIMD versions (dxt_simd.c) run the same steps with vector sums and
 * errors through the helpers below, so their blocks are these. */
#define DXT_FLAT_RANGE 8
/* the principal axis is tried only when the diagonal's fit is off by more
 * than 8 levels RMS (16 pixels x 3 channels x 8^2): on smooth content the
 * diagonal is the axis, and the axis costs twice the rest of the block */
#define DXT_AXIS_ERR (16 * 3 * 8 * 8)

GS_HD int
dxt_bc1_near_flat (const int mn[3], const int mx[3])
{
  return mx[0] - mn[0] <= DXT_FLAT_RANGE && mx[1] - mn[1] <= DXT_FLAT_RANGE &&
      mx[2] - mn[2] <= DXT_FLAT_RANGE;
}

/* sum: the channel sums of the 16 pixels */
GS_HD void
dxt_bc1_mean_pair (const int sum[3], uint32_t *c0, uint32_t *c1)
{
  int q0[3], q1[3];
  for (int c = 0; c < 3; c++)
    dxt_solid_pair ((sum[c] + 8) >> 4, c == 1 ? 6 : 5, &q0[c], &q1[c]);
  *c0 = ((uint32_t) q0[0] << 11) | ((uint32_t) q0[1] << 5) | (uint32_t) q0[2];
  *c1 = ((uint32_t) q1[0] << 11) | ((uint32_t) q1[1] << 5) | (uint32_t) q1[2];
}

GS_HD int dxt_principal_axis_sums (const int sum[3], const int sxy[6], int axis[3]);

/* The block's pixels with the lowest and highest projection on axis (the
 * first of equals), as endpoint words. */
GS_HD void
dxt_bc1_axis_ends (const uint8_t *px, const int axis[3], uint32_t *c0, uint32_t *c1)
{
  int lo = 0, hi = 0, plo = 0x7fffffff, phi = -0x7fffffff, e0[3], e1[3];
  for (int i = 0; i < 16; i++) {
    int p = px[4 * i] * axis[0] + px[4 * i + 1] * axis[1] + px[4 * i + 2] * axis[2];
    if (p < plo) { plo = p; lo = i; }
    if (p > phi) { phi = p; hi = i; }
  }
  for (int c = 0; c < 3; c++) { e0[c] = px[4 * hi + c]; e1[c] = px[4 * lo + c]; }
  *c0 = dxt_pack565 (e0);
  *c1 = dxt_pack565 (e1);
}

/* sum[3]: channel sums; sxy[6]: sums of rr, rg, rb, gg, gb, bb */
GS_HD void
dxt_block_sums (const uint8_t *px, int sum[3], int sxy[6])
{
  for (int c = 0; c < 3; c++) sum[c] = 0;
  for (int c = 0; c < 6; c++) sxy[c] = 0;
  for (int i = 0; i < 16; i++) {
    int r = px[4 * i], g = px[4 * i + 1], b = px[4 * i + 2];
    sum[0] += r; sum[1] += g; sum[2] += b;
    sxy[0] += r * r; sxy[1] += r * g; sxy[2] += r * b;
    sxy[3] += g * g; sxy[4] += g * b; sxy[5] += b * b;
  }
}

GS_HD DxtBc1Cand
dxt_bc1_fast (const uint8_t *px)
{
  DxtBc1Cand best;
  best.c0 = best.c1 = best.idx = 0;
  best.err = 0x7fffffff;
  int mn[3], mx[3], cov[3], e0[3], e1[3], sum[3], sxy[6], axis[3];
  uint32_t c0, c1;
  dxt_bc1_bounds (px, mn, mx);
  if (dxt_is_solid (mn, mx)) {
    dxt_bc1_solid (px, &best);
    return best;
  }
  dxt_bc1_diag_cov (px, mn, mx, cov);
  dxt_bc1_box_endpoints (mn, mx, cov, e0, e1);
  dxt_bc1_try (px, dxt_pack565 (e0), dxt_pack565 (e1), &best);
  DxtLsqSums s;
  dxt_bc1_lsq_sums (px, best.idx, &s);
  if (dxt_bc1_lsq_solve (&s, e0, e1))
    dxt_bc1_try (px, dxt_pack565 (e0), dxt_pack565 (e1), &best);
  int flat = dxt_bc1_near_flat (mn, mx);
  if (!flat && best.err <= DXT_AXIS_ERR)
    return best;
  dxt_block_sums (px, sum, sxy);
  if (flat) {
    dxt_bc1_mean_pair (sum, &c0, &c1);
    dxt_bc1_try (px, c0, c1, &best);
  }
  if (best.err > DXT_AXIS_ERR && dxt_principal_axis_sums (sum, sxy, axis)) {
    DxtBc1Cand pca;
    pca.err = 0x7fffffff;
    dxt_bc1_axis_ends (px, axis, &c0, &c1);
    dxt_bc1_try (px, c0, c1, &pca);
    if (pca.err < best.err)
      best = pca;
    dxt_bc1_lsq_sums (px, pca.idx, &s);
    if (dxt_bc1_lsq_solve (&s, e0, e1))
      dxt_bc1_try (px, dxt_pack565 (e0), dxt_pack565 (e1), &best);
  }
  return best;
}

/* The shift that brings a non-negative v under 2^10: its bit length less
 * 10, by halving the range (a loop one bit at a time ran ~40 times per
 * step, most of the axis' cost). */
GS_HD int
dxt_shift_to_10_bits (int64_t v)
{
  int n = 0;
  if (v >> 32) { v >>= 32; n += 32; }
  if (v >> 16) { v >>= 16; n += 16; }
  if (v >> 8) { v >>= 8; n += 8; }
  if (v >> 4) { v >>= 4; n += 4; }
  if (v >> 2) { v >>= 2; n += 2; }
  if (v >> 1) { v >>= 1; n += 1; }
  n += (int) v;
  return n > 10 ? n - 10 : 0;
}

/* Principal axis of the block's colours: covariance, then integer power
 * iteration with renormalisation by shifts (keeps |v| < 2^10). From the
 * block's sums (dxt_block_sums). */
GS_HD int
dxt_principal_axis_sums (const int sum[3], const int sxy[6], int axis[3])
{
  /* 16 * covariance, exact: 16 * sum(x y) - sum(x) sum(y) */
  int64_t m[3][3];
  m[0][0] = 16 * (int64_t) sxy[0] - (int64_t) sum[0] * sum[0];
  m[0][1] = m[1][0] = 16 * (int64_t) sxy[1] - (int64_t) sum[0] * sum[1];
  m[0][2] = m[2][0] = 16 * (int64_t) sxy[2] - (int64_t) sum[0] * sum[2];
  m[1][1] = 16 * (int64_t) sxy[3] - (int64_t) sum[1] * sum[1];
  m[1][2] = m[2][1] = 16 * (int64_t) sxy[4] - (int64_t) sum[1] * sum[2];
  m[2][2] = 16 * (int64_t) sxy[5] - (int64_t) sum[2] * sum[2];
  /* start from the row of the largest variance: never orthogonal to the
   * principal axis unless the matrix is degenerate */
  int r0 = 0;
  if (m[1][1] > m[r0][r0]) r0 = 1;
  if (m[2][2] > m[r0][r0]) r0 = 2;
  if (m[r0][r0] == 0)
    return 0;
  int64_t v[3] = { m[r0][0], m[r0][1], m[r0][2] };
  for (int it = 0; it < 6; it++) {
    int64_t mx = 0;
    for (int c = 0; c < 3; c++) {
      int64_t a = v[c] < 0 ? -v[c] : v[c];
      mx = a > mx ? a : mx;
    }
    if (mx == 0)
      return 0;
    int sh = dxt_shift_to_10_bits (mx);
    int64_t w[3];
    for (int c = 0; c < 3; c++) w[c] = v[c] >> sh;   /* |w| < 2^10, |m| < 2^21 */
    for (int c = 0; c < 3; c++)
      v[c] = m[c][0] * w[0] + m[c][1] * w[1] + m[c][2] * w[2];
  }
  int64_t mx = 0;
  for (int c = 0; c < 3; c++) {
    int64_t a = v[c] < 0 ? -v[c] : v[c];
    mx = a > mx ? a : mx;
  }
  if (mx == 0)
    return 0;
  int sh = dxt_shift_to_10_bits (mx);
  for (int c = 0; c < 3; c++) axis[c] = (int) (v[c] >> sh);
  return 1;
}

GS_HD int
dxt_principal_axis (const uint8_t *px, int axis[3])
{
  int sum[3], sxy[6];
  dxt_block_sums (px, sum, sxy);
  return dxt_principal_axis_sums (sum, sxy, axis);
}

/* high: principal-axis extremes and the fast candidate, iterated least
 * squares, then a greedy +-1 walk over the six 565 endpoint fields (the
 * error is measured after quantisation, which least squares cannot see).
 * lock_blue keeps the blue fields (YCoCg stores its scale there). */
GS_HD DxtBc1Cand
dxt_bc1_high (const uint8_t *px, int lock_blue)
{
  DxtBc1Cand best;
  best.c0 = best.c1 = best.idx = 0;
  best.err = 0x7fffffff;
  int mn[3], mx[3], cov[3], e0[3], e1[3];
  dxt_bc1_bounds (px, mn, mx);
  if (dxt_is_solid (mn, mx)) {
    dxt_bc1_solid (px, &best);
    return best;
  }
  dxt_bc1_diag_cov (px, mn, mx, cov);
  dxt_bc1_box_endpoints (mn, mx, cov, e0, e1);
  dxt_bc1_try (px, dxt_pack565 (e0), dxt_pack565 (e1), &best);
  int axis[3];
  if (dxt_principal_axis (px, axis)) {
    int lo = 0, hi = 0, plo = 0x7fffffff, phi = -0x7fffffff;
    for (int i = 0; i < 16; i++) {
      int p = px[4 * i] * axis[0] + px[4 * i + 1] * axis[1] + px[4 * i + 2] * axis[2];
      if (p < plo) { plo = p; lo = i; }
      if (p > phi) { phi = p; hi = i; }
    }
    for (int c = 0; c < 3; c++) { e0[c] = px[4 * hi + c]; e1[c] = px[4 * lo + c]; }
    dxt_bc1_try (px, dxt_pack565 (e0), dxt_pack565 (e1), &best);
  }
  for (int it = 0; it < 3; it++) {
    DxtLsqSums s;
    dxt_bc1_lsq_sums (px, best.idx, &s);
    if (!dxt_bc1_lsq_solve (&s, e0, e1))
      break;
    uint32_t a = dxt_pack565 (e0), b = dxt_pack565 (e1);
    if (!dxt_bc1_try (px, a, b, &best))
      break;
  }
  /* fields: shift and maximum of r, g, b in a 565 word */
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
        improved |= dxt_bc1_try (px, w[0], w[1], &best);
      }
    }
    if (!improved)
      break;
  }
  return best;
}

GS_HD void
dxt_bc1_encode_block (const uint8_t *px, int quality, uint8_t *out)
{
  DxtBc1Cand b = quality == DXT_HIGH ? dxt_bc1_high (px, 0) : dxt_bc1_fast (px);
  dxt_bc1_emit (b.c0, b.c1, b.idx, out);
}

/* ----------------------------------------------------------- alpha block */

/* Palette of an alpha block: a0 > a1: 8 values, else 6 values + 0, 255.
 * Interpolated entries truncate, as libavcodec's decoder does. */
GS_HD void
dxt_alpha_palette (int a0, int a1, int pal[8])
{
  pal[0] = a0; pal[1] = a1;
  if (a0 > a1) {
    for (int k = 1; k < 7; k++) pal[k + 1] = ((7 - k) * a0 + k * a1) / 7;
  } else {
    for (int k = 1; k < 5; k++) pal[k + 1] = ((5 - k) * a0 + k * a1) / 5;
    pal[6] = 0; pal[7] = 255;
  }
}

typedef struct {
  int a0, a1, err;
  uint64_t idx;
} DxtAlphaCand;

/* a: 16 values with stride 4 (the alpha channel of a block). */
GS_HD int
dxt_alpha_try (const uint8_t *a, int a0, int a1, DxtAlphaCand *best)
{
  int pal[8];
  dxt_alpha_palette (a0, a1, pal);
  uint64_t idx = 0;
  int total = 0;
  for (int i = 0; i < 16; i++) {
    int bk = 0, bd = 0;
    for (int k = 0; k < 8; k++) {
      int d = a[4 * i] - pal[k];
      d = d * d;
      if (k == 0 || d < bd) { bd = d; bk = k; }
    }
    idx |= (uint64_t) bk << (3 * i);
    total += bd;
  }
  if (total < best->err) {
    best->a0 = a0; best->a1 = a1; best->idx = idx; best->err = total;
    return 1;
  }
  return 0;
}

GS_HD void
dxt_alpha_encode_block (const uint8_t *a, int quality, uint8_t *out)
{
  DxtAlphaCand best;
  best.a0 = best.a1 = 0; best.idx = 0; best.err = 0x7fffffff;
  int mn = 255, mx = 0;
  for (int i = 0; i < 16; i++) {
    int v = a[4 * i];
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  if (mn == mx) {
    best.a0 = best.a1 = mn;   /* index 0 everywhere reproduces it */
  } else {
    dxt_alpha_try (a, mx, mn, &best);
    if (quality == DXT_HIGH) {
      /* least squares in 8-value mode: index k at weight w/7 of a1,
       * w = {0,7,1,2,3,4,5,6}[k] */
      int saa = 0, sab = 0, sbb = 0, sax = 0, sbx = 0;
      for (int i = 0; i < 16; i++) {
        int k = (int) ((best.idx >> (3 * i)) & 7);
        int b = k == 0 ? 0 : (k == 1 ? 7 : k - 1);
        int aw = 7 - b, x = a[4 * i];
        saa += aw * aw; sab += aw * b; sbb += b * b; sax += aw * x; sbx += b * x;
      }
      int det = saa * sbb - sab * sab;
      if (det != 0) {
        int h = dxt_lsq_round (7 * (sbb * sax - sab * sbx), det);
        int l = dxt_lsq_round (7 * (saa * sbx - sab * sax), det);
        if (h > l)
          dxt_alpha_try (a, h, l, &best);
      }
      /* 6-value mode with explicit 0 and 255: wins when both extremes
       * and a cluster in between are present */
      int imn = 255, imx = 0;
      for (int i = 0; i < 16; i++) {
        int v = a[4 * i];
        if (v != 0 && v != 255) {
          imn = v < imn ? v : imn;
          imx = v > imx ? v : imx;
        }
      }
      if (imn <= imx)
        dxt_alpha_try (a, imn, imx, &best);
    }
  }
  out[0] = (uint8_t) best.a0; out[1] = (uint8_t) best.a1;
  for (int j = 0; j < 6; j++) out[2 + j] = (uint8_t) (best.idx >> (8 * j));
}

/* ------------------------------------------------------------ YCoCg-DXT5 */

/* RGB -> (Co, Cg, scale-in-blue, Y) in place of a block, as in the YCoCg-DXT
 * paper: Co = (R-B)/2 + 128, Cg = (2G-R-B)/4 + 128, Y = (R+2G+B)/4, then Co
 * and Cg scaled about 128 by s = 4, 2 or 1 when the block's chroma fits, to
 * use more of the 5/6 endpoint bits. Blue holds exp5(s - 1) so any
 * quantisation of the constant channel keeps it. */
GS_HD void
dxt_ycocg_convert (const uint8_t *px, uint8_t *out)
{
  int co[16], cg[16], m = 0;
  for (int i = 0; i < 16; i++) {
    int r = px[4 * i], g = px[4 * i + 1], b = px[4 * i + 2];
    int y = (r + 2 * g + b + 2) >> 2;
    co[i] = ((2 * r - 2 * b + 2) >> 2);          /* -127..128 */
    cg[i] = ((-r + 2 * g - b + 2) >> 2);         /* -127..128 */
    int ac = co[i] < 0 ? -co[i] : co[i], ag = cg[i] < 0 ? -cg[i] : cg[i];
    m = ac > m ? ac : m;
    m = ag > m ? ag : m;
    out[4 * i + 3] = (uint8_t) y;
  }
  int s = m <= 31 ? 4 : (m <= 63 ? 2 : 1);
  for (int i = 0; i < 16; i++) {
    out[4 * i] = (uint8_t) dxt_clamp255 (co[i] * s + 128);
    out[4 * i + 1] = (uint8_t) dxt_clamp255 (cg[i] * s + 128);
    out[4 * i + 2] = (uint8_t) dxt_exp5 (s - 1);
  }
}

/* Decoded YCoCg block colour (R8 = Co', G8 = Cg', B8 = blue, A8 = Y) -> RGB,
 * as libavcodec decodes HapY: s = (B8 >> 3) + 1 (so blue field 2 means 3,
 * which our encoder never writes), Co and Cg each divided by s truncating
 * toward zero (C division, same on host and device), then clamped. */
GS_HD void
dxt_ycocg_to_rgb (int co8, int cg8, int b8, int y, uint8_t *rgb)
{
  int s = (b8 >> 3) + 1;
  int co = (co8 - 128) / s, cg = (cg8 - 128) / s;
  rgb[0] = (uint8_t) dxt_clamp255 (y + co - cg);
  rgb[1] = (uint8_t) dxt_clamp255 (y + cg);
  rgb[2] = (uint8_t) dxt_clamp255 (y - co - cg);
}

/* ---------------------------------------------------------- whole blocks */

GS_HD void
dxt_encode_block_hd (int codec, int quality, const uint8_t *px, uint8_t *out)
{
  if (codec == DXT_BC1) {
    dxt_bc1_encode_block (px, quality, out);
  } else if (codec == DXT_BC3) {
    dxt_alpha_encode_block (px + 3, quality, out);
    dxt_bc1_encode_block (px, quality, out + 8);
  } else {
    uint8_t y[64];
    dxt_ycocg_convert (px, y);
    dxt_alpha_encode_block (y + 3, quality, out);
    DxtBc1Cand b = quality == DXT_HIGH ? dxt_bc1_high (y, 1) : dxt_bc1_fast (y);
    dxt_bc1_emit (b.c0, b.c1, b.idx, out + 8);
  }
}

/* Colour block decode; four_colour forces the 4-colour palette (BC3). */
GS_HD void
dxt_bc1_decode_block (const uint8_t *in, int four_colour, uint8_t *px)
{
  uint32_t c0 = in[0] | (uint32_t) in[1] << 8, c1 = in[2] | (uint32_t) in[3] << 8;
  uint32_t idx = in[4] | (uint32_t) in[5] << 8 | (uint32_t) in[6] << 16 | (uint32_t) in[7] << 24;
  int pal[4][3], alpha3 = 255;
  if (four_colour || c0 > c1) {
    dxt_bc1_palette4 (c0, c1, pal);
  } else {
    dxt_unpack565 (c0, pal[0]);
    dxt_unpack565 (c1, pal[1]);
    for (int c = 0; c < 3; c++) {
      pal[2][c] = (pal[0][c] + pal[1][c]) / 2;   /* truncated, as libavcodec */
      pal[3][c] = 0;
    }
    alpha3 = 0;
  }
  for (int i = 0; i < 16; i++) {
    int k = (idx >> (2 * i)) & 3;
    px[4 * i] = (uint8_t) pal[k][0];
    px[4 * i + 1] = (uint8_t) pal[k][1];
    px[4 * i + 2] = (uint8_t) pal[k][2];
    px[4 * i + 3] = (uint8_t) (k == 3 ? alpha3 : 255);
  }
}

/* Alpha block decode into the alpha channel (stride 4). */
GS_HD void
dxt_alpha_decode_block (const uint8_t *in, uint8_t *a)
{
  int pal[8];
  dxt_alpha_palette (in[0], in[1], pal);
  uint64_t idx = 0;
  for (int j = 0; j < 6; j++) idx |= (uint64_t) in[2 + j] << (8 * j);
  for (int i = 0; i < 16; i++) a[4 * i] = (uint8_t) pal[(idx >> (3 * i)) & 7];
}

GS_HD void
dxt_decode_block_hd (int codec, const uint8_t *in, uint8_t *px)
{
  if (codec == DXT_BC1) {
    dxt_bc1_decode_block (in, 0, px);
    return;
  }
  dxt_bc1_decode_block (in + 8, 1, px);
  dxt_alpha_decode_block (in, px + 3);
  if (codec == DXT_YCOCG) {
    for (int i = 0; i < 16; i++) {
      uint8_t *p = px + 4 * i;
      dxt_ycocg_to_rgb (p[0], p[1], p[2], p[3], p);
      p[3] = 255;
    }
  }
}

/* ----------------------------------------------------------- block loads */

/* BT.601 limited range -> RGB, integer (see dxt.h). */
GS_HD void
dxt_yuv_to_rgb (int y, int u, int v, uint8_t *p)
{
  int c = 298 * (y - 16) + 128, d = u - 128, e = v - 128;
  p[0] = (uint8_t) dxt_clamp255 ((c + 409 * e) >> 8);
  p[1] = (uint8_t) dxt_clamp255 ((c - 100 * d - 208 * e) >> 8);
  p[2] = (uint8_t) dxt_clamp255 ((c + 516 * d) >> 8);
  p[3] = 255;
}

/* Load block (bx, by) of img as RGBA with edge replication. */
GS_HD void
dxt_load_block (const DxtImage *img, uint32_t bx, uint32_t by, uint8_t *px)
{
  if (img->format == DXT_FMT_RGBA && bx * 4 + 4 <= img->width && by * 4 + 4 <= img->height) {
    /* interior RGBA block: four 16-byte row copies */
    for (int j = 0; j < 4; j++)
      memcpy (px + 16 * j, img->plane[0] + (size_t) (by * 4 + j) * img->stride[0] + 16 * (size_t) bx, 16);
    return;
  }
  uint32_t xs[4], ys[4];
  for (int k = 0; k < 4; k++) {
    uint32_t x = bx * 4 + k, y = by * 4 + k;
    xs[k] = x < img->width ? x : img->width - 1;
    ys[k] = y < img->height ? y : img->height - 1;
  }
  const int f = img->format;
  for (int j = 0; j < 4; j++) {
    const uint8_t *row = img->plane[0] + (size_t) ys[j] * img->stride[0];
    uint8_t *o = px + 16 * j;
    if (f <= DXT_FMT_BGRX) {
      /* channel offsets: swap R/B for BGR*, alpha forced for *X */
      const int rb = (f == DXT_FMT_BGRA || f == DXT_FMT_BGRX) ? 2 : 0;
      const int ax = (f == DXT_FMT_RGBX || f == DXT_FMT_BGRX);
      for (int k = 0; k < 4; k++) {
        const uint8_t *p = row + 4 * (size_t) xs[k];
        o[4 * k] = p[rb]; o[4 * k + 1] = p[1]; o[4 * k + 2] = p[2 - rb];
        o[4 * k + 3] = ax ? 255 : p[3];
      }
    } else if (f == DXT_FMT_UYVY || f == DXT_FMT_YUY2) {
      const int yo = f == DXT_FMT_UYVY ? 1 : 0, uo = f == DXT_FMT_UYVY ? 0 : 1;
      for (int k = 0; k < 4; k++) {
        const uint8_t *p = row + 2 * (size_t) (xs[k] & ~1u);
        dxt_yuv_to_rgb (p[yo + 2 * (xs[k] & 1)], p[uo], p[uo + 2], o + 4 * k);
      }
    } else {
      const uint8_t *c1 = img->plane[1] + (size_t) (ys[j] >> 1) * img->stride[1];
      const uint8_t *c2 = f == DXT_FMT_I420 ? img->plane[2] + (size_t) (ys[j] >> 1) * img->stride[2] : 0;
      for (int k = 0; k < 4; k++) {
        uint32_t cx = xs[k] >> 1;
        int u = f == DXT_FMT_I420 ? c1[cx] : c1[2 * cx];
        int v = f == DXT_FMT_I420 ? c2[cx] : c1[2 * cx + 1];
        dxt_yuv_to_rgb (row[xs[k]], u, v, o + 4 * k);
      }
    }
  }
}

#endif /* GS_DXT_BLOCK_H */
