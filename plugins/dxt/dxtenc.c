/* dxtenc: real-time DXT (S3TC) compression of raw video (paper 003).
 *
 * SECTION:element-dxtenc
 * @title: dxtenc
 *
 * Compresses every frame to BC1 (DXT1), BC3 (DXT5) or scaled YCoCg-DXT5
 * with the kernels of kernels/dxt, from RGBA/BGRA/RGBx/BGRx, UYVY/YUY2 (the
 * paper's YUV422 input, BT.601 limited range) or I420/NV12, any size (edge
 * blocks replicate the last column / row). Output is either the raw block
 * stream, `video/x-dxt` (ceil(w/4) x ceil(h/4) blocks, row-major, 8 or 16
 * bytes each), or one HAP frame per buffer, `video/x-hap` (format Hap1,
 * Hap5 or HapY; with `snappy` the Snappy second stage, one chunk), which
 * FFmpeg and HAP players read once muxed into .mov (pipelines/hap2mov.c).
 *
 * GStreamer 1.22 defines no caps for either; ours are
 * `video/x-dxt, format=(string){DXT1,DXT5,YCoCg-DXT5}, width, height,
 * framerate` and `video/x-hap, format=(string){Hap1,Hap5,HapY}, width,
 * height, framerate` (format = the HAP fourcc). Every output buffer is a
 * key frame.
 *
 * The frame is coded in slices of `batch-blocks` 4x4 blocks (rounded to
 * whole block rows; 0 = one slice per frame), the unit the paper batches to
 * the GPU. On the CPU path the slices run one after the other in the
 * streaming thread. With backend gpu / hybrid (or auto with a device) the
 * slices go through the CUDA kernel over a few CUDA streams, copy-in,
 * compute and copy-out of neighbouring slices overlapping; a frame whose
 * CUDA step fails is coded on the CPU instead (same bytes, a warning). Either
 * way the frame leaves as soon as it is coded and the reported latency is 0;
 * the bytes are the same for any slice size and backend.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,format=UYVY,width=1280,height=720 ! \
 *     dxtenc format=dxt1 hap=true snappy=true ! dxtdec ! videoconvert ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <gst/gpustream/gpsdxt.h>
#include <dxt/dxt.h>

#include "dxtenc.h"
#include "hap.h"

GST_DEBUG_CATEGORY_STATIC (gst_dxt_enc_debug);
#define GST_CAT_DEFAULT gst_dxt_enc_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_FORMAT GST_DXT_ENC_FORMAT_DXT1
#define DEFAULT_QUALITY GST_DXT_ENC_QUALITY_FAST
#define DEFAULT_HAP FALSE
#define DEFAULT_SNAPPY FALSE
/* The paper's best latency was 2880-5760 blocks per batch on its GPU. On an
 * H100 each slice costs ~9 us of API calls, so small slices lose both ways:
 * 1080p UYVY one frame at a time takes 410 us in slices of 2880 and 126 us
 * in slices of 23040, and 4K goes from 544 to 2230 frames/s
 * (docs/benchmarks/dxt.md, bench_dxt_gpu's dxt_gpu_sliced rows). */
#define DEFAULT_BATCH_BLOCKS 23040
/* the CPU path's threads: one per online CPU */
#define DEFAULT_THREADS 0

