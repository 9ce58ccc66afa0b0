/* cstpcluster: see cstpcluster.h. One thread per sender receives the
 * exchange (parts, ready, release) and, on the master, releases frames;
 * the streaming thread offers a frame's parts and waits in collect. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fountain/fountain.h>
#include <rlnc/rlnc_seed.h>

#include "cstpcluster.h"
#include "cstppeers.h"

GST_DEBUG_CATEGORY_STATIC (cstp_cluster_debug);
#define GST_CAT_DEFAULT cstp_cluster_debug

/* frames a sender keeps state for, from the one it sends next */
#define WINDOW 16
/* the first frame waits this long for every sender (they start apart) */
#define STARTUP_US (5 * G_USEC_PER_SEC)
/* a sender without the release repeats its ready this often */
#define READY_REPEAT_US (20 * 1000)
#define TICK_MS 5
#define MAX_DATAGRAM 65535

typedef struct
{
  gboolean used;
  guint32 frame_id;
  gboolean have_geometry;
  guint16 n, k;
  guint32 frame_len, red;
  guint8 **acc;                 /* red: the parts of own pipe r added up */
  guint64 *got;                 /* red: the senders whose part is in acc */
  gboolean released;
  guint64 senders;              /* the release's senders */
  /* master */
  guint64 ready;
  gint64 first_ready, last_ready;
} Slot;

struct _CstpCluster
{
  GstElement *element;
  CstpClusterConfig cfg;
  gchar *peers_str;
  CstpPeers peers;
  gint wake[2];
  GThread *thread;

  GMutex lock;
  GCond cond;
  gboolean stopping, flushing;
  Slot slots[WINDOW];
  guint32 base;                 /* the next frame collect takes */
  gboolean started;             /* master: a frame was released */
  guint64 alive;                /* master: the senders waited for */
  gint64 *seen;                 /* per peer: its last valid message */
  guint64 silent;               /* peers reported without parts */
  gboolean master_silent;
  GPtrArray *warnings;          /* posted once the lock is dropped */
  guint8 *rx;

  /* stats */
  guint64 frames, parts_sent, parts_received, bytes_sent, bytes_received;
  guint64 bound_bytes, bad, duplicates, late, parts_missing;
  guint64 frames_partial, frames_unsynchronised;
  guint64 skew_last, skew_max, skew_sum, skew_count;
  guint64 wait_max, wait_sum;
};

guint32
cstp_redundancy_seed (guint32 frame_id, guint stream, guint32 r)
{
  return (guint32) rlnc_seed_mix64 (frame_id) ^ ((guint32) stream << 24 | r);
}

static guint64
all_senders (const CstpCluster * c)
{
  return c->cfg.streams == 64 ? ~0ull : (1ull << c->cfg.streams) - 1;
}

static void
warn (CstpCluster * c, gchar * text)
{
  g_ptr_array_add (c->warnings, text);
}

/* Posts the warnings gathered under the lock (a bus handler may read our
 * stats, which takes it). */
static void
post_warnings (CstpCluster * c)
{
  GPtrArray *w;
  g_mutex_lock (&c->lock);
  w = c->warnings;
  c->warnings = g_ptr_array_new_with_free_func (g_free);
  g_mutex_unlock (&c->lock);
  for (guint i = 0; i < w->len; i++)
    GST_ELEMENT_WARNING (c->element, RESOURCE, READ, ("%s",
            (const gchar *) g_ptr_array_index (w, i)), (NULL));
  g_ptr_array_unref (w);
}

static void
slot_clear (Slot * s)
{
  for (guint32 r = 0; s->acc && r < s->red; r++)
    g_free (s->acc[r]);
  g_clear_pointer (&s->acc, g_free);
  g_clear_pointer (&s->got, g_free);
  memset (s, 0, sizeof *s);
}

/* The slot of a frame inside the window, made when absent; NULL for a frame
 * before it (late) or beyond it. */
static Slot *
slot_for (CstpCluster * c, guint32 frame_id, gboolean * late)
{
  guint32 ahead = frame_id - c->base;
  *late = ahead >= G_MAXUINT32 / 2;
  if (ahead >= WINDOW)
    return NULL;
  Slot *s = &c->slots[frame_id % WINDOW];
  if (!s->used || s->frame_id != frame_id) {
    slot_clear (s);
    s->used = TRUE;
    s->frame_id = frame_id;
  }
  return s;
}

