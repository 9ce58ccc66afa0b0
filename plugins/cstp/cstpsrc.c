/* cstpsrc: receives the S parallel UDP streams of cstpsink and decodes them
 * together, the cross-stream decoding of Shaofeng Liu, Jürgen P. Schulze,
 * Thomas A. DeFanti, "CSTP: A parallel data transfer protocol using
 * cross-stream coding" (2011).
 *
 * SECTION:element-cstpsrc
 * @title: cstpsrc
 *
 * Listens on S UDP ports (port + i, or `ports`), one thread reading all of
 * them, and keeps every frame's packets until it decodes: each stream from
 * its own source and repair packets, then the pipe packets reduced by the
 * decoded streams into extra repairs for the others, then the streams still
 * short solved together (docs/elements/cstp-code.md, section 4). Frames
 * leave whole and in order, with the sender's timestamps moved onto this
 * pipeline's clock plus `latency`, and the caps the sender put in every
 * frame packet (or `caps`). A frame that has not decoded `latency` after its
 * first packet arrived is dropped and counted, and the next buffer carries
 * DISCONT; the element never waits longer than that. Datagrams that are not
 * CSTP, are truncated, or disagree with the streams' geometry are dropped
 * and counted. Decoding runs on the CPU (ISA-L's SIMD GF(2^8) product); there
 * is no GPU path yet.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 cstpsrc streams=4 port=5100 address=127.0.0.1 num-buffers=30 ! \
 *     filesink location=/tmp/cstp-720p.yuv
 * ]|
 */
/* sendmmsg, recvmmsg, pipe2 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/base/gstpushsrc.h>
#include <fountain/fountain.h>

#include "cstpsrc.h"

GST_DEBUG_CATEGORY_STATIC (gst_cstp_src_debug);
#define GST_CAT_DEFAULT gst_cstp_src_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_STREAMS 4
#define DEFAULT_PORT 5100
#define DEFAULT_ADDRESS "0.0.0.0"
#define DEFAULT_LATENCY (200 * GST_MSECOND)
#define DEFAULT_BUFFER_SIZE (8 << 20)
#define DEFAULT_MAX_FRAME_SIZE (256u << 20)
/* frames held at once, waiting to decode */
#define MAX_PENDING 8
/* a frame whose packets stopped arriving this long ago is tried (µs) */
#define QUIET_US 3000
/* datagrams read per recvmmsg call, and the largest one */
#define RECV_BATCH 32
#define MAX_DATAGRAM 65536
/* a frame this far behind the next one expected: the sender restarted */
#define RESTART_GAP 1024

enum
{
  PROP_0,
  PROP_STREAMS,
  PROP_PORT,
  PROP_PORTS,
  PROP_ADDRESS,
  PROP_LATENCY,
  PROP_CAPS,
  PROP_BUFFER_SIZE,
  PROP_MAX_FRAME_SIZE,
  PROP_SIMULATE_LOSS,
  PROP_STATS,
};

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* ---- state --------------------------------------------------------------- */

/* The seeded loss of simulate-loss: a Gilbert-Elliott channel per stream
 * (every datagram lost in the bad state) and a cut of frames on one stream. */
typedef struct
{
  guint64 rng;
  gdouble p_gb, p_bg;
  gboolean bad;
} LossChannel;

/* One frame on its way in. */
typedef struct
{
  gboolean used;
  guint32 frame_id;
  FountainFrameDecoder *dec;
  guint8 dec_streams;
  guint16 n, k;
  guint32 frame_len;
  gboolean have_meta;
  guint64 pts, duration;
  guint8 flags;
  gchar *caps;
  gint64 first_arrival, last_arrival;
  guint sources[FOUNTAIN_MAX_STREAMS];
  guint kept;
  guint64 moved_on;             /* streams that already carry a later frame */
  gboolean dirty;               /* packets since the last decode attempt */
  gboolean decoded;
  FountainDecodeStats dstats;
} Frame;

struct _GstCstpSrc
{
  GstPushSrc parent;

  /* properties (object lock) */
  guint streams;
  gint port;
  gchar *ports;
  gchar *address;
  guint64 latency;
  GstCaps *caps;
  gint buffer_size;
  guint max_frame_size;
  gchar *simulate_loss;

  /* streaming state */
  guint n_streams;
  guint frame_limit;            /* max-frame-size, as started */
  gint *fds;
  gint wake[2];
  gboolean flushing;
  gboolean idle;                /* the last wait saw no datagram */
  guint8 *rx;                   /* RECV_BATCH * MAX_DATAGRAM */
  Frame frames[MAX_PENDING];
  gboolean have_next;
  guint32 next_id;
  GQueue out;                   /* buffers ready to leave, in order */
  gboolean discont;
  gchar *out_caps_str;
  gboolean have_offset;
  gint64 ts_offset;
  GstClockTime last_pts, last_duration;
  gboolean simulating;
  LossChannel *loss;
  gint cut_stream;
  guint32 cut_first, cut_last;
  guint warned;                 /* FountainError kinds already posted */

  /* stats (object lock) */
  guint64 frames_decoded, frames_local, frames_repaired, frames_lost;
  guint64 decode_ns, decode_ns_max;
  guint64 bad, duplicates, late, full;
  guint64 *received, *lost, *stream_bad, *simulated;
};

