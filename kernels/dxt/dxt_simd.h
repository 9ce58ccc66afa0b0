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

#endif
