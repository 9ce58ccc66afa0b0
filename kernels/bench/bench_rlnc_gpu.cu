/* bench_rlnc_gpu.cu: GB/s of coded output of rlnc_product_batch (n = m),
 * kernel only (cudaEvent) and end to end from pinned host memory (copy in,
 * product, copy out), plus batched products (64 generations per launch).
 * End to end is timed twice: one stream (copy in, product, copy out in
 * sequence) and pipelined (the batch cut into chunks on 3 streams, so the
 * copy in of one chunk, the product of another and the copy out of a third
 * overlap). Beside them, the PCIe copy rates of the same run (host to device,
 * device to host, both at once): coded output cannot leave faster than the
 * slower direction allows, since every output byte needs one input byte in. 
 * Rows of each configuration's output are checked against rlnc_encode_ref
 * (exit 1 on a mismatch). The grid is rlnc_gpu_blocks_x's, as the coder's.
 * Usage: bench_rlnc_gpu [--quick | --m-sweep] [--json FILE]. Prints SKIP and exits 0
 * without a device. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#include "rlnc/rlnc_cuda.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf (stderr, "%s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

static FILE *json;
static char devname[256];

#ifndef RLNC_BENCH_VARIANT   /* a build of the kernel with other constants */
#define RLNC_BENCH_VARIANT "default"
#endif
static double pcie_bound;   /* GB/s: the slower of the two directions at once */

static void
emit (const char *op, int m, size_t k, int batch, double gbps)
{
  char line[640];
  int n = snprintf (line, sizeof line,
            "{\"bench\":\"rlnc\",\"op\":\"%s\",\"variant\":\"%s\",\"m\":%d,"
            "\"k\":%zu,\"batch\":%d,\"mbps\":%.1f,\"gbps\":%.2f",
            op, RLNC_BENCH_VARIANT, m, k, batch, gbps * 1e3, gbps);
  if (pcie_bound > 0 && strstr (op, "e2e"))
    n += snprintf (line + n, sizeof line - n,
                   ",\"anchor_impl\":\"pcie-bidir\",\"anchor\":%.2f,\"ratio\":%.3f",
                   pcie_bound, gbps / pcie_bound);
  snprintf (line + n, sizeof line - n, ",\"device\":\"%s\"}", devname);
  printf ("%s\n", line);
  if (json) fprintf (json, "%s\n", line);
}

/* Median ms of `reps` timed runs of fn. */
template <typename F> static float
time_ms (F fn, int reps)
{
  cudaEvent_t a, b;
  CK (cudaEventCreate (&a)); CK (cudaEventCreate (&b));
  fn ();
  std::vector<float> t;
  for (int i = 0; i < reps; i++) {
    CK (cudaEventRecord (a));
    fn ();
    CK (cudaEventRecord (b));
    CK (cudaEventSynchronize (b));
    float ms; CK (cudaEventElapsedTime (&ms, a, b));
    t.push_back (ms);
  }
  std::sort (t.begin (), t.end ());
  cudaEventDestroy (a); cudaEventDestroy (b);
  return t[t.size () / 2];
}

