/* bench_dxt_gpu.cu: DXT encode on the GPU, frames/s at 1080p and 4K.
 *
 * dxt_gpu rows: kernel only (cudaEvent around the launch) and end to end
 * (RGBA host -> device, kernel, blocks device -> host, pinned memory, one
 * stream, frames serialized), every codec and quality.
 *
 * dxt_gpu_sliced rows: BC1 fast, RGBA and UYVY input, the way dxtenc
 * (gst/gpustream/gpsdxt.c) runs a frame: slices of batch_blocks 4x4 blocks
 * (whole block rows), round robin over 3 streams, each slice its pixel rows
 * in (pinned), the kernel on its block rows, its blocks out. Per batch size:
 * frames/s with frames back to back (pipelined) and the latency of a frame
 * processed alone (p50/p99/max), the paper's latency-vs-batch trade-off.
 * Every sliced output is checked byte for byte against the CPU encoder.
 *
 * Anchor of every row: our CPU encoder (dxt_encode_slice, runtime SIMD
 * dispatch) on one core, same frame, same codec/quality/input; ratio is the
 * row's end-to-end frames/s over it.
 *
 * Synthetic frames (smooth gradients plus noise). One JSON line per figure,
 * on stdout and in the --json file. SKIP (exit 77) without a device. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>
#include "dxt/dxt_cuda.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf ("FAIL - %s: %s\n", #x, cudaGetErrorString (e_)); exit (1); } } while (0)

#define N_STREAMS 3   /* dxtenc's default */

static FILE *json;
static const char *dev_name;

static double
now_s (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static void
emit (const char *line)
{
  printf ("%s\n", line);
  if (json)
    fprintf (json, "%s\n", line);
}

/* The anchor: frames/s of the CPU encoder on this thread (one core). It
 * encodes slices of 8 block rows, cycling through the frame, for at least
 * min_s and counts blocks, so the slow high-quality mode is timed on a
 * fraction of a 4K frame (the top rows; the synthetic content is alike
 * throughout) and scaled to frames/s. When ref is set it also completes one
 * whole pass into ref: the reference the GPU output is checked against. */
static double
cpu_fps (const DxtImage *img, DxtCodec c, DxtQuality q, double min_s, uint8_t *ref)
{
  const uint32_t by_n = dxt_blocks_y (img->height), step = 8;
  const size_t rb = dxt_row_bytes (c, img->width);
  std::vector<uint8_t> scratch (ref ? 0 : step * rb);
  uint64_t rows = 0;
  uint32_t row0 = 0;
  const double t0 = now_s ();
  double t;
  do {
    const uint32_t n = std::min (step, by_n - row0);
    if (dxt_encode_slice (img, c, q, row0, n, ref ? ref + row0 * rb : scratch.data ())) {
      printf ("FAIL - dxt_encode_slice refused the frame\n");
      exit (1);
    }
    rows += n;
    row0 = row0 + n == by_n ? 0 : row0 + n;
    t = now_s () - t0;
  } while (t < min_s || (ref && rows < by_n));
  return (double) rows / by_n / t;
}

/* Pinned synthetic input frames. */
static uint8_t *
make_rgba (uint32_t w, uint32_t h)
{
  const size_t in = (size_t) w * h * 4;
  uint8_t *p;
  CK (cudaMallocHost (&p, in));
  uint32_t s = 1;
  for (size_t i = 0; i < in; i++) {
    s = s * 1664525u + 1013904223u;
    size_t px = i / 4;
    p[i] = (uint8_t) (((px % w) * (1 + i % 4)) / 8 + ((px / w) / 4) + ((s >> 24) & 7));
  }
  return p;
}

/* UYVY (bytes U Y0 V Y1), studio swing: luma ramp plus noise, chroma ramps. */
static uint8_t *
make_uyvy (uint32_t w, uint32_t h)
{
  const uint32_t cw = (w + 1) / 2;
  uint8_t *p;
  CK (cudaMallocHost (&p, (size_t) 4 * cw * h));
  uint32_t s = 7;
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < cw; x++) {
      uint8_t *q = p + ((size_t) y * cw + x) * 4;
      s = s * 1664525u + 1013904223u;
      q[0] = (uint8_t) (96 + 64 * x / cw + ((s >> 20) & 3));
      q[2] = (uint8_t) (96 + 64 * y / h + ((s >> 16) & 3));
      q[1] = (uint8_t) (16 + 200 * (2 * x + y) / (2 * cw + h) + ((s >> 24) & 7));
      q[3] = (uint8_t) (q[1] + ((s >> 28) & 3));
    }
  return p;
}

