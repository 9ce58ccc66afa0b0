/* bench_srtp_gpu.cu: SRTP protect on the GPU, 12-byte header + 1316 / 188-byte
 * payload, AES_CM_128_HMAC_SHA1_80 and AEAD_AES_128_GCM, 64 SSRC contexts.
 *
 *  gpu-kernel, gpu-kernel-unprotect: srtp_protect_batch / srtp_unprotect_batch
 *      kernel throughput (device time, the packets already on the device),
 *      32768 packets per launch.
 *  gpu-kernel-warp, gpu-e2e-warp: the same with srtp_protect_batch_warp (one
 *      warp per packet).
 *  gpu-e2e: end to end from host memory (paper Table 1 / Fig. 6), per batch
 *      size and number of CUDA streams: host prepares the descriptors
 *      (gsrtp_prepare_protect, in packet order), H2D of descriptors +
 *      packets, launch, D2H of packets + lengths, one staging area per
 *      stream, batches round-robin over the streams. Throughput, and the
 *      latency from the start of a batch's host preparation to the host
 *      seeing its D2H done.
 *
 * Every row carries an anchor measured in the same run: our CPU batched path
 * (gsrtp_protect_batch, AES-NI / SHA-NI / PCLMUL) on one core, set up as
 * bench_srtp's "batched" row. JSON lines on stdout and to --json FILE. Exit 77
 * without a device. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <sched.h>
#include <time.h>
#include <cuda_runtime.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_cuda.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf ("error - %s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

#define ALIGN16(x) (((x) + 15) & ~(size_t) 15)

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
report (FILE *json, const char *op, const char *impl, size_t payload, double pps, double anchor)
{
  char line[400];
  snprintf (line, sizeof line, "{\"bench\":\"srtp\",\"op\":\"%s\",\"impl\":\"%s\",\"payload\":%zu,"
      "\"pps\":%.0f,\"gbps\":%.3f,\"anchor\":%.0f,\"anchor_impl\":\"cpu-batched-1core\","
      "\"ratio\":%.3f,\"device\":\"gpu\"}", op, impl, payload, pps, pps * payload * 8 / 1e9,
      anchor, anchor > 0 ? pps / anchor : 0);
  printf ("%s\n", line);
  if (json) fprintf (json, "%s\n", line);
}

/* ---- the anchor: gsrtp_protect_batch on one core, as bench_srtp's
 * "batched" row (one context, 64 packets a call), so the two agree ---- */
#define ANCHOR_BATCH 64
#define ANCHOR_SECONDS 0.3

static double
anchor_pps (GsSrtpPolicy pol, size_t key_len, size_t len)
{
  cpu_set_t old, one;
  int cpu = sched_getcpu (), pinned = 0;
  std::vector<uint8_t> buf ((size_t) ANCHOR_BATCH * 1600, 0);
  std::vector<GsSrtpPacket> pk (ANCHOR_BATCH);
  std::vector<GsSrtpCtx> ctx (1);
  uint8_t key[46];
  uint16_t seq = 0;
  long n = 0;
  double t0, t;

  /* the CUDA runtime's threads must not share or move this core */
  if (cpu >= 0 && sched_getaffinity (0, sizeof old, &old) == 0) {
    CPU_ZERO (&one);
    CPU_SET (cpu, &one);
    pinned = sched_setaffinity (0, sizeof one, &one) == 0;
  }
  for (int i = 0; i < 46; i++) key[i] = (uint8_t) (i * 29 + 3);
  gsrtp_ctx_init (&ctx[0], pol, pol, key, key_len, 0);
  for (int i = 0; i < ANCHOR_BATCH; i++) {
    uint8_t *p = &buf[(size_t) i * 1600];
    p[0] = 0x80; p[1] = 96; p[7] = (uint8_t) i;
    gs_st32 (p + 8, 0x12345678);
    for (size_t j = 12; j < len; j++)
      p[j] = (uint8_t) (j * 7 + i);
  }
  t0 = now_s ();
  do {
    for (int r = 0; r < 16; r++) {
      for (int i = 0; i < ANCHOR_BATCH; i++) {
        uint8_t *p = &buf[(size_t) i * 1600];
        seq++;
        p[2] = (uint8_t) (seq >> 8); p[3] = (uint8_t) seq;
        pk[i] = GsSrtpPacket { &ctx[0], p, (uint32_t) len, 1600, 0, GSRTP_OK };
      }
      gsrtp_protect_batch (pk.data (), ANCHOR_BATCH, GSRTP_IMPL_AUTO);
    }
    n += 16 * ANCHOR_BATCH;
    t = now_s () - t0;
  } while (t < ANCHOR_SECONDS);
  gsrtp_ctx_clear (&ctx[0]);
  if (pinned)
    sched_setaffinity (0, sizeof old, &old);
  return n / t;
}

