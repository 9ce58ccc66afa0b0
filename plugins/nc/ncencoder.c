/* ncencoder: random linear network coding of any stream (Zhao, Zhang, Wang,
 * "An Architecture Design of GPU-Accelerated VoD Streaming Servers with
 * Network Coding", 2010).
 *
 * SECTION:element-ncencoder
 * @title: ncencoder
 *
 * Cuts the incoming stream into generations of `generation-size` (m) blocks
 * of `block-size` (k) bytes and outputs one buffer per coded packet
 * (docs/elements/nc-wire-format.md): with `systematic` the m source blocks
 * first, then `redundancy` coded packets, each a random GF(2^8) combination
 * of the m blocks. A partial generation (`max-latency`, the end of the
 * stream) is coded as one of only the blocks that hold data. With input caps
 * the coded bytes are records of the input buffers and caps (`framing`), so
 * the decoder gives back the same buffers with their timestamps. The products
 * run on the process-wide coder pool of libgstgpustream, on the GPU, the CPU
 * or both (`backend`), several generations at a time; packets still leave
 * strictly in generation order. `max-bitrate` timestamps the packets of an
 * untimed input (a file) so that udpsink sends them at that rate.
 *
 * With `application/x-rlnc` on its sink pad the element is a relay: it keeps
 * the innovative packets of the current generation and sends, for each one,
 * a fresh random mix of everything it holds (recoding without decoding), plus
 * `redundancy` more mixes when the generation ends. It takes m and k from
 * its caps, or from the first packet when the caps lack them.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! x264enc ! mpegtsmux ! \
 *     ncencoder generation-size=32 block-size=1316 redundancy-percent=25 ! \
 *     rtpncpay ! udpsink host=127.0.0.1 port=5004
 * ]|
 * a relay in the middle of the path:
 * |[
 * gst-launch-1.0 udpsrc port=5004 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC,payload=96" ! \
 *     rtpncdepay ! ncencoder redundancy=4 ! rtpncpay ! udpsink host=127.0.0.1 port=5006 sync=false
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <gst/gpustream/gpsschedclient.h>
#include <gst/gpustream/gpsnc.h>
#include <rlnc/rlnc.h>

#include "ncencoder.h"
#include <gst/gpustream/gpsncframing.h>
#include <gst/gpustream/gpsncpacket.h>

GST_DEBUG_CATEGORY_STATIC (gst_nc_encoder_debug);
#define GST_CAT_DEFAULT gst_nc_encoder_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_GENERATION_SIZE 64
#define DEFAULT_BLOCK_SIZE 1024
#define DEFAULT_REDUNDANCY 8
#define DEFAULT_REDUNDANCY_PERCENT 0
#define DEFAULT_SYSTEMATIC TRUE
#define DEFAULT_COEFFICIENTS GST_NC_COEFFICIENTS_SEED
#define DEFAULT_MAX_LATENCY 0
#define DEFAULT_MAX_BITRATE 0
#define DEFAULT_FRAMING GST_NC_FRAMING_AUTO
#define DEFAULT_CYCLE 0
#define DEFAULT_MAX_RATE 0
/* scheduled mode: bytes of generations between the streaming thread and the
 * forwarder before the streaming thread waits (a blocked downstream) */
#define SCHED_MAX_BYTES (64 * 1024 * 1024)
/* generations coded concurrently by one instance; 1 when latency matters */
#define MAX_IN_FLIGHT 4

enum
{
  PROP_0,
  PROP_GENERATION_SIZE,
  PROP_BLOCK_SIZE,
  PROP_REDUNDANCY,
  PROP_REDUNDANCY_PERCENT,
  PROP_SYSTEMATIC,
  PROP_COEFFICIENTS,
  PROP_MAX_LATENCY,
  PROP_MAX_BITRATE,
  PROP_FRAMING,
  PROP_CYCLE,
  PROP_MAX_RATE,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

GType
gst_nc_coefficients_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_NC_COEFFICIENTS_SEED, "32-bit seed in the header, the receiver "
          "regenerates the vector", "seed"},
    {GST_NC_COEFFICIENTS_VECTOR, "Explicit vector of m bytes in every packet",
        "vector"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstNcCoefficients", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_nc_framing_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_NC_FRAMING_AUTO, "buffers when the input has caps, bytes when it "
          "has none (a file)", "auto"},
    {GST_NC_FRAMING_BYTES, "A byte stream: the decoder gives back the bytes",
        "bytes"},
    {GST_NC_FRAMING_BUFFERS, "Buffers: the decoder gives back each buffer "
          "with its timestamps, flags and caps", "buffers"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstNcFraming", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rlnc, "
        "generation-size = (int) [ 1, 256 ], "
        "block-size = (int) [ 1, 65536 ], "
        "coefficients = (string) { seed, vector }"));

/* ---- instance ------------------------------------------------------------ */

/* Scheduled mode: an item of the scheduler client: a generation (coded by
 * the worker's batch) or a relay packet, pushed by the forwarder in order
 * with the serialized events (gpsschedclient.h). */
typedef struct
{
  GstGpuStreamNcGeneration *gen;
  GstBuffer *buf;
} EncOut;

/* Stream state: exists between READY->PAUSED and PAUSED->READY, touched by
 * the streaming thread only. */
typedef struct
{
  /* settings snapshot */
  guint m, k, redundancy, redundancy_percent;
  gboolean systematic;
  GstNcCoefficients coef_mode;
  GstClockTime max_latency;
  guint64 max_bitrate;
  GstNcFraming framing_mode;

  gboolean relay;
  /* relay: m and k known (from the caps, else from the first packet, until
   * which caps and segment wait) */
  gboolean relay_params;
  gboolean relay_params_from_caps;
  GstEvent *relay_pending_segment;
  gboolean caps_sent;
  GstCaps *sink_caps;
  GstCaps *src_caps;            /* the last caps sent (or queued) */
  GstSegment segment;
  guint32 session;

  /* encoder */
  guint8 *fill_buf;
  gsize fill;
  guint32 next_gen;
  GstClockTime gen_pts;
  GstClockTime gen_first_rt;
  GQueue inflight;
  /* framing (gpsncframing.h): decided at the first buffer */
  gboolean framing_decided;
  gboolean framed;
  guint32 first_record;         /* of the generation being filled */
  gchar *caps_string;           /* of the input, for caps records */
  gboolean caps_record_due;
  /* max-bitrate: the PTS of the next packet of an untimed stream */
  GstClockTime paced_pts;

  /* relay: the current generation */
  gboolean have_cur;
  NcHeader cur;
  GstClockTime cur_pts;
  RlncDecoder *rank;
  guint n_kept;
  guint8 *kept_coefs;           /* n_kept x cur.m */
  guint8 *kept_payloads;        /* n_kept x k */
  guint8 *tmp_coefs;            /* m */
  GRand *rand;
  GstClockTime last_warn;
} EncState;