/* The sliced path. Two buffer sets (device in/out, pinned out) so frame
 * k + 1 runs while frame k finishes; a set is reused two frames later,
 * after the events of its last use (every stream) have fired. */
struct Sliced {
  uint32_t w, h, bx_n, by_n;
  size_t stride, rb, out_bytes;
  int fmt;
  const uint8_t *hin;
  uint8_t *din[2], *dout[2], *hout[2];
  cudaStream_t st[N_STREAMS];
  cudaEvent_t done[2][N_STREAMS];
};

/* Frame into set b, slices of slice_rows block rows, the first on stream
 * i0 % N_STREAMS. Returns the number of slices. */
static uint32_t
enqueue_frame (Sliced &S, int b, uint32_t slice_rows, uint32_t i0)
{
  DxtGpuEncode job;
  memset (&job, 0, sizeof job);
  job.img.plane[0] = S.din[b];
  job.img.stride[0] = (uint32_t) S.stride;
  job.img.width = S.w;
  job.img.height = S.h;
  job.img.format = S.fmt;
  job.codec = DXT_BC1;
  job.quality = DXT_FAST;
  uint32_t i = 0, nrows;
  for (uint32_t row0 = 0; row0 < S.by_n; row0 += nrows, i++) {
    cudaStream_t s = S.st[(i0 + i) % N_STREAMS];
    nrows = std::min (slice_rows, S.by_n - row0);
    /* the slice's pixel rows, as gpsdxt.c stages them */
    const size_t r0 = 4 * (size_t) row0, r1 = std::min<size_t> (4 * (size_t) (row0 + nrows), S.h);
    CK (cudaMemcpyAsync (S.din[b] + r0 * S.stride, S.hin + r0 * S.stride, (r1 - r0) * S.stride,
                         cudaMemcpyHostToDevice, s));
    const size_t o = row0 * S.rb;
    job.out = (uint64_t) (S.dout[b] + o);
    job.row0 = row0;
    job.nrows = nrows;
    dxt_encode_slice_kernel<<<dxt_gpu_grid ((uint64_t) S.bx_n * nrows), DXT_GPU_THREADS, 0, s>>> (job);
    CK (cudaMemcpyAsync (S.hout[b] + o, S.dout[b] + o, nrows * S.rb, cudaMemcpyDeviceToHost, s));
  }
  CK (cudaGetLastError ());
  return i;
}

static void
sync_all (Sliced &S)
{
  for (int s = 0; s < N_STREAMS; s++)
    CK (cudaStreamSynchronize (S.st[s]));
}

static void
check_out (const Sliced &S, int b, const uint8_t *ref, const char *what, uint32_t batch)
{
  if (memcmp (S.hout[b], ref, S.out_bytes) == 0)
    return;
  size_t k = 0;
  while (S.hout[b][k] == ref[k]) k++;
  printf ("FAIL - sliced %s %ux%u %s batch %u: GPU blocks differ from the CPU encoder (block %zu)\n",
          what, S.w, S.h, S.fmt == DXT_FMT_UYVY ? "uyvy" : "rgba", batch, k / 8);
  exit (1);
}

/* The batch sweep at one size and input format; ref: the CPU's blocks,
 * anchor: the CPU's frames/s. */
