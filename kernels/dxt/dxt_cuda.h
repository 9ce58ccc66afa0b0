/* dxt_cuda.h: the contract between the DXT CUDA kernels (dxt_cuda.cu) and
 * the code that launches them (kernels/tests, kernels/bench, gst/gpustream).
 *
 * One thread encodes one 4x4 block: a block is ~10^3-10^4 integer ops on 64
 * bytes, independent of its neighbours, so per-thread blocks need no
 * synchronisation or shared memory and the launch scales with the slice
 * (the paper's 2880-5760 blocks per batch = 23-45 warps of 128 threads,
 * enough to fill an SM set when several streams run slices concurrently).
 * Threads of a warp take consecutive blocks of a block row, so their 16-byte
 * pixel-row loads fall in the same cache lines. The per-thread code is
 * dxt_load_block + dxt_encode_block_hd from dxt_block.h, the very functions
 * the CPU reference runs: outputs are identical byte for byte (integer
 * math only). */
#ifndef GS_DXT_CUDA_H
#define GS_DXT_CUDA_H

#include <stdint.h>
#include "dxt/dxt.h"

#define DXT_GPU_ENCODE_KERNEL "dxt_encode_slice_kernel"
#define DXT_GPU_DECODE_KERNEL "dxt_decode_kernel"
#define DXT_GPU_THREADS 128

/* One slice of block rows; img planes and out are device pointers. out is
 * the slice's output (nrows * dxt_row_bytes bytes), as in dxt_encode_slice. */
typedef struct {
  DxtImage img;
  uint64_t out;
  uint32_t row0, nrows;
  int32_t codec, quality;
} DxtGpuEncode;

/* Decode a whole block stream to RGBA (device pointers). */
typedef struct {
  uint64_t blocks, rgba;
  uint32_t width, height, stride;
  int32_t codec;
} DxtGpuDecode;

/* Kernel signatures (extern "C"), launched with block (DXT_GPU_THREADS),
 * grid (dxt_gpu_grid (number of 4x4 blocks)), no dynamic shared memory:
 *   __global__ void dxt_encode_slice_kernel (DxtGpuEncode job);
 *   __global__ void dxt_decode_kernel (DxtGpuDecode job); */
static inline unsigned int
dxt_gpu_grid (uint64_t nblocks)
{
  uint64_t g = (nblocks + DXT_GPU_THREADS - 1) / DXT_GPU_THREADS;
  return g ? (unsigned int) g : 1u;
}

/* The embedded fatbin, built when the cuda option is on (GS_HAVE_CUDA). */
extern const unsigned char dxt_fatbin[];
extern const uint64_t dxt_fatbin_size;

#endif /* GS_DXT_CUDA_H */
