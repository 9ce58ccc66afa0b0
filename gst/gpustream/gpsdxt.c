/* gpsdxt.c: dxtenc's and dxtdec's GPU paths (gpsdxt.h): a frame's slices
 * through dxt_encode_slice_kernel, pipelined over a few CUDA streams; a
 * block stream through dxt_decode_kernel on one of them. And "dxt-encode",
 * the scheduler processor that codes raw frames on either. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>

#include "gpsprivate.h"
#include "gpsdxt.h"

#define GST_CAT_DEFAULT gps_cuda_debug

#if GS_HAVE_CUDA
#include <gst/cuda/gstcudamemory.h>
#include "dxt/dxt_cuda.h"

/* Where each plane and the output sit; the same offsets in the pinned host
 * buffer and on the device, so a slice is one linear copy per plane. */
typedef struct {
  guint n_planes;
  gsize row_bytes[3];           /* bytes of a row the kernel reads */
  gsize pitch[3];               /* staging pitch */
  guint32 rows[3];
  guint vshift[3];              /* 1: 4:2:0 chroma, one row per two */
  gsize off[3];
  gsize out_off, out_size, total;
} DxtLayout;

#define ALIGN4(x) (((x) + 3) & ~(gsize) 3)
#define ALIGN256(x) (((x) + 255) & ~(gsize) 255)

/* NULL, or why img cannot go to the kernel. The row sizes are what
 * dxt_load_block reads (a 4:2:2 row to the end of its last pixel pair). */
static const gchar *
layout_init (DxtLayout * l, const DxtImage * img, DxtCodec codec)
{
  const gsize w = img->width, cw = (w + 1) / 2;
  gsize off = 0;
  guint p;

  memset (l, 0, sizeof *l);
  if (img->width == 0 || img->height == 0)
    return "empty frame";
  if ((unsigned) codec > DXT_YCOCG)
    return "unknown codec";
  switch (img->format) {
    case DXT_FMT_RGBA:
    case DXT_FMT_BGRA:
    case DXT_FMT_RGBX:
    case DXT_FMT_BGRX:
      l->n_planes = 1;
      l->row_bytes[0] = 4 * w;
      break;
    case DXT_FMT_UYVY:
    case DXT_FMT_YUY2:
      l->n_planes = 1;
      l->row_bytes[0] = 4 * cw;
      break;
    case DXT_FMT_I420:
      l->n_planes = 3;
      l->row_bytes[0] = w;
      l->row_bytes[1] = l->row_bytes[2] = cw;
      l->vshift[1] = l->vshift[2] = 1;
      break;
    case DXT_FMT_NV12:
      l->n_planes = 2;
      l->row_bytes[0] = w;
      l->row_bytes[1] = 2 * cw;
      l->vshift[1] = 1;
      break;
    default:
      return "unknown input format";
  }
  for (p = 0; p < l->n_planes; p++) {
    if (!img->plane[p])
      return "missing plane";
    if (img->stride[p] < l->row_bytes[p])
      return "stride shorter than a row";
    l->pitch[p] = ALIGN4 (l->row_bytes[p]);
    l->rows[p] = l->vshift[p] ? (img->height + 1) / 2 : img->height;
    /* the device image's strides are 32-bit; the staging is below 4 GiB */
    if (l->pitch[p] > G_MAXUINT32 || l->rows[p] > G_MAXUINT32 / l->pitch[p])
      return "frame too large";
    l->off[p] = off;
    off = ALIGN256 (off + l->pitch[p] * l->rows[p]);
  }
  l->out_off = off;
  l->out_size = dxt_frame_bytes (codec, img->width, img->height);
  l->total = l->out_off + l->out_size;
  if (l->total > G_MAXUINT32)
    return "frame too large";
  return NULL;
}

/* The layout when the planes are already on the device (GstCudaMemory):
 * only the blocks are staged, at 0. The plane rows are checked as for the
 * host and the strides must fit the kernel's 32 bits. */
static const gchar *
layout_init_device (DxtLayout * l, const DxtImage * img, DxtCodec codec)
{
  const gchar *why;
  guint p;

  if ((why = layout_init (l, img, codec)))
    return why;
  for (p = 0; p < l->n_planes; p++)
    if (img->stride[p] > G_MAXUINT32)
      return "stride too large";
  l->out_off = 0;
  l->total = l->out_size;
  return NULL;
}

/* Per context: the streams and one staging area (GpsStaging "dxt"), reused
 * by every frame, encoded or decoded. */
typedef GpsStaging DxtStaging;
G_STATIC_ASSERT (GST_GPUSTREAM_DXT_MAX_STREAMS <= GPS_STAGING_MAX_STREAMS);

static DxtStaging *
staging_get (GstCudaContext * ctx)
{
  return gps_cuda_staging_get (ctx, "dxt");
}

/* Rows [r0, r1) of one plane into the pinned buffer (pitch) at the same
 * rows: what makes the copy to the device truly asynchronous. */
static void
stage_rows (guint8 * dst, gsize pitch, const guint8 * src, gsize stride,
    gsize row_bytes, guint32 r0, guint32 r1)
{
  guint32 r;

  if (r1 <= r0)
    return;
  if (stride == pitch) {
    memcpy (dst + r0 * pitch, src + r0 * stride,
        (gsize) (r1 - r0 - 1) * pitch + row_bytes);
    return;
  }
  for (r = r0; r < r1; r++)
    memcpy (dst + r * pitch, src + r * stride, row_bytes);
}

/* The start of a run (the caller holds st->lock): the kernel `which` of
 * ctx, ctx pushed, a pinned area of host_size and a device area of
 * dev_size bytes, n_streams streams. NULL, or the step that failed (*res:
 * its CUDA error, or CUDA_SUCCESS) with nothing pushed. */
static const gchar *
run_begin (GstCudaContext * ctx, DxtStaging * st, GpsKernel which,
    gsize host_size, gsize dev_size, guint n_streams, CUfunction * func,
    CUresult * res)
{
  *res = CUDA_SUCCESS;
  if (!gps_cuda_get_kernel (ctx, which, func))
    return "loading the kernel";
  if (!gst_cuda_context_push (ctx))
    return "pushing the CUDA context";
  if ((*res = gps_cuda_staging_ensure_sizes (st, host_size, dev_size,
              n_streams)) != CUDA_SUCCESS) {
    gst_cuda_context_pop (NULL);
    return "allocating the staging buffers and streams";
  }
  return NULL;
}

