/* srtp_cuda.h: the contract between the SRTP protect kernel (srtp_cuda.cu)
 * and its launchers (tests, bench, gst/gpustream).
 *
 * One launch protects a batch: buf holds the packets (each at desc.offset,
 * with room for the tag / trailer after it), keys[] the session keys of every
 * context direction in the batch (GsSrtpKeys, copied as is), descs[] one
 * GsSrtpDesc per packet filled on the host by gsrtp_prepare_protect (which
 * does the ROC / SRTCP index bookkeeping in packet order) plus offset / keys.
 * out_len[i] receives the protected length.
 *
 * One thread per packet: HMAC-SHA1 and GHASH are serial chains over the
 * packet, so a warp per packet would only spread the AES-CTR blocks and then
 * wait on one lane for the hash; a batch per scheduling cycle has hundreds to
 * thousands of packets, enough threads to fill the GPU. The AES T-table and
 * S-box are copied to shared memory per block. */
#ifndef SRTP_CUDA_H
#define SRTP_CUDA_H

#include <stdint.h>
#include "srtp/srtp_hd.h"

#define SRTP_GPU_KERNEL_NAME "srtp_protect_batch"
#define SRTP_GPU_THREADS 128

/* Kernel signature (extern "C"):
 *   __global__ void srtp_protect_batch (const GsSrtpKeys *keys,
 *       const GsSrtpDesc *descs, uint32_t n, uint8_t *buf, uint32_t *out_len);
 * grid ((n + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS), block
 * (SRTP_GPU_THREADS), no dynamic shared memory. */

#ifdef __cplusplus
extern "C" {
#endif
/* The embedded fatbin, generated when the cuda option is on. */
extern const unsigned char srtp_fatbin[];
extern const uint64_t srtp_fatbin_size;
#ifdef __cplusplus
}
#endif

#endif /* SRTP_CUDA_H */
