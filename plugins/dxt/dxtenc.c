/* dxtenc: real-time DXT (S3TC) compression of raw video, after Kim, Yoo,
 * Kim and Kim, "In-network Processing of the GPU-based Real-time DXT
 * Compression" (2011).
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
 * Hap5 or HapY; with `snappy` the Snappy second stage; large frames in
 * `chunks` second-stage chunks that players decompress in parallel), which
 * `hapmovmux` writes into a .mov that FFmpeg and HAP players open.
 *
 * GStreamer 1.22 defines no caps for either; ours are
 * `video/x-dxt, format=(string){DXT1,DXT5,YCoCg-DXT5}, width, height,
 * framerate` and `video/x-hap, format=(string){Hap1,Hap5,HapY}, width,
 * height, framerate` (format = the HAP fourcc). Every output buffer is a
 * key frame.
 *
 * The coding is the library's scheduler processor "dxt-encode" (gpsdxt.c),
 * configured from the caps and the properties, in both modes below; HAP
 * framing is the element's, done on its block stream.
 *
 * The frame is coded in slices of `batch-blocks` 4x4 blocks (rounded to
 * whole block rows; 0 = one slice per frame), the unit the paper batches to
 * the GPU. On the CPU path the slices are shared among `threads` threads
 * and the frame leaves when coded (latency 0). With backend gpu / hybrid (or
 * auto with a device) the slices go through the CUDA kernel over a few CUDA
 * streams, and up to 3 frames are in flight at once, each on a lane of its
 * own, so that the copy in of one frame, the kernel of the one before and
 * the copy out of the one before that overlap; a finisher thread pushes
 * each frame, in order, as soon as it is coded (latency: min 0, max 3
 * frames). A frame whose CUDA step fails is coded on the CPU instead (same
 * bytes, a warning). The bytes are the same for any slice size and backend.
 *
 * Upstream is offered a pool of frame buffers: pinned host memory on the
 * GPU (the frames are copied to the device from where upstream wrote them),
 * system memory on the CPU; the blocks come back into pinned buffers that
 * are pushed as they are.
 *
 * With `cycle` > 0 the frames go through the device's real-time scheduler
 * (gpsscheduler.h, the GPU-centric model of Zhang, Hu and Hua, "A
 * holistic approach to build real-time stream processing system with GPU",
 * 2015) instead: collected as they come, coded as one
 * batch per cycle by the device's worker thread (one launch per cycle for
 * every scheduled dxtenc on that device) and finished in order by a
 * forwarder thread; the same bytes, within 3 cycles (the reported latency).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,format=UYVY,width=1280,height=720 ! \
 *     dxtenc format=dxt1 hap=true snappy=true ! dxtdec ! videoconvert ! fakesink
 * gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,width=640,height=360 ! \
 *     dxtenc format=dxt5 hap=true snappy=true ! hapmovmux ! filesink location=x.mov
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <gst/gpustream/gpsdxt.h>
#include <gst/gpustream/gpsprocessor.h>
#include <gst/gpustream/gpsschedclient.h>
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
/* 0: chunks by frame size (hap_auto_chunks) */
#define DEFAULT_CHUNKS 0
#define MAX_CHUNKS 64
/* auto chunks: one per this many texture bytes (rounded), so that a 1080p
 * frame is a few chunks and a 4K frame a dozen or more, which a player
 * decompresses on as many threads; a small frame stays one section */
#define AUTO_CHUNK_BYTES (512 * 1024)
/* dxt-encode's default (gpsdxt.h says why) */
#define DEFAULT_BATCH_BLOCKS GST_GPUSTREAM_DXT_DEFAULT_BATCH_BLOCKS
/* the CPU path's threads: one per online CPU */
#define DEFAULT_THREADS 0
/* 0: each frame coded in the streaming thread as it comes */
#define DEFAULT_CYCLE 0
#define DEFAULT_MAX_RATE 0
#define MAX_CYCLE GST_SECOND

enum
{
  PROP_0,
  PROP_FORMAT,
  PROP_QUALITY,
  PROP_HAP,
  PROP_SNAPPY,
  PROP_CHUNKS,
  PROP_BATCH_BLOCKS,
  PROP_THREADS,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_CYCLE,
  PROP_MAX_RATE,
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
  guint chunks;                 /* the property; per caps: tex_chunks */
  guint batch_blocks;
  guint threads;

  GstVideoInfo info;
  gsize tex_size;
  guint tex_chunks;             /* HAP: second-stage chunks of a frame */

  /* GPU path: the element's GstCudaContext (a ref), NULL on the CPU */
  GstObject *cuda_context;
} EncState;

/* gpu-frames, cpu-frames, device-input-frames, slices: dxt-encode's */
#define DXT_ENC_CODER_COUNTERS 4

struct _GstDxtEnc
{
  GstVideoEncoder parent;

  GstGpuStreamGpu gpu;

  /* settings, object lock */
  GstDxtEncFormat format;
  GstDxtEncQuality quality;
  gboolean hap;
  gboolean snappy;
  guint chunks;
  guint batch_blocks;
  guint threads;
  GstClockTime cycle;
  guint64 max_rate;

  /* stats, object lock */
  guint64 st_frames;
  guint64 st_bytes_in;
  guint64 st_bytes_out;
  /* dxt-encode's counters of the instances retired since start */
  guint64 st_coded[DXT_ENC_CODER_COUNTERS];

  EncState *state;

  /* the processor "dxt-encode" and its instance for the current format:
   * set in set_format (nothing in flight), read by whoever codes */
  const GstGpuStreamProcessorInfo *coder_info;
  GMutex coder_lock;
  gpointer coder;

  /* scheduled mode (cycle > 0). sched lives as long as the element;
   * scheduled is fixed from start to stop. sched_stream (w = sched_w) is
   * set and cleared by the streaming thread, or in stop. */
  GstGpuStreamSchedClient *sched;
  gboolean scheduled;
  GstGpuStreamSchedClientStream *sched_stream;
  guint32 sched_w;
  guint sched_max_in_flight;    /* streaming thread, set with the format */

