/* ncdecoder: progressive decoding of an RLNC stream, buffers or bytes.
 *
 * SECTION:element-ncdecoder
 * @title: ncdecoder
 *
 * Takes the coded packets of ncencoder (one per buffer,
 * docs/elements/nc-wire-format.md), runs Gauss-Jordan elimination on each
 * generation as its packets arrive, and the moment a generation reaches full
 * rank turns its packets back into the source bytes (inverse x payloads, one
 * GF(2^8) product on the shared coder pool: GPU or CPU). Generations leave in
 * order: a byte stream as generation-sized buffers typed by typefinding, a
 * framed stream as the encoder's input buffers, timestamps and caps.
 *
 * A generation that cannot complete is declared lost, never waited for
 * forever: when more than `max-generations-in-flight` newer generations are
 * pending, when it has waited longer than `generation-timeout`, or at EOS.
 * The next buffer pushed then carries DISCONT, the loss is counted in
 * `stats` and said on the bus (an `nc-generations-lost` element message each
 * time, a warning at most once a second). At EOS the totals go out as an
 * `nc-decoder-totals` element message, with a warning when generations were
 * lost, and an EOS after which nothing at all could be decoded is an error.
 * generation-timeout is measured on the monotonic clock from the arrival
 * of the generation's first packet (for a generation of which nothing
 * arrived: of the oldest packet pending after it), so it works whatever the packets' timestamps are, and a timer enforces
 * it even when no packet arrives any more. Packets that fail to parse (CRC
 * included), carry another k than the stream, or belong to a generation
 * already output or lost are dropped and counted.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=/etc/services ! ncencoder ! ncdecoder ! \
 *     filesink location=/tmp/services.copy
 * ]|
 * receiving over RTP, and playing what arrives:
 * |[
 * gst-launch-1.0 udpsrc port=5004 buffer-size=4194304 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC,payload=96" ! \
 *     rtpncdepay ! ncdecoder ! decodebin ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>
#include <rlnc/rlnc.h>

#include <gst/base/gsttypefindhelper.h>

#include "ncdecoder.h"
#include <gst/gpustream/gpsncframing.h>
#include <gst/gpustream/gpsncpacket.h>

GST_DEBUG_CATEGORY_STATIC (gst_nc_decoder_debug);
#define GST_CAT_DEFAULT gst_nc_decoder_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_MAX_GENERATIONS_IN_FLIGHT 16
#define DEFAULT_GENERATION_TIMEOUT (2 * GST_SECOND)

enum
{
  PROP_0,
  PROP_MAX_GENERATIONS_IN_FLIGHT,
  PROP_GENERATION_TIMEOUT,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS ("application/x-rlnc"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* ---- instance ------------------------------------------------------------ */

typedef struct
{
  guint32 id;
  guint m;                      /* blocks: fewer in a partial generation */
  gboolean framed;
  RlncDecoder *dec;
  guint32 data_length;
  GstClockTime pts;
  gint64 first_arrival;         /* monotonic, us */
  GstBuffer *out;               /* decoded, waiting for earlier generations */
} DecGen;

#define RECENT 64

typedef struct
{
  guint max_in_flight;
  GstClockTime timeout;

  gboolean locked;              /* k known, and the largest m */
  gboolean m_from_caps;         /* then no generation may have more blocks */
  guint m, k;
  GHashTable *gens;             /* id -> DecGen */
  GSList *free_decoders;        /* reused, they hold m*k bytes each */
  gboolean have_next;
  guint32 next;                 /* the next generation to output */
  guint32 newest;
  gboolean output_started;
  gboolean discont;
  gboolean caps_sent;
  GstCaps *out_caps;            /* in-band, from the caps, or typefound */
  gboolean out_caps_in_band;    /* from a framed stream's caps record */
  GList *pending_events;        /* sticky events held until the caps */
  /* framed streams: records back into buffers */
  NcDeframer *deframer;
  gboolean have_ts_offset;
  GstClockTimeDiff ts_offset;   /* receiver time - sender time */
  gboolean seen_any;            /* a valid packet: first_id is set */
  guint32 first_id;             /* the first generation seen */
  gint64 last_loss_warning;     /* monotonic us */
  guint64 losses_unwarned;
  GstClockTime last_warn;
  gboolean warned_params;
  /* what became of the last generations: a packet of one already decoded is
   * redundant, of one declared lost (or older) late */
  guint32 recent_id[RECENT];
  guint8 recent_state[RECENT];  /* 0 unknown, 1 decoded, 2 lost */
} DecState;

struct _GstNcDecoder
{
  GstElement parent;

  GstPad *sinkpad;
  GstPad *srcpad;

  GstGpuStreamGpu gpu;

  /* settings, object lock */
  guint max_in_flight;
  GstClockTime timeout;

  /* stats, object lock */
  guint64 st_decoded;
  guint64 st_lost;
  guint64 st_received;
  guint64 st_innovative;
  guint64 st_redundant;
  guint64 st_dependent;
  guint64 st_bad;
  guint64 st_late;
  guint64 st_wrong;
  guint64 st_latency_sum_us;
  guint64 st_latency_max_us;
  guint64 st_buffers_out;
  guint64 st_records_bad;
  guint64 st_records_no_caps;

  DecState *state;

