/* bench_rlnc_gpu.cu: GB/s of coded output of rlnc_product_batch (n = m),
 * kernel only (cudaEvent) and end to end from pinned host memory (copy in,
 * product, copy out), plus batched products (64 generations per launch).
 * Rows of each configuration's output are checked against rlnc_encode_ref
 * (exit 1 on a mismatch). The grid is rlnc_gpu_blocks_x's, as the coder's.
 * Usage: bench_rlnc_gpu [--quick] [--json FILE]. Prints SKIP and exits 0
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

static void
emit (const char *op, int m, size_t k, int batch, double gbps)
{
  char line[512];
  snprintf (line, sizeof line,
            "{\"bench\":\"rlnc\",\"op\":\"%s\",\"m\":%d,\"k\":%zu,\"batch\":%d,"
            "\"mbps\":%.1f,\"gbps\":%.2f,\"device\":\"%s\"}",
            op, m, k, batch, gbps * 1e3, gbps, devname);
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
  float kms = time_ms (kern, 20);
  CK (cudaGetLastError ());
  float ems = time_ms (e2e, 10);
  CK (cudaGetLastError ());
  /* a rate of wrong output is no rate: spot-check the first and last rows of
   * the first and last generation (hout is from the last e2e run) */
  for (int b : { 0, batch - 1 })
    for (int r : { 0, m - 1 }) {
      std::vector<uint8_t> want (k);
      std::vector<const uint8_t *> sp (m);
      for (int i = 0; i < m; i++) sp[i] = hsrc + b * gen + (size_t) i * k;
      uint8_t *op = want.data ();
      rlnc_encode_ref (k, m, 1, hcoef + ((size_t) b * m + r) * m, sp.data (), &op);
      if (memcmp (want.data (), hout + b * gen + (size_t) r * k, k) != 0) {
        fprintf (stderr, "m=%d k=%zu batch=%d: generation %d row %d differs from "
                 "rlnc_encode_ref\n", m, k, batch, b, r);
        exit (1);
      }
    }
  double bytes = (double) gen * batch;
  printf ("# m=%3d k=%5zu batch=%2d | kernel %8.2f GB/s | end-to-end (pinned) %8.2f GB/s\n",
          m, k, batch, bytes / kms / 1e6, bytes / ems / 1e6);
  emit ("gpu-encode-kernel", m, k, batch, bytes / kms / 1e6);
  emit ("gpu-encode-e2e", m, k, batch, bytes / ems / 1e6);
  cudaFree (djobs); cudaFree (dsrc); cudaFree (dout); cudaFree (dcoef);
  cudaFreeHost (hsrc); cudaFreeHost (hout); cudaFreeHost (hcoef);
}

int
main (int argc, char **argv)
{
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "--quick")) quick = 1;
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
  printf ("# rlnc GPU bench on %s; GB/s of coded output, n = m\n", devname);
  const int ms[] = { 16, 64, 128, 256 };
  const size_t ks[] = { 1024, 4096, 16384 };
  if (quick) {
    bench (64, 4096, 1);
    bench (64, 4096, 64);
  } else
    for (int m : ms)
      for (size_t k : ks) {
        bench (m, k, 1);
        bench (m, k, 64);
      }
  if (json) fclose (json);
  return 0;
}