G_DEFINE_TYPE (GstCstpSrc, gst_cstp_src, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE (cstpsrc, "cstpsrc", GST_RANK_NONE,
    GST_TYPE_CSTP_SRC);

/* ---- the data path: simulated loss (tests only) -------------------------- */

static gdouble
loss_unit (LossChannel * c)
{
  /* xorshift64* */
  c->rng ^= c->rng >> 12;
  c->rng ^= c->rng << 25;
  c->rng ^= c->rng >> 27;
  return (gdouble) ((c->rng * 0x2545F4914F6CDD1Dull) >> 11)
      * (1.0 / 9007199254740992.0);
}

static gboolean
loss_drop (LossChannel * c)
{
  gboolean lost = c->bad;
  c->bad = c->bad ? loss_unit (c) >= c->p_bg : loss_unit (c) < c->p_gb;
  return lost;
}

/* "loss, seed=1, burst=6.0, rates=\"0.01:0.02\", cut-stream=1,
 * cut-first=30, cut-last=59": rates per stream (one value: all streams). */
static gboolean
setup_simulated_loss (GstCstpSrc * self, const gchar * desc)
{
  GstStructure *st = gst_structure_from_string (desc, NULL);
  guint S = self->n_streams;
  if (st == NULL)
    return FALSE;
  guint seed = 1;
  gdouble burst = 1.0;
  const gchar *rates = gst_structure_get_string (st, "rates");
  gst_structure_get_uint (st, "seed", &seed);
  gst_structure_get_double (st, "burst", &burst);
  self->cut_stream = -1;
  gst_structure_get_int (st, "cut-stream", &self->cut_stream);
  gst_structure_get_uint (st, "cut-first", &self->cut_first);
  gst_structure_get_uint (st, "cut-last", &self->cut_last);
  gchar **parts = rates ? g_strsplit (rates, ":", -1) : NULL;
  guint nparts = parts ? g_strv_length (parts) : 0;
  gboolean ok = burst >= 1.0 && (nparts == 0 || nparts == 1 || nparts == S);
  self->loss = g_new0 (LossChannel, S);
  for (guint s = 0; ok && s < S; s++) {
    gdouble rate = nparts ? g_ascii_strtod (parts[nparts == 1 ? 0 : s], NULL)
        : 0.0;
    if (rate < 0 || rate >= 1) {
      ok = FALSE;
      break;
    }
    LossChannel *c = &self->loss[s];
    c->rng = 0x9E3779B97F4A7C15ull * (seed + 1) + 0x1234567ull * (s + 1);
    c->p_bg = 1.0 / burst;
    c->p_gb = rate <= 0 ? 0 : rate * c->p_bg / (1 - rate);
    c->bad = loss_unit (c) < rate;
  }
  g_strfreev (parts);
  gst_structure_free (st);
  self->simulating = ok;
  return ok;
}

static gboolean
simulated_drop (GstCstpSrc * self, guint s, const guint8 * data, gsize len)
{
  if (self->cut_stream == (gint) s && len >= 12) {
    guint32 fid = GST_READ_UINT32_BE (data + 8);
    if (fid >= self->cut_first && fid <= self->cut_last)
      return TRUE;
  }
  return loss_drop (&self->loss[s]);
}

/* ---- the data path: frames ----------------------------------------------- */

static void
frame_clear (Frame * f)
{
  f->used = FALSE;
  g_clear_pointer (&f->caps, g_free);
  f->have_meta = f->decoded = f->dirty = FALSE;
  f->kept = 0;
  f->moved_on = 0;
  memset (f->sources, 0, sizeof f->sources);
  memset (&f->dstats, 0, sizeof f->dstats);
  /* the decoder stays for the next frame of the same geometry */
}

static Frame *
frame_find (GstCstpSrc * self, guint32 fid)
{
  for (guint i = 0; i < MAX_PENDING; i++)
    if (self->frames[i].used && self->frames[i].frame_id == fid)
      return &self->frames[i];
  return NULL;
}

static GstClockTime
running_time_now (GstCstpSrc * self)
{
  GstClock *clock = gst_element_get_clock (GST_ELEMENT (self));
  GstClockTime rt = GST_CLOCK_TIME_NONE;
  if (clock) {
    GstClockTime now = gst_clock_get_time (clock);
    GstClockTime base = gst_element_get_base_time (GST_ELEMENT (self));
    rt = now > base ? now - base : 0;
    gst_object_unref (clock);
  }
  return rt;
}

/* The decoded frame as a buffer, with the sender's timestamps on our clock. */
static void
frame_emit (GstCstpSrc * self, Frame * f)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, f->frame_len, NULL);
  GstMapInfo map;
  gsize sub = (gsize) f->n * f->k;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (guint s = 0; s < f->dec_streams; s++) {
    gsize off = s * sub;
    if (off >= f->frame_len)
      break;
    memcpy (map.data + off, fountain_frame_decoder_stream (f->dec, (int) s),
        MIN (sub, f->frame_len - off));
  }
  gst_buffer_unmap (buf, &map);

  GstClockTime pts = GST_CLOCK_TIME_NONE;
  if (f->have_meta && f->pts != FOUNTAIN_META_NONE) {
    if (!self->have_offset) {
      GstClockTime rt = running_time_now (self);
      if (GST_CLOCK_TIME_IS_VALID (rt)) {
        self->ts_offset = (gint64) (rt + self->latency) - (gint64) f->pts;
        self->have_offset = TRUE;
      }
    }
    if (self->have_offset) {
      gint64 t = (gint64) f->pts + self->ts_offset;
      pts = t > 0 ? (GstClockTime) t : 0;
    }
  } else if (GST_CLOCK_TIME_IS_VALID (self->last_pts)
      && GST_CLOCK_TIME_IS_VALID (self->last_duration)) {
    pts = self->last_pts + self->last_duration;
  } else {
    GstClockTime rt = running_time_now (self);
    if (GST_CLOCK_TIME_IS_VALID (rt))
      pts = rt + self->latency;
  }
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = f->have_meta
      && f->duration != FOUNTAIN_META_NONE ? f->duration : GST_CLOCK_TIME_NONE;
  self->last_pts = pts;
  self->last_duration = GST_BUFFER_DURATION (buf);
  if (f->have_meta && (f->flags & FOUNTAIN_META_FLAG_DELTA))
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  if (f->have_meta && (f->flags & FOUNTAIN_META_FLAG_HEADER))
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_HEADER);
  if (self->discont) {
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
    self->discont = FALSE;
  }
  /* the caps travel with the buffer to create () as qdata */
  if (f->have_meta && f->caps)
    gst_mini_object_set_qdata (GST_MINI_OBJECT (buf),
        g_quark_from_static_string ("cstp-caps"), g_strdup (f->caps), g_free);
  g_queue_push_tail (&self->out, buf);
}

