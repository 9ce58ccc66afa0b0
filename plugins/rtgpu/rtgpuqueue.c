/* rtgpuqueue: deadline-keeping batched processing of packet streams, the
 * GPU-centric real-time model of Kai Zhang, Jiayu Hu, Bei Hua, "A holistic
 * approach to build real-time stream processing system with GPU" (2015),
 * sections 4 and 5.
 *
 * SECTION:element-rtgpuqueue
 * @title: rtgpuqueue
 *
 * Each stream is a pair of request pads, `sink_%u` -> `src_%u`, and declares
 * <w, d, v>: `max-packet-size` (bytes), `deadline` (ns) and `max-rate`
 * (bytes/s), given in the extra caps of the pad request
 * (`max-packet-size=(int)1400, deadline=(guint64)50000000,
 * max-rate=(guint64)1000000`) or taken from the element's `default-*`
 * properties. The stream is admitted only while the admission condition
 * of Zhang et al. holds, which guarantees every admitted packet leaves
 * within its deadline: beta + v <= capacity (beta: the admitted rates) and
 * min(theta, d) > 3 x cycle + mu (theta: the admitted deadlines). A stream
 * refused while the element runs gets no pad: the request returns NULL and
 * the element posts a warning whose text states the limit with its
 * figures. A stream refused while the pipeline is being built (the element
 * in NULL or READY, as in gst-launch-1.0) gets its pads, and READY->PAUSED
 * fails with that text as the error, e.g. "stream refused: deadline 20 ms
 * is not above 3 x cycle 10 ms + mu 0.1 ms". Admitted streams are policed
 * to their max-rate (a token bucket; excess packets are dropped and
 * counted) so one misbehaving stream cannot make the others miss.
 *
 * The packets of all streams are collected into `pipelines` batches without
 * a lock; every `cycle` the scheduler's worker takes the batches, runs
 * `processor` on them (on the GPU when the processor has a GPU path and
 * `backend` resolves to it, else on the CPU), and per pipeline a forwarder
 * thread pushes the results downstream in order, with their timestamps. A
 * packet leaves at most 3 x cycle + mu after it came in, which is what the
 * element answers to the LATENCY query. A forwarder blocked downstream (a
 * sink prerolling) holds every stream of its pipeline: give streams that
 * end in different sinks their own pipeline (`pipelines` >= streams).
 *
 * `keep-deadlines` (on by default) sheds load rather than miss deadlines
 * when the machine gives the worker less than the calibration saw: packets
 * that can no longer leave in time are dropped at launch (drops-late), the
 * most recently admitted streams' first;
 * with a capacity, the worker watches its cycles and, after two overloaded
 * windows of about 100 ms, lowers the capacity admission uses and sheds the
 * most recently admitted streams (an `rtgpuqueue-admission` element message
 * and a warning; raised back, streams restored oldest first, after quiet
 * windows); with admission off a cycle takes at most capacity x cycle bytes
 * (drops-capped), so latency stays bounded.
 *
 * `stats` has, per stream, packets, drops, deadline misses and latency
 * percentiles; the `calibrate` action sets `capacity` to B_I measured as
 * Zhang et al. do, by a trial run of the device's worker at candidate loads
 * (the highest load at which it met every deadline, less 30 %).
 *
 * `processor=srtp-protect` runs the library's processor of that name
 * (gpsprocessor.h): every packet protected with SRTP (RFC 3711, 6188, 7714),
 * as gpusrtpenc does and with the same bytes: one SRTP context per SSRC
 * (the first packet of an SSRC creates it, ROC 0), configured by
 * `processor-config` (srtp-key: the master key || salt, srtp-cipher,
 * srtp-auth; the deprecated properties of those names when it is unset). A
 * packet whose second byte is 192..223 is RTCP (the RFC 5761 rule) and is
 * protected as SRTCP with the same policy; everything else must be RTP. The
 * source pads announce application/x-srtp (application/x-srtcp for a stream
 * whose caps are application/x-rtcp) with the fields srtpdec keys from
 * (srtp-key, srtp-cipher, srtp-auth, srtcp-cipher, srtcp-auth), and the
 * sink pads accept application/x-rtp and application/x-rtcp. Packets the
 * stage cannot protect (not RTP, bad header, index exhausted) are dropped,
 * counted in `stats` (srtp-drops) and reported by a warning at most once a
 * second. Declare max-packet-size as the plain packet's size: the output is
 * larger by the tag (10, 4 or 16 bytes; SRTCP 4 more).
 *
 * `processor=nc-encode` runs the library's processor of that name: every
 * packet is coded with random linear network coding (Jin Zhao, Xinya
 * Zhang, Xin Wang, "An Architecture Design of GPU-Accelerated VoD Streaming
 * Servers with Network Coding", 2010) into the packets ncencoder sends for
 * a byte stream (docs/elements/nc-wire-format.md): one generation per
 * generation-size x block-size bytes of the packet, the last one partial
 * (only the blocks that hold data, the redundancy in proportion), all of a
 * packet's coded packets pushed as one buffer list with the packet's
 * timestamps. ncdecoder downstream gives back the packets' bytes, also when
 * up to redundancy coded packets of a generation are lost. processor-config
 * sets generation-size, block-size, redundancy or redundancy-percent,
 * systematic and coefficients, as ncencoder's properties of those names
 * (defaults 64, 1024, 8, 0, true, seed); every stream numbers its own
 * generations. The source pads announce application/x-rlnc with
 * generation-size, block-size, coefficients and the stream's caps as
 * original-caps; the sink pads take any caps. Declare max-packet-size as
 * the plain packet's size.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 rtgpuqueue name=q cycle=2000000 capacity=100000000 \
 *     pipelines=2 default-max-packet-size=4096 processor=busy busy-ns-per-kb=200 \
 *     audiotestsrc num-buffers=500 ! audio/x-raw,rate=48000,channels=2 ! q.sink_0 \
 *     q.src_0 ! fakesink sync=true \
 *     audiotestsrc num-buffers=500 ! audio/x-raw,rate=48000,channels=2 ! q.sink_1 \
 *     q.src_1 ! fakesink sync=true
 * ]|
 * Two RTP streams protected, then checked by libsrtp:
 * |[
 * gst-launch-1.0 rtgpuqueue name=q processor=srtp-protect pipelines=2 \
 *     processor-config="srtp-protect, srtp-key=(buffer)000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d" \
 *     audiotestsrc is-live=true num-buffers=200 ! rtpL16pay ssrc=1 ! q.sink_0 \
 *     audiotestsrc is-live=true num-buffers=200 ! rtpL16pay ssrc=2 ! q.sink_1 \
 *     q.src_0 ! srtpdec ! rtpL16depay ! fakesink \
 *     q.src_1 ! srtpdec ! rtpL16depay ! fakesink
 * ]|
 * A stream network coded, then decoded:
 * |[
 * gst-launch-1.0 rtgpuqueue name=q processor=nc-encode default-max-packet-size=18000 \
 *     processor-config="nc-encode, generation-size=(int)16, block-size=(int)1024, redundancy=(int)4" \
 *     audiotestsrc is-live=true num-buffers=10 samplesperbuffer=9000 ! q.sink_0 \
 *     q.src_0 ! ncdecoder ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <gst/gpustream/gpsscheduler.h>
#include <gst/gpustream/gpsprocessor.h>
#include <gst/gpustream/gpssrtp.h>
#include <srtp/srtp_kernels.h>

#include "rtgpuqueue.h"

GST_DEBUG_CATEGORY_STATIC (gst_rt_gpu_queue_debug);
#define GST_CAT_DEFAULT gst_rt_gpu_queue_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_CYCLE (10 * GST_MSECOND)
#define DEFAULT_CAPACITY 0
#define DEFAULT_MU (100 * GST_USECOND)
#define DEFAULT_PIPELINES 1
#define DEFAULT_ADMISSION TRUE
#define DEFAULT_PROCESSOR GST_RT_GPU_PROCESSOR_COPY
#define DEFAULT_BUSY_NS_PER_KB 1000
#define DEFAULT_MAX_PACKET_SIZE 1500
#define DEFAULT_DEADLINE (100 * GST_MSECOND)
#define DEFAULT_MAX_RATE 1000000
#define DEFAULT_POLICE_BURST 0
#define DEFAULT_RT_PRIORITY 0
#define DEFAULT_KEEP_DEADLINES TRUE
#define DEFAULT_SRTP_CIPHER GST_GPU_SRTP_CIPHER_AES_128_ICM
#define DEFAULT_SRTP_AUTH GST_GPU_SRTP_AUTH_HMAC_SHA1_80

enum
{
  PROP_0,
  PROP_CYCLE,
  PROP_CAPACITY,
  PROP_MU,
  PROP_PIPELINES,
  PROP_ADMISSION,
  PROP_PROCESSOR,
  PROP_BUSY_NS_PER_KB,
  PROP_DEFAULT_MAX_PACKET_SIZE,
  PROP_DEFAULT_DEADLINE,
  PROP_DEFAULT_MAX_RATE,
  PROP_POLICE_BURST,
  PROP_CALIBRATION_FILE,
  PROP_RT_PRIORITY,
  PROP_KEEP_DEADLINES,
  PROP_SRTP_KEY,
  PROP_SRTP_CIPHER,
  PROP_SRTP_AUTH,
  PROP_PROCESSOR_CONFIG,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

enum
{
  PAD_PROP_0,
  PAD_PROP_MAX_PACKET_SIZE,
  PAD_PROP_DEADLINE,
  PAD_PROP_MAX_RATE,
};

enum
{
  SIGNAL_CALIBRATE,
  LAST_SIGNAL
};

static guint signals[LAST_SIGNAL];

GType
gst_rt_gpu_processor_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_RT_GPU_PROCESSOR_COPY, "Identity: packets pass unchanged", "copy"},
    {GST_RT_GPU_PROCESSOR_BUSY, "Identity costing busy-ns-per-kb of CPU per "
          "KiB (for tests and calibration)", "busy"},
    {GST_RT_GPU_PROCESSOR_NC_ENCODE, "RLNC encode each packet into "
          "ncencoder's coded packets (configured by processor-config)",
        "nc-encode"},
    {GST_RT_GPU_PROCESSOR_SRTP_PROTECT, "SRTP / SRTCP protect with srtp-key, "
          "one context per SSRC (as gpusrtpenc)", "srtp-protect"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstRtGpuProcessor", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink_%u",
    GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS_ANY);

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src_%u",
    GST_PAD_SRC, GST_PAD_SOMETIMES, GST_STATIC_CAPS_ANY);

/* ---- instance ------------------------------------------------------------ */