struct _GstNcEncoder
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  GstGpuStreamGpu gpu;

  /* settings, object lock */
  guint generation_size;
  guint block_size;
  guint redundancy;
  guint redundancy_percent;
  gboolean systematic;
  GstNcCoefficients coefficients;
  GstClockTime max_latency;
  guint64 max_bitrate;
  GstNcFraming framing;
  GstClockTime cycle;
  guint64 max_rate;

  /* scheduled mode (cycle > 0): sched lives as long as the element; the
   * rest is fixed from READY to PAUSED until PAUSED to READY */
  GstGpuStreamSchedClient *sched;
  GstGpuStreamSchedClientStream *sched_stream;
  gboolean scheduled;
  GstGpuStreamBackend sched_where;

  /* stats, object lock */
  guint64 st_generations;
  guint64 st_packets_in;
  guint64 st_bytes_in;
  guint64 st_packets_out;
  guint64 st_bytes_out;
  guint64 st_packets_bad;
  guint64 st_innovative;
  guint64 st_dependent;
  guint64 st_late;

  EncState *state;
};

#define gst_nc_encoder_parent_class parent_class
G_DEFINE_TYPE (GstNcEncoder, gst_nc_encoder, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (ncencoder, "ncencoder", GST_RANK_NONE,
    GST_TYPE_NC_ENCODER);

/* ---- the data path ------------------------------------------------------- */

static gboolean enc_push_event (GstNcEncoder * self, GstEvent * event);
static GstFlowReturn enc_push_buffer (GstNcEncoder * self, GstBuffer * buf);

static GstCaps *
make_src_caps (EncState * st, const GstCaps * sinkcaps)
{
  GstCaps *caps;
  gchar *orig = NULL;

  if (sinkcaps && gst_caps_get_size (sinkcaps) > 0) {
    const GstStructure *s = gst_caps_get_structure (sinkcaps, 0);

    /* a relay passes the original caps on; an encoder records them so the
     * decoder can restore them */
    if (st->relay)
      orig = g_strdup (gst_structure_get_string (s, "original-caps"));
    else if (!gst_caps_is_any (sinkcaps) && gst_caps_is_fixed (sinkcaps))
      orig = gst_caps_to_string (sinkcaps);
  }
  caps = gst_gpustream_nc_caps_new (st->m, st->k, st->relay ||
      st->coef_mode == GST_NC_COEFFICIENTS_VECTOR, orig);
  g_free (orig);
  return caps;
}

static void
ensure_caps (GstNcEncoder * self, EncState * st)
{
  /* a relay that does not know m and k yet waits for its first packet */
  if (st->relay && !st->relay_params)
    return;
  if (!st->caps_sent) {
    GstCaps *caps = make_src_caps (st, st->sink_caps);
    gst_caps_replace (&st->src_caps, caps);
    enc_push_event (self, gst_event_new_caps (caps));
    gst_caps_unref (caps);
    st->caps_sent = TRUE;
  }
}

/* The packets of one full (or flushed) generation (gpsnc.h), coded by the
 * pool once submitted. Takes ownership of data (zero-padded to a whole
 * block). */
static GstGpuStreamNcGeneration *
enc_gen_build (GstNcEncoder * self, EncState * st, guint8 * data,
    guint32 data_length)
{
  GstGpuStreamNcParams params = { st->m, st->k, st->redundancy,
    st->systematic, st->coef_mode == GST_NC_COEFFICIENTS_VECTOR, st->framed,
    st->session
  };
  GstGpuStreamNcGeneration *g = gst_gpustream_nc_generation_new (&params,
      st->next_gen++, data, data_length);

  g->pts = st->gen_pts;
  GST_OBJECT_LOCK (self);
  self->st_generations++;
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "generation %u: %u bytes, %u packets (%u coded)",
      g->id, data_length, g->n_packets, g->n_coded);
  return g;
}

/* max-bitrate on an untimed stream (a file): packets get the timestamps of
 * that rate, so that a synchronising sink (udpsink) sends them at it instead
 * of all at once into the receiver's socket buffer. */
static void
enc_pace (GstNcEncoder * self, EncState * st, GstBuffer * buf, gsize size)
{
  GstClockTime dur;

  if (st->max_bitrate == 0)
    return;
  dur = gst_util_uint64_scale (size * 8, GST_SECOND, st->max_bitrate);
  GST_BUFFER_PTS (buf) = st->paced_pts;
  GST_BUFFER_DURATION (buf) = dur;
  st->paced_pts += dur;
}

/* Waits for the coded part, writes the headers and pushes every packet. */
static GstFlowReturn
enc_gen_push (GstNcEncoder * self, GstGpuStreamNcGeneration * g)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint i;
  guint64 bytes = 0;

  if (!gst_gpustream_nc_generation_finish (g))
    GST_WARNING_OBJECT (self, "coder job of generation %u failed", g->id);

  for (i = 0; i < g->n_packets; i++) {
    GstBuffer *buf = g_steal_pointer (&g->packets[i]);
    gsize size = gst_buffer_get_size (buf);

    GST_BUFFER_PTS (buf) = g->pts;
    if (self->state && !GST_CLOCK_TIME_IS_VALID (g->pts))
      enc_pace (self, self->state, buf, size);
    bytes += size;
    if (ret == GST_FLOW_OK)
      ret = gst_pad_push (self->srcpad, buf);
    else
      gst_buffer_unref (buf);
  }

  GST_OBJECT_LOCK (self);
  self->st_packets_out += g->n_packets;
  self->st_bytes_out += bytes;
  GST_OBJECT_UNLOCK (self);

  gst_gpustream_nc_generation_free (g);
  return ret;
}

/* ---- scheduled mode: cycle > 0 ----
 * Everything the element sends goes through its scheduler client
 * (gpsschedclient.h), in order. The streaming thread builds each
 * generation (source packets whole, coded packets up to their payload) and
 * pushes it; every cycle the device's worker submits the coding of every
 * generation collected to the coder pool before it waits for any (on the
 * GPU the pool runs them as one launch, together with those of the other
 * scheduled elements on the device); the forwarder thread writes the
 * headers and pushes. Relay packets and serialized events take the same
 * path, so that nothing overtakes anything. */

static void
enc_out_free (gpointer data)
{
  EncOut *o = data;

  if (o->gen)
    gst_gpustream_nc_generation_free (o->gen);
  gst_clear_buffer (&o->buf);
  g_free (o);
}

typedef struct
{
  GstGpuStreamSchedItem *items;
  guint n;
} EncBatch;

/* The worker, at P_k: the coding of the batch's generations goes to the
 * pool (the GPU when the scheduler runs on one). */
static gpointer
enc_sched_submit_batch (gpointer proc_data, GstObject * cuda_context,
    guint lane, GstGpuStreamSchedItem * items, guint n)
{
  GstNcEncoder *self = proc_data;
  GstGpuStreamBackend where = cuda_context ? self->sched_where :
      GST_GPUSTREAM_BACKEND_CPU;
  EncBatch *b = g_new (EncBatch, 1);
  guint i;

  for (i = 0; i < n; i++) {
    EncOut *o = items[i].data;

    if ((items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) && o->gen)
      gst_gpustream_nc_generation_submit (o->gen, where, cuda_context);
  }
  b->items = items;
  b->n = n;
  return b;
}

