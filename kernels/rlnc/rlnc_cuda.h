/* rlnc_cuda.h: the contract between the CUDA kernel (rlnc_cuda.cu) and the
 * code that launches it (kernels/tests, kernels/bench, gst/gpustream).
 *
 * Every RLNC operation on the GPU is one GF(2^8) matrix product
 *   out[j] = sum_{i<m} coefs[j*m + i] * src[i],  j < n, blocks of k bytes:
 * encoding (coefs = coding matrix), decoding at full rank (coefs = inverse),
 * recoding (coefs = mixing matrix). The GPU coder takes a batch of such
 * products from the task queue and runs them in one launch of
 * rlnc_product_batch: blockIdx.y selects the product, blockIdx.x strides over
 * its n x k output. Plain C so that C code can fill the descriptors. */
#ifndef RLNC_CUDA_H
#define RLNC_CUDA_H

#include <stdint.h>

#define RLNC_GPU_KERNEL_NAME "rlnc_product_batch"
#define RLNC_GPU_THREADS 256   /* threads per block */
#define RLNC_GPU_BLOCKS_X 1024 /* gridDim.x upper bound; the kernel strides */

/* One product, all pointers device pointers. Pitches are multiples of 16
 * bytes; k need not be (the kernel handles the tail). */
typedef struct {
  uint64_t coefs;     /* n x m bytes, row-major */
  uint64_t src;       /* m rows of src_pitch bytes */
  uint64_t out;       /* n rows of out_pitch bytes */
  uint64_t k;
  uint64_t src_pitch;
  uint64_t out_pitch;
  uint32_t m;
  uint32_t n;
} RlncGpuProduct;

/* Kernel signature (extern "C"):
 *   __global__ void rlnc_product_batch (const RlncGpuProduct *jobs,
 *                                       uint32_t njobs);
 * launched with grid (blocks_x, njobs), block (RLNC_GPU_THREADS), no dynamic
 * shared memory. */
static inline unsigned int
rlnc_gpu_blocks_x (uint64_t max_n_times_k)
{
  uint64_t words = (max_n_times_k + 15) / 16;   /* 16 bytes per thread step */
  uint64_t blocks = (words + RLNC_GPU_THREADS - 1) / RLNC_GPU_THREADS;
  if (blocks < 1)
    blocks = 1;
  return blocks > RLNC_GPU_BLOCKS_X ? RLNC_GPU_BLOCKS_X : (unsigned int) blocks;
}

/* The embedded fatbin (native code for sm_75..sm_90 plus PTX), generated at
 * build time when the cuda option is on; GS_HAVE_CUDA tells. */
extern const unsigned char rlnc_fatbin[];
extern const uint64_t rlnc_fatbin_size;

#endif /* RLNC_CUDA_H */
