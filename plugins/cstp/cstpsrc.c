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
 * With `index` and `peers`, the element is one receiver of a display wall:
 * it takes only stream `index` and outputs only its tile (that stream's
 * sub-frame), passes pipe packets with its own part taken out to its peers
 * until each is a repair for the one receiver still short, and exchanges
 * every frame's state with them: a frame leaves every receiver or none
 * (docs/elements/cstp-code.md, section 7). pipelines/cstp-wall.sh runs a
 * wall of 4 tiles on one machine.
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
#include <gst/video/video.h>
#include <fountain/fountain.h>

#include "cstpmulticast.h"
#include "cstppeers.h"
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
/* a stream without a datagram this long, while others arrive, is said to
 * be silent (µs) */
#define SILENT_US (1000 * 1000)
/* a frame whose packets stopped arriving this long ago is tried (µs) */
#define QUIET_US 3000
/* datagrams read per recvmmsg call, and the largest one */
#define RECV_BATCH 32
#define MAX_DATAGRAM 65536
/* a frame this far behind the next one expected: the sender restarted */
#define RESTART_GAP 1024
/* display wall: frames held at once (the barrier waits longer than a lone
 * receiver), finished frames whose outcome the status still repeats, the
 * status interval while frames are pending and when idle (µs), and the
 * silence after which a peer is gone and the barrier stops waiting for it */
#define WALL_PENDING 32
#define WALL_HISTORY 8
#define WALL_RING 64
#define WALL_STATUS_US 5000
#define WALL_HEARTBEAT_US 100000
#define WALL_PEER_TIMEOUT_US 1000000

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
  PROP_INDEX,
  PROP_PEERS,
  PROP_MULTICAST_IFACE,
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

/* A pipe packet on its way through the wall's receivers: its seed, the
 * streams whose part is still in the payload, symbol_size bytes. */
typedef struct
{
  guint32 seed;
  guint64 mask;
  guint8 payload[];
} HeldPipe;

/* What every receiver of the wall said about one frame (FountainWallState
 * per stream, this receiver's own included). */
typedef struct
{
  gboolean used;
  guint32 frame_id;
  guint8 state[FOUNTAIN_MAX_STREAMS];
} WallSlot;

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
  gint64 stream_first[FOUNTAIN_MAX_STREAMS];    /* first datagram per stream */
  guint64 arrived;              /* streams that carried some of it */
  guint sources[FOUNTAIN_MAX_STREAMS];
  guint kept;
  guint64 moved_on;             /* streams that already carry a later frame */
  gboolean dirty;               /* packets since the last decode attempt */
  gboolean decoded;
  FountainDecodeStats dstats;
  /* display wall */
  GPtrArray *pipes;             /* HeldPipe waiting for peers' states */
  gboolean reroute;             /* states changed since pipes were routed */
  gboolean extras;              /* a peer sent an extra repair */
  gboolean peer_repaired;       /* decoded only after it was short */
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
  gint index;
  gchar *peers;
  gchar *multicast_iface;

  /* streaming state */
  guint n_streams;
  guint frame_limit;            /* max-frame-size, as started */
  gint *fds;
  gint wake[2];
  gboolean flushing;
  gboolean idle;                /* the last wait saw no datagram */
  guint8 *rx;                   /* RECV_BATCH * MAX_DATAGRAM */
  Frame frames[WALL_PENDING];
  gboolean have_next;
  guint32 next_id;
  GQueue out;                   /* buffers ready to leave, in order */
  gboolean discont;
  gchar *out_caps_str;
  gboolean have_offset;
  gint64 ts_offset;
  GstClockTime last_pts, last_duration;
  guint32 last_frame_id;
  gboolean simulating;
  LossChannel *loss;
  gint cut_stream;
  guint32 cut_first, cut_last;
  guint warned;                 /* FountainError kinds already posted */
  guint n_socks;                /* S, or 1 on a wall */
  guint pending_limit;
  /* display wall: this receiver's stream (-1: all streams here) */
  gint wall;
  CstpPeers peers_net;           /* the exchange socket, the peers' addresses */
  gint64 *peer_seen;
  WallSlot ring[WALL_RING];
  gboolean status_due;
  gint64 status_sent;
  gboolean have_newest;
  guint32 newest;               /* the latest frame seen on this stream */
  guint wall_warned;
  guint8 *xbuf;

  /* stats (object lock) */
  guint64 frames_decoded, frames_local, frames_repaired, frames_lost;
  guint64 frames_beyond;        /* lost with fewer packets than S x N */
  guint64 skew_max, skew_sum, skew_count;       /* streams' first arrivals */
  guint64 decode_ns, decode_ns_max;
  guint64 bad, duplicates, late, full;
  guint64 *received, *lost, *stream_bad, *simulated;
  gint64 *last_rx;              /* per stream: its last datagram */
  guint64 silent;               /* streams reported silent */
  guint64 frames_peer_repaired, frames_barrier_dropped, exchange_bad;
  guint64 *peer_pipes_sent, *peer_pipes_received, *peer_status_received;
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

/* ---- the data path: the wall's frame states ------------------------------ */

/* The slot of frame fid; with create, a newer frame takes over an older
 * one's slot. NULL for a frame older than the one the slot holds. */
static WallSlot *
wall_slot (GstCstpSrc * self, guint32 fid, gboolean create)
{
  WallSlot *w = &self->ring[fid % WALL_RING];
  if (w->used && w->frame_id == fid)
    return w;
  if (!create || (w->used && (gint32) (fid - w->frame_id) < 0))
    return NULL;
  memset (w, 0, sizeof *w);
  w->used = TRUE;
  w->frame_id = fid;
  return w;
}

static guint8
wall_state (GstCstpSrc * self, guint32 fid, guint stream)
{
  WallSlot *w = wall_slot (self, fid, FALSE);
  return w ? w->state[stream] : FOUNTAIN_WALL_PENDING;
}

