/* test_srtp_gpu.cu: srtp_protect_batch on a real device, byte for byte
 * against the scalar reference (gsrtp_rtp_protect / gsrtp_rtcp_protect), for
 * every profile, mixed sizes, many SSRC contexts, across a ROC wrap.
 * Exit 77 (skipped) without a device. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_cuda.cu"   /* the kernel itself, for the runtime API */

static int n_pass, n_fail;
static void
check (bool ok, const char *what)
{
  printf ("%s - %s\n", ok ? "ok" : "FAIL", what);
  ok ? n_pass++ : n_fail++;
}
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf ("FAIL - %s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

static uint32_t rs = 777;
static uint32_t rnd32 () { rs ^= rs << 13; rs ^= rs >> 17; rs ^= rs << 5; return rs; }

int
main ()
{
  int ndev = 0;
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  const GsSrtpPolicy pols[] = {
    { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80 }, { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_32 },
    { GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_80 }, { GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_32 },
    { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL }, { GSRTP_CIPHER_AES_256_GCM, GSRTP_AUTH_NULL },
    { GSRTP_CIPHER_NULL, GSRTP_AUTH_HMAC_SHA1_80 }, { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_NULL },
    { GSRTP_CIPHER_NULL, GSRTP_AUTH_NULL } };
  const int np = sizeof pols / sizeof *pols, nctx = 3 * np, npkt = 20000;
  const uint32_t stride = 1600;
  std::vector<GsSrtpCtx> ref (nctx), dev (nctx);
  std::vector<GsSrtpKeys> keys (2 * nctx);
  std::vector<uint16_t> seqs (nctx);
  for (int c = 0; c < nctx; c++) {
    GsSrtpPolicy p = pols[c % np];
    uint8_t key[46];
    size_t kl = gsrtp_master_key_len (p.cipher) + gsrtp_master_salt_len (p.cipher);
    for (size_t i = 0; i < kl; i++) key[i] = (uint8_t) rnd32 ();
    gsrtp_ctx_init (&ref[c], p, p, key, kl, 0);
    dev[c] = ref[c];
    keys[2 * c] = ref[c].rtp_keys;
    keys[2 * c + 1] = ref[c].rtcp_keys;
    seqs[c] = (uint16_t) (65000 + c);
  }
  std::vector<uint8_t> host (npkt * (size_t) stride), want (npkt * (size_t) stride);
  std::vector<GsSrtpDesc> d (npkt);
  std::vector<uint32_t> want_len (npkt), got_len (npkt);
  int prep_bad = 0;
  for (int i = 0; i < npkt; i++) {
    int c = (int) (rnd32 () % nctx), rtcp = rnd32 () % 8 == 0;
    uint8_t *p = &host[(size_t) i * stride];
    size_t len, ol;
    if (rtcp) {
      len = 8 + 4 * (rnd32 () % 350);
      p[0] = 0x81; p[1] = 200; p[2] = (uint8_t) ((len / 4 - 1) >> 8); p[3] = (uint8_t) (len / 4 - 1);
    } else {
      len = 12 + rnd32 () % 1489;
      p[0] = 0x80; p[1] = 96; p[2] = (uint8_t) (seqs[c] >> 8); p[3] = (uint8_t) seqs[c]; seqs[c]++;
    }
    gs_st32 (p + 4, rtcp ? 0x2000 + c : rnd32 ());
    if (!rtcp) gs_st32 (p + 8, 0x2000 + c);
    for (size_t j = rtcp ? 8 : 12; j < len; j++) p[j] = (uint8_t) rnd32 ();
    memcpy (&want[(size_t) i * stride], p, len);
    GsSrtpResult r = rtcp ? gsrtp_rtcp_protect (&ref[c], &want[(size_t) i * stride], len, stride, &ol)
                          : gsrtp_rtp_protect (&ref[c], &want[(size_t) i * stride], len, stride, &ol);
    want_len[i] = (uint32_t) ol;
    if (r != GSRTP_OK || gsrtp_prepare_protect (&dev[c], p, len, stride, rtcp, &d[i]) != GSRTP_OK)
      prep_bad++;
    d[i].offset = (uint32_t) i * stride;
    d[i].keys = 2 * c + rtcp;
  }
  check (prep_bad == 0, "host prepare of 20000 packets");

  GsSrtpKeys *dkeys;
  GsSrtpDesc *ddesc;
  uint8_t *dbuf;
  uint32_t *dlen;
  CK (cudaMalloc (&dkeys, sizeof (GsSrtpKeys) * keys.size ()));
  CK (cudaMalloc (&ddesc, sizeof (GsSrtpDesc) * npkt));
  CK (cudaMalloc (&dbuf, host.size ()));
  CK (cudaMalloc (&dlen, sizeof (uint32_t) * npkt));
  CK (cudaMemcpy (dkeys, keys.data (), sizeof (GsSrtpKeys) * keys.size (), cudaMemcpyHostToDevice));
  CK (cudaMemcpy (ddesc, d.data (), sizeof (GsSrtpDesc) * npkt, cudaMemcpyHostToDevice));
  CK (cudaMemcpy (dbuf, host.data (), host.size (), cudaMemcpyHostToDevice));
  srtp_protect_batch<<<(npkt + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS, SRTP_GPU_THREADS>>> (
      dkeys, ddesc, (uint32_t) npkt, dbuf, dlen);
  CK (cudaGetLastError ());
  CK (cudaDeviceSynchronize ());
  CK (cudaMemcpy (host.data (), dbuf, host.size (), cudaMemcpyDeviceToHost));
  CK (cudaMemcpy (got_len.data (), dlen, sizeof (uint32_t) * npkt, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < npkt; i++)
    if (got_len[i] != want_len[i]
        || memcmp (&host[(size_t) i * stride], &want[(size_t) i * stride], want_len[i]))
      bad++;
  char msg[160];
  snprintf (msg, sizeof msg, "GPU protect == reference, %d packets, %d contexts, all profiles (%d differ)",
      npkt, nctx, bad);
  check (bad == 0, msg);
  cudaFree (dkeys); cudaFree (ddesc); cudaFree (dbuf); cudaFree (dlen);
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
