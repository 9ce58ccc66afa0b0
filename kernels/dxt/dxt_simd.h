/* dxt_simd.h (internal): SIMD versions of dxt_bc1_fast and (AVX2)
 * dxt_bc1_high (dxt_block.h). They
 * run the same integer steps on vectors and must return the same candidate
 * (endpoints, indices, error) as the scalar function for every block. */
#ifndef GS_DXT_SIMD_H
#define GS_DXT_SIMD_H

#include "dxt/dxt_block.h"

DxtBc1Cand dxt_bc1_fast_sse41 (const uint8_t *px);
DxtBc1Cand dxt_bc1_fast_avx2 (const uint8_t *px);
DxtBc1Cand dxt_bc1_high_avx2 (const uint8_t *px, int lock_blue);

/* Pixels [x, x + n) of image row y (x a multiple of 4, all inside the
 * image) as RGBA in block order: pixel x + i at out + (i / 4) * 64 +
 * (i % 4) * 4, the bytes dxt_load_block gives. They do a prefix of the run
 * (whole steps; none for RGBA) and return its length, a multiple of 4. */
uint32_t dxt_row_rgba_sse41 (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out);
uint32_t dxt_row_rgba_avx2 (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out);

#endif