  /* pipelined mode (GPU, cycle 0): frames in flight on the processor's
   * lanes, finished in order by the finisher thread. pipe_lanes is fixed
   * from start to stop (0: not pipelined); the rest under pipe_lock */
  guint pipe_lanes;
  GMutex pipe_lock;
  GCond pipe_cond;
  GQueue pipe_queue;            /* PipeSlot *, oldest first */
  guint pipe_in_flight;         /* queued or being finished */
  guint pipe_next_lane;
  gboolean pipe_flushing, pipe_quit;
  GstFlowReturn pipe_ret;       /* the last push that failed */
  GThread *pipe_thread;
  gboolean pipe_primed;         /* streaming thread: a frame went out */
};

#define gst_dxt_enc_parent_class parent_class
G_DEFINE_TYPE (GstDxtEnc, gst_dxt_enc, GST_TYPE_VIDEO_ENCODER);

GST_ELEMENT_REGISTER_DEFINE (dxtenc, "dxtenc", GST_RANK_NONE, GST_TYPE_DXT_ENC);

/* ---- the data path ------------------------------------------------------- */

/* The coding itself is the library's processor "dxt-encode" (gpsdxt.c),
 * one instance per input format (configured in set_format): the
 * unscheduled path runs it on each frame in the streaming thread, the
 * scheduled one hands the frames to the device's scheduler, whose worker
 * runs it on a cycle's batch. Either way the block stream comes back here
 * (enc_finish_coded), where HAP framing (the container's, not the
 * coder's) makes the output frame: the same bytes in both modes. */

/* the processor's counters that the element's stats add up */
static const gchar *const coder_counters[DXT_ENC_CODER_COUNTERS] = {
  "gpu-frames", "cpu-frames", "device-input-frames", "slices"
};

/* The instance's counters added to sums. */
static void
coder_add_counts (GstDxtEnc * self, gpointer coder, guint64 * sums)
{
  GstStructure *s = gst_structure_new_empty ("dxt-encode");
  guint i;

  self->coder_info->get_stats (coder, s);
  for (i = 0; i < DXT_ENC_CODER_COUNTERS; i++) {
    guint64 v = 0;

    gst_structure_get_uint64 (s, coder_counters[i], &v);
    sums[i] += v;
  }
  gst_structure_free (s);
}

/* The instance goes, its counters kept in the element's. */
static void
coder_retire (GstDxtEnc * self)
{
  gpointer coder;
  guint64 counts[DXT_ENC_CODER_COUNTERS] = { 0 };
  guint i;

  g_mutex_lock (&self->coder_lock);
  coder = g_steal_pointer (&self->coder);
  g_mutex_unlock (&self->coder_lock);
  if (!coder)
    return;
  coder_add_counts (self, coder, counts);
  self->coder_info->teardown (coder);
  GST_OBJECT_LOCK (self);
  for (i = 0; i < DXT_ENC_CODER_COUNTERS; i++)
    self->st_coded[i] += counts[i];
  GST_OBJECT_UNLOCK (self);
}

/* An instance for the input info (nothing in flight): FALSE after a
 * warning naming what the processor refused. */
static gboolean
coder_configure (GstDxtEnc * self, EncState * st, const GstVideoInfo * info)
{
  static const gchar *const textures[] = { "dxt1", "dxt5", "ycocg-dxt5" };
  GstStructure *config;
  GError *err = NULL;
  gpointer coder;

  config = gst_structure_new ("dxt-encode",
      "video-format", G_TYPE_STRING, GST_VIDEO_INFO_NAME (info),
      "width", G_TYPE_INT, GST_VIDEO_INFO_WIDTH (info),
      "height", G_TYPE_INT, GST_VIDEO_INFO_HEIGHT (info),
      "texture", G_TYPE_STRING, textures[st->codec],
      "quality", G_TYPE_STRING, st->quality == DXT_HIGH ? "high" : "fast",
      "batch-blocks", G_TYPE_UINT, st->batch_blocks,
      "threads", G_TYPE_UINT, st->threads, NULL);
  coder = self->coder_info->setup (config, GST_ELEMENT (self), &err);
  gst_structure_free (config);
  coder_retire (self);
  if (!coder) {
    GST_WARNING_OBJECT (self, "%s", err->message);
    g_clear_error (&err);
    return FALSE;
  }
  g_mutex_lock (&self->coder_lock);
  self->coder = coder;
  g_mutex_unlock (&self->coder_lock);
  return TRUE;
}

/* Each raw frame of items replaced by its block stream (NULL: not coded),
 * on the GPU with cuda_context, else on the CPU. The streaming thread (one
 * frame) or the scheduler's worker (a cycle's batch). */
static void
coder_run (GstDxtEnc * self, GstObject * cuda_context,
    GstGpuStreamSchedItem * items, guint n_items)
{
  const GstGpuStreamProcessor *proc = &self->coder_info->processor;
  guint i;

  g_mutex_lock (&self->coder_lock);
  if (self->coder && cuda_context)
    proc->process_gpu (self->coder, cuda_context, items, n_items);
  else if (self->coder)
    proc->process_cpu (self->coder, items, n_items);
  else                          /* no format: nothing can be coded */
    for (i = 0; i < n_items; i++)
      if (items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
        gst_clear_buffer ((GstBuffer **) & items[i].data);
  g_mutex_unlock (&self->coder_lock);
}

/* The size of the output buffer a HAP frame is written into. */
static gsize
enc_output_max (EncState * st)
{
  return gs_hap_max_frame_size (st->tex_size, st->tex_chunks);
}

/* Finishes frame with the block stream tex (taken; NULL: the frame was not
 * coded, an error): as it is, or in a HAP frame. */
static GstFlowReturn
enc_finish_coded (GstDxtEnc * self, EncState * st,
    GstVideoCodecFrame * frame, GstBuffer * tex)
{
  GstVideoEncoder *enc = GST_VIDEO_ENCODER (self);
  GstFlowReturn ret;
  gsize out_size;

  if (!tex) {
    /* finished without a buffer: a drop; the processor's warning said why */
    gst_clear_buffer (&frame->output_buffer);
    gst_video_encoder_finish_frame (enc, frame);
    GST_ELEMENT_ERROR (self, STREAM, ENCODE,
        ("DXT encoding of a %ux%u %s frame failed",
            GST_VIDEO_INFO_WIDTH (&st->info),
            GST_VIDEO_INFO_HEIGHT (&st->info),
            GST_VIDEO_INFO_NAME (&st->info)), (NULL));
    return GST_FLOW_ERROR;
  }
  if (st->hap) {
    GstMapInfo omap, tmap;

    ret = gst_video_encoder_allocate_output_frame (enc, frame,
        enc_output_max (st));
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref (tex);
      gst_video_encoder_finish_frame (enc, frame);
      return ret;
    }
    gst_buffer_map (frame->output_buffer, &omap, GST_MAP_WRITE);
    gst_buffer_map (tex, &tmap, GST_MAP_READ);
    out_size = gs_hap_write_frame (omap.data, omap.size,
        hap_tex_formats[st->codec], st->snappy, st->tex_chunks, tmap.data,
        tmap.size);
    g_assert (out_size > 0);
    gst_buffer_unmap (tex, &tmap);
    gst_buffer_unmap (frame->output_buffer, &omap);
    gst_buffer_set_size (frame->output_buffer, out_size);
    gst_buffer_unref (tex);
  } else {
    out_size = gst_buffer_get_size (tex);
    gst_buffer_replace (&frame->output_buffer, NULL);
    frame->output_buffer = tex;
  }

  GST_OBJECT_LOCK (self);
  self->st_frames++;
  self->st_bytes_in += gst_buffer_get_size (frame->input_buffer);
  self->st_bytes_out += out_size;
  GST_OBJECT_UNLOCK (self);
  return gst_video_encoder_finish_frame (enc, frame);
}