enum
{
  PROP_0,
  PROP_FORMAT,
  PROP_QUALITY,
  PROP_HAP,
  PROP_SNAPPY,
  PROP_BATCH_BLOCKS,
  PROP_THREADS,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

GType
gst_dxt_enc_format_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_DXT_ENC_FORMAT_DXT1, "BC1 / DXT1, 8 bytes per block, no alpha "
          "(HAP: Hap1)", "dxt1"},
    {GST_DXT_ENC_FORMAT_DXT5, "BC3 / DXT5, 16 bytes per block, alpha "
          "(HAP: Hap5)", "dxt5"},
    {GST_DXT_ENC_FORMAT_YCOCG_DXT5, "Scaled YCoCg in DXT5, 16 bytes per "
          "block, higher quality (HAP: HapY, Hap Q)", "ycocg-dxt5"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstDxtEncFormat", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_dxt_enc_quality_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_DXT_ENC_QUALITY_FAST, "Bounding-box range fit (real time)", "fast"},
    {GST_DXT_ENC_QUALITY_HIGH, "Principal-axis cluster fit with endpoint "
          "search (slower, higher PSNR)", "high"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstDxtEncQuality", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* ---- caps ---------------------------------------------------------------- */

#define DXT_ENC_RAW_FORMATS "{ RGBA, BGRA, RGBx, BGRx, UYVY, YUY2, I420, NV12 }"

/* CUDA memory first: from cudaupload or an nvcodec decoder the GPU path
 * reads the frame where it is (no copy to the host and back). Every backend
 * takes it: the CPU path maps it to system memory. */
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES ("memory:CUDAMemory",
            DXT_ENC_RAW_FORMATS) "; "
        GST_VIDEO_CAPS_MAKE (DXT_ENC_RAW_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-dxt, "
        "format = (string) { DXT1, DXT5, YCoCg-DXT5 }, "
        "width = (int) [ 1, MAX ], height = (int) [ 1, MAX ], "
        "framerate = (fraction) [ 0/1, MAX ]; "
        "video/x-hap, format = (string) { Hap1, Hap5, HapY }, "
        "width = (int) [ 1, MAX ], height = (int) [ 1, MAX ], "
        "framerate = (fraction) [ 0/1, MAX ]"));

static const gchar *const dxt_caps_names[] = { "DXT1", "DXT5", "YCoCg-DXT5" };
static const gchar *const hap_caps_names[] = { "Hap1", "Hap5", "HapY" };
static const int hap_tex_formats[] = { GS_HAP_TEX_DXT1, GS_HAP_TEX_DXT5,
  GS_HAP_TEX_YCOCG
};

/* ---- instance ------------------------------------------------------------ */

/* Stream state: from start to stop, streaming thread only. */
typedef struct
{
  /* settings snapshot taken at start */
  DxtCodec codec;
  DxtQuality quality;
  gboolean hap, snappy;
  guint batch_blocks;
  guint threads;

  DxtFormat in_format;
  GstVideoInfo info;
  gsize tex_size;
  guint8 *tex;                  /* HAP: the block stream before framing */

  /* GPU path: the element's GstCudaContext (a ref), NULL on the CPU */
  GstObject *cuda_context;
  gint64 last_gpu_warning;      /* monotonic us: warn at most once a second */
} EncState;

/* CUDA streams the slices are dealt over: one copying in, one computing,
 * one copying out */
#define DXT_ENC_GPU_STREAMS 3

struct _GstDxtEnc
{
  GstVideoEncoder parent;

  GstGpuStreamGpu gpu;

  /* settings, object lock */
  GstDxtEncFormat format;
  GstDxtEncQuality quality;
  gboolean hap;
  gboolean snappy;
  guint batch_blocks;
  guint threads;

  /* stats, object lock */
  guint64 st_frames;
  guint64 st_bytes_in;
  guint64 st_bytes_out;
  guint64 st_slices;
  guint64 st_gpu_frames;
  guint64 st_cpu_frames;
  guint64 st_device_input_frames;

  EncState *state;
};

#define gst_dxt_enc_parent_class parent_class
G_DEFINE_TYPE (GstDxtEnc, gst_dxt_enc, GST_TYPE_VIDEO_ENCODER);

GST_ELEMENT_REGISTER_DEFINE (dxtenc, "dxtenc", GST_RANK_NONE, GST_TYPE_DXT_ENC);

/* ---- the data path ------------------------------------------------------- */

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

static void
enc_state_free (EncState * st)
{
  g_free (st->tex);
  gst_clear_object (&st->cuda_context);
  g_free (st);
}

static gboolean
gst_dxt_enc_start (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);
  EncState *st = g_new0 (EncState, 1);

  GST_OBJECT_LOCK (self);
  st->codec = (DxtCodec) self->format;
  st->quality = (DxtQuality) self->quality;
  st->hap = self->hap;
  st->snappy = self->snappy;
  st->batch_blocks = self->batch_blocks;
  st->threads = self->threads ? self->threads : dxt_cpu_count ();
  self->st_frames = self->st_bytes_in = self->st_bytes_out = 0;
  self->st_slices = self->st_gpu_frames = self->st_cpu_frames = 0;
  self->st_device_input_frames = 0;
  GST_OBJECT_UNLOCK (self);

  if (!st->hap && st->snappy)
    GST_WARNING_OBJECT (self, "snappy=true needs hap=true: ignored");
  if (self->gpu.resolved != GST_GPUSTREAM_BACKEND_CPU &&
      self->gpu.cuda_context) {
    /* hybrid has no second coder here: the GPU takes every frame, the CPU
     * only those whose CUDA step fails */
    st->cuda_context = gst_object_ref (self->gpu.cuda_context);
    GST_INFO_OBJECT (self, "encoding on the GPU: slices of %u blocks over %d "
        "CUDA streams", st->batch_blocks, DXT_ENC_GPU_STREAMS);
  } else {
    GST_INFO_OBJECT (self, "encoding on the CPU (%s), slices of %u blocks "
        "over %u threads", dxt_cpu_path_name (dxt_get_cpu_path ()),
        st->batch_blocks, st->threads);
  }

  g_clear_pointer (&self->state, enc_state_free);
  self->state = st;
  return TRUE;
}