/* The end of a run that run_begin started; step as it returns. */
static const gchar *
run_end (DxtStaging * st, const gchar * step)
{
  guint s;

  if (step)
    /* nothing may still write the staging buffers when the next frame (or
     * the CPU fallback's caller) goes on */
    for (s = 0; s < GST_GPUSTREAM_DXT_MAX_STREAMS; s++)
      if (st->stream[s])
        CuStreamSynchronize (st->stream[s]);
  gst_cuda_context_pop (NULL);
  return step;
}

/* In a run: a failing CUDA call ends it with its step and error. */
#define CHECK(call, what) \
  if ((*res = (call)) != CUDA_SUCCESS) { step = what; goto out; }

/* Where a frame's pixels are read and its blocks written. Pinned memory
 * (of the frame's context) is copied by the DMA engine as it is, so a
 * frame there is not first copied into the staging area, and blocks land
 * straight in an output buffer there. */
typedef struct {
  gboolean in_device;           /* the planes are CUdeviceptr */
  gboolean in_pinned;           /* host planes in pinned memory */
  gboolean out_pinned;          /* out in pinned memory */
} DxtPlacement;

/* The staging area a frame needs: the planes at their offsets when they
 * are staged, the blocks at out_off when they come back through it. */
static gsize
host_need (const DxtLayout * l, const DxtPlacement * pl)
{
  if (!pl->out_pinned)
    return l->total;
  return pl->in_device || pl->in_pinned ? 0 : l->out_off;
}

/* First half of a frame through the kernel: every slice queued on st's
 * streams (copy in, kernel, copy out), nothing waited for. NULL (the work
 * is in flight: encode_wait) or the step that failed (*res: its CUDA
 * error, or CUDA_SUCCESS; nothing in flight). The caller holds st->lock. */
static const gchar *
encode_submit (GstCudaContext * ctx, DxtStaging * st, const DxtImage * img,
    const DxtPlacement * pl, const DxtLayout * l, DxtCodec codec,
    DxtQuality quality, guint batch_blocks, guint n_streams, guint8 * out,
    guint * n_slices, CUresult * res)
{
  const guint32 bx_n = dxt_blocks_x (img->width);
  const guint32 by_n = dxt_blocks_y (img->height);
  const gsize rb = dxt_row_bytes (codec, img->width);
  const gchar *step;
  CUfunction func;
  DxtGpuEncode job;
  guint32 slice_rows, row0, nrows;
  guint i = 0, p;

  if ((step = run_begin (ctx, st, GPS_KERNEL_DXT_ENCODE, host_need (l, pl),
              l->total, n_streams, &func, res)))
    return step;

  /* the device image: the caller's planes when they are on the device,
   * else the staging layout */
  memset (&job, 0, sizeof job);
  for (p = 0; p < l->n_planes; p++) {
    job.img.plane[p] = pl->in_device ? img->plane[p] :
        (const uint8_t *) (uintptr_t) (st->dev + l->off[p]);
    job.img.stride[p] = pl->in_device ? img->stride[p] :
        (uint32_t) l->pitch[p];
  }
  job.img.width = img->width;
  job.img.height = img->height;
  job.img.format = img->format;
  job.codec = codec;
  job.quality = quality;

  /* round robin over the streams: while slice i computes on its stream,
   * slice i+1's rows go in on the next and slice i-1's blocks come out */
  slice_rows = batch_blocks ? MAX (1, batch_blocks / bx_n) : by_n;
  for (row0 = 0; row0 < by_n; row0 += nrows, i++) {
    CUstream stream = st->stream[i % n_streams];
    gsize o = l->out_off + (gsize) row0 * rb;

    nrows = MIN (slice_rows, by_n - row0);
    for (p = 0; !pl->in_device && p < l->n_planes; p++) {
      /* the pixel rows of block rows [row0, row0 + nrows); rows past the
       * bottom edge are the last row, which the last slice holds itself */
      guint32 r0 = (4 * (guint64) row0) >> l->vshift[p];
      guint32 r1 = MIN ((4 * (guint64) (row0 + nrows)) >> l->vshift[p],
          l->rows[p]);
      gsize at = l->off[p] + (gsize) r0 * l->pitch[p];

      if (r1 <= r0)
        continue;
      if (pl->in_pinned) {
        CHECK (gps_cuda_copy_2d (img->plane[p] + (gsize) r0 * img->stride[p],
                0, img->stride[p], NULL, st->dev + at, l->pitch[p],
                l->row_bytes[p], r1 - r0, stream),
            "copying a slice to the device");
        continue;
      }
      stage_rows (st->host + l->off[p], l->pitch[p], img->plane[p],
          img->stride[p], l->row_bytes[p], r0, r1);
      CHECK (gps_cuda_copy_linear (st->host + at, NULL, 0, st->dev + at,
              (gsize) (r1 - r0) * l->pitch[p], stream),
          "copying a slice to the device");
    }
    job.out = st->dev + o;
    job.row0 = row0;
    job.nrows = nrows;
    {
      void *args[] = { &job };

      CHECK (CuLaunchKernel (func, dxt_gpu_grid ((guint64) bx_n * nrows), 1,
              1, DXT_GPU_THREADS, 1, 1, 0, stream, args, NULL),
          "launching the kernel");
    }
    CHECK (gps_cuda_copy_linear (NULL, pl->out_pinned ?
            out + (gsize) row0 * rb : st->host + o, st->dev + o, 0,
            (gsize) nrows * rb, stream), "copying a slice back");
  }
  *n_slices = i;

out:
  if (step)
    return run_end (st, step);
  gst_cuda_context_pop (NULL);
  return NULL;
}

/* Second half: waits for the streams encode_submit used (only those of
 * st), and the blocks go to out unless they landed there. NULL or the
 * step that failed. The caller holds st->lock. */
