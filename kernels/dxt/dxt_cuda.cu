/* dxt_cuda.cu: DXT encode (slice) and decode kernels, one thread per 4x4
 * block (see dxt_cuda.h for why). The per-thread code is dxt_block.h. */
#include <stdint.h>
#include "dxt/dxt_cuda.h"
#include "dxt/dxt_block.h"

extern "C" __global__ void __launch_bounds__ (DXT_GPU_THREADS)
dxt_encode_slice_kernel (DxtGpuEncode job)
{
  const uint32_t bx_n = dxt_blocks_x (job.img.width);
  const uint64_t n = (uint64_t) bx_n * job.nrows;
  const uint64_t t = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  const uint32_t by = job.row0 + (uint32_t) (t / bx_n), bx = (uint32_t) (t % bx_n);
  uint8_t px[64];
  dxt_load_block (&job.img, bx, by, px);
  uint8_t blk[16];
  dxt_encode_block_hd (job.codec, job.quality, px, blk);
  const uint32_t bb = dxt_block_bytes ((DxtCodec) job.codec);
  uint8_t *o = (uint8_t *) job.out + t * bb;
  /* outputs are 8/16-byte aligned in a cudaMalloc'd buffer: word stores */
  const uint2 *w = (const uint2 *) blk;
  ((uint2 *) o)[0] = w[0];
  if (bb == 16)
    ((uint2 *) o)[1] = w[1];
}

extern "C" __global__ void __launch_bounds__ (DXT_GPU_THREADS)
dxt_decode_kernel (DxtGpuDecode job)
{
  const uint32_t bx_n = dxt_blocks_x (job.width);
  const uint64_t n = (uint64_t) bx_n * dxt_blocks_y (job.height);
  const uint64_t t = (uint64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  const uint32_t by = (uint32_t) (t / bx_n), bx = (uint32_t) (t % bx_n);
  const uint32_t bb = dxt_block_bytes ((DxtCodec) job.codec);
  uint8_t px[64];
  dxt_decode_block_hd (job.codec, (const uint8_t *) job.blocks + t * bb, px);
  for (uint32_t j = 0; j < 4 && by * 4 + j < job.height; j++)
    for (uint32_t i = 0; i < 4 && bx * 4 + i < job.width; i++)
      for (int c = 0; c < 4; c++)
        ((uint8_t *) job.rgba)[(uint64_t) (by * 4 + j) * job.stride + (bx * 4 + i) * 4 + c] = px[16 * j + 4 * i + c];
}