/* A sink pad is a stream: its <w, d, v>, its src pad and its scheduler
 * stream (which holds a reference on the sink pad while items are in
 * flight). A pad requested while the element is stopped and refused has no
 * stream but its refusal, which start reports. */
struct _GstRtGpuQueuePad
{
  GstPad parent;

  guint32 w;
  GstClockTime d;
  guint64 v;
  GstPad *srcpad;               /* owned */
  GstGpuStreamSchedStream *stream;
  GError *refusal;              /* owned; set only while stream is NULL */
  gint last_ret;                /* atomic GstFlowReturn of the forwarder */
  guint64 drops_oversize;       /* atomic */
  /* a flush against the forwarder (flow_lock): nothing of before a flush
   * leaves after it, and no FLUSHING of a push that met the flush outlives
   * it (the next chain would refuse the stream for good) */
  GMutex flow_lock;
  GCond flow_cond;
  gboolean flushing, forwarding;
  /* the policer's drops said on the bus (chain thread only) */
  gint64 policed_said_at;       /* monotonic us */
  guint64 policed_said;
};

G_DEFINE_TYPE (GstRtGpuQueuePad, gst_rt_gpu_queue_pad, GST_TYPE_PAD);

/* What the scheduler's worker runs: a snapshot of the settings taken at
 * start, kept until the next start (stats read it after stop). The
 * calibrate action runs a copy of its own. copy and busy are this
 * element's own test stages; srtp-protect and nc-encode are the library's
 * processors of those names (gpsprocessor.h), an instance made from
 * processor-config. */
typedef struct
{
  GstElement *owner;            /* for messages and the log; no reference */
  GstRtGpuProcessor processor;
  gint *busy_ns_per_kb;         /* the element's, read atomically */

  /* a registered processor: its instance */
  const GstGpuStreamProcessorInfo *info;
  gpointer instance;
} RtGpuStage;

struct _GstRtGpuQueue
{
  GstElement parent;

  GstGpuStreamGpu gpu;

  /* settings, object lock */
  GstClockTime cycle;
  guint64 capacity;
  GstClockTime mu;
  guint pipelines;
  gboolean admission;
  GstRtGpuProcessor processor;
  gint busy_ns_per_kb;          /* also read atomically by the worker */
  guint default_w;
  GstClockTime default_d;
  guint64 default_v;
  GstClockTime police_burst;
  gchar *calibration_file;
  gint rt_priority;
  gboolean keep_deadlines;
  gboolean playing;             /* keep-deadlines acts in PLAYING only */
  GstBuffer *srtp_key;
  GstGpuSrtpCipherType srtp_cipher;
  GstGpuSrtpAuthType srtp_auth;
  GstStructure *processor_config;
  guint next_pad;

  /* lives as long as the element: admission works in every state */
  GstGpuStreamScheduler *sched;
  RtGpuStage stage;             /* the scheduler's proc_data */
};

#define gst_rt_gpu_queue_parent_class parent_class
G_DEFINE_TYPE (GstRtGpuQueue, gst_rt_gpu_queue, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (rtgpuqueue, "rtgpuqueue", GST_RANK_NONE,
    GST_TYPE_RT_GPU_QUEUE);

static void
rtgpu_apply_params (GstRtGpuQueue * self)
{
  GstGpuStreamSchedulerParams p;

  GST_OBJECT_LOCK (self);
  p.cycle = self->cycle;
  p.capacity = self->capacity;
  p.mu = self->mu;
  p.admission = self->admission;
  p.police_burst = self->police_burst;
  p.rt_priority = self->rt_priority;
  /* prerolling (PAUSED), packets wait for downstream, not for the worker:
   * none is late then */
  p.keep_deadlines = self->keep_deadlines && self->playing;
  GST_OBJECT_UNLOCK (self);
  gst_gpustream_scheduler_set_params (self->sched, &p);
}

/* keep-deadlines acts in PLAYING only (rtgpu_apply_params) */
static void
rtgpu_set_playing (GstRtGpuQueue * self, gboolean playing)
{
  GST_OBJECT_LOCK (self);
  self->playing = playing;
  GST_OBJECT_UNLOCK (self);
  rtgpu_apply_params (self);
}

/* The configuration of a registered processor (gpsprocessor.h):
 * processor-config when set, else the defaults (srtp-protect: what the
 * deprecated srtp-* properties say). */
static GstStructure *
rtgpu_processor_config (GstRtGpuQueue * self)
{
  GstStructure *s;

  GST_OBJECT_LOCK (self);
  if (self->processor_config) {
    s = gst_structure_copy (self->processor_config);
  } else if (self->processor == GST_RT_GPU_PROCESSOR_NC_ENCODE) {
    s = gst_structure_new_empty ("nc-encode");
  } else {
    s = gst_structure_new ("srtp-protect",
        "srtp-cipher", G_TYPE_STRING,
        gst_gpu_srtp_cipher_nick (self->srtp_cipher),
        "srtp-auth", G_TYPE_STRING, gst_gpu_srtp_auth_nick (self->srtp_auth),
        NULL);
    if (self->srtp_key)
      gst_structure_set (s, "srtp-key", GST_TYPE_BUFFER, self->srtp_key,
          NULL);
  }
  GST_OBJECT_UNLOCK (self);
  return s;
}

/* ---- the processing stage (runs in the scheduler's worker) --------------- */

static void
busy_wait (guint64 ns)
{
  guint64 end = gst_gpustream_sched_now () + ns;

  while (gst_gpustream_sched_now () < end);
}

/* The name a processor of the enum is registered under; NULL for the
 * element's own stages. */
static const gchar *
stage_registered_name (GstRtGpuProcessor proc)
{
  switch (proc) {
    case GST_RT_GPU_PROCESSOR_SRTP_PROTECT:
      return "srtp-protect";
    case GST_RT_GPU_PROCESSOR_NC_ENCODE:
      return "nc-encode";
    default:
      return NULL;
  }
}

/* A stage for proc; a registered processor gets an instance made from
 * config. FALSE (error set, naming what is wrong) when it refuses. */
static gboolean
stage_init (RtGpuStage * st, GstRtGpuQueue * self, GstRtGpuProcessor proc,
    const GstStructure * config, GError ** error)
{
  const gchar *name = stage_registered_name (proc);

  st->owner = GST_ELEMENT (self);
  st->processor = proc;
  st->busy_ns_per_kb = &self->busy_ns_per_kb;
  st->info = NULL;
  st->instance = NULL;
  if (!name)
    return TRUE;
  st->info = gst_gpustream_processor_lookup (name, error);
  if (st->info)
    st->instance = st->info->setup (config, st->owner, error);
  if (!st->instance) {
    st->info = NULL;
    return FALSE;
  }
  return TRUE;
}

/* after the worker stopped: the instance (and its keys) go */
static void
stage_clear (RtGpuStage * st)
{
  if (st->instance)
    st->info->teardown (st->instance);
  st->instance = NULL;
  st->info = NULL;
}

/* A batch of any stage between its two halves. */
typedef struct
{
  gpointer registered;          /* what the registered processor's submit
                                 * returned */
} RtGpuBatch;

/* The worker starts each pipeline's batch (ctx: the scheduler runs on the
 * GPU): a registered processor queues its GPU work, so that the batches of
 * all pipelines are in flight together (one CUDA stream per lane for
 * srtp-protect, the coder pool's batch for nc-encode); for copy and busy
 * the work is done here. */
static gpointer
rtgpu_submit (gpointer user_data, GstObject * ctx, guint lane,
    GstGpuStreamSchedItem * items, guint n)
{
  RtGpuStage *st = user_data;
  RtGpuBatch *b = g_new0 (RtGpuBatch, 1);
  guint64 bytes = 0;
  guint i;

  if (st->info) {
    b->registered = st->info->processor.submit (st->instance, ctx, lane,
        items, n);
  } else if (st->processor == GST_RT_GPU_PROCESSOR_BUSY) {
    for (i = 0; i < n; i++)
      if ((items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) &&
          !gst_gpustream_sched_item_is_flushed (&items[i]))
        bytes += items[i].size;
    busy_wait (bytes * g_atomic_int_get (st->busy_ns_per_kb) / 1024);
  }
  return b;
}

static void
rtgpu_finish (gpointer user_data, gpointer submitted)
{
  RtGpuStage *st = user_data;
  RtGpuBatch *b = submitted;

  if (b->registered)
    st->info->processor.finish (st->instance, b->registered);
  g_free (b);
}

/* A registered processor that collects (srtp-protect) copies each packet
 * into its batch area on the collector's thread, as it arrives; the worker
 * then only starts and waits for whole batches. The other stages have no
 * areas (NULL). */
static gboolean
stage_collects (const RtGpuStage * st)
{
  return st->info && st->info->processor.collect;
}

static gpointer
rtgpu_area_new (gpointer user_data, GstObject * ctx, guint cap)
{
  RtGpuStage *st = user_data;

  return stage_collects (st) ?
      st->info->processor.area_new (st->instance, ctx, cap) : NULL;
}

static void
rtgpu_area_free (gpointer user_data, gpointer area)
{
  RtGpuStage *st = user_data;

  st->info->processor.area_free (st->instance, area);
}

static void
rtgpu_collect (gpointer user_data, gpointer area, GstGpuStreamSchedItem * item)
{
  RtGpuStage *st = user_data;

  if (stage_collects (st))
    st->info->processor.collect (st->instance, area, item);
}

static gpointer
rtgpu_submit_area (gpointer user_data, GstObject * ctx, guint lane,
    gpointer area, GstGpuStreamSchedItem * items, guint n)
{
  RtGpuStage *st = user_data;
  RtGpuBatch *b;

  if (!stage_collects (st))
    return rtgpu_submit (user_data, ctx, lane, items, n);
  b = g_new0 (RtGpuBatch, 1);
  b->registered = st->info->processor.submit_area (st->instance, ctx, lane,
      area, items, n);
  return b;
}

static const GstGpuStreamProcessor rtgpu_processor = {
  "rtgpuqueue", NULL, NULL, rtgpu_submit, rtgpu_finish,
  rtgpu_area_new, rtgpu_area_free, rtgpu_collect, rtgpu_submit_area
};

/* ---- the data path ------------------------------------------------------- */

/* The forwarder: in order per stream, the packet's own timestamps. */
static void
rtgpu_forward (gpointer stream_data, GstGpuStreamSchedItem * item)
{
  GstRtGpuQueuePad *pad = stream_data;
  gpointer data = g_steal_pointer (&item->data);
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean flow;

  if (data == NULL)             /* dropped by the stage */
    return;
  g_mutex_lock (&pad->flow_lock);
  if (pad->flushing || gst_gpustream_sched_item_is_flushed (item)) {
    g_mutex_unlock (&pad->flow_lock);
    gst_mini_object_unref (data);
    return;
  }
  pad->forwarding = TRUE;
  g_mutex_unlock (&pad->flow_lock);

  flow = !GST_IS_EVENT (data);
  if (GST_IS_BUFFER (data))
    ret = gst_pad_push (pad->srcpad, data);
  else if (GST_IS_BUFFER_LIST (data))
    /* nc-encode: the coded packets of one packet */
    ret = gst_pad_push_list (pad->srcpad, data);
  else {
    /* the last batches ran after the stream's last packet came in: what
     * failed on the GPU among them is said before the stream ends */
    if (GST_EVENT_TYPE (data) == GST_EVENT_EOS) {
      GstElement *self = gst_pad_get_parent_element (pad->srcpad);

      if (self) {
        gst_gpustream_gpu_check_fallbacks (self, &GST_RT_GPU_QUEUE (self)->gpu);
        gst_object_unref (self);
      }
    }
    gst_pad_push_event (pad->srcpad, data);
  }

  g_mutex_lock (&pad->flow_lock);
  pad->forwarding = FALSE;
  if (flow && !pad->flushing)
    g_atomic_int_set (&pad->last_ret, ret);
  g_cond_broadcast (&pad->flow_cond);
  g_mutex_unlock (&pad->flow_lock);
}

static void
rtgpu_drop_data (gpointer data)
{
  if (data)
    gst_mini_object_unref (data);
}

static void
rtgpu_drop (gpointer stream_data, GstGpuStreamSchedItem * item)
{
  rtgpu_drop_data (g_steal_pointer (&item->data));
}

static const GstGpuStreamSchedCallbacks rtgpu_callbacks = {
  NULL, NULL, rtgpu_forward, rtgpu_drop
};

/* ---- srtp-protect caps --------------------------------------------------- */

#define SRTP_SINK_CAPS "application/x-rtp; application/x-rtcp"
#define SRTP_SRC_CAPS "application/x-srtp; application/x-srtcp"

static gboolean
rtgpu_processor_is (GstRtGpuQueue * self, GstRtGpuProcessor proc)
{
  gboolean is;

  GST_OBJECT_LOCK (self);
  is = self->processor == proc;
  GST_OBJECT_UNLOCK (self);
  return is;
}

/* Answers a CAPS query with res (taken), within the query's filter. */
static void
caps_query_answer (GstQuery * query, GstCaps * res)
{
  GstCaps *filter;

  gst_query_parse_caps (query, &filter);
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, res,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  gst_query_set_caps_result (query, res);
  gst_caps_unref (res);
}

/* For the caps query: to_srtp renames a filter for downstream (without key
 * fields: what downstream answers is about the stream); the other way
 * renames downstream's answer back and removes the key fields. */
static GstCaps *
srtp_caps_rename (GstCaps * caps, gboolean to_srtp)
{
  GstCaps *out;
  guint i;

  if (gst_caps_is_any (caps))
    return gst_caps_new_any ();
  out = gst_caps_new_empty ();
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (to_srtp) {
      if (gst_structure_has_name (s, "application/x-rtp"))
        gst_structure_set_name (s, "application/x-srtp");
      else if (gst_structure_has_name (s, "application/x-rtcp"))
        gst_structure_set_name (s, "application/x-srtcp");
    } else {
      if (gst_structure_has_name (s, "application/x-srtp"))
        gst_structure_set_name (s, "application/x-rtp");
      else if (gst_structure_has_name (s, "application/x-srtcp"))
        gst_structure_set_name (s, "application/x-rtcp");
      gst_structure_remove_fields (s, "srtp-key", "srtp-cipher", "srtp-auth",
          "srtcp-cipher", "srtcp-auth", "mki", "roc", NULL);
    }
    gst_caps_append_structure_full (out, s,
        f ? gst_caps_features_copy (f) : NULL);
  }
  return out;
}

