/* ncencoder: random linear network coding of any byte stream (paper 000).
 *
 * SECTION:element-ncencoder
 * @title: ncencoder
 *
 * Cuts the incoming bytes into generations of `generation-size` (m) blocks of
 * `block-size` (k) bytes and outputs one buffer per coded packet
 * (ncpacket.h): with `systematic` the m source blocks first, then
 * `redundancy` coded packets, each a random GF(2^8) combination of the m
 * blocks. The products run on the process-wide coder pool of libgstgpustream,
 * on the GPU, the CPU or both (`backend`), several generations at a time;
 * packets still leave strictly in generation order.
 *
 * With `application/x-rlnc` on its sink pad the element is a relay: it keeps
 * the innovative packets of the current generation and sends, for each one,
 * a fresh random mix of everything it holds (recoding without decoding), plus
 * `redundancy` more mixes when the generation ends.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! x264enc ! mpegtsmux ! \
 *     ncencoder generation-size=32 block-size=1316 redundancy-percent=25 ! \
 *     rtpncpay ! udpsink host=127.0.0.1 port=5004
 * ]|
 * and a relay in the middle of the path:
 * |[
 * gst-launch-1.0 udpsrc port=5004 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC,sprop-generation-size=(string)32,sprop-block-size=(string)1316" ! \
 *     rtpncdepay ! ncencoder redundancy=4 ! rtpncpay ! udpsink host=127.0.0.1 port=5006
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <rlnc/rlnc.h>

#include "ncencoder.h"
#include "ncpacket.h"

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

/* One generation being coded by the pool. */
typedef struct
{
  guint32 id;
  guint8 *data;                 /* m * k source bytes, zero-padded */
  guint32 data_length;
  GstClockTime pts;
  guint n_packets;
  GstBuffer **bufs;
  guint n_coded;                /* the last n_coded of bufs are coded */
  GstMapInfo *maps;             /* of the coded buffers, until written */
  guint8 *coefs;                /* n_coded x m */
  guint32 *seeds;
  const guint8 **src;
  guint8 **out;
  GstGpuStreamCoderJob *job;
} EncGen;

/* Stream state: exists between READY->PAUSED and PAUSED->READY, touched by
 * the streaming thread only. */