static void
bench (int m, size_t k, int batch)
{
  const size_t gen = (size_t) m * k;   /* src bytes = out bytes per generation */
  uint8_t *hsrc, *hout, *hcoef;
  CK (cudaMallocHost (&hsrc, gen * batch));
  CK (cudaMallocHost (&hout, gen * batch));
  CK (cudaMallocHost (&hcoef, (size_t) m * m * batch));
  for (size_t i = 0; i < gen * batch; i++) hsrc[i] = (uint8_t) (i * 131 + 7);
  for (size_t i = 0; i < (size_t) m * m * batch; i++) hcoef[i] = (uint8_t) (1 + i % 255);
  uint8_t *dsrc, *dout, *dcoef;
  CK (cudaMalloc (&dsrc, gen * batch));
  CK (cudaMalloc (&dout, gen * batch));
  CK (cudaMalloc (&dcoef, (size_t) m * m * batch));
  std::vector<RlncGpuProduct> jobs (batch);
  for (int b = 0; b < batch; b++)
    jobs[b] = RlncGpuProduct { (uint64_t) (dcoef + (size_t) b * m * m),
      (uint64_t) (dsrc + b * gen), (uint64_t) (dout + b * gen), k, k, k,
      (uint32_t) m, (uint32_t) m };
  RlncGpuProduct *djobs;
  CK (cudaMalloc (&djobs, sizeof (RlncGpuProduct) * batch));
  CK (cudaMemcpy (djobs, jobs.data (), sizeof (RlncGpuProduct) * batch, cudaMemcpyHostToDevice));
  CK (cudaMemcpy (dcoef, hcoef, (size_t) m * m * batch, cudaMemcpyHostToDevice));
  CK (cudaMemcpy (dsrc, hsrc, gen * batch, cudaMemcpyHostToDevice));
  dim3 grid (rlnc_gpu_blocks_x ((uint32_t) m, k), batch);
  auto kern = [&] { rlnc_product_batch<<<grid, RLNC_GPU_THREADS>>> (djobs, batch); };
  auto e2e = [&] {
    cudaMemcpyAsync (dcoef, hcoef, (size_t) m * m * batch, cudaMemcpyHostToDevice);
    cudaMemcpyAsync (dsrc, hsrc, gen * batch, cudaMemcpyHostToDevice);
    rlnc_product_batch<<<grid, RLNC_GPU_THREADS>>> (djobs, batch);
    cudaMemcpyAsync (hout, dout, gen * batch, cudaMemcpyDeviceToHost);
  };
  /* a rate of wrong output is no rate: spot-check the first and last rows of
   * the first and last generation after each end-to-end run */
  auto check = [&] (const char *how) {
    for (int b : { 0, batch - 1 })
      for (int r : { 0, m - 1 }) {
        std::vector<uint8_t> want (k);
        std::vector<const uint8_t *> sp (m);
        for (int i = 0; i < m; i++) sp[i] = hsrc + b * gen + (size_t) i * k;
        uint8_t *op = want.data ();
        rlnc_encode_ref (k, m, 1, hcoef + ((size_t) b * m + r) * m, sp.data (), &op);
        if (memcmp (want.data (), hout + b * gen + (size_t) r * k, k) != 0) {
          fprintf (stderr, "m=%d k=%zu batch=%d (%s): generation %d row %d differs "
                   "from rlnc_encode_ref\n", m, k, batch, how, b, r);
          exit (1);
        }
      }
  };
  /* pipelined: chunks of the batch round-robin on 3 streams */
  const int nchunks = batch >= 8 ? 8 : batch, nstreams = 3;
  cudaStream_t st[nstreams];
  for (int i = 0; i < nstreams; i++)
    CK (cudaStreamCreateWithFlags (&st[i], cudaStreamNonBlocking));
  cudaEvent_t done[nstreams];
  for (int i = 0; i < nstreams; i++)
    CK (cudaEventCreateWithFlags (&done[i], cudaEventDisableTiming));
  auto e2e_pipelined = [&] {
    for (int c = 0; c < nchunks; c++) {
      int b0 = batch * c / nchunks, b1 = batch * (c + 1) / nchunks, nb = b1 - b0;
      cudaStream_t s = st[c % nstreams];
      cudaMemcpyAsync (dcoef + (size_t) b0 * m * m, hcoef + (size_t) b0 * m * m,
                       (size_t) m * m * nb, cudaMemcpyHostToDevice, s);
      cudaMemcpyAsync (dsrc + b0 * gen, hsrc + b0 * gen, gen * nb,
                       cudaMemcpyHostToDevice, s);
      rlnc_product_batch<<<dim3 (grid.x, nb), RLNC_GPU_THREADS, 0, s>>> (djobs + b0, nb);
      cudaMemcpyAsync (hout + b0 * gen, dout + b0 * gen, gen * nb,
                       cudaMemcpyDeviceToHost, s);
    }
    /* the timing stream (legacy default) waits for all three */
    for (int i = 0; i < nstreams; i++) {
      cudaEventRecord (done[i], st[i]);
      cudaStreamWaitEvent (0, done[i], 0);
    }
  };
  float kms = time_ms (kern, 20);
  CK (cudaGetLastError ());
  float pms = time_ms (e2e_pipelined, 10);
  CK (cudaGetLastError ());
  check ("pipelined");
  memset (hout, 0, gen * batch);
  float ems = time_ms (e2e, 10);
  CK (cudaGetLastError ());
  check ("one stream");
  double bytes = (double) gen * batch;
  printf ("# m=%3d k=%5zu batch=%2d | kernel %8.2f GB/s | end-to-end (pinned) %8.2f GB/s"
          " | pipelined %8.2f GB/s = %.2f of PCIe\n",
          m, k, batch, bytes / kms / 1e6, bytes / ems / 1e6, bytes / pms / 1e6,
          bytes / pms / 1e6 / pcie_bound);
  emit ("gpu-encode-kernel", m, k, batch, bytes / kms / 1e6);
  emit ("gpu-encode-e2e", m, k, batch, bytes / ems / 1e6);
  emit ("gpu-encode-e2e-pipelined", m, k, batch, bytes / pms / 1e6);
  for (int i = 0; i < nstreams; i++) {
    cudaEventDestroy (done[i]);
    cudaStreamDestroy (st[i]);
  }
  cudaFree (djobs); cudaFree (dsrc); cudaFree (dout); cudaFree (dcoef);
  cudaFreeHost (hsrc); cudaFreeHost (hout); cudaFreeHost (hcoef);
}