/* The head frame is given up: counted, the next buffer is DISCONT. */
static void
frame_lost (GstCstpSrc * self, Frame * f)
{
  GST_OBJECT_LOCK (self);
  self->frames_lost++;
  GST_OBJECT_UNLOCK (self);
  self->discont = TRUE;
  GST_DEBUG_OBJECT (self, "frame %u lost", self->next_id);
  (void) f;
}

/* Source packets missing per stream: the loss estimate from index gaps. */
static void
frame_count_losses (GstCstpSrc * self, Frame * f)
{
  if (f == NULL || f->dec == NULL)
    return;
  GST_OBJECT_LOCK (self);
  for (guint s = 0; s < self->n_streams && s < f->dec_streams; s++)
    self->lost[s] += f->n - MIN (f->sources[s], f->n);
  GST_OBJECT_UNLOCK (self);
}

static gboolean
frame_try_decode (GstCstpSrc * self, Frame * f)
{
  if (f->decoded)
    return TRUE;
  if (f->dec == NULL || !f->dirty
      || f->kept < (guint) f->dec_streams * f->n)
    return FALSE;
  f->dirty = FALSE;
  gint64 t0 = g_get_monotonic_time ();
  int got = fountain_frame_decoder_decode (f->dec, &f->dstats);
  guint64 ns = (guint64) (g_get_monotonic_time () - t0) * 1000;
  GST_OBJECT_LOCK (self);
  self->decode_ns += ns;
  self->decode_ns_max = MAX (self->decode_ns_max, ns);
  GST_OBJECT_UNLOCK (self);
  f->decoded = got == f->dec_streams;
  GST_LOG_OBJECT (self, "frame %u: %d of %u streams decoded", f->frame_id,
      got, f->dec_streams);
  return f->decoded;
}

/* Moves the head frame out, as a buffer or as a loss; `force` gives it up
 * when it does not decode now. */
static void
advance_head (GstCstpSrc * self, Frame * f, gboolean force)
{
  if (f && (frame_try_decode (self, f) || f->decoded)) {
    frame_count_losses (self, f);
    GST_OBJECT_LOCK (self);
    self->frames_decoded++;
    if (f->dstats.streams_repaired + f->dstats.streams_joint > 0)
      self->frames_repaired++;
    else
      self->frames_local++;
    GST_OBJECT_UNLOCK (self);
    frame_emit (self, f);
  } else if (force) {
    frame_count_losses (self, f);
    frame_lost (self, f);
  } else {
    return;
  }
  if (f)
    frame_clear (f);
  self->next_id++;
}

/* Everything that can leave now, in order. */
static void
service (GstCstpSrc * self)
{
  gint64 now = g_get_monotonic_time ();
  gint64 latency_us = (gint64) (self->latency / 1000);
  while (self->have_next) {
    Frame *f = frame_find (self, self->next_id);
    gint64 first = G_MAXINT64;
    if (f) {
      first = f->first_arrival;
      gboolean complete = TRUE;
      for (guint s = 0; s < f->dec_streams; s++)
        complete &= f->sources[s] >= f->n;
      guint64 all = f->dec_streams == 64 ? ~0ull
          : (1ull << f->dec_streams) - 1;
      /* quiet: nothing waits in the sockets (a decode that took long
       * leaves a backlog, and trying again before reading it is wasted) */
      if (f->dec && (complete || (f->moved_on & all) == all
              || (self->idle && now - f->last_arrival > QUIET_US)))
        frame_try_decode (self, f);
      if (f->decoded) {
        advance_head (self, f, FALSE);
        continue;
      }
    } else {
      /* nothing of it arrived: it is late once a later frame is */
      for (guint i = 0; i < MAX_PENDING; i++)
        if (self->frames[i].used)
          first = MIN (first, self->frames[i].first_arrival);
      if (first == G_MAXINT64)
        return;
    }
    if (now - first <= latency_us)
      return;
    advance_head (self, f, TRUE);
  }
}

/* The slot of frame fid, making room when it is far ahead; NULL when the
 * frame already left. */
