/* test_srtp_gpu.cu: srtp_protect_batch and srtp_unprotect_batch on a real
 * device, byte for byte against the scalar reference (gsrtp_rtp_protect &
 * co), for every profile, mixed sizes, many SSRC contexts (a third with an
 * MKI), across a ROC wrap; unprotect with tampered, duplicated and reordered
 * packets, driven as gst_gpustream_srtp_unprotect_batch drives it.
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
  std::vector<GsSrtpCtx> ref (nctx), dev (nctx), rx_ref (nctx), rx_dev (nctx);
  std::vector<GsSrtpKeys> keys (2 * nctx);
  std::vector<uint16_t> seqs (nctx);
  for (int c = 0; c < nctx; c++) {
    GsSrtpPolicy p = pols[c % np];
    uint8_t key[46];
    size_t kl = gsrtp_master_key_len (p.cipher) + gsrtp_master_salt_len (p.cipher);
    for (size_t i = 0; i < kl; i++) key[i] = (uint8_t) rnd32 ();
    gsrtp_ctx_init (&ref[c], p, p, key, kl, 0);
    if (c % 3 == 1) {
      uint8_t mki[4] = { 0xaa, 0, 0, (uint8_t) c };
      gsrtp_ctx_set_mki (&ref[c], mki, sizeof mki);
    }
    dev[c] = rx_ref[c] = rx_dev[c] = ref[c];
    keys[2 * c] = ref[c].rtp_keys;
    keys[2 * c + 1] = ref[c].rtcp_keys;
    seqs[c] = (uint16_t) (65000 + c);
  }
  std::vector<uint8_t> host (npkt * (size_t) stride), want (npkt * (size_t) stride);
  std::vector<GsSrtpDesc> d (npkt);
  std::vector<uint32_t> want_len (npkt), got_len (npkt);
  std::vector<int> pctx (npkt), prtcp (npkt);
  int prep_bad = 0;
  for (int i = 0; i < npkt; i++) {
    int c = (int) (rnd32 () % nctx), rtcp = rnd32 () % 8 == 0;
    uint8_t *p = &host[(size_t) i * stride];
    pctx[i] = c;
    prtcp[i] = rtcp;
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
  const std::vector<uint8_t> plain = host;
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
  char msg[256];
  snprintf (msg, sizeof msg, "GPU protect == reference, %d packets, %d contexts, all profiles (%d differ)",
      npkt, nctx, bad);
  check (bad == 0, msg);

  /* the warp kernel on the same batch */
  CK (cudaMemcpy (dbuf, plain.data (), plain.size (), cudaMemcpyHostToDevice));
  CK (cudaMemset (dlen, 0, sizeof (uint32_t) * npkt));
  srtp_protect_batch_warp<<<(32 * npkt + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS,
      SRTP_GPU_THREADS>>> (dkeys, ddesc, (uint32_t) npkt, dbuf, dlen);
  CK (cudaGetLastError ());
  CK (cudaDeviceSynchronize ());
  CK (cudaMemcpy (host.data (), dbuf, host.size (), cudaMemcpyDeviceToHost));
  CK (cudaMemcpy (got_len.data (), dlen, sizeof (uint32_t) * npkt, cudaMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < npkt; i++)
    if (got_len[i] != want_len[i]
        || memcmp (&host[(size_t) i * stride], &want[(size_t) i * stride], want_len[i]))
      bad++;
  snprintf (msg, sizeof msg, "GPU protect, one warp per packet == reference, %d packets (%d differ)",
      npkt, bad);
  check (bad == 0, msg);

  /* unprotect: the protected packets with neighbours swapped, some
   * tampered, some duplicated */
  std::vector<uint8_t> in, got;
  std::vector<uint32_t> inlen;
  std::vector<int> ictx, irtcp;
  auto push = [&] (int j, bool tamper) {
    size_t at = in.size ();
    in.insert (in.end (), &want[(size_t) j * stride], &want[(size_t) j * stride] + stride);
    if (tamper)
      in[at + rnd32 () % want_len[j]] ^= 0x10;
    inlen.push_back (want_len[j]);
    ictx.push_back (pctx[j]);
    irtcp.push_back (prtcp[j]);
  };
  for (int i = 0; i < npkt; i++) {
    if (i + 1 < npkt && rnd32 () % 20 == 0) {
      push (i + 1, false);
      push (i, false);
      i++;
      continue;
    }
    push (i, rnd32 () % 50 == 0);
    if (rnd32 () % 40 == 0)
      push (i, false);
  }
  const int nin = (int) inlen.size (), chunk = 2000;
  std::vector<GsSrtpResult> want_res (nin);
  std::vector<uint32_t> want_out (nin);
  std::vector<uint8_t> want_un (in);
  int rejected = 0;
  for (int i = 0; i < nin; i++) {
    size_t ol = 0;
    uint8_t *p = &want_un[(size_t) i * stride];
    want_res[i] = irtcp[i] ? gsrtp_rtcp_unprotect (&rx_ref[ictx[i]], p, inlen[i], &ol)
                           : gsrtp_rtp_unprotect (&rx_ref[ictx[i]], p, inlen[i], &ol);
    want_out[i] = (uint32_t) ol;
    rejected += want_res[i] != GSRTP_OK;
  }
  /* the device, chunk by chunk: (A) prepare against the committed state,
   * (B) one launch on a copy, (C) in order: prepare again, redo on the CPU
   * where the estimate moved, else the flag decides */
  got = in;
  std::vector<uint8_t> stage ((size_t) chunk * stride);
  std::vector<uint32_t> ok (chunk);
  std::vector<int> slot (chunk);
  int udiff = 0, on_gpu = 0, redone = 0;
  for (int base = 0; base < nin; base += chunk) {
    int m = nin - base < chunk ? nin - base : chunk, nd = 0;
    for (int j = 0; j < m; j++) {
      int i = base + j;
      uint8_t *p = &got[(size_t) i * stride];
      slot[j] = -1;
      if (gsrtp_prepare_unprotect_desc (&rx_dev[ictx[i]], p, inlen[i], irtcp[i], &d[nd]) != GSRTP_OK)
        continue;
      d[nd].offset = (uint32_t) nd * stride;
      d[nd].keys = 2 * ictx[i] + irtcp[i];
      memcpy (&stage[(size_t) nd * stride], p, inlen[i]);
      slot[j] = nd++;
    }
    on_gpu += nd;
    if (nd > 0) {
      CK (cudaMemcpy (ddesc, d.data (), sizeof (GsSrtpDesc) * nd, cudaMemcpyHostToDevice));
      CK (cudaMemcpy (dbuf, stage.data (), (size_t) nd * stride, cudaMemcpyHostToDevice));
      srtp_unprotect_batch<<<(nd + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS, SRTP_GPU_THREADS>>> (
          dkeys, ddesc, (uint32_t) nd, dbuf, dlen);
      CK (cudaGetLastError ());
      CK (cudaDeviceSynchronize ());
      CK (cudaMemcpy (stage.data (), dbuf, (size_t) nd * stride, cudaMemcpyDeviceToHost));
      CK (cudaMemcpy (ok.data (), dlen, sizeof (uint32_t) * nd, cudaMemcpyDeviceToHost));
    }
    for (int j = 0; j < m; j++) {
      int i = base + j;
      GsSrtpCtx *cx = &rx_dev[ictx[i]];
      uint8_t *p = &got[(size_t) i * stride];
      GsSrtpDesc now;
      size_t ol = 0;
      GsSrtpResult r = gsrtp_prepare_unprotect_desc (cx, p, inlen[i], irtcp[i], &now);
      if (r == GSRTP_OK) {
        if (slot[j] < 0 || now.roc != d[slot[j]].roc) {
          redone++;
          r = irtcp[i] ? gsrtp_rtcp_unprotect (cx, p, inlen[i], &ol)
                       : gsrtp_rtp_unprotect (cx, p, inlen[i], &ol);
        } else if (!ok[slot[j]]) {
          r = GSRTP_ERR_AUTH;
        } else {
          gsrtp_commit_unprotect_desc (cx, p, &now);
          memcpy (p, &stage[(size_t) slot[j] * stride], now.len);
          ol = now.len;
        }
      }
      if (r != want_res[i])
        udiff++;
      else if (r == GSRTP_OK && (ol != want_out[i] || memcmp (p, &want_un[(size_t) i * stride], ol)))
        udiff++;
      else if (r != GSRTP_OK && memcmp (p, &in[(size_t) i * stride], inlen[i]))
        udiff++;      /* a rejected packet stays as it came */
    }
  }
  int sdiff = 0;
  for (int c = 0; c < nctx; c++)
    if (rx_dev[c].roc != rx_ref[c].roc || rx_dev[c].s_l != rx_ref[c].s_l
        || memcmp (&rx_dev[c].rtp_replay, &rx_ref[c].rtp_replay, sizeof (GsSrtpReplay))
        || memcmp (&rx_dev[c].rtcp_replay, &rx_ref[c].rtcp_replay, sizeof (GsSrtpReplay)))
      sdiff++;
  snprintf (msg, sizeof msg, "GPU unprotect == reference, %d packets (%d rejected), %d checked on "
      "the GPU, %d redone (%d differ)", nin, rejected, on_gpu, redone, udiff);
  check (udiff == 0 && rejected > 0 && on_gpu > nin / 2, msg);
  snprintf (msg, sizeof msg, "receiver ROC and replay state == reference (%d contexts differ)", sdiff);
  check (sdiff == 0, msg);
  cudaFree (dkeys); cudaFree (ddesc); cudaFree (dbuf); cudaFree (dlen);
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