/* ---- scheduled mode: cycle > 0 ----
 * handle_frame pushes each frame's input (a buffer that shares its memory,
 * its offset the frame's number) into the element's scheduler client
 * (gpsschedclient.h) without coding it; every cycle the device's worker
 * thread codes the frames collected in the last cycle as one batch
 * (coder_run), and the scheduler's forwarder thread hands the block
 * streams, in order, to enc_finish_coded.
 *
 * finish_frame takes the encoder's stream lock, which handle_frame, finish,
 * flush and set_format run under: every wait of theirs in the client
 * releases it (sched_unlock / sched_relock). Frames in flight are bounded
 * (sched_max_in_flight) so that a blocked downstream holds a few frames,
 * not all of them. A frame the scheduler will not finish (flushed, or in
 * flight at stop) is forgotten by the base class at the flush or stop. */

/* Frames in flight: at least 8, or what comes in 3 cycles (the
 * scheduler's bound on a frame's stay) at the caps' frame rate, so the bound never
 * slows a stream down; at most 64, however long the cycle, so that a
 * blocked downstream holds a bounded amount of memory. */
#define DXT_ENC_SCHED_MIN_IN_FLIGHT 8
#define DXT_ENC_SCHED_MAX_IN_FLIGHT 64

/* A buffer leaves the scheduler without being output. */
static void
sched_drop (gpointer data)
{
  gst_buffer_unref (data);
}

/* The worker thread, once a cycle, on the frames collected in it. */
static void
sched_process_cpu (gpointer proc_data, GstGpuStreamSchedItem * items,
    guint n_items)
{
  coder_run (proc_data, NULL, items, n_items);
}

/* dxt-encode falls back to the CPU frame by frame, as unscheduled */
static void
sched_process_gpu (gpointer proc_data, GstObject * cuda_context,
    GstGpuStreamSchedItem * items, guint n_items)
{
  coder_run (proc_data, cuda_context, items, n_items);
}

/* dxt-encode, through the instance of the current format */
static const GstGpuStreamProcessor sched_processor = {
  "dxt-encode", sched_process_cpu, sched_process_gpu
};

/* A frame before number still waiting (in push order, nothing older is
 * in flight): the processor dropped it (NULL items are not output). Ends
 * it as not coded: an error. Else GST_FLOW_OK. */
static GstFlowReturn
sched_finish_dropped (GstDxtEnc * self, guint32 number, gboolean all)
{
  GstVideoCodecFrame *oldest =
      gst_video_encoder_get_oldest_frame (GST_VIDEO_ENCODER (self));

  if (!oldest)
    return GST_FLOW_OK;
  if (all || oldest->system_frame_number < number)
    return enc_finish_coded (self, self->state, oldest, NULL);
  gst_video_codec_frame_unref (oldest);
  return GST_FLOW_OK;
}

/* The forwarder thread, in push order (the client never outputs a frame
 * from before a flush after it). data: the block stream, its offset the
 * frame's number. */
static GstFlowReturn
sched_output (gpointer stream_data, gpointer data, GstEvent * event)
{
  GstDxtEnc *self = stream_data;
  GstBuffer *tex = data;
  GstVideoCodecFrame *frame;
  GstFlowReturn ret;

  if (event) {                  /* none are pushed: the base class keeps them */
    gst_event_unref (event);
    return GST_FLOW_OK;
  }
  frame = gst_video_encoder_get_frame (GST_VIDEO_ENCODER (self),
      (gint) GST_BUFFER_OFFSET (tex));
  if (!frame) {                 /* forgotten by the base class (a flush) */
    gst_buffer_unref (tex);
    return GST_FLOW_OK;
  }
  ret = sched_finish_dropped (self, frame->system_frame_number, FALSE);
  if (ret != GST_FLOW_OK) {
    gst_video_codec_frame_unref (frame);
    gst_buffer_unref (tex);
    return ret;
  }
  return enc_finish_coded (self, self->state, frame, tex);
}

static void
sched_unlock (gpointer user_data)
{
  GST_VIDEO_ENCODER_STREAM_UNLOCK (user_data);
}

static void
sched_relock (gpointer user_data)
{
  GST_VIDEO_ENCODER_STREAM_LOCK (user_data);
}

static const GstGpuStreamSchedClientCallbacks sched_callbacks = {
  sched_output, sched_drop, sched_unlock, sched_relock
};

/* handle_frame's scheduled half: takes frame. Returns what the frames
 * finished since the last call met downstream. */
