/* rlnc_cuda.cu: the one GPU operation of RLNC, a batch of GF(2^8) matrix
 * products (see rlnc_cuda.h): encode, decode-at-full-rank and recode.
 *
 * Design (H100 target, >= 100 GB/s of coded output at m=64, k=4096):
 * - math: packed multiply from gf256.h, not product tables in shared memory.
 *   Lookups indexed by data bytes hit random banks (up to 32-way conflicts)
 *   and cost one shared load per byte per coefficient; the packed form does
 *   16 bytes per thread with 8 LOP3 per 4 bytes per coefficient once the
 *   powers of the source word are known, and the powers are shared by a tile
 *   of RLNC_PRODUCT_ROWS output rows (rlnc_product.h).
 * - memory: one coalesced 16-byte __ldg per thread per source row; a row
 *   tile reads each source word once, the n/ROWS tiles that re-read it hit
 *   L2. Stores are 16-byte and coalesced.
 * - coefficients of the block's row tiles are staged in shared memory; every
 *   thread of a warp reads the same coefficient (broadcast, no conflicts).
 * - blockIdx.y = job; blockIdx.x strides over (row group, column span) work
 *   items so any grid size covers any shape (rlnc_gpu_blocks_x sizes the grid
 *   to the work items, one per block); for short rows the block splits
 *   into several row tiles (rlnc_product_layout); k need not be a multiple
 *   of 16 (tail bytes take the byte path of rlnc_product_load16/store16).
 * The per-thread code is all in rlnc_product.h, which the CPU test runs. */
#include <stdint.h>
#include "rlnc/rlnc_cuda.h"
#include "rlnc/rlnc_product.h"
#include "rlnc/rlnc.h"

/* static shared memory is limited to 48 KiB per block */
static_assert (RLNC_GPU_STAGE_BYTES <= 48 * 1024, "coefficient stage too big");
static_assert (RLNC_GPU_THREADS % 32 == 0 &&
               (RLNC_GPU_THREADS & (RLNC_GPU_THREADS - 1)) == 0,
               "rlnc_product_span wants a power-of-two block of whole warps");

#ifndef RLNC_GPU_MIN_BLOCKS
#define RLNC_GPU_MIN_BLOCKS 2   /* blocks per SM the registers must allow */
#endif

extern "C" __global__ void __launch_bounds__ (RLNC_GPU_THREADS, RLNC_GPU_MIN_BLOCKS)
rlnc_product_batch (const RlncGpuProduct *jobs, uint32_t njobs)
{
  __shared__ uint8_t scoef[RLNC_GPU_STAGE_BYTES]; /* 16 KiB: 64 rows x 256 */
  if (blockIdx.y >= njobs)
    return;
  const RlncGpuProduct job = jobs[blockIdx.y];
  const uint32_t m = job.m, n = job.n;
  if (m == 0 || n == 0 || job.k == 0 || m > RLNC_MAX_M)
    return;
  const uint8_t *coefs = (const uint8_t *) job.coefs;
  const uint8_t *src = (const uint8_t *) job.src;
  uint8_t *out = (uint8_t *) job.out;
  const RlncProductLayout l = rlnc_product_layout (n, job.k, RLNC_GPU_THREADS);

  for (uint64_t work = blockIdx.x; work < l.nwork; work += gridDim.x) {
    uint32_t rows_here;
    const uint32_t row0 = rlnc_product_block_rows (&l, work, n, &rows_here);
    __syncthreads ();   /* the previous item is done with scoef */
    for (uint32_t t = threadIdx.x; t < rows_here * m; t += blockDim.x)
      scoef[t] = coefs[(uint64_t) row0 * m + t];
    __syncthreads ();

    uint32_t tile_row, nrows;
    uint64_t w;
    if (rlnc_product_thread_tile (&l, work, threadIdx.x, n, &tile_row, &nrows, &w)) {
      uint32_t acc[RLNC_PRODUCT_ROWS][4];
      rlnc_product_step (scoef + (tile_row - row0) * m, m, nrows,
                         src, job.src_pitch, job.k, w, acc);
#pragma unroll
      for (int r = 0; r < RLNC_PRODUCT_ROWS; r++)
        if ((uint32_t) r < nrows)
          rlnc_product_store16 (out + (uint64_t) (tile_row + r) * job.out_pitch,
                                job.k, w, acc[r]);
    }
  }
}
