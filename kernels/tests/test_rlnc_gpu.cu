/* test_rlnc_gpu.cu: rlnc_product_batch on a real device, byte for byte
 * against rlnc_encode_ref; and a full decode with the inverse from the CPU
 * decoder and the product on the GPU. Exit 77 (skipped) without a device. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "rlnc/rlnc_cuda.cu"   /* the kernel itself, for the runtime API */

static int n_pass, n_fail;
static void
check (bool ok, const char *what)
{
  printf ("%s - %s\n", ok ? "ok" : "FAIL", what);
  ok ? n_pass++ : n_fail++;
}
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf ("FAIL - %s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

static uint32_t rs = 12345;
static uint8_t rnd8 () { rs = rs * 1664525u + 1013904223u; return (uint8_t) (rs >> 24); }

struct Shape { uint32_t m, n; uint64_t k; };

int
main ()
{
  int ndev = 0;
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  const Shape shapes[] = { {1, 1, 1}, {3, 5, 17}, {16, 9, 1023}, {64, 64, 4096},
    {255, 13, 4097}, {256, 70, 100}, {7, 512, 31}, {32, 20, 70000}, {256, 256, 4096} };
  const int nj = sizeof shapes / sizeof *shapes;
  std::vector<RlncGpuProduct> jobs (nj);
  std::vector<std::vector<uint8_t>> hc (nj), hs (nj);
  std::vector<void *> dmem;
  uint64_t maxnk = 0;
  for (int j = 0; j < nj; j++) {
    const Shape &s = shapes[j];
    uint64_t pitch = (s.k + 15) & ~15ull;
    hc[j].resize (s.m * s.n);
    hs[j].resize (s.m * s.k);
    for (auto &b : hc[j]) b = rnd8 ();
    for (auto &b : hs[j]) b = rnd8 ();
    void *dc, *ds, *dout;
    CK (cudaMalloc (&dc, s.m * s.n));
    CK (cudaMalloc (&ds, pitch * s.m));
    CK (cudaMalloc (&dout, pitch * s.n));
    dmem.push_back (dc); dmem.push_back (ds); dmem.push_back (dout);
    CK (cudaMemcpy (dc, hc[j].data (), s.m * s.n, cudaMemcpyHostToDevice));
    CK (cudaMemcpy2D (ds, pitch, hs[j].data (), s.k, s.k, s.m, cudaMemcpyHostToDevice));
    jobs[j] = RlncGpuProduct { (uint64_t) dc, (uint64_t) ds, (uint64_t) dout, s.k, pitch, pitch, s.m, s.n };
    if (s.n * s.k > maxnk) maxnk = s.n * s.k;
  }
  RlncGpuProduct *djobs;
  CK (cudaMalloc (&djobs, sizeof (RlncGpuProduct) * nj));
  CK (cudaMemcpy (djobs, jobs.data (), sizeof (RlncGpuProduct) * nj, cudaMemcpyHostToDevice));
  rlnc_product_batch<<<dim3 (rlnc_gpu_blocks_x (maxnk), nj), RLNC_GPU_THREADS>>> (djobs, nj);
  CK (cudaGetLastError ());
  CK (cudaDeviceSynchronize ());
  for (int j = 0; j < nj; j++) {
    const Shape &s = shapes[j];
    std::vector<uint8_t> got (s.n * s.k), want (s.n * s.k);
    CK (cudaMemcpy2D (got.data (), s.k, (void *) jobs[j].out, jobs[j].out_pitch, s.k, s.n,
                      cudaMemcpyDeviceToHost));
    std::vector<const uint8_t *> sp (s.m);
    std::vector<uint8_t *> op (s.n);
    for (uint32_t i = 0; i < s.m; i++) sp[i] = hs[j].data () + i * s.k;
    for (uint32_t i = 0; i < s.n; i++) op[i] = want.data () + i * s.k;
    rlnc_encode_ref (s.k, s.m, s.n, hc[j].data (), sp.data (), op.data ());
    char what[128];
    snprintf (what, sizeof what, "gpu product m=%u n=%u k=%llu == encode_ref", s.m, s.n,
              (unsigned long long) s.k);
    check (got == want, what);
  }

  /* full decode: CPU elimination, GPU product with the inverse */
  {
    const int m = 64;
    const size_t k = 4096;
    std::vector<uint8_t> src (m * k), cv ((m + 4) * m), pk ((m + 4) * k), out (m * k);
    for (auto &b : src) b = rnd8 ();
    for (auto &b : cv) b = 1 + rnd8 () % 255;
    std::vector<const uint8_t *> sp (m);
    std::vector<uint8_t *> op (m + 4);
    for (int i = 0; i < m; i++) sp[i] = src.data () + i * k;
    for (int i = 0; i < m + 4; i++) op[i] = pk.data () + i * k;
    rlnc_encode (k, m, m + 4, cv.data (), sp.data (), op.data ());
    RlncDecoder *d = rlnc_decoder_new (m, k);
    for (int i = 0; i < m + 4 && rlnc_decoder_rank (d) < m; i++)
      rlnc_decoder_add (d, cv.data () + i * m, pk.data () + i * k);
    const uint8_t *inv = rlnc_decoder_inverse (d);
    check (inv != NULL, "gpu decode: CPU decoder reached full rank");
    if (inv) {
      const uint8_t *const *pl = rlnc_decoder_payloads (d);
      uint8_t *dc, *ds, *dout;
      CK (cudaMalloc (&dc, m * m));
      CK (cudaMalloc (&ds, m * k));
      CK (cudaMalloc (&dout, m * k));
      CK (cudaMemcpy (dc, inv, m * m, cudaMemcpyHostToDevice));
      for (int i = 0; i < m; i++)
        CK (cudaMemcpy (ds + i * k, pl[i], k, cudaMemcpyHostToDevice));
      RlncGpuProduct job = { (uint64_t) dc, (uint64_t) ds, (uint64_t) dout, k, k, k, m, m };
      CK (cudaMemcpy (djobs, &job, sizeof job, cudaMemcpyHostToDevice));
      rlnc_product_batch<<<dim3 (rlnc_gpu_blocks_x (m * k), 1), RLNC_GPU_THREADS>>> (djobs, 1);
      CK (cudaGetLastError ());
      CK (cudaMemcpy (out.data (), dout, m * k, cudaMemcpyDeviceToHost));
      check (out == src, "gpu decode m=64 k=4096: inverse x payloads on GPU == original");
      cudaFree (dc); cudaFree (ds); cudaFree (dout);
    }
    rlnc_decoder_free (d);
  }
  for (void *p : dmem) cudaFree (p);
  cudaFree (djobs);
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