static gboolean
gst_dxt_enc_stop (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  g_clear_pointer (&self->state, enc_state_free);
  return TRUE;
}

static gboolean
gst_dxt_enc_open (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  return gst_gpustream_gpu_start (GST_ELEMENT (self), &self->gpu);
}

static gboolean
gst_dxt_enc_close (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  gst_gpustream_gpu_stop (&self->gpu);
  return TRUE;
}

static gboolean
gst_dxt_enc_set_format (GstVideoEncoder * enc, GstVideoCodecState * state)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);
  EncState *st = self->state;
  GstVideoCodecState *out;
  GstCaps *caps;

  if (!st)
    return FALSE;
  if (!dxt_format_from_video (GST_VIDEO_INFO_FORMAT (&state->info),
          &st->in_format)) {
    GST_WARNING_OBJECT (self, "unsupported input format %s",
        GST_VIDEO_INFO_NAME (&state->info));
    return FALSE;
  }
  st->info = state->info;
  st->tex_size = dxt_frame_bytes (st->codec, GST_VIDEO_INFO_WIDTH (&st->info),
      GST_VIDEO_INFO_HEIGHT (&st->info));
  g_clear_pointer (&st->tex, g_free);
  if (st->hap) {
    if (st->tex_size > G_MAXUINT32) {
      GST_WARNING_OBJECT (self, "frame too large for a HAP section");
      return FALSE;
    }
    st->tex = g_malloc (st->tex_size);
  }

  caps = gst_caps_new_simple (st->hap ? "video/x-hap" : "video/x-dxt",
      "format", G_TYPE_STRING, st->hap ? hap_caps_names[st->codec] :
      dxt_caps_names[st->codec], NULL);
  out = gst_video_encoder_set_output_state (enc, caps, state);
  gst_video_codec_state_unref (out);
  /* downstream that refuses our caps refuses the input caps with them */
  if (!gst_video_encoder_negotiate (enc)) {
    GST_WARNING_OBJECT (self, "downstream refused %s %s",
        st->hap ? "video/x-hap" : "video/x-dxt", st->hap ?
        hap_caps_names[st->codec] : dxt_caps_names[st->codec]);
    return FALSE;
  }
  /* both paths: the frame leaves the moment it is coded */
  gst_video_encoder_set_latency (enc, 0, 0);
  return TRUE;
}

/* A frame in GstCudaMemory of our context through the kernel without
 * leaving the device; FALSE (nothing written) for any other buffer or when
 * the launch fails, and the caller maps it to the host instead. */
