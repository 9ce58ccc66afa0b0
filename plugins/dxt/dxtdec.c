/* dxtdec: raw DXT block streams and HAP frames to RGBA / BGRA.
 *
 * SECTION:element-dxtdec
 * @title: dxtdec
 *
 * Decodes `video/x-dxt` (format DXT1, DXT5 or YCoCg-DXT5) and `video/x-hap`
 * (Hap1, Hap5, HapY; uncompressed, Snappy, or chunked with decode
 * instructions) to RGBA or BGRA, for display and for quality measurement.
 * It also takes the `video/x-gst-fourcc-Hap1` (-Hap5, -HapY) caps qtdemux
 * gives the HAP track of a .mov, and its rank (secondary) lets decodebin and
 * playbin pick it for those: GStreamer 1.22 has no other HAP decoder, and
 * the DXT / HAP caps are ours alone, so it is picked for nothing else.
 * The texture format of a HAP frame is read from the frame itself. A frame
 * that is truncated, of the wrong size or otherwise corrupt is dropped with
 * a GST_ELEMENT_WARNING and counted in `stats` (frames-dropped); the parser
 * checks every length before it reads.
 *
 * With backend gpu or hybrid (auto with a device) the block stream (after
 * HAP unwrapping on the CPU) is decoded by the CUDA kernel, one thread per
 * block, to the same pixels; BGRA is swapped from RGBA on the host, as on
 * the CPU path. A frame whose CUDA step fails is decoded on the CPU instead
 * (a warning at most once a second); `stats` counts both.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=30 ! video/x-raw,format=RGBA,width=640,height=360 ! \
 *     dxtenc format=ycocg-dxt5 hap=true snappy=true ! dxtdec ! videoconvert ! fakesink
 * gst-launch-1.0 filesrc location=x.mov ! decodebin ! videoconvert ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <gst/gpustream/gpsdxt.h>
#include <dxt/dxt.h>

#include "dxtdec.h"
#include "hap.h"
#include "hapcaps.h"

GST_DEBUG_CATEGORY_STATIC (gst_dxt_dec_debug);
#define GST_CAT_DEFAULT gst_dxt_dec_debug

/* ---- properties ---------------------------------------------------------- */

enum
{
  PROP_0,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-dxt, "
        "format = (string) { DXT1, DXT5, YCoCg-DXT5 }, "
        "width = (int) [ 1, MAX ], height = (int) [ 1, MAX ]; " GS_HAP_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE ("{ RGBA, BGRA }")));

/* ---- instance ------------------------------------------------------------ */

typedef struct
{
  gboolean hap;
  DxtCodec codec;               /* raw streams: from the caps */
  guint width, height;
  guint8 *tex;                  /* HAP: the block stream after unframing */
  gsize tex_cap;

  /* GPU path: the element's GstCudaContext (a ref), NULL on the CPU */
  GstObject *cuda_context;
  gint64 last_gpu_warning;      /* monotonic us: warn at most once a second */
} DecState;

struct _GstDxtDec
{
  GstVideoDecoder parent;

  GstGpuStreamGpu gpu;

  /* stats, object lock */
  guint64 st_frames;
  guint64 st_dropped;
  guint64 st_gpu_frames;
  guint64 st_cpu_frames;

  DecState *state;
};

#define gst_dxt_dec_parent_class parent_class
G_DEFINE_TYPE (GstDxtDec, gst_dxt_dec, GST_TYPE_VIDEO_DECODER);

GST_ELEMENT_REGISTER_DEFINE (dxtdec, "dxtdec", GST_RANK_SECONDARY,
    GST_TYPE_DXT_DEC);

/* ---- the data path ------------------------------------------------------- */

static void
dec_state_free (DecState * st)
{
  g_free (st->tex);
  gst_clear_object (&st->cuda_context);
  g_free (st);
}

