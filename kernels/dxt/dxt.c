/* dxt.c: frame and slice encoding on the CPU, decoding, and the choice of
 * the SIMD path. The per-block math is in dxt_block.h. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "common/cpu.h"
#include "dxt/dxt.h"
#include "dxt/dxt_block.h"
#include "dxt/dxt_simd.h"

typedef DxtBc1Cand (*DxtBc1FastFn) (const uint8_t *px);

static DxtBc1Cand
bc1_fast_scalar (const uint8_t *px)
{
  return dxt_bc1_fast (px);
}

typedef DxtBc1Cand (*DxtBc1HighFn) (const uint8_t *px, int lock_blue);

static DxtBc1Cand
bc1_high_scalar (const uint8_t *px, int lock_blue)
{
  return dxt_bc1_high (px, lock_blue);
}

typedef uint32_t (*DxtRowFn) (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out);

static DxtCpuPath cpu_path = DXT_CPU_AUTO;
static DxtBc1FastFn bc1_fast_fn = bc1_fast_scalar;
static DxtBc1HighFn bc1_high_fn = bc1_high_scalar;
static DxtRowFn row_fn = NULL;

static int
cpu_has (DxtCpuPath p)
{
  if (p == DXT_CPU_AVX2)
    return !!(gs_cpu_features () & GS_CPU_AVX2);
  if (p == DXT_CPU_SSE41)
    return !!(gs_cpu_features () & GS_CPU_SSE41);
  return p == DXT_CPU_SCALAR;
}

DxtCpuPath
dxt_set_cpu_path (DxtCpuPath p)
{
  if (p == DXT_CPU_AUTO || p > DXT_CPU_AVX2)
    p = DXT_CPU_AVX2;
  while (p > DXT_CPU_SCALAR && !cpu_has (p))
    p = (DxtCpuPath) (p - 1);
#if defined(__x86_64__) || defined(__i386__)
  bc1_fast_fn = p == DXT_CPU_AVX2 ? dxt_bc1_fast_avx2
      : p == DXT_CPU_SSE41 ? dxt_bc1_fast_sse41 : bc1_fast_scalar;
  bc1_high_fn = p == DXT_CPU_AVX2 ? dxt_bc1_high_avx2 : bc1_high_scalar;
  row_fn = p == DXT_CPU_AVX2 ? dxt_row_rgba_avx2
      : p == DXT_CPU_SSE41 ? dxt_row_rgba_sse41 : NULL;
#else
  p = DXT_CPU_SCALAR;
  bc1_fast_fn = bc1_fast_scalar;
  bc1_high_fn = bc1_high_scalar;
  row_fn = NULL;
#endif
  cpu_path = p;
  return p;
}

DxtCpuPath
dxt_get_cpu_path (void)
{
  if (cpu_path == DXT_CPU_AUTO)
    dxt_set_cpu_path (DXT_CPU_AUTO);
  return cpu_path;
}

const char *
dxt_cpu_path_name (DxtCpuPath p)
{
  switch (p) {
    case DXT_CPU_SCALAR: return "scalar";
    case DXT_CPU_SSE41: return "sse4.1";
    case DXT_CPU_AVX2: return "avx2";
    default: return "auto";
  }
}

static void
encode_px (DxtCodec codec, DxtQuality q, const uint8_t *px, uint8_t *out)
{
  {
    /* the SIMD path covers the colour block; alpha and the YCoCg
     * conversion stay scalar (same steps as dxt_encode_block_hd) */
    uint8_t *col = out, y[64];
    if (codec == DXT_YCOCG) {
      dxt_ycocg_convert (px, y);
      px = y;
    }
    if (codec != DXT_BC1) {
      dxt_alpha_encode_block (px + 3, q, out);
      col = out + 8;
    }
    DxtBc1Cand b = q == DXT_FAST ? bc1_fast_fn (px) : bc1_high_fn (px, codec == DXT_YCOCG);
    dxt_bc1_emit (b.c0, b.c1, b.idx, col);
  }
}

void
dxt_encode_block (DxtCodec codec, DxtQuality q, const uint8_t rgba[64], uint8_t *out)
{
  dxt_get_cpu_path ();
  encode_px (codec, q, rgba, out);
}

void
dxt_decode_block (DxtCodec codec, const uint8_t *in, uint8_t rgba[64])
{
  dxt_decode_block_hd (codec, in, rgba);
}