static gboolean
encode_device_frame (GstDxtEnc * self, EncState * st, GstBuffer * buf,
    guint8 * dst)
{
  const guint n_planes = GST_VIDEO_INFO_N_PLANES (&st->info);
  gsize offset[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
  GstMapInfo map;
  DxtImage img;
  GError *err = NULL;
  gboolean ok;
  guint p;

  /* an odd width of packed 4:2:2 ends in half a pixel pair whose chroma
   * byte GstCudaMemory's copies leave out (they copy width * 2 bytes a
   * row): read the frame through the host map, as the CPU would */
  if (n_planes > 3 || ((st->in_format == DXT_FMT_UYVY ||
              st->in_format == DXT_FMT_YUY2) &&
          (GST_VIDEO_INFO_WIDTH (&st->info) & 1)))
    return FALSE;
  if (!gst_gpustream_cuda_buffer_map (st->cuda_context, buf, &map, n_planes,
          offset, stride))
    return FALSE;
  memset (&img, 0, sizeof (img));
  for (p = 0; p < n_planes; p++) {
    img.plane[p] = map.data + offset[p];
    img.stride[p] = stride[p];
  }
  img.width = GST_VIDEO_INFO_WIDTH (&st->info);
  img.height = GST_VIDEO_INFO_HEIGHT (&st->info);
  img.format = st->in_format;
  ok = gst_gpustream_dxt_encode_device_frame (st->cuda_context, &img,
      st->codec, st->quality, st->batch_blocks, DXT_ENC_GPU_STREAMS, dst,
      &err);
  gst_buffer_unmap (buf, &map);
  if (!ok) {
    if (gst_gpustream_warn_ok (&st->last_gpu_warning))
      GST_WARNING_OBJECT (self, "GPU encode from CUDA memory failed, frame "
          "coded from a host copy: %s", err ? err->message : "?");
    g_clear_error (&err);
  }
  return ok;
}

static GstFlowReturn
gst_dxt_enc_handle_frame (GstVideoEncoder * enc, GstVideoCodecFrame * frame)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);
  EncState *st = self->state;
  GstVideoFrame vframe;
  GstMapInfo omap;
  DxtImage img;
  guint8 *dst;
  guint bx, by, slice_rows, n_slices = 0, i;
  gsize out_size;
  GstFlowReturn ret;
  gboolean on_gpu = FALSE, device_input = FALSE;

  if (!st || !st->tex_size) {
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }

  out_size = st->hap ? gs_hap_max_frame_size (st->tex_size) : st->tex_size;
  ret = gst_video_encoder_allocate_output_frame (enc, frame, out_size);
  if (ret != GST_FLOW_OK) {
    gst_video_codec_frame_unref (frame);
    return ret;
  }
  gst_buffer_map (frame->output_buffer, &omap, GST_MAP_WRITE);
  dst = st->hap ? st->tex : omap.data;

  /* slices of batch-blocks blocks, rounded to whole block rows */
  bx = dxt_blocks_x (GST_VIDEO_INFO_WIDTH (&st->info));
  by = dxt_blocks_y (GST_VIDEO_INFO_HEIGHT (&st->info));
  slice_rows = st->batch_blocks ? MAX (1, st->batch_blocks / bx) : by;

  /* CUDA memory of our context: coded where it lies */
  if (st->cuda_context &&
      encode_device_frame (self, st, frame->input_buffer, dst)) {
    on_gpu = device_input = TRUE;
    n_slices = (by + slice_rows - 1) / slice_rows;
    goto coded;
  }

  if (!gst_video_frame_map (&vframe, &st->info, frame->input_buffer,
          GST_MAP_READ)) {
    gst_buffer_unmap (frame->output_buffer, &omap);
    GST_ELEMENT_ERROR (self, STREAM, ENCODE, (NULL),
        ("input buffer too small for %s", GST_VIDEO_INFO_NAME (&st->info)));
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_ERROR;
  }

  memset (&img, 0, sizeof (img));
  for (i = 0; i < GST_VIDEO_FRAME_N_PLANES (&vframe) && i < 3; i++) {
    img.plane[i] = GST_VIDEO_FRAME_PLANE_DATA (&vframe, i);
    img.stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&vframe, i);
  }
  img.width = GST_VIDEO_FRAME_WIDTH (&vframe);
  img.height = GST_VIDEO_FRAME_HEIGHT (&vframe);
  img.format = st->in_format;

  if (st->cuda_context) {
    GError *err = NULL;

    on_gpu = gst_gpustream_dxt_encode_frame (st->cuda_context, &img,
        st->codec, st->quality, st->batch_blocks, DXT_ENC_GPU_STREAMS, dst,
        &err);
    if (on_gpu) {
      n_slices = (by + slice_rows - 1) / slice_rows;
    } else {
      /* a failing device fails every frame: once a second is enough */
      if (gst_gpustream_warn_ok (&st->last_gpu_warning))
        GST_WARNING_OBJECT (self, "GPU encode failed, frame coded on the "
            "CPU: %s", err ? err->message : "?");
      g_clear_error (&err);
    }
  }
  /* the CPU: the slices shared among the threads, the same bytes */
  if (!on_gpu) {
    if (dxt_encode_frame_threads (&img, st->codec, st->quality, slice_rows,
            st->threads, dst) != 0) {
      gst_video_frame_unmap (&vframe);
      gst_buffer_unmap (frame->output_buffer, &omap);
      GST_ELEMENT_ERROR (self, STREAM, ENCODE, (NULL),
          ("DXT encoding of a %ux%u %s frame failed", img.width, img.height,
              GST_VIDEO_INFO_NAME (&st->info)));
      gst_video_codec_frame_unref (frame);
      return GST_FLOW_ERROR;
    }
    n_slices = (by + slice_rows - 1) / slice_rows;
  }
  gst_video_frame_unmap (&vframe);