static void
slot_set_geometry (CstpCluster * c, Slot * s, guint16 n, guint16 k,
    guint32 frame_len)
{
  s->have_geometry = TRUE;
  s->n = n;
  s->k = k;
  s->frame_len = frame_len;
  s->red = (guint32) ceil (n * c->cfg.overhead);
  s->acc = g_new0 (guint8 *, MAX (s->red, 1));
  s->got = g_new0 (guint64, MAX (s->red, 1));
}

static void
send_to (CstpCluster * c, guint peer, const FountainClusterPacket * p,
    guint8 * buf)
{
  int len = fountain_cluster_write (p, buf, MAX_DATAGRAM);
  if (len < 0)
    return;
  if (sendto (c->peers.fd, buf, (size_t) len, 0,
          (struct sockaddr *) &c->peers.addr[peer], c->peers.addrlen[peer]) < 0)
    GST_LOG ("exchange to sender %u: %s", peer, g_strerror (errno));
  else if (p->type == FOUNTAIN_CLUSTER_PART) {
    c->parts_sent++;
    c->bytes_sent += (guint64) len;
  }
}

static void
send_control (CstpCluster * c, guint peer, guint8 type, const Slot * s,
    guint64 senders)
{
  guint8 buf[FOUNTAIN_CLUSTER_RELEASE_SIZE];
  FountainClusterPacket p = {.type = type,.streams = (guint8) c->cfg.streams,
    .from = (guint8) c->cfg.index,.frame_id = s->frame_id,.n = s->n,
    .symbol_size = s->k,.frame_len = s->frame_len,.senders = senders
  };
  send_to (c, peer, &p, buf);
}

/* The master releases slot s to the senders that have it; the others are
 * not waited for until they are ready again. */
static void
release (CstpCluster * c, Slot * s, gint64 now)
{
  guint S = c->cfg.streams;
  GST_DEBUG ("frame %u released to senders 0x%" G_GINT64_MODIFIER "x",
      s->frame_id, s->ready);
  s->released = TRUE;
  s->senders = s->ready;
  guint64 stopped = c->alive & ~s->ready;
  for (guint t = 0; t < S; t++) {
    if (stopped >> t & 1)
      warn (c, g_strdup_printf ("sender %u sent nothing for frame %u within "
              "%" G_GINT64_FORMAT " ms: released without it, its stream and "
              "its parts of the pipes are missing until it is back", t,
              s->frame_id, c->cfg.timeout_us / 1000));
  }
  c->alive &= ~stopped;
  if (s->ready == all_senders (c)) {
    guint64 skew = (guint64) (s->last_ready - s->first_ready) * 1000;
    c->skew_last = skew;
    c->skew_max = MAX (c->skew_max, skew);
    c->skew_sum += skew;
    c->skew_count++;
  } else {
    c->frames_partial++;
  }
  c->started = TRUE;
  for (guint t = 0; t < S; t++)
    if (t != c->cfg.index && (s->ready >> t & 1))
      send_control (c, t, FOUNTAIN_CLUSTER_RELEASE, s, s->senders);
  g_cond_broadcast (&c->cond);
  (void) now;
}

/* Master: every frame that all the senders waited for have, or whose wait
 * is over, leaves. */
static void
master_check (CstpCluster * c, gint64 now)
{
  if (c->cfg.index != 0)
    return;
  for (guint i = 0; i < WINDOW; i++) {
    Slot *s = &c->slots[i];
    if (!s->used || s->released || s->ready == 0)
      continue;
    guint64 need = c->started ? c->alive : all_senders (c);
    gint64 wait = c->started ? c->cfg.timeout_us : STARTUP_US;
    if ((s->ready & need) == need || now - s->first_ready > wait)
      release (c, s, now);
  }
}

static void
note_ready (CstpCluster * c, Slot * s, guint from, gint64 now)
{
  GST_LOG ("frame %u: sender %u ready", s->frame_id, from);
  if (s->ready == 0)
    s->first_ready = now;
  s->ready |= 1ull << from;
  s->last_ready = MAX (s->last_ready, now);
}