/* ---- end to end from host memory ----
 * One staging area per stream, the same layout pinned on the host and on
 * the device: [descs][packets, stride apart][out_len], so the H2D copy is
 * [descs][packets] and the D2H copy [packets][out_len], each one contiguous
 * copy as in gpssrtp.c. The packets are protected in place and come back
 * over their plaintext; the next batch on that stream reuses the area once
 * the host has seen the D2H done. The contexts' keys are copied once per
 * configuration (the element sends them with every batch: a few KB). The
 * packets are already in the pinned buffer: the element's memcpy from the
 * GstBuffers into staging and back is not counted. */
#define E2E_MAX_STREAMS 8
#define E2E_MAX_BATCH 65536
#define E2E_MAX_STRIDE ALIGN16 (12 + 1316 + GSRTP_MAX_TRAILER)
#define E2E_NCTX 64
#define E2E_SECONDS 0.4

typedef struct {
  cudaStream_t stream[E2E_MAX_STREAMS];
  cudaEvent_t done[E2E_MAX_STREAMS];   /* after the D2H copy */
  uint8_t *host[E2E_MAX_STREAMS];      /* pinned */
  uint8_t *dev[E2E_MAX_STREAMS];
  GsSrtpKeys *keys;
  char device[256];
} E2e;

typedef struct {
  E2e *e;
  GsSrtpCtx *ctx;
  uint32_t n, len, stride;
  int ns, warp;                        /* warp: srtp_protect_batch_warp */
  size_t data_off, out_off, total;
  long submitted, retired;
  double t0[E2E_MAX_STREAMS];          /* host preparation start, per stream's batch */
  std::vector<double> *lat;            /* us per retired batch; NULL: not recorded */
} E2eRun;

static void
e2e_layout (uint32_t n, uint32_t stride, size_t *data_off, size_t *out_off, size_t *total)
{
  *data_off = ALIGN16 ((size_t) n * sizeof (GsSrtpDesc));
  *out_off = *data_off + (size_t) n * stride;
  *total = *out_off + (size_t) n * sizeof (uint32_t);
}

static void
e2e_ctx_init (GsSrtpCtx *ctx, GsSrtpPolicy pol, int gcm)
{
  uint8_t key[46];
  for (int i = 0; i < 46; i++) key[i] = (uint8_t) (i * 29 + 3);
  for (int c = 0; c < E2E_NCTX; c++) {
    key[0] = (uint8_t) c;
    gsrtp_ctx_init (&ctx[c], pol, pol, key, gcm ? 28 : 30, 0);
  }
}

/* The next batch on its stream: new sequence numbers (packet g of the run
 * is sequence number g / E2E_NCTX of context g % E2E_NCTX), host half in
 * packet order, then the copies and the launch. snap: where to save the
 * plaintext batch for the check. */