static GstFlowReturn
sched_handle_frame (GstDxtEnc * self, GstVideoCodecFrame * frame)
{
  GstGpuStreamSchedClientStream *stream = self->sched_stream;
  GstBuffer *in;
  GstFlowReturn ret;

  if (!stream) {
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  /* room first: a blocked downstream holds at most sched_max_in_flight
   * frames (an error of output is returned by the push) */
  ret = gst_gpustream_sched_client_wait (stream, self->sched_max_in_flight - 1);
  if (ret == GST_FLOW_FLUSHING) {
    gst_video_codec_frame_unref (frame);
    return ret;
  }
  /* the frame's memory and metas; the offset says whose block stream the
   * processor's output is (it keeps the input's metadata) */
  in = gst_buffer_copy (frame->input_buffer);
  GST_BUFFER_OFFSET (in) = frame->system_frame_number;
  /* the base class keeps the frame until sched_output finishes it */
  gst_video_codec_frame_unref (frame);
  return gst_gpustream_sched_client_push (stream, in,
      MIN (gst_buffer_get_size (in), G_MAXUINT32));
}

/* At set_format, nothing in flight: the one stream, w = the frame size (a
 * format change replaces it; its latency stays in the stats). */
static gboolean
sched_ensure_stream (GstDxtEnc * self, guint32 w)
{
  GstGpuStreamSchedClientStream *stream;
  GError *err = NULL;

  if (self->sched_stream && self->sched_w == w)
    return TRUE;
  if (self->sched_stream)
    gst_gpustream_sched_client_remove_stream (self->sched,
        g_steal_pointer (&self->sched_stream));
  stream = gst_gpustream_sched_client_add_stream (self->sched, w, self, NULL,
      &err);
  if (!stream) {
    /* streams are not refused one by one: only invalid parameters get
     * here */
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("the scheduler refused the stream: %s", err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
  self->sched_stream = stream;
  self->sched_w = w;
  return TRUE;
}

/* READY to PAUSED: with cycle > 0, one pipeline (one forwarder thread) of
 * the client on the element's device, counted by the device's admission
 * at max-rate, or from the caps (sched_declare_caps_rate). The stream comes
 * with the format. */
static gboolean
sched_start (GstDxtEnc * self)
{
  GstClockTime cycle;
  guint64 rate;

  GST_OBJECT_LOCK (self);
  cycle = self->cycle;
  rate = self->max_rate;
  GST_OBJECT_UNLOCK (self);
  self->scheduled = FALSE;
  gst_gpustream_sched_client_set_rate (self->sched, rate, "max-rate");
  if (!gst_gpustream_sched_client_start (self->sched, cycle, 1,
          self->gpu.resolved, self->gpu.cuda_context))
    return FALSE;
  self->scheduled = cycle > 0;
  return TRUE;
}

/* At set_format, without max-rate: the rate the caps give (frame size x
 * framerate), counted by the device's admission; FALSE after an ERROR
 * naming the figures when it does not fit. No framerate: no rate (the
 * client warns once). */
static gboolean
sched_declare_caps_rate (GstDxtEnc * self, const GstVideoInfo * info)
{
  guint64 rate = 0;
  gchar *origin;
  gboolean ok;

  GST_OBJECT_LOCK (self);
  if (self->max_rate) {
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  GST_OBJECT_UNLOCK (self);
  if (GST_VIDEO_INFO_FPS_N (info) > 0 && GST_VIDEO_INFO_FPS_D (info) > 0)
    rate = gst_util_uint64_scale_ceil (GST_VIDEO_INFO_SIZE (info),
        GST_VIDEO_INFO_FPS_N (info), GST_VIDEO_INFO_FPS_D (info));
  origin = g_strdup_printf ("caps: %dx%d %s at %d/%d fps",
      GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
      GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_FPS_N (info),
      GST_VIDEO_INFO_FPS_D (info));
  ok = gst_gpustream_sched_client_set_rate (self->sched, rate, origin);
  g_free (origin);
  return ok;
}

/* PAUSED to READY, the pads inactive: frames in flight are dropped (through
 * sched_drop) before the worker's state goes. */
static void
sched_stop (GstDxtEnc * self)
{
  if (!self->scheduled)
    return;
  gst_gpustream_sched_client_stop (self->sched);
  if (self->sched_stream)
    gst_gpustream_sched_client_remove_stream (self->sched,
        g_steal_pointer (&self->sched_stream));
  self->scheduled = FALSE;
}

/* ---- pipelined mode: the GPU, cycle 0 ----
 * handle_frame starts each frame on the next of pipe_lanes lanes of
 * dxt-encode (submit: its copy in, kernel and copy out queued on the
 * lane's CUDA streams) and returns; the finisher thread waits for the
 * frames in order (finish: the lane's streams only) and pushes each. So
 * the copy in of frame n+1, the kernel of frame n and the copy out of
 * frame n-1 overlap, a frame leaves as soon as it is coded, and one waits
 * behind at most pipe_lanes - 1 others (the maximum latency reported).
 *
 * Lanes are reused in order: handle_frame waits while pipe_lanes frames
 * are in flight, so the lane it takes was finished. Like the scheduled
 * mode, every wait releases the stream lock, under which the finisher
 * pushes. A flush (or stop) makes the finisher drop what it finishes. */

typedef struct
{
  GstVideoCodecFrame *frame;
  GstGpuStreamSchedItem item;
  gpointer submitted;
} PipeSlot;

static gpointer
pipe_finisher (gpointer data)
{
  GstDxtEnc *self = data;
  const GstGpuStreamProcessor *proc = &self->coder_info->processor;

  g_mutex_lock (&self->pipe_lock);
  for (;;) {
    PipeSlot *slot;
    GstBuffer *tex;
    GstFlowReturn ret = GST_FLOW_OK;
    gboolean drop;

    while (!self->pipe_quit && g_queue_is_empty (&self->pipe_queue))
      g_cond_wait (&self->pipe_cond, &self->pipe_lock);
    if (g_queue_is_empty (&self->pipe_queue))
      break;
    slot = g_queue_pop_head (&self->pipe_queue);
    g_mutex_unlock (&self->pipe_lock);

    /* the lane's streams only; the streaming thread queues the next
     * frames meanwhile (the instance stays: it changes only when nothing
     * is in flight) */
    proc->finish (self->coder, slot->submitted);
    tex = slot->item.data;

    g_mutex_lock (&self->pipe_lock);
    drop = self->pipe_flushing;
    g_mutex_unlock (&self->pipe_lock);
    if (drop) {
      gst_clear_buffer (&tex);
      gst_video_codec_frame_unref (slot->frame);
    } else {
      GST_VIDEO_ENCODER_STREAM_LOCK (self);
      ret = enc_finish_coded (self, self->state, slot->frame, tex);
      GST_VIDEO_ENCODER_STREAM_UNLOCK (self);
    }
    g_free (slot);

    g_mutex_lock (&self->pipe_lock);
    if (ret != GST_FLOW_OK && self->pipe_ret == GST_FLOW_OK)
      self->pipe_ret = ret;
    self->pipe_in_flight--;
    g_cond_broadcast (&self->pipe_cond);
  }
  g_mutex_unlock (&self->pipe_lock);
  return NULL;
}

/* Waits, the stream lock released, while more than max frames are in
 * flight (and not flushing, unless all). pipe_lock held. */
static void
pipe_wait (GstDxtEnc * self, guint max, gboolean all)
{
  if (self->pipe_in_flight <= max)
    return;
  g_mutex_unlock (&self->pipe_lock);
  GST_VIDEO_ENCODER_STREAM_UNLOCK (self);
  g_mutex_lock (&self->pipe_lock);
  while (self->pipe_in_flight > max && (all || !self->pipe_flushing))
    g_cond_wait (&self->pipe_cond, &self->pipe_lock);
  g_mutex_unlock (&self->pipe_lock);
  GST_VIDEO_ENCODER_STREAM_LOCK (self);
  g_mutex_lock (&self->pipe_lock);
}

static GstFlowReturn pipe_drain (GstDxtEnc * self, gboolean stream_locked);
static GstFlowReturn enc_code_now (GstDxtEnc * self,
    GstVideoCodecFrame * frame);

/* handle_frame's pipelined half: takes frame. Returns what the frames
 * finished since the last call met downstream. */
static GstFlowReturn
pipe_handle_frame (GstDxtEnc * self, GstVideoCodecFrame * frame)
{
  const GstGpuStreamProcessor *proc = &self->coder_info->processor;
  GstBuffer *in = frame->input_buffer;
  PipeSlot *slot;
  GstFlowReturn ret;
  guint lane;

  /* coded here, after the frames in flight: the first frame of a format,
   * so that a downstream that refuses the output refuses it to its push,
   * and a frame too short for the caps (without a video meta), so that
   * its push fails with the error */
  if (!self->pipe_primed || (!gst_buffer_get_video_meta (in) &&
          gst_buffer_get_size (in) < GST_VIDEO_INFO_SIZE (&self->state->info))) {
    ret = pipe_drain (self, TRUE);
    if (ret != GST_FLOW_OK) {
      gst_video_codec_frame_unref (frame);
      return ret;
    }
    ret = enc_code_now (self, frame);
    self->pipe_primed = ret == GST_FLOW_OK;
    return ret;
  }

  g_mutex_lock (&self->pipe_lock);
  pipe_wait (self, self->pipe_lanes - 1, FALSE);
  ret = self->pipe_flushing ? GST_FLOW_FLUSHING : self->pipe_ret;
  lane = self->pipe_next_lane++ % self->pipe_lanes;
  g_mutex_unlock (&self->pipe_lock);
  if (ret != GST_FLOW_OK) {
    gst_video_codec_frame_unref (frame);
    return ret;
  }

  slot = g_new0 (PipeSlot, 1);
  slot->frame = frame;
  slot->item.data = gst_buffer_ref (frame->input_buffer);
  slot->item.size = MIN (gst_buffer_get_size (frame->input_buffer),
      G_MAXUINT32);
  slot->item.flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
  slot->submitted = proc->submit (self->coder, self->state->cuda_context,
      lane, &slot->item, 1);

  g_mutex_lock (&self->pipe_lock);
  self->pipe_in_flight++;
  g_queue_push_tail (&self->pipe_queue, slot);
  g_cond_broadcast (&self->pipe_cond);
  g_mutex_unlock (&self->pipe_lock);
  return GST_FLOW_OK;
}

/* Every frame in flight out (or dropped, flushing); what the pushes met.
 * Under the stream lock (released while waiting), or stopped. */
static GstFlowReturn
pipe_drain (GstDxtEnc * self, gboolean stream_locked)
{
  GstFlowReturn ret;

  if (!self->pipe_lanes)
    return GST_FLOW_OK;
  g_mutex_lock (&self->pipe_lock);
  if (stream_locked) {
    pipe_wait (self, 0, TRUE);
  } else {
    while (self->pipe_in_flight > 0)
      g_cond_wait (&self->pipe_cond, &self->pipe_lock);
  }
  ret = self->pipe_ret;
  g_mutex_unlock (&self->pipe_lock);
  return ret;
}

/* Flushing or not: what the finisher does with the frames it finishes,
 * and whether handle_frame still waits for a lane. */
static void
pipe_set_flushing (GstDxtEnc * self, gboolean flushing)
{
  g_mutex_lock (&self->pipe_lock);
  self->pipe_flushing = flushing;
  if (!flushing)
    self->pipe_ret = GST_FLOW_OK;
  g_cond_broadcast (&self->pipe_cond);
  g_mutex_unlock (&self->pipe_lock);
}

/* At start: pipelined when the frames are coded on the GPU as they come. */
static void
pipe_start (GstDxtEnc * self)
{
  self->pipe_lanes = !self->scheduled && self->state->cuda_context ?
      GST_GPUSTREAM_DXT_LANES : 0;
  if (!self->pipe_lanes)
    return;
  self->pipe_flushing = self->pipe_quit = FALSE;
  self->pipe_ret = GST_FLOW_OK;
  self->pipe_in_flight = self->pipe_next_lane = 0;
  self->pipe_primed = FALSE;
  self->pipe_thread = g_thread_new ("dxtenc-finish", pipe_finisher, self);
}

/* At stop, the streaming thread gone: the frames in flight dropped, the
 * finisher ended. */
static void
pipe_stop (GstDxtEnc * self)
{
  if (!self->pipe_lanes)
    return;
  pipe_set_flushing (self, TRUE);
  pipe_drain (self, FALSE);
  g_mutex_lock (&self->pipe_lock);
  self->pipe_quit = TRUE;
  g_cond_broadcast (&self->pipe_cond);
  g_mutex_unlock (&self->pipe_lock);
  g_thread_join (g_steal_pointer (&self->pipe_thread));
  self->pipe_lanes = 0;
}

/* ---- the encoder --------------------------------------------------------- */

static void
enc_state_free (EncState * st)
{
  gst_clear_object (&st->cuda_context);
  g_free (st);
}

/* The state becomes st (NULL: stopped), under the object lock: the
 * ALLOCATION query reads it on upstream's streaming thread, which runs on
 * while a state change stops us (upstream stops after we do). */
static void
enc_set_state (GstDxtEnc * self, EncState * st)
{
  EncState *old;

  GST_OBJECT_LOCK (self);
  old = self->state;
  self->state = st;
  GST_OBJECT_UNLOCK (self);
  g_clear_pointer (&old, enc_state_free);
}

/* what the LATENCY query adds: the scheduler's bound of 3 cycles on a
 * frame's stay when scheduled */
static void
enc_update_latency (GstDxtEnc * self)
{
  GstClockTime lat = gst_gpustream_sched_client_get_latency (self->sched);
  GstClockTime max = lat;
  EncState *st = self->state;

  /* pipelined: a frame leaves as soon as it is coded, but waits behind at
   * most pipe_lanes - 1 others when upstream outpaces the GPU */
  if (self->pipe_lanes && st) {
    max = GST_CLOCK_TIME_NONE;
    if (GST_VIDEO_INFO_FPS_N (&st->info) > 0 &&
        GST_VIDEO_INFO_FPS_D (&st->info) > 0)
      max = gst_util_uint64_scale_ceil (self->pipe_lanes * GST_SECOND,
          GST_VIDEO_INFO_FPS_D (&st->info), GST_VIDEO_INFO_FPS_N (&st->info));
  }
  gst_video_encoder_set_latency (GST_VIDEO_ENCODER (self), lat, max);
}

/* Upstream's ALLOCATION query: buffers for the frames, sized and counted
 * for the mode. On the GPU from system memory, a pool of pinned memory:
 * upstream writes each frame where the DMA engine reads it, and the frame
 * is not first copied into the staging area. On the CPU an ordinary
 * system-memory pool: the CPU path reads the pixels wherever they are, and
 * the pool lets upstream recycle its frames instead of allocating each.
 * Either way min-buffers is what the element keeps: the frames in flight.
 * CUDA memory caps get no pool from us: cudaupload and nvcodec's decoders
 * bring their own, and their frames are coded where they lie. */
static gboolean
gst_dxt_enc_propose_allocation (GstVideoEncoder * enc, GstQuery * query)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);
  GstObject *cuda_context = NULL;
  GstCapsFeatures *features;
  GstBufferPool *pool = NULL;
  GstVideoInfo info;
  GstCaps *caps;
  gboolean need_pool, started, cuda_caps;
  guint min;

  gst_query_parse_allocation (query, &caps, &need_pool);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return GST_VIDEO_ENCODER_CLASS (parent_class)->propose_allocation (enc,
        query);
  features = gst_caps_get_features (caps, 0);
  cuda_caps = features &&
      gst_caps_features_contains (features, "memory:CUDAMemory");

  /* a ref on the context only when a pool of it is offered */
  GST_OBJECT_LOCK (self);
  started = self->state != NULL;
  if (started && !cuda_caps && self->state->cuda_context)
    cuda_context = gst_object_ref (self->state->cuda_context);
  min = self->pipe_lanes ? self->pipe_lanes :
      self->scheduled ? self->sched_max_in_flight : 0;
  GST_OBJECT_UNLOCK (self);

  if (!started)
    return GST_VIDEO_ENCODER_CLASS (parent_class)->propose_allocation (enc,
        query);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  if (cuda_caps)
    return TRUE;

  if (cuda_context) {
    GstAllocator *pinned = gst_gpustream_pinned_allocator_new (cuda_context);

    if (pinned) {
      GstAllocationParams params;

      gst_allocation_params_init (&params);
      gst_query_add_allocation_param (query, pinned, &params);
      gst_object_unref (pinned);
    }
    if (need_pool)
      pool = gst_gpustream_pinned_pool_new (cuda_context, caps,
          GST_VIDEO_INFO_SIZE (&info), min, 0);
  } else if (need_pool) {
    GstStructure *config;

    pool = gst_video_buffer_pool_new ();
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps,
        GST_VIDEO_INFO_SIZE (&info), min, 0);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config))
      gst_clear_object (&pool);
  }
  GST_DEBUG_OBJECT (self, "proposing %s pool of %" G_GSIZE_FORMAT "-byte "
      "buffers, min %u", !pool ? "no" : cuda_context ? "a pinned" :
      "a system-memory", GST_VIDEO_INFO_SIZE (&info), min);
  gst_query_add_allocation_pool (query, pool, GST_VIDEO_INFO_SIZE (&info),
      min, 0);
  gst_clear_object (&pool);
  gst_clear_object (&cuda_context);
  return TRUE;
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
  st->chunks = self->chunks;
  st->batch_blocks = self->batch_blocks;
  st->threads = self->threads ? self->threads : dxt_cpu_count ();
  self->st_frames = self->st_bytes_in = self->st_bytes_out = 0;
  memset (self->st_coded, 0, sizeof self->st_coded);
  GST_OBJECT_UNLOCK (self);

  if (!st->hap && st->snappy)
    GST_WARNING_OBJECT (self, "snappy=true needs hap=true: ignored");
  if (self->gpu.resolved != GST_GPUSTREAM_BACKEND_CPU &&
      self->gpu.cuda_context) {
    /* hybrid has no second coder here: the GPU takes every frame, the CPU
     * only those whose CUDA step fails */
    st->cuda_context = gst_object_ref (self->gpu.cuda_context);
    GST_INFO_OBJECT (self, "encoding on the GPU: slices of %u blocks over %d "
        "CUDA streams", st->batch_blocks, GST_GPUSTREAM_DXT_DEFAULT_STREAMS);
  } else {
    GST_INFO_OBJECT (self, "encoding on the CPU (%s), slices of %u blocks "
        "over %u threads", dxt_cpu_path_name (dxt_get_cpu_path ()),
        st->batch_blocks, st->threads);
  }

  enc_set_state (self, st);
  if (!sched_start (self)) {
    enc_set_state (self, NULL);
    return FALSE;
  }
  pipe_start (self);
  enc_update_latency (self);
  return TRUE;
}