  /* The timeout timer: a thread that sleeps until the earliest pending
   * generation is due and then runs dec_advance under the sink pad's stream
   * lock, as a packet arriving would. timer_lock guards the fields below. */
  GThread *timer;
  GMutex timer_lock;
  GCond timer_cond;
  gint64 timer_deadline;        /* monotonic us, 0 = nothing pending */
  gboolean timer_stop;
};

#define gst_nc_decoder_parent_class parent_class
G_DEFINE_TYPE (GstNcDecoder, gst_nc_decoder, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (ncdecoder, "ncdecoder", GST_RANK_NONE,
    GST_TYPE_NC_DECODER);

/* ---- the data path ------------------------------------------------------- */

static void dec_warn_bad (GstNcDecoder * self, DecState * st,
    const gchar * what);

/* serial-number comparison: ids are u32 and wrap */
static inline gint32
gen_diff (guint32 a, guint32 b)
{
  return (gint32) (a - b);
}

/* A decoder for m blocks, reused: they hold m x k bytes each. */
static RlncDecoder *
dec_take_decoder (DecState * st, guint m)
{
  GSList *l;

  for (l = st->free_decoders; l; l = l->next) {
    RlncDecoder *d = l->data;
    if (rlnc_decoder_m (d) == (int) m) {
      st->free_decoders = g_slist_delete_link (st->free_decoders, l);
      return d;
    }
  }
  return rlnc_decoder_new (m, st->k);
}

static void
dec_gen_free (DecState * st, DecGen * g)
{
  if (g->dec) {
    /* partial generations' decoders are rarely of use again */
    if (g->m == st->m &&
        g_slist_length (st->free_decoders) < st->max_in_flight + 4) {
      rlnc_decoder_reset (g->dec);
      st->free_decoders = g_slist_prepend (st->free_decoders, g->dec);
    } else {
      rlnc_decoder_free (g->dec);
    }
  }
  gst_clear_buffer (&g->out);
  g_free (g);
}

static void
dec_remember (DecState * st, guint32 id, guint8 what)
{
  st->recent_id[id % RECENT] = id;
  st->recent_state[id % RECENT] = what;
}

static void
dec_gen_remove (DecState * st, guint32 id)
{
  DecGen *g = g_hash_table_lookup (st->gens, GUINT_TO_POINTER (id));

  if (g) {
    g_hash_table_steal (st->gens, GUINT_TO_POINTER (id));
    dec_gen_free (st, g);
  }
}

/* Pushes the output caps, then the sticky events held back for them (a
 * segment must not precede the caps). Without caps from the stream: what
 * `first` looks like (typefinding), else application/octet-stream. */
static void
ensure_src_caps (GstNcDecoder * self, DecState * st, GstBuffer * first)
{
  GList *l;

  if (st->caps_sent)
    return;
  /* bytes of no known type (a file, or input without caps) may still be a
   * type that typefinding knows */
  if (st->out_caps && first && gst_caps_is_fixed (st->out_caps) &&
      gst_structure_has_name (gst_caps_get_structure (st->out_caps, 0),
          "application/octet-stream"))
    gst_clear_caps (&st->out_caps);
  if (!st->out_caps && first) {
    GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
    GstCaps *found = gst_type_find_helper_for_buffer (GST_OBJECT (self),
        first, &prob);

    if (found && prob >= GST_TYPE_FIND_LIKELY) {
      GST_INFO_OBJECT (self, "decoded bytes look like %" GST_PTR_FORMAT,
          found);
      st->out_caps = found;
    } else {
      gst_clear_caps (&found);
    }
  }
  if (!st->out_caps)
    st->out_caps = gst_caps_new_empty_simple ("application/octet-stream");
  gst_pad_push_event (self->srcpad, gst_event_new_caps (st->out_caps));
  st->caps_sent = TRUE;

  for (l = st->pending_events; l; l = l->next)
    gst_pad_push_event (self->srcpad, l->data);
  g_list_free (st->pending_events);
  st->pending_events = NULL;
}

/* Full rank: out = inverse x kept payloads, on the pool (GPU or CPU). */
static GstBuffer *
dec_solve (GstNcDecoder * self, DecState * st, DecGen * g)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, (gsize) g->m * st->k, NULL);
  guint8 *outs[NC_MAX_M];
  GstGpuStreamGfProduct p;
  GstGpuStreamCoderJob *job;
  GstGpuStreamBackend where;
  GstObject *ctx;
  GstMapInfo map;
  guint i;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (i = 0; i < g->m; i++)
    outs[i] = map.data + (gsize) i * st->k;
  p.k = st->k;
  p.m = g->m;
  p.n = g->m;
  p.coefs = rlnc_decoder_inverse (g->dec);
  p.src = rlnc_decoder_payloads (g->dec);
  p.out = outs;

  GST_OBJECT_LOCK (self);
  where = self->gpu.resolved;
  ctx = self->gpu.cuda_context;
  GST_OBJECT_UNLOCK (self);

  job = gst_gpustream_coder_submit (&p, where, ctx);
  if (!gst_gpustream_coder_job_wait (job)) {
    /* the pool failed: the CPU solver still gives the right bytes */
    GST_WARNING_OBJECT (self, "coder job failed, solving on the CPU");
    rlnc_decoder_solve (g->dec, map.data);
  }
  gst_buffer_unmap (buf, &map);
  gst_buffer_resize (buf, 0, g->data_length);
  GST_BUFFER_PTS (buf) = g->pts;
  return buf;
}