static gboolean
gst_dxt_dec_start (GstVideoDecoder * dec)
{
  GstDxtDec *self = GST_DXT_DEC (dec);

  g_clear_pointer (&self->state, dec_state_free);
  self->state = g_new0 (DecState, 1);
  GST_OBJECT_LOCK (self);
  self->st_frames = self->st_dropped = 0;
  self->st_gpu_frames = self->st_cpu_frames = 0;
  GST_OBJECT_UNLOCK (self);

  if (self->gpu.resolved != GST_GPUSTREAM_BACKEND_CPU &&
      self->gpu.cuda_context) {
    /* hybrid has no second decoder here: the GPU takes every frame, the CPU
     * only those whose CUDA step fails */
    self->state->cuda_context = gst_object_ref (self->gpu.cuda_context);
    GST_INFO_OBJECT (self, "decoding on the GPU, output to system memory");
  } else {
    GST_INFO_OBJECT (self, "decoding on the CPU");
  }
  return TRUE;
}

static gboolean
gst_dxt_dec_stop (GstVideoDecoder * dec)
{
  GstDxtDec *self = GST_DXT_DEC (dec);

  g_clear_pointer (&self->state, dec_state_free);
  return TRUE;
}

static gboolean
gst_dxt_dec_open (GstVideoDecoder * dec)
{
  GstDxtDec *self = GST_DXT_DEC (dec);

  return gst_gpustream_gpu_start (GST_ELEMENT (self), &self->gpu);
}

static gboolean
gst_dxt_dec_close (GstVideoDecoder * dec)
{
  GstDxtDec *self = GST_DXT_DEC (dec);

  gst_gpustream_gpu_stop (&self->gpu);
  return TRUE;
}

static GstVideoFormat
gst_dxt_dec_pick_format (GstDxtDec * self)
{
  GstVideoFormat fmt = GST_VIDEO_FORMAT_RGBA;
  GstCaps *peer = gst_pad_get_allowed_caps (GST_VIDEO_DECODER_SRC_PAD (self));

  if (peer && !gst_caps_is_empty (peer)) {
    GstStructure *s;
    const gchar *f;

    peer = gst_caps_fixate (peer);
    s = gst_caps_get_structure (peer, 0);
    f = gst_structure_get_string (s, "format");
    if (f && g_str_equal (f, "BGRA"))
      fmt = GST_VIDEO_FORMAT_BGRA;
  }
  if (peer)
    gst_caps_unref (peer);
  return fmt;
}

static gboolean
gst_dxt_dec_set_format (GstVideoDecoder * dec, GstVideoCodecState * state)
{
  GstDxtDec *self = GST_DXT_DEC (dec);
  DecState *st = self->state;
  GstStructure *s = gst_caps_get_structure (state->caps, 0);
  const gchar *f = gst_structure_get_string (s, "format");
  gint w = 0, h = 0, hap_tex = gs_hap_caps_tex_format (s);
  GstVideoCodecState *out;

  if (!st || (!f && !hap_tex) || !gst_structure_get_int (s, "width", &w) ||
      !gst_structure_get_int (s, "height", &h) || w <= 0 || h <= 0)
    return FALSE;
  /* HAP: the caps' format is a first guess, each frame says its own */
  st->hap = hap_tex != 0;
  if (hap_tex == GS_HAP_TEX_DXT1 || (!st->hap && g_str_equal (f, "DXT1")))
    st->codec = DXT_BC1;
  else if (hap_tex == GS_HAP_TEX_DXT5 || (!st->hap && g_str_equal (f, "DXT5")))
    st->codec = DXT_BC3;
  else if (hap_tex == GS_HAP_TEX_YCOCG || (!st->hap &&
          g_str_equal (f, "YCoCg-DXT5")))
    st->codec = DXT_YCOCG;
  else
    return FALSE;
  st->width = w;
  st->height = h;

  out = gst_video_decoder_set_output_state (dec, gst_dxt_dec_pick_format (self),
      w, h, state);
  gst_video_codec_state_unref (out);
  return gst_video_decoder_negotiate (dec);
}

static GstFlowReturn
gst_dxt_dec_drop (GstDxtDec * self, GstVideoCodecFrame * frame,
    const gchar * why)
{
  GST_ELEMENT_WARNING (self, STREAM, DECODE, ("Corrupt DXT / HAP frame"),
      ("frame %u dropped: %s", frame->system_frame_number, why));
  GST_OBJECT_LOCK (self);
  self->st_dropped++;
  GST_OBJECT_UNLOCK (self);
  return gst_video_decoder_drop_frame (GST_VIDEO_DECODER (self), frame);
}

