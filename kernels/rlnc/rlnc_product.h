/* rlnc_product.h: the per-thread step of the GPU product kernel
 * (rlnc_cuda.cu), GS_HD so that the CPU test runs it for every word of an
 * output and compares with rlnc_encode_ref.
 *
 * One thread owns one 16-byte column word w of RLNC_PRODUCT_ROWS consecutive
 * output rows (a row tile). For each source row i it loads 16 bytes once,
 * computes their powers x*2^b (gf256_powers4), then folds them into each
 * row's accumulator with 8 AND-XORs chosen by the bits of that row's
 * coefficient. The powers, the expensive part, are shared by the whole row
 * tile; that amortisation is why the thread owns several rows. */
#ifndef RLNC_PRODUCT_H
#define RLNC_PRODUCT_H

#include <stdint.h>
#include "common/gs_hd.h"
#include "gf256/gf256.h"

#ifndef __CUDACC__
#include <string.h>
#endif

/* Output rows per thread. 8 keeps the accumulators plus powers (64 words)
 * in registers with room for two 256-thread blocks per SM. A build may set
 * another value (the GPU benchmark compares variants). */
#ifndef RLNC_PRODUCT_ROWS
#define RLNC_PRODUCT_ROWS 8
#endif

/* 16 bytes of a row of k bytes at word w (bytes w*16 ..); bytes at or past k
 * read as 0. The full-word path is one 16-byte load (rows are 16-byte
 * aligned, pitches multiples of 16). Tail bytes are assembled little-endian
 * and stored back the same way, so the pair is consistent on any host. */
GS_HD void
rlnc_product_load16 (const uint8_t *row, uint64_t k, uint64_t w, uint32_t v[4])
{
  uint64_t off = w * 16u;
  if (off + 16u <= k) {
#ifdef __CUDA_ARCH__
    uint4 q = __ldg ((const uint4 *) (row + off));
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
#else
    memcpy (v, row + off, 16);
#endif
    return;
  }
  /* Fixed trip count, unrolled: every v[] index is a constant. A data-
   * dependent v[b >> 2] made nvcc keep the caller's source word in local
   * memory (a 16-byte stack store + load per source row, tail or not). */
  v[0] = v[1] = v[2] = v[3] = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (uint32_t b = 0; b < 16u; b++)
    if (off + b < k)
      v[b >> 2] |= (uint32_t) row[off + b] << ((b & 3u) * 8u);
}

GS_HD void
rlnc_product_store16 (uint8_t *row, uint64_t k, uint64_t w, const uint32_t v[4])
{
  uint64_t off = w * 16u;
  if (off + 16u <= k) {
#ifdef __CUDA_ARCH__
    *(uint4 *) (row + off) = make_uint4 (v[0], v[1], v[2], v[3]);
#else
    memcpy (row + off, v, 16);
#endif
    return;
  }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (uint32_t b = 0; b < 16u; b++)   /* constant indices, as in load16 */
    if (off + b < k)
      row[off + b] = (uint8_t) (v[b >> 2] >> ((b & 3u) * 8u));
}

/* acc[r] = sum_{i<m} coefs[r*m + i] * src_i[word w], r < nrows
 * (nrows <= RLNC_PRODUCT_ROWS; rows past nrows are left 0). coefs is the row
 * tile's part of the coefficient matrix (shared memory on the GPU). */
GS_HD void
rlnc_product_step (const uint8_t *coefs, uint32_t m, uint32_t nrows,
                   const uint8_t *src, uint64_t src_pitch, uint64_t k,
                   uint64_t w, uint32_t acc[RLNC_PRODUCT_ROWS][4])
{
  for (int r = 0; r < RLNC_PRODUCT_ROWS; r++)
    acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0;
  for (uint32_t i = 0; i < m; i++) {
    uint32_t x[4], p[4][8];
    rlnc_product_load16 (src + (uint64_t) i * src_pitch, k, w, x);
    for (int q = 0; q < 4; q++)
      gf256_powers4 (x[q], p[q]);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int r = 0; r < RLNC_PRODUCT_ROWS; r++) {
      if ((uint32_t) r < nrows) {
        uint8_t c = coefs[(uint32_t) r * m + i];
        for (int q = 0; q < 4; q++)
          acc[r][q] = gf256_madd4_powers (acc[r][q], p[q], c);
      }
    }
  }
}

/* How a 256-thread block is split: when a row has fewer 16-byte words than
 * the block has threads (k < 4096), the block is cut into G groups of
 * `span` threads (a power of two >= 32), each on its own row tile, so that
 * small blocks still fill the block. */
GS_HD uint32_t
rlnc_product_span (uint64_t nwords, uint32_t threads)
{
  uint32_t span = 32;
  while (span < threads && span < nwords)
    span <<= 1;
  return span;
}

/* Where work item `work` (blockIdx.x stride loop) and thread `tid` land in a
 * product of n rows of k bytes; shared by the kernel and its CPU emulation so
 * the index math is tested too. */
typedef struct {
  uint32_t span, groups, rows_per_block;
  uint64_t nwords, nspans, nwork;
} RlncProductLayout;

GS_HD RlncProductLayout
rlnc_product_layout (uint32_t n, uint64_t k, uint32_t threads)
{
  RlncProductLayout l;
  l.nwords = (k + 15) / 16;
  l.span = rlnc_product_span (l.nwords, threads);
  l.groups = threads / l.span;
  l.rows_per_block = l.groups * RLNC_PRODUCT_ROWS;
  uint32_t ngroups = (n + l.rows_per_block - 1) / l.rows_per_block;
  l.nspans = (l.nwords + l.span - 1) / l.span;
  l.nwork = (uint64_t) ngroups * l.nspans;
  return l;
}

/* First row of the block's rows for work item `work`, and how many. */
GS_HD uint32_t
rlnc_product_block_rows (const RlncProductLayout *l, uint64_t work, uint32_t n,
                         uint32_t *rows_here)
{
  uint32_t row0 = (uint32_t) (work / l->nspans) * l->rows_per_block;
  uint32_t left = n - row0;
  *rows_here = left < l->rows_per_block ? left : l->rows_per_block;
  return row0;
}

/* The thread's tile: returns 0 when it has nothing to do, else sets the
 * tile's first row, its row count and the 16-byte word index. */
GS_HD int
rlnc_product_thread_tile (const RlncProductLayout *l, uint64_t work,
                          uint32_t tid, uint32_t n, uint32_t *tile_row,
                          uint32_t *nrows, uint64_t *w)
{
  uint32_t g = tid / l->span, lane = tid % l->span;
  uint32_t row0 = (uint32_t) (work / l->nspans) * l->rows_per_block;
  *tile_row = row0 + g * RLNC_PRODUCT_ROWS;
  *w = (work % l->nspans) * l->span + lane;
  if (*tile_row >= n || *w >= l->nwords)
    return 0;
  uint32_t left = n - *tile_row;
  *nrows = left < RLNC_PRODUCT_ROWS ? left : RLNC_PRODUCT_ROWS;
  return 1;
}

#endif /* RLNC_PRODUCT_H */