static const gchar *
encode_wait (GstCudaContext * ctx, DxtStaging * st, const DxtLayout * l,
    const DxtPlacement * pl, guint n_streams, guint n_slices, guint8 * out,
    CUresult * res)
{
  const gchar *step = NULL;
  guint s;

  *res = CUDA_SUCCESS;
  if (!gst_cuda_context_push (ctx))
    return "pushing the CUDA context";
  for (s = 0; s < MIN (n_slices, n_streams); s++)
    CHECK (CuStreamSynchronize (st->stream[s]), "cuStreamSynchronize");
  if (!pl->out_pinned)
    memcpy (out, st->host + l->out_off, l->out_size);

out:
  return run_end (st, step);
}

/* The frame through the kernel, submitted and waited for; on success the
 * blocks are in out. The caller holds st->lock. */
static const gchar *
encode_run (GstCudaContext * ctx, DxtStaging * st, const DxtImage * img,
    const DxtPlacement * pl, const DxtLayout * l, DxtCodec codec,
    DxtQuality quality, guint batch_blocks, guint n_streams, guint8 * out,
    guint * n_slices, CUresult * res)
{
  const gchar *step = encode_submit (ctx, st, img, pl, l, codec, quality,
      batch_blocks, n_streams, out, n_slices, res);

  return step ? step : encode_wait (ctx, st, l, pl, n_streams, *n_slices,
      out, res);
}

/* Decoding: the block stream at 0, then the RGBA image packed (stride
 * 4 * width), alike in the pinned buffer and on the device. */
typedef struct {
  gsize in_size, out_off, out_stride, out_size, total;
} DecLayout;

static const gchar *
dec_layout_init (DecLayout * l, DxtCodec codec, guint width, guint height,
    guint stride)
{
  memset (l, 0, sizeof *l);
  if (width == 0 || height == 0)
    return "empty frame";
  if ((unsigned) codec > DXT_YCOCG)
    return "unknown codec";
  l->out_stride = 4 * (gsize) width;
  if (stride < l->out_stride)
    return "stride shorter than a row";
  /* the image first: below 4 GiB, the block stream cannot overflow */
  if (l->out_stride > G_MAXUINT32 || height > G_MAXUINT32 / l->out_stride)
    return "frame too large";
  l->out_size = l->out_stride * height;
  l->in_size = dxt_frame_bytes (codec, width, height);
  l->out_off = ALIGN256 (l->in_size);
  l->total = l->out_off + l->out_size;
  if (l->total > G_MAXUINT32)
    return "frame too large";
  return NULL;
}

/* The block stream through the kernel, all on the first stream; on success
 * the image is in rgba. As encode_run otherwise. */
static const gchar *
decode_run (GstCudaContext * ctx, DxtStaging * st, const DecLayout * l,
    DxtCodec codec, const guint8 * blocks, guint width, guint height,
    guint8 * rgba, guint stride, CUresult * res)
{
  const gchar *step;
  CUfunction func;
  CUstream stream;
  DxtGpuDecode job;
  guint y;

  if ((step = run_begin (ctx, st, GPS_KERNEL_DXT_DECODE, l->total, l->total,
              1, &func,
              res)))
    return step;
  stream = st->stream[0];

  /* pinned, so the DMA engine reads it itself (from pageable memory the
   * driver would bounce it through buffers of its own) */
  memcpy (st->host, blocks, l->in_size);
  CHECK (gps_cuda_copy_linear (st->host, NULL, 0, st->dev, l->in_size,
          stream), "copying the blocks to the device");
  memset (&job, 0, sizeof job);
  job.blocks = st->dev;
  job.rgba = st->dev + l->out_off;
  job.width = width;
  job.height = height;
  job.stride = (uint32_t) l->out_stride;
  job.codec = codec;
  {
    void *args[] = { &job };

    CHECK (CuLaunchKernel (func, dxt_gpu_grid ((guint64) dxt_blocks_x (width)
                * dxt_blocks_y (height)), 1, 1, DXT_GPU_THREADS, 1, 1, 0,
            stream, args, NULL), "launching the kernel");
  }
  CHECK (gps_cuda_copy_linear (NULL, st->host + l->out_off,
          st->dev + l->out_off, 0, l->out_size, stream),
      "copying the image back");
  CHECK (CuStreamSynchronize (stream), "cuStreamSynchronize");
  /* packed on the device (one linear copy), the caller's stride here */
  if (stride == l->out_stride) {
    memcpy (rgba, st->host + l->out_off, l->out_size);
  } else {
    for (y = 0; y < height; y++)
      memcpy (rgba + (gsize) y * stride,
          st->host + l->out_off + y * l->out_stride, l->out_stride);
  }

out:
  return run_end (st, step);
}
#undef CHECK

/* cuda_context as a GstCudaContext, or NULL with error set. */
static GstCudaContext *
context_of (GstObject * cuda_context, GError ** error)
{
  if (!cuda_context || !GST_IS_CUDA_CONTEXT (cuda_context)) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "no CUDA context");
    return NULL;
  }
  return GST_CUDA_CONTEXT (cuda_context);
}

/* A run's outcome as both entry points report it. */
static gboolean
run_result (const gchar * kernel, const gchar * step, CUresult res,
    GError ** error)
{
  gchar *detail;

  if (!step)
    return TRUE;
  detail = g_strdup_printf ("%s failed%s%s", step, res != CUDA_SUCCESS ? ": " : "",
      res != CUDA_SUCCESS ? gps_cuda_strerror (res) : "");
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_FAILED,
      "%s: %s", kernel, detail);
  /* the callers code or decode the frame on the CPU instead */
  gps_gpu_fallback (kernel, detail);
  g_free (detail);
  return FALSE;
}
#else /* !GS_HAVE_CUDA */
static gboolean
no_cuda (GError ** error)
{
  g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT,
      "gst-gpustream was built without CUDA");
  return FALSE;
}
#endif /* GS_HAVE_CUDA */

static gboolean
encode_frame (GstObject * cuda_context, const DxtImage * img,
    gboolean on_device, DxtCodec codec, DxtQuality quality,
    guint batch_blocks, guint n_streams, guint8 * out, GError ** error)
{
#if GS_HAVE_CUDA
  GstCudaContext *ctx;
  DxtStaging *st;
  DxtLayout l;
  const gchar *why, *step;
  CUresult res;
  guint n_slices = 0;
  DxtPlacement pl = { on_device, FALSE, FALSE };
#endif

  gps_debug_init ();
  if (!img || !out) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "no image or no output");
    return FALSE;
  }