static void
count_bad (CstpCluster * c, const gchar * why)
{
  if (c->bad++ == 0)
    warn (c, g_strdup_printf ("dropped a datagram on the senders' exchange "
            "port: %s (further ones are counted in exchange-bad)", why));
  GST_DEBUG ("exchange datagram dropped: %s", why);
}

static void
handle (CstpCluster * c, const guint8 * data, gsize len,
    const struct sockaddr_storage *from, gint64 now)
{
  FountainClusterPacket p;
  int err = fountain_cluster_parse (data, len, &p);
  guint S = c->cfg.streams, me = c->cfg.index;
  if (err != FOUNTAIN_OK) {
    count_bad (c, fountain_error_string (err));
    return;
  }
  if (p.streams != S || p.from == me) {
    count_bad (c, "another stream count, or this sender's own index");
    return;
  }
  if (!cstp_same_address (from, &c->peers.addr[p.from])) {
    count_bad (c, "sent from an address that is not the one peers gives "
        "for its index");
    return;
  }
  gboolean late;
  Slot *s = slot_for (c, p.frame_id, &late);
  if (s == NULL && p.type == FOUNTAIN_CLUSTER_READY && me == 0 && late) {
    /* a sender behind the others: what it waits for left long ago */
    Slot old = {.frame_id = p.frame_id,.n = p.n,.k = p.symbol_size,
      .frame_len = p.frame_len
    };
    c->seen[p.from] = now;
    send_control (c, p.from, FOUNTAIN_CLUSTER_RELEASE, &old, 1ull << p.from);
    return;
  }
  if (s == NULL) {
    if (late)
      c->late++;
    else
      count_bad (c, "a frame beyond the window ahead of this sender");
    return;
  }
  if (s->have_geometry && (s->n != p.n || s->k != p.symbol_size
          || s->frame_len != p.frame_len)) {
    count_bad (c, "a frame geometry other than the frame's (are the tiles "
        "the same size on every sender?)");
    return;
  }
  if (!s->have_geometry)
    slot_set_geometry (c, s, p.n, p.symbol_size, p.frame_len);

  switch (p.type) {
    case FOUNTAIN_CLUSTER_PART:{
      guint64 mask = p.index < s->red ? fountain_stream_degree_draw_shared
          (c->cfg.pipe_width, c->cfg.all_share, (int) S, (int) me,
          p.frame_id, p.index) : 0;
      if (p.stream != me || p.index >= s->red || !(mask >> p.from & 1)
          || mask == 1ull << me
          || p.seed != cstp_redundancy_seed (p.frame_id, me, p.index)) {
        count_bad (c, "a part of no pipe of this sender's");
        return;
      }
      if (s->got[p.index] >> p.from & 1) {
        c->duplicates++;
        return;
      }
      if (s->acc[p.index] == NULL)
        s->acc[p.index] = g_malloc0 (s->k);
      guint8 *acc = s->acc[p.index];
      for (guint i = 0; i < s->k; i++)
        acc[i] ^= p.payload[i];
      s->got[p.index] |= 1ull << p.from;
      c->parts_received++;
      c->bytes_received += len;
      break;
    }
    case FOUNTAIN_CLUSTER_READY:
      if (me != 0) {
        count_bad (c, "a ready sent to a sender that is not the master");
        return;
      }
      if (!(c->alive >> p.from & 1) && c->started) {
        c->alive |= 1ull << p.from;
        warn (c, g_strdup_printf ("sender %u is back (frame %u)", p.from,
                p.frame_id));
      }
      if (s->released)
        send_control (c, p.from, FOUNTAIN_CLUSTER_RELEASE, s, s->senders);
      else
        note_ready (c, s, p.from, now);
      break;
    default:                   /* release */
      if (p.from != 0) {
        count_bad (c, "a release from a sender that is not the master");
        return;
      }
      s->released = TRUE;
      s->senders = p.senders;
      break;
  }
  c->seen[p.from] = now;
  g_cond_broadcast (&c->cond);
}