static GstFlowReturn
dec_push_buffer (GstNcDecoder * self, DecState * st, GstBuffer * buf)
{
  if (st->discont) {
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
    st->discont = FALSE;
  }
  ensure_src_caps (self, st, buf);
  GST_OBJECT_LOCK (self);
  self->st_buffers_out++;
  GST_OBJECT_UNLOCK (self);
  return gst_pad_push (self->srcpad, buf);
}

/* A sender timestamp in the receiver's time: the offset between the two is
 * taken from the first framed generation (in one pipeline it is 0). */
static GstClockTime
dec_map_ts (DecState * st, GstClockTime ts)
{
  GstClockTimeDiff t;

  if (!GST_CLOCK_TIME_IS_VALID (ts) || !st->have_ts_offset)
    return ts;
  t = (GstClockTimeDiff) ts + st->ts_offset;
  return t < 0 ? 0 : (GstClockTime) t;
}

static void
dec_record_caps (GstNcDecoder * self, DecState * st, GstBuffer * payload)
{
  GstMapInfo map;
  GstCaps *caps = NULL;

  gst_buffer_map (payload, &map, GST_MAP_READ);
  if (g_utf8_validate ((const gchar *) map.data, map.size, NULL)) {
    gchar *str = g_strndup ((const gchar *) map.data, map.size);
    caps = gst_caps_from_string (str);
    g_free (str);
  }
  gst_buffer_unmap (payload, &map);

  if (!caps || !gst_caps_is_fixed (caps)) {
    dec_warn_bad (self, st, "caps record that is not fixed caps");
    GST_OBJECT_LOCK (self);
    self->st_records_bad++;
    GST_OBJECT_UNLOCK (self);
    gst_clear_caps (&caps);
    return;
  }
  st->out_caps_in_band = TRUE;
  if (st->out_caps && gst_caps_is_equal (caps, st->out_caps)) {
    gst_caps_unref (caps);
    return;
  }
  GST_INFO_OBJECT (self, "caps from the stream: %" GST_PTR_FORMAT, caps);
  gst_caps_take (&st->out_caps, caps);
  st->caps_sent = FALSE;
}

/* A framed generation: its records back into buffers, in order. */
static GstFlowReturn
dec_push_framed (GstNcDecoder * self, DecState * st, DecGen * g,
    GstBuffer * data)
{
  GstFlowReturn ret = GST_FLOW_OK;
  GstClockTime sender_pts;
  NcRecordHeader h;
  GstBuffer *payload;
  NcDeframeResult r;
  gboolean ok;

  ok = nc_deframer_push (st->deframer, data, &sender_pts);
  if (!ok) {
    dec_warn_bad (self, st, "framed generation with a bad prefix");
    GST_OBJECT_LOCK (self);
    self->st_records_bad++;
    GST_OBJECT_UNLOCK (self);
    nc_deframer_lost (st->deframer);
    st->discont = TRUE;
    return GST_FLOW_OK;
  }
  if (!st->have_ts_offset && GST_CLOCK_TIME_IS_VALID (sender_pts) &&
      GST_CLOCK_TIME_IS_VALID (g->pts)) {
    st->ts_offset = GST_CLOCK_DIFF (sender_pts, g->pts);
    st->have_ts_offset = TRUE;
  }

  while (ret == GST_FLOW_OK &&
      (r = nc_deframer_next (st->deframer, &h, &payload)) != NC_DEFRAME_NEED_MORE) {
    if (r == NC_DEFRAME_CORRUPT) {
      dec_warn_bad (self, st, "corrupt record header, skipping to the next "
          "record boundary");
      GST_OBJECT_LOCK (self);
      self->st_records_bad++;
      GST_OBJECT_UNLOCK (self);
      st->discont = TRUE;
      continue;
    }
    if (h.type == NC_RECORD_CAPS) {
      dec_record_caps (self, st, payload);
      gst_buffer_unref (payload);
      continue;
    }
    if (!st->out_caps) {
      /* joined late: what these bytes are comes with the next caps record */
      GST_OBJECT_LOCK (self);
      self->st_records_no_caps++;
      GST_OBJECT_UNLOCK (self);
      gst_buffer_unref (payload);
      st->discont = TRUE;
      continue;
    }
    GST_BUFFER_PTS (payload) = dec_map_ts (st, h.pts);
    GST_BUFFER_DTS (payload) = dec_map_ts (st, h.dts);
    GST_BUFFER_DURATION (payload) = h.duration;
    nc_record_flags_to_buffer (h.flags, payload);
    ret = dec_push_buffer (self, st, payload);
  }
  return ret;
}

static GstFlowReturn
dec_push (GstNcDecoder * self, DecState * st, DecGen * g)
{
  GstBuffer *buf = g->out;
  guint64 lat = (guint64) MAX (g_get_monotonic_time () - g->first_arrival, 0);

  g->out = NULL;
  st->output_started = TRUE;

  GST_OBJECT_LOCK (self);
  self->st_decoded++;
  self->st_latency_sum_us += lat;
  self->st_latency_max_us = MAX (self->st_latency_max_us, lat);
  GST_OBJECT_UNLOCK (self);

  GST_LOG_OBJECT (self, "generation %u out, %" G_GSIZE_FORMAT " bytes", g->id,
      gst_buffer_get_size (buf));
  if (g->framed)
    return dec_push_framed (self, st, g, buf);
  return dec_push_buffer (self, st, buf);
}