#if GS_HAVE_CUDA
  if (!(ctx = context_of (cuda_context, error)))
    return FALSE;
  if ((unsigned) quality > DXT_HIGH)
    why = "unknown quality";
  else if (on_device)
    why = layout_init_device (&l, img, codec);
  else
    why = layout_init (&l, img, codec);
  if (why) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "%ux%u format %d: %s", img->width, img->height, img->format, why);
    return FALSE;
  }
  if (n_streams == 0)
    n_streams = GST_GPUSTREAM_DXT_DEFAULT_STREAMS;
  n_streams = MIN (n_streams, GST_GPUSTREAM_DXT_MAX_STREAMS);

  st = staging_get (ctx);
  g_mutex_lock (&st->lock);
  step = encode_run (ctx, st, img, &pl, &l, codec, quality,
      batch_blocks, n_streams, out, &n_slices, &res);
  g_mutex_unlock (&st->lock);
  if (!run_result (DXT_GPU_ENCODE_KERNEL, step, res, error))
    return FALSE;
  GST_LOG_OBJECT (ctx, "%ux%u%s: %u slices over %u streams", img->width,
      img->height, on_device ? " from device memory" : "", n_slices,
      MIN (n_slices, n_streams));
  return TRUE;
#else
  return no_cuda (error);
#endif
}

gboolean
gst_gpustream_dxt_encode_frame (GstObject * cuda_context,
    const DxtImage * img, DxtCodec codec, DxtQuality quality,
    guint batch_blocks, guint n_streams, guint8 * out, GError ** error)
{
  return encode_frame (cuda_context, img, FALSE, codec, quality,
      batch_blocks, n_streams, out, error);
}

gboolean
gst_gpustream_dxt_encode_device_frame (GstObject * cuda_context,
    const DxtImage * dev_img, DxtCodec codec, DxtQuality quality,
    guint batch_blocks, guint n_streams, guint8 * out, GError ** error)
{
  return encode_frame (cuda_context, dev_img, TRUE, codec, quality,
      batch_blocks, n_streams, out, error);
}

gboolean
gst_gpustream_cuda_buffer_map (GstObject * cuda_context, GstBuffer * buf,
    GstMapInfo * map, guint n_planes, gsize * offset, gint * stride)
{
#if GS_HAVE_CUDA
  GstMemory *mem;
  GstCudaMemory *cmem;
  guint p;

  if (!cuda_context || !GST_IS_CUDA_CONTEXT (cuda_context) || !buf ||
      gst_buffer_n_memory (buf) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buf, 0);
  if (!gst_is_cuda_memory (mem))
    return FALSE;
  cmem = GST_CUDA_MEMORY_CAST (mem);
  /* a pointer of another context is not valid in ours */
  if (cmem->context != GST_CUDA_CONTEXT (cuda_context) ||
      n_planes > GST_VIDEO_INFO_N_PLANES (&cmem->info) ||
      n_planes > GST_VIDEO_MAX_PLANES)
    return FALSE;
  if (!gst_buffer_map (buf, map, GST_MAP_READ | GST_MAP_CUDA))
    return FALSE;
  for (p = 0; p < n_planes; p++) {
    offset[p] = GST_VIDEO_INFO_PLANE_OFFSET (&cmem->info, p);
    stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (&cmem->info, p);
  }
  return TRUE;
#else
  return FALSE;
#endif
}

gboolean
gst_gpustream_dxt_decode_frame (GstObject * cuda_context, DxtCodec codec,
    const guint8 * blocks, guint width, guint height, guint8 * rgba_out,
    guint stride, GError ** error)
{
#if GS_HAVE_CUDA
  GstCudaContext *ctx;
  DxtStaging *st;
  DecLayout l;
  const gchar *why, *step;
  CUresult res;
#endif

  gps_debug_init ();
  if (!blocks || !rgba_out) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "no blocks or no output");
    return FALSE;
  }
#if GS_HAVE_CUDA
  if (!(ctx = context_of (cuda_context, error)))
    return FALSE;
  if ((why = dec_layout_init (&l, codec, width, height, stride))) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "%ux%u codec %d stride %u: %s", width, height, codec, stride, why);
    return FALSE;
  }

  st = staging_get (ctx);
  g_mutex_lock (&st->lock);
  step = decode_run (ctx, st, &l, codec, blocks, width, height, rgba_out,
      stride, &res);
  g_mutex_unlock (&st->lock);
  if (!run_result (DXT_GPU_DECODE_KERNEL, step, res, error))
    return FALSE;
  GST_LOG_OBJECT (ctx, "%ux%u: %" G_GSIZE_FORMAT " bytes of blocks decoded",
      width, height, l.in_size);
  return TRUE;
#else
  return no_cuda (error);
#endif
}

/* ---- "dxt-encode": the scheduler processor (gpsprocessor.h) -------------
 * Every item of a batch is one raw video frame (a GstBuffer, in system
 * memory or, for a GPU run, in GstCudaMemory of the scheduler's context),
 * replaced by its DXT block stream (dxt_frame_bytes bytes, with the
 * timestamps, offsets, flags and metas of the frame: an element finds its
 * frame again by them). A GPU run codes each frame through
 * gst_gpustream_dxt_encode_frame (from the device when the frame lies in
 * CUDA memory of the context), a frame whose CUDA step fails on the CPU; a
 * CPU run codes the slices on `threads` threads (dxt_encode_frame_threads).
 * The bytes are the same on either. A frame that cannot be read (a buffer
 * shorter than the configured layout) becomes a NULL item, counted
 * (dxt-drops) and reported by a warning at most once a second.
 *
 * Container framing (HAP's Snappy second stage and chunks) is not the
 * processor's: it belongs to one output format and is cheap beside the
 * coding (no batch to gain from), so the element that makes that format
 * (dxtenc) frames the block stream after the processor.
 *
 * Configuration:
 *   video-format   the input's GstVideoFormat name: RGBA, BGRA, RGBx,
 *                  BGRx, UYVY, YUY2, I420 or NV12 (required)
 *   width, height  the frame size in pixels, > 0 (required)
 *   texture        dxt1 (BC1), dxt5 (BC3) or ycocg-dxt5 (scaled YCoCg in
 *                  BC3); default dxt1
 *   quality        fast or high; default fast
 *   batch-blocks   4x4 blocks per slice, rounded down to whole block rows
 *                  (at least one); 0 = the whole frame in one slice;
 *                  default 23040
 *   threads        CPU threads a frame's slices are shared among (0, the
 *                  default: one per online CPU)
 * A frame is mapped with the default layout of that format and size, or
 * that of its GstVideoMeta when it has one.
 *
 * On the GPU a frame in pinned memory of the context (a pool of
 * gst_gpustream_pinned_pool_new) is copied to the device as it is, without
 * the copy into the staging area, and the block streams come in buffers
 * of a pinned pool of the instance, which the copy from the device fills
 * directly. process_* code the frames one after the other; submit leaves
 * the batch's last frame in flight on the lane (its own staging area and
 * streams, up to GST_GPUSTREAM_DXT_MAX_LANES) and finish waits for it, so
 * that frames on different lanes overlap.
 * Stats: gpu-frames, cpu-frames (CPU fallbacks included),
 * device-input-frames (coded straight from CUDA memory), slices,
 * dxt-drops. */