typedef struct
{
  /* settings snapshot */
  guint m, k, redundancy, redundancy_percent;
  gboolean systematic;
  GstNcCoefficients coef_mode;
  GstClockTime max_latency;

  gboolean relay;
  gboolean caps_sent;
  GstSegment segment;
  guint32 session;

  /* encoder */
  guint8 *fill_buf;
  gsize fill;
  guint32 next_gen;
  GstClockTime gen_pts;
  GstClockTime gen_first_rt;
  GQueue inflight;

  /* relay: the current generation */
  gboolean have_cur;
  NcHeader cur;
  GstClockTime cur_pts;
  RlncDecoder *rank;
  guint n_kept;
  guint8 *kept_coefs;           /* m x m */
  guint8 *kept_payloads;        /* m x k */
  guint8 *tmp_coefs;
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

static guint32
mix32 (guint32 x)
{
  /* murmur3's finalizer: every input bit reaches every output bit */
  x ^= x >> 16;
  x *= 0x85ebca6bU;
  x ^= x >> 13;
  x *= 0xc2b2ae35U;
  x ^= x >> 16;
  return x;
}

static guint32
packet_seed (guint32 session, guint32 gen, guint32 idx)
{
  return mix32 (session ^ mix32 (gen * 0x9e3779b1U ^ mix32 (idx + 0x632be5abU)));
}

static GstCaps *
make_src_caps (EncState * st, const GstCaps * sinkcaps)
{
  GstCaps *caps;

  caps = gst_caps_new_simple ("application/x-rlnc",
      "generation-size", G_TYPE_INT, (gint) st->m,
      "block-size", G_TYPE_INT, (gint) st->k,
      "coefficients", G_TYPE_STRING,
      (st->relay || st->coef_mode == GST_NC_COEFFICIENTS_VECTOR) ?
      "vector" : "seed", NULL);

  if (sinkcaps && gst_caps_get_size (sinkcaps) > 0) {
    const GstStructure *s = gst_caps_get_structure (sinkcaps, 0);
    const gchar *orig = NULL;

    /* a relay passes the original caps on; an encoder records them so the
     * decoder can restore them */
    if (st->relay)
      orig = gst_structure_get_string (s, "original-caps");
    if (orig) {
      gst_caps_set_simple (caps, "original-caps", G_TYPE_STRING, orig, NULL);
    } else if (!st->relay && !gst_caps_is_any (sinkcaps)
        && gst_caps_is_fixed (sinkcaps)) {
      gchar *str = gst_caps_to_string (sinkcaps);
      gst_caps_set_simple (caps, "original-caps", G_TYPE_STRING, str, NULL);
      g_free (str);
    }
  }
  return caps;
}

static void
ensure_caps (GstNcEncoder * self, EncState * st)
{
  if (!st->caps_sent) {
    GstCaps *caps = make_src_caps (st, NULL);
    gst_pad_push_event (self->srcpad, gst_event_new_caps (caps));
    gst_caps_unref (caps);
    st->caps_sent = TRUE;
  }
}

static void
enc_gen_free (EncGen * g)
{
  guint i;

  if (g->job)
    gst_gpustream_coder_job_wait (g->job);
  for (i = 0; i < g->n_packets; i++) {
    guint c = g->n_packets - g->n_coded;
    if (i >= c && g->maps[i - c].memory)
      gst_buffer_unmap (g->bufs[i], &g->maps[i - c]);
    if (g->bufs[i])
      gst_buffer_unref (g->bufs[i]);
  }
  g_free (g->bufs);
  g_free (g->maps);
  g_free (g->coefs);
  g_free (g->seeds);
  g_free (g->src);
  g_free (g->out);
  g_free (g->data);
  g_free (g);
}

/* Builds the packets of one full (or flushed) generation and submits the
 * coded part to the pool. Takes ownership of data. */
static EncGen *
enc_gen_submit (GstNcEncoder * self, EncState * st, guint8 * data,
    guint32 data_length)
{
  EncGen *g = g_new0 (EncGen, 1);
  guint m = st->m, k = st->k, i, n_src;
  gboolean vector = st->coef_mode == GST_NC_COEFFICIENTS_VECTOR;
  NcHeader h = { NC_PACKET_VERSION, 0, m, 0, k, data_length, 0 };

  g->id = st->next_gen++;
  g->data = data;
  g->data_length = data_length;
  g->pts = st->gen_pts;
  n_src = st->systematic ? m : 0;
  g->n_coded = st->systematic ? st->redundancy : m + st->redundancy;
  g->n_packets = n_src + g->n_coded;
  g->bufs = g_new0 (GstBuffer *, g->n_packets);
  g->maps = g_new0 (GstMapInfo, MAX (g->n_coded, 1));
  h.generation = g->id;

  for (i = 0; i < n_src; i++) {
    GstMapInfo map;

    h.flags = NC_FLAG_SOURCE;
    h.seed = i;
    g->bufs[i] = gst_buffer_new_allocate (NULL, nc_packet_size (&h), NULL);
    gst_buffer_map (g->bufs[i], &map, GST_MAP_WRITE);
    nc_packet_write (map.data, &h, NULL, data + (gsize) i * k);
    gst_buffer_unmap (g->bufs[i], &map);
  }

  if (g->n_coded > 0) {
    GstGpuStreamGfProduct p;
    GstGpuStreamBackend where;
    GstObject *ctx;

    g->coefs = g_malloc ((gsize) g->n_coded * m);
    g->seeds = g_new (guint32, g->n_coded);
    g->src = g_new (const guint8 *, m);
    g->out = g_new (guint8 *, g->n_coded);
    for (i = 0; i < m; i++)
      g->src[i] = data + (gsize) i * k;

    h.flags = vector ? 0 : NC_FLAG_SEED;
    for (i = 0; i < g->n_coded; i++) {
      GstBuffer *buf;
      guint idx = n_src + i;

      g->seeds[i] = packet_seed (st->session, g->id, idx);
      rlnc_coefs_from_seed (g->seeds[i], m, g->coefs + (gsize) i * m);
      h.seed = vector ? 0 : g->seeds[i];
      buf = gst_buffer_new_allocate (NULL, nc_packet_size (&h), NULL);
      g->bufs[idx] = buf;
      gst_buffer_map (buf, &g->maps[i], GST_MAP_WRITE);
      /* the pool codes straight into the packet's payload: no copy */
      g->out[i] = g->maps[i].data + NC_HEADER_SIZE + (vector ? m : 0);
    }

    p.k = k;
    p.m = m;
    p.n = g->n_coded;
    p.coefs = g->coefs;
    p.src = g->src;
    p.out = (guint8 * const *) g->out;

    GST_OBJECT_LOCK (self);
    where = self->gpu.resolved;
    ctx = self->gpu.cuda_context;
    GST_OBJECT_UNLOCK (self);
    g->job = gst_gpustream_coder_submit (&p, where, ctx);
  }

  GST_OBJECT_LOCK (self);
  self->st_generations++;
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "generation %u: %u bytes, %u packets (%u coded)",
      g->id, data_length, g->n_packets, g->n_coded);
  return g;
}