/* This receiver's state of frame fid; a dropped frame stays dropped. */
static void
wall_set_own (GstCstpSrc * self, guint32 fid, guint8 state)
{
  WallSlot *w = wall_slot (self, fid, TRUE);
  if (w == NULL || w->state[self->wall] == state
      || w->state[self->wall] == FOUNTAIN_WALL_DROPPED)
    return;
  w->state[self->wall] = state;
  self->status_due = TRUE;
}

static gboolean
wall_peer_alive (GstCstpSrc * self, guint p, gint64 now)
{
  return (gint) p == self->wall
      || (self->peer_seen[p] && now - self->peer_seen[p] < WALL_PEER_TIMEOUT_US);
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
  f->arrived = 0;
  memset (f->sources, 0, sizeof f->sources);
  memset (&f->dstats, 0, sizeof f->dstats);
  if (f->pipes)
    g_ptr_array_set_size (f->pipes, 0);
  f->reroute = f->extras = f->peer_repaired = FALSE;
  /* the decoder stays for the next frame of the same geometry */
}

static Frame *
frame_find (GstCstpSrc * self, guint32 fid)
{
  for (guint i = 0; i < self->pending_limit; i++)
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

/* The caps of a wall's tile: a raw video frame of one plane cut at whole
 * rows is video of the tile's rows; anything else is application/x-cstp-tile
 * naming where the bytes sit in the frame and the frame's caps. */
static gchar *
tile_caps (GstCstpSrc * self, Frame * f, gsize len)
{
  gsize sub = (gsize) f->n * f->k, off = (gsize) self->wall * sub;
  GstCaps *caps = gst_caps_from_string (f->caps);
  GstVideoInfo info;
  gchar *out;
  if (caps && gst_caps_is_fixed (caps) && gst_video_info_from_caps (&info,
          caps) && GST_VIDEO_INFO_N_PLANES (&info) == 1
      && GST_VIDEO_INFO_SIZE (&info) == f->frame_len && len > 0
      && sub % GST_VIDEO_INFO_PLANE_STRIDE (&info, 0) == 0
      && len % GST_VIDEO_INFO_PLANE_STRIDE (&info, 0) == 0) {
    GstCaps *tile = gst_caps_copy (caps);
    gst_caps_set_simple (tile, "height", G_TYPE_INT,
        (gint) (len / GST_VIDEO_INFO_PLANE_STRIDE (&info, 0)), NULL);
    out = gst_caps_to_string (tile);
    gst_caps_unref (tile);
  } else {
    GstStructure *st = gst_structure_new ("application/x-cstp-tile",
        "tile", G_TYPE_INT, self->wall, "tiles", G_TYPE_INT, self->n_streams,
        "offset", G_TYPE_UINT64, (guint64) off, "frame-size", G_TYPE_UINT,
        f->frame_len, "frame-caps", G_TYPE_STRING, f->caps, NULL);
    out = gst_structure_to_string (st);
    gst_structure_free (st);
  }
  if (caps)
    gst_caps_unref (caps);
  return out;
}

/* The decoded frame as a buffer, with the sender's timestamps on our clock. */
static void
frame_emit (GstCstpSrc * self, Frame * f)
{
  gsize sub = (gsize) f->n * f->k;
  GstBuffer *buf;
  GstMapInfo map;
  if (self->wall >= 0) {
    /* the tile: this stream's sub-frame, without the padding past the end
     * of the frame */
    gsize off = (gsize) self->wall * sub;
    gsize len = off < f->frame_len ? MIN (sub, f->frame_len - off) : 0;
    buf = gst_buffer_new_allocate (NULL, len, NULL);
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    if (len)
      memcpy (map.data, fountain_frame_decoder_stream (f->dec, 0), len);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_OFFSET (buf) = f->frame_id;
  } else {
    buf = gst_buffer_new_allocate (NULL, f->frame_len, NULL);
    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    for (guint s = 0; s < f->dec_streams; s++) {
      gsize off = s * sub;
      if (off >= f->frame_len)
        break;
      memcpy (map.data + off, fountain_frame_decoder_stream (f->dec, (int) s),
          MIN (sub, f->frame_len - off));
    }
    gst_buffer_unmap (buf, &map);
  }

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
  } else if (self->wall >= 0 && GST_CLOCK_TIME_IS_VALID (self->last_pts)
      && GST_CLOCK_TIME_IS_VALID (self->last_duration)) {
    /* a tile whose stream lost the frame packet (a cut path): the frames
     * since the last one that left at the sender's spacing, so that the
     * tiles of one frame carry one timestamp on every receiver */
    pts = self->last_pts + (guint32) (f->frame_id - self->last_frame_id)
        * self->last_duration;
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
  if (self->wall >= 0 && !GST_BUFFER_DURATION_IS_VALID (buf))
    GST_BUFFER_DURATION (buf) = self->last_duration;
  self->last_pts = pts;
  self->last_duration = GST_BUFFER_DURATION (buf);
  self->last_frame_id = f->frame_id;
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
        g_quark_from_static_string ("cstp-caps"), self->wall >= 0 ?
        tile_caps (self, f, gst_buffer_get_size (buf)) : g_strdup (f->caps),
        g_free);
  g_queue_push_tail (&self->out, buf);
}

/* The head frame is given up: counted, the next buffer is DISCONT. */
static void
frame_lost (GstCstpSrc * self, Frame * f)
{
  /* fewer distinct code packets than the frame has source symbols: its
   * losses were beyond the redundancy sent, and no code could have
   * recovered it (a wall's receiver sees one stream: not judged there) */
  gboolean beyond = self->wall < 0 && (f == NULL || f->dec == NULL
      || f->kept < (guint) f->dec_streams * f->n);
  GST_OBJECT_LOCK (self);
  self->frames_lost++;
  self->frames_beyond += beyond;
  GST_OBJECT_UNLOCK (self);
  self->discont = TRUE;
  GST_DEBUG_OBJECT (self, "frame %u lost%s", self->next_id, beyond ?
      ", beyond the redundancy" : "");
  /* on a wall the peers learn it and drop the frame too */
  if (self->wall >= 0)
    wall_set_own (self, self->next_id, FOUNTAIN_WALL_DROPPED);
  (void) f;
}