/* The worker, once every batch of the cycle is submitted. */
static void
enc_sched_finish_batch (gpointer proc_data, gpointer submitted)
{
  GstNcEncoder *self = proc_data;
  EncBatch *b = submitted;
  guint i;

  for (i = 0; i < b->n; i++) {
    EncOut *o = b->items[i].data;

    if (!(b->items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) || !o->gen)
      continue;
    if (!gst_gpustream_nc_generation_wait (o->gen))
      GST_WARNING_OBJECT (self, "coder job of generation %u failed",
          o->gen->id);
  }
  g_free (b);
}

/* named for the element: its items are its own generations, not the
 * packets of the library's processors (gpsprocessor.h) */
static const GstGpuStreamProcessor enc_sched_processor = {
  "ncencoder", NULL, NULL, enc_sched_submit_batch, enc_sched_finish_batch
};

/* The forwarder thread, in push order. */
static GstFlowReturn
enc_sched_output (gpointer stream_data, gpointer data, GstEvent * event)
{
  GstNcEncoder *self = stream_data;
  EncOut *o = data;
  GstFlowReturn ret;

  if (event)
    return gst_pad_push_event (self->srcpad, event) ? GST_FLOW_OK :
        GST_FLOW_ERROR;
  ret = o->gen ? enc_gen_push (self, g_steal_pointer (&o->gen)) :
      gst_pad_push (self->srcpad, g_steal_pointer (&o->buf));
  enc_out_free (o);
  return ret;
}

static const GstGpuStreamSchedClientCallbacks enc_sched_callbacks = {
  enc_sched_output, enc_out_free
};

/* Hands o (bytes of data) to the scheduler; takes it. Returns what the
 * streaming thread returns: the forwarder's failure, or FLUSHING. */
static GstFlowReturn
enc_sched_put (GstNcEncoder * self, EncOut * o, gsize bytes)
{
  return gst_gpustream_sched_client_push (self->sched_stream, o,
      (guint32) MIN (bytes, G_MAXUINT32));
}

static gboolean
enc_push_event (GstNcEncoder * self, GstEvent * event)
{
  if (self->scheduled)
    return gst_gpustream_sched_client_push_event (self->sched_stream, event);
  return gst_pad_push_event (self->srcpad, event);
}

static GstFlowReturn
enc_push_buffer (GstNcEncoder * self, GstBuffer * buf)
{
  if (self->scheduled) {
    EncOut *o = g_new0 (EncOut, 1);

    o->buf = buf;
    return enc_sched_put (self, o, gst_buffer_get_size (buf));
  }
  return gst_pad_push (self->srcpad, buf);
}

/* Pushes finished generations from the head; blocks while more than `keep`
 * are in flight. */
static GstFlowReturn
enc_drain (GstNcEncoder * self, EncState * st, guint keep)
{
  GstFlowReturn ret = GST_FLOW_OK;
  GstGpuStreamNcGeneration *g;

  while ((g = g_queue_peek_head (&st->inflight))) {
    if (g_queue_get_length (&st->inflight) <= keep &&
        gst_gpustream_nc_generation_is_busy (g))
      break;
    g_queue_pop_head (&st->inflight);
    ret = enc_gen_push (self, g);
    if (ret != GST_FLOW_OK)
      break;
  }
  return ret;
}

static GstFlowReturn
enc_flush_generation (GstNcEncoder * self, EncState * st)
{
  gsize gsize_bytes = (gsize) st->m * st->k;
  GstGpuStreamBackend where;
  GstObject *ctx;
  guint8 *data;
  GstGpuStreamNcGeneration *g;

  if (st->fill == 0)
    return GST_FLOW_OK;

  ensure_caps (self, st);
  if (st->fill % st->k)
    memset (st->fill_buf + st->fill, 0, st->k - st->fill % st->k);
  if (st->framed)
    nc_framing_prefix_write (st->fill_buf, st->first_record, st->gen_pts);
  data = st->fill_buf;
  g = enc_gen_build (self, st, data, (guint32) st->fill);
  st->fill_buf = g_malloc (gsize_bytes);
  st->fill = 0;

  if (self->scheduled) {
    EncOut *o = g_new0 (EncOut, 1);

    o->gen = g;
    return enc_sched_put (self, o, gsize_bytes + (gsize) g->n_coded * st->k);
  }

  GST_OBJECT_LOCK (self);
  where = self->gpu.resolved;
  ctx = self->gpu.cuda_context;
  GST_OBJECT_UNLOCK (self);
  gst_gpustream_nc_generation_submit (g, where, ctx);
  g_queue_push_tail (&st->inflight, g);
  return enc_drain (self, st, st->max_latency > 0 ? 0 : MAX_IN_FLIGHT);
}

/* Starts filling a generation with the bytes of buf. */
static void
enc_gen_begin (EncState * st, GstBuffer * buf, GstClockTime rt)
{
  st->gen_pts = GST_BUFFER_PTS (buf);
  st->gen_first_rt = rt;
  if (st->framed) {
    st->fill = NC_FRAMING_PREFIX_SIZE;      /* written at the flush */
    st->first_record = NC_FRAMING_NO_RECORD;
    if (st->next_gen % NC_FRAMING_CAPS_REPEAT == 0)
      st->caps_record_due = TRUE;
  }
}

/* Appends bytes to the generations, flushing each one that fills. */
static GstFlowReturn
enc_append (GstNcEncoder * self, EncState * st, GstBuffer * buf,
    GstClockTime rt, const guint8 * data, gsize size)
{
  gsize gen_bytes = (gsize) st->m * st->k;
  GstFlowReturn ret = GST_FLOW_OK;

  while (size > 0 && ret == GST_FLOW_OK) {
    gsize n;

    if (st->fill == 0)
      enc_gen_begin (st, buf, rt);
    n = MIN (gen_bytes - st->fill, size);
    memcpy (st->fill_buf + st->fill, data, n);
    st->fill += n;
    data += n;
    size -= n;
    if (st->fill == gen_bytes)
      ret = enc_flush_generation (self, st);
  }
  return ret;
}

/* Framed: one record, header and payload, starting where the generation
 * being filled is now. */
static GstFlowReturn
enc_append_record (GstNcEncoder * self, EncState * st, GstBuffer * buf,
    GstClockTime rt, const NcRecordHeader * h, const guint8 * payload)
{
  guint8 hdr[NC_RECORD_HEADER_SIZE];
  GstFlowReturn ret;

  if (st->fill == 0)
    enc_gen_begin (st, buf, rt);
  if (st->first_record == NC_FRAMING_NO_RECORD)
    st->first_record = (guint32) st->fill;
  nc_record_header_write (hdr, h);
  ret = enc_append (self, st, buf, rt, hdr, sizeof (hdr));
  if (ret == GST_FLOW_OK)
    ret = enc_append (self, st, buf, rt, payload, h->length);
  return ret;
}

