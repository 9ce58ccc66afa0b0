/* test_rlnc_gpu.cu: rlnc_product_batch on a real device, byte for byte
 * against rlnc_encode_ref; and a full decode with the inverse from the CPU
 * decoder and the product on the GPU. Exit 77 (skipped) without a device.
 *
 * Each batch mixes shapes (m up to 256, n up to 512, k not a multiple of 16,
 * distinct src and out pitches wider than k) in one launch, and is run with
 * the grid of rlnc_gpu_blocks_x and with grids too small for it (1, 3
 * blocks: the stride loop and the reuse of the shared coefficient stage
 * between work items, which the sequential CPU emulation cannot race) and
 * larger than it (idle blocks). Output padding must stay untouched. */
#include <algorithm>
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
static uint32_t rnd_range (uint32_t lo, uint32_t hi)   /* [lo, hi] */
{
  rs = rs * 1664525u + 1013904223u;
  return lo + (uint32_t) (((uint64_t) (rs >> 8) * (hi - lo + 1)) >> 24);
}

struct Shape { uint32_t m, n; uint64_t k; };

static const uint8_t PAD = 0xA5;

/* One batch: every shape a job of a single launch, run once per grid.x in
 * `grids` (0 = rlnc_gpu_blocks_x over the batch). */
static void
run_batch (const char *name, const std::vector<Shape> &shapes,
           const std::vector<unsigned> &grids)
{
  const int nj = (int) shapes.size ();
  std::vector<RlncGpuProduct> jobs (nj);
  std::vector<std::vector<uint8_t>> hc (nj), hs (nj), want (nj);
  std::vector<void *> dmem;
  unsigned blocks_x = 1;

  for (int j = 0; j < nj; j++) {
    const Shape &s = shapes[j];
    const uint64_t row = (s.k + 15) & ~15ull;
    /* pitches differ from each other and from the tight one */
    const uint64_t sp = row + 16 * (j % 3), op = row + 16 * ((j + 1) % 2) + 16;
    hc[j].resize ((size_t) s.m * s.n);
    hs[j].resize ((size_t) s.m * s.k);
    for (auto &b : hc[j]) b = rnd8 ();
    for (auto &b : hs[j]) b = rnd8 ();
    void *dc, *ds, *dout;
    CK (cudaMalloc (&dc, (size_t) s.m * s.n));
    CK (cudaMalloc (&ds, sp * s.m));
    CK (cudaMalloc (&dout, op * s.n));
    dmem.push_back (dc); dmem.push_back (ds); dmem.push_back (dout);
    CK (cudaMemcpy (dc, hc[j].data (), (size_t) s.m * s.n, cudaMemcpyHostToDevice));
    CK (cudaMemcpy2D (ds, sp, hs[j].data (), s.k, s.k, s.m, cudaMemcpyHostToDevice));
    jobs[j] = RlncGpuProduct { (uint64_t) dc, (uint64_t) ds, (uint64_t) dout, s.k, sp, op,
                               s.m, s.n };
    blocks_x = std::max (blocks_x, rlnc_gpu_blocks_x (s.n, s.k));

    want[j].resize ((size_t) s.n * s.k);
    std::vector<const uint8_t *> spp (s.m);
    std::vector<uint8_t *> opp (s.n);
    for (uint32_t i = 0; i < s.m; i++) spp[i] = hs[j].data () + (size_t) i * s.k;
    for (uint32_t i = 0; i < s.n; i++) opp[i] = want[j].data () + (size_t) i * s.k;
    rlnc_encode_ref (s.k, (int) s.m, (int) s.n, hc[j].data (), spp.data (), opp.data ());
  }
  RlncGpuProduct *djobs;
  CK (cudaMalloc (&djobs, sizeof (RlncGpuProduct) * nj));
  CK (cudaMemcpy (djobs, jobs.data (), sizeof (RlncGpuProduct) * nj, cudaMemcpyHostToDevice));

  for (unsigned g : grids) {
    const unsigned gx = g ? g : blocks_x;
    for (int j = 0; j < nj; j++)
      CK (cudaMemset ((void *) jobs[j].out, PAD, jobs[j].out_pitch * shapes[j].n));
    rlnc_product_batch<<<dim3 (gx, nj), RLNC_GPU_THREADS>>> (djobs, (uint32_t) nj);
    CK (cudaGetLastError ());
    CK (cudaDeviceSynchronize ());
    int bad_jobs = 0;
    for (int j = 0; j < nj; j++) {
      const Shape &s = shapes[j];
      const uint64_t op = jobs[j].out_pitch;
      std::vector<uint8_t> got (op * s.n);
      CK (cudaMemcpy (got.data (), (void *) jobs[j].out, got.size (), cudaMemcpyDeviceToHost));
      uint64_t rows_bad = 0, pad_bad = 0;
      for (uint32_t r = 0; r < s.n; r++) {
        rows_bad += memcmp (got.data () + r * op, want[j].data () + (size_t) r * s.k, s.k) != 0;
        for (uint64_t b = s.k; b < op; b++)
          pad_bad += got[r * op + b] != PAD;
      }
      if (rows_bad || pad_bad) {
        printf ("# %s grid.x=%u job %d m=%u n=%u k=%llu: %llu rows wrong, %llu pad bytes "
                "touched\n", name, gx, j, s.m, s.n, (unsigned long long) s.k,
                (unsigned long long) rows_bad, (unsigned long long) pad_bad);
        bad_jobs++;
      }
    }
    char what[160];
    snprintf (what, sizeof what, "%s: %d products in one launch, grid.x=%u%s == encode_ref",
              name, nj, gx, g ? "" : " (rlnc_gpu_blocks_x)");
    check (bad_jobs == 0, what);
  }
  for (void *p : dmem) CK (cudaFree (p));
  CK (cudaFree (djobs));
}