static Frame *
frame_get (GstCstpSrc * self, guint32 fid, gint64 now)
{
  if (!self->have_next) {
    self->have_next = TRUE;
    self->next_id = fid;
  }
  gint32 d = (gint32) (fid - self->next_id);
  if (d < 0 && d > -RESTART_GAP) {
    GST_OBJECT_LOCK (self);
    self->late++;
    GST_OBJECT_UNLOCK (self);
    return NULL;
  }
  if (d < 0 || d >= RESTART_GAP * 64) {
    /* the sender started again: what is pending will not come */
    GST_INFO_OBJECT (self, "frame %u after %u: the sender restarted", fid,
        self->next_id);
    for (guint i = 0; i < MAX_PENDING; i++)
      if (self->frames[i].used)
        frame_clear (&self->frames[i]);
    self->next_id = fid;
    self->discont = TRUE;
    self->have_offset = FALSE;
    d = 0;
  }
  while ((gint32) (fid - self->next_id) >= MAX_PENDING)
    advance_head (self, frame_find (self, self->next_id), TRUE);
  Frame *f = frame_find (self, fid);
  if (f)
    return f;
  for (guint i = 0; i < MAX_PENDING; i++)
    if (!self->frames[i].used) {
      f = &self->frames[i];
      f->used = TRUE;
      f->frame_id = fid;
      f->first_arrival = f->last_arrival = now;
      return f;
    }
  g_assert_not_reached ();
  return NULL;
}

static void
count_bad (GstCstpSrc * self, guint s, int err, const gchar * what)
{
  GST_OBJECT_LOCK (self);
  self->bad++;
  self->stream_bad[s]++;
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "stream %u: dropped a datagram: %s", s, what);
  /* one warning message per kind of fault, the rest only counted */
  guint bit = 1u << (MIN ((guint) - err, 30u));
  if (!(self->warned & bit)) {
    self->warned |= bit;
    GST_ELEMENT_WARNING (self, STREAM, DECODE, (NULL),
        ("stream %u: dropped a datagram that is not a valid CSTP packet (%s); "
            "further ones are only counted (stats: bad-datagrams)", s, what));
  }
}

static void
mark_moved_on (GstCstpSrc * self, guint s, guint32 fid)
{
  for (guint i = 0; i < MAX_PENDING; i++) {
    Frame *f = &self->frames[i];
    if (f->used && (gint32) (fid - f->frame_id) > 0)
      f->moved_on |= 1ull << s;
  }
}

static void
handle_datagram (GstCstpSrc * self, guint s, const guint8 * data, gsize len,
    gint64 now)
{
  guint S = self->n_streams;
  if (self->simulating && simulated_drop (self, s, data, len)) {
    GST_OBJECT_LOCK (self);
    self->simulated[s]++;
    GST_OBJECT_UNLOCK (self);
    return;
  }
  GST_OBJECT_LOCK (self);
  self->received[s]++;
  GST_OBJECT_UNLOCK (self);

  FountainMeta m;
  int err = fountain_meta_parse (data, len, &m);
  if (err == FOUNTAIN_OK) {
    if (m.streams != S || m.stream != s) {
      count_bad (self, s, FOUNTAIN_ERR_STREAMS, "frame packet of another "
          "stream count or stream");
      return;
    }
    if (m.frame_len > self->frame_limit) {
      count_bad (self, s, FOUNTAIN_ERR_GEOMETRY, "frame larger than "
          "max-frame-size");
      return;
    }
    mark_moved_on (self, s, m.frame_id);
    Frame *f = frame_get (self, m.frame_id, now);
    if (f == NULL || f->have_meta)
      return;
    f->have_meta = TRUE;
    f->pts = m.pts;
    f->duration = m.duration;
    f->flags = m.flags;
    f->caps = m.caps_len ? g_strndup (m.caps, m.caps_len) : NULL;
    f->last_arrival = now;
    return;
  }
  if (err != FOUNTAIN_ERR_MAGIC) {
    count_bad (self, s, err, fountain_error_string (err));
    return;
  }

  FountainHeader h;
  const uint8_t *payload;
  err = fountain_header_parse (data, len, &h, &payload);
  if (err != FOUNTAIN_OK) {
    count_bad (self, s, err, fountain_error_string (err));
    return;
  }
  if (h.streams != S || h.stream != s) {
    count_bad (self, s, FOUNTAIN_ERR_STREAMS,
        "code packet of another stream count or stream");
    return;
  }
  /* the decoder holds S * N symbols: a forged length must not make it
   * allocate gigabytes */
  if (h.frame_len > self->frame_limit) {
    count_bad (self, s, FOUNTAIN_ERR_GEOMETRY,
        "frame larger than max-frame-size");
    return;
  }
  mark_moved_on (self, s, h.frame_id);
  Frame *f = frame_get (self, h.frame_id, now);
  if (f == NULL)
    return;
  if (f->dec == NULL || f->kept == 0) {
    if (f->dec && (f->dec_streams != h.streams || f->n != h.n
            || f->k != h.symbol_size))
      g_clear_pointer (&f->dec, fountain_frame_decoder_free);
    if (f->dec == NULL) {
      f->dec = fountain_frame_decoder_new (h.streams, h.n, h.symbol_size,
          h.n + 16);
      if (f->dec == NULL) {
        count_bad (self, s, FOUNTAIN_ERR_GEOMETRY, "no memory for its frame");
        return;
      }
      f->dec_streams = h.streams;
      f->n = h.n;
      f->k = h.symbol_size;
    }
    fountain_frame_decoder_reset (f->dec, h.frame_id);
    f->frame_len = h.frame_len;
  } else if (f->frame_len != h.frame_len) {
    count_bad (self, s, FOUNTAIN_ERR_GEOMETRY,
        "frame length differs from the frame's other packets");
    return;
  }
  switch (fountain_frame_decoder_add (f->dec, &h, payload)) {
    case FOUNTAIN_ADD_KEPT:
      f->kept++;
      f->dirty = TRUE;
      if (h.kind == FOUNTAIN_KIND_SOURCE)
        f->sources[s]++;
      break;
    case FOUNTAIN_ADD_DUPLICATE:
      GST_OBJECT_LOCK (self);
      self->duplicates++;
      GST_OBJECT_UNLOCK (self);
      break;
    case FOUNTAIN_ADD_FULL:
      GST_OBJECT_LOCK (self);
      self->full++;
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      count_bad (self, s, FOUNTAIN_ERR_GEOMETRY,
          "geometry differs from the frame's other packets");
      break;
  }
  f->last_arrival = now;
}