/* Framed: the caps record, then the buffer's record. */
static GstFlowReturn
enc_append_buffer_record (GstNcEncoder * self, EncState * st, GstBuffer * buf,
    GstClockTime rt, const GstMapInfo * map)
{
  NcRecordHeader h;
  GstFlowReturn ret;

  if (st->fill == 0)
    enc_gen_begin (st, buf, rt);
  if (st->caps_record_due) {
    /* input without caps: the decoder typefinds what the buffers are */
    const gchar *caps = st->caps_string ? st->caps_string :
        "application/octet-stream";
    NcRecordHeader ch = { NC_RECORD_CAPS, 0, (guint32) strlen (caps),
      GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE
    };

    st->caps_record_due = FALSE;
    ret = enc_append_record (self, st, buf, rt, &ch, (const guint8 *) caps);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  h.type = NC_RECORD_BUFFER;
  h.flags = nc_record_flags_from_buffer (buf);
  h.length = (guint32) map->size;
  h.pts = GST_BUFFER_PTS (buf);
  h.dts = GST_BUFFER_DTS (buf);
  h.duration = GST_BUFFER_DURATION (buf);
  return enc_append_record (self, st, buf, rt, &h, map->data);
}

/* Buffers when the input has caps that say what it is, bytes otherwise; a
 * generation too small for the framing prefix can only carry bytes. */
static void
enc_decide_framing (GstNcEncoder * self, EncState * st)
{
  gsize gen_bytes = (gsize) st->m * st->k;
  gboolean fits = gen_bytes > NC_FRAMING_PREFIX_SIZE + NC_RECORD_HEADER_SIZE;

  st->framing_decided = TRUE;
  if (st->framing_mode == GST_NC_FRAMING_BYTES)
    st->framed = FALSE;
  else if (st->framing_mode == GST_NC_FRAMING_BUFFERS)
    st->framed = TRUE;
  else
    st->framed = st->caps_string != NULL;
  if (st->framed && !fits) {
    GST_ELEMENT_WARNING (self, STREAM, ENCODE,
        ("generation-size x block-size = %" G_GSIZE_FORMAT " bytes is too "
            "small to carry buffer framing (at least %d); coding a byte "
            "stream", gen_bytes,
            NC_FRAMING_PREFIX_SIZE + NC_RECORD_HEADER_SIZE + 1), (NULL));
    st->framed = FALSE;
  }
  GST_INFO_OBJECT (self, "framing: %s", st->framed ? "buffers" : "bytes");
}

static GstFlowReturn
enc_chain (GstNcEncoder * self, EncState * st, GstBuffer * buf)
{
  GstFlowReturn ret = GST_FLOW_OK;
  GstClockTime rt = GST_CLOCK_TIME_NONE, rt_end;
  GstMapInfo map;

  if (GST_BUFFER_PTS_IS_VALID (buf) && st->segment.format == GST_FORMAT_TIME)
    rt = gst_segment_to_running_time (&st->segment, GST_FORMAT_TIME,
        GST_BUFFER_PTS (buf));
  if (!st->framing_decided)
    enc_decide_framing (self, st);

  /* a partial generation whose first byte is too old leaves now */
  if (st->max_latency > 0 && st->fill > 0 && GST_CLOCK_TIME_IS_VALID (rt) &&
      GST_CLOCK_TIME_IS_VALID (st->gen_first_rt) &&
      rt >= st->gen_first_rt + st->max_latency) {
    GST_DEBUG_OBJECT (self, "max-latency flush of %" G_GSIZE_FORMAT " bytes",
        st->fill);
    ret = enc_flush_generation (self, st);
    if (ret != GST_FLOW_OK)
      goto out;
  }

  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("cannot map buffer"), (NULL));
    ret = GST_FLOW_ERROR;
    goto out;
  }

  GST_OBJECT_LOCK (self);
  self->st_bytes_in += map.size;
  GST_OBJECT_UNLOCK (self);

  if (st->framed)
    ret = enc_append_buffer_record (self, st, buf, rt, &map);
  else
    ret = enc_append (self, st, buf, rt, map.data, map.size);
  gst_buffer_unmap (buf, &map);

  /* ... or once this buffer's end reaches max-latency: waiting for the next
   * buffer would hold the generation up to a buffer longer */
  rt_end = rt;
  if (GST_CLOCK_TIME_IS_VALID (rt) && GST_BUFFER_DURATION_IS_VALID (buf))
    rt_end = rt + GST_BUFFER_DURATION (buf);
  if (ret == GST_FLOW_OK && st->max_latency > 0 && st->fill > 0 &&
      GST_CLOCK_TIME_IS_VALID (rt_end) &&
      GST_CLOCK_TIME_IS_VALID (st->gen_first_rt) &&
      rt_end >= st->gen_first_rt + st->max_latency)
    ret = enc_flush_generation (self, st);

out:
  gst_buffer_unref (buf);
  return ret;
}

/* -- relay -- */

static GstFlowReturn
relay_emit (GstNcEncoder * self, EncState * st, guint count)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint m = st->cur.m, k = st->k, i, j;
  guint8 mix[NC_MAX_M];
  const guint8 *in[NC_MAX_M];
  NcHeader h = st->cur;

  if (!st->have_cur || st->n_kept == 0)
    return GST_FLOW_OK;

  h.flags = NC_FLAG_RECODED | (st->cur.flags & NC_FLAG_FRAMED);
  h.seed = 0;
  for (j = 0; j < st->n_kept; j++)
    in[j] = st->kept_payloads + (gsize) j * k;

  for (i = 0; i < count && ret == GST_FLOW_OK; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, nc_packet_size (&h), NULL);
    GstMapInfo map;
    guint8 *out_payload;

    for (j = 0; j < st->n_kept; j++)
      mix[j] = (guint8) g_rand_int_range (st->rand, 1, 256);

    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    out_payload = map.data + NC_HEADER_SIZE + m;
    rlnc_recode (k, m, st->n_kept, st->kept_coefs, in, 1, mix,
        map.data + NC_HEADER_SIZE, &out_payload);
    nc_packet_write (map.data, &h, map.data + NC_HEADER_SIZE, out_payload);
    gst_buffer_unmap (buf, &map);

    GST_BUFFER_PTS (buf) = st->cur_pts;
    GST_OBJECT_LOCK (self);
    self->st_packets_out++;
    self->st_bytes_out += map.size;
    GST_OBJECT_UNLOCK (self);
    ret = enc_push_buffer (self, buf);
  }
  return ret;
}

static GstFlowReturn
relay_end_generation (GstNcEncoder * self, EncState * st)
{
  GstFlowReturn ret;

  /* a partial generation gets redundancy in proportion to its blocks */
  ret = relay_emit (self, st, st->have_cur && st->cur.m < st->m ?
      (st->redundancy * st->cur.m + st->m - 1) / st->m : st->redundancy);
  st->have_cur = FALSE;
  st->n_kept = 0;
  return ret;
}

static void
relay_warn_bad (GstNcEncoder * self, EncState * st, NcParseResult r)
{
  GstClockTime now = g_get_monotonic_time () * GST_USECOND;

  /* at most one warning a second: a flood of junk must not flood the log */
  if (!GST_CLOCK_TIME_IS_VALID (st->last_warn) || now - st->last_warn > GST_SECOND) {
    GST_WARNING_OBJECT (self, "dropping bad packet: %s",
        nc_parse_result_to_string (r));
    st->last_warn = now;
  }
}