static gpointer
exchange_thread (gpointer data)
{
  CstpCluster *c = data;
  struct pollfd pfd[2] = {
    {.fd = c->peers.fd,.events = POLLIN},
    {.fd = c->wake[0],.events = POLLIN}
  };
  for (;;) {
    g_mutex_lock (&c->lock);
    gboolean stop = c->stopping;
    g_mutex_unlock (&c->lock);
    if (stop)
      break;
    poll (pfd, 2, TICK_MS);
    for (;;) {
      struct sockaddr_storage from;
      socklen_t fromlen = sizeof from;
      ssize_t got = recvfrom (c->peers.fd, c->rx, MAX_DATAGRAM, MSG_DONTWAIT,
          (struct sockaddr *) &from, &fromlen);
      if (got < 0)
        break;
      g_mutex_lock (&c->lock);
      handle (c, c->rx, (gsize) got, &from, g_get_monotonic_time ());
      g_mutex_unlock (&c->lock);
    }
    g_mutex_lock (&c->lock);
    master_check (c, g_get_monotonic_time ());
    gboolean pending = c->warnings->len > 0;
    g_mutex_unlock (&c->lock);
    if (pending)
      post_warnings (c);
  }
  return NULL;
}

CstpCluster *
cstp_cluster_new (GstElement * element, const CstpClusterConfig * cfg,
    GError ** err)
{
  static gsize debug_once = 0;
  if (g_once_init_enter (&debug_once)) {
    GST_DEBUG_CATEGORY_INIT (cstp_cluster_debug, "cstpcluster", 0,
        "CSTP sending cluster exchange");
    g_once_init_leave (&debug_once, 1);
  }
  CstpCluster *c = g_new0 (CstpCluster, 1);
  c->element = element;
  c->cfg = *cfg;
  c->peers_str = g_strdup (cfg->peers);
  c->cfg.peers = c->peers_str;
  c->wake[0] = c->wake[1] = -1;
  c->peers.fd = -1;
  g_mutex_init (&c->lock);
  g_cond_init (&c->cond);
  c->warnings = g_ptr_array_new_with_free_func (g_free);
  c->seen = g_new0 (gint64, cfg->streams);
  c->alive = all_senders (c);
  c->rx = g_malloc (MAX_DATAGRAM);
  if (!cstp_peers_open (&c->peers, cfg->peers, cfg->streams, cfg->index,
          NULL, 8 << 20, "sender", err)) {
    cstp_cluster_free (c);
    return NULL;
  }
  if (pipe2 (c->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
    g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "cannot make a pipe: %s", g_strerror (errno));
    cstp_cluster_free (c);
    return NULL;
  }
  c->thread = g_thread_new ("cstpcluster", exchange_thread, c);
  return c;
}

void
cstp_cluster_free (CstpCluster * c)
{
  if (c == NULL)
    return;
  if (c->thread) {
    g_mutex_lock (&c->lock);
    c->stopping = TRUE;
    g_mutex_unlock (&c->lock);
    if (write (c->wake[1], "x", 1) < 0)
      GST_LOG ("wake: %s", g_strerror (errno));
    g_thread_join (c->thread);
  }
  for (guint i = 0; i < WINDOW; i++)
    slot_clear (&c->slots[i]);
  cstp_peers_close (&c->peers);
  for (int i = 0; i < 2; i++)
    if (c->wake[i] >= 0)
      close (c->wake[i]);
  g_ptr_array_unref (c->warnings);
  g_mutex_clear (&c->lock);
  g_cond_clear (&c->cond);
  g_free (c->seen);
  g_free (c->rx);
  g_free (c->peers_str);
  g_free (c);
}

void
cstp_cluster_set_flushing (CstpCluster * c, gboolean flushing)
{
  g_mutex_lock (&c->lock);
  c->flushing = flushing;
  g_cond_broadcast (&c->cond);
  g_mutex_unlock (&c->lock);
}

/* This sender's part of every other stream's pipe that adds it (the
 * lock held). */
static void
send_parts (CstpCluster * c, const CstpClusterFrame * f, const guint8 * parts)
{
  guint S = c->cfg.streams, me = c->cfg.index;
  guint8 *buf = g_malloc (FOUNTAIN_CLUSTER_PART_SIZE + f->symbol_size);
  for (guint s = 0; s < S; s++)
    for (guint32 r = 0; s != me && r < f->red; r++) {
      guint64 mask = f->masks[(gsize) s * f->red + r];
      if (!(mask >> me & 1))
        continue;
      FountainClusterPacket p = {.type = FOUNTAIN_CLUSTER_PART,
        .streams = (guint8) S,.from = (guint8) me,.frame_id = f->frame_id,
        .n = f->n,.symbol_size = f->symbol_size,.frame_len = f->frame_len,
        .stream = (guint8) s,.index = (guint16) r,
        .seed = cstp_redundancy_seed (f->frame_id, s, r),
        .payload = parts + ((gsize) s * f->red + r) * f->symbol_size
      };
      send_to (c, s, &p, buf);
    }
  g_free (buf);
}