/* Waits for the coded part, writes the headers and pushes every packet. */
static GstFlowReturn
enc_gen_push (GstNcEncoder * self, EncState * st, EncGen * g)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean vector = st->coef_mode == GST_NC_COEFFICIENTS_VECTOR;
  guint n_src = g->n_packets - g->n_coded, i;
  guint64 bytes = 0;

  if (g->job) {
    if (!gst_gpustream_coder_job_wait (g->job))
      GST_WARNING_OBJECT (self, "coder job of generation %u failed", g->id);
    g->job = NULL;
  }

  for (i = 0; i < g->n_coded; i++) {
    NcHeader h = { NC_PACKET_VERSION, vector ? 0 : NC_FLAG_SEED, st->m, g->id,
      st->k, g->data_length, vector ? 0 : g->seeds[i]
    };
    nc_packet_write (g->maps[i].data, &h,
        vector ? g->coefs + (gsize) i * st->m : NULL, g->out[i]);
    gst_buffer_unmap (g->bufs[n_src + i], &g->maps[i]);
    g->maps[i].memory = NULL;
  }

  for (i = 0; i < g->n_packets; i++) {
    GstBuffer *buf = g->bufs[i];

    g->bufs[i] = NULL;
    GST_BUFFER_PTS (buf) = g->pts;
    bytes += gst_buffer_get_size (buf);
    if (ret == GST_FLOW_OK)
      ret = gst_pad_push (self->srcpad, buf);
    else
      gst_buffer_unref (buf);
  }

  GST_OBJECT_LOCK (self);
  self->st_packets_out += g->n_packets;
  self->st_bytes_out += bytes;
  GST_OBJECT_UNLOCK (self);

  enc_gen_free (g);
  return ret;
}

/* Pushes finished generations from the head; blocks while more than `keep`
 * are in flight. */
static GstFlowReturn
enc_drain (GstNcEncoder * self, EncState * st, guint keep)
{
  GstFlowReturn ret = GST_FLOW_OK;
  EncGen *g;

  while ((g = g_queue_peek_head (&st->inflight))) {
    if (g_queue_get_length (&st->inflight) <= keep &&
        g->job && !gst_gpustream_coder_job_is_done (g->job))
      break;
    g_queue_pop_head (&st->inflight);
    ret = enc_gen_push (self, st, g);
    if (ret != GST_FLOW_OK)
      break;
  }
  return ret;
}