/* Sizes the relay for generations of up to m blocks of k bytes. */
static void
relay_setup (GstNcEncoder * self, EncState * st, guint m, guint k)
{
  if (st->relay_params && m == st->m && k == st->k)
    return;
  g_clear_pointer (&st->rank, rlnc_decoder_free);
  g_free (st->kept_coefs);
  g_free (st->kept_payloads);
  g_free (st->tmp_coefs);
  st->m = m;
  st->k = k;
  /* a percentage is of the stream's m, which only the caps or the packets
   * tell */
  if (st->redundancy_percent > 0)
    st->redundancy = gst_gpustream_nc_redundancy_from_percent (m,
        st->redundancy_percent);
  st->kept_coefs = g_malloc ((gsize) m * m);
  st->kept_payloads = g_malloc ((gsize) m * k);
  st->tmp_coefs = g_malloc (m);
  st->have_cur = FALSE;
  st->n_kept = 0;
  st->relay_params = TRUE;
  GST_INFO_OBJECT (self, "relay: generations of up to m=%u blocks of k=%u",
      m, k);
}

/* Whether a parsed packet belongs to the relayed stream. Without m and k in
 * the caps (a depayloader that had no sprop-* parameters) the first packet
 * tells them, and the caps and segment held until then go out; a partial
 * generation has fewer blocks than the stream's m, and a larger m seen later
 * (the stream began with a partial generation) widens the relay. */
static gboolean
relay_params_fit (GstNcEncoder * self, EncState * st, const NcHeader * h)
{
  if (st->relay_params && h->block_size != st->k)
    return FALSE;
  if (st->relay_params && h->m <= st->m)
    return TRUE;
  if (st->relay_params_from_caps)
    return FALSE;
  if (st->have_cur && st->relay_params) {
    /* widening drops what is held of the current generation: end it */
    relay_end_generation (self, st);
  }
  relay_setup (self, st, h->m, h->block_size);
  st->caps_sent = FALSE;
  ensure_caps (self, st);
  if (st->relay_pending_segment)
    enc_push_event (self, g_steal_pointer (&st->relay_pending_segment));
  return TRUE;
}

static GstFlowReturn
relay_chain (GstNcEncoder * self, EncState * st, GstBuffer * buf)
{
  GstFlowReturn ret = GST_FLOW_OK;
  const guint8 *coefs, *payload;
  NcParseResult r;
  RlncAddResult add;
  GstMapInfo map;
  NcHeader h;

  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }

  GST_OBJECT_LOCK (self);
  self->st_packets_in++;
  self->st_bytes_in += map.size;
  GST_OBJECT_UNLOCK (self);

  r = nc_packet_parse (map.data, map.size, &h, &coefs, &payload);
  if (r == NC_PARSE_OK && !relay_params_fit (self, st, &h))
    r = NC_PARSE_BAD_FIELD;
  if (r != NC_PARSE_OK) {
    relay_warn_bad (self, st, r);
    GST_OBJECT_LOCK (self);
    self->st_packets_bad++;
    GST_OBJECT_UNLOCK (self);
    goto done;
  }

  if (st->have_cur) {
    gint32 diff = (gint32) (h.generation - st->cur.generation);
    if (diff < 0) {
      GST_OBJECT_LOCK (self);
      self->st_late++;
      GST_OBJECT_UNLOCK (self);
      goto done;
    }
    if (diff > 0) {
      ret = relay_end_generation (self, st);
      if (ret != GST_FLOW_OK)
        goto done;
    }
  }
  if (!st->have_cur) {
    st->have_cur = TRUE;
    st->cur = h;
    st->cur_pts = GST_BUFFER_PTS (buf);
    if (st->rank == NULL || rlnc_decoder_m (st->rank) != h.m) {
      g_clear_pointer (&st->rank, rlnc_decoder_free);
      st->rank = rlnc_decoder_new (h.m, st->k);
    } else {
      rlnc_decoder_reset (st->rank);
    }
    GST_OBJECT_LOCK (self);
    self->st_generations++;
    GST_OBJECT_UNLOCK (self);
  }

  if (h.m != st->cur.m) {
    /* every packet of a generation has that generation's m */
    relay_warn_bad (self, st, NC_PARSE_BAD_FIELD);
    GST_OBJECT_LOCK (self);
    self->st_packets_bad++;
    GST_OBJECT_UNLOCK (self);
    goto done;
  }
  nc_packet_coefficients (&h, coefs, st->tmp_coefs);
  add = rlnc_decoder_add (st->rank, st->tmp_coefs, payload);
  if (add == RLNC_ADD_INNOVATIVE) {
    memcpy (st->kept_coefs + (gsize) st->n_kept * h.m, st->tmp_coefs, h.m);
    memcpy (st->kept_payloads + (gsize) st->n_kept * st->k, payload, st->k);
    st->n_kept++;
    GST_OBJECT_LOCK (self);
    self->st_innovative++;
    GST_OBJECT_UNLOCK (self);
    ret = relay_emit (self, st, 1);
  } else {
    GST_OBJECT_LOCK (self);
    self->st_dependent++;
    GST_OBJECT_UNLOCK (self);
  }

done:
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (buf);
  return ret;
}

static GstFlowReturn
gst_nc_encoder_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstNcEncoder *self = GST_NC_ENCODER (parent);
  EncState *st = self->state;

  if (!st) {
    gst_buffer_unref (buf);
    return GST_FLOW_FLUSHING;
  }
  ensure_caps (self, st);
  /* what failed on the GPU among the generations before is said here */
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  if (st->relay)
    return relay_chain (self, st, buf);
  return enc_chain (self, st, buf);
}

/* Drops everything in flight (flush): waits for the jobs, since the pool
 * writes into our memory. */
static void
enc_discard (EncState * st)
{
  GstGpuStreamNcGeneration *g;

  while ((g = g_queue_pop_head (&st->inflight)))
    gst_gpustream_nc_generation_free (g);
  st->fill = 0;
  st->have_cur = FALSE;
  st->n_kept = 0;
  if (st->rank)
    rlnc_decoder_reset (st->rank);
}