/* The CAPS query through the element: on a sink pad (to_srtp FALSE) what
 * downstream takes, as RTP; on a source pad what upstream gives, as SRTP. */
static gboolean
srtp_caps_query (GstPad * other, GstQuery * query, gboolean to_srtp)
{
  GstCaps *filter, *peer_filter = NULL, *peer, *mapped, *res;
  GstCaps *tmpl = gst_caps_from_string (to_srtp ? SRTP_SRC_CAPS :
      SRTP_SINK_CAPS);

  gst_query_parse_caps (query, &filter);
  if (filter)
    peer_filter = srtp_caps_rename (filter, !to_srtp);
  peer = gst_pad_peer_query_caps (other, peer_filter);
  mapped = srtp_caps_rename (peer, to_srtp);
  res = gst_caps_intersect (mapped, tmpl);
  caps_query_answer (query, res);
  gst_caps_unref (mapped);
  gst_caps_unref (peer);
  gst_caps_unref (tmpl);
  gst_clear_caps (&peer_filter);
  return TRUE;
}

static gboolean
srtp_sink_query (GstRtGpuQueuePad * qpad, GstQuery * query)
{
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:
      return srtp_caps_query (qpad->srcpad, query, FALSE);
    case GST_QUERY_ACCEPT_CAPS:{
      GstCaps *caps;
      const GstStructure *s;

      gst_query_parse_accept_caps (query, &caps);
      s = gst_caps_is_empty (caps) ? NULL : gst_caps_get_structure (caps, 0);
      gst_query_set_accept_caps_result (query, s &&
          (gst_structure_has_name (s, "application/x-rtp") ||
              gst_structure_has_name (s, "application/x-rtcp")));
      return TRUE;
    }
    default:
      return gst_pad_peer_query (qpad->srcpad, query);
  }
}

/* ---- nc-encode caps ------------------------------------------------------ */

/* Any stream goes in (its caps become the original-caps of the coded
 * stream); the coded stream comes out. */
static gboolean
nc_caps_query (GstQuery * query, gboolean src)
{
  caps_query_answer (query, src ?
      gst_caps_new_empty_simple ("application/x-rlnc") : gst_caps_new_any ());
  return TRUE;
}

static gboolean
nc_sink_query (GstRtGpuQueuePad * qpad, GstQuery * query)
{
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:
      return nc_caps_query (query, FALSE);
    case GST_QUERY_ACCEPT_CAPS:
      gst_query_set_accept_caps_result (query, TRUE);
      return TRUE;
    case GST_QUERY_ALLOCATION:
      /* the coded packets are ours: downstream's pool is not for them */
      return FALSE;
    default:
      return gst_pad_peer_query (qpad->srcpad, query);
  }
}

/* Packets over the declared rate are dropped by the policer: counted in
 * stats only, a bursty source (rtpvrawpay sends a whole video frame at
 * once) lost most of each frame, its last packets, marker included, every
 * time, and the receiver saw frames go missing with nothing said. At most
 * one warning a second, with the figures to declare instead. */
static void
rtgpu_say_policed (GstRtGpuQueue * self, GstRtGpuQueuePad * qpad)
{
  GstGpuStreamSchedStreamStats st;
  gint64 now = g_get_monotonic_time ();
  GstClockTime burst;

  if (qpad->policed_said_at != 0 &&
      now - qpad->policed_said_at < G_USEC_PER_SEC)
    return;
  gst_gpustream_sched_stream_get_stats (qpad->stream, &st);
  if (st.drops_policed == qpad->policed_said)
    return;
  qpad->policed_said_at = now;
  GST_OBJECT_LOCK (self);
  burst = self->police_burst ? self->police_burst : self->cycle;
  GST_OBJECT_UNLOCK (self);
  GST_ELEMENT_WARNING (self, STREAM, FAILED,
      ("pad %s: packets over the declared rate dropped (policed): %"
          G_GUINT64_FORMAT " in all", GST_PAD_NAME (qpad),
          st.drops_policed),
      ("max-rate %.3g B/s with police-burst %.3g ms takes bursts of %.0f B; "
          "a source that sends in larger bursts (a video frame at once) needs "
          "police-burst of the burst's span at max-rate, or a higher "
          "max-rate", (gdouble) qpad->v, burst / 1e6,
          (gdouble) qpad->v * burst / GST_SECOND + qpad->w));
  qpad->policed_said = st.drops_policed;
}

static GstFlowReturn
gst_rt_gpu_queue_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (parent);
  GstRtGpuQueuePad *qpad = GST_RT_GPU_QUEUE_PAD (pad);
  GstFlowReturn ret = g_atomic_int_get (&qpad->last_ret);
  gsize size = gst_buffer_get_size (buf);

  /* like queue: a downstream error comes back to the producer */
  if (ret != GST_FLOW_OK && ret != GST_FLOW_NOT_LINKED) {
    gst_buffer_unref (buf);
    return ret;
  }
  if (!gst_gpustream_scheduler_is_running (self->sched)) {
    gst_buffer_unref (buf);
    return GST_FLOW_FLUSHING;
  }
  /* what failed on the GPU among the batches before is said here */
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  if (size > qpad->w) {
    /* beyond the declared w: the schedulability proof does not cover it */
    __atomic_fetch_add (&qpad->drops_oversize, 1, __ATOMIC_RELAXED);
    GST_LOG_OBJECT (pad, "dropping %" G_GSIZE_FORMAT " B > max-packet-size "
        "%u", size, qpad->w);
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }
  if (!gst_gpustream_sched_stream_push (qpad->stream, buf, size,
          GST_GPUSTREAM_SCHED_ITEM_PACKET)) {
    gst_buffer_unref (buf);     /* policed or batch full: counted */
    rtgpu_say_policed (self, qpad);
  }
  return GST_FLOW_OK;
}