/* PCIe copy rates from and to pinned host memory, 64 MiB each way: each
 * direction alone, then both at once on two streams (what a pipelined coder
 * sees); pcie_bound is the slower direction of the concurrent run. */
static void
bench_pcie (void)
{
  const size_t sz = 64u << 20;
  uint8_t *h_in, *h_out, *d_in, *d_out;
  CK (cudaMallocHost (&h_in, sz));
  CK (cudaMallocHost (&h_out, sz));
  CK (cudaMalloc (&d_in, sz));
  CK (cudaMalloc (&d_out, sz));
  memset (h_in, 1, sz);
  cudaStream_t a, b;
  CK (cudaStreamCreateWithFlags (&a, cudaStreamNonBlocking));
  CK (cudaStreamCreateWithFlags (&b, cudaStreamNonBlocking));
  float h2d = time_ms ([&] { cudaMemcpyAsync (d_in, h_in, sz, cudaMemcpyHostToDevice, 0); }, 10);
  float d2h = time_ms ([&] { cudaMemcpyAsync (h_out, d_out, sz, cudaMemcpyDeviceToHost, 0); }, 10);
  /* both at once: time each direction with its own events */
  std::vector<float> up, down;
  for (int r = 0; r < 10; r++) {
    cudaEvent_t a0, a1, b0, b1;
    CK (cudaEventCreate (&a0)); CK (cudaEventCreate (&a1));
    CK (cudaEventCreate (&b0)); CK (cudaEventCreate (&b1));
    CK (cudaDeviceSynchronize ());
    cudaEventRecord (a0, a); cudaEventRecord (b0, b);
    cudaMemcpyAsync (d_in, h_in, sz, cudaMemcpyHostToDevice, a);
    cudaMemcpyAsync (h_out, d_out, sz, cudaMemcpyDeviceToHost, b);
    cudaEventRecord (a1, a); cudaEventRecord (b1, b);
    CK (cudaDeviceSynchronize ());
    float ta, tb;
    cudaEventElapsedTime (&ta, a0, a1); cudaEventElapsedTime (&tb, b0, b1);
    up.push_back (ta); down.push_back (tb);
    cudaEventDestroy (a0); cudaEventDestroy (a1);
    cudaEventDestroy (b0); cudaEventDestroy (b1);
  }
  std::sort (up.begin (), up.end ()); std::sort (down.begin (), down.end ());
  double bi_up = sz / up[5] / 1e6, bi_down = sz / down[5] / 1e6;
  pcie_bound = std::min (bi_up, bi_down);
  printf ("# PCIe, 64 MiB pinned: host to device %.2f GB/s, device to host %.2f GB/s;"
          " both at once %.2f up + %.2f down\n", sz / h2d / 1e6, sz / d2h / 1e6,
          bi_up, bi_down);
  emit ("pcie-h2d", 0, sz, 1, sz / h2d / 1e6);
  emit ("pcie-d2h", 0, sz, 1, sz / d2h / 1e6);
  emit ("pcie-bidir-h2d", 0, sz, 1, bi_up);
  emit ("pcie-bidir-d2h", 0, sz, 1, bi_down);
  cudaStreamDestroy (a); cudaStreamDestroy (b);
  cudaFree (d_in); cudaFree (d_out); cudaFreeHost (h_in); cudaFreeHost (h_out);
}

int
main (int argc, char **argv)
{
  int quick = 0, sweep = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "--quick")) quick = 1;
    else if (!strcmp (argv[i], "--m-sweep")) sweep = 1;
    else if (!strcmp (argv[i], "--json") && i + 1 < argc) json = fopen (argv[++i], "w");
  }
  int ndev = 0;
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 0;
  }
  cudaDeviceProp p;
  CK (cudaGetDeviceProperties (&p, 0));
  snprintf (devname, sizeof devname, "%s", p.name);
  printf ("# rlnc GPU bench on %s (kernel %s); GB/s of coded output, n = m\n",
          devname, RLNC_BENCH_VARIANT);
  bench_pcie ();
  const int ms[] = { 16, 64, 128, 256 };
  const size_t ks[] = { 1024, 4096, 8192, 16384 };
  if (quick) {
    bench (64, 4096, 1);
    bench (64, 4096, 64);
  } else if (sweep) {   /* what tells kernel variants apart */
    for (int m : { 16, 64, 256 })
      bench (m, 4096, 64);
  } else
    for (int m : ms)
      for (size_t k : ks) {
        bench (m, k, 1);
        bench (m, k, 64);
      }
  if (json) fclose (json);
  return 0;
}