static GstFlowReturn
gst_dxt_dec_handle_frame (GstVideoDecoder * dec, GstVideoCodecFrame * frame)
{
  GstDxtDec *self = GST_DXT_DEC (dec);
  DecState *st = self->state;
  GstVideoCodecState *out_state;
  GstVideoFrame vframe;
  GstMapInfo in;
  const guint8 *blocks;
  DxtCodec codec = st ? st->codec : DXT_BC1;
  gsize need;
  GstFlowReturn ret;
  gboolean on_gpu = FALSE;
  guint8 *pixels;
  guint stride;

  if (!st || !st->width) {
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!gst_buffer_map (frame->input_buffer, &in, GST_MAP_READ)) {
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_ERROR;
  }

  if (st->hap) {
    GsHapInfo info;
    int r = gs_hap_peek (in.data, in.size, &info);

    if (r != GS_HAP_OK) {
      gst_buffer_unmap (frame->input_buffer, &in);
      return gst_dxt_dec_drop (self, frame, gs_hap_result_str (r));
    }
    /* the frame, not the caps, says what the texture is */
    codec = info.tex_format == GS_HAP_TEX_DXT1 ? DXT_BC1 :
        info.tex_format == GS_HAP_TEX_DXT5 ? DXT_BC3 : DXT_YCOCG;
    need = dxt_frame_bytes (codec, st->width, st->height);
    if (st->tex_cap < need) {
      g_free (st->tex);
      st->tex = g_malloc (need);
      st->tex_cap = need;
    }
    r = gs_hap_decode (in.data, in.size, st->tex, need);
    if (r != GS_HAP_OK) {
      gst_buffer_unmap (frame->input_buffer, &in);
      return gst_dxt_dec_drop (self, frame, gs_hap_result_str (r));
    }
    blocks = st->tex;
  } else {
    need = dxt_frame_bytes (codec, st->width, st->height);
    if (in.size != need) {
      gchar *why = g_strdup_printf ("%" G_GSIZE_FORMAT " bytes, expected %"
          G_GSIZE_FORMAT, in.size, need);

      gst_buffer_unmap (frame->input_buffer, &in);
      ret = gst_dxt_dec_drop (self, frame, why);
      g_free (why);
      return ret;
    }
    blocks = in.data;
  }

  ret = gst_video_decoder_allocate_output_frame (dec, frame);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unmap (frame->input_buffer, &in);
    gst_video_codec_frame_unref (frame);
    return ret;
  }
  out_state = gst_video_decoder_get_output_state (dec);
  if (!gst_video_frame_map (&vframe, &out_state->info, frame->output_buffer,
          GST_MAP_WRITE)) {
    gst_video_codec_state_unref (out_state);
    gst_buffer_unmap (frame->input_buffer, &in);
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_ERROR;
  }
  pixels = GST_VIDEO_FRAME_PLANE_DATA (&vframe, 0);
  stride = GST_VIDEO_FRAME_PLANE_STRIDE (&vframe, 0);
  if (st->cuda_context) {
    GError *err = NULL;

    on_gpu = gst_gpustream_dxt_decode_frame (st->cuda_context, codec, blocks,
        st->width, st->height, pixels, stride, &err);
    if (!on_gpu) {
      /* a failing device fails every frame: once a second is enough */
      if (gst_gpustream_warn_ok (&st->last_gpu_warning))
        GST_WARNING_OBJECT (self, "GPU decode failed, frame decoded on the "
            "CPU: %s", err ? err->message : "?");
      g_clear_error (&err);
    }
  }
  if (!on_gpu)
    dxt_decode_frame (codec, blocks, st->width, st->height, pixels, stride);
  /* the kernels write RGBA; a swap here costs far less than the decode */
  if (GST_VIDEO_INFO_FORMAT (&out_state->info) == GST_VIDEO_FORMAT_BGRA) {
    guint y, x;

    for (y = 0; y < st->height; y++) {
      guint8 *p = pixels + (gsize) y * stride;

      for (x = 0; x < st->width; x++, p += 4) {
        guint8 t = p[0];
        p[0] = p[2];
        p[2] = t;
      }
    }
  }
  gst_video_frame_unmap (&vframe);
  gst_video_codec_state_unref (out_state);
  gst_buffer_unmap (frame->input_buffer, &in);

  GST_LOG_OBJECT (self, "frame %u decoded on the %s",
      frame->system_frame_number, on_gpu ? "GPU" : "CPU");
  GST_OBJECT_LOCK (self);
  self->st_frames++;
  if (on_gpu)
    self->st_gpu_frames++;
  else
    self->st_cpu_frames++;
  GST_OBJECT_UNLOCK (self);
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  return gst_video_decoder_finish_frame (dec, frame);
}

