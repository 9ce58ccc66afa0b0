/* srtp_cuda.cu: batched SRTP/SRTCP protect and unprotect, one thread per
 * packet, and protect with one warp per packet (see srtp_cuda.h for when). The math is gs_srtp_hd_protect /
 * gs_srtp_hd_unprotect from srtp_hd.h, the same functions the CPU reference
 * runs. */
#include "srtp/srtp_cuda.h"

static __constant__ GsAesTables srtp_tables_c = GS_AES_TABLES_INIT;

/* constant memory serialises divergent lookups; shared does not */
static __device__ __forceinline__ void
srtp_load_tables (GsAesTables *t)
{
  uint32_t i;
  for (i = threadIdx.x; i < 256; i += blockDim.x) {
    t->te0[i] = srtp_tables_c.te0[i];
    t->sbox[i] = srtp_tables_c.sbox[i];
  }
  __syncthreads ();
}

extern "C" __global__ void
srtp_protect_batch (const GsSrtpKeys *keys, const GsSrtpDesc *descs, uint32_t n,
    uint8_t *buf, uint32_t *out_len)
{
  __shared__ GsAesTables t;
  uint32_t i;
  srtp_load_tables (&t);
  i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  GsSrtpDesc d = descs[i];
  out_len[i] = gs_srtp_hd_protect (&t, &keys[d.keys], buf + d.offset, &d);
}

/* One warp per packet: the lanes share the body's keystream blocks, then
 * lane 0 runs the serial tag chain over the ciphertext (__syncwarp orders
 * the lanes' stores before its loads). i is the same for the whole warp,
 * so a warp returns or stays as one. */
extern "C" __global__ void
srtp_protect_batch_warp (const GsSrtpKeys *keys, const GsSrtpDesc *descs, uint32_t n,
    uint8_t *buf, uint32_t *out_len)
{
  __shared__ GsAesTables t;
  uint32_t i, lane = threadIdx.x & 31;
  srtp_load_tables (&t);
  i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (i >= n)
    return;
  GsSrtpDesc d = descs[i];
  const GsSrtpKeys *k = &keys[d.keys];
  uint8_t *pkt = buf + d.offset;
  gs_srtp_hd_seal_encrypt (&t, k, pkt, &d, lane, 32);
  __syncwarp ();
  if (lane == 0)
    out_len[i] = gs_srtp_hd_place_mki (k, pkt, gs_srtp_hd_seal_auth (&t, k, pkt, &d));
}

extern "C" __global__ void
srtp_unprotect_batch (const GsSrtpKeys *keys, const GsSrtpDesc *descs, uint32_t n,
    uint8_t *buf, uint32_t *ok)
{
  __shared__ GsAesTables t;
  uint32_t i;
  srtp_load_tables (&t);
  i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  GsSrtpDesc d = descs[i];
  ok[i] = (uint32_t) gs_srtp_hd_unprotect (&t, &keys[d.keys], buf + d.offset, &d);
}