static void
dec_declare_lost (GstNcDecoder * self, DecState * st, guint32 count,
    const gchar * why)
{
  DecGen *g = g_hash_table_lookup (st->gens, GUINT_TO_POINTER (st->next));
  gint rank = g ? rlnc_decoder_rank (g->dec) : 0;
  guint m = g ? g->m : st->m;
  guint64 lost, decoded;
  gint64 now = g_get_monotonic_time ();

  GST_OBJECT_LOCK (self);
  self->st_lost += count;
  lost = self->st_lost;
  decoded = self->st_decoded;
  GST_OBJECT_UNLOCK (self);

  /* every loss is an element message an application can count; a warning
   * on the bus (what gst-launch prints) at most once a second */
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_structure_new ("nc-generations-lost",
              "first-generation", G_TYPE_UINT, st->next,
              "count", G_TYPE_UINT, count,
              "reason", G_TYPE_STRING, why,
              "rank", G_TYPE_INT, rank,
              "blocks", G_TYPE_UINT, m,
              "generations-lost", G_TYPE_UINT64, lost,
              "generations-decoded", G_TYPE_UINT64, decoded, NULL)));
  st->losses_unwarned += count;
  if (st->last_loss_warning == 0 || now - st->last_loss_warning >= G_USEC_PER_SEC) {
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("%" G_GUINT64_FORMAT " generation(s) of data lost, %" G_GUINT64_FORMAT
            " lost and %" G_GUINT64_FORMAT " decoded so far", st->losses_unwarned,
            lost, decoded),
        ("generation %u%s: %s, %d of %u packets needed arrived; raise the "
            "sender's redundancy or the receiver's socket buffer",
            st->next, count > 1 ? " and following" : "", why, rank, m));
    st->last_loss_warning = now;
    st->losses_unwarned = 0;
  }

  if (count == 1)
    dec_gen_remove (st, st->next);
  if (count <= RECENT) {
    guint32 i;
    for (i = 0; i < count; i++)
      dec_remember (st, st->next + i, 2);
  }
  nc_deframer_lost (st->deframer);
  st->next += count;
  st->output_started = TRUE;
  st->discont = TRUE;
}

/* The oldest pending generation, by serial order. */
static gboolean
dec_oldest_pending (DecState * st, guint32 * id, gint64 * arrival)
{
  GHashTableIter it;
  gpointer key, value;
  gboolean found = FALSE;

  g_hash_table_iter_init (&it, st->gens);
  while (g_hash_table_iter_next (&it, &key, &value)) {
    DecGen *g = value;
    if (!found || gen_diff (g->id, *id) < 0) {
      *id = g->id;
      found = TRUE;
    }
    if (arrival && (*arrival == 0 || g->first_arrival < *arrival))
      *arrival = g->first_arrival;
  }
  return found;
}

static inline GstClockTime
elapsed (gint64 now, gint64 since)
{
  return (GstClockTime) MAX (now - since, 0) * GST_USECOND;
}

/* Outputs what is ready in order, declaring lost what can no longer
 * complete. At EOS everything pending goes out or is declared lost. */
static GstFlowReturn
dec_advance (GstNcDecoder * self, DecState * st, gboolean eos)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gint64 now = g_get_monotonic_time ();

  while (st->have_next && ret == GST_FLOW_OK) {
    DecGen *g = g_hash_table_lookup (st->gens, GUINT_TO_POINTER (st->next));
    guint32 oldest;
    gint64 since = 0;

    if (g && g->out) {
      dec_remember (st, st->next, 1);
      ret = dec_push (self, st, g);
      dec_gen_remove (st, st->next);
      st->next++;
      continue;
    }

    if (!dec_oldest_pending (st, &oldest, &since))
      break;                    /* nothing pending at all */

    if (!g) {
      /* nothing of it ever arrived: skip the whole gap once it is due */
      if (eos || gen_diff (st->newest, st->next) > (gint32) st->max_in_flight ||
          (st->timeout > 0 && elapsed (now, since) > st->timeout))
        dec_declare_lost (self, st, oldest - st->next, "no packets");
      else
        break;
      continue;
    }

    if (eos)
      dec_declare_lost (self, st, 1, "end of stream");
    else if (gen_diff (st->newest, st->next) > (gint32) st->max_in_flight)
      dec_declare_lost (self, st, 1, "too many newer generations");
    else if (st->timeout > 0 &&
        elapsed (now, g->first_arrival) > st->timeout)
      dec_declare_lost (self, st, 1, "timeout");
    else
      break;
  }
  return ret;
}

/* When the oldest pending generation times out (0: never). */
static gint64
dec_next_deadline (DecState * st)
{
  guint32 oldest;
  gint64 since = 0;

  if (st->timeout == 0 || !dec_oldest_pending (st, &oldest, &since))
    return 0;
  return since + (gint64) (st->timeout / GST_USECOND) + 1;
}