coded:
  if (st->hap) {
    out_size = gs_hap_write_frame (omap.data, omap.size,
        hap_tex_formats[st->codec], st->snappy, st->tex, st->tex_size);
    g_assert (out_size > 0);
  }
  gst_buffer_unmap (frame->output_buffer, &omap);
  gst_buffer_set_size (frame->output_buffer, out_size);

  GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT (frame);
  GST_OBJECT_LOCK (self);
  self->st_frames++;
  self->st_bytes_in += gst_buffer_get_size (frame->input_buffer);
  self->st_bytes_out += out_size;
  self->st_slices += n_slices;
  if (device_input)
    self->st_device_input_frames++;
  if (on_gpu)
    self->st_gpu_frames++;
  else
    self->st_cpu_frames++;
  GST_OBJECT_UNLOCK (self);

  return gst_video_encoder_finish_frame (enc, frame);
}

static gboolean
gst_dxt_enc_src_query (GstVideoEncoder * enc, GstQuery * query)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  return GST_VIDEO_ENCODER_CLASS (parent_class)->src_query (enc, query);
}

static gboolean
gst_dxt_enc_sink_query (GstVideoEncoder * enc, GstQuery * query)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  return GST_VIDEO_ENCODER_CLASS (parent_class)->sink_query (enc, query);
}