static gboolean
enc_set_sink_caps (GstNcEncoder * self, EncState * st, GstCaps * caps)
{
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  GstCaps *srccaps;
  gboolean ret;

  gst_caps_replace (&st->sink_caps, caps);
  st->relay = gst_structure_has_name (s, "application/x-rlnc");
  if (st->relay) {
    gint m = 0, k = 0;

    gboolean have_m = gst_structure_get_int (s, "generation-size", &m);
    gboolean have_k = gst_structure_get_int (s, "block-size", &k);

    if (!have_m && !have_k) {
      /* from the first packet (relay_params_fit) */
      GST_INFO_OBJECT (self, "relay: m and k not in the caps, taking them "
          "from the first packet");
      st->relay_params_from_caps = FALSE;
      return TRUE;
    }
    if (!have_m || !have_k || m < 1 || m > NC_MAX_M || k < 1 || k > NC_MAX_K) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("relay caps have generation-size %d and block-size %d: both or "
              "neither are needed, within 1..%d and 1..%d", m, k, NC_MAX_M,
              NC_MAX_K), (NULL));
      return FALSE;
    }
    relay_setup (self, st, m, k);
    st->relay_params_from_caps = TRUE;
  } else if (!gst_caps_is_any (caps) && gst_caps_is_fixed (caps) &&
      !gst_structure_has_name (s, "application/octet-stream")) {
    gchar *str = gst_caps_to_string (caps);

    /* framed streams carry these in a caps record */
    if (g_strcmp0 (str, st->caps_string) != 0) {
      g_free (st->caps_string);
      st->caps_string = str;
      st->caps_record_due = TRUE;
    } else {
      g_free (str);
    }
  }

  srccaps = make_src_caps (st, caps);
  gst_caps_replace (&st->src_caps, srccaps);
  ret = enc_push_event (self, gst_event_new_caps (srccaps));
  gst_caps_unref (srccaps);
  st->caps_sent = TRUE;
  return ret;
}

static GstFlowReturn
enc_finish (GstNcEncoder * self, EncState * st)
{
  GstFlowReturn ret;

  if (st->relay)
    return relay_end_generation (self, st);
  /* scheduled: the generation goes in ahead of the EOS that follows it */
  ret = enc_flush_generation (self, st);
  if (ret == GST_FLOW_OK)
    ret = enc_drain (self, st, 0);
  return ret;
}

/* Scheduled: the flush dropped whatever was queued, stream-start and caps
 * included; the source pad needs them again before the next packet. */
static void
enc_resend_sticky (GstNcEncoder * self, EncState * st)
{
  GstEvent *want = gst_pad_get_sticky_event (self->sinkpad,
      GST_EVENT_STREAM_START, 0);
  GstEvent *have = gst_pad_get_sticky_event (self->srcpad,
      GST_EVENT_STREAM_START, 0);
  GstCaps *caps = gst_pad_get_current_caps (self->srcpad);

  if (want && want != have)
    enc_push_event (self, gst_event_ref (want));
  if (st->src_caps && (!caps || !gst_caps_is_equal (caps, st->src_caps)))
    enc_push_event (self, gst_event_new_caps (st->src_caps));
  gst_clear_event (&want);
  gst_clear_event (&have);
  gst_clear_caps (&caps);
}

static gboolean
gst_nc_encoder_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstNcEncoder *self = GST_NC_ENCODER (parent);
  EncState *st = self->state;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gboolean ret = FALSE;

      gst_event_parse_caps (event, &caps);
      if (st)
        ret = enc_set_sink_caps (self, st, caps);
      gst_event_unref (event);
      return ret;
    }
    case GST_EVENT_SEGMENT:
      if (st && st->relay && !st->relay_params) {
        /* after the caps, which wait for the first packet */
        gst_event_copy_segment (event, &st->segment);
        gst_event_replace (&st->relay_pending_segment, event);
        gst_event_unref (event);
        return TRUE;
      }
      if (st) {
        gst_event_copy_segment (event, &st->segment);
        /* caps must precede the segment, even when upstream sent none */
        ensure_caps (self, st);
        if (st->segment.format != GST_FORMAT_TIME) {
          /* packets are timed (RTP needs it): bytes in, a TIME segment out */
          GstSegment seg;
          GstEvent *time_ev;

          gst_segment_init (&seg, GST_FORMAT_TIME);
          time_ev = gst_event_new_segment (&seg);
          gst_event_set_seqnum (time_ev, gst_event_get_seqnum (event));
          gst_event_unref (event);
          return enc_push_event (self, time_ev);
        }
      }
      break;
    case GST_EVENT_EOS:
      /* everything buffered leaves before EOS, partial generation included */
      if (st)
        enc_finish (self, st);
      gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
      break;
    case GST_EVENT_FLUSH_START:
      /* a streaming thread waiting in enc_sched_put gives up */
      if (self->scheduled)
        gst_gpustream_sched_client_flush_start (self->sched_stream);
      break;
    case GST_EVENT_FLUSH_STOP:{
      gboolean ret;

      if (self->scheduled)
        gst_gpustream_sched_client_flush_stop (self->sched_stream);
      if (st) {
        enc_discard (st);
        gst_segment_init (&st->segment, GST_FORMAT_UNDEFINED);
      }
      ret = gst_pad_event_default (pad, parent, event);
      if (self->scheduled && st)
        enc_resend_sticky (self, st);
      return ret;
    }
    default:
      break;
  }
  /* scheduled: serialized events queue behind the packets before them */
  if (self->scheduled && GST_EVENT_IS_SERIALIZED (event) &&
      GST_EVENT_TYPE (event) != GST_EVENT_FLUSH_STOP)
    return enc_push_event (self, event);
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
gst_nc_encoder_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstNcEncoder *self = GST_NC_ENCODER (parent);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && pad == self->srcpad) {
    GstClockTime held;

    /* what the element holds: a partial generation up to max-latency, and
     * in scheduled mode 3 cycles (a generation leaves within 3 cycles of
     * being complete when a cycle's batch takes less than a cycle) */
    GST_OBJECT_LOCK (self);
    held = self->max_latency;
    GST_OBJECT_UNLOCK (self);
    return gst_gpustream_sched_client_query_latency (self->sched, pad, parent,
        query, held);
  }
  return gst_pad_query_default (pad, parent, query);
}

/* READY to PAUSED: an explicit framing=buffers needs a generation that holds
 * the framing prefix and one record header with a byte (49 bytes); auto falls
 * back to bytes at the first buffer, with a warning. */
static gboolean
enc_check_framing (GstNcEncoder * self)
{
  gsize gen_bytes, least = NC_FRAMING_PREFIX_SIZE + NC_RECORD_HEADER_SIZE + 1;
  GstNcFraming framing;

  GST_OBJECT_LOCK (self);
  gen_bytes = (gsize) self->generation_size * self->block_size;
  framing = self->framing;
  GST_OBJECT_UNLOCK (self);
  if (framing != GST_NC_FRAMING_BUFFERS || gen_bytes >= least)
    return TRUE;
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("framing=buffers needs generation-size x block-size of at least %"
          G_GSIZE_FORMAT " bytes, it is %" G_GSIZE_FORMAT, least, gen_bytes),
      ("raise generation-size or block-size, or use framing=bytes"));
  return FALSE;
}

/* READY to PAUSED: with cycle > 0, one stream of the element's scheduler
 * client on the device, counted by the device's admission at max-rate (or
 * max-bitrate / 8); never policed. */