static gboolean
gst_rt_gpu_queue_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (parent);
  GstRtGpuQueuePad *qpad = GST_RT_GPU_QUEUE_PAD (pad);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:
      /* the stage is fixed from start on, before any event flows */
      if (self->stage.info && self->stage.info->transform_caps) {
        GstCaps *caps, *out;

        gst_event_parse_caps (event, &caps);
        out = self->stage.info->transform_caps (self->stage.instance, caps);
        gst_event_unref (event);
        event = gst_event_new_caps (out);
        gst_caps_unref (out);
      }
      break;
    case GST_EVENT_FLUSH_START:
      g_mutex_lock (&qpad->flow_lock);
      qpad->flushing = TRUE;
      g_atomic_int_set (&qpad->last_ret, GST_FLOW_FLUSHING);
      g_mutex_unlock (&qpad->flow_lock);
      return gst_pad_push_event (qpad->srcpad, event);
    case GST_EVENT_FLUSH_STOP:
      g_mutex_lock (&qpad->flow_lock);
      /* what is queued is dropped; a push under way ends first (downstream
       * still flushes, it fails at once) */
      gst_gpustream_sched_stream_flush (qpad->stream);
      while (qpad->forwarding)
        g_cond_wait (&qpad->flow_cond, &qpad->flow_lock);
      qpad->flushing = FALSE;
      g_atomic_int_set (&qpad->last_ret, GST_FLOW_OK);
      g_mutex_unlock (&qpad->flow_lock);
      return gst_pad_push_event (qpad->srcpad, event);
    default:
      break;
  }
  /* serialized events travel with the packets, so they stay in order. A
   * batch that is full now has room after the next cycle: an event waits
   * for it (events are few) rather than overtaking the packets before it,
   * which an EOS would have thrown away unsent */
  if (GST_EVENT_IS_SERIALIZED (event)) {
    const gulong nap_us = MAX (self->cycle / 4000, 100);
    gint64 until = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;

    for (;;) {
      gboolean flushing;

      if (gst_gpustream_sched_stream_push (qpad->stream, event, 0, 0))
        return TRUE;
      g_mutex_lock (&qpad->flow_lock);
      flushing = qpad->flushing;
      g_mutex_unlock (&qpad->flow_lock);
      if (flushing || !gst_gpustream_scheduler_is_running (self->sched))
        break;
      if (g_get_monotonic_time () > until) {
        GST_WARNING_OBJECT (pad, "no room for %s in 2 s: sent ahead of the "
            "packets queued before it", GST_EVENT_TYPE_NAME (event));
        break;
      }
      g_usleep (nap_us);
    }
  }
  return gst_pad_push_event (qpad->srcpad, event);
}

static gboolean
gst_rt_gpu_queue_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (parent);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT)
    return gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self),
        &self->gpu, query);
  /* srtp-protect takes RTP and gives SRTP; nc-encode takes anything */
  if (rtgpu_processor_is (self, GST_RT_GPU_PROCESSOR_SRTP_PROTECT))
    return srtp_sink_query (GST_RT_GPU_QUEUE_PAD (pad), query);
  if (rtgpu_processor_is (self, GST_RT_GPU_PROCESSOR_NC_ENCODE))
    return nc_sink_query (GST_RT_GPU_QUEUE_PAD (pad), query);
  /* caps, allocation, ... are those of downstream: we pass packets through */
  return gst_pad_peer_query (GST_RT_GPU_QUEUE_PAD (pad)->srcpad, query);
}

static GstClockTime
rtgpu_added_latency (GstRtGpuQueue * self)
{
  GstClockTime l;

  GST_OBJECT_LOCK (self);
  l = 3 * self->cycle + self->mu;
  GST_OBJECT_UNLOCK (self);
  return l;
}

static gboolean
gst_rt_gpu_queue_src_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (parent);
  GstPad *sinkpad = gst_pad_get_element_private (pad);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CONTEXT:
      return gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self),
          &self->gpu, query);
    case GST_QUERY_LATENCY:{
      /* admitted, a packet leaves within 3 I + mu of its arrival */
      GstClockTime min, max, add = rtgpu_added_latency (self);
      gboolean live;

      if (!gst_pad_peer_query (sinkpad, query))
        return FALSE;
      gst_query_parse_latency (query, &live, &min, &max);
      min += add;
      if (GST_CLOCK_TIME_IS_VALID (max))
        max += add;
      gst_query_set_latency (query, live, min, max);
      return TRUE;
    }
    case GST_QUERY_CAPS:
      if (rtgpu_processor_is (self, GST_RT_GPU_PROCESSOR_SRTP_PROTECT))
        return srtp_caps_query (sinkpad, query, TRUE);
      if (rtgpu_processor_is (self, GST_RT_GPU_PROCESSOR_NC_ENCODE))
        return nc_caps_query (query, TRUE);
      return gst_pad_peer_query (sinkpad, query);
    default:
      return gst_pad_peer_query (sinkpad, query);
  }
}

static GstIterator *
gst_rt_gpu_queue_iterate_internal_links (GstPad * pad, GstObject * parent)
{
  GstPad *other;
  GValue v = G_VALUE_INIT;
  GstIterator *it;

  if (GST_IS_RT_GPU_QUEUE_PAD (pad))
    other = GST_RT_GPU_QUEUE_PAD (pad)->srcpad;
  else
    other = gst_pad_get_element_private (pad);
  g_value_init (&v, GST_TYPE_PAD);
  g_value_set_object (&v, other);
  it = gst_iterator_new_single (GST_TYPE_PAD, &v);
  g_value_unset (&v);
  return it;
}

/* ---- request pads: admission --------------------------------------------- */

static gboolean
caps_get_u64 (const GstStructure * s, const gchar * field, guint64 * out)
{
  const GValue *v = gst_structure_get_value (s, field);

  if (!v)
    return FALSE;
  if (G_VALUE_HOLDS_INT (v) && g_value_get_int (v) >= 0)
    *out = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    *out = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_INT64 (v) && g_value_get_int64 (v) >= 0)
    *out = g_value_get_int64 (v);
  else if (G_VALUE_HOLDS_UINT64 (v))
    *out = g_value_get_uint64 (v);
  else
    return FALSE;
  return TRUE;
}

/* A refused stream as a bus message: the scheduler's text states the cause
 * with its figures; the debug text names the pad and says what to do. */
static void
rtgpu_post_refusal (GstRtGpuQueue * self, GstMessageType type,
    const GError * refusal, const gchar * pad_name, const gchar * remedy)
{
  gint code = g_error_matches (refusal, GST_GPUSTREAM_SCHEDULER_ERROR,
      GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY) ? GST_RESOURCE_ERROR_BUSY :
      GST_RESOURCE_ERROR_SETTINGS;

  gst_element_message_full (GST_ELEMENT (self), type, GST_RESOURCE_ERROR,
      code, g_strdup (refusal->message), g_strdup_printf ("pad %s: %s",
          pad_name, remedy), __FILE__, GST_FUNCTION, __LINE__);
}

static GstPad *
gst_rt_gpu_queue_request_new_pad (GstElement * element, GstPadTemplate * templ,
    const gchar * name, const GstCaps * caps)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (element);
  GstRtGpuQueuePad *sinkpad;
  GstPad *srcpad, *existing;
  guint64 w, d, v, tmp;
  guint id;
  gchar *pad_name;
  GError *err = NULL;
  gboolean running = GST_STATE (element) > GST_STATE_READY ||
      GST_STATE_TARGET (element) > GST_STATE_READY;

  GST_OBJECT_LOCK (self);
  if (name && sscanf (name, "sink_%u", &id) == 1) {
    self->next_pad = MAX (self->next_pad, id + 1);
  } else {
    id = self->next_pad++;
  }
  w = self->default_w;
  d = self->default_d;
  v = self->default_v;
  GST_OBJECT_UNLOCK (self);

  if (caps && !gst_caps_is_empty (caps) && !gst_caps_is_any (caps)) {
    const GstStructure *s = gst_caps_get_structure (caps, 0);
    if (caps_get_u64 (s, "max-packet-size", &tmp))
      w = tmp;
    if (caps_get_u64 (s, "deadline", &tmp))
      d = tmp;
    if (caps_get_u64 (s, "max-rate", &tmp))
      v = tmp;
  }

  pad_name = g_strdup_printf ("sink_%u", id);
  if ((existing = gst_element_get_static_pad (element, pad_name))) {
    GST_ELEMENT_WARNING (self, CORE, PAD, ("pad %s already exists", pad_name),
        ("each stream needs a pad name of its own"));
    gst_object_unref (existing);
    g_free (pad_name);
    return NULL;
  }
  sinkpad = g_object_new (GST_TYPE_RT_GPU_QUEUE_PAD, "name", pad_name,
      "direction", GST_PAD_SINK, "template", templ, NULL);
  g_free (pad_name);
  sinkpad->w = MIN (w, G_MAXUINT32);
  sinkpad->d = d;
  sinkpad->v = v;

  sinkpad->stream = gst_gpustream_scheduler_add_stream (self->sched,
      sinkpad->w, d, v, gst_object_ref (sinkpad), gst_object_unref, &err);
  if (!sinkpad->stream) {
    /* the reference taken for the stream was not kept */
    gst_object_unref (sinkpad);
    if (running) {
      /* the pipeline goes on without this stream */
      rtgpu_post_refusal (self, GST_MESSAGE_WARNING, err,
          GST_OBJECT_NAME (sinkpad), "not created");
      gst_object_ref_sink (sinkpad);
      gst_object_unref (sinkpad);
      g_clear_error (&err);
      return NULL;
    }
    /* While a pipeline is being built the pad is made anyway and the
     * refusal becomes an error at READY->PAUSED: gst-launch gives up on a
     * pad it cannot link with "could not link" alone and never reads the
     * bus, so a refusal posted now would not reach the user. */
    sinkpad->refusal = err;
  }

  pad_name = g_strdup_printf ("src_%u", id);
  srcpad = gst_pad_new_from_static_template (&src_template, pad_name);
  g_free (pad_name);
  sinkpad->srcpad = gst_object_ref_sink (srcpad);
  gst_pad_set_element_private (srcpad, sinkpad);
  gst_pad_set_query_function (srcpad,
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_src_query));
  gst_pad_set_iterate_internal_links_function (srcpad,
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_iterate_internal_links));
  gst_pad_use_fixed_caps (srcpad);

  gst_pad_set_chain_function (GST_PAD (sinkpad),
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_chain));
  gst_pad_set_event_function (GST_PAD (sinkpad),
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_sink_event));
  gst_pad_set_query_function (GST_PAD (sinkpad),
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_sink_query));
  gst_pad_set_iterate_internal_links_function (GST_PAD (sinkpad),
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_iterate_internal_links));
  GST_PAD_SET_PROXY_CAPS (sinkpad);
  GST_PAD_SET_PROXY_ALLOCATION (sinkpad);

  if (GST_STATE (element) > GST_STATE_READY ||
      GST_STATE_TARGET (element) > GST_STATE_READY) {
    gst_pad_set_active (srcpad, TRUE);
    gst_pad_set_active (GST_PAD (sinkpad), TRUE);
  }
  gst_element_add_pad (element, srcpad);
  gst_element_add_pad (element, GST_PAD (sinkpad));
  GST_INFO_OBJECT (self, "stream %u %s: w %u B, d %" GST_TIME_FORMAT
      ", v %" G_GUINT64_FORMAT " B/s", id, sinkpad->stream ? "admitted" :
      "refused, reported at start", sinkpad->w, GST_TIME_ARGS (d), v);
  return GST_PAD (sinkpad);
}