typedef struct
{
  GstElement *owner;            /* no reference */
  DxtCodec codec;
  DxtQuality quality;
  DxtFormat in_format;
  GstVideoInfo info;
  guint batch_blocks;
  guint threads;
  guint slice_rows;             /* block rows a slice */
  guint slices;                 /* slices a frame */
  gsize tex_size;
  guint64 gpu_frames, cpu_frames, device_frames, n_slices, drops; /* atomic */
  gint64 last_gpu_warn, last_drop_warn;   /* the worker only */
  /* the GPU's: made on first use for the context of the run (the caller's
   * thread), freed at teardown. One staging area and set of streams per
   * lane, so that frames on different lanes are in flight together, and
   * the pool the output buffers come from (pinned: the blocks land in the
   * buffer that is pushed) */
  GstObject *gpu_ctx;
  gpointer lanes[GST_GPUSTREAM_DXT_MAX_LANES];    /* GpsStaging * */
  GstBufferPool *out_pool;
} DxtEncode;

static gboolean
dxt_format_from_video (GstVideoFormat f, DxtFormat * out)
{
  switch (f) {
    case GST_VIDEO_FORMAT_RGBA:
      *out = DXT_FMT_RGBA;
      return TRUE;
    case GST_VIDEO_FORMAT_BGRA:
      *out = DXT_FMT_BGRA;
      return TRUE;
    case GST_VIDEO_FORMAT_RGBx:
      *out = DXT_FMT_RGBX;
      return TRUE;
    case GST_VIDEO_FORMAT_BGRx:
      *out = DXT_FMT_BGRX;
      return TRUE;
    case GST_VIDEO_FORMAT_UYVY:
      *out = DXT_FMT_UYVY;
      return TRUE;
    case GST_VIDEO_FORMAT_YUY2:
      *out = DXT_FMT_YUY2;
      return TRUE;
    case GST_VIDEO_FORMAT_I420:
      *out = DXT_FMT_I420;
      return TRUE;
    case GST_VIDEO_FORMAT_NV12:
      *out = DXT_FMT_NV12;
      return TRUE;
    default:
      return FALSE;
  }
}

static gboolean
dxt_config_error (GError ** error, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);

static gboolean
dxt_config_error (GError ** error, const gchar * format, ...)
{
  va_list args;
  gchar *msg;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
      GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG, "dxt-encode: %s", msg);
  g_free (msg);
  return FALSE;
}

/* field of config, one of names (the index into *out); absent: *out as is */
static gboolean
dxt_config_choice (const GstStructure * config, const gchar * field,
    const gchar * const *names, guint n_names, guint * out, GError ** error)
{
  const gchar *v;
  guint i;

  if (!gst_structure_has_field (config, field))
    return TRUE;
  v = gst_structure_get_string (config, field);
  for (i = 0; v && i < n_names; i++) {
    if (g_str_equal (v, names[i])) {
      *out = i;
      return TRUE;
    }
  }
  return dxt_config_error (error, "%s \"%s\" is none of the known values",
      field, v ? v : "(not a string)");
}

/* field of config as an unsigned integer (int or uint); absent: *out as is */
static gboolean
dxt_config_uint (const GstStructure * config, const gchar * field,
    gboolean required, guint * out, GError ** error)
{
  const GValue *v = gst_structure_get_value (config, field);

  if (!v)
    return required ? dxt_config_error (error, "\"%s\" is missing", field) :
        TRUE;
  if (G_VALUE_HOLDS_UINT (v)) {
    *out = g_value_get_uint (v);
    return TRUE;
  }
  if (G_VALUE_HOLDS_INT (v) && g_value_get_int (v) >= 0) {
    *out = (guint) g_value_get_int (v);
    return TRUE;
  }
  return dxt_config_error (error, "\"%s\" is not a non-negative integer",
      field);
}

