/* test_dxt_gpu.cu: the DXT CUDA kernels on a real device, byte for byte
 * against the CPU (dxt_encode_slice / dxt_decode_frame), for every codec,
 * both qualities, several input formats and odd sizes, whole frames and
 * slices. Exit 77 (skipped) without a device. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "dxt/dxt_cuda.cu"   /* the kernels themselves, for the runtime API */

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
static uint8_t rnd8 () { rs = rs * 1664525u + 1013904223u; return (uint8_t) (rs >> 24); }

int
main ()
{
  int ndev = 0;
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  const uint32_t sizes[][2] = { { 1, 1 }, { 5, 3 }, { 37, 22 }, { 1918, 1080 } };
  const int fmts[] = { DXT_FMT_RGBA, DXT_FMT_BGRX, DXT_FMT_UYVY, DXT_FMT_YUY2, DXT_FMT_I420, DXT_FMT_NV12 };
  for (auto &sz : sizes) {
    uint32_t w = sz[0], h = sz[1];
    for (int f : fmts) {
      /* planes: smooth content plus noise, strides padded */
      uint32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
      uint32_t s0 = (f <= DXT_FMT_BGRX ? 4 * w : (f <= DXT_FMT_YUY2 ? 4 * cw : w)) + 16;
      uint32_t s1 = (f == DXT_FMT_NV12 ? 2 * cw : cw) + 8;
      std::vector<uint8_t> p0 ((size_t) s0 * h), p1 ((size_t) s1 * ch + 1), p2 ((size_t) s1 * ch + 1);
      for (size_t i = 0; i < p0.size (); i++) p0[i] = (uint8_t) ((i * 3) / 7 + (rnd8 () & 15));
      for (auto &b : p1) b = rnd8 ();
      for (auto &b : p2) b = rnd8 ();
      uint8_t *d0, *d1, *d2;
      CK (cudaMalloc (&d0, p0.size ())); CK (cudaMalloc (&d1, p1.size ())); CK (cudaMalloc (&d2, p2.size ()));
      CK (cudaMemcpy (d0, p0.data (), p0.size (), cudaMemcpyHostToDevice));
      CK (cudaMemcpy (d1, p1.data (), p1.size (), cudaMemcpyHostToDevice));
      CK (cudaMemcpy (d2, p2.data (), p2.size (), cudaMemcpyHostToDevice));
      DxtImage hi = {}, di = {};
      hi.width = di.width = w; hi.height = di.height = h; hi.format = di.format = f;
      hi.plane[0] = p0.data (); hi.plane[1] = p1.data (); hi.plane[2] = p2.data ();
      di.plane[0] = d0; di.plane[1] = d1; di.plane[2] = d2;
      for (int k = 0; k < 3; k++) hi.stride[k] = di.stride[k] = k == 0 ? s0 : s1;
      for (int codec = 0; codec < 3; codec++)
        for (int q = 0; q < 2; q++) {
          if (w > 1000 && q == DXT_HIGH && f != DXT_FMT_RGBA)
            continue;   /* CPU reference time */
          size_t fb = dxt_frame_bytes ((DxtCodec) codec, w, h), rb = dxt_row_bytes ((DxtCodec) codec, w);
          uint32_t rows = dxt_blocks_y (h);
          std::vector<uint8_t> ref (fb), got (fb);
          dxt_encode_frame (&hi, (DxtCodec) codec, (DxtQuality) q, ref.data ());
          uint8_t *dout;
          CK (cudaMalloc (&dout, fb));
          CK (cudaMemset (dout, 0, fb));
          /* slices of up to 45 block rows (odd batch on purpose) */
          for (uint32_t r = 0; r < rows; r += 45) {
            DxtGpuEncode job;
            job.img = di; job.row0 = r; job.nrows = rows - r < 45 ? rows - r : 45;
            job.out = (uint64_t) (dout + r * rb); job.codec = codec; job.quality = q;
            uint64_t nb = (uint64_t) job.nrows * dxt_blocks_x (w);
            dxt_encode_slice_kernel<<<dxt_gpu_grid (nb), DXT_GPU_THREADS>>> (job);
          }
          CK (cudaGetLastError ());
          CK (cudaMemcpy (got.data (), dout, fb, cudaMemcpyDeviceToHost));
          char what[160];
          snprintf (what, sizeof what, "%ux%u fmt %d codec %d %s: GPU blocks == CPU", w, h, f, codec, q ? "high" : "fast");
          check (memcmp (ref.data (), got.data (), fb) == 0, what);
          if (f == DXT_FMT_RGBA && q == 0) {
            std::vector<uint8_t> hr ((size_t) 4 * w * h), gr ((size_t) 4 * w * h);
            dxt_decode_frame ((DxtCodec) codec, ref.data (), w, h, hr.data (), 4 * w);
            uint8_t *drgba;
            CK (cudaMalloc (&drgba, gr.size ()));
            DxtGpuDecode dj = { (uint64_t) dout, (uint64_t) drgba, w, h, 4 * w, codec };
            dxt_decode_kernel<<<dxt_gpu_grid ((uint64_t) dxt_blocks_x (w) * dxt_blocks_y (h)), DXT_GPU_THREADS>>> (dj);
            CK (cudaMemcpy (gr.data (), drgba, gr.size (), cudaMemcpyDeviceToHost));
            snprintf (what, sizeof what, "%ux%u codec %d: GPU decode == CPU decode", w, h, codec);
            check (hr == gr, what);
            CK (cudaFree (drgba));
          }
          CK (cudaFree (dout));
        }
      CK (cudaFree (d0)); CK (cudaFree (d1)); CK (cudaFree (d2));
    }
  }
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