static void
gst_rt_gpu_queue_release_pad (GstElement * element, GstPad * pad)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (element);
  GstRtGpuQueuePad *qpad = GST_RT_GPU_QUEUE_PAD (pad);
  GstPad *srcpad = qpad->srcpad;

  /* no chain call runs after this, so the stream can go */
  gst_pad_set_active (pad, FALSE);
  if (qpad->stream)
    gst_gpustream_scheduler_remove_stream (self->sched, qpad->stream);
  qpad->stream = NULL;
  /* pushes still in flight now fail fast instead of reaching downstream */
  gst_pad_set_active (srcpad, FALSE);
  gst_element_remove_pad (element, srcpad);
  gst_element_remove_pad (element, pad);
}

/* ---- calibration and stats ----------------------------------------------- */

/* An RTP packet (version 2, one SSRC, the next sequence number) of size
 * bytes, so that srtp-protect measures real protects; the other stages do
 * not look at the bytes. */
static gpointer
rtgpu_make_packet (gpointer user_data, guint32 size)
{
  /* the trial's collector threads call it together; every packet a new
   * (SSRC, sequence number), so that srtp-protect protects each one */
  guint n = (guint) g_atomic_int_add ((gint *) user_data, 1);
  guint16 seq = (guint16) n;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  memset (map.data, 0x5a, size);
  if (size >= 12) {
    map.data[0] = 0x80;
    map.data[1] = 96;
    GST_WRITE_UINT16_BE (map.data + 2, seq);
    GST_WRITE_UINT32_BE (map.data + 4, (guint32) seq * 160);
    GST_WRITE_UINT32_BE (map.data + 8, 0x5a5a0000 + (n >> 16));
  }
  gst_buffer_unmap (buf, &map);
  return buf;
}

/* The `calibrate` action: B_I of the current processor at the current
 * cycle and default-max-packet-size by a trial run of the device's worker
 * (gst_gpustream_scheduler_calibrate_trial), or the figure an earlier
 * calibration of this process found for the same device, processor, cycle
 * and size (a trial disturbs what runs on the device); sets capacity to it
 * and, with a path, saves the result there. Returns B_I, 0 on failure. */
static guint64
gst_rt_gpu_queue_calibrate (GstRtGpuQueue * self, const gchar * path)
{
  GstGpuStreamCalibration cal = { 0 };
  GstGpuStreamTrialParams trial;
  GError *err = NULL;
  GstClockTime cycle;
  guint w;
  RtGpuStage st = { 0 };
  GstStructure *config;
  GstRtGpuProcessor proc;
  GstGpuStreamProcessor timed = rtgpu_processor;
  gchar *what;
  gint seq = 0;
  gboolean ok;

  /* a stage of its own: the worker's may be running */
  gst_gpustream_trial_params_init (&trial);
  GST_OBJECT_LOCK (self);
  cycle = self->cycle;
  w = self->default_w;
  proc = self->processor;
  trial.n_pipelines = self->pipelines;
  trial.mu = self->mu;
  /* the deadline the streams declare by default, when admissible */
  if (self->default_d > 3 * self->cycle + self->mu)
    trial.deadline = self->default_d;
  trial.rt_priority = self->rt_priority;
  GST_OBJECT_UNLOCK (self);
  config = rtgpu_processor_config (self);
  /* what the cost depends on names the calibration (and keys its cache):
   * the stage and its settings, never the key */
  gst_structure_remove_field (config, "srtp-key");
  if (proc == GST_RT_GPU_PROCESSOR_BUSY)
    what = g_strdup_printf ("rtgpuqueue busy %d ns/KiB",
        g_atomic_int_get (&self->busy_ns_per_kb));
  else if (proc == GST_RT_GPU_PROCESSOR_COPY)
    what = g_strdup ("rtgpuqueue copy");
  else
    what = gst_structure_to_string (config);
  timed.name = what;
  ok = stage_init (&st, self, proc, config, &err);
  if (!ok && proc == GST_RT_GPU_PROCESSOR_SRTP_PROTECT) {
    /* the cost does not depend on the key: a zero key when none is set */
    GstGpuSrtpCipherType cipher = GST_GPU_SRTP_CIPHER_AES_128_ICM;
    const gchar *nick = gst_structure_get_string (config, "srtp-cipher");
    gsize len;
    GstBuffer *zero;

    if (nick)
      gst_gpu_srtp_cipher_from_nick (nick, &cipher);
    len = gst_gpu_srtp_key_length (cipher);
    zero = gst_buffer_new_allocate (NULL, len, NULL);
    gst_buffer_memset (zero, 0, 0, len);
    gst_structure_set (config, "srtp-key", GST_TYPE_BUFFER, zero, NULL);
    gst_buffer_unref (zero);
    g_clear_error (&err);
    ok = stage_init (&st, self, proc, config, &err);
  }
  gst_structure_free (config);
  if (ok && gst_gpustream_calibration_lookup (self->gpu.resolved !=
          GST_GPUSTREAM_BACKEND_CPU ? self->gpu.cuda_context : NULL,
          timed.name, cycle, w, &cal)) {
    GST_INFO_OBJECT (self, "calibration of this process reused");
    stage_clear (&st);
  } else if (ok) {
    ok = gst_gpustream_scheduler_calibrate_trial (&timed, &st,
        self->gpu.resolved, self->gpu.cuda_context, rtgpu_make_packet,
        rtgpu_drop_data, &seq, cycle, w, &trial, &cal, &err);
    stage_clear (&st);
  }
  g_free (what);
  if (!ok) {
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, ("%s", err->message),
        (NULL));
    g_clear_error (&err);
    return 0;
  }
  GST_INFO_OBJECT (self, "calibrated: cycle %" GST_TIME_FORMAT ", capacity "
      "%" G_GUINT64_FORMAT " B/s, worst batch %" GST_TIME_FORMAT,
      GST_TIME_ARGS (cycle), cal.capacity, GST_TIME_ARGS (cal.worst_batch));
  if (path && *path && !gst_gpustream_calibration_save (&cal, path, &err)) {
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE, ("%s", err->message), (NULL));
    g_clear_error (&err);
  }
  GST_OBJECT_LOCK (self);
  self->capacity = cal.capacity;
  GST_OBJECT_UNLOCK (self);
  rtgpu_apply_params (self);
  g_object_notify (G_OBJECT (self), "capacity");
  gst_gpustream_calibration_clear (&cal);
  return cal.capacity;
}

static void
rtgpu_load_calibration (GstRtGpuQueue * self)
{
  GstGpuStreamCalibration cal = { 0 };
  GError *err = NULL;
  gchar *path;

  GST_OBJECT_LOCK (self);
  path = g_strdup (self->calibration_file);
  GST_OBJECT_UNLOCK (self);
  if (!path || !*path) {
    g_free (path);
    return;
  }
  if (!gst_gpustream_calibration_load (&cal, path, &err)) {
    GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s", err->message),
        ("keeping cycle and capacity"));
    g_clear_error (&err);
  } else {
    GST_OBJECT_LOCK (self);
    self->cycle = cal.cycle;
    self->capacity = cal.capacity;
    GST_OBJECT_UNLOCK (self);
    rtgpu_apply_params (self);
    GST_INFO_OBJECT (self, "calibration %s: cycle %" GST_TIME_FORMAT
        ", capacity %" G_GUINT64_FORMAT " B/s (%s)", path,
        GST_TIME_ARGS (cal.cycle), cal.capacity, cal.processor);
    gst_gpustream_calibration_clear (&cal);
  }
  g_free (path);
}