/* Waits up to timeout_ms for datagrams and takes in all that are there. */
static GstFlowReturn
receive (GstCstpSrc * self, int timeout_ms)
{
  guint S = self->n_streams;
  struct pollfd pfd[FOUNTAIN_MAX_STREAMS + 1];
  for (guint s = 0; s < S; s++) {
    pfd[s].fd = self->fds[s];
    pfd[s].events = POLLIN;
  }
  pfd[S].fd = self->wake[0];
  pfd[S].events = POLLIN;
  int n = poll (pfd, S + 1, timeout_ms);
  self->idle = n == 0;
  if (n < 0 && errno != EINTR) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, (NULL),
        ("poll failed: %s", g_strerror (errno)));
    return GST_FLOW_ERROR;
  }
  if (n <= 0)
    return GST_FLOW_OK;
  if (pfd[S].revents)
    return GST_FLOW_FLUSHING;
  struct mmsghdr msgs[RECV_BATCH];
  struct iovec iov[RECV_BATCH];
  for (guint s = 0; s < S; s++) {
    if (!(pfd[s].revents & POLLIN))
      continue;
    /* a few batches per stream per turn, so no stream starves the others */
    for (int turn = 0; turn < 8; turn++) {
      memset (msgs, 0, sizeof msgs);
      for (int i = 0; i < RECV_BATCH; i++) {
        iov[i].iov_base = self->rx + (gsize) i * MAX_DATAGRAM;
        iov[i].iov_len = MAX_DATAGRAM;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      int got = recvmmsg (self->fds[s], msgs, RECV_BATCH, MSG_DONTWAIT, NULL);
      if (got <= 0)
        break;
      gint64 now = g_get_monotonic_time ();
      for (int i = 0; i < got; i++) {
        gsize len = msgs[i].msg_len;
        if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
          len = MAX_DATAGRAM + 1;       /* no CSTP datagram is that long */
        handle_datagram (self, s, self->rx + (gsize) i * MAX_DATAGRAM,
            MIN (len, MAX_DATAGRAM), now);
      }
      if (got < RECV_BATCH)
        break;
    }
  }
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_cstp_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstCstpSrc *self = GST_CSTP_SRC (psrc);
  GQuark caps_quark = g_quark_from_static_string ("cstp-caps");
  GstBuffer *buf = NULL;

  while (buf == NULL) {
    while (g_queue_is_empty (&self->out)) {
      if (g_atomic_int_get (&self->flushing))
        return GST_FLOW_FLUSHING;
      gboolean pending = FALSE;
      for (guint i = 0; i < MAX_PENDING; i++)
        pending |= self->frames[i].used;
      GstFlowReturn ret = receive (self, pending ? 2 : 100);
      if (ret != GST_FLOW_OK)
        return ret;
      service (self);
    }
    buf = g_queue_pop_head (&self->out);
    const gchar *caps_str = gst_mini_object_get_qdata (GST_MINI_OBJECT (buf),
        caps_quark);
    GST_OBJECT_LOCK (self);
    GstCaps *fixed = self->caps ? gst_caps_ref (self->caps) : NULL;
    GST_OBJECT_UNLOCK (self);
    GstCaps *caps = NULL;
    if (fixed) {
      if (self->out_caps_str == NULL) {
        caps = gst_caps_ref (fixed);
        self->out_caps_str = g_strdup ("(caps property)");
      }
      gst_caps_unref (fixed);
    } else if (caps_str && g_strcmp0 (caps_str, self->out_caps_str) != 0) {
      caps = gst_caps_from_string (caps_str);
      if (caps == NULL || !gst_caps_is_fixed (caps)) {
        GST_ELEMENT_WARNING (self, STREAM, FORMAT, (NULL),
            ("the sender's caps '%s' do not parse as fixed caps; keeping the "
                "previous ones", caps_str));
        g_clear_pointer (&caps, gst_caps_unref);
      } else {
        g_free (self->out_caps_str);
        self->out_caps_str = g_strdup (caps_str);
      }
    }
    if (caps) {
      gst_base_src_set_caps (GST_BASE_SRC (self), caps);
      gst_caps_unref (caps);
    }
    if (self->out_caps_str == NULL) {
      /* every copy of this first frame's frame packet was lost: without caps
       * it cannot leave */
      GST_DEBUG_OBJECT (self, "a frame without caps dropped");
      gst_buffer_unref (buf);
      buf = NULL;
      GST_OBJECT_LOCK (self);
      self->frames_decoded--;
      self->frames_lost++;
      GST_OBJECT_UNLOCK (self);
      GstBuffer *next = g_queue_peek_head (&self->out);
      if (next)
        GST_BUFFER_FLAG_SET (next, GST_BUFFER_FLAG_DISCONT);
      else
        self->discont = TRUE;
      continue;
    }
    gst_mini_object_set_qdata (GST_MINI_OBJECT (buf), caps_quark, NULL, NULL);
  }
  *outbuf = buf;
  return GST_FLOW_OK;
}