int
main ()
{
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount (&ndev);
  if (e != cudaSuccess || ndev == 0) {
    /* also the answer when the driver is older than this runtime: say so */
    printf ("SKIP: no usable CUDA device (%s)\n",
            e != cudaSuccess ? cudaGetErrorString (e) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop;
  CK (cudaGetDeviceProperties (&prop, 0));
  printf ("# device 0: %s, sm_%d%d\n", prop.name, prop.major, prop.minor);

  const std::vector<Shape> mixed = { {1, 1, 1}, {3, 5, 17}, {16, 9, 1023}, {64, 64, 4096},
    {255, 13, 4097}, {256, 70, 100}, {7, 512, 31}, {32, 20, 70000}, {256, 256, 4096},
    {256, 512, 1000}, {1, 512, 16}, {200, 3, 65541} };
  run_batch ("mixed shapes", mixed, { 0, 1, 3, RLNC_GPU_BLOCKS_X });

  /* what the GPU coder sends: up to 64 products, gridDim.y = 64 */
  std::vector<Shape> coder;
  for (int j = 0; j < 64; j++)
    coder.push_back (Shape { rnd_range (1, 64), rnd_range (1, 32), rnd_range (1, 9000) });
  run_batch ("64 random products", coder, { 0, 2 });

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
      RlncGpuProduct *djob;
      CK (cudaMalloc (&dc, m * m));
      CK (cudaMalloc (&ds, m * k));
      CK (cudaMalloc (&dout, m * k));
      CK (cudaMalloc (&djob, sizeof (RlncGpuProduct)));
      CK (cudaMemcpy (dc, inv, m * m, cudaMemcpyHostToDevice));
      for (int i = 0; i < m; i++)
        CK (cudaMemcpy (ds + i * k, pl[i], k, cudaMemcpyHostToDevice));
      RlncGpuProduct job = { (uint64_t) dc, (uint64_t) ds, (uint64_t) dout, k, k, k, m, m };
      CK (cudaMemcpy (djob, &job, sizeof job, cudaMemcpyHostToDevice));
      rlnc_product_batch<<<dim3 (rlnc_gpu_blocks_x (m, k), 1), RLNC_GPU_THREADS>>> (djob, 1);
      CK (cudaGetLastError ());
      CK (cudaDeviceSynchronize ());
      CK (cudaMemcpy (out.data (), dout, m * k, cudaMemcpyDeviceToHost));
      check (out == src, "gpu decode m=64 k=4096: inverse x payloads on GPU == original");
      cudaFree (dc); cudaFree (ds); cudaFree (dout); cudaFree (djob);
    }
    rlnc_decoder_free (d);
  }
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