static void
dec_arm_timer (GstNcDecoder * self, DecState * st)
{
  gint64 deadline = dec_next_deadline (st);

  g_mutex_lock (&self->timer_lock);
  if (deadline != self->timer_deadline) {
    self->timer_deadline = deadline;
    g_cond_signal (&self->timer_cond);
  }
  g_mutex_unlock (&self->timer_lock);
}

static gpointer
dec_timer_main (gpointer data)
{
  GstNcDecoder *self = data;

  g_mutex_lock (&self->timer_lock);
  while (!self->timer_stop) {
    gint64 deadline = self->timer_deadline;

    if (deadline == 0) {
      g_cond_wait (&self->timer_cond, &self->timer_lock);
      continue;
    }
    if (g_get_monotonic_time () < deadline) {
      g_cond_wait_until (&self->timer_cond, &self->timer_lock, deadline);
      continue;
    }
    self->timer_deadline = 0;
    g_mutex_unlock (&self->timer_lock);

    /* serialised with chain and events: the state is the streaming
     * thread's, and downstream sees one pushing thread at a time */
    GST_PAD_STREAM_LOCK (self->sinkpad);
    if (self->state && !self->timer_stop) {
      GST_DEBUG_OBJECT (self, "generation timeout timer fired");
      dec_advance (self, self->state, FALSE);
      dec_arm_timer (self, self->state);
    }
    GST_PAD_STREAM_UNLOCK (self->sinkpad);
    g_mutex_lock (&self->timer_lock);
  }
  g_mutex_unlock (&self->timer_lock);
  return NULL;
}

static void
dec_timer_start (GstNcDecoder * self)
{
  self->timer_stop = FALSE;
  self->timer_deadline = 0;
  self->timer = g_thread_new ("ncdecoder-timer", dec_timer_main, self);
}

static void
dec_timer_stop (GstNcDecoder * self)
{
  if (!self->timer)
    return;
  g_mutex_lock (&self->timer_lock);
  self->timer_stop = TRUE;
  g_cond_signal (&self->timer_cond);
  g_mutex_unlock (&self->timer_lock);
  g_thread_join (self->timer);
  self->timer = NULL;
}

static void
dec_warn_bad (GstNcDecoder * self, DecState * st, const gchar * what)
{
  GstClockTime now = g_get_monotonic_time () * GST_USECOND;

  /* one warning a second at most: junk must not flood the log */
  if (!GST_CLOCK_TIME_IS_VALID (st->last_warn) ||
      now - st->last_warn > GST_SECOND) {
    GST_WARNING_OBJECT (self, "dropping packet: %s", what);
    st->last_warn = now;
  }
}