static gboolean
gst_cstp_src_query (GstBaseSrc * bsrc, GstQuery * query)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    GST_OBJECT_LOCK (self);
    GstClockTime latency = self->latency;
    GST_OBJECT_UNLOCK (self);
    gst_query_set_latency (query, TRUE, latency, latency);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (gst_cstp_src_parent_class)->query (bsrc, query);
}

static gboolean
gst_cstp_src_unlock (GstBaseSrc * bsrc)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);
  g_atomic_int_set (&self->flushing, TRUE);
  if (self->wake[1] >= 0) {
    ssize_t w = write (self->wake[1], "x", 1);
    (void) w;
  }
  return TRUE;
}

static gboolean
gst_cstp_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);
  char drain[64];
  while (self->wake[0] >= 0 && read (self->wake[0], drain, sizeof drain) > 0);
  g_atomic_int_set (&self->flushing, FALSE);
  return TRUE;
}

static void
close_sockets (GstCstpSrc * self)
{
  for (guint s = 0; self->fds && s < self->n_streams; s++)
    if (self->fds[s] >= 0)
      close (self->fds[s]);
  g_clear_pointer (&self->fds, g_free);
  for (int i = 0; i < 2; i++)
    if (self->wake[i] >= 0) {
      close (self->wake[i]);
      self->wake[i] = -1;
    }
}

static gboolean
open_sockets (GstCstpSrc * self, GError ** err)
{
  guint S = self->n_streams;
  gchar **list = NULL;
  if (self->ports && *self->ports) {
    list = g_strsplit (self->ports, ",", -1);
    if (g_strv_length (list) != S) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "ports has %u entries, streams is %u", g_strv_length (list), S);
      g_strfreev (list);
      return FALSE;
    }
  }
  self->fds = g_new (gint, S);
  for (guint s = 0; s < S; s++)
    self->fds[s] = -1;
  for (guint s = 0; s < S; s++) {
    gint port = self->port + (gint) s;
    if (list) {
      gchar *end = NULL;
      port = (gint) g_ascii_strtoll (g_strstrip (list[s]), &end, 10);
      if (!end || *end)
        port = -1;
    }
    if (port < 1 || port > 65535) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "stream %u: port %d is out of range", s, port);
      g_strfreev (list);
      return FALSE;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM,.ai_flags = AI_PASSIVE
    }, *ai = NULL;
    gchar service[8];
    g_snprintf (service, sizeof service, "%d", port);
    int rc = getaddrinfo (self->address, service, &hints, &ai);
    if (rc != 0 || ai == NULL) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "cannot resolve '%s': %s", self->address, gai_strerror (rc));
      g_strfreev (list);
      return FALSE;
    }
    int fd = socket (ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
      int size = self->buffer_size;
      /* beyond rmem_max when allowed to (root), else as much as it gives */
      if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
        setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    }
    if (fd < 0 || bind (fd, ai->ai_addr, ai->ai_addrlen) < 0) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
          "stream %u: cannot bind %s:%d: %s", s, self->address, port,
          g_strerror (errno));
      if (fd >= 0)
        close (fd);
      freeaddrinfo (ai);
      g_strfreev (list);
      return FALSE;
    }
    freeaddrinfo (ai);
    self->fds[s] = fd;
    GST_INFO_OBJECT (self, "stream %u on %s:%d", s, self->address, port);
  }
  g_strfreev (list);
  if (pipe2 (self->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
    g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
        "cannot make a pipe: %s", g_strerror (errno));
    return FALSE;
  }
  return TRUE;
}

static void
reset_state (GstCstpSrc * self)
{
  for (guint i = 0; i < MAX_PENDING; i++) {
    frame_clear (&self->frames[i]);
    g_clear_pointer (&self->frames[i].dec, fountain_frame_decoder_free);
  }
  GstBuffer *b;
  while ((b = g_queue_pop_head (&self->out)))
    gst_buffer_unref (b);
  self->have_next = FALSE;
  self->discont = TRUE;
  self->have_offset = FALSE;
  self->last_pts = self->last_duration = GST_CLOCK_TIME_NONE;
  g_clear_pointer (&self->out_caps_str, g_free);
  g_clear_pointer (&self->loss, g_free);
  self->simulating = FALSE;
  self->cut_stream = -1;
  self->warned = 0;
}

/* The state of a run from the properties, counters at zero (object lock
 * held); the reassembly fuzz target starts its runs here too. */
static void
streaming_state_init (GstCstpSrc * self)
{
  reset_state (self);
  self->n_streams = self->streams;
  self->frame_limit = self->max_frame_size;
  g_free (self->received);
  g_free (self->lost);
  g_free (self->stream_bad);
  g_free (self->simulated);
  self->received = g_new0 (guint64, self->n_streams);
  self->lost = g_new0 (guint64, self->n_streams);
  self->stream_bad = g_new0 (guint64, self->n_streams);
  self->simulated = g_new0 (guint64, self->n_streams);
  self->frames_decoded = self->frames_local = self->frames_repaired = 0;
  self->frames_lost = self->decode_ns = self->decode_ns_max = 0;
  self->bad = self->duplicates = self->late = self->full = 0;
}

