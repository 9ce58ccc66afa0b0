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

#include <stddef.h>
#include <stdint.h>
#include "rlnc/rlnc.h"
#include "rlnc/rlnc_product.h"

#define RLNC_GPU_KERNEL_NAME "rlnc_product_batch"
#define RLNC_GPU_THREADS 256   /* threads per block */
#define RLNC_GPU_BLOCKS_X 1024 /* gridDim.x upper bound; the kernel strides */

/* Shared staging of one work item's coefficients: at most
 * (threads / 32) groups x RLNC_PRODUCT_ROWS rows x RLNC_MAX_M bytes (the
 * smallest span is a warp, see rlnc_product_span). 16 KiB. */
#define RLNC_GPU_STAGE_BYTES \
  ((RLNC_GPU_THREADS / 32) * RLNC_PRODUCT_ROWS * RLNC_MAX_M)

/* One product, all pointers device pointers. Rows (src, out) must be 16-byte
 * aligned: base pointers and pitches multiples of 16 (the full-word path is
 * a 16-byte vector load/store); k need not be (the kernel handles the
 * tail). m must be 1..RLNC_MAX_M (the kernel skips other jobs). out must
 * not overlap src or coefs: src is read through the read-only cache. */
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

/* The host C compiler fills the descriptors the device reads: pin the
 * layout so that a change on one side cannot silently shift fields. */
#ifdef __cplusplus
#define RLNC_GPU_ASSERT(c, msg) static_assert (c, msg)
#define RLNC_GPU_ALIGNOF(t) alignof (t)
#else
#define RLNC_GPU_ASSERT(c, msg) _Static_assert (c, msg)
#define RLNC_GPU_ALIGNOF(t) _Alignof (t)
#endif
RLNC_GPU_ASSERT (sizeof (RlncGpuProduct) == 56, "RlncGpuProduct size");
RLNC_GPU_ASSERT (RLNC_GPU_ALIGNOF (RlncGpuProduct) == 8, "RlncGpuProduct align");
RLNC_GPU_ASSERT (offsetof (RlncGpuProduct, k) == 24, "RlncGpuProduct.k");
RLNC_GPU_ASSERT (offsetof (RlncGpuProduct, out_pitch) == 40,
    "RlncGpuProduct.out_pitch");
RLNC_GPU_ASSERT (offsetof (RlncGpuProduct, m) == 48, "RlncGpuProduct.m");
RLNC_GPU_ASSERT (offsetof (RlncGpuProduct, n) == 52, "RlncGpuProduct.n");

/* Kernel signature (extern "C"):
 *   __global__ void rlnc_product_batch (const RlncGpuProduct *jobs,
 *                                       uint32_t njobs);
 * launched with grid (blocks_x, njobs), block (RLNC_GPU_THREADS), no dynamic
 * shared memory.
 *
 * blocks_x for one n x k product: its number of work items, i.e. blocks that
 * have something to do (rlnc_product_layout: a work item is up to
 * RLNC_PRODUCT_ROWS rows x 16 bytes per thread, several row tiles per block
 * for short rows), capped at RLNC_GPU_BLOCKS_X (the kernel strides past the
 * cap). A batch launches the largest value over its products; the blocks of
 * a smaller product past its own count return at once. */
static inline unsigned int
rlnc_gpu_blocks_x (uint32_t n, uint64_t k)
{
  RlncProductLayout l;

  if (n == 0 || k == 0)
    return 1;
  l = rlnc_product_layout (n, k, RLNC_GPU_THREADS);
  if (l.nwork < 1)
    return 1;
  return l.nwork > RLNC_GPU_BLOCKS_X ? RLNC_GPU_BLOCKS_X : (unsigned int) l.nwork;
}

/* The embedded fatbin (native code for sm_75..sm_90 plus PTX), generated at
 * build time when the cuda option is on; GS_HAVE_CUDA tells. */
#ifdef __cplusplus
extern "C" {   /* defined by the generated C file */
#endif
extern const unsigned char rlnc_fatbin[];
extern const uint64_t rlnc_fatbin_size;
#ifdef __cplusplus
}
#endif

#endif /* RLNC_CUDA_H */