static void
e2e_submit (E2eRun *r, uint8_t *snap)
{
  int s = (int) (r->submitted % r->ns);
  uint8_t *h = r->e->host[s], *dv = r->e->dev[s], *pk = h + r->data_off;
  GsSrtpDesc *d = (GsSrtpDesc *) h;
  cudaStream_t st = r->e->stream[s];
  uint64_t g0 = (uint64_t) r->submitted * r->n;

  r->t0[s] = now_s ();
  for (uint32_t i = 0; i < r->n; i++) {
    uint8_t *p = pk + (size_t) i * r->stride;
    uint32_t c = i % E2E_NCTX;
    uint16_t seq = (uint16_t) ((g0 + i) / E2E_NCTX);
    p[2] = (uint8_t) (seq >> 8); p[3] = (uint8_t) seq;
    if (gsrtp_prepare_protect (&r->ctx[c], p, r->len, r->stride, 0, &d[i]) != GSRTP_OK) {
      printf ("error - gsrtp_prepare_protect failed at packet %u\n", i);
      exit (1);
    }
    d[i].offset = i * r->stride;
    d[i].keys = c;
  }
  if (snap)
    memcpy (snap, pk, (size_t) r->n * r->stride);
  CK (cudaMemcpyAsync (dv, h, r->out_off, cudaMemcpyHostToDevice, st));
  if (r->warp)
    srtp_protect_batch_warp<<<(32 * r->n + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS,
        SRTP_GPU_THREADS, 0, st>>> (r->e->keys, (const GsSrtpDesc *) dv, r->n,
        dv + r->data_off, (uint32_t *) (dv + r->out_off));
  else
    srtp_protect_batch<<<(r->n + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS, SRTP_GPU_THREADS,
        0, st>>> (r->e->keys, (const GsSrtpDesc *) dv, r->n, dv + r->data_off,
        (uint32_t *) (dv + r->out_off));
  CK (cudaMemcpyAsync (h + r->data_off, dv + r->data_off, r->total - r->data_off,
          cudaMemcpyDeviceToHost, st));
  CK (cudaEventRecord (r->e->done[s], st));
  r->submitted++;
}

/* Retires the oldest batch in flight once its D2H is done (in order, as the
 * element hands packets on in order). wait = 0: only if done already.
 * Returns 1 if it retired one. */
static int
e2e_retire (E2eRun *r, int wait)
{
  int s = (int) (r->retired % r->ns);
  if (wait) {
    CK (cudaEventSynchronize (r->e->done[s]));
  } else {
    cudaError_t q = cudaEventQuery (r->e->done[s]);
    if (q == cudaErrorNotReady)
      return 0;
    CK (q);
  }
  if (r->lat)
    r->lat->push_back ((now_s () - r->t0[s]) * 1e6);
  r->retired++;
  return 1;
}

/* One configuration: fresh contexts, a warm-up round (one batch per
 * stream, the first checked against the CPU path), then batches for
 * E2E_SECONDS of wall time. */
static void
e2e_run (E2e *e, FILE *json, const char *op, GsSrtpPolicy pol, int gcm, size_t payload,
    uint32_t n, int ns, int warp, double anchor)
{
  E2eRun r;
  std::vector<GsSrtpCtx> ctx (E2E_NCTX), ref (E2E_NCTX);
  std::vector<GsSrtpKeys> keys (E2E_NCTX);
  std::vector<double> lat;
  std::vector<GsSrtpPacket> pk (n);
  std::vector<uint8_t> snap;
  long first, min_batches = 2 * ns + 4;
  double t0, wall, pps;

  memset (&r, 0, sizeof r);
  r.e = e;
  r.ctx = ctx.data ();
  r.n = n;
  r.ns = ns;
  r.warp = warp;
  r.len = (uint32_t) (12 + payload);
  r.stride = (uint32_t) ALIGN16 (r.len + gsrtp_rtp_overhead (pol));   /* room for the tag */
  e2e_layout (n, r.stride, &r.data_off, &r.out_off, &r.total);
  e2e_ctx_init (ctx.data (), pol, gcm);
  e2e_ctx_init (ref.data (), pol, gcm);
  for (int c = 0; c < E2E_NCTX; c++)
    keys[c] = ctx[c].rtp_keys;
  CK (cudaMemcpy (e->keys, keys.data (), sizeof (GsSrtpKeys) * E2E_NCTX, cudaMemcpyHostToDevice));
  for (int s = 0; s < ns; s++)
    for (uint32_t i = 0; i < n; i++) {
      uint8_t *p = e->host[s] + r.data_off + (size_t) i * r.stride;
      memset (p, 0, 12);
      p[0] = 0x80; p[1] = 96;
      gs_st32 (p + 4, i);
      gs_st32 (p + 8, 0x3000 + i % E2E_NCTX);
      memset (p + 12, (int) (uint8_t) (i * 7 + s + 1), payload);
    }

  /* warm-up; the first batch's bytes and lengths must be the CPU path's */
  snap.resize ((size_t) n * r.stride);
  e2e_submit (&r, snap.data ());
  e2e_retire (&r, 1);
  for (uint32_t i = 0; i < n; i++)
    pk[i] = GsSrtpPacket { &ref[i % E2E_NCTX], &snap[(size_t) i * r.stride], r.len, r.stride, 0,
        GSRTP_OK };
  if (gsrtp_protect_batch (pk.data (), n, GSRTP_IMPL_AUTO) != n) {
    printf ("error - %s e2e: the CPU reference failed\n", op);
    exit (1);
  }
  {
    const uint8_t *h = e->host[0];
    const uint32_t *out_len = (const uint32_t *) (h + r.out_off);
    for (uint32_t i = 0; i < n; i++)
      if (out_len[i] != pk[i].len ||
          memcmp (h + r.data_off + (size_t) i * r.stride, pk[i].data, pk[i].len)) {
        printf ("error - %s e2e%s (payload %zu, batch %u, %d streams): packet %u differs "
            "from the CPU reference\n", op, warp ? " warp" : "", payload, n, ns, i);
        exit (1);
      }
  }
  while (r.submitted < ns)
    e2e_submit (&r, NULL);
  while (r.retired < r.submitted)
    e2e_retire (&r, 1);

  /* timed: a stream's area is reused once its batch is retired, so with one
   * stream the host preparation never overlaps the copies and the kernel */
  r.lat = &lat;
  first = r.submitted;
  t0 = now_s ();
  for (;;) {
    if (r.submitted - r.retired == ns)
      e2e_retire (&r, 1);
    if (now_s () - t0 >= E2E_SECONDS && r.submitted - first >= min_batches)
      break;
    e2e_submit (&r, NULL);
    while (r.retired < r.submitted && e2e_retire (&r, 0))
      ;
  }
  while (r.retired < r.submitted)
    e2e_retire (&r, 1);
  wall = now_s () - t0;
  CK (cudaGetLastError ());
  pps = (double) (r.submitted - first) * n / wall;

  /* every packet of a batch has its batch's latency and batches are of
   * equal size, so these are per-packet percentiles. They exclude the time
   * a packet waits for its batch to fill (the scheduler's cycle I, which
   * the rtgpu bench reports). */
  std::sort (lat.begin (), lat.end ());
  size_t nl = lat.size ();
  double p50 = lat[(nl - 1) / 2];
  double p99 = lat[std::min (nl - 1, (size_t) std::ceil (0.99 * nl) - 1)];
  char line[600];
  snprintf (line, sizeof line, "{\"bench\":\"srtp_gpu\",\"op\":\"%s\",\"impl\":\"%s\","
      "\"payload\":%zu,\"batch\":%u,\"streams\":%d,\"pps\":%.0f,\"gbps\":%.3f,"
      "\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,\"lat_max_us\":%.1f,\"anchor\":%.0f,"
      "\"anchor_impl\":\"cpu-batched-1core\",\"ratio\":%.3f,\"device\":\"%s\"}",
      op, warp ? "gpu-e2e-warp" : "gpu-e2e", payload, n, ns, pps, pps * payload * 8 / 1e9,
      p50, p99, lat[nl - 1], anchor,
      anchor > 0 ? pps / anchor : 0, e->device);
  printf ("%s\n", line);
  if (json) fprintf (json, "%s\n", line);
  fflush (stdout);

  for (int c = 0; c < E2E_NCTX; c++) {
    gsrtp_ctx_clear (&ctx[c]);
    gsrtp_ctx_clear (&ref[c]);
  }
}

static void
e2e_open (E2e *e)
{
  cudaDeviceProp prop;
  size_t data_off, out_off, total;
  int j = 0;
  CK (cudaGetDeviceProperties (&prop, 0));
  for (const char *c = prop.name; *c && j < (int) sizeof e->device - 1; c++)
    if (*c != '"' && *c != '\\')
      e->device[j++] = *c;
  e->device[j] = 0;
  e2e_layout (E2E_MAX_BATCH, E2E_MAX_STRIDE, &data_off, &out_off, &total);
  for (int s = 0; s < E2E_MAX_STREAMS; s++) {
    CK (cudaStreamCreateWithFlags (&e->stream[s], cudaStreamNonBlocking));
    CK (cudaEventCreateWithFlags (&e->done[s], cudaEventDisableTiming));
    CK (cudaHostAlloc ((void **) &e->host[s], total, cudaHostAllocDefault));
    CK (cudaMalloc (&e->dev[s], total));
  }
  CK (cudaMalloc (&e->keys, sizeof (GsSrtpKeys) * E2E_NCTX));
}

static void
e2e_close (E2e *e)
{
  for (int s = 0; s < E2E_MAX_STREAMS; s++) {
    cudaStreamDestroy (e->stream[s]);
    cudaEventDestroy (e->done[s]);
    cudaFreeHost (e->host[s]);
    cudaFree (e->dev[s]);
  }
  cudaFree (e->keys);
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
  E2e e2e;
  e2e_open (&e2e);
  for (int gcm = 0; gcm < 2; gcm++) {
    GsSrtpPolicy pol = gcm ? GsSrtpPolicy { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL }
                           : GsSrtpPolicy { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80 };
    const char *op = gcm ? "AEAD_AES_128_GCM" : "AES_CM_128_HMAC_SHA1_80";
    const size_t sizes[2] = { 1316, 188 };
    for (int si = 0; si < 2; si++) {
      size_t len = 12 + sizes[si];
      double anchor = anchor_pps (pol, gcm ? 28 : 30, len);
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
      report (json, op, "gpu-kernel", sizes[si], pps, anchor);
      /* the same launch, one warp per packet */
      srtp_protect_batch_warp<<<grid * 32, SRTP_GPU_THREADS>>> (dk, dd, npkt, db, dl);
      cudaEventRecord (e0);
      for (int r = 0; r < reps; r++)
        srtp_protect_batch_warp<<<grid * 32, SRTP_GPU_THREADS>>> (dk, dd, npkt, db, dl);
      cudaEventRecord (e1);
      CK (cudaEventSynchronize (e1));
      cudaEventElapsedTime (&ms, e0, e1);
      CK (cudaGetLastError ());
      pps = (double) npkt * reps / (ms * 1e-3);
      report (json, op, "gpu-kernel-warp", sizes[si], pps, anchor);

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
      report (json, op, "gpu-kernel-unprotect", sizes[si], pps, anchor);
      cudaFree (dp);
      cudaFree (dk); cudaFree (dd); cudaFree (db); cudaFree (dl);

      /* end to end: every batch size x stream count at 1316 B, two stream
       * counts at 188 B, where the host half weighs most */
      static const uint32_t batches[] = { 256, 1024, 4096, 16384, 65536 };
      static const int streams_full[] = { 1, 2, 4, 8 }, streams_small[] = { 1, 4 };
      const int *streams = si == 0 ? streams_full : streams_small;
      int nstreams = si == 0 ? 4 : 2;
      for (int b = 0; b < 5; b++)
        for (int k = 0; k < nstreams; k++)
          e2e_run (&e2e, json, op, pol, gcm, sizes[si], batches[b], streams[k], 0, anchor);
      /* one warp per packet: where its lower latency should show (small
       * batches) and where the thread kernel should win (large ones) */
      static const uint32_t warp_batches[] = { 256, 1024, 4096, 16384 };
      for (int b = 0; b < 4; b++)
        for (int k = 0; k < nstreams; k += nstreams - 1)
          e2e_run (&e2e, json, op, pol, gcm, sizes[si], warp_batches[b], streams[k], 1, anchor);
    }
  }
  e2e_close (&e2e);
  if (json) fclose (json);
  return 0;
}