static gboolean
gst_dxt_dec_src_query (GstVideoDecoder * dec, GstQuery * query)
{
  GstDxtDec *self = GST_DXT_DEC (dec);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  return GST_VIDEO_DECODER_CLASS (parent_class)->src_query (dec, query);
}

static gboolean
gst_dxt_dec_sink_query (GstVideoDecoder * dec, GstQuery * query)
{
  GstDxtDec *self = GST_DXT_DEC (dec);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  return GST_VIDEO_DECODER_CLASS (parent_class)->sink_query (dec, query);
}

static void
gst_dxt_dec_set_context (GstElement * element, GstContext * context)
{
  GstDxtDec *self = GST_DXT_DEC (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

/* ---- GObject boilerplate ------------------------------------------------- */

static void
gst_dxt_dec_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstDxtDec *self = GST_DXT_DEC (object);

  if (!gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu,
          prop_id, PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gst_dxt_dec_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstDxtDec *self = GST_DXT_DEC (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  switch (prop_id) {
    case PROP_STATS:
      GST_OBJECT_LOCK (self);
      g_value_take_boxed (value, gst_structure_new ("dxtdec-stats",
              "frames-decoded", G_TYPE_UINT64, self->st_frames,
              "frames-dropped", G_TYPE_UINT64, self->st_dropped,
              "gpu-frames", G_TYPE_UINT64, self->st_gpu_frames,
              "cpu-frames", G_TYPE_UINT64, self->st_cpu_frames, NULL));
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_dxt_dec_finalize (GObject * object)
{
  GstDxtDec *self = GST_DXT_DEC (object);

  g_clear_pointer (&self->state, dec_state_free);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_dxt_dec_class_init (GstDxtDecClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstVideoDecoderClass *vdec_class = GST_VIDEO_DECODER_CLASS (klass);

  gobject_class->set_property = gst_dxt_dec_set_property;
  gobject_class->get_property = gst_dxt_dec_get_property;
  gobject_class->finalize = gst_dxt_dec_finalize;

  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: frames-decoded, frames-dropped (corrupt input), "
          "gpu-frames, cpu-frames (decoded on the CPU, fallbacks included)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "DXT / HAP video decoder", "Codec/Decoder/Video",
      "Decodes DXT1 / DXT5 / YCoCg-DXT5 block streams and HAP frames to RGBA "
      "or BGRA, on the GPU or the CPU", "gst-gpustream developers");

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_dxt_dec_set_context);

  vdec_class->open = GST_DEBUG_FUNCPTR (gst_dxt_dec_open);
  vdec_class->close = GST_DEBUG_FUNCPTR (gst_dxt_dec_close);
  vdec_class->start = GST_DEBUG_FUNCPTR (gst_dxt_dec_start);
  vdec_class->stop = GST_DEBUG_FUNCPTR (gst_dxt_dec_stop);
  vdec_class->set_format = GST_DEBUG_FUNCPTR (gst_dxt_dec_set_format);
  vdec_class->handle_frame = GST_DEBUG_FUNCPTR (gst_dxt_dec_handle_frame);
  vdec_class->src_query = GST_DEBUG_FUNCPTR (gst_dxt_dec_src_query);
  vdec_class->sink_query = GST_DEBUG_FUNCPTR (gst_dxt_dec_sink_query);

  GST_DEBUG_CATEGORY_INIT (gst_dxt_dec_debug, "dxtdec", 0,
      "DXT / HAP video decoder");
}

static void
gst_dxt_dec_init (GstDxtDec * self)
{
  gst_gpustream_gpu_init (&self->gpu);
  gst_video_decoder_set_packetized (GST_VIDEO_DECODER (self), TRUE);
}