/* Source packets missing per stream: the loss estimate from index gaps. */
static void
frame_count_losses (GstCstpSrc * self, Frame * f)
{
  if (f == NULL || f->dec == NULL)
    return;
  GST_OBJECT_LOCK (self);
  if (self->wall >= 0)
    self->lost[self->wall] += f->n - MIN (f->sources[self->wall], f->n);
  for (guint s = 0; self->wall < 0 && s < self->n_streams
      && s < f->dec_streams; s++)
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
    guint64 all = f->dec_streams == 64 ? ~0ull : (1ull << f->dec_streams) - 1;
    gboolean skewed = self->wall < 0 && f->dec_streams > 1
        && (f->arrived & all) == all;
    gint64 lo = G_MAXINT64, hi = 0;
    for (guint s = 0; skewed && s < f->dec_streams; s++) {
      lo = MIN (lo, f->stream_first[s]);
      hi = MAX (hi, f->stream_first[s]);
    }
    GST_OBJECT_LOCK (self);
    if (skewed) {
      guint64 skew = (guint64) (hi - lo) * 1000;
      self->skew_max = MAX (self->skew_max, skew);
      self->skew_sum += skew;
      self->skew_count++;
    }
    self->frames_decoded++;
    if (f->peer_repaired)
      self->frames_peer_repaired++;
    if (f->dstats.streams_repaired + f->dstats.streams_joint > 0
        || f->peer_repaired)
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

/* A stream that went quiet while the others go on (its sender, or its
 * path, stopped) is said once, and again when it is back. */
static void
check_silent (GstCstpSrc * self, gint64 now)
{
  gint64 newest = 0;
  for (guint s = 0; s < self->n_streams; s++)
    newest = MAX (newest, self->last_rx[s]);
  for (guint s = 0; s < self->n_streams; s++) {
    guint64 bit = 1ull << s;
    gboolean quiet = self->last_rx[s] && now - self->last_rx[s] > SILENT_US
        && now - newest < SILENT_US / 4;
    if (quiet && !(self->silent & bit)) {
      self->silent |= bit;
      GST_ELEMENT_WARNING (self, RESOURCE, READ,
          ("stream %u: nothing arrived for %" G_GINT64_FORMAT " ms while the "
              "other streams do (its sender or its path stopped?): its "
              "sub-frames are lost unless the pipes cover them", s,
              (now - self->last_rx[s]) / 1000), (NULL));
    } else if ((self->silent & bit) && now - self->last_rx[s] < SILENT_US) {
      self->silent &= ~bit;
      GST_ELEMENT_WARNING (self, RESOURCE, READ,
          ("stream %u arrives again", s), (NULL));
    }
  }
}

/* Everything that can leave now, in order. */
static void
service (GstCstpSrc * self)
{
  gint64 now = g_get_monotonic_time ();
  gint64 latency_us = (gint64) (self->latency / 1000);
  if (self->wall < 0)
    check_silent (self, now);
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
      for (guint i = 0; i < self->pending_limit; i++)
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

static void wall_force_head (GstCstpSrc * self);

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
    for (guint i = 0; i < self->pending_limit; i++)
      if (self->frames[i].used)
        frame_clear (&self->frames[i]);
    self->next_id = fid;
    self->discont = TRUE;
    self->have_offset = FALSE;
    d = 0;
  }
  while ((gint32) (fid - self->next_id) >= (gint32) self->pending_limit) {
    if (self->wall >= 0)
      wall_force_head (self);
    else
      advance_head (self, frame_find (self, self->next_id), TRUE);
  }
  Frame *f = frame_find (self, fid);
  if (f)
    return f;
  for (guint i = 0; i < self->pending_limit; i++)
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

/* When each stream's first datagram of the frame came: how far apart the
 * senders' streams arrive (a cluster's synchroniser should keep it small). */
static void
frame_note_arrival (Frame * f, guint s, gint64 now)
{
  if (f && !(f->arrived >> s & 1)) {
    f->arrived |= 1ull << s;
    f->stream_first[s] = now;
  }
}

/* The frame's decoder for this geometry (one stream on a wall): 0, -1 out
 * of memory, -2 when the frame already has another length. */
static int
frame_prepare (GstCstpSrc * self, Frame * f, guint16 n, guint16 k,
    guint32 frame_len)
{
  guint streams = self->wall >= 0 ? 1 : self->n_streams;
  if (f->dec == NULL || f->kept == 0) {
    if (f->dec && (f->dec_streams != streams || f->n != n || f->k != k))
      g_clear_pointer (&f->dec, fountain_frame_decoder_free);
    if (f->dec == NULL) {
      f->dec = fountain_frame_decoder_new ((int) streams, n, k, n + 16);
      if (f->dec == NULL)
        return -1;
      f->dec_streams = streams;
      f->n = n;
      f->k = k;
    }
    fountain_frame_decoder_reset (f->dec, f->frame_id);
    f->frame_len = frame_len;
  } else if (f->frame_len != frame_len) {
    return -2;
  }
  return 0;
}

static void wall_hold (GstCstpSrc * self, Frame * f, HeldPipe * hp);

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
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("stream %u: dropped a datagram that is not a valid CSTP packet (%s); "
            "further ones are only counted (stats: bad-datagrams)", s, what),
        (NULL));
  }
}

static void
mark_moved_on (GstCstpSrc * self, guint s, guint32 fid)
{
  for (guint i = 0; i < self->pending_limit; i++) {
    Frame *f = &self->frames[i];
    if (f->used && (gint32) (fid - f->frame_id) > 0)
      f->moved_on |= 1ull << s;
  }
}