static int
image_ok (const DxtImage *img)
{
  if (!img || img->width == 0 || img->height == 0 || !img->plane[0])
    return 0;
  if (img->format < 0 || img->format >= DXT_FMT_COUNT)
    return 0;
  if (img->format == DXT_FMT_I420 && (!img->plane[1] || !img->plane[2]))
    return 0;
  if (img->format == DXT_FMT_NV12 && !img->plane[1])
    return 0;
  return 1;
}

/* Pixels [x, x + n) of row y as RGBA in block order (see dxt_simd.h), the
 * per-pixel arithmetic of dxt_load_block (the GPU's loader). */
static void
row_rgba_scalar (const DxtImage *img, uint32_t y, uint32_t x, uint32_t n, uint8_t *out)
{
  const int f = img->format;
  const uint8_t *row = img->plane[0] + (size_t) y * img->stride[0];
  if (f <= DXT_FMT_BGRX) {
    const int rb = (f == DXT_FMT_BGRA || f == DXT_FMT_BGRX) ? 2 : 0;
    const int ax = (f == DXT_FMT_RGBX || f == DXT_FMT_BGRX);
    uint32_t i = 0;
    if (f == DXT_FMT_RGBA)
      for (; i + 4 <= n; i += 4)
        memcpy (out + (i >> 2) * 64, row + 4 * (size_t) (x + i), 16);
    for (; i < n; i++) {
      const uint8_t *p = row + 4 * (size_t) (x + i);
      uint8_t *o = out + (i >> 2) * 64 + (i & 3) * 4;
      o[0] = p[rb]; o[1] = p[1]; o[2] = p[2 - rb]; o[3] = ax ? 255 : p[3];
    }
  } else if (f == DXT_FMT_UYVY || f == DXT_FMT_YUY2) {
    const int yo = f == DXT_FMT_UYVY ? 1 : 0, uo = f == DXT_FMT_UYVY ? 0 : 1;
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t xx = x + i;
      const uint8_t *p = row + 2 * (size_t) (xx & ~1u);
      dxt_yuv_to_rgb (p[yo + 2 * (xx & 1)], p[uo], p[uo + 2], out + (i >> 2) * 64 + (i & 3) * 4);
    }
  } else {
    const uint8_t *c1 = img->plane[1] + (size_t) (y >> 1) * img->stride[1];
    const uint8_t *c2 = f == DXT_FMT_I420 ? img->plane[2] + (size_t) (y >> 1) * img->stride[2] : 0;
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t xx = x + i, cx = xx >> 1;
      int u = f == DXT_FMT_I420 ? c1[cx] : c1[2 * cx];
      int v = f == DXT_FMT_I420 ? c2[cx] : c1[2 * cx + 1];
      dxt_yuv_to_rgb (row[xx], u, v, out + (i >> 2) * 64 + (i & 3) * 4);
    }
  }
}

/* Blocks converted at a time: 4 KiB of RGBA, stays in L1. */
#define RUN_BLOCKS 64

static int
encode_args_ok (const DxtImage *img, DxtCodec codec, DxtQuality q, const uint8_t *out)
{
  return image_ok (img) && out && (unsigned) codec <= DXT_YCOCG && (unsigned) q <= DXT_HIGH;
}

int
dxt_encode_slice (const DxtImage *img, DxtCodec codec, DxtQuality q,
                  uint32_t row0, uint32_t nrows, uint8_t *out)
{
  if (!encode_args_ok (img, codec, q, out))
    return -1;
  uint32_t by_n = dxt_blocks_y (img->height), bx_n = dxt_blocks_x (img->width);
  if (row0 > by_n || nrows > by_n - row0)
    return -1;
  dxt_get_cpu_path ();
  const uint32_t bb = dxt_block_bytes (codec);
  /* A run of blocks is converted row by row into RGBA blocks first (SIMD
   * where there is a path): loading pixel by pixel through dxt_load_block
   * cost about as much as the fast encode itself for YUV input. Edges
   * replicate the last column / row, as dxt_load_block does. */
  uint8_t run[RUN_BLOCKS * 64];
  for (uint32_t by = row0; by < row0 + nrows; by++)
    for (uint32_t bx0 = 0; bx0 < bx_n; bx0 += RUN_BLOCKS) {
      const uint32_t nb = bx_n - bx0 < RUN_BLOCKS ? bx_n - bx0 : RUN_BLOCKS;
      const uint32_t x0 = 4 * bx0, npx = 4 * nb;
      const uint32_t nvalid = img->width - x0 < npx ? img->width - x0 : npx;
      for (uint32_t j = 0; j < 4; j++) {
        const uint32_t y = 4 * by + j < img->height ? 4 * by + j : img->height - 1;
        uint8_t *o = run + 16 * j;
        const uint32_t done = row_fn ? row_fn (img, y, x0, nvalid, o) : 0;
        row_rgba_scalar (img, y, x0 + done, nvalid - done, o + (done >> 2) * 64);
        const uint8_t *last = o + ((nvalid - 1) >> 2) * 64 + ((nvalid - 1) & 3) * 4;
        for (uint32_t i = nvalid; i < npx; i++)
          memcpy (o + (i >> 2) * 64 + (i & 3) * 4, last, 4);
      }
      for (uint32_t b = 0; b < nb; b++) {
        encode_px (codec, q, run + 64 * b, out);
        out += bb;
      }
    }
  return 0;
}