static GstStructure *
gst_rt_gpu_queue_get_stats (GstRtGpuQueue * self)
{
  GstGpuStreamSchedulerStats st;
  GValue streams = G_VALUE_INIT;
  guint64 packets, policed, overflow, misses, oversize = 0;
  guint64 late, shed, capped;
  GstStructure *s;
  GList *l;

  gst_gpustream_scheduler_get_stats (self->sched, &st);
  packets = st.gone_packets;
  policed = st.gone_drops_policed;
  overflow = st.gone_drops_overflow;
  misses = st.gone_misses;
  late = st.gone_drops_late;
  shed = st.gone_drops_shed;
  capped = st.gone_drops_capped;

  g_value_init (&streams, GST_TYPE_ARRAY);
  GST_OBJECT_LOCK (self);
  for (l = GST_ELEMENT (self)->sinkpads; l; l = l->next) {
    GstRtGpuQueuePad *pad = l->data;
    GstGpuStreamSchedStreamStats ss;
    GValue v = G_VALUE_INIT;
    guint64 os = __atomic_load_n (&pad->drops_oversize, __ATOMIC_RELAXED);

    if (!pad->stream)
      continue;
    gst_gpustream_sched_stream_get_stats (pad->stream, &ss);
    packets += ss.packets;
    policed += ss.drops_policed;
    overflow += ss.drops_overflow;
    late += ss.drops_late;
    shed += ss.drops_shed;
    capped += ss.drops_capped;
    misses += ss.misses;
    oversize += os;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, gst_structure_new ("stream",
            "pad", G_TYPE_STRING, GST_OBJECT_NAME (pad),
            "admitted", G_TYPE_BOOLEAN, TRUE,
            "pipeline", G_TYPE_UINT, ss.pipeline,
            "max-packet-size", G_TYPE_UINT, ss.w,
            "deadline", G_TYPE_UINT64, ss.d,
            "max-rate", G_TYPE_UINT64, ss.v,
            "packets", G_TYPE_UINT64, ss.packets,
            "bytes", G_TYPE_UINT64, ss.bytes,
            "drops-policed", G_TYPE_UINT64, ss.drops_policed,
            "drops-oversize", G_TYPE_UINT64, os,
            "drops-overflow", G_TYPE_UINT64, ss.drops_overflow,
            "drops-late", G_TYPE_UINT64, ss.drops_late,
            "drops-shed", G_TYPE_UINT64, ss.drops_shed,
            "drops-capped", G_TYPE_UINT64, ss.drops_capped,
            "shed", G_TYPE_BOOLEAN, ss.shed,
            "deadline-misses", G_TYPE_UINT64, ss.misses,
            "latency-p50", G_TYPE_UINT64, ss.latency_p50,
            "latency-p99", G_TYPE_UINT64, ss.latency_p99,
            "latency-max", G_TYPE_UINT64, ss.latency_max, NULL));
    gst_value_array_append_and_take_value (&streams, &v);
  }
  s = gst_structure_new ("application/x-rtgpuqueue-stats",
      "cycle", G_TYPE_UINT64, self->cycle,
      "effective-cycle", G_TYPE_UINT64, st.effective_cycle,
      "capacity", G_TYPE_UINT64, self->capacity,
      "latency-bound", G_TYPE_UINT64, 3 * self->cycle + self->mu,
      "rate-admitted", G_TYPE_UINT64, st.beta,
      "deadline-min", G_TYPE_UINT64, st.theta,
      "streams", G_TYPE_UINT, st.n_streams,
      "streams-admitted", G_TYPE_UINT64, st.streams_admitted,
      "streams-refused", G_TYPE_UINT64, st.streams_refused,
      "cycles", G_TYPE_UINT64, st.cycles,
      "launches", G_TYPE_UINT64, st.launches,
      "late-launches", G_TYPE_UINT64, st.late_launches,
      "worst-batch-time", G_TYPE_UINT64, st.worst_batch,
      "packets", G_TYPE_UINT64, packets,
      "drops-policed", G_TYPE_UINT64, policed,
      "drops-oversize", G_TYPE_UINT64, oversize,
      "drops-overflow", G_TYPE_UINT64, overflow,
      "drops-late", G_TYPE_UINT64, late,
      "drops-shed", G_TYPE_UINT64, shed,
      "drops-capped", G_TYPE_UINT64, capped,
      "deadline-misses", G_TYPE_UINT64, misses,
      "realtime", G_TYPE_BOOLEAN, st.realtime,
      "capacity-effective", G_TYPE_UINT64, st.capacity_effective,
      "capacity-lowered", G_TYPE_UINT64, st.capacity_lowered,
      "capacity-raised", G_TYPE_UINT64, st.capacity_raised,
      "streams-shed", G_TYPE_UINT, st.streams_shed,
      "sheds", G_TYPE_UINT64, st.sheds,
      "overruns", G_TYPE_UINT64, st.overruns,
      "occupancy-p50", G_TYPE_DOUBLE, st.occupancy_p50,
      "occupancy-max", G_TYPE_DOUBLE, st.occupancy_max,
      "backend", G_TYPE_STRING, gst_gpustream_backend_nick (self->gpu.resolved),
      "srtp-streams", G_TYPE_UINT, 0, "srtp-drops", G_TYPE_UINT64,
      G_GUINT64_CONSTANT (0), "srtp-gpu-batches", G_TYPE_UINT64,
      G_GUINT64_CONSTANT (0), "srtp-collected", G_TYPE_UINT64,
      G_GUINT64_CONSTANT (0), "srtp-area-full", G_TYPE_UINT64,
      G_GUINT64_CONSTANT (0), NULL);
  GST_OBJECT_UNLOCK (self);
  /* the registered processor's own counters (srtp-protect: the srtp-*
   * fields); the stage lives from start to the next start */
  if (self->stage.info && self->stage.info->get_stats)
    self->stage.info->get_stats (self->stage.instance, s);
  gst_structure_take_value (s, "stream-stats", &streams);
  return s;
}

/* keep-deadlines: the worker lowered or raised the capacity admission uses
 * (its own thread). Every change is an element message; shedding streams
 * is a warning too, since their packets are dropped from then on. */
static gchar *
rtgpu_pad_names (gpointer * pads, guint n)
{
  GString *names = g_string_new (NULL);
  guint i;

  for (i = 0; i < n; i++)
    g_string_append_printf (names, "%s%s", i ? ", " : "",
        GST_OBJECT_NAME (pads[i]));
  return g_string_free (names, FALSE);
}

static void
rtgpu_admission_changed (gpointer user_data,
    const GstGpuStreamSchedAdmissionChange * ch)
{
  GstRtGpuQueue *self = user_data;
  gchar *shed = rtgpu_pad_names (ch->shed, ch->n_shed);
  gchar *restored = rtgpu_pad_names (ch->restored, ch->n_restored);

  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_structure_new ("rtgpuqueue-admission",
              "capacity-before", G_TYPE_UINT64, ch->capacity_before,
              "capacity-after", G_TYPE_UINT64, ch->capacity_after,
              "capacity", G_TYPE_UINT64, ch->capacity,
              "rate-admitted", G_TYPE_UINT64, ch->beta,
              "rate-carried", G_TYPE_UINT64, ch->carried,
              "occupancy-p50", G_TYPE_DOUBLE, ch->occupancy_p50,
              "occupancy-max", G_TYPE_DOUBLE, ch->occupancy_max,
              "window-cycles", G_TYPE_UINT, ch->window_cycles,
              "window-overruns", G_TYPE_UINT, ch->window_overruns,
              "realtime", G_TYPE_BOOLEAN, ch->realtime,
              "shed", G_TYPE_STRING, shed,
              "restored", G_TYPE_STRING, restored, NULL)));
  if (ch->n_shed > 0)
    GST_ELEMENT_WARNING (self, RESOURCE, BUSY,
        ("the worker cannot keep its cycles (%u of %u cycles overran, the "
            "worst took %.2f of a cycle): capacity lowered from %.3g to %.3g "
            "B/s, stream(s) %s shed (their packets dropped) so the others "
            "keep their deadlines", ch->window_overruns, ch->window_cycles,
            ch->occupancy_max, (gdouble) ch->capacity_before,
            (gdouble) ch->capacity_after, shed),
        ("worker %s real-time priority; the streams shed come back, oldest "
            "first, when the cycles are quiet again",
            ch->realtime ? "with" : "without"));
  else
    GST_INFO_OBJECT (self, "capacity %.3g -> %.3g B/s, restored: %s",
        (gdouble) ch->capacity_before, (gdouble) ch->capacity_after,
        restored);
  g_free (shed);
  g_free (restored);
}

/* ---- GObject / GstElement boilerplate ------------------------------------ */

static void
gst_rt_gpu_queue_pad_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstRtGpuQueuePad *pad = GST_RT_GPU_QUEUE_PAD (object);

  switch (prop_id) {
    case PAD_PROP_MAX_PACKET_SIZE:
      g_value_set_uint (value, pad->w);
      break;
    case PAD_PROP_DEADLINE:
      g_value_set_uint64 (value, pad->d);
      break;
    case PAD_PROP_MAX_RATE:
      g_value_set_uint64 (value, pad->v);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_rt_gpu_queue_pad_finalize (GObject * object)
{
  GstRtGpuQueuePad *pad = GST_RT_GPU_QUEUE_PAD (object);

  gst_clear_object (&pad->srcpad);
  g_clear_error (&pad->refusal);
  g_mutex_clear (&pad->flow_lock);
  g_cond_clear (&pad->flow_cond);
  G_OBJECT_CLASS (gst_rt_gpu_queue_pad_parent_class)->finalize (object);
}

static void
gst_rt_gpu_queue_pad_class_init (GstRtGpuQueuePadClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  /* fixed at admission: change them by releasing and requesting again */
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  gobject_class->get_property = gst_rt_gpu_queue_pad_get_property;
  gobject_class->finalize = gst_rt_gpu_queue_pad_finalize;

  g_object_class_install_property (gobject_class, PAD_PROP_MAX_PACKET_SIZE,
      g_param_spec_uint ("max-packet-size", "Max packet size",
          "w: the largest packet of the stream in bytes (larger ones are "
          "dropped); set through the request's extra caps", 1, G_MAXUINT32,
          DEFAULT_MAX_PACKET_SIZE, flags));
  g_object_class_install_property (gobject_class, PAD_PROP_DEADLINE,
      g_param_spec_uint64 ("deadline", "Deadline",
          "d: the time a packet may spend in the element, in ns", 1,
          G_MAXUINT64, DEFAULT_DEADLINE, flags));
  g_object_class_install_property (gobject_class, PAD_PROP_MAX_RATE,
      g_param_spec_uint64 ("max-rate", "Max rate",
          "v: the stream's rate in bytes/s (policed)", 1, G_MAXUINT64,
          DEFAULT_MAX_RATE, flags));
}

static void
gst_rt_gpu_queue_pad_init (GstRtGpuQueuePad * pad)
{
  pad->last_ret = GST_FLOW_OK;
  g_mutex_init (&pad->flow_lock);
  g_cond_init (&pad->flow_cond);
}

static void
gst_rt_gpu_queue_set_context (GstElement * element, GstContext * context)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

/* The stage from the settings; FALSE (error posted, naming what is wrong)
 * when its processor refuses the configuration. */
static gboolean
rtgpu_stage_setup (GstRtGpuQueue * self)
{
  GstRtGpuProcessor proc;
  GstStructure *config;
  GError *err = NULL;
  gboolean ok;

  GST_OBJECT_LOCK (self);
  proc = self->processor;
  GST_OBJECT_UNLOCK (self);
  config = rtgpu_processor_config (self);
  stage_clear (&self->stage);
  ok = stage_init (&self->stage, self, proc, config, &err);
  gst_structure_free (config);
  if (!ok) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", err->message),
        ("processor-config (or srtp-key, srtp-cipher, srtp-auth) does not "
            "suit the processor"));
    g_clear_error (&err);
  }
  return ok;
}