static void
wall_saw (GstCstpSrc * self, guint32 fid)
{
  if (self->wall >= 0 && (!self->have_newest
          || (gint32) (fid - self->newest) > 0)) {
    self->newest = fid;
    self->have_newest = TRUE;
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
  self->last_rx[s] = now;

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
    wall_saw (self, m.frame_id);
    Frame *f = frame_get (self, m.frame_id, now);
    frame_note_arrival (f, s, now);
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
  wall_saw (self, h.frame_id);
  Frame *f = frame_get (self, h.frame_id, now);
  if (f == NULL)
    return;
  frame_note_arrival (f, s, now);
  int prep = frame_prepare (self, f, h.n, h.symbol_size, h.frame_len);
  if (prep != 0) {
    count_bad (self, s, FOUNTAIN_ERR_GEOMETRY, prep == -1 ?
        "no memory for its frame" :
        "frame length differs from the frame's other packets");
    return;
  }
  FountainHeader own = h;
  if (self->wall >= 0) {
    f->last_arrival = now;
    if (h.kind == FOUNTAIN_KIND_PIPE) {
      /* not for this receiver's decoder: it goes round the peers */
      HeldPipe *hp = g_malloc (sizeof *hp + h.symbol_size);
      hp->seed = h.index_or_seed;
      hp->mask = h.pipe_mask;
      memcpy (hp->payload, payload, h.symbol_size);
      wall_hold (self, f, hp);
      return;
    }
    /* the one-stream decoder of the tile */
    own.streams = 1;
    own.stream = 0;
  }
  switch (fountain_frame_decoder_add (f->dec, &own, payload)) {
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

/* ---- the data path: the wall's exchange ---------------------------------- */

static void
count_exchange_bad (GstCstpSrc * self, int err, const gchar * what)
{
  GST_OBJECT_LOCK (self);
  self->exchange_bad++;
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "dropped an exchange datagram: %s", what);
  guint bit = 1u << (MIN ((guint) - err, 30u));
  if (!(self->wall_warned & bit)) {
    self->wall_warned |= bit;
    GST_ELEMENT_WARNING (self, STREAM, DECODE,
        ("dropped a datagram on the peers' port that is not a valid exchange "
            "packet of this wall (%s); further ones are only counted (stats: "
            "exchange-bad)", what), (NULL));
  }
}

static void
wall_send (GstCstpSrc * self, guint p, const guint8 * buf, gsize len)
{
  if (sendto (self->peers_net.fd, buf, len, 0,
          (struct sockaddr *) &self->peers_net.addr[p], self->peers_net.addrlen[p]) < 0)
    GST_LOG_OBJECT (self, "peer %u: %s", p, g_strerror (errno));
}

/* This receiver's state of the last WALL_HISTORY frames that left and of
 * those pending, to every peer: at once when it changed, else every
 * WALL_STATUS_US while frames are pending (a lost status is repeated) and
 * every WALL_HEARTBEAT_US when idle (the peers know it is alive). */
static void
wall_send_status (GstCstpSrc * self, gint64 now, gboolean pending)
{
  gint64 every = pending ? WALL_STATUS_US : WALL_HEARTBEAT_US;
  if (!self->status_due && now - self->status_sent < every)
    return;
  guint8 states[WALL_HISTORY + WALL_PENDING];
  guint32 base = self->have_next ? self->next_id - WALL_HISTORY : 0;
  for (guint j = 0; j < G_N_ELEMENTS (states); j++)
    states[j] = self->have_next ? wall_state (self, base + j, self->wall)
        : FOUNTAIN_WALL_PENDING;
  FountainWallPacket pk = {.type = FOUNTAIN_WALL_STATUS,.streams =
        (guint8) self->n_streams,.from = (guint8) self->wall,.frame_id =
        base,.count = G_N_ELEMENTS (states),.states = states
  };
  int len = fountain_wall_write (&pk, self->xbuf, MAX_DATAGRAM);
  for (guint p = 0; len > 0 && p < self->n_streams; p++)
    if ((gint) p != self->wall)
      wall_send (self, p, self->xbuf, (gsize) len);
  self->status_due = FALSE;
  self->status_sent = now;
}

static void
wall_send_pipe (GstCstpSrc * self, guint p, Frame * f, HeldPipe * hp)
{
  FountainWallPacket pk = {.type = FOUNTAIN_WALL_PIPE,.streams =
        (guint8) self->n_streams,.from = (guint8) self->wall,.frame_id =
        f->frame_id,.n = f->n,.symbol_size = f->k,.frame_len =
        f->frame_len,.seed = hp->seed,.mask = hp->mask,.payload = hp->payload
  };
  int len = fountain_wall_write (&pk, self->xbuf, MAX_DATAGRAM);
  if (len <= 0)
    return;
  wall_send (self, p, self->xbuf, (gsize) len);
  GST_OBJECT_LOCK (self);
  self->peer_pipes_sent[p]++;
  GST_OBJECT_UNLOCK (self);
}

/* A pipe reduced to this receiver's stream alone: one more repair of the
 * tile, with the pipe's component seed (the paper's ExtraBuf). */
static void
wall_add_extra (GstCstpSrc * self, Frame * f, HeldPipe * hp)
{
  FountainHeader h = {.kind = FOUNTAIN_KIND_REPAIR,.streams = 1,.stream =
        0,.frame_id = f->frame_id,.n = f->n,.symbol_size = f->k,.frame_len =
        f->frame_len,.index_or_seed =
        fountain_pipe_component_seed (hp->seed, self->wall)
  };
  if (fountain_frame_decoder_add (f->dec, &h, hp->payload) == FOUNTAIN_ADD_KEPT) {
    f->kept++;
    f->dirty = TRUE;
    f->extras = TRUE;
  }
}

/* Takes this receiver's part out of a pipe packet once its tile decoded,
 * then passes the pipe on: to a receiver of the pipe's streams whose tile
 * decoded (it takes its part out in turn), or, once only one short stream
 * is left in it, to that stream's receiver as an extra repair. Only pipes
 * that can help a short stream travel. TRUE: keep it, a state it depends on
 * is not known yet. */
static gboolean
wall_route (GstCstpSrc * self, Frame * f, HeldPipe * hp)
{
  guint me = (guint) self->wall, S = self->n_streams;
  guint64 mine = 1ull << me;
  gint64 now = g_get_monotonic_time ();
  guint64 decoded = 0, shorts = 0, unknown = 0;
  for (guint t = 0; t < S; t++) {
    guint64 bit = 1ull << t;
    /* a gone peer can neither take its part out nor use the pipe */
    if (!(hp->mask & bit) || !wall_peer_alive (self, t, now))
      continue;
    guint8 st = wall_state (self, f->frame_id, t);
    if (st == FOUNTAIN_WALL_DECODED)
      decoded |= bit;
    else if (st == FOUNTAIN_WALL_SHORT)
      shorts |= bit;
    else if (st == FOUNTAIN_WALL_PENDING)
      unknown |= bit;
  }
  if (shorts == 0)
    return unknown != 0;
  if ((hp->mask & mine) && f->decoded) {
    /* only for a pipe a short stream needs: the part costs a pass over
     * the tile */
    guint8 *part = g_malloc (f->k);
    guint32 seed = fountain_pipe_component_seed (hp->seed, (int) me);
    if (fountain_encode_repairs (f->n, f->k, fountain_frame_decoder_stream
            (f->dec, 0), 1, &seed, &part) != 0) {
      g_free (part);
      return FALSE;
    }
    for (guint i = 0; i < f->k; i++)
      hp->payload[i] ^= part[i];
    g_free (part);
    hp->mask &= ~mine;
  }
  decoded &= ~mine;
  if (decoded) {
    /* the next decoded stream after this one, so the work spreads */
    for (guint i = 1; i <= S; i++) {
      guint t = (me + i) % S;
      if (decoded & (1ull << t)) {
        wall_send_pipe (self, t, f, hp);
        return FALSE;
      }
    }
  }
  if (unknown)
    return TRUE;
  /* a gone or dropped stream left in it, or two short ones (no receiver
   * holds both): it cannot become a repair */
  if (shorts != hp->mask || (shorts & (shorts - 1)) != 0)
    return FALSE;
  if (shorts == mine)
    wall_add_extra (self, f, hp);
  else
    wall_send_pipe (self, (guint) g_bit_nth_lsf (shorts, -1), f, hp);
  return FALSE;
}

static void
wall_hold (GstCstpSrc * self, Frame * f, HeldPipe * hp)
{
  if (!wall_route (self, f, hp)) {
    g_free (hp);
    return;
  }
  if (f->pipes == NULL)
    f->pipes = g_ptr_array_new_with_free_func (g_free);
  /* a peer must not make a frame hold unbounded memory */
  if (f->pipes->len >= 2 * ((guint) f->n + 16)) {
    GST_OBJECT_LOCK (self);
    self->full++;
    GST_OBJECT_UNLOCK (self);
    g_free (hp);
    return;
  }
  g_ptr_array_add (f->pipes, hp);
}

static void
wall_reroute (GstCstpSrc * self, Frame * f)
{
  f->reroute = FALSE;
  for (guint i = f->pipes ? f->pipes->len : 0; i > 0; i--)
    if (!wall_route (self, f, g_ptr_array_index (f->pipes, i - 1)))
      g_ptr_array_remove_index_fast (f->pipes, i - 1);
}

static void
handle_exchange (GstCstpSrc * self, const guint8 * data, gsize len,
    const struct sockaddr_storage *from, gint64 now)
{
  FountainWallPacket pk;
  int err = fountain_wall_parse (data, len, &pk);
  if (err != FOUNTAIN_OK) {
    count_exchange_bad (self, err, fountain_error_string (err));
    return;
  }
  if (pk.streams != self->n_streams || (gint) pk.from == self->wall) {
    count_exchange_bad (self, FOUNTAIN_ERR_STREAMS, "another stream count, "
        "or this receiver's own index");
    return;
  }
  if (!cstp_same_address (from, &self->peers_net.addr[pk.from])) {
    count_exchange_bad (self, FOUNTAIN_ERR_MAGIC, "sent from an address that "
        "is not the one peers gives for its index");
    return;
  }
  self->peer_seen[pk.from] = now;
  if (pk.type == FOUNTAIN_WALL_STATUS) {
    GST_OBJECT_LOCK (self);
    self->peer_status_received[pk.from]++;
    GST_OBJECT_UNLOCK (self);
    for (guint j = 0; j < pk.count; j++) {
      guint32 fid = pk.frame_id + j;
      if (pk.states[j] == FOUNTAIN_WALL_PENDING)
        continue;
      WallSlot *w = wall_slot (self, fid, TRUE);
      if (w == NULL || w->state[pk.from] == pk.states[j])
        continue;
      w->state[pk.from] = pk.states[j];
      Frame *f = frame_find (self, fid);
      if (f)
        f->reroute = TRUE;
    }
    return;
  }
  GST_OBJECT_LOCK (self);
  self->peer_pipes_received[pk.from]++;
  GST_OBJECT_UNLOCK (self);
  if (pk.frame_len > self->frame_limit) {
    count_exchange_bad (self, FOUNTAIN_ERR_GEOMETRY,
        "frame larger than max-frame-size");
    return;
  }
  Frame *f = frame_get (self, pk.frame_id, now);
  if (f == NULL)
    return;
  if (f->first_arrival == now && self->have_newest
      && (gint32) (self->newest - pk.frame_id) > 0) {
    /* nothing of it came on this stream, a later frame did: its deadline
     * runs from the arrival of the next frame that came, as for a frame
     * of which nothing came at all, not from the peers' help */
    for (guint i = 0; i < self->pending_limit; i++)
      if (self->frames[i].used
          && (gint32) (self->frames[i].frame_id - pk.frame_id) > 0)
        f->first_arrival = MIN (f->first_arrival,
            self->frames[i].first_arrival);
  }
  if (frame_prepare (self, f, pk.n, pk.symbol_size, pk.frame_len) != 0
      || f->n != pk.n || f->k != pk.symbol_size) {
    count_exchange_bad (self, FOUNTAIN_ERR_GEOMETRY,
        "pipe geometry differs from the frame's packets");
    return;
  }
  HeldPipe *hp = g_malloc (sizeof *hp + pk.symbol_size);
  hp->seed = pk.seed;
  hp->mask = pk.mask;
  memcpy (hp->payload, pk.payload, pk.symbol_size);
  wall_hold (self, f, hp);
}

static void
wall_drop_head (GstCstpSrc * self, Frame * f)
{
  frame_count_losses (self, f);
  frame_lost (self, f);
  if (f)
    frame_clear (f);
  self->next_id++;
}

/* No room for a frame far ahead: the head frame leaves only if the barrier
 * lets it, else it is dropped (and the peers learn it). */
static void
wall_force_head (GstCstpSrc * self)
{
  gint64 now = g_get_monotonic_time ();
  Frame *f = frame_find (self, self->next_id);
  gboolean own = f && f->decoded, ready = own;
  for (guint p = 0; p < self->n_streams; p++)
    if ((gint) p != self->wall && wall_peer_alive (self, p, now))
      ready &= wall_state (self, self->next_id, p) == FOUNTAIN_WALL_DECODED;
  if (ready) {
    advance_head (self, f, FALSE);
    return;
  }
  if (own) {
    GST_OBJECT_LOCK (self);
    self->frames_barrier_dropped++;
    GST_OBJECT_UNLOCK (self);
  }
  wall_drop_head (self, f);
}

/* The wall's barrier: the head frame leaves once this tile and every live
 * peer's decoded; it is dropped when a peer dropped it, when this tile has
 * not decoded `latency` after the frame's first datagram, or when a peer
 * has not decided twice that long after it. A receiver decides by its own
 * deadline, so its peers, which wait twice as long, hear its decision:
 * every receiver outputs the frame, or none. */
static void
wall_service (GstCstpSrc * self)
{
  gint64 now = g_get_monotonic_time ();
  gint64 latency_us = (gint64) (self->latency / 1000);
  guint me = (guint) self->wall;
  guint64 mine = 1ull << me;
  gboolean pending = FALSE;

  for (guint i = 0; i < self->pending_limit; i++) {
    Frame *f = &self->frames[i];
    if (!f->used)
      continue;
    pending = TRUE;
    guint8 st = wall_state (self, f->frame_id, me);
    gboolean due = f->dec && (f->sources[me] >= f->n || (f->moved_on & mine)
        || (self->idle && now - f->last_arrival > QUIET_US));
    if (f->dec && !f->decoded && ((st == FOUNTAIN_WALL_PENDING && due)
            || (st == FOUNTAIN_WALL_SHORT && f->dirty))) {
      if (frame_try_decode (self, f)) {
        f->peer_repaired = f->extras;
        wall_set_own (self, f->frame_id, FOUNTAIN_WALL_DECODED);
        f->reroute = TRUE;
      } else if (st == FOUNTAIN_WALL_PENDING) {
        wall_set_own (self, f->frame_id, FOUNTAIN_WALL_SHORT);
        f->reroute = TRUE;
      }
    }
    if (f->reroute)
      wall_reroute (self, f);
  }
  /* a frame of which nothing came on this stream while a later one did (a
   * cut path): short of every symbol, so the peers send what they can */
  for (guint32 fid = self->next_id; self->have_next && self->have_newest
      && (gint32) (self->newest - fid) > 0
      && (gint32) (fid - self->next_id) < (gint32) self->pending_limit; fid++)
    if (frame_find (self, fid) == NULL
        && wall_state (self, fid, me) == FOUNTAIN_WALL_PENDING)
      wall_set_own (self, fid, FOUNTAIN_WALL_SHORT);

  while (self->have_next) {
    guint32 fid = self->next_id;
    Frame *f = frame_find (self, fid);
    gint64 first = f ? f->first_arrival : G_MAXINT64;
    for (guint i = 0; f == NULL && i < self->pending_limit; i++)
      if (self->frames[i].used)
        first = MIN (first, self->frames[i].first_arrival);
    if (first == G_MAXINT64)
      break;
    guint8 own = wall_state (self, fid, me);
    gboolean dropped = FALSE, ready = own == FOUNTAIN_WALL_DECODED && f
        && f->decoded;
    for (guint p = 0; p < self->n_streams; p++) {
      if (p == me || !wall_peer_alive (self, p, now))
        continue;
      guint8 st = wall_state (self, fid, p);
      dropped |= st == FOUNTAIN_WALL_DROPPED;
      ready &= st == FOUNTAIN_WALL_DECODED;
    }
    if (ready) {
      GST_DEBUG_OBJECT (self, "frame %u leaves: every live peer's tile "
          "decoded", fid);
      advance_head (self, f, FALSE);
      continue;
    }
    gint64 age = now - first;
    if (dropped || (age > latency_us && own != FOUNTAIN_WALL_DECODED)
        || age > 2 * latency_us) {
      if (own == FOUNTAIN_WALL_DECODED) {
        GST_OBJECT_LOCK (self);
        self->frames_barrier_dropped++;
        GST_OBJECT_UNLOCK (self);
      }
      GST_DEBUG_OBJECT (self, "frame %u dropped by the barrier (own state %u, "
          "a peer dropped it: %d)", fid, own, dropped);
      wall_drop_head (self, f);
      continue;
    }
    break;
  }
  wall_send_status (self, now, pending);
}

/* Waits up to timeout_ms for datagrams and takes in all that are there. */
static GstFlowReturn
receive (GstCstpSrc * self, int timeout_ms)
{
  /* the streams' sockets (one on a wall), the peers' socket on a wall,
   * then the wake-up pipe */
  guint S = self->n_socks, npfd = S;
  struct pollfd pfd[FOUNTAIN_MAX_STREAMS + 2];
  for (guint j = 0; j < S; j++) {
    pfd[j].fd = self->fds[j];
    pfd[j].events = POLLIN;
  }
  if (self->wall >= 0) {
    pfd[npfd].fd = self->peers_net.fd;
    pfd[npfd++].events = POLLIN;
  }
  pfd[npfd].fd = self->wake[0];
  pfd[npfd++].events = POLLIN;
  int n = poll (pfd, npfd, timeout_ms);
  self->idle = TRUE;
  for (guint j = 0; n > 0 && j < S; j++)
    self->idle &= !(pfd[j].revents & POLLIN);
  if (n < 0 && errno != EINTR) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("poll failed: %s", g_strerror (errno)), (NULL));
    return GST_FLOW_ERROR;
  }
  if (n <= 0)
    return GST_FLOW_OK;
  if (pfd[npfd - 1].revents)
    return GST_FLOW_FLUSHING;
  if (self->wall >= 0 && (pfd[S].revents & POLLIN)) {
    for (int turn = 0; turn < 256; turn++) {
      struct sockaddr_storage from;
      socklen_t fromlen = sizeof from;
      memset (&from, 0, sizeof from);
      ssize_t got = recvfrom (self->peers_net.fd, self->rx, MAX_DATAGRAM,
          MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &from, &fromlen);
      if (got < 0)
        break;
      if (got > MAX_DATAGRAM)
        count_exchange_bad (self, FOUNTAIN_ERR_LENGTH, "longer than any "
            "exchange packet");
      else
        handle_exchange (self, self->rx, (gsize) got, &from,
            g_get_monotonic_time ());
    }
  }
  struct mmsghdr msgs[RECV_BATCH];
  struct iovec iov[RECV_BATCH];
  for (guint j = 0; j < S; j++) {
    guint s = self->wall >= 0 ? (guint) self->wall : j;
    if (!(pfd[j].revents & POLLIN))
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
      int got = recvmmsg (self->fds[j], msgs, RECV_BATCH, MSG_DONTWAIT, NULL);
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
      for (guint i = 0; i < self->pending_limit; i++)
        pending |= self->frames[i].used;
      GstFlowReturn ret = receive (self, pending ? 2 : 100);
      if (ret != GST_FLOW_OK)
        return ret;
      if (self->wall >= 0)
        wall_service (self);
      else
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
        GST_ELEMENT_WARNING (self, STREAM, FORMAT,
            ("the sender's caps '%s' do not parse as fixed caps; keeping the "
                "previous ones", caps_str), (NULL));
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
  for (guint j = 0; self->fds && j < self->n_socks; j++)
    if (self->fds[j] >= 0)
      close (self->fds[j]);
  g_clear_pointer (&self->fds, g_free);
  /* stats read peer_seen under the lock */
  GST_OBJECT_LOCK (self);
  cstp_peers_close (&self->peers_net);
  g_clear_pointer (&self->peer_seen, g_free);
  GST_OBJECT_UNLOCK (self);
  for (int i = 0; i < 2; i++)
    if (self->wake[i] >= 0) {
      close (self->wake[i]);
      self->wake[i] = -1;
    }
}

/* peers: one host:port per stream, the receiver of stream i at entry i;
 * this receiver's own entry gives the port its exchange socket binds (on
 * `address`). */
static gboolean
open_peers (GstCstpSrc * self, GError ** err)
{
  self->peer_seen = g_new0 (gint64, self->n_streams);
  return cstp_peers_open (&self->peers_net, self->peers, self->n_streams,
      (guint) self->wall, self->address, self->buffer_size, "receiver", err);
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
  self->fds = g_new (gint, self->n_socks);
  for (guint j = 0; j < self->n_socks; j++)
    self->fds[j] = -1;
  for (guint j = 0; j < self->n_socks; j++) {
    /* on a wall only this receiver's stream */
    guint s = self->wall >= 0 ? (guint) self->wall : j;
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
    gboolean group = cstp_address_is_multicast (ai->ai_addr);
    if (fd >= 0) {
      int size = self->buffer_size, on = 1;
      /* beyond rmem_max when allowed to (root), else as much as it gives */
      if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
        setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
      /* a group's port is shared by every receiver of it on this host;
       * bound to the group's address, the socket takes only its datagrams */
      if (group)
        setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
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
    if (group && !cstp_multicast_join (fd, ai->ai_addr,
            self->multicast_iface, err)) {
      g_prefix_error (err, "stream %u, %s:%d: ", s, self->address, port);
      close (fd);
      freeaddrinfo (ai);
      g_strfreev (list);
      return FALSE;
    }
    freeaddrinfo (ai);
    self->fds[j] = fd;
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
  for (guint i = 0; i < WALL_PENDING; i++) {
    frame_clear (&self->frames[i]);
    g_clear_pointer (&self->frames[i].dec, fountain_frame_decoder_free);
    g_clear_pointer (&self->frames[i].pipes, g_ptr_array_unref);
  }
  memset (self->ring, 0, sizeof self->ring);
  self->status_due = FALSE;
  self->status_sent = 0;
  self->have_newest = FALSE;
  self->wall_warned = 0;
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
  g_free (self->last_rx);
  self->last_rx = g_new0 (gint64, self->n_streams);
  self->silent = 0;
  self->received = g_new0 (guint64, self->n_streams);
  self->lost = g_new0 (guint64, self->n_streams);
  self->stream_bad = g_new0 (guint64, self->n_streams);
  self->simulated = g_new0 (guint64, self->n_streams);
  self->frames_decoded = self->frames_local = self->frames_repaired = 0;
  self->frames_lost = self->decode_ns = self->decode_ns_max = 0;
  self->frames_beyond = 0;
  self->skew_max = self->skew_sum = self->skew_count = 0;
  self->bad = self->duplicates = self->late = self->full = 0;
  g_free (self->peer_pipes_sent);
  g_free (self->peer_pipes_received);
  g_free (self->peer_status_received);
  self->peer_pipes_sent = g_new0 (guint64, self->n_streams);
  self->peer_pipes_received = g_new0 (guint64, self->n_streams);
  self->peer_status_received = g_new0 (guint64, self->n_streams);
  self->frames_peer_repaired = self->frames_barrier_dropped = 0;
  self->exchange_bad = 0;
  self->wall = self->index;
  self->n_socks = self->wall >= 0 ? 1 : self->n_streams;
  self->pending_limit = self->wall >= 0 ? WALL_PENDING : MAX_PENDING;
}

static gboolean
gst_cstp_src_start (GstBaseSrc * bsrc)
{
  GstCstpSrc *self = GST_CSTP_SRC (bsrc);
  GError *err = NULL;

  GST_OBJECT_LOCK (self);
  streaming_state_init (self);
  gboolean ok = TRUE;
  if (self->wall >= (gint) self->n_streams) {
    g_set_error (&err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "index %d is not a stream: streams is %u", self->wall,
        self->n_streams);
    ok = FALSE;
  }
  ok = ok && open_sockets (self, &err);
  ok = ok && (self->wall < 0 || open_peers (self, &err));
  gchar *sim = g_strdup (self->simulate_loss);
  GST_OBJECT_UNLOCK (self);
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("%s",
            err->message), (NULL));
    g_error_free (err);
    close_sockets (self);
    g_free (sim);
    return FALSE;
  }
  if (sim && *sim && !setup_simulated_loss (self, sim)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("simulate-loss '%s' is not 'loss, seed=N, burst=B, rates=\"r0:r1:..\"'"
            " with one rate in [0, 1) or one per stream, burst >= 1", sim),
        (NULL));
    g_free (sim);
    close_sockets (self);
    return FALSE;
  }
  g_free (sim);
  self->rx = g_malloc ((gsize) RECV_BATCH * MAX_DATAGRAM);
  self->xbuf = g_malloc (MAX_DATAGRAM);
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
  g_clear_pointer (&self->xbuf, g_free);
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
      "frames-beyond-redundancy", G_TYPE_UINT64, self->frames_beyond,
      "arrival-skew-max", G_TYPE_UINT64, self->skew_max,
      "arrival-skew-mean", G_TYPE_UINT64, self->skew_count ?
      self->skew_sum / self->skew_count : 0,
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
  if (self->wall >= 0) {
    gint64 now = g_get_monotonic_time ();
    guint alive = 0;
    gst_structure_set (s, "index", G_TYPE_INT, self->wall,
        "frames-peer-repaired", G_TYPE_UINT64, self->frames_peer_repaired,
        "frames-barrier-dropped", G_TYPE_UINT64,
        self->frames_barrier_dropped, "exchange-bad", G_TYPE_UINT64,
        self->exchange_bad, NULL);
    for (guint p = 0; p < self->n_streams; p++) {
      gchar name[48];
      if ((gint) p == self->wall)
        continue;
      g_snprintf (name, sizeof name, "peer-%u-pipes-sent", p);
      gst_structure_set (s, name, G_TYPE_UINT64, self->peer_pipes_sent[p],
          NULL);
      g_snprintf (name, sizeof name, "peer-%u-pipes-received", p);
      gst_structure_set (s, name, G_TYPE_UINT64,
          self->peer_pipes_received[p], NULL);
      g_snprintf (name, sizeof name, "peer-%u-status-received", p);
      gst_structure_set (s, name, G_TYPE_UINT64,
          self->peer_status_received[p], NULL);
      if (self->peer_seen && wall_peer_alive (self, p, now))
        alive++;
    }
    gst_structure_set (s, "peers-alive", G_TYPE_UINT, alive, NULL);
  }
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
    case PROP_INDEX:
      self->index = g_value_get_int (value);
      break;
    case PROP_PEERS:
      g_free (self->peers);
      self->peers = g_value_dup_string (value);
      break;
    case PROP_MULTICAST_IFACE:
      g_free (self->multicast_iface);
      self->multicast_iface = g_value_dup_string (value);
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
    case PROP_INDEX:
      g_value_set_int (value, self->index);
      break;
    case PROP_PEERS:
      g_value_set_string (value, self->peers);
      break;
    case PROP_MULTICAST_IFACE:
      g_value_set_string (value, self->multicast_iface);
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
  g_free (self->peers);
  g_free (self->multicast_iface);
  g_free (self->xbuf);
  g_free (self->peer_pipes_sent);
  g_free (self->peer_pipes_received);
  g_free (self->peer_status_received);
  gst_caps_replace (&self->caps, NULL);
  g_free (self->received);
  g_free (self->lost);
  g_free (self->stream_bad);
  g_free (self->simulated);
  g_free (self->last_rx);
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
  g_object_class_install_property (gobject_class, PROP_INDEX,
      g_param_spec_int ("index", "Index",
          "Display wall: the one stream this receiver takes (on port + "
          "index, or entry index of ports) and outputs as its tile, "
          "exchanging pipe packets and frame states with the receivers in "
          "peers; -1 receives every stream here and outputs whole frames",
          -1, FOUNTAIN_MAX_STREAMS - 1, -1, rw));
  g_object_class_install_property (gobject_class, PROP_PEERS,
      g_param_spec_string ("peers", "Peers",
          "Display wall: host:port of every receiver's exchange socket, "
          "comma-separated, the receiver of stream i at entry i (this "
          "one's own entry is the port it listens on for its peers)", NULL,
          rw));
  g_object_class_install_property (gobject_class, PROP_MULTICAST_IFACE,
      g_param_spec_string ("multicast-iface", "Multicast interface",
          "When address is a multicast group: the network interface to join "
          "it on, by name (none: the routing table's)", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "frames-decoded, frames-local (every stream from its own packets), "
          "frames-repaired (through pipe packets), frames-lost, "
          "frames-beyond-redundancy (lost frames of which fewer code packets "
          "arrived than the frame has source symbols: beyond what any code "
          "could recover; not judged on a display wall), arrival-skew-max "
          "and arrival-skew-mean (ns between the first datagrams of a "
          "decoded frame's first and last stream), decode-time "
          "and decode-time-max (ns), bad-datagrams, duplicates, late, "
          "overflow, received, lost, and per stream stream-<i>-received, "
          "stream-<i>-lost (source packets missing, from the index gaps), "
          "stream-<i>-bad, stream-<i>-simulated-drops; on a display wall "
          "also index, frames-peer-repaired (the tile decoded with pipe "
          "packets its peers reduced), frames-barrier-dropped (the tile "
          "decoded but a peer's did not), exchange-bad, peers-alive, and per "
          "peer peer-<i>-pipes-sent, peer-<i>-pipes-received, "
          "peer-<i>-status-received", GST_TYPE_STRUCTURE,
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
  self->peers_net.fd = -1;
  self->index = -1;
  self->wall = -1;
  self->n_socks = self->pending_limit = 0;
  self->cut_stream = -1;
  g_queue_init (&self->out);
  gst_base_src_set_live (GST_BASE_SRC (self), TRUE);
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
}