static GstFlowReturn
dec_packet (GstNcDecoder * self, DecState * st, GstBuffer * buf,
    const guint8 * data, gsize size)
{
  const guint8 *coefs, *payload;
  guint8 vec[NC_MAX_M];
  RlncAddResult add;
  NcParseResult r;
  DecGen *g;
  NcHeader h;

  r = nc_packet_parse (data, size, &h, &coefs, &payload);
  if (r != NC_PARSE_OK) {
    dec_warn_bad (self, st, nc_parse_result_to_string (r));
    GST_OBJECT_LOCK (self);
    self->st_bad++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  }

  if (!st->locked) {
    st->m = h.m;
    st->k = h.block_size;
    st->locked = TRUE;
    GST_INFO_OBJECT (self, "locked on k=%u from the first packet", st->k);
  } else if (h.block_size != st->k || (st->m_from_caps && h.m > st->m)) {
    /* a partial generation has fewer blocks than the stream's m, never
     * another block size */
    if (!st->warned_params) {
      GST_ELEMENT_WARNING (self, STREAM, DECODE,
          ("dropping packets with m=%u k=%u, the stream has m=%u k=%u",
              h.m, h.block_size, st->m, st->k), (NULL));
      st->warned_params = TRUE;
    }
    GST_OBJECT_LOCK (self);
    self->st_wrong++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  }
  st->m = MAX (st->m, h.m);

  if (st->have_next && gen_diff (h.generation, st->next) <
      -(gint32) (4 * st->max_in_flight + RECENT)) {
    /* far behind: not a late packet but a sender that restarted its
     * numbering; finish what we hold and follow the new numbering */
    GstFlowReturn ret;

    GST_WARNING_OBJECT (self, "generation id jumped back from %u to %u, "
        "resynchronising", st->next, h.generation);
    ret = dec_advance (self, st, TRUE);
    st->have_next = FALSE;
    /* a new sender: its clock, and where its records start, are new too */
    st->have_ts_offset = FALSE;
    nc_deframer_lost (st->deframer);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  if (!st->have_next) {
    st->have_next = TRUE;
    st->next = st->newest = h.generation;
    if (!st->seen_any)
      st->first_id = h.generation;
    st->seen_any = TRUE;
  }
  if (gen_diff (h.generation, st->next) < 0) {
    /* reordering at the very start: move back rather than lose it */
    if (!st->output_started &&
        gen_diff (st->next, h.generation) <= (gint32) st->max_in_flight) {
      st->next = h.generation;
      if (gen_diff (h.generation, st->first_id) < 0)
        st->first_id = h.generation;
    } else {
      gboolean done = st->recent_id[h.generation % RECENT] == h.generation &&
          st->recent_state[h.generation % RECENT] == 1;
      GST_OBJECT_LOCK (self);
      if (done)
        self->st_redundant++;
      else
        self->st_late++;
      GST_OBJECT_UNLOCK (self);
      return GST_FLOW_OK;
    }
  }
  if (gen_diff (h.generation, st->newest) > 0)
    st->newest = h.generation;

  g = g_hash_table_lookup (st->gens, GUINT_TO_POINTER (h.generation));
  if (!g) {
    g = g_new0 (DecGen, 1);
    g->id = h.generation;
    g->m = h.m;
    g->framed = (h.flags & NC_FLAG_FRAMED) != 0;
    g->dec = dec_take_decoder (st, h.m);
    g->data_length = h.data_length;
    g->pts = GST_BUFFER_PTS (buf);
    g->first_arrival = g_get_monotonic_time ();
    g_hash_table_insert (st->gens, GUINT_TO_POINTER (g->id), g);
  }

  if (h.m != g->m || h.data_length != g->data_length ||
      ((h.flags & NC_FLAG_FRAMED) != 0) != g->framed) {
    /* every packet of a generation describes it alike */
    dec_warn_bad (self, st, "packet disagrees with its generation's m, "
        "length or framing");
    GST_OBJECT_LOCK (self);
    self->st_bad++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  }
  if (g->out) {
    GST_OBJECT_LOCK (self);
    self->st_redundant++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  }

  nc_packet_coefficients (&h, coefs, vec);
  add = rlnc_decoder_add (g->dec, vec, payload);
  GST_OBJECT_LOCK (self);
  if (add == RLNC_ADD_INNOVATIVE)
    self->st_innovative++;
  else if (add == RLNC_ADD_DEPENDENT)
    self->st_dependent++;
  else
    self->st_redundant++;
  GST_OBJECT_UNLOCK (self);

  if (add == RLNC_ADD_INNOVATIVE && rlnc_decoder_rank (g->dec) == (int) g->m)
    g->out = dec_solve (self, st, g);

  return GST_FLOW_OK;
}

static GstFlowReturn
gst_nc_decoder_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstNcDecoder *self = GST_NC_DECODER (parent);
  DecState *st = self->state;
  GstFlowReturn ret;
  GstMapInfo map;

  /* what failed on the GPU among the generations before is said here */
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  if (!st) {
    gst_buffer_unref (buf);
    return GST_FLOW_FLUSHING;
  }

  GST_OBJECT_LOCK (self);
  self->st_received++;
  GST_OBJECT_UNLOCK (self);

  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }
  ret = dec_packet (self, st, buf, map.data, map.size);
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (buf);

  if (ret == GST_FLOW_OK)
    ret = dec_advance (self, st, FALSE);
  dec_arm_timer (self, st);
  return ret;
}

static void
dec_reset (DecState * st)
{
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, st->gens);
  while (g_hash_table_iter_next (&it, NULL, &value)) {
    g_hash_table_iter_steal (&it);
    dec_gen_free (st, value);
  }
  st->have_next = FALSE;
  st->output_started = FALSE;
  memset (st->recent_state, 0, sizeof (st->recent_state));
  st->discont = FALSE;
  nc_deframer_lost (st->deframer);
  st->have_ts_offset = FALSE;
}

static void
dec_set_sink_caps (GstNcDecoder * self, DecState * st, GstCaps * caps)
{
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  const gchar *orig;
  gint m, k;

  /* m and k from the caps when they are there; else from the first packet */
  if (gst_structure_get_int (s, "generation-size", &m) &&
      gst_structure_get_int (s, "block-size", &k) &&
      m >= 1 && m <= NC_MAX_M && k >= 1 && k <= NC_MAX_K) {
    if (st->locked && (guint) k != st->k) {
      /* another block size: what we hold cannot be decoded with it */
      dec_reset (st);
      g_slist_free_full (st->free_decoders,
          (GDestroyNotify) rlnc_decoder_free);
      st->free_decoders = NULL;
    }
    st->m = m;
    st->k = k;
    st->locked = TRUE;
    st->m_from_caps = TRUE;
    GST_INFO_OBJECT (self, "m=%d k=%d from caps", m, k);
  }

  /* the encoder's input caps, in one pipeline; a framed stream's own caps
   * records take precedence, being where the data is */
  orig = gst_structure_get_string (s, "original-caps");
  if (orig && !st->out_caps_in_band) {
    GstCaps *caps = gst_caps_from_string (orig);

    if (caps && gst_caps_is_fixed (caps) &&
        (!st->out_caps || !gst_caps_is_equal (caps, st->out_caps))) {
      gst_caps_take (&st->out_caps, g_steal_pointer (&caps));
      st->caps_sent = FALSE;
    }
    gst_clear_caps (&caps);
  }
}

static GstStructure *gst_nc_decoder_get_stats (GstNcDecoder * self);

/* At EOS (gst-launch -e turns Ctrl-C into one): the totals, because the
 * warnings are rate-limited and the last losses, declared all at once here,
 * would otherwise go unsaid. A stream of which nothing could be decoded is an
 * error, not an empty success; one with losses ends with a warning. */