gboolean
cstp_cluster_exchange (CstpCluster * c, const CstpClusterFrame * f,
    const guint8 * parts, guint8 * own, guint64 * carried)
{
  guint S = c->cfg.streams, me = c->cfg.index;
  guint64 bit = 1ull << me;
  gsize k = f->symbol_size;
  gint64 start = g_get_monotonic_time ();

  g_mutex_lock (&c->lock);
  /* the parts first, then the ready: a release means that every sender
   * it names has sent its parts */
  send_parts (c, f, parts);
  gboolean late;
  Slot *s = slot_for (c, f->frame_id, &late);
  if (s && s->have_geometry && (s->n != f->n || s->k != f->symbol_size
          || s->frame_len != f->frame_len)) {
    /* what came for this frame was for another geometry */
    count_bad (c, "parts for a frame of another size than this sender's "
        "(are the tiles the same size on every sender?)");
    slot_clear (s);
    s = slot_for (c, f->frame_id, &late);
  }
  if (s && !s->have_geometry)
    slot_set_geometry (c, s, f->n, f->symbol_size, f->frame_len);
  if (s && me == 0) {
    note_ready (c, s, me, start);
    master_check (c, start);
  } else if (s) {
    send_control (c, 0, FOUNTAIN_CLUSTER_READY, s, 0);
  }

  /* the master releases within sync-timeout of the first ready (the first
   * frame: of STARTUP_US, as the senders start apart); the parts follow
   * within sync-timeout of the release */
  gboolean first = c->frames == 0, resent = FALSE;
  gint64 release_deadline = start + 2 * c->cfg.timeout_us
      + (first ? STARTUP_US : 0);
  gint64 parts_deadline = G_MAXINT64;
  gint64 next_ready = start + READY_REPEAT_US;
  while (s && !c->flushing) {
    gint64 now = g_get_monotonic_time ();
    if (s->released && parts_deadline == G_MAXINT64) {
      parts_deadline = now + c->cfg.timeout_us;
      if (first && !resent) {
        /* a sender that started late missed the parts sent before its
         * socket was open: once more, now that all are there */
        send_parts (c, f, parts);
        resent = TRUE;
      }
    }
    gboolean have_all = s->released;
    for (guint32 r = 0; have_all && r < f->red; r++) {
      guint64 mask = f->masks[(gsize) me * f->red + r];
      guint64 want = mask & s->senders & ~bit;
      if (mask != bit && (s->got[r] & want) != want)
        have_all = FALSE;
    }
    if (have_all || (!s->released && now >= release_deadline)
        || now >= parts_deadline)
      break;
    if (!s->released && me != 0 && now >= next_ready) {
      /* a ready or its release may have been lost */
      send_control (c, 0, FOUNTAIN_CLUSTER_READY, s, 0);
      next_ready = now + READY_REPEAT_US;
    }
    gint64 until = s->released ? parts_deadline : release_deadline;
    if (!s->released && me != 0)
      until = MIN (until, next_ready);
    g_cond_wait_until (&c->cond, &c->lock, until);
  }
  if (c->flushing) {
    g_mutex_unlock (&c->lock);
    return FALSE;
  }

  guint64 missing_from = 0, arrived_from = 0;
  for (guint32 r = 0; r < f->red; r++) {
    guint64 mask = f->masks[(gsize) me * f->red + r];
    guint64 got = s ? s->got[r] & mask : 0;
    carried[r] = bit | got;
    if (mask == bit)
      continue;
    if (s && s->acc[r])
      for (gsize i = 0; i < k; i++)
        own[(gsize) r * k + i] ^= s->acc[r][i];
    c->parts_missing += (guint64) __builtin_popcountll (mask & ~carried[r]);
    missing_from |= mask & ~carried[r];
    arrived_from |= got;
  }
  /* a peer whose parts stopped coming (or came back) is said once */
  for (guint t = 0; t < S; t++) {
    guint64 tb = 1ull << t;
    if ((missing_from & tb) && !(arrived_from & tb) && !(c->silent & tb)) {
      c->silent |= tb;
      warn (c, g_strdup_printf ("no parts from sender %u for frame %u within "
              "%" G_GINT64_FORMAT " ms: its parts are left out of the pipes",
              t, f->frame_id, c->cfg.timeout_us / 1000));
    } else if ((arrived_from & tb) && (c->silent & tb)) {
      c->silent &= ~tb;
      warn (c, g_strdup_printf ("parts from sender %u arrive again (frame "
              "%u)", t, f->frame_id));
    }
  }
  if (s && !s->released) {
    c->frames_unsynchronised++;
    if (!c->master_silent)
      warn (c, g_strdup_printf ("frame %u was not released by the master "
              "(sender 0) within %" G_GINT64_FORMAT " ms: it leaves "
              "unsynchronised", f->frame_id, (release_deadline - start) / 1000));
    c->master_silent = TRUE;
  } else if (s) {
    c->master_silent = FALSE;
  }
  /* the paper's bound on what a sender receives for its pipes: (S - 1)
   * parts for each of its p x R pipe packets */
  c->bound_bytes += (guint64) llround ((S - 1) * c->cfg.pipe_width
      * f->red) * (FOUNTAIN_CLUSTER_PART_SIZE + k);
  guint64 waited = (guint64) (g_get_monotonic_time () - start) * 1000;
  c->wait_max = MAX (c->wait_max, waited);
  c->wait_sum += waited;
  c->frames++;
  if (s)
    slot_clear (s);
  c->base = f->frame_id + 1;
  g_mutex_unlock (&c->lock);
  post_warnings (c);
  return TRUE;
}