int
dxt_encode_frame (const DxtImage *img, DxtCodec codec, DxtQuality q, uint8_t *out)
{
  if (!image_ok (img))
    return -1;
  return dxt_encode_slice (img, codec, q, 0, dxt_blocks_y (img->height), out);
}

unsigned
dxt_cpu_count (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned) n : 1u;
}

/* One frame's slices, taken one at a time by every thread working on it. */
typedef struct {
  const DxtImage *img;
  DxtCodec codec;
  DxtQuality q;
  uint32_t slice_rows, by_n, next;   /* next: atomic, the next slice's first row */
  uint8_t *out;
  int failed;                        /* atomic */
} SliceWork;

static void *
slice_worker (void *data)
{
  SliceWork *w = data;
  const size_t rb = dxt_row_bytes (w->codec, w->img->width);
  for (;;) {
    uint32_t row0 = __atomic_fetch_add (&w->next, w->slice_rows, __ATOMIC_RELAXED);
    if (row0 >= w->by_n)
      break;
    uint32_t n = w->by_n - row0 < w->slice_rows ? w->by_n - row0 : w->slice_rows;
    if (dxt_encode_slice (w->img, w->codec, w->q, row0, n, w->out + row0 * rb) != 0)
      __atomic_store_n (&w->failed, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

#define DXT_MAX_THREADS 256

int
dxt_encode_frame_threads (const DxtImage *img, DxtCodec codec, DxtQuality q,
                          uint32_t slice_rows, unsigned threads, uint8_t *out)
{
  if (!encode_args_ok (img, codec, q, out))
    return -1;
  const uint32_t by_n = dxt_blocks_y (img->height);
  if (threads == 0)
    threads = dxt_cpu_count ();
  if (threads > DXT_MAX_THREADS)
    threads = DXT_MAX_THREADS;
  if (slice_rows == 0)
    slice_rows = (by_n + threads - 1) / threads;
  const uint32_t n_slices = (by_n + slice_rows - 1) / slice_rows;
  if (threads > n_slices)
    threads = n_slices;
  if (threads <= 1)
    return dxt_encode_frame (img, codec, q, out);
  /* resolve the SIMD path here, not racing in the threads */
  dxt_get_cpu_path ();
  SliceWork w = { img, codec, q, slice_rows, by_n, 0, out, 0 };
  pthread_t tid[DXT_MAX_THREADS];
  unsigned started = 0;
  while (started < threads - 1 && pthread_create (&tid[started], NULL, slice_worker, &w) == 0)
    started++;
  slice_worker (&w);
  for (unsigned i = 0; i < started; i++)
    pthread_join (tid[i], NULL);
  return w.failed ? -1 : 0;
}

int
dxt_decode_frame (DxtCodec codec, const uint8_t *blocks, uint32_t width,
                  uint32_t height, uint8_t *rgba, uint32_t stride)
{
  if (!blocks || !rgba || width == 0 || height == 0 || (unsigned) codec > DXT_YCOCG
      || stride < 4 * width)
    return -1;
  const uint32_t bb = dxt_block_bytes (codec), bx_n = dxt_blocks_x (width);
  uint8_t px[64];
  for (uint32_t by = 0; by < dxt_blocks_y (height); by++)
    for (uint32_t bx = 0; bx < bx_n; bx++) {
      dxt_decode_block_hd (codec, blocks + ((size_t) by * bx_n + bx) * bb, px);
      for (uint32_t j = 0; j < 4 && by * 4 + j < height; j++) {
        uint32_t n = width - bx * 4 < 4 ? width - bx * 4 : 4;
        memcpy (rgba + (size_t) (by * 4 + j) * stride + (size_t) bx * 16, px + 16 * j, 4 * n);
      }
    }
  return 0;
}