static gpointer
dxt_encode_setup (const GstStructure * config, GstElement * owner,
    GError ** error)
{
  static const gchar *const textures[] = { "dxt1", "dxt5", "ycocg-dxt5" };
  static const gchar *const qualities[] = { "fast", "high" };
  DxtEncode *de;
  const gchar *vformat;
  GstVideoFormat vf;
  guint codec = DXT_BC1, quality = DXT_FAST, width = 0, height = 0, by;
  guint batch_blocks = GST_GPUSTREAM_DXT_DEFAULT_BATCH_BLOCKS, threads = 0;
  DxtFormat in_format;

  G_STATIC_ASSERT (DXT_BC1 == 0 && DXT_BC3 == 1 && DXT_YCOCG == 2);
  G_STATIC_ASSERT (DXT_FAST == 0 && DXT_HIGH == 1);
  gps_debug_init ();
  vformat = config ? gst_structure_get_string (config, "video-format") : NULL;
  if (!vformat) {
    dxt_config_error (error, "\"video-format\" is missing (a GstVideoFormat "
        "name: RGBA, BGRA, RGBx, BGRx, UYVY, YUY2, I420 or NV12)");
    return NULL;
  }
  vf = gst_video_format_from_string (vformat);
  if (!dxt_format_from_video (vf, &in_format)) {
    dxt_config_error (error, "video-format \"%s\" is none of RGBA, BGRA, "
        "RGBx, BGRx, UYVY, YUY2, I420, NV12", vformat);
    return NULL;
  }
  if (!dxt_config_uint (config, "width", TRUE, &width, error) ||
      !dxt_config_uint (config, "height", TRUE, &height, error) ||
      !dxt_config_choice (config, "texture", textures, G_N_ELEMENTS (textures),
          &codec, error) ||
      !dxt_config_choice (config, "quality", qualities,
          G_N_ELEMENTS (qualities), &quality, error) ||
      !dxt_config_uint (config, "batch-blocks", FALSE, &batch_blocks, error) ||
      !dxt_config_uint (config, "threads", FALSE, &threads, error))
    return NULL;
  if (width == 0 || height == 0 || width > G_MAXINT || height > G_MAXINT) {
    dxt_config_error (error, "width %u x height %u is not a frame size",
        width, height);
    return NULL;
  }

  de = g_new0 (DxtEncode, 1);
  if (!gst_video_info_set_format (&de->info, vf, width, height)) {
    g_free (de);
    dxt_config_error (error, "width %u x height %u is too large for %s",
        width, height, vformat);
    return NULL;
  }
  de->owner = owner;
  de->codec = (DxtCodec) codec;
  de->quality = (DxtQuality) quality;
  de->in_format = in_format;
  de->batch_blocks = batch_blocks;
  de->threads = threads ? threads : dxt_cpu_count ();
  by = dxt_blocks_y (height);
  de->slice_rows = batch_blocks ? MAX (1, batch_blocks / dxt_blocks_x (width))
      : by;
  de->slices = (by + de->slice_rows - 1) / de->slice_rows;
  de->tex_size = dxt_frame_bytes (de->codec, width, height);
  return de;
}

/* The GPU state goes (nothing in flight). */
static void
dxt_encode_gpu_clear (DxtEncode * de)
{
  guint i;

  for (i = 0; i < GST_GPUSTREAM_DXT_MAX_LANES; i++) {
#if GS_HAVE_CUDA
    gps_cuda_staging_free (de->lanes[i]);
#endif
    de->lanes[i] = NULL;
  }
  /* buffers still downstream keep the pool until they come back */
  if (de->out_pool) {
    gst_buffer_pool_set_active (de->out_pool, FALSE);
    gst_clear_object (&de->out_pool);
  }
  gst_clear_object (&de->gpu_ctx);
}

static void
dxt_encode_teardown (gpointer data)
{
  DxtEncode *de = data;

  dxt_encode_gpu_clear (de);
  g_free (de);
}

/* The GPU state for cuda_context (a run on another context starts anew). */
static void
dxt_encode_gpu_ensure (DxtEncode * de, GstObject * cuda_context)
{
  if (de->gpu_ctx == cuda_context)
    return;
  dxt_encode_gpu_clear (de);
  de->gpu_ctx = gst_object_ref (cuda_context);
  de->out_pool = gst_gpustream_pinned_pool_new (cuda_context, NULL,
      de->tex_size, 0, 0);
  if (de->out_pool && !gst_buffer_pool_set_active (de->out_pool, TRUE))
    gst_clear_object (&de->out_pool);
  if (!de->out_pool)
    GST_WARNING_OBJECT (de->owner, "no pinned pool of %" G_GSIZE_FORMAT
        "-byte buffers: the blocks are copied once more", de->tex_size);
}

/* A frame between the start of its coding and its end: its maps, its
 * output buffer and, when its GPU work is queued, where. */
typedef struct
{
  GstBuffer *in;                /* the item's, a reference */
  GstBuffer *out;
  GstMapInfo omap;
  GstVideoFrame vframe;
  gboolean host_mapped;
  GstMapInfo dmap;
  gboolean dev_mapped;
  DxtImage img;
  gboolean coded, on_gpu, queued;
  const gchar *why;             /* not coded: why */
#if GS_HAVE_CUDA
  GpsStaging *st;
  DxtLayout l;
  DxtPlacement pl;
  guint n_slices;
#endif
} DxtFrame;

static gboolean
frame_map_host (DxtEncode * de, DxtFrame * f)
{
  guint p;

  if (!gst_video_frame_map (&f->vframe, &de->info, f->in, GST_MAP_READ)) {
    f->why = "input buffer too small for the configured format";
    return FALSE;
  }
  f->host_mapped = TRUE;
  memset (&f->img, 0, sizeof (f->img));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&f->vframe) && p < 3; p++) {
    f->img.plane[p] = GST_VIDEO_FRAME_PLANE_DATA (&f->vframe, p);
    f->img.stride[p] = GST_VIDEO_FRAME_PLANE_STRIDE (&f->vframe, p);
  }
  f->img.width = GST_VIDEO_FRAME_WIDTH (&f->vframe);
  f->img.height = GST_VIDEO_FRAME_HEIGHT (&f->vframe);
  f->img.format = de->in_format;
  return TRUE;
}

/* A frame in GstCudaMemory of cuda_context, mapped where it lies; FALSE
 * (nothing mapped) for any other buffer. */