static void
bench_sliced (uint32_t w, uint32_t h, int fmt, const uint8_t *hin, const uint8_t *ref, double anchor)
{
  Sliced S;
  S.w = w; S.h = h; S.fmt = fmt; S.hin = hin;
  S.bx_n = dxt_blocks_x (w); S.by_n = dxt_blocks_y (h);
  S.stride = fmt == DXT_FMT_UYVY ? 4 * (size_t) ((w + 1) / 2) : 4 * (size_t) w;
  S.rb = dxt_row_bytes (DXT_BC1, w);
  S.out_bytes = dxt_frame_bytes (DXT_BC1, w, h);
  for (int b = 0; b < 2; b++) {
    CK (cudaMalloc (&S.din[b], S.stride * h));
    CK (cudaMalloc (&S.dout[b], S.out_bytes));
    CK (cudaMallocHost (&S.hout[b], S.out_bytes));
    for (int s = 0; s < N_STREAMS; s++)
      CK (cudaEventCreateWithFlags (&S.done[b][s], cudaEventDisableTiming));
  }
  for (int s = 0; s < N_STREAMS; s++)
    CK (cudaStreamCreateWithFlags (&S.st[s], cudaStreamNonBlocking));

  /* From two block rows (1080p) to the whole frame; only whole block rows,
   * so batch_blocks is the real slice size (the last slice may be short). */
  const uint32_t frame_blocks = S.bx_n * S.by_n;
  const uint32_t cand[] = { 480, 960, 1440, 2880, 5760, 11520, 23040, 64800, 129600, 259200 };
  std::vector<uint32_t> batches;
  for (uint32_t c : cand)
    if (c % S.bx_n == 0 && c < frame_blocks)
      batches.push_back (c);
  batches.push_back (frame_blocks);
  const char *in_name = fmt == DXT_FMT_UYVY ? "uyvy" : "rgba";

  for (uint32_t batch : batches) {
    const uint32_t slice_rows = batch / S.bx_n;
    /* warm up (first launches, page mappings) */
    uint32_t n_slices = 0;
    for (int k = 0; k < 3; k++) n_slices = enqueue_frame (S, 0, slice_rows, 0);
    sync_all (S);

    /* latency: one frame at a time, first H2D issued -> last D2H done;
     * 50 to 200 frames, about 0.3 s */
    std::vector<double> lat;
    const double tl = now_s ();
    while (lat.size () < 50 || (lat.size () < 200 && now_s () - tl < 0.3)) {
      const double t0 = now_s ();
      enqueue_frame (S, 0, slice_rows, 0);
      sync_all (S);
      lat.push_back ((now_s () - t0) * 1e6);
    }
    check_out (S, 0, ref, "one at a time", batch);
    double mean = 0;
    for (double l : lat) mean += l;
    mean /= (double) lat.size ();
    std::sort (lat.begin (), lat.end ());
    const size_t n = lat.size ();
    const double p50 = lat[n / 2], p99 = lat[std::min (n - 1, (size_t) (0.99 * (double) n))], mx = lat[n - 1];

    /* throughput: frames back to back over the two sets, slices keep
     * rotating over the streams across frames; about 0.25 s */
    const uint32_t frames = (uint32_t) std::min (400.0, std::max (20.0, 0.25e6 / mean));
    uint32_t i0 = 0;
    const double tp = now_s ();
    for (uint32_t k = 0; k < frames; k++) {
      const int b = k & 1;
      if (k >= 2)
        for (int s = 0; s < N_STREAMS; s++)
          for (int e = 0; e < N_STREAMS; e++)
            CK (cudaStreamWaitEvent (S.st[s], S.done[b][e], 0));
      i0 += enqueue_frame (S, b, slice_rows, i0);
      for (int s = 0; s < N_STREAMS; s++)
        CK (cudaEventRecord (S.done[b][s], S.st[s]));
    }
    sync_all (S);
    const double fps = frames / (now_s () - tp);
    check_out (S, (frames - 1) & 1, ref, "back to back", batch);

    char line[640];
    snprintf (line, sizeof line,
              "{\"bench\":\"dxt_gpu_sliced\",\"encoder\":\"gpustream-fast\",\"format\":\"bc1\",\"input\":\"%s\","
              "\"size\":\"%ux%u\",\"batch_blocks\":%u,\"slices\":%u,\"streams\":%d,\"fps_end_to_end\":%.1f,"
              "\"fps_one_at_a_time\":%.1f,\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,\"lat_max_us\":%.1f,"
              "\"anchor\":%.2f,\"anchor_impl\":\"cpu-simd-1core\",\"ratio\":%.2f,\"device\":\"%s\"}",
              in_name, w, h, batch, n_slices, N_STREAMS, fps, 1e6 / mean, p50, p99, mx,
              anchor, fps / anchor, dev_name);
    emit (line);
  }

  for (int b = 0; b < 2; b++) {
    CK (cudaFree (S.din[b])); CK (cudaFree (S.dout[b])); CK (cudaFreeHost (S.hout[b]));
    for (int s = 0; s < N_STREAMS; s++) CK (cudaEventDestroy (S.done[b][s]));
  }
  for (int s = 0; s < N_STREAMS; s++) CK (cudaStreamDestroy (S.st[s]));
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (!strcmp (argv[i], "--json") && i + 1 < argc) json = fopen (argv[++i], "w");
  int ndev = 0;
  if (cudaGetDeviceCount (&ndev) != cudaSuccess || ndev == 0) {
    printf ("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CK (cudaGetDeviceProperties (&prop, 0));
  dev_name = prop.name;
  printf ("# anchor: CPU encoder, %s path, one core\n", dxt_cpu_path_name (dxt_get_cpu_path ()));
  const uint32_t dims[][2] = { { 1920, 1080 }, { 3840, 2160 } };
  const char *cn[] = { "bc1", "bc3", "ycocg" };
  for (auto &d : dims) {
    uint32_t w = d[0], h = d[1];
    size_t in = (size_t) w * h * 4, outb = dxt_frame_bytes (DXT_BC3, w, h);
    uint8_t *hin = make_rgba (w, h), *huyvy = make_uyvy (w, h), *hout, *din, *dout;
    CK (cudaMallocHost (&hout, outb));
    CK (cudaMalloc (&din, in)); CK (cudaMalloc (&dout, outb));

    /* anchors: every codec/quality on RGBA, BC1 fast on UYVY; the BC1 fast
     * runs leave the reference blocks for the sliced checks */
    DxtImage ci = {}, cu = {};
    ci.plane[0] = hin; ci.stride[0] = 4 * w; ci.width = w; ci.height = h; ci.format = DXT_FMT_RGBA;
    cu = ci;
    cu.plane[0] = huyvy; cu.stride[0] = 4 * ((w + 1) / 2); cu.format = DXT_FMT_UYVY;
    const size_t fb1 = dxt_frame_bytes (DXT_BC1, w, h);
    std::vector<uint8_t> ref_rgba (fb1), ref_uyvy (fb1);
    double anc[3][2];
    for (int codec = 0; codec < 3; codec++)
      for (int q = 0; q < 2; q++)
        anc[codec][q] = cpu_fps (&ci, (DxtCodec) codec, (DxtQuality) q, 0.5,
                                 codec == DXT_BC1 && q == DXT_FAST ? ref_rgba.data () : NULL);
    const double anc_uyvy = cpu_fps (&cu, DXT_BC1, DXT_FAST, 0.5, ref_uyvy.data ());

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
        double fk = reps * 1000.0 / ms_k, fe = reps * 1000.0 / ms_e, a = anc[codec][q];
        char line[640];
        snprintf (line, sizeof line, "{\"bench\":\"dxt_gpu\",\"encoder\":\"gpustream-%s\",\"format\":\"%s\",\"size\":\"%ux%u\","
                  "\"fps_kernel\":%.1f,\"fps_end_to_end\":%.1f,\"mpix_s\":%.1f,\"anchor\":%.2f,"
                  "\"anchor_impl\":\"cpu-simd-1core\",\"ratio\":%.2f,\"ratio_kernel\":%.2f,\"device\":\"%s\"}",
                  q ? "high" : "fast", cn[codec], w, h, fk, fe, fk * w * h / 1e6, a, fe / a, fk / a, prop.name);
        emit (line);
      }
    CK (cudaEventDestroy (e0)); CK (cudaEventDestroy (e1));
    CK (cudaFree (din)); CK (cudaFree (dout)); CK (cudaFreeHost (hout));

    bench_sliced (w, h, DXT_FMT_RGBA, hin, ref_rgba.data (), anc[DXT_BC1][DXT_FAST]);
    bench_sliced (w, h, DXT_FMT_UYVY, huyvy, ref_uyvy.data (), anc_uyvy);
    CK (cudaFreeHost (hin)); CK (cudaFreeHost (huyvy));
  }
  if (json) fclose (json);
  return 0;
}