static void
dec_post_totals (GstNcDecoder * self, DecState * st)
{
  GstStructure *totals = gst_nc_decoder_get_stats (self);
  guint64 decoded = 0, lost = 0, bad = 0, wrong = 0, received = 0;

  gst_structure_get_uint64 (totals, "generations-decoded", &decoded);
  gst_structure_get_uint64 (totals, "generations-lost", &lost);
  gst_structure_get_uint64 (totals, "packets-bad", &bad);
  gst_structure_get_uint64 (totals, "packets-wrong-parameters", &wrong);
  gst_structure_get_uint64 (totals, "packets-received", &received);
  gst_structure_set_name (totals, "nc-decoder-totals");
  if (st->seen_any)
    gst_structure_set (totals, "first-generation", G_TYPE_UINT, st->first_id,
        "last-generation", G_TYPE_UINT, st->newest, NULL);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), totals));

  if (decoded == 0 && received > 0)
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("nothing could be decoded from %" G_GUINT64_FORMAT " packets: %"
            G_GUINT64_FORMAT " generation(s) lost, %" G_GUINT64_FORMAT
            " packets bad, %" G_GUINT64_FORMAT " of another stream", received,
            lost, bad, wrong), (NULL));
  else if (lost > 0)
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("end of stream: %" G_GUINT64_FORMAT " generation(s) of data lost "
            "in all, %" G_GUINT64_FORMAT " decoded (packets of generations %u to "
            "%u arrived)", lost, decoded, st->first_id,
            st->newest),
        ("%" G_GUINT64_FORMAT " packets received, %" G_GUINT64_FORMAT
            " bad; generations after the last packet that arrived cannot be "
            "counted", received, bad));
}

static gboolean
gst_nc_decoder_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstNcDecoder *self = GST_NC_DECODER (parent);
  DecState *st = self->state;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;

      /* the output caps go out with the first buffer: they may come from
       * the stream itself (ensure_src_caps) */
      gst_event_parse_caps (event, &caps);
      if (st)
        dec_set_sink_caps (self, st, caps);
      gst_event_unref (event);
      return TRUE;
    }
    case GST_EVENT_EOS:
      if (st) {
        dec_advance (self, st, TRUE);
        dec_arm_timer (self, st);
        dec_post_totals (self, st);
        ensure_src_caps (self, st, NULL);
      }
      break;
    case GST_EVENT_FLUSH_STOP:
      if (st) {
        GList *l = st->pending_events;

        /* a segment held for the caps is replaced by the one that follows
         * the flush */
        while (l) {
          GList *next = l->next;
          if (GST_EVENT_TYPE (l->data) == GST_EVENT_SEGMENT) {
            gst_event_unref (l->data);
            st->pending_events = g_list_delete_link (st->pending_events, l);
          }
          l = next;
        }
        dec_reset (st);
      }
      break;
    default:
      /* sticky events that must follow the caps wait for them */
      if (st && !st->caps_sent && GST_EVENT_IS_STICKY (event) &&
          GST_EVENT_TYPE (event) > GST_EVENT_CAPS &&
          GST_EVENT_TYPE (event) != GST_EVENT_EOS) {
        st->pending_events = g_list_append (st->pending_events, event);
        return TRUE;
      }
      break;
  }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
gst_nc_decoder_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstNcDecoder *self = GST_NC_DECODER (parent);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  return gst_pad_query_default (pad, parent, query);
}

static DecState *
dec_state_new (GstNcDecoder * self)
{
  DecState *st = g_new0 (DecState, 1);

  GST_OBJECT_LOCK (self);
  st->max_in_flight = self->max_in_flight;
  st->timeout = self->timeout;
  self->st_decoded = self->st_lost = self->st_received = 0;
  self->st_innovative = self->st_redundant = self->st_dependent = 0;
  self->st_bad = self->st_late = self->st_wrong = 0;
  self->st_latency_sum_us = self->st_latency_max_us = 0;
  self->st_buffers_out = self->st_records_bad = self->st_records_no_caps = 0;
  GST_OBJECT_UNLOCK (self);

  st->gens = g_hash_table_new (g_direct_hash, g_direct_equal);
  st->deframer = nc_deframer_new ();
  st->last_warn = GST_CLOCK_TIME_NONE;
  return st;
}

static void
dec_state_free (DecState * st)
{
  dec_reset (st);
  g_hash_table_unref (st->gens);
  g_slist_free_full (st->free_decoders, (GDestroyNotify) rlnc_decoder_free);
  gst_clear_caps (&st->out_caps);
  g_list_free_full (st->pending_events, (GDestroyNotify) gst_event_unref);
  nc_deframer_free (st->deframer);
  g_free (st);
}