static gboolean
gst_dxt_enc_stop (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  /* first: the worker and the finisher read the state and the coder */
  sched_stop (self);
  pipe_stop (self);
  coder_retire (self);
  enc_set_state (self, NULL);
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
  /* scheduled: the frames in flight were coded for the old format and
   * leave with the old caps before the worker sees the new one */
  if (self->sched_stream)
    gst_gpustream_sched_client_wait (self->sched_stream, 0);
  pipe_drain (self, TRUE);
  self->pipe_primed = FALSE;
  if (!coder_configure (self, st, &state->info))
    return FALSE;
  st->info = state->info;
  st->tex_size = dxt_frame_bytes (st->codec, GST_VIDEO_INFO_WIDTH (&st->info),
      GST_VIDEO_INFO_HEIGHT (&st->info));
  if (st->hap) {
    if (st->tex_size > G_MAXUINT32) {
      GST_WARNING_OBJECT (self, "frame too large for a HAP section");
      return FALSE;
    }
    st->tex_chunks = st->chunks ? st->chunks :
        (guint) MIN (MAX_CHUNKS, MAX (1, (st->tex_size + AUTO_CHUNK_BYTES / 2) /
            AUTO_CHUNK_BYTES));
    GST_INFO_OBJECT (self, "HAP frames of %" G_GSIZE_FORMAT " texture bytes "
        "in %u chunk(s)", st->tex_size, st->tex_chunks);
  }
  if (self->scheduled) {
    guint64 n = DXT_ENC_SCHED_MIN_IN_FLIGHT;

    if (!sched_declare_caps_rate (self, &st->info))
      return FALSE;
    if (!sched_ensure_stream (self, MIN (GST_VIDEO_INFO_SIZE (&st->info),
                G_MAXUINT32)))
      return FALSE;
    if (GST_VIDEO_INFO_FPS_N (&st->info) > 0 &&
        GST_VIDEO_INFO_FPS_D (&st->info) > 0)
      n = MAX (n, gst_util_uint64_scale_ceil
          (gst_gpustream_sched_client_get_latency (self->sched),
              GST_VIDEO_INFO_FPS_N (&st->info),
              (guint64) GST_VIDEO_INFO_FPS_D (&st->info) * GST_SECOND) + 1);
    self->sched_max_in_flight = MIN (n, DXT_ENC_SCHED_MAX_IN_FLIGHT);
    gst_gpustream_sched_client_stream_set_limits (self->sched_stream,
        self->sched_max_in_flight, 0);
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
  /* 0 unscheduled: the frame leaves the moment it is coded */
  enc_update_latency (self);
  return TRUE;
}

static GstFlowReturn
gst_dxt_enc_handle_frame (GstVideoEncoder * enc, GstVideoCodecFrame * frame)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);
  EncState *st = self->state;

  if (!st || !st->tex_size) {
    gst_video_codec_frame_unref (frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT (frame);
  /* what failed on the GPU among the frames before is said here */
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  if (self->scheduled)
    return sched_handle_frame (self, frame);
  if (self->pipe_lanes)
    return pipe_handle_frame (self, frame);

  return enc_code_now (self, frame);
}

/* A batch of one, coded here and finished: takes frame. */
static GstFlowReturn
enc_code_now (GstDxtEnc * self, GstVideoCodecFrame * frame)
{
  GstGpuStreamSchedItem item = { 0 };

  item.data = gst_buffer_ref (frame->input_buffer);
  item.size = MIN (gst_buffer_get_size (frame->input_buffer), G_MAXUINT32);
  item.flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
  coder_run (self, self->state->cuda_context, &item, 1);
  return enc_finish_coded (self, self->state, frame, item.data);
}

/* EOS: every frame handed to the scheduler out (or dropped) first. */
static GstFlowReturn
gst_dxt_enc_finish (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);
  GstFlowReturn ret;

  if (self->pipe_lanes) {
    ret = pipe_drain (self, TRUE);
  } else if (!self->scheduled || !self->sched_stream) {
    ret = GST_FLOW_OK;
  } else {
    ret = gst_gpustream_sched_client_wait (self->sched_stream, 0);
    /* all out: a frame still waiting was dropped by the processor */
    if (ret == GST_FLOW_OK)
      ret = sched_finish_dropped (self, 0, TRUE);
  }
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  return ret;
}