static void
gst_dxt_enc_set_context (GstElement * element, GstContext * context)
{
  GstDxtEnc *self = GST_DXT_ENC (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstStructure *
gst_dxt_enc_get_stats (GstDxtEnc * self)
{
  GstStructure *s;

  GST_OBJECT_LOCK (self);
  s = gst_structure_new ("dxtenc-stats",
      "frames", G_TYPE_UINT64, self->st_frames,
      "bytes-in", G_TYPE_UINT64, self->st_bytes_in,
      "bytes-out", G_TYPE_UINT64, self->st_bytes_out,
      "slices", G_TYPE_UINT64, self->st_slices,
      "gpu-frames", G_TYPE_UINT64, self->st_gpu_frames,
      "cpu-frames", G_TYPE_UINT64, self->st_cpu_frames,
      "device-input-frames", G_TYPE_UINT64, self->st_device_input_frames,
      NULL);
  GST_OBJECT_UNLOCK (self);
  return s;
}

/* ---- GObject boilerplate ------------------------------------------------- */

static void
gst_dxt_enc_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstDxtEnc *self = GST_DXT_ENC (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FORMAT:
      self->format = g_value_get_enum (value);
      break;
    case PROP_QUALITY:
      self->quality = g_value_get_enum (value);
      break;
    case PROP_HAP:
      self->hap = g_value_get_boolean (value);
      break;
    case PROP_SNAPPY:
      self->snappy = g_value_get_boolean (value);
      break;
    case PROP_BATCH_BLOCKS:
      self->batch_blocks = g_value_get_uint (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_dxt_enc_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstDxtEnc *self = GST_DXT_ENC (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_dxt_enc_get_stats (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_FORMAT:
      g_value_set_enum (value, self->format);
      break;
    case PROP_QUALITY:
      g_value_set_enum (value, self->quality);
      break;
    case PROP_HAP:
      g_value_set_boolean (value, self->hap);
      break;
    case PROP_SNAPPY:
      g_value_set_boolean (value, self->snappy);
      break;
    case PROP_BATCH_BLOCKS:
      g_value_set_uint (value, self->batch_blocks);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_dxt_enc_finalize (GObject * object)
{
  GstDxtEnc *self = GST_DXT_ENC (object);

  g_clear_pointer (&self->state, enc_state_free);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_dxt_enc_class_init (GstDxtEncClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstVideoEncoderClass *venc_class = GST_VIDEO_ENCODER_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_dxt_enc_set_property;
  gobject_class->get_property = gst_dxt_enc_get_property;
  gobject_class->finalize = gst_dxt_enc_finalize;

  g_object_class_install_property (gobject_class, PROP_FORMAT,
      g_param_spec_enum ("format", "Format", "DXT block format",
          GST_TYPE_DXT_ENC_FORMAT, DEFAULT_FORMAT, flags));
  g_object_class_install_property (gobject_class, PROP_QUALITY,
      g_param_spec_enum ("quality", "Quality",
          "Endpoint search: speed against PSNR (same bytes on every backend "
          "for a given quality)", GST_TYPE_DXT_ENC_QUALITY, DEFAULT_QUALITY,
          flags));
  g_object_class_install_property (gobject_class, PROP_HAP,
      g_param_spec_boolean ("hap", "HAP",
          "Output HAP frames (video/x-hap) instead of the raw block stream "
          "(video/x-dxt)", DEFAULT_HAP, flags));
  g_object_class_install_property (gobject_class, PROP_SNAPPY,
      g_param_spec_boolean ("snappy", "Snappy",
          "With hap: Snappy second-stage compression (one chunk; stored "
          "uncompressed when Snappy does not shrink the frame)",
          DEFAULT_SNAPPY, flags));
  g_object_class_install_property (gobject_class, PROP_BATCH_BLOCKS,
      g_param_spec_uint ("batch-blocks", "Batch blocks",
          "4x4 blocks per slice, rounded down to whole block rows (at least "
          "one); 0 = the whole frame in one slice", 0, G_MAXUINT32,
          DEFAULT_BATCH_BLOCKS, flags));
  g_object_class_install_property (gobject_class, PROP_THREADS,
      g_param_spec_uint ("threads", "Threads",
          "CPU path: threads the slices are shared among, the streaming "
          "thread included (0 = one per online CPU, 1 = the streaming "
          "thread alone); the same bytes for any count", 0, 256,
          DEFAULT_THREADS, flags));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: frames, bytes-in, bytes-out, slices, gpu-frames, "
          "cpu-frames (coded on the CPU, fallbacks included), "
          "device-input-frames (coded straight from CUDA memory)",
          GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "DXT / HAP video encoder", "Codec/Encoder/Video",
      "Real-time DXT1 / DXT5 / YCoCg-DXT5 compression of raw video, as raw "
      "block streams or HAP frames, on the GPU or the CPU",
      "gst-gpustream developers");

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_dxt_enc_set_context);

  venc_class->open = GST_DEBUG_FUNCPTR (gst_dxt_enc_open);
  venc_class->close = GST_DEBUG_FUNCPTR (gst_dxt_enc_close);
  venc_class->start = GST_DEBUG_FUNCPTR (gst_dxt_enc_start);
  venc_class->stop = GST_DEBUG_FUNCPTR (gst_dxt_enc_stop);
  venc_class->set_format = GST_DEBUG_FUNCPTR (gst_dxt_enc_set_format);
  venc_class->handle_frame = GST_DEBUG_FUNCPTR (gst_dxt_enc_handle_frame);
  venc_class->src_query = GST_DEBUG_FUNCPTR (gst_dxt_enc_src_query);
  venc_class->sink_query = GST_DEBUG_FUNCPTR (gst_dxt_enc_sink_query);

  gst_type_mark_as_plugin_api (GST_TYPE_DXT_ENC_FORMAT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_DXT_ENC_QUALITY, 0);
  GST_DEBUG_CATEGORY_INIT (gst_dxt_enc_debug, "dxtenc", 0,
      "DXT / HAP video encoder");
}

static void
gst_dxt_enc_init (GstDxtEnc * self)
{
  gst_gpustream_gpu_init (&self->gpu);
  self->format = DEFAULT_FORMAT;
  self->quality = DEFAULT_QUALITY;
  self->hap = DEFAULT_HAP;
  self->snappy = DEFAULT_SNAPPY;
  self->batch_blocks = DEFAULT_BATCH_BLOCKS;
  self->threads = DEFAULT_THREADS;
}