static gboolean
enc_sched_start (GstNcEncoder * self)
{
  GstClockTime cycle;
  GstObject *ctx;
  GError *err = NULL;
  guint64 rate;
  const gchar *origin;

  GST_OBJECT_LOCK (self);
  cycle = self->cycle;
  rate = self->max_rate ? self->max_rate : self->max_bitrate / 8;
  origin = self->max_rate ? "max-rate" : "max-bitrate / 8";
  self->sched_where = self->gpu.resolved;
  ctx = self->gpu.cuda_context ? gst_object_ref (self->gpu.cuda_context) :
      NULL;
  GST_OBJECT_UNLOCK (self);
  self->scheduled = FALSE;
  gst_gpustream_sched_client_set_rate (self->sched, rate, origin);
  if (!gst_gpustream_sched_client_start (self->sched, cycle, 1,
          self->sched_where, ctx)) {
    gst_clear_object (&ctx);
    return FALSE;
  }
  gst_clear_object (&ctx);
  if (cycle == 0)
    return TRUE;
  self->sched_stream = gst_gpustream_sched_client_add_stream (self->sched,
      G_MAXUINT32, self, NULL, &err);
  if (!self->sched_stream) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("could not start the batching scheduler: %s", err->message), (NULL));
    g_clear_error (&err);
    gst_gpustream_sched_client_stop (self->sched);
    return FALSE;
  }
  /* a blocked downstream holds at most that many bytes of generations */
  gst_gpustream_sched_client_stream_set_limits (self->sched_stream, 0,
      SCHED_MAX_BYTES);
  self->scheduled = TRUE;
  return TRUE;
}

/* PAUSED to READY, the pads inactive: what is in flight is dropped. */
static void
enc_sched_stop (GstNcEncoder * self)
{
  if (!self->scheduled)
    return;
  self->scheduled = FALSE;
  /* joins the forwarder: nothing of ours runs after this */
  gst_gpustream_sched_client_stop (self->sched);
  gst_gpustream_sched_client_remove_stream (self->sched,
      g_steal_pointer (&self->sched_stream));
}

static EncState *
enc_state_new (GstNcEncoder * self)
{
  EncState *st = g_new0 (EncState, 1);

  GST_OBJECT_LOCK (self);
  st->m = self->generation_size;
  st->k = self->block_size;
  st->redundancy = self->redundancy_percent > 0 ?
      gst_gpustream_nc_redundancy_from_percent (self->generation_size,
      self->redundancy_percent) : self->redundancy;
  st->redundancy_percent = self->redundancy_percent;
  st->systematic = self->systematic;
  st->coef_mode = self->coefficients;
  st->max_latency = self->max_latency;
  st->max_bitrate = self->max_bitrate;
  st->framing_mode = self->framing;
  self->st_generations = self->st_packets_in = self->st_bytes_in = 0;
  self->st_packets_out = self->st_bytes_out = self->st_packets_bad = 0;
  self->st_innovative = self->st_dependent = self->st_late = 0;
  GST_OBJECT_UNLOCK (self);

  gst_segment_init (&st->segment, GST_FORMAT_UNDEFINED);
  st->session = g_random_int ();
  st->next_gen = 0;
  st->fill_buf = g_malloc ((gsize) st->m * st->k);
  st->first_record = NC_FRAMING_NO_RECORD;
  st->gen_first_rt = GST_CLOCK_TIME_NONE;
  st->last_warn = GST_CLOCK_TIME_NONE;
  st->rand = g_rand_new ();
  g_queue_init (&st->inflight);
  return st;
}

static void
enc_state_free (EncState * st)
{
  enc_discard (st);
  g_clear_pointer (&st->rank, rlnc_decoder_free);
  g_free (st->kept_coefs);
  g_free (st->kept_payloads);
  g_free (st->tmp_coefs);
  g_free (st->fill_buf);
  gst_clear_caps (&st->src_caps);
  gst_clear_caps (&st->sink_caps);
  gst_clear_event (&st->relay_pending_segment);
  g_free (st->caps_string);
  g_rand_free (st->rand);
  g_free (st);
}

static GstStructure *
gst_nc_encoder_get_stats (GstNcEncoder * self)
{
  GstStructure *s;

  GST_OBJECT_LOCK (self);
  s = gst_structure_new ("application/x-ncencoder-stats",
      "generations", G_TYPE_UINT64, self->st_generations,
      "packets-in", G_TYPE_UINT64, self->st_packets_in,
      "bytes-in", G_TYPE_UINT64, self->st_bytes_in,
      "packets-out", G_TYPE_UINT64, self->st_packets_out,
      "bytes-out", G_TYPE_UINT64, self->st_bytes_out,
      "packets-bad", G_TYPE_UINT64, self->st_packets_bad,
      "packets-innovative", G_TYPE_UINT64, self->st_innovative,
      "packets-dependent", G_TYPE_UINT64, self->st_dependent,
      "packets-late", G_TYPE_UINT64, self->st_late,
      "backend", G_TYPE_STRING, gst_gpustream_backend_nick (self->gpu.resolved),
      NULL);
  GST_OBJECT_UNLOCK (self);
  gst_gpustream_sched_client_get_stats (self->sched, s);
  return s;
}

/* ---- GObject / GstElement boilerplate ------------------------------------ */

