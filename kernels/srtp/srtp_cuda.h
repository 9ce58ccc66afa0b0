/* srtp_cuda.h: the contract between the SRTP protect / unprotect kernels
 * (srtp_cuda.cu) and their launchers (tests, bench, gst/gpustream).
 *
 * One launch protects a batch: buf holds the packets (each at desc.offset,
 * with room for the tag / trailer after it), keys[] the session keys of every
 * context direction in the batch (GsSrtpKeys, copied as is), descs[] one
 * GsSrtpDesc per packet filled on the host by gsrtp_prepare_protect (which
 * does the ROC / SRTCP index bookkeeping in packet order) plus offset / keys.
 * out_len[i] receives the protected length.
 *
 * One launch unprotects a batch the same way: buf holds the received
 * packets as they came (each at desc.offset, tag, trailer and MKI included),
 * descs[] filled by gsrtp_prepare_unprotect_desc against the committed
 * state plus offset / keys. ok[i] receives 1 when the tag matched (or the
 * profile has none), and the packet in buf is then decrypted in place
 * (d.len bytes); 0 on an authentication failure, the packet left as it
 * was. The kernel commits nothing: the host then walks the batch in order,
 * prepares each packet again against the state the packets before it left
 * (replays inside the batch, a ROC step), and commits with
 * gsrtp_commit_unprotect_desc only where that gives the same d.roc and
 * ok[i] is 1 (gst_gpustream_srtp_unprotect_batch does all this).
 *
 * One thread per packet (srtp_protect_batch): HMAC-SHA1 and GHASH are
 * serial chains over the packet, and a batch of thousands of packets fills
 * the GPU with threads (H100: 320 Gbit/s of 1316-byte packets, kernel only).
 * But the one thread also runs its packet's whole AES-CTR chain: a 1316-byte
 * packet takes ~0.5 ms however small the batch, the floor of a small batch's
 * latency. One warp per packet (srtp_protect_batch_warp) spreads the
 * keystream blocks over the 32 lanes and leaves lane 0 the tag chain:
 * AES-CM-HMAC batches of 256 / 1024 packets come back end to end in 203 /
 * 271 us instead of 579 / 639, but it tops out at ~130 Gbit/s (31 lanes wait
 * on the hash), and with GCM's bitwise GHASH on lane 0 at 27 Gbit/s, so it
 * only pays for GCM at 256 packets (285 instead of 605 us).
 * gst_gpustream_srtp_protect_batch picks the warp kernel up to
 * SRTP_GPU_WARP_MAX_PACKETS packets (_GCM when the batch has a GCM stream).
 * Figures: bench_srtp_gpu, docs/benchmarks/srtp.md. The AES T-table and
 * S-box are copied to shared memory per block. */
#ifndef SRTP_CUDA_H
#define SRTP_CUDA_H

#include <stdint.h>
#include "srtp/srtp_hd.h"

#define SRTP_GPU_KERNEL_NAME "srtp_protect_batch"
#define SRTP_GPU_UNPROTECT_KERNEL_NAME "srtp_unprotect_batch"
#define SRTP_GPU_WARP_KERNEL_NAME "srtp_protect_batch_warp"
#define SRTP_GPU_THREADS 128
#define SRTP_GPU_WARP_MAX_PACKETS 1024
#define SRTP_GPU_WARP_MAX_PACKETS_GCM 256

/* Kernel signatures (extern "C"):
 *   __global__ void srtp_protect_batch (const GsSrtpKeys *keys,
 *       const GsSrtpDesc *descs, uint32_t n, uint8_t *buf, uint32_t *out_len);
 *   __global__ void srtp_unprotect_batch (const GsSrtpKeys *keys,
 *       const GsSrtpDesc *descs, uint32_t n, uint8_t *buf, uint32_t *ok);
 *   __global__ void srtp_protect_batch_warp (same arguments as protect)
 * thread kernels: grid ((n + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS), block
 * (SRTP_GPU_THREADS); the warp kernel: grid ((32 * n + SRTP_GPU_THREADS - 1)
 * / SRTP_GPU_THREADS); no dynamic shared memory. */

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