static gboolean
gst_cstp_src_start (GstBaseSrc * bsrc)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);
  GError *err = NULL;

  GST_OBJECT_LOCK (self);
  streaming_state_init (self);
  gboolean ok = open_sockets (self, &err);
  gchar *sim = g_strdup (self->simulate_loss);
  GST_OBJECT_UNLOCK (self);
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, (NULL), ("%s",
            err->message));
    g_error_free (err);
    close_sockets (self);
    g_free (sim);
    return FALSE;
  }
  if (sim && *sim && !setup_simulated_loss (self, sim)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, (NULL),
        ("simulate-loss '%s' is not 'loss, seed=N, burst=B, rates=\"r0:r1:..\"'"
            " with one rate in [0, 1) or one per stream, burst >= 1", sim));
    g_free (sim);
    close_sockets (self);
    return FALSE;
  }
  g_free (sim);
  self->rx = g_malloc ((gsize) RECV_BATCH * MAX_DATAGRAM);
  self->flushing = FALSE;
  return TRUE;
}

static gboolean
gst_cstp_src_stop (GstBaseSrc * bsrc)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);
  close_sockets (self);
  reset_state (self);
  g_clear_pointer (&self->rx, g_free);
  return TRUE;
}

static GstCaps *
gst_cstp_src_get_caps (GstBaseSrc * bsrc, GstCaps * filter)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);
  GstCaps *caps;

  GST_OBJECT_LOCK (self);
  caps = self->caps ? gst_caps_ref (self->caps) : gst_caps_new_any ();
  GST_OBJECT_UNLOCK (self);
  if (filter) {
    GstCaps *t = gst_caps_intersect_full (filter, caps,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (caps);
    caps = t;
  }
  return caps;
}

/* ---- GObject boilerplate ------------------------------------------------- */

static GstStructure *
gst_cstp_src_get_stats (GstCstpSrc * self)
{
  GstStructure *s;
  GST_OBJECT_LOCK (self);
  s = gst_structure_new ("application/x-cstp-src-stats",
      "streams", G_TYPE_UINT, self->n_streams,
      "frames-decoded", G_TYPE_UINT64, self->frames_decoded,
      "frames-local", G_TYPE_UINT64, self->frames_local,
      "frames-repaired", G_TYPE_UINT64, self->frames_repaired,
      "frames-lost", G_TYPE_UINT64, self->frames_lost,
      "decode-time", G_TYPE_UINT64, self->decode_ns,
      "decode-time-max", G_TYPE_UINT64, self->decode_ns_max,
      "bad-datagrams", G_TYPE_UINT64, self->bad,
      "duplicates", G_TYPE_UINT64, self->duplicates,
      "late", G_TYPE_UINT64, self->late,
      "overflow", G_TYPE_UINT64, self->full, NULL);
  guint64 received = 0, lost = 0;
  for (guint i = 0; self->received && i < self->n_streams; i++) {
    gchar name[48];
    g_snprintf (name, sizeof name, "stream-%u-received", i);
    gst_structure_set (s, name, G_TYPE_UINT64, self->received[i], NULL);
    g_snprintf (name, sizeof name, "stream-%u-lost", i);
    gst_structure_set (s, name, G_TYPE_UINT64, self->lost[i], NULL);
    g_snprintf (name, sizeof name, "stream-%u-bad", i);
    gst_structure_set (s, name, G_TYPE_UINT64, self->stream_bad[i], NULL);
    g_snprintf (name, sizeof name, "stream-%u-simulated-drops", i);
    gst_structure_set (s, name, G_TYPE_UINT64, self->simulated[i], NULL);
    received += self->received[i];
    lost += self->lost[i];
  }
  gst_structure_set (s, "received", G_TYPE_UINT64, received, "lost",
      G_TYPE_UINT64, lost, NULL);
  GST_OBJECT_UNLOCK (self);
  return s;
}

static void
gst_cstp_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCstpSrc *self = GST_CSTP_SRC (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_STREAMS:
      self->streams = g_value_get_uint (value);
      break;
    case PROP_PORT:
      self->port = g_value_get_int (value);
      break;
    case PROP_PORTS:
      g_free (self->ports);
      self->ports = g_value_dup_string (value);
      break;
    case PROP_ADDRESS:
      g_free (self->address);
      self->address = g_value_dup_string (value);
      break;
    case PROP_LATENCY:
      self->latency = g_value_get_uint64 (value);
      break;
    case PROP_CAPS:
      gst_caps_replace (&self->caps, (GstCaps *) gst_value_get_caps (value));
      break;
    case PROP_BUFFER_SIZE:
      self->buffer_size = g_value_get_int (value);
      break;
    case PROP_MAX_FRAME_SIZE:
      self->max_frame_size = g_value_get_uint (value);
      break;
    case PROP_SIMULATE_LOSS:
      g_free (self->simulate_loss);
      self->simulate_loss = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cstp_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCstpSrc *self = GST_CSTP_SRC (object);

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_cstp_src_get_stats (self));
    return;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_STREAMS:
      g_value_set_uint (value, self->streams);
      break;
    case PROP_PORT:
      g_value_set_int (value, self->port);
      break;
    case PROP_PORTS:
      g_value_set_string (value, self->ports);
      break;
    case PROP_ADDRESS:
      g_value_set_string (value, self->address);
      break;
    case PROP_LATENCY:
      g_value_set_uint64 (value, self->latency);
      break;
    case PROP_CAPS:
      gst_value_set_caps (value, self->caps);
      break;
    case PROP_BUFFER_SIZE:
      g_value_set_int (value, self->buffer_size);
      break;
    case PROP_MAX_FRAME_SIZE:
      g_value_set_uint (value, self->max_frame_size);
      break;
    case PROP_SIMULATE_LOSS:
      g_value_set_string (value, self->simulate_loss);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cstp_src_finalize (GObject * object)
{
  GstCstpSrc *self = GST_CSTP_SRC (object);

  close_sockets (self);
  reset_state (self);
  g_free (self->rx);
  g_free (self->ports);
  g_free (self->address);
  g_free (self->simulate_loss);
  gst_caps_replace (&self->caps, NULL);
  g_free (self->received);
  g_free (self->lost);
  g_free (self->stream_bad);
  g_free (self->simulated);
  G_OBJECT_CLASS (gst_cstp_src_parent_class)->finalize (object);
}