void
cstp_cluster_add_stats (CstpCluster * c, GstStructure * st)
{
  gint64 now = g_get_monotonic_time ();
  guint alive = 0;
  g_mutex_lock (&c->lock);
  gst_structure_set (st, "index", G_TYPE_UINT, c->cfg.index,
      "exchange-parts-sent", G_TYPE_UINT64, c->parts_sent,
      "exchange-parts-received", G_TYPE_UINT64, c->parts_received,
      "exchange-bytes-sent", G_TYPE_UINT64, c->bytes_sent,
      "exchange-bytes-received", G_TYPE_UINT64, c->bytes_received,
      "exchange-bound-bytes", G_TYPE_UINT64, c->bound_bytes,
      "exchange-bad", G_TYPE_UINT64, c->bad,
      "exchange-duplicates", G_TYPE_UINT64, c->duplicates,
      "exchange-late", G_TYPE_UINT64, c->late,
      "parts-missing", G_TYPE_UINT64, c->parts_missing,
      "frames-unsynchronised", G_TYPE_UINT64, c->frames_unsynchronised,
      "release-wait-max", G_TYPE_UINT64, c->wait_max,
      "release-wait-mean", G_TYPE_UINT64, c->frames ? c->wait_sum / c->frames
      : 0, NULL);
  if (c->cfg.index == 0)
    gst_structure_set (st,
        "frames-released-partial", G_TYPE_UINT64, c->frames_partial,
        "sync-skew-last", G_TYPE_UINT64, c->skew_last,
        "sync-skew-max", G_TYPE_UINT64, c->skew_max,
        "sync-skew-mean", G_TYPE_UINT64, c->skew_count ?
        c->skew_sum / c->skew_count : 0, NULL);
  for (guint t = 0; t < c->cfg.streams; t++) {
    gchar name[32];
    gboolean up = t == c->cfg.index || (c->seen[t]
        && now - c->seen[t] < 2 * MAX (c->cfg.timeout_us, G_USEC_PER_SEC));
    alive += up;
    g_snprintf (name, sizeof name, "peer-%u-alive", t);
    gst_structure_set (st, name, G_TYPE_BOOLEAN, up, NULL);
  }
  gst_structure_set (st, "peers-alive", G_TYPE_UINT, alive, NULL);
  g_mutex_unlock (&c->lock);
}