/* FLUSH_STOP: the frames in flight are dropped (the scheduler calls
 * sched_drop for them within a few cycles); the base class then forgets
 * its own references. */
static gboolean
gst_dxt_enc_flush (GstVideoEncoder * enc)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  /* a finish_frame under way ends (its push fails: our source pad still
   * flushes) before the flush-stop goes downstream */
  if (self->sched_stream)
    gst_gpustream_sched_client_flush_stop (self->sched_stream);
  /* the finisher drops what is in flight (flushing since FLUSH_START) */
  if (self->pipe_lanes) {
    pipe_drain (self, TRUE);
    pipe_set_flushing (self, FALSE);
    self->pipe_primed = FALSE;
  }
  return TRUE;
}

/* FLUSH_START: a handle_frame waiting for room in the scheduler gives up. */
static gboolean
gst_dxt_enc_sink_event (GstVideoEncoder * enc, GstEvent * event)
{
  GstDxtEnc *self = GST_DXT_ENC (enc);

  /* not under the stream lock (the streaming thread may hold it): every
   * stream of the client, which is the one of the current format */
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START) {
    gst_gpustream_sched_client_flush_start_all (self->sched);
    if (self->pipe_lanes)
      pipe_set_flushing (self, TRUE);
  }
  return GST_VIDEO_ENCODER_CLASS (parent_class)->sink_event (enc, event);
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

