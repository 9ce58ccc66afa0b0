/* bench_dxt_gpu.cu: DXT encode on the GPU, frames/s at 1080p and 4K, kernel
 * only (cudaEvent around the launch) and end to end (RGBA host -> device,
 * kernel, blocks device -> host, pinned memory, one stream). Synthetic
 * frames (smooth gradients plus noise). One JSON line per figure.
 * SKIP (exit 77) without a device. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "dxt/dxt_cuda.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf ("FAIL - %s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

int
main (int argc, char **argv)
{
  FILE *json = NULL;
  for (int i = 1; i < argc; i++)
    if (!strcmp (argv[i], "--json") && i + 1 < argc) json = fopen (argv[++i], "w");
  int ndev = 0;
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CK (cudaGetDeviceProperties (&prop, 0));
  const uint32_t dims[][2] = { { 1920, 1080 }, { 3840, 2160 } };
  const char *cn[] = { "bc1", "bc3", "ycocg" };
  for (auto &d : dims) {
    uint32_t w = d[0], h = d[1];
    size_t in = (size_t) w * h * 4, outb = dxt_frame_bytes (DXT_BC3, w, h);
    uint8_t *hin, *hout, *din, *dout;
    CK (cudaMallocHost (&hin, in)); CK (cudaMallocHost (&hout, outb));
    CK (cudaMalloc (&din, in)); CK (cudaMalloc (&dout, outb));
    uint32_t s = 1;
    for (size_t i = 0; i < in; i++) {
      s = s * 1664525u + 1013904223u;
      size_t px = i / 4;
      hin[i] = (uint8_t) (((px % w) * (1 + i % 4)) / 8 + ((px / w) / 4) + ((s >> 24) & 7));
    }
    CK (cudaMemcpy (din, hin, in, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK (cudaEventCreate (&e0)); CK (cudaEventCreate (&e1));
    for (int codec = 0; codec < 3; codec++)
      for (int q = 0; q < 2; q++) {
        DxtGpuEncode job;
        memset (&job, 0, sizeof job);
        job.img.plane[0] = din; job.img.stride[0] = 4 * w; job.img.width = w; job.img.height = h;
        job.img.format = DXT_FMT_RGBA; job.out = (uint64_t) dout; job.row0 = 0;
        job.nrows = dxt_blocks_y (h); job.codec = codec; job.quality = q;
        unsigned grid = dxt_gpu_grid ((uint64_t) dxt_blocks_x (w) * dxt_blocks_y (h));
        size_t fb = dxt_frame_bytes ((DxtCodec) codec, w, h);
        dxt_encode_slice_kernel<<<grid, DXT_GPU_THREADS>>> (job);   /* warm up */
        CK (cudaDeviceSynchronize ());
        const int reps = 20;
        CK (cudaEventRecord (e0));
        for (int r = 0; r < reps; r++) dxt_encode_slice_kernel<<<grid, DXT_GPU_THREADS>>> (job);
        CK (cudaEventRecord (e1)); CK (cudaEventSynchronize (e1));
        float ms_k;
        CK (cudaEventElapsedTime (&ms_k, e0, e1));
        CK (cudaEventRecord (e0));
        for (int r = 0; r < reps; r++) {
          CK (cudaMemcpyAsync (din, hin, in, cudaMemcpyHostToDevice));
          dxt_encode_slice_kernel<<<grid, DXT_GPU_THREADS>>> (job);
          CK (cudaMemcpyAsync (hout, dout, fb, cudaMemcpyDeviceToHost));
        }
        CK (cudaEventRecord (e1)); CK (cudaEventSynchronize (e1));
        float ms_e;
        CK (cudaEventElapsedTime (&ms_e, e0, e1));
        double fk = reps * 1000.0 / ms_k, fe = reps * 1000.0 / ms_e;
        char line[400];
        snprintf (line, sizeof line, "{\"bench\":\"dxt_gpu\",\"encoder\":\"gpustream-%s\",\"format\":\"%s\",\"size\":\"%ux%u\","
                  "\"fps_kernel\":%.1f,\"fps_end_to_end\":%.1f,\"mpix_s\":%.1f,\"device\":\"%s\"}",
                  q ? "high" : "fast", cn[codec], w, h, fk, fe, fk * w * h / 1e6, prop.name);
        printf ("%s\n", line);
        if (json) fprintf (json, "%s\n", line);
      }
    CK (cudaFreeHost (hin)); CK (cudaFreeHost (hout)); CK (cudaFree (din)); CK (cudaFree (dout));
  }
  if (json) fclose (json);
  return 0;
}
