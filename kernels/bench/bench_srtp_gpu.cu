/* bench_srtp_gpu.cu: srtp_protect_batch and srtp_unprotect_batch kernel
 * throughput (device time, the packets already on the device), 12-byte
 * header + 1316 / 188-byte payload, AES_CM_128_HMAC_SHA1_80 and
 * AEAD_AES_128_GCM, 32768 packets per launch over 64 SSRC contexts. JSON
 * lines like bench_srtp (--json FILE); unprotect as impl
 * "gpu-kernel-unprotect". Exit 77 without a device. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_cuda.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf ("error - %s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

static void
report (FILE *json, const char *op, const char *impl, size_t payload, double pps)
{
  char line[400];
  snprintf (line, sizeof line, "{\"bench\":\"srtp\",\"op\":\"%s\",\"impl\":\"%s\",\"payload\":%zu,"
      "\"pps\":%.0f,\"gbps\":%.3f,\"anchor\":0,\"ratio\":0,\"device\":\"gpu\"}", op, impl, payload, pps,
      pps * payload * 8 / 1e9);
  printf ("%s\n", line);
  if (json) fprintf (json, "%s\n", line);
}

int
main (int argc, char **argv)
{
  FILE *json = NULL;
  int ndev = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp (argv[i], "--json") && i + 1 < argc)
      json = fopen (argv[++i], "w");
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  const int npkt = 32768, nctx = 64;
  const uint32_t stride = 1344;
  for (int gcm = 0; gcm < 2; gcm++) {
    GsSrtpPolicy pol = gcm ? GsSrtpPolicy { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL }
                           : GsSrtpPolicy { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80 };
    const char *op = gcm ? "AEAD_AES_128_GCM" : "AES_CM_128_HMAC_SHA1_80";
    const size_t sizes[2] = { 1316, 188 };
    for (int si = 0; si < 2; si++) {
      size_t len = 12 + sizes[si];
      std::vector<GsSrtpCtx> ctx (nctx);
      std::vector<GsSrtpKeys> keys (nctx);
      std::vector<GsSrtpDesc> d (npkt);
      std::vector<uint8_t> host ((size_t) npkt * stride, 0x5a);
      uint8_t key[46];
      for (int i = 0; i < 46; i++) key[i] = (uint8_t) (i * 29 + 3);
      for (int c = 0; c < nctx; c++) {
        key[0] = (uint8_t) c;
        gsrtp_ctx_init (&ctx[c], pol, pol, key, gcm ? 28 : 30, 0);
        keys[c] = ctx[c].rtp_keys;
      }
      for (int i = 0; i < npkt; i++) {
        uint8_t *p = &host[(size_t) i * stride];
        int c = i % nctx;
        uint16_t s = (uint16_t) (i / nctx);
        p[0] = 0x80; p[1] = 96; p[2] = (uint8_t) (s >> 8); p[3] = (uint8_t) s;
        gs_st32 (p + 8, 0x3000 + c);
        gsrtp_prepare_protect (&ctx[c], p, len, stride, 0, &d[i]);
        d[i].offset = (uint32_t) i * stride;
        d[i].keys = c;
      }
      GsSrtpKeys *dk; GsSrtpDesc *dd; uint8_t *db; uint32_t *dl;
      CK (cudaMalloc (&dk, sizeof (GsSrtpKeys) * nctx));
      CK (cudaMalloc (&dd, sizeof (GsSrtpDesc) * npkt));
      CK (cudaMalloc (&db, host.size ()));
      CK (cudaMalloc (&dl, sizeof (uint32_t) * npkt));
      CK (cudaMemcpy (dk, keys.data (), sizeof (GsSrtpKeys) * nctx, cudaMemcpyHostToDevice));
      CK (cudaMemcpy (dd, d.data (), sizeof (GsSrtpDesc) * npkt, cudaMemcpyHostToDevice));
      CK (cudaMemcpy (db, host.data (), host.size (), cudaMemcpyHostToDevice));
      cudaEvent_t e0, e1;
      cudaEventCreate (&e0); cudaEventCreate (&e1);
      int grid = (npkt + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS, reps = 20;
      srtp_protect_batch<<<grid, SRTP_GPU_THREADS>>> (dk, dd, npkt, db, dl);
      cudaEventRecord (e0);
      for (int r = 0; r < reps; r++)
        srtp_protect_batch<<<grid, SRTP_GPU_THREADS>>> (dk, dd, npkt, db, dl);
      cudaEventRecord (e1);
      CK (cudaEventSynchronize (e1));
      float ms;
      cudaEventElapsedTime (&ms, e0, e1);
      double pps = (double) npkt * reps / (ms * 1e-3);
      report (json, op, "gpu-kernel", sizes[si], pps);

      /* unprotect: genuine packets (protected on the host by fresh
       * contexts), restored before each launch since a decrypted packet no
       * longer authenticates; only the launches are timed */
      std::vector<GsSrtpPacket> pk (npkt);
      std::vector<uint32_t> ok (npkt);
      for (int c = 0; c < nctx; c++) {
        key[0] = (uint8_t) c;
        gsrtp_ctx_init (&ctx[c], pol, pol, key, gcm ? 28 : 30, 0);
      }
      for (int i = 0; i < npkt; i++) {
        uint8_t *p = &host[(size_t) i * stride];
        uint16_t s = (uint16_t) (i / nctx);
        p[0] = 0x80; p[1] = 96; p[2] = (uint8_t) (s >> 8); p[3] = (uint8_t) s;
        gs_st32 (p + 8, 0x3000 + i % nctx);
        pk[i] = GsSrtpPacket { &ctx[i % nctx], p, (uint32_t) len, stride, 0, GSRTP_OK };
      }
      gsrtp_protect_batch (pk.data (), npkt, GSRTP_IMPL_AUTO);
      for (int c = 0; c < nctx; c++) {
        key[0] = (uint8_t) c;
        gsrtp_ctx_init (&ctx[c], pol, pol, key, gcm ? 28 : 30, 0);
      }
      int prep_bad = 0;
      for (int i = 0; i < npkt; i++) {
        if (gsrtp_prepare_unprotect_desc (&ctx[i % nctx], &host[(size_t) i * stride], pk[i].len, 0,
                &d[i]) != GSRTP_OK)
          prep_bad++;
        d[i].offset = (uint32_t) i * stride;
        d[i].keys = i % nctx;
      }
      uint8_t *dp;
      CK (cudaMalloc (&dp, host.size ()));
      CK (cudaMemcpy (dp, host.data (), host.size (), cudaMemcpyHostToDevice));
      CK (cudaMemcpy (dd, d.data (), sizeof (GsSrtpDesc) * npkt, cudaMemcpyHostToDevice));
      float total = 0;
      for (int r = 0; r <= reps; r++) {
        CK (cudaMemcpy (db, dp, host.size (), cudaMemcpyDeviceToDevice));
        cudaEventRecord (e0);
        srtp_unprotect_batch<<<grid, SRTP_GPU_THREADS>>> (dk, dd, npkt, db, dl);
        cudaEventRecord (e1);
        CK (cudaEventSynchronize (e1));
        cudaEventElapsedTime (&ms, e0, e1);
        if (r > 0)            /* the first one warms up */
          total += ms;
      }
      CK (cudaMemcpy (ok.data (), dl, sizeof (uint32_t) * npkt, cudaMemcpyDeviceToHost));
      int failed = prep_bad;
      for (int i = 0; i < npkt; i++)
        failed += ok[i] != 1;
      if (failed) {
        printf ("error - %s unprotect: %d packets did not authenticate\n", op, failed);
        exit (1);
      }
      pps = (double) npkt * reps / (total * 1e-3);
      report (json, op, "gpu-kernel-unprotect", sizes[si], pps);
      cudaFree (dp);
      cudaFree (dk); cudaFree (dd); cudaFree (db); cudaFree (dl);
    }
  }
  if (json) fclose (json);
  return 0;
}