static GstStateChangeReturn
gst_dxt_enc_change_state (GstElement * element, GstStateChange transition)
{
  /* before the pads deactivate: a handle_frame waiting for the scheduler
   * lets them go */
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
    gst_gpustream_sched_client_unblock (GST_DXT_ENC (element)->sched);
    if (GST_DXT_ENC (element)->pipe_lanes)
      pipe_set_flushing (GST_DXT_ENC (element), TRUE);
  }
  return GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
}

static GstStructure *
gst_dxt_enc_get_stats (GstDxtEnc * self)
{
  guint64 coded[DXT_ENC_CODER_COUNTERS] = { 0 };
  GstStructure *s;
  guint i;

  /* the live instance's counters, then the retired ones' */
  g_mutex_lock (&self->coder_lock);
  if (self->coder)
    coder_add_counts (self, self->coder, coded);
  g_mutex_unlock (&self->coder_lock);
  GST_OBJECT_LOCK (self);
  s = gst_structure_new ("dxtenc-stats",
      "frames", G_TYPE_UINT64, self->st_frames,
      "bytes-in", G_TYPE_UINT64, self->st_bytes_in,
      "bytes-out", G_TYPE_UINT64, self->st_bytes_out, NULL);
  for (i = 0; i < DXT_ENC_CODER_COUNTERS; i++)
    gst_structure_set (s, coder_counters[i], G_TYPE_UINT64,
        coded[i] + self->st_coded[i], NULL);
  GST_OBJECT_UNLOCK (self);
  /* the last run's, until the next start */
  gst_gpustream_sched_client_get_stats (self->sched, s);
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
    case PROP_CHUNKS:
      self->chunks = g_value_get_uint (value);
      break;
    case PROP_BATCH_BLOCKS:
      self->batch_blocks = g_value_get_uint (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    case PROP_CYCLE:
      self->cycle = g_value_get_uint64 (value);
      break;
    case PROP_MAX_RATE:
      self->max_rate = g_value_get_uint64 (value);
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
    case PROP_CHUNKS:
      g_value_set_uint (value, self->chunks);
      break;
    case PROP_BATCH_BLOCKS:
      g_value_set_uint (value, self->batch_blocks);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_CYCLE:
      g_value_set_uint64 (value, self->cycle);
      break;
    case PROP_MAX_RATE:
      g_value_set_uint64 (value, self->max_rate);
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

  /* stopped already (stop runs before NULL): nothing is in flight */
  g_clear_pointer (&self->sched, gst_gpustream_sched_client_free);
  g_clear_pointer (&self->state, enc_state_free);
  g_mutex_clear (&self->coder_lock);
  g_mutex_clear (&self->pipe_lock);
  g_cond_clear (&self->pipe_cond);
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
          "With hap: Snappy second-stage compression of each chunk (a chunk "
          "is stored uncompressed when Snappy does not shrink it)",
          DEFAULT_SNAPPY, flags));
  g_object_class_install_property (gobject_class, PROP_CHUNKS,
      g_param_spec_uint ("chunks", "Chunks",
          "With hap: second-stage chunks per frame, cut at block boundaries "
          "and described by the frame's decode instructions, so that "
          "players decompress a large frame on several threads (as FFmpeg's "
          "-chunks); 1 = one section; 0 = one chunk per 512 KiB of texture "
          "(rounded; a 720p Hap1 frame is 1 chunk, 1080p Hap1 2, 4K HapY 16)",
          0, MAX_CHUNKS, DEFAULT_CHUNKS, flags));
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
  g_object_class_install_property (gobject_class, PROP_CYCLE,
      g_param_spec_uint64 ("cycle", "Cycle",
          "Code through the device's real-time scheduler: every cycle ns, "
          "the frames that came in the last cycle are coded as one batch "
          "(one launch, shared with the device's other scheduled elements) "
          "and leave within 3 cycles, the latency "
          "reported (0 = each frame is coded as it comes; else >= 100000)",
          0, MAX_CYCLE,
          DEFAULT_CYCLE, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_RATE,
      g_param_spec_uint64 ("max-rate", "Max rate",
          "With cycle > 0: the most bytes per second of raw video the "
          "element codes, counted by the device's admission like an "
          "rtgpuqueue stream; start (or the caps) fails when it does not fit "
          "beside what the device has admitted (0 = from the caps: frame "
          "size x framerate; no framerate: no rate, a warning, and an "
          "rtgpuqueue with admission on and a capacity on the same device "
          "refuses its streams meanwhile)", 0, G_MAXUINT64, DEFAULT_MAX_RATE,
          flags));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: frames, bytes-in, bytes-out, slices, gpu-frames, "
          "cpu-frames (coded on the CPU, fallbacks included), "
          "device-input-frames (coded straight from CUDA memory); with "
          "cycle > 0 scheduled-batches (the scheduler's launches) and the "
          "wait of a frame in the scheduler: latency-p99-us, latency-max-us, "
          "latency-misses (over 3 cycles); 0 without",
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
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_dxt_enc_change_state);

  venc_class->open = GST_DEBUG_FUNCPTR (gst_dxt_enc_open);
  venc_class->close = GST_DEBUG_FUNCPTR (gst_dxt_enc_close);
  venc_class->start = GST_DEBUG_FUNCPTR (gst_dxt_enc_start);
  venc_class->stop = GST_DEBUG_FUNCPTR (gst_dxt_enc_stop);
  venc_class->set_format = GST_DEBUG_FUNCPTR (gst_dxt_enc_set_format);
  venc_class->handle_frame = GST_DEBUG_FUNCPTR (gst_dxt_enc_handle_frame);
  venc_class->finish = GST_DEBUG_FUNCPTR (gst_dxt_enc_finish);
  venc_class->flush = GST_DEBUG_FUNCPTR (gst_dxt_enc_flush);
  venc_class->sink_event = GST_DEBUG_FUNCPTR (gst_dxt_enc_sink_event);
  venc_class->src_query = GST_DEBUG_FUNCPTR (gst_dxt_enc_src_query);
  venc_class->sink_query = GST_DEBUG_FUNCPTR (gst_dxt_enc_sink_query);
  venc_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_dxt_enc_propose_allocation);

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
  self->chunks = DEFAULT_CHUNKS;
  self->batch_blocks = DEFAULT_BATCH_BLOCKS;
  self->threads = DEFAULT_THREADS;
  self->cycle = DEFAULT_CYCLE;
  self->max_rate = DEFAULT_MAX_RATE;
  /* the library's own: always registered */
  self->coder_info = gst_gpustream_processor_lookup ("dxt-encode", NULL);
  g_assert (self->coder_info);
  g_mutex_init (&self->coder_lock);
  g_mutex_init (&self->pipe_lock);
  g_cond_init (&self->pipe_cond);
  g_queue_init (&self->pipe_queue);
  self->sched = gst_gpustream_sched_client_new (GST_ELEMENT (self),
      &sched_processor, self, &sched_callbacks, self);
}