static GstFlowReturn
enc_flush_generation (GstNcEncoder * self, EncState * st)
{
  gsize gsize_bytes = (gsize) st->m * st->k;
  guint8 *data;
  EncGen *g;

  if (st->fill == 0)
    return GST_FLOW_OK;

  ensure_caps (self, st);
  if (st->fill < gsize_bytes)
    memset (st->fill_buf + st->fill, 0, gsize_bytes - st->fill);
  data = st->fill_buf;
  g = enc_gen_submit (self, st, data, (guint32) st->fill);
  st->fill_buf = g_malloc (gsize_bytes);
  st->fill = 0;
  g_queue_push_tail (&st->inflight, g);

  return enc_drain (self, st, st->max_latency > 0 ? 0 : MAX_IN_FLIGHT);
}

static GstFlowReturn
enc_chain (GstNcEncoder * self, EncState * st, GstBuffer * buf)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gsize gen_bytes = (gsize) st->m * st->k;
  GstClockTime rt = GST_CLOCK_TIME_NONE;
  GstMapInfo map;
  gsize off = 0;

  if (GST_BUFFER_PTS_IS_VALID (buf) && st->segment.format == GST_FORMAT_TIME)
    rt = gst_segment_to_running_time (&st->segment, GST_FORMAT_TIME,
        GST_BUFFER_PTS (buf));

  /* a partial generation whose first byte is too old leaves now, padded */
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
    GST_ELEMENT_ERROR (self, RESOURCE, READ, (NULL), ("cannot map buffer"));
    ret = GST_FLOW_ERROR;
    goto out;
  }

  GST_OBJECT_LOCK (self);
  self->st_bytes_in += map.size;
  GST_OBJECT_UNLOCK (self);

  while (off < map.size) {
    gsize n = MIN (gen_bytes - st->fill, map.size - off);

    if (st->fill == 0) {
      st->gen_pts = GST_BUFFER_PTS (buf);
      st->gen_first_rt = rt;
    }
    memcpy (st->fill_buf + st->fill, map.data + off, n);
    st->fill += n;
    off += n;
    if (st->fill == gen_bytes) {
      ret = enc_flush_generation (self, st);
      if (ret != GST_FLOW_OK)
        break;
    }
  }
  gst_buffer_unmap (buf, &map);

out:
  gst_buffer_unref (buf);
  return ret;
}

/* -- relay -- */

static GstFlowReturn
relay_emit (GstNcEncoder * self, EncState * st, guint count)
{
  GstFlowReturn ret = GST_FLOW_OK;
  guint m = st->m, k = st->k, i, j;
  guint8 mix[NC_MAX_M];
  const guint8 *in[NC_MAX_M];
  NcHeader h = st->cur;

  if (!st->have_cur || st->n_kept == 0)
    return GST_FLOW_OK;

  h.flags = NC_FLAG_RECODED;
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
    ret = gst_pad_push (self->srcpad, buf);
  }
  return ret;
}