static void
gst_cstp_src_class_init (GstCstpSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_cstp_src_set_property;
  gobject_class->get_property = gst_cstp_src_get_property;
  gobject_class->finalize = gst_cstp_src_finalize;

  g_object_class_install_property (gobject_class, PROP_STREAMS,
      g_param_spec_uint ("streams", "Streams",
          "S: parallel UDP streams, as many as the sender's", 1,
          FOUNTAIN_MAX_STREAMS, DEFAULT_STREAMS, rw));
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port",
          "Base port: stream i arrives on port + i", 1, 65535, DEFAULT_PORT,
          rw));
  g_object_class_install_property (gobject_class, PROP_PORTS,
      g_param_spec_string ("ports", "Ports",
          "One port per stream, comma-separated; overrides port", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_ADDRESS,
      g_param_spec_string ("address", "Address",
          "Local address to listen on", DEFAULT_ADDRESS, rw));
  g_object_class_install_property (gobject_class, PROP_LATENCY,
      g_param_spec_uint64 ("latency", "Latency",
          "Deadline in ns: a frame not decoded this long after its first "
          "packet arrived is dropped (counted in frames-lost; the next buffer "
          "is DISCONT); also added to the timestamps", 0, G_MAXUINT64,
          DEFAULT_LATENCY, rw));
  g_object_class_install_property (gobject_class, PROP_CAPS,
      g_param_spec_boxed ("caps", "Caps",
          "Caps of the output, instead of the ones the sender puts in its "
          "frame packets", GST_TYPE_CAPS, rw));
  g_object_class_install_property (gobject_class, PROP_BUFFER_SIZE,
      g_param_spec_int ("buffer-size", "Buffer size",
          "Kernel receive buffer of every stream's socket, bytes", 0,
          G_MAXINT, DEFAULT_BUFFER_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_MAX_FRAME_SIZE,
      g_param_spec_uint ("max-frame-size", "Maximum frame size",
          "Largest frame accepted, bytes: datagrams of larger frames are "
          "dropped as bad (the decoder holds a whole frame)", 1, G_MAXUINT,
          DEFAULT_MAX_FRAME_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_SIMULATE_LOSS,
      g_param_spec_string ("simulate-loss", "Simulate loss",
          "For tests only: drop arriving datagrams by a seeded model before "
          "anything else sees them, e.g. 'loss, seed=1, burst=6.0, "
          "rates=\"0.05:0.10\"' (Gilbert-Elliott per stream, mean burst "
          "length burst, stationary loss rates, one per stream or one for "
          "all) and 'cut-stream=1, cut-first=30, cut-last=59' (every "
          "datagram of those frames on that stream)", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "frames-decoded, frames-local (every stream from its own packets), "
          "frames-repaired (through pipe packets), frames-lost, decode-time "
          "and decode-time-max (ns), bad-datagrams, duplicates, late, "
          "overflow, received, lost, and per stream stream-<i>-received, "
          "stream-<i>-lost (source packets missing, from the index gaps), "
          "stream-<i>-bad, stream-<i>-simulated-drops", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "CSTP receiver", "Source/Network",
      "Receives frames sent over parallel UDP streams with cross-stream "
      "coding and decodes them across the streams (Liu, Schulze, DeFanti, "
      "\"CSTP: A parallel data transfer protocol using cross-stream "
      "coding\", 2011)", "gst-gpustream");

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_cstp_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_cstp_src_stop);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_cstp_src_unlock);
  basesrc_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cstp_src_unlock_stop);
  basesrc_class->query = GST_DEBUG_FUNCPTR (gst_cstp_src_query);
  basesrc_class->get_caps = GST_DEBUG_FUNCPTR (gst_cstp_src_get_caps);
  pushsrc_class->create = GST_DEBUG_FUNCPTR (gst_cstp_src_create);

  GST_DEBUG_CATEGORY_INIT (gst_cstp_src_debug, "cstpsrc", 0, "CSTP receiver");
}

static void
gst_cstp_src_init (GstCstpSrc * self)
{
  self->streams = DEFAULT_STREAMS;
  self->port = DEFAULT_PORT;
  self->address = g_strdup (DEFAULT_ADDRESS);
  self->latency = DEFAULT_LATENCY;
  self->buffer_size = DEFAULT_BUFFER_SIZE;
  self->max_frame_size = DEFAULT_MAX_FRAME_SIZE;
  self->wake[0] = self->wake[1] = -1;
  self->cut_stream = -1;
  g_queue_init (&self->out);
  gst_base_src_set_live (GST_BASE_SRC (self), TRUE);
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
}