static gboolean
frame_map_device (DxtEncode * de, GstObject * cuda_context, DxtFrame * f)
{
  const guint n_planes = GST_VIDEO_INFO_N_PLANES (&de->info);
  gsize offset[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
  guint p;

  /* an odd width of packed 4:2:2 ends in half a pixel pair whose chroma
   * byte GstCudaMemory's copies leave out (they copy width * 2 bytes a
   * row): read the frame through the host map, as the CPU would */
  if (n_planes > 3 || ((de->in_format == DXT_FMT_UYVY ||
              de->in_format == DXT_FMT_YUY2) &&
          (GST_VIDEO_INFO_WIDTH (&de->info) & 1)))
    return FALSE;
  if (!gst_gpustream_cuda_buffer_map (cuda_context, f->in, &f->dmap,
          n_planes, offset, stride))
    return FALSE;
  f->dev_mapped = TRUE;
  memset (&f->img, 0, sizeof (f->img));
  for (p = 0; p < n_planes; p++) {
    f->img.plane[p] = f->dmap.data + offset[p];
    f->img.stride[p] = stride[p];
  }
  f->img.width = GST_VIDEO_INFO_WIDTH (&de->info);
  f->img.height = GST_VIDEO_INFO_HEIGHT (&de->info);
  f->img.format = de->in_format;
  return TRUE;
}

static void
frame_unmap_input (DxtFrame * f)
{
  if (f->dev_mapped)
    gst_buffer_unmap (f->in, &f->dmap);
  if (f->host_mapped)
    gst_video_frame_unmap (&f->vframe);
  f->dev_mapped = f->host_mapped = FALSE;
}

/* The frame on the CPU (the slices shared among the threads): the same
 * bytes as the kernel's. */
static void
frame_code_cpu (DxtEncode * de, DxtFrame * f)
{
  if (f->dev_mapped)
    frame_unmap_input (f);
  if (!f->host_mapped && !frame_map_host (de, f))
    return;
  if (dxt_encode_frame_threads (&f->img, de->codec, de->quality,
          de->slice_rows, de->threads, f->omap.data) != 0) {
    f->why = "the DXT encoder refused the frame";
    return;
  }
  f->coded = TRUE;
}

/* A failing device fails every frame: once a second is enough. */
static void
warn_gpu_failed (DxtEncode * de, DxtFrame * f, const gchar * step,
    const gchar * detail)
{
  gchar *what = g_strdup_printf ("%s: %s", step, detail);

  if (gst_gpustream_warn_ok (&de->last_gpu_warn))
    GST_WARNING_OBJECT (de->owner, "GPU encode%s failed, frame coded on "
        "the CPU: %s", f->dev_mapped ? " from CUDA memory" : "", what);
  gps_gpu_fallback ("DXT encode", what);
  g_free (what);
}

#if GS_HAVE_CUDA
/* The lane's staging of the instance, made on first use; NULL when the
 * lane has work in flight (a caller with more lanes than
 * GST_GPUSTREAM_DXT_MAX_LANES): the frame then goes through the context's
 * shared staging, waited for at once. */
static GpsStaging *
lane_staging (DxtEncode * de, guint lane)
{
  GpsStaging **st = (GpsStaging **) & de->lanes[lane %
      GST_GPUSTREAM_DXT_MAX_LANES];
  gboolean busy;

  if (!*st)
    *st = gps_cuda_staging_new (GST_CUDA_CONTEXT (de->gpu_ctx));
  g_mutex_lock (&(*st)->lock);
  busy = (*st)->in_flight;
  g_mutex_unlock (&(*st)->lock);
  return busy ? NULL : *st;
}

/* The frame's GPU work queued on st: TRUE, or FALSE after a warning (the
 * caller codes it on the CPU). */
static gboolean
frame_submit_gpu (DxtEncode * de, DxtFrame * f, GpsStaging * st)
{
  GstCudaContext *ctx = GST_CUDA_CONTEXT (de->gpu_ctx);
  const gchar *why, *step;
  CUresult res = CUDA_SUCCESS;

  f->pl.in_device = f->dev_mapped;
  f->pl.in_pinned = !f->dev_mapped &&
      gst_gpustream_buffer_is_pinned (f->in, de->gpu_ctx);
  f->pl.out_pinned = gst_gpustream_buffer_is_pinned (f->out, de->gpu_ctx);
  why = f->dev_mapped ? layout_init_device (&f->l, &f->img, de->codec) :
      layout_init (&f->l, &f->img, de->codec);
  if (why) {
    warn_gpu_failed (de, f, "the frame's layout", why);
    return FALSE;
  }
  g_mutex_lock (&st->lock);
  step = encode_submit (ctx, st, &f->img, &f->pl, &f->l, de->codec,
      de->quality, de->batch_blocks, GST_GPUSTREAM_DXT_DEFAULT_STREAMS,
      f->omap.data, &f->n_slices, &res);
  if (!step)
    st->in_flight = TRUE;
  g_mutex_unlock (&st->lock);
  if (step) {
    warn_gpu_failed (de, f, step, res != CUDA_SUCCESS ?
        gps_cuda_strerror (res) : "");
    return FALSE;
  }
  f->st = st;
  f->queued = TRUE;
  return TRUE;
}

/* Waits for the frame's GPU work: TRUE with the blocks in out, or FALSE
 * after a warning. */
static gboolean
frame_wait_gpu (DxtEncode * de, DxtFrame * f)
{
  GpsStaging *st = f->st;
  const gchar *step;
  CUresult res = CUDA_SUCCESS;

  g_mutex_lock (&st->lock);
  step = encode_wait (GST_CUDA_CONTEXT (de->gpu_ctx), st, &f->l, &f->pl,
      GST_GPUSTREAM_DXT_DEFAULT_STREAMS, f->n_slices, f->omap.data, &res);
  st->in_flight = FALSE;
  g_mutex_unlock (&st->lock);
  f->queued = FALSE;
  if (step) {
    warn_gpu_failed (de, f, step, res != CUDA_SUCCESS ?
        gps_cuda_strerror (res) : "");
    return FALSE;
  }
  return TRUE;
}
#endif

/* The start of the frame of item (taken from it): on the GPU with
 * cuda_context, queued on the instance's lane and not waited for when
 * async, else done here; on the CPU without. */
static DxtFrame *
frame_begin (DxtEncode * de, GstObject * cuda_context, guint lane,
    gboolean async, GstGpuStreamSchedItem * item)
{
  DxtFrame *f = g_new0 (DxtFrame, 1);

  f->in = item->data;
  item->data = NULL;
  if (cuda_context)
    dxt_encode_gpu_ensure (de, cuda_context);
  if (cuda_context && de->out_pool &&
      gst_buffer_pool_acquire_buffer (de->out_pool, &f->out, NULL) ==
      GST_FLOW_OK) {
    gst_buffer_set_size (f->out, de->tex_size);
  } else {
    f->out = gst_buffer_new_allocate (NULL, de->tex_size, NULL);
  }
  gst_buffer_map (f->out, &f->omap, GST_MAP_WRITE);

#if GS_HAVE_CUDA
  if (cuda_context) {
    GpsStaging *st = lane_staging (de, lane);

    /* CUDA memory of the context is coded where it lies */
    if (!frame_map_device (de, cuda_context, f) && !frame_map_host (de, f))
      return f;
    if (!st) {
      st = staging_get (GST_CUDA_CONTEXT (cuda_context));
      async = FALSE;
    }
    if (frame_submit_gpu (de, f, st)) {
      f->on_gpu = TRUE;
      if (!async && !frame_wait_gpu (de, f))
        f->on_gpu = FALSE;
      else
        f->coded = !async;
      if (f->on_gpu)
        return f;
    }
  }
#endif
  frame_code_cpu (de, f);
  return f;
}

/* The end of the frame: waited for when queued, its output (with the
 * input's timestamps, offsets, flags and metas) into item, or NULL and a
 * warning when it could not be coded. */
static void
frame_end (DxtEncode * de, DxtFrame * f, GstGpuStreamSchedItem * item)
{
#if GS_HAVE_CUDA
  if (f->queued) {
    if (frame_wait_gpu (de, f))
      f->coded = TRUE;
    else
      f->on_gpu = FALSE;
  }
#endif
  if (!f->coded && !f->why)
    frame_code_cpu (de, f);
  if (f->coded && f->on_gpu && f->dev_mapped)
    __atomic_fetch_add (&de->device_frames, 1, __ATOMIC_RELAXED);
  frame_unmap_input (f);
  gst_buffer_unmap (f->out, &f->omap);

  if (f->coded) {
    gst_buffer_copy_into (f->out, f->in, GST_BUFFER_COPY_METADATA, 0, -1);
    item->data = f->out;
    __atomic_fetch_add (f->on_gpu ? &de->gpu_frames : &de->cpu_frames, 1,
        __ATOMIC_RELAXED);
    __atomic_fetch_add (&de->n_slices, de->slices, __ATOMIC_RELAXED);
  } else {
    gst_buffer_unref (f->out);
    item->data = NULL;
    __atomic_fetch_add (&de->drops, 1, __ATOMIC_RELAXED);
    if (de->owner && gst_gpustream_warn_ok (&de->last_drop_warn))
      GST_ELEMENT_WARNING (de->owner, STREAM, ENCODE,
          ("dxt-encode dropped a %ux%u %s frame: %s",
              GST_VIDEO_INFO_WIDTH (&de->info),
              GST_VIDEO_INFO_HEIGHT (&de->info),
              GST_VIDEO_INFO_NAME (&de->info), f->why),
          ("%" G_GUINT64_FORMAT " dropped so far (stats: dxt-drops); at "
              "most one warning a second", __atomic_load_n (&de->drops,
                  __ATOMIC_RELAXED)));
  }
  gst_buffer_unref (f->in);
  g_free (f);
}

/* An item to code: a frame not flushed since it was pushed (a flushed one
 * is dropped by the scheduler, not forwarded). */
static gboolean
item_wanted (GstGpuStreamSchedItem * item)
{
  return (item->flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) && item->data &&
      !(item->stream && gst_gpustream_sched_item_is_flushed (item));
}

/* The worker, once a cycle (or the element, a frame at a time): each
 * frame replaced by its block stream, one after the other on lane 0. */
static void
dxt_encode_process_gpu (gpointer proc_data, GstObject * cuda_context,
    GstGpuStreamSchedItem * items, guint n_items)
{
  DxtEncode *de = proc_data;
  guint i;

  for (i = 0; i < n_items; i++)
    if (item_wanted (&items[i]))
      frame_end (de, frame_begin (de, cuda_context, 0, FALSE, &items[i]),
          &items[i]);
}

static void
dxt_encode_process_cpu (gpointer proc_data, GstGpuStreamSchedItem * items,
    guint n_items)
{
  dxt_encode_process_gpu (proc_data, NULL, items, n_items);
}

/* Split in two (gpsscheduler.h): the last frame of the batch is left in
 * flight on the lane, the others are done at once; finish waits for it.
 * A caller that submits on a lane again must have finished it first. */
typedef struct
{
  GstGpuStreamSchedItem *item;
  DxtFrame *frame;
} DxtSubmitted;

static gpointer
dxt_encode_submit (gpointer proc_data, GstObject * cuda_context, guint lane,
    GstGpuStreamSchedItem * items, guint n_items)
{
  DxtEncode *de = proc_data;
  DxtSubmitted *sub = g_new0 (DxtSubmitted, 1);
  guint i, last = n_items;

  for (i = 0; i < n_items; i++)
    if (item_wanted (&items[i]))
      last = i;
  for (i = 0; i < last; i++)
    if (item_wanted (&items[i]))
      frame_end (de, frame_begin (de, cuda_context, lane, FALSE, &items[i]),
          &items[i]);
  if (last < n_items) {
    sub->item = &items[last];
    sub->frame = frame_begin (de, cuda_context, lane, TRUE, &items[last]);
  }
  return sub;
}

static void
dxt_encode_finish (gpointer proc_data, gpointer submitted)
{
  DxtSubmitted *sub = submitted;

  if (sub->frame)
    frame_end (proc_data, sub->frame, sub->item);
  g_free (sub);
}

static void
dxt_encode_get_stats (gpointer proc_data, GstStructure * stats)
{
  DxtEncode *de = proc_data;

  gst_structure_set (stats,
      "gpu-frames", G_TYPE_UINT64,
      __atomic_load_n (&de->gpu_frames, __ATOMIC_RELAXED),
      "cpu-frames", G_TYPE_UINT64,
      __atomic_load_n (&de->cpu_frames, __ATOMIC_RELAXED),
      "device-input-frames", G_TYPE_UINT64,
      __atomic_load_n (&de->device_frames, __ATOMIC_RELAXED),
      "slices", G_TYPE_UINT64,
      __atomic_load_n (&de->n_slices, __ATOMIC_RELAXED),
      "dxt-drops", G_TYPE_UINT64,
      __atomic_load_n (&de->drops, __ATOMIC_RELAXED), NULL);
}

static const GstGpuStreamProcessorInfo dxt_encode_info = {
  "dxt-encode",
  "DXT (S3TC) compression of raw video frames: BC1, BC3 or scaled YCoCg",
  {"dxt-encode", dxt_encode_process_cpu, dxt_encode_process_gpu,
      dxt_encode_submit, dxt_encode_finish},
  dxt_encode_setup, dxt_encode_teardown, dxt_encode_get_stats, NULL
};

const GstGpuStreamProcessorInfo *
gps_dxt_encode_processor_info (void)
{
  return &dxt_encode_info;
}