static GstFlowReturn
relay_end_generation (GstNcEncoder * self, EncState * st)
{
  GstFlowReturn ret;

  ret = relay_emit (self, st, st->redundancy);
  st->have_cur = FALSE;
  st->n_kept = 0;
  rlnc_decoder_reset (st->rank);
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
  if (r != NC_PARSE_OK || h.m != st->m || h.block_size != st->k) {
    if (r == NC_PARSE_OK)
      r = NC_PARSE_BAD_FIELD;
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
    GST_OBJECT_LOCK (self);
    self->st_generations++;
    GST_OBJECT_UNLOCK (self);
  }

  nc_packet_coefficients (&h, coefs, st->tmp_coefs);
  add = rlnc_decoder_add (st->rank, st->tmp_coefs, payload);
  if (add == RLNC_ADD_INNOVATIVE) {
    memcpy (st->kept_coefs + (gsize) st->n_kept * st->m, st->tmp_coefs, st->m);
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
  if (st->relay)
    return relay_chain (self, st, buf);
  return enc_chain (self, st, buf);
}

/* Drops everything in flight (flush): waits for the jobs, since the pool
 * writes into our memory. */
static void
enc_discard (EncState * st)
{
  EncGen *g;

  while ((g = g_queue_pop_head (&st->inflight)))
    enc_gen_free (g);
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

  st->relay = gst_structure_has_name (s, "application/x-rlnc");
  if (st->relay) {
    gint m = 0, k = 0;

    if (!gst_structure_get_int (s, "generation-size", &m) ||
        !gst_structure_get_int (s, "block-size", &k) ||
        m < 1 || m > NC_MAX_M || k < 1 || k > NC_MAX_K) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT, (NULL),
          ("relay needs application/x-rlnc caps with generation-size and "
              "block-size, got %" GST_PTR_FORMAT, caps));
      return FALSE;
    }
    if (st->rank == NULL || (guint) m != st->m || (guint) k != st->k) {
      g_clear_pointer (&st->rank, rlnc_decoder_free);
      g_free (st->kept_coefs);
      g_free (st->kept_payloads);
      g_free (st->tmp_coefs);
      st->m = m;
      st->k = k;
      /* a percentage is of the stream's m, which only the caps tell */
      if (st->redundancy_percent > 0)
        st->redundancy = (m * st->redundancy_percent + 99) / 100;
      st->rank = rlnc_decoder_new (m, k);
      st->kept_coefs = g_malloc ((gsize) m * m);
      st->kept_payloads = g_malloc ((gsize) m * k);
      st->tmp_coefs = g_malloc (m);
      st->have_cur = FALSE;
      st->n_kept = 0;
    }
    GST_INFO_OBJECT (self, "relay mode, m=%d k=%d", m, k);
  }

  srccaps = make_src_caps (st, caps);
  ret = gst_pad_push_event (self->srcpad, gst_event_new_caps (srccaps));
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
  ret = enc_flush_generation (self, st);
  if (ret == GST_FLOW_OK)
    ret = enc_drain (self, st, 0);
  return ret;
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
          return gst_pad_push_event (self->srcpad, time_ev);
        }
      }
      break;
    case GST_EVENT_EOS:
      /* everything buffered leaves before EOS, partial generation included */
      if (st)
        enc_finish (self, st);
      break;
    case GST_EVENT_FLUSH_STOP:
      if (st) {
        enc_discard (st);
        gst_segment_init (&st->segment, GST_FORMAT_UNDEFINED);
      }
      break;
    default:
      break;
  }
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
  return gst_pad_query_default (pad, parent, query);
}

static EncState *
enc_state_new (GstNcEncoder * self)
{
  EncState *st = g_new0 (EncState, 1);

  GST_OBJECT_LOCK (self);
  st->m = self->generation_size;
  st->k = self->block_size;
  st->redundancy = self->redundancy_percent > 0 ?
      (self->generation_size * self->redundancy_percent + 99) / 100 :
      self->redundancy;
  st->redundancy_percent = self->redundancy_percent;
  st->systematic = self->systematic;
  st->coef_mode = self->coefficients;
  st->max_latency = self->max_latency;
  self->st_generations = self->st_packets_in = self->st_bytes_in = 0;
  self->st_packets_out = self->st_bytes_out = self->st_packets_bad = 0;
  self->st_innovative = self->st_dependent = self->st_late = 0;
  GST_OBJECT_UNLOCK (self);

  gst_segment_init (&st->segment, GST_FORMAT_UNDEFINED);
  st->session = g_random_int ();
  st->next_gen = 0;
  st->fill_buf = g_malloc ((gsize) st->m * st->k);
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
      self->state = enc_state_new (self);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* the pads are deactivated: no streaming thread touches the state */
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
          "Flush a partial generation, zero-padded, once its first byte is "
          "this old in running time (0 = only full generations and EOS)",
          0, G_MAXUINT64, DEFAULT_MAX_LATENCY, flags));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: generations, packets-in, bytes-in, packets-out, "
          "bytes-out, packets-bad, packets-innovative, packets-dependent, "
          "packets-late", GST_TYPE_STRUCTURE,
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
}