/* FALSE (error posted) when a pad was refused while the element was
 * stopped: the first such pad is reported. */
static gboolean
rtgpu_check_refused_pads (GstRtGpuQueue * self)
{
  GError *refusal = NULL;
  gchar *pad_name = NULL;
  GList *l;

  GST_OBJECT_LOCK (self);
  for (l = GST_ELEMENT (self)->sinkpads; l && !refusal; l = l->next) {
    GstRtGpuQueuePad *pad = l->data;

    if (pad->refusal) {
      refusal = g_error_copy (pad->refusal);
      pad_name = g_strdup (GST_OBJECT_NAME (pad));
    }
  }
  GST_OBJECT_UNLOCK (self);
  if (!refusal)
    return TRUE;
  rtgpu_post_refusal (self, GST_MESSAGE_ERROR, refusal, pad_name,
      "refused when it was requested; release it, or set other figures "
      "(the request's caps or the default-* properties; cycle, mu, "
      "capacity) before requesting it");
  g_error_free (refusal);
  g_free (pad_name);
  return FALSE;
}

static gboolean
rtgpu_start (GstRtGpuQueue * self)
{
  GError *err = NULL;
  guint n;

  GST_OBJECT_LOCK (self);
  n = self->pipelines;
  GST_OBJECT_UNLOCK (self);
  if (!rtgpu_check_refused_pads (self))
    return FALSE;
  if (!rtgpu_stage_setup (self))
    return FALSE;
  rtgpu_apply_params (self);
  if (!gst_gpustream_scheduler_start (self->sched, n, self->gpu.resolved,
          self->gpu.cuda_context, &err)) {
    /* the message says which limit, with its figures */
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", err->message),
        (NULL));
    g_clear_error (&err);
    stage_clear (&self->stage);
    return FALSE;
  }
  return TRUE;
}

static GstStateChangeReturn
gst_rt_gpu_queue_change_state (GstElement * element, GstStateChange transition)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
      if (!gst_gpustream_gpu_start (element, &self->gpu))
        return GST_STATE_CHANGE_FAILURE;
      rtgpu_load_calibration (self);
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      /* before the pads activate: packets flow from PAUSED on */
      if (!rtgpu_start (self))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_PAUSED_TO_PLAYING:
      rtgpu_set_playing (self, TRUE);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  switch (transition) {
    case GST_STATE_CHANGE_PLAYING_TO_PAUSED:
      rtgpu_set_playing (self, FALSE);
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      if (ret == GST_STATE_CHANGE_FAILURE) {
        gst_gpustream_scheduler_stop (self->sched);
        stage_clear (&self->stage);
      }
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* the pads are deactivated: no collector runs */
      gst_gpustream_scheduler_stop (self->sched);
      /* SRTP contexts (ROC 0 at the next start, as a new session) */
      stage_clear (&self->stage);
      break;
    case GST_STATE_CHANGE_READY_TO_NULL:
      gst_gpustream_gpu_stop (&self->gpu);
      break;
    default:
      break;
  }
  return ret;
}

static void
gst_rt_gpu_queue_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_CYCLE:
      self->cycle = g_value_get_uint64 (value);
      break;
    case PROP_CAPACITY:
      self->capacity = g_value_get_uint64 (value);
      break;
    case PROP_MU:
      self->mu = g_value_get_uint64 (value);
      break;
    case PROP_PIPELINES:
      self->pipelines = g_value_get_uint (value);
      break;
    case PROP_ADMISSION:
      self->admission = g_value_get_boolean (value);
      break;
    case PROP_PROCESSOR:
      self->processor = g_value_get_enum (value);
      break;
    case PROP_BUSY_NS_PER_KB:
      g_atomic_int_set (&self->busy_ns_per_kb, g_value_get_uint (value));
      break;
    case PROP_DEFAULT_MAX_PACKET_SIZE:
      self->default_w = g_value_get_uint (value);
      break;
    case PROP_DEFAULT_DEADLINE:
      self->default_d = g_value_get_uint64 (value);
      break;
    case PROP_DEFAULT_MAX_RATE:
      self->default_v = g_value_get_uint64 (value);
      break;
    case PROP_POLICE_BURST:
      self->police_burst = g_value_get_uint64 (value);
      break;
    case PROP_CALIBRATION_FILE:
      g_free (self->calibration_file);
      self->calibration_file = g_value_dup_string (value);
      break;
    case PROP_RT_PRIORITY:
      self->rt_priority = g_value_get_int (value);
      break;
    case PROP_KEEP_DEADLINES:
      self->keep_deadlines = g_value_get_boolean (value);
      break;
    case PROP_SRTP_KEY:
      gst_buffer_replace (&self->srtp_key, g_value_get_boxed (value));
      break;
    case PROP_SRTP_CIPHER:
      self->srtp_cipher = g_value_get_enum (value);
      break;
    case PROP_SRTP_AUTH:
      self->srtp_auth = g_value_get_enum (value);
      break;
    case PROP_PROCESSOR_CONFIG:{
      const GstStructure *config = gst_value_get_structure (value);

      g_clear_pointer (&self->processor_config, gst_structure_free);
      self->processor_config = config ? gst_structure_copy (config) : NULL;
      break;
    }
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
  /* admission decisions use the new values at once */
  rtgpu_apply_params (self);
}