static void
gst_nc_encoder_set_context (GstElement * element, GstContext * context)
{
  GstNcEncoder *self = GST_NC_ENCODER (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstStateChangeReturn
gst_nc_encoder_change_state (GstElement * element, GstStateChange transition)
{
  GstNcEncoder *self = GST_NC_ENCODER (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
      if (!gst_gpustream_gpu_start (element, &self->gpu))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      if (!enc_check_framing (self) || !enc_sched_start (self))
        return GST_STATE_CHANGE_FAILURE;
      self->state = enc_state_new (self);
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* a streaming thread waiting for the scheduler lets the pads go */
      gst_gpustream_sched_client_unblock (self->sched);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE &&
      transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    transition = GST_STATE_CHANGE_PAUSED_TO_READY;      /* undo it */

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* the pads are deactivated: no streaming thread touches the state */
      enc_sched_stop (self);
      g_clear_pointer (&self->state, enc_state_free);
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
gst_nc_encoder_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstNcEncoder *self = GST_NC_ENCODER (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_GENERATION_SIZE:
      self->generation_size = g_value_get_uint (value);
      break;
    case PROP_BLOCK_SIZE:
      self->block_size = g_value_get_uint (value);
      break;
    case PROP_REDUNDANCY:
      self->redundancy = g_value_get_uint (value);
      break;
    case PROP_REDUNDANCY_PERCENT:
      self->redundancy_percent = g_value_get_uint (value);
      break;
    case PROP_SYSTEMATIC:
      self->systematic = g_value_get_boolean (value);
      break;
    case PROP_COEFFICIENTS:
      self->coefficients = g_value_get_enum (value);
      break;
    case PROP_MAX_LATENCY:
      self->max_latency = g_value_get_uint64 (value);
      break;
    case PROP_MAX_BITRATE:
      self->max_bitrate = g_value_get_uint64 (value);
      break;
    case PROP_FRAMING:
      self->framing = g_value_get_enum (value);
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
gst_nc_encoder_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstNcEncoder *self = GST_NC_ENCODER (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_nc_encoder_get_stats (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_GENERATION_SIZE:
      g_value_set_uint (value, self->generation_size);
      break;
    case PROP_BLOCK_SIZE:
      g_value_set_uint (value, self->block_size);
      break;
    case PROP_REDUNDANCY:
      g_value_set_uint (value, self->redundancy);
      break;
    case PROP_REDUNDANCY_PERCENT:
      g_value_set_uint (value, self->redundancy_percent);
      break;
    case PROP_SYSTEMATIC:
      g_value_set_boolean (value, self->systematic);
      break;
    case PROP_COEFFICIENTS:
      g_value_set_enum (value, self->coefficients);
      break;
    case PROP_MAX_LATENCY:
      g_value_set_uint64 (value, self->max_latency);
      break;
    case PROP_MAX_BITRATE:
      g_value_set_uint64 (value, self->max_bitrate);
      break;
    case PROP_FRAMING:
      g_value_set_enum (value, self->framing);
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
gst_nc_encoder_finalize (GObject * object)
{
  GstNcEncoder *self = GST_NC_ENCODER (object);

  g_clear_pointer (&self->state, enc_state_free);
  gst_gpustream_sched_client_free (self->sched);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_nc_encoder_class_init (GstNcEncoderClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_nc_encoder_set_property;
  gobject_class->get_property = gst_nc_encoder_get_property;
  gobject_class->finalize = gst_nc_encoder_finalize;

  g_object_class_install_property (gobject_class, PROP_GENERATION_SIZE,
      g_param_spec_uint ("generation-size", "Generation size",
          "Source blocks per generation (m)", 1, NC_MAX_M,
          DEFAULT_GENERATION_SIZE, flags));
  g_object_class_install_property (gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_uint ("block-size", "Block size",
          "Bytes per block and coded payload (k)", 1, NC_MAX_K,
          DEFAULT_BLOCK_SIZE, flags));
  g_object_class_install_property (gobject_class, PROP_REDUNDANCY,
      g_param_spec_uint ("redundancy", "Redundancy",
          "Coded packets sent beyond m per generation (a relay: extra mixes "
          "sent when a generation ends)", 0, 65535, DEFAULT_REDUNDANCY, flags));
  g_object_class_install_property (gobject_class, PROP_REDUNDANCY_PERCENT,
      g_param_spec_uint ("redundancy-percent", "Redundancy percent",
          "Redundancy as a percentage of m, rounded up; overrides redundancy "
          "when > 0", 0, 1000, DEFAULT_REDUNDANCY_PERCENT, flags));
  g_object_class_install_property (gobject_class, PROP_SYSTEMATIC,
      g_param_spec_boolean ("systematic", "Systematic",
          "Send the m source blocks uncoded first, then the redundancy coded "
          "packets (FALSE: m + redundancy coded packets)", DEFAULT_SYSTEMATIC,
          flags));
  g_object_class_install_property (gobject_class, PROP_COEFFICIENTS,
      g_param_spec_enum ("coefficients", "Coefficients",
          "How a coded packet carries its coefficient vector",
          GST_TYPE_NC_COEFFICIENTS, DEFAULT_COEFFICIENTS, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_LATENCY,
      g_param_spec_uint64 ("max-latency", "Max latency",
          "Send a partial generation once its first byte is this old in "
          "running time, in ns (0 = only full generations, and the rest at "
          "EOS); answered in the LATENCY query. Set it for a live source",
          0, G_MAXUINT64, DEFAULT_MAX_LATENCY, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_BITRATE,
      g_param_spec_uint64 ("max-bitrate", "Max bitrate",
          "For input without timestamps (a file): timestamp the packets at "
          "this rate in bit/s, headers included, so that a synchronising "
          "sink (udpsink) sends them at it (0 = no timestamps, as fast as "
          "downstream takes them)", 0, G_MAXUINT64, DEFAULT_MAX_BITRATE,
          flags));
  g_object_class_install_property (gobject_class, PROP_FRAMING,
      g_param_spec_enum ("framing", "Framing",
          "What the decoder gives back: the bytes, or each buffer with its "
          "timestamps, flags and the caps (carried in the coded data)",
          GST_TYPE_NC_FRAMING, DEFAULT_FRAMING, flags));
  g_object_class_install_property (gobject_class, PROP_CYCLE,
      g_param_spec_uint64 ("cycle", "Cycle",
          "Code through the device's real-time scheduler: every cycle ns, "
          "the generations completed in the last cycle are coded as one "
          "batch (one GPU launch) and leave within 3 cycles (0 = each "
          "generation goes to the coder pool as it completes; else >= "
          "100000)", 0, G_MAXUINT64, DEFAULT_CYCLE, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_RATE,
      g_param_spec_uint64 ("max-rate", "Max rate",
          "With cycle > 0: the most bytes per second the element codes, "
          "counted by the device's admission like an rtgpuqueue stream; "
          "start fails when it does not fit beside what the device has "
          "admitted (0 = max-bitrate / 8 when max-bitrate is set, else no "
          "rate: a warning, and an rtgpuqueue with admission on and a "
          "capacity on the same device refuses its streams meanwhile)",
          0, G_MAXUINT64, DEFAULT_MAX_RATE, flags));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: generations, packets-in, bytes-in, packets-out, "
          "bytes-out, packets-bad, packets-innovative, packets-dependent, "
          "packets-late; with cycle > 0 scheduled-batches and the wait of a "
          "generation or packet in the scheduler: latency-p99-us, "
          "latency-max-us, latency-misses (over 3 cycles)",
          GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Network coding encoder", "Codec/Encoder/Network",
      "Random linear network coding (RLNC) over GF(2^8) of a byte stream, "
      "or recoding of a coded stream, on the GPU or the CPU",
      "gst-gpustream developers");

  element_class->change_state = GST_DEBUG_FUNCPTR (gst_nc_encoder_change_state);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_nc_encoder_set_context);

  gst_type_mark_as_plugin_api (GST_TYPE_NC_COEFFICIENTS, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_NC_FRAMING, 0);
  GST_DEBUG_CATEGORY_INIT (gst_nc_encoder_debug, "ncencoder", 0,
      "Network coding encoder");
}

static void
gst_nc_encoder_init (GstNcEncoder * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_nc_encoder_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_nc_encoder_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_nc_encoder_query));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_query_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_nc_encoder_query));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  gst_gpustream_gpu_init (&self->gpu);
  self->generation_size = DEFAULT_GENERATION_SIZE;
  self->block_size = DEFAULT_BLOCK_SIZE;
  self->redundancy = DEFAULT_REDUNDANCY;
  self->redundancy_percent = DEFAULT_REDUNDANCY_PERCENT;
  self->systematic = DEFAULT_SYSTEMATIC;
  self->coefficients = DEFAULT_COEFFICIENTS;
  self->max_latency = DEFAULT_MAX_LATENCY;
  self->max_bitrate = DEFAULT_MAX_BITRATE;
  self->framing = DEFAULT_FRAMING;
  self->cycle = DEFAULT_CYCLE;
  self->max_rate = DEFAULT_MAX_RATE;
  self->sched = gst_gpustream_sched_client_new (GST_ELEMENT (self),
      &enc_sched_processor, self, &enc_sched_callbacks, NULL);
}