static GstStructure *
gst_nc_decoder_get_stats (GstNcDecoder * self)
{
  GstStructure *s;

  GST_OBJECT_LOCK (self);
  s = gst_structure_new ("application/x-ncdecoder-stats",
      "generations-decoded", G_TYPE_UINT64, self->st_decoded,
      "generations-lost", G_TYPE_UINT64, self->st_lost,
      "packets-received", G_TYPE_UINT64, self->st_received,
      "packets-innovative", G_TYPE_UINT64, self->st_innovative,
      "packets-redundant", G_TYPE_UINT64, self->st_redundant,
      "packets-dependent", G_TYPE_UINT64, self->st_dependent,
      "packets-bad", G_TYPE_UINT64, self->st_bad,
      "packets-late", G_TYPE_UINT64, self->st_late,
      "packets-wrong-parameters", G_TYPE_UINT64, self->st_wrong,
      "decode-latency-avg-us", G_TYPE_UINT64, self->st_decoded ?
      self->st_latency_sum_us / self->st_decoded : (guint64) 0,
      "decode-latency-max-us", G_TYPE_UINT64, self->st_latency_max_us,
      "buffers-out", G_TYPE_UINT64, self->st_buffers_out,
      "records-bad", G_TYPE_UINT64, self->st_records_bad,
      "records-without-caps", G_TYPE_UINT64, self->st_records_no_caps,
      "backend", G_TYPE_STRING, gst_gpustream_backend_nick (self->gpu.resolved),
      NULL);
  GST_OBJECT_UNLOCK (self);
  return s;
}

/* ---- GObject / GstElement boilerplate ------------------------------------ */

static void
gst_nc_decoder_set_context (GstElement * element, GstContext * context)
{
  GstNcDecoder *self = GST_NC_DECODER (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstStateChangeReturn
gst_nc_decoder_change_state (GstElement * element, GstStateChange transition)
{
  GstNcDecoder *self = GST_NC_DECODER (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
      if (!gst_gpustream_gpu_start (element, &self->gpu))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      self->state = dec_state_new (self);
      if (self->state->timeout > 0)
        dec_timer_start (self);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* the pads are inactive now: the timer cannot race with chain */
      dec_timer_stop (self);
      g_clear_pointer (&self->state, dec_state_free);
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
gst_nc_decoder_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstNcDecoder *self = GST_NC_DECODER (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MAX_GENERATIONS_IN_FLIGHT:
      self->max_in_flight = g_value_get_uint (value);
      break;
    case PROP_GENERATION_TIMEOUT:
      self->timeout = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_nc_decoder_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstNcDecoder *self = GST_NC_DECODER (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_nc_decoder_get_stats (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MAX_GENERATIONS_IN_FLIGHT:
      g_value_set_uint (value, self->max_in_flight);
      break;
    case PROP_GENERATION_TIMEOUT:
      g_value_set_uint64 (value, self->timeout);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_nc_decoder_finalize (GObject * object)
{
  GstNcDecoder *self = GST_NC_DECODER (object);

  g_clear_pointer (&self->state, dec_state_free);
  g_mutex_clear (&self->timer_lock);
  g_cond_clear (&self->timer_cond);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_nc_decoder_class_init (GstNcDecoderClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_nc_decoder_set_property;
  gobject_class->get_property = gst_nc_decoder_get_property;
  gobject_class->finalize = gst_nc_decoder_finalize;

  g_object_class_install_property (gobject_class,
      PROP_MAX_GENERATIONS_IN_FLIGHT,
      g_param_spec_uint ("max-generations-in-flight",
          "Max generations in flight",
          "A generation still incomplete when more than this many newer "
          "generations are pending is declared lost", 1, 65536,
          DEFAULT_MAX_GENERATIONS_IN_FLIGHT, flags));
  g_object_class_install_property (gobject_class, PROP_GENERATION_TIMEOUT,
      g_param_spec_uint64 ("generation-timeout", "Generation timeout",
          "A generation still incomplete this long (monotonic time since its "
          "first packet arrived) is declared lost; 0 = no timeout", 0,
          G_MAXUINT64, DEFAULT_GENERATION_TIMEOUT, flags));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters (application/x-ncdecoder-stats): generations-decoded, "
          "generations-lost, packets-received, packets-innovative, "
          "packets-redundant, packets-dependent, packets-bad, packets-late, "
          "packets-wrong-parameters, decode-latency-avg-us, "
          "decode-latency-max-us, buffers-out; for a stream framed in "
          "buffers records-bad (corrupt framing skipped) and "
          "records-without-caps (dropped before the stream said its caps)",
          GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Network coding decoder", "Codec/Decoder/Network",
      "Progressive decoding of random linear network coding (RLNC) over "
      "GF(2^8), on the GPU or the CPU", "gst-gpustream developers");

  element_class->change_state = GST_DEBUG_FUNCPTR (gst_nc_decoder_change_state);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_nc_decoder_set_context);

  GST_DEBUG_CATEGORY_INIT (gst_nc_decoder_debug, "ncdecoder", 0,
      "Network coding decoder");
}

static void
gst_nc_decoder_init (GstNcDecoder * self)
{
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_nc_decoder_chain));
  gst_pad_set_event_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_nc_decoder_sink_event));
  gst_pad_set_query_function (self->sinkpad,
      GST_DEBUG_FUNCPTR (gst_nc_decoder_query));
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_query_function (self->srcpad,
      GST_DEBUG_FUNCPTR (gst_nc_decoder_query));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);

  gst_gpustream_gpu_init (&self->gpu);
  self->max_in_flight = DEFAULT_MAX_GENERATIONS_IN_FLIGHT;
  self->timeout = DEFAULT_GENERATION_TIMEOUT;
  g_mutex_init (&self->timer_lock);
  g_cond_init (&self->timer_cond);
}