static void
gst_rt_gpu_queue_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_rt_gpu_queue_get_stats (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_CYCLE:
      g_value_set_uint64 (value, self->cycle);
      break;
    case PROP_CAPACITY:
      g_value_set_uint64 (value, self->capacity);
      break;
    case PROP_MU:
      g_value_set_uint64 (value, self->mu);
      break;
    case PROP_PIPELINES:
      g_value_set_uint (value, self->pipelines);
      break;
    case PROP_ADMISSION:
      g_value_set_boolean (value, self->admission);
      break;
    case PROP_PROCESSOR:
      g_value_set_enum (value, self->processor);
      break;
    case PROP_BUSY_NS_PER_KB:
      g_value_set_uint (value, g_atomic_int_get (&self->busy_ns_per_kb));
      break;
    case PROP_DEFAULT_MAX_PACKET_SIZE:
      g_value_set_uint (value, self->default_w);
      break;
    case PROP_DEFAULT_DEADLINE:
      g_value_set_uint64 (value, self->default_d);
      break;
    case PROP_DEFAULT_MAX_RATE:
      g_value_set_uint64 (value, self->default_v);
      break;
    case PROP_POLICE_BURST:
      g_value_set_uint64 (value, self->police_burst);
      break;
    case PROP_CALIBRATION_FILE:
      g_value_set_string (value, self->calibration_file);
      break;
    case PROP_RT_PRIORITY:
      g_value_set_int (value, self->rt_priority);
      break;
    case PROP_KEEP_DEADLINES:
      g_value_set_boolean (value, self->keep_deadlines);
      break;
    case PROP_SRTP_KEY:
      g_value_set_boxed (value, self->srtp_key);
      break;
    case PROP_SRTP_CIPHER:
      g_value_set_enum (value, self->srtp_cipher);
      break;
    case PROP_SRTP_AUTH:
      g_value_set_enum (value, self->srtp_auth);
      break;
    case PROP_PROCESSOR_CONFIG:
      gst_value_set_structure (value, self->processor_config);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_rt_gpu_queue_finalize (GObject * object)
{
  GstRtGpuQueue *self = GST_RT_GPU_QUEUE (object);

  gst_gpustream_scheduler_free (self->sched);
  stage_clear (&self->stage);
  gst_clear_buffer (&self->srtp_key);
  g_clear_pointer (&self->processor_config, gst_structure_free);
  g_free (self->calibration_file);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_rt_gpu_queue_class_init (GstRtGpuQueueClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  const GParamFlags flags_playing = G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_rt_gpu_queue_set_property;
  gobject_class->get_property = gst_rt_gpu_queue_get_property;
  gobject_class->finalize = gst_rt_gpu_queue_finalize;

  g_object_class_install_property (gobject_class, PROP_CYCLE,
      g_param_spec_uint64 ("cycle", "Cycle",
          "I: the worker launches a batch every cycle ns", GST_USECOND,
          GST_SECOND, DEFAULT_CYCLE, flags));
  g_object_class_install_property (gobject_class, PROP_CAPACITY,
      g_param_spec_uint64 ("capacity", "Capacity",
          "B_I: the total max-rate, in bytes/s, the processor keeps under one "
          "cycle per batch (0 = no rate condition; see the calibrate action)",
          0, G_MAXUINT64, DEFAULT_CAPACITY, flags_playing));
  g_object_class_install_property (gobject_class, PROP_MU,
      g_param_spec_uint64 ("mu", "Pre-processing time",
          "mu: collection time of one packet in ns, in the deadline condition "
          "d > 3 x cycle + mu", 0, GST_SECOND, DEFAULT_MU, flags));
  g_object_class_install_property (gobject_class, PROP_PIPELINES,
      g_param_spec_uint ("pipelines", "Pipelines",
          "N: collector/forwarder pipelines the streams are spread over "
          "(one forwarder thread each)", 1, 64, DEFAULT_PIPELINES, flags));
  g_object_class_install_property (gobject_class, PROP_ADMISSION,
      g_param_spec_boolean ("admission", "Admission",
          "Refuse streams that would break the admission condition "
          "(capacity >= total max-rate, deadline > 3 x cycle + mu), which "
          "keeps every admitted packet within its deadline (off: admit all, "
          "and deadlines may be missed)", DEFAULT_ADMISSION, flags_playing));
  g_object_class_install_property (gobject_class, PROP_PROCESSOR,
      g_param_spec_enum ("processor", "Processor",
          "The stage run on every batch", GST_TYPE_RT_GPU_PROCESSOR,
          DEFAULT_PROCESSOR, flags));
  g_object_class_install_property (gobject_class, PROP_BUSY_NS_PER_KB,
      g_param_spec_uint ("busy-ns-per-kb", "Busy ns per KiB",
          "Cost of processor=busy: CPU time per KiB of packet", 0,
          G_MAXINT, DEFAULT_BUSY_NS_PER_KB, flags_playing));
  g_object_class_install_property (gobject_class,
      PROP_DEFAULT_MAX_PACKET_SIZE, g_param_spec_uint ("default-max-packet-size",
          "Default max packet size", "w of a stream whose request gives none",
          1, G_MAXUINT32, DEFAULT_MAX_PACKET_SIZE, flags_playing));
  g_object_class_install_property (gobject_class, PROP_DEFAULT_DEADLINE,
      g_param_spec_uint64 ("default-deadline", "Default deadline",
          "d of a stream whose request gives none, ns", 1, G_MAXUINT64,
          DEFAULT_DEADLINE, flags_playing));
  g_object_class_install_property (gobject_class, PROP_DEFAULT_MAX_RATE,
      g_param_spec_uint64 ("default-max-rate", "Default max rate",
          "v of a stream whose request gives none, bytes/s", 1, G_MAXUINT64,
          DEFAULT_MAX_RATE, flags_playing));
  g_object_class_install_property (gobject_class, PROP_POLICE_BURST,
      g_param_spec_uint64 ("police-burst", "Police burst",
          "Depth of each stream's token bucket as time at max-rate, ns "
          "(0 = one cycle); one packet more is always allowed", 0, GST_SECOND,
          DEFAULT_POLICE_BURST, flags));
  g_object_class_install_property (gobject_class, PROP_CALIBRATION_FILE,
      g_param_spec_string ("calibration-file", "Calibration file",
          "Key file saved by the calibrate action: cycle and capacity are "
          "read from it at NULL->READY", NULL, flags));
  g_object_class_install_property (gobject_class, PROP_RT_PRIORITY,
      g_param_spec_int ("rt-priority", "Real-time priority",
          "SCHED_FIFO priority of the worker and forwarder threads (0 = "
          "normal scheduling; needs CAP_SYS_NICE, else a warning in the log)",
          0, 99, DEFAULT_RT_PRIORITY, flags));
  g_object_class_install_property (gobject_class, PROP_KEEP_DEADLINES,
      g_param_spec_boolean ("keep-deadlines", "Keep deadlines",
          "Shed load rather than miss deadlines: drop packets that can no "
          "longer leave in time (drops-late, the most recently admitted "
          "streams' first); with a capacity, lower it "
          "while the worker overruns its cycles, shedding the most recently "
          "admitted streams (rtgpuqueue-admission messages); with admission "
          "off, take at most capacity x cycle bytes a cycle (drops-capped)",
          DEFAULT_KEEP_DEADLINES, flags));
  g_object_class_install_property (gobject_class, PROP_SRTP_KEY,
      g_param_spec_boxed ("srtp-key", "SRTP key",
          "Deprecated: use processor-config. processor=srtp-protect: master "
          "key || salt (30 bytes for aes-128-icm, 46 for aes-256-icm, 28 for "
          "aes-128-gcm, 44 for aes-256-gcm, 30 for null), as gpusrtpenc's "
          "key; used when processor-config is not set",
          GST_TYPE_BUFFER, flags | G_PARAM_DEPRECATED));
  g_object_class_install_property (gobject_class, PROP_SRTP_CIPHER,
      g_param_spec_enum ("srtp-cipher", "SRTP cipher",
          "Deprecated: use processor-config. processor=srtp-protect: the "
          "cipher of RTP and RTCP", GST_TYPE_GPU_SRTP_CIPHER_TYPE,
          DEFAULT_SRTP_CIPHER, flags | G_PARAM_DEPRECATED));
  g_object_class_install_property (gobject_class, PROP_SRTP_AUTH,
      g_param_spec_enum ("srtp-auth", "SRTP authentication",
          "Deprecated: use processor-config. processor=srtp-protect: the "
          "authentication of RTP and RTCP (ignored with the GCM ciphers)",
          GST_TYPE_GPU_SRTP_AUTH_TYPE, DEFAULT_SRTP_AUTH,
          flags | G_PARAM_DEPRECATED));
  g_object_class_install_property (gobject_class, PROP_PROCESSOR_CONFIG,
      g_param_spec_boxed ("processor-config", "Processor configuration",
          "The configuration of a processor of the shared library, taken at "
          "start: processor=srtp-protect reads srtp-key (buffer: master key "
          "|| salt), srtp-cipher and srtp-auth (nicks, as in SRTP caps), e.g. "
          "\"srtp-protect, srtp-key=(buffer)000102..1d, "
          "srtp-cipher=aes-128-icm, srtp-auth=hmac-sha1-80\" (unset: the "
          "srtp-key, srtp-cipher and srtp-auth properties); "
          "processor=nc-encode reads generation-size, block-size, redundancy "
          "or redundancy-percent, systematic and coefficients (as ncencoder's "
          "properties), e.g. \"nc-encode, generation-size=(int)16, "
          "block-size=(int)1024, redundancy=(int)4\" (unset: their defaults)",
          GST_TYPE_STRUCTURE, flags));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Totals (streams admitted/refused, cycles, late launches, worst "
          "batch time, packets, drops, deadline misses, srtp-streams, "
          "srtp-drops, srtp-gpu-batches, srtp-collected, srtp-area-full; "
          "with nc-encode nc-generations and "
          "nc-packets) and stream-stats, one structure per stream with "
          "latency-p50/p99/max in ns",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  /**
   * GstRtGpuQueue::calibrate:
   * @path: where to save the result (a key file), or NULL
   *
   * Measures B_I by a trial run of the device's worker: the processor at
   * the current cycle, on synthetic streams of packets of
   * default-max-packet-size with default-deadline (3 x cycle + mu when that
   * is not above it), at candidate loads; B_I is the highest load at which
   * the worker met every deadline, less 30 %. Sets capacity to it and
   * returns it (bytes/s; 0 on failure). A second call of the process for
   * the same device, processor settings, cycle and packet size returns the
   * figure found before without a trial (a trial disturbs what runs on the
   * device). Runs in the calling thread, for about 10 seconds.
   */
  signals[SIGNAL_CALIBRATE] = g_signal_new_class_handler ("calibrate",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_rt_gpu_queue_calibrate), NULL, NULL, NULL,
      G_TYPE_UINT64, 1, G_TYPE_STRING);

  gst_element_class_add_static_pad_template_with_gtype (element_class,
      &sink_template, GST_TYPE_RT_GPU_QUEUE_PAD);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Real-time GPU queue", "Generic/Network",
      "Batches packet streams and processes them every cycle on the GPU or "
      "the CPU, admitting only streams whose deadlines it can keep",
      "gst-gpustream developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_change_state);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_set_context);
  element_class->request_new_pad =
      GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR (gst_rt_gpu_queue_release_pad);

  gst_type_mark_as_plugin_api (GST_TYPE_RT_GPU_PROCESSOR, 0);
  gst_gpu_srtp_mark_plugin_api ();
  gst_type_mark_as_plugin_api (GST_TYPE_RT_GPU_QUEUE_PAD, 0);
  GST_DEBUG_CATEGORY_INIT (gst_rt_gpu_queue_debug, "rtgpuqueue", 0,
      "Real-time GPU queue");
}

static void
gst_rt_gpu_queue_init (GstRtGpuQueue * self)
{
  gst_gpustream_gpu_init (&self->gpu);
  self->cycle = DEFAULT_CYCLE;
  self->capacity = DEFAULT_CAPACITY;
  self->mu = DEFAULT_MU;
  self->pipelines = DEFAULT_PIPELINES;
  self->admission = DEFAULT_ADMISSION;
  self->processor = DEFAULT_PROCESSOR;
  self->busy_ns_per_kb = DEFAULT_BUSY_NS_PER_KB;
  self->default_w = DEFAULT_MAX_PACKET_SIZE;
  self->default_d = DEFAULT_DEADLINE;
  self->default_v = DEFAULT_MAX_RATE;
  self->police_burst = DEFAULT_POLICE_BURST;
  self->rt_priority = DEFAULT_RT_PRIORITY;
  self->keep_deadlines = DEFAULT_KEEP_DEADLINES;
  self->srtp_cipher = DEFAULT_SRTP_CIPHER;
  self->srtp_auth = DEFAULT_SRTP_AUTH;
  self->stage.owner = GST_ELEMENT (self);
  self->stage.busy_ns_per_kb = &self->busy_ns_per_kb;
  self->sched = gst_gpustream_scheduler_new (&rtgpu_processor, &self->stage,
      &rtgpu_callbacks);
  gst_gpustream_scheduler_set_admission_func (self->sched,
      rtgpu_admission_changed, self);
  rtgpu_apply_params (self);
}
