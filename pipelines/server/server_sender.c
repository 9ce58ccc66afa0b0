/* server_sender.c: the shared sender of plain MPEG-TS sessions
 * (server_sender.h) */
#define _GNU_SOURCE             /* sendmmsg */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "server_sender.h"
#include "gpsnc.h"
#include "gpssrtp.h"

/* packets per sendmmsg call */
#define BATCH 256
/* the thread sleeps at least this long between rounds: packets leave up to
 * this late, in batches, instead of one wake per packet */
#define TICK_US 2000
/* packets of one session per round at most: a session far behind (after a
 * stall) catches up over a few rounds, not in one burst */
#define CATCH_UP_PACKETS 32
/* RTCP sender reports: the first a second into playing, then every 5 s */
#define SR_FIRST_US G_USEC_PER_SEC
#define SR_INTERVAL_US (5 * G_USEC_PER_SEC)
/* the BYE follows the last packet by this much: a client that takes the
 * BYE ends its stream, and the last packets, sent in one burst (a whole
 * generation when network-coded), must have been read by then */
#define BYE_DELAY_US (500 * G_USEC_PER_SEC / 1000)
#define RTP_HEADER 12
/* what SRTP adds to a packet at most: the tag of the longest profile and
 * an MKI */
#define SRTP_TRAILER (16 + GSRTP_MAX_MKI)
/* an SRTP packet: header, payload, trailer */
#define SEALED_MAX (RTP_HEADER + SERVER_MPEGTS_CHUNK + SRTP_TRAILER)
#define SEND_BUFFER (4 * 1024 * 1024)
#define CNAME "gpustream-server"

/* ---- media: a file of the cache and its schedule ---- */

struct _ServerSenderMedia
{
  gint refcount;
  ServerCacheFile *file;
  ServerMpegtsIndex *index;
  /* its network-coded generations, laid out at the first such session
   * (under media_lock) */
  ServerMpegtsGenerations *gens;
  /* when the last session of it ended */
  gint64 idle_since;
};

/* a media nobody plays is kept this long, for the next request of it (each
 * DESCRIBE and SETUP asks: its index is a pass over the whole file) */
#define MEDIA_LINGER_US (30 * G_USEC_PER_SEC)

/* media by cache file: the sessions of one file share its schedule */
static GMutex media_lock;
static GHashTable *media_by_file;

static void
media_free (ServerSenderMedia * media)
{
  server_mpegts_index_free (media->index);
  server_mpegts_generations_free (media->gens);
  server_cache_file_unref (media->file);
  g_free (media);
}

static gboolean
media_expired (gpointer key, gpointer value, gpointer now)
{
  ServerSenderMedia *media = value;

  if (media->refcount > 0 ||
      *(gint64 *) now - media->idle_since < MEDIA_LINGER_US)
    return FALSE;
  media_free (media);
  return TRUE;
}

ServerSenderMedia *
server_sender_media_get (const gchar * path, GError ** err)
{
  ServerCacheFile *file = server_cache_open (path, err);
  ServerSenderMedia *media;
  const gchar *why = NULL;

  if (file == NULL)
    return NULL;
  gint64 now = g_get_monotonic_time ();

  g_mutex_lock (&media_lock);
  if (media_by_file == NULL)
    media_by_file = g_hash_table_new (NULL, NULL);
  g_hash_table_foreach_remove (media_by_file, media_expired, &now);
  media = g_hash_table_lookup (media_by_file, file);
  if (media != NULL) {
    media->refcount++;
    g_mutex_unlock (&media_lock);
    server_cache_file_unref (file);
    return media;
  }
  media = g_new0 (ServerSenderMedia, 1);
  media->index = server_mpegts_index_new (server_cache_file_data (file),
      server_cache_file_size (file), &why);
  if (media->index == NULL) {
    g_mutex_unlock (&media_lock);
    g_set_error (err, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", path,
        why);
    server_cache_file_unref (file);
    g_free (media);
    return NULL;
  }
  media->refcount = 1;
  media->file = file;
  g_hash_table_insert (media_by_file, file, media);
  g_mutex_unlock (&media_lock);
  return media;
}

ServerSenderMedia *
server_sender_media_ref (ServerSenderMedia * media)
{
  g_mutex_lock (&media_lock);
  media->refcount++;
  g_mutex_unlock (&media_lock);
  return media;
}

/* kept, idle, until a later get finds it past its linger */
void
server_sender_media_unref (ServerSenderMedia * media)
{
  g_mutex_lock (&media_lock);
  if (--media->refcount == 0)
    media->idle_since = g_get_monotonic_time ();
  g_mutex_unlock (&media_lock);
}

guint64
server_sender_media_duration (const ServerSenderMedia * media)
{
  return media->index->duration_ns;
}

const ServerMpegtsIndex *
server_sender_media_index (const ServerSenderMedia * media)
{
  return media->index;
}

/* ---- the sender ---- */

struct _ServerSender
{
  GMutex lock;
  GCond wake;
  int rtp_fd;
  int rtcp_fd;
  guint rtp_port;
  GPtrArray *sessions;
  /* where SRTP sessions are protected (CPU or GPU), for all of them at
   * once, and generations coded; auto is resolved when the sender starts */
  GstGpuStreamBackend backend;
  GstObject *cuda_context;
  /* whether the last SRTP batch ran on the GPU: what the sessions' lines
   * name, as gpusrtpenc names what it ran */
  gint srtp_on_gpu;
  /* the round's packets for sendmmsg */
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH][2];
  guint8 headers[BATCH][RTP_HEADER];
  guint queued;
  /* the round's SRTP packets (copies, protected in place before sending)
   * and the message each one is */
  guint8 sealed[BATCH][SEALED_MAX];
  GsSrtpPacket srtp[BATCH];
  guint srtp_slot[BATCH];
  guint srtp_queued;
  /* the round's coded packets, mapped until they are sent */
  GstBuffer *mapped[BATCH];
  GstMapInfo maps[BATCH];
  guint n_mapped;
  /* the sessions with a generation to send this round */
  GPtrArray *coding;
  /* TRUE during a round: its sends and its wait for coding run without
   * the lock, so that the RTSP thread is answered meanwhile and never
   * waits for a round; a session freed or a generation dropped (by a seek)
   * meanwhile is only marked, and goes at the round's end */
  gboolean in_round;
};

struct _ServerSenderSession
{
  ServerSender *sender;
  ServerSenderMedia *media;
  /* UDP: where RTP and RTCP go; TCP: the connection's writer */
  struct sockaddr_in rtp_to;
  struct sockaddr_in rtcp_to;
  ServerSenderWrite write;
  gpointer user_data;
  guint8 channel;
  /* NULL: plain RTP */
  GsSrtpCtx *srtp;
  /* network-coded: how, the next generation of the file's layout, the
   * next generation id of the session (the count of generations it
   * coded), and the generation being sent (with its next packet) */
  gboolean nc;
  GstGpuStreamNcParams params;
  guint next_gen;
  guint32 gen_id;
  GstGpuStreamNcGeneration *gen;
  gboolean gen_coded;
  guint gen_packet;
  guint gen_end;
  /* a seek during a round: its generation is not sent */
  gboolean drop_gen;
  /* freed during a round: nothing more is sent for it, it goes at the
   * round's end */
  gboolean dead;
  guint8 pt;
  guint32 ssrc;
  guint16 seq;
  guint32 rtp_base;
  /* the next chunk to send, and the packets of it left out (a seek to a
   * packet inside it) */
  guint next;
  guint skip;
  /* the first packet after a seek is sent marked, from first_chunk */
  gboolean mark;
  guint8 first_chunk[SERVER_MPEGTS_CHUNK];
  gboolean playing;
  /* play started at monotonic anchor_us, file time anchor_ns */
  gint64 anchor_us;
  guint64 anchor_ns;
  gint64 next_report_us;
  /* when its BYE is due, once everything was sent (0: not yet) */
  gint64 bye_us;
  guint32 packets;
  guint32 octets;
};

static guint32
rtp_time (const ServerSenderSession * s, guint64 ns)
{
  return s->rtp_base + (guint32) (ns * 9 / 100000);
}

static gint64
chunk_due_us (const ServerSenderSession * s, guint chunk)
{
  return s->anchor_us + (gint64) (s->media->index->due_ns[chunk] -
      s->anchor_ns) / 1000;
}

static void
write_rtp_header (guint8 * h, ServerSenderSession * s, guint32 ts)
{
  h[0] = 0x80;
  h[1] = s->pt;
  GST_WRITE_UINT16_BE (h + 2, s->seq);
  GST_WRITE_UINT32_BE (h + 4, ts);
  GST_WRITE_UINT32_BE (h + 8, s->ssrc);
}

/* Protects packets in place through the process's SRTP batch path, the
 * one gpusrtpenc uses */
static void
protect (ServerSender * self, GsSrtpPacket * pkts, guint n)
{
  gboolean on_gpu = FALSE;

  gst_gpustream_srtp_protect_batch (pkts, n, self->backend,
      self->cuda_context, &on_gpu);
  g_atomic_int_set (&self->srtp_on_gpu, on_gpu);
}

/* Protects and sends the queued packets. Without the lock: what they point
 * to (the sender's buffers, sessions' addresses and generations, files'
 * mappings) outlives the round (in_round) */
static void
flush_queued (ServerSender * self)
{
  guint done = 0, kept = 0;

  if (self->queued == 0)
    return;
  g_mutex_unlock (&self->lock);
  if (self->srtp_queued > 0) {
    /* one batch for every SRTP session's packets of the round */
    protect (self, self->srtp, self->srtp_queued);
    for (guint k = 0; k < self->srtp_queued; k++) {
      guint i = self->srtp_slot[k];

      self->iov[i][0].iov_len = self->srtp[k].len;
      /* a stream whose index ran out (2^48 packets) sends nothing */
      if (self->srtp[k].result != GSRTP_OK)
        self->msgs[i].msg_hdr.msg_iovlen = 0;
    }
    self->srtp_queued = 0;
    for (guint i = 0; i < self->queued; i++)
      if (self->msgs[i].msg_hdr.msg_iovlen > 0)
        self->msgs[kept++] = self->msgs[i];
    self->queued = kept;
  }
  while (done < self->queued) {
    int n = sendmmsg (self->rtp_fd, self->msgs + done, self->queued - done, 0);

    if (n < 0 && errno == EINTR)
      continue;
    /* the first packet's destination refused it: skip that one */
    done += n < 0 ? 1 : n;
  }
  self->queued = 0;
  for (guint i = 0; i < self->n_mapped; i++)
    gst_buffer_unmap (self->mapped[i], &self->maps[i]);
  self->n_mapped = 0;
  g_mutex_lock (&self->lock);
}

/* One packet protected at once (interleaved, RTCP): FALSE when it cannot
 * be (index exhausted) */
static gboolean
protect_one (ServerSender * self, ServerSenderSession * s, guint8 * data,
    gsize * len, gsize cap, gboolean is_rtcp)
{
  GsSrtpPacket pkt = { 0 };

  pkt.ctx = s->srtp;
  pkt.data = data;
  pkt.len = *len;
  pkt.cap = cap;
  pkt.is_rtcp = is_rtcp;
  protect (self, &pkt, 1);
  *len = pkt.len;
  return pkt.result == GSRTP_OK;
}

/* Sends (or queues) one RTP packet of the session, its payload len bytes
 * at payload (which lives until the next flush); FALSE when its connection
 * cannot take it now. The caller updates its place, then flushes a full
 * queue (flush_full): the flush lets the lock go, and a seek meanwhile
 * must find the session where it is */
static gboolean
send_packet (ServerSender * self, ServerSenderSession * s, guint32 ts,
    const guint8 * payload, gsize len)
{
  if (s->write != NULL) {
    gsize cap = RTP_HEADER + len + (s->srtp != NULL ? SRTP_TRAILER : 0);
    guint8 *frame = g_malloc (4 + cap);
    gsize size = RTP_HEADER + len;

    write_rtp_header (frame + 4, s, ts);
    memcpy (frame + 4 + RTP_HEADER, payload, len);
    if (s->srtp != NULL && !protect_one (self, s, frame + 4, &size, cap,
            FALSE)) {
      g_free (frame);
      return FALSE;
    }
    frame[0] = '$';
    frame[1] = s->channel;
    GST_WRITE_UINT16_BE (frame + 2, size);
    if (!s->write (s->user_data, frame, 4 + size))
      return FALSE;
  } else {
    guint i = self->queued;
    struct msghdr *m = &self->msgs[i].msg_hdr;

    memset (m, 0, sizeof *m);
    m->msg_name = &s->rtp_to;
    m->msg_namelen = sizeof s->rtp_to;
    m->msg_iov = self->iov[i];
    if (s->srtp != NULL) {
      guint k = self->srtp_queued++;

      /* a copy, protected with the round's other SRTP packets at the
       * flush (SRTP sessions send chunks: SEALED_MAX holds one) */
      g_assert (RTP_HEADER + len + SRTP_TRAILER <= SEALED_MAX);
      write_rtp_header (self->sealed[i], s, ts);
      memcpy (self->sealed[i] + RTP_HEADER, payload, len);
      memset (&self->srtp[k], 0, sizeof self->srtp[k]);
      self->srtp[k].ctx = s->srtp;
      self->srtp[k].data = self->sealed[i];
      self->srtp[k].len = RTP_HEADER + len;
      self->srtp[k].cap = SEALED_MAX;
      self->srtp_slot[k] = i;
      self->iov[i][0].iov_base = self->sealed[i];
      m->msg_iovlen = 1;
    } else {
      write_rtp_header (self->headers[i], s, ts);
      self->iov[i][0].iov_base = self->headers[i];
      self->iov[i][0].iov_len = RTP_HEADER;
      /* the payload where it is (the file's mapping, a coded packet) */
      self->iov[i][1].iov_base = (void *) payload;
      self->iov[i][1].iov_len = len;
      m->msg_iovlen = 2;
    }
    self->queued++;
  }
  s->seq++;
  s->packets++;
  s->octets += len;
  return TRUE;
}

static void
flush_full (ServerSender * self)
{
  if (self->queued == BATCH)
    flush_queued (self);
}

/* Sends (or queues) the session's next chunk; FALSE when its connection
 * cannot take it now */
static gboolean
send_chunk (ServerSender * self, ServerSenderSession * s)
{
  const ServerMpegtsIndex *index = s->media->index;
  gsize offset = (gsize) s->next * SERVER_MPEGTS_CHUNK +
      s->skip * SERVER_MPEGTS_PACKET;
  gsize len = MIN (SERVER_MPEGTS_CHUNK - s->skip * SERVER_MPEGTS_PACKET,
      index->size - offset);
  const guint8 *payload = server_cache_file_data (s->media->file) + offset;

  if (s->mark) {
    /* a copy (the file's mapping is shared and read-only), its first
     * packet's discontinuity_indicator set when it has an adaptation
     * field (a random access point has): a demuxer then takes the jump
     * of its continuity counter for what it is, not for lost packets that
     * corrupt the PES it was gathering */
    memcpy (s->first_chunk, payload, len);
    if (((s->first_chunk[3] >> 4) & 2) != 0 && s->first_chunk[4] > 0)
      s->first_chunk[5] |= 0x80;
    payload = s->first_chunk;
  }
  if (!send_packet (self, s, rtp_time (s, index->due_ns[s->next]), payload,
          len))
    return FALSE;
  s->next++;
  s->skip = 0;
  s->mark = FALSE;
  flush_full (self);
  return TRUE;
}

/* An RTCP sender report with the CNAME, and a BYE when the stream ends */
static void
send_report (ServerSender * self, ServerSenderSession * s, gint64 now,
    gboolean bye)
{
  /* room for SRTCP's index, tag and MKI */
  guint8 packet[4 + 28 + 28 + 8 + 4 + 16 + GSRTP_MAX_MKI];
  guint8 *p = packet + 4;
  gint64 real = g_get_real_time ();
  guint64 file_ns = s->anchor_ns + (guint64) (now - s->anchor_us) * 1000;
  gsize size;

  /* SR: RFC 3550 6.4.1, no report blocks */
  p[0] = 0x80;
  p[1] = 200;
  GST_WRITE_UINT16_BE (p + 2, 6);
  GST_WRITE_UINT32_BE (p + 4, s->ssrc);
  GST_WRITE_UINT32_BE (p + 8, (guint32) (real / G_USEC_PER_SEC +
          G_GINT64_CONSTANT (2208988800)));
  GST_WRITE_UINT32_BE (p + 12, (guint32) (((guint64) (real % G_USEC_PER_SEC)
              << 32) / G_USEC_PER_SEC));
  GST_WRITE_UINT32_BE (p + 16, rtp_time (s, file_ns));
  GST_WRITE_UINT32_BE (p + 20, s->packets);
  GST_WRITE_UINT32_BE (p + 24, s->octets);
  p += 28;
  /* SDES with one CNAME item, padded to a word */
  memset (p, 0, 28);
  p[0] = 0x81;
  p[1] = 202;
  GST_WRITE_UINT16_BE (p + 2, 6);
  GST_WRITE_UINT32_BE (p + 4, s->ssrc);
  p[8] = 1;
  p[9] = sizeof CNAME - 1;
  memcpy (p + 10, CNAME, sizeof CNAME - 1);
  p += 28;
  if (bye) {
    p[0] = 0x81;
    p[1] = 203;
    GST_WRITE_UINT16_BE (p + 2, 1);
    GST_WRITE_UINT32_BE (p + 4, s->ssrc);
    p += 8;
  }
  size = p - (packet + 4);
  if (s->srtp != NULL && !protect_one (self, s, packet + 4, &size,
          sizeof packet - 4, TRUE))
    return;
  if (s->write != NULL) {
    guint8 *frame = g_memdup2 (packet, size + 4);

    frame[0] = '$';
    frame[1] = s->channel + 1;
    GST_WRITE_UINT16_BE (frame + 2, size);
    /* a report the connection cannot take now is left out; the BYE's
     * place is taken by the connection's EOS */
    s->write (s->user_data, frame, size + 4);
  } else {
    /* a report that fails is lost like any datagram: the next follows */
    sendto (self->rtcp_fd, packet + 4, size, MSG_DONTWAIT,
        (struct sockaddr *) &s->rtcp_to, sizeof s->rtcp_to);
  }
}

/* ---- network-coded sessions ---- */

static gint64
generation_due_us (const ServerSenderSession * s, guint g)
{
  return s->anchor_us + (gint64) (server_mpegts_generation_due_ns
      (s->media->gens, s->media->index, g) - s->anchor_ns) / 1000;
}

/* Lays out the session's next generation and hands its coding to the
 * pool; its packets go once the round's coding is done */
static void
start_generation (ServerSender * self, ServerSenderSession * s)
{
  const ServerMpegtsGenerations *gens = s->media->gens;
  guint8 *data = g_malloc ((gsize) gens->m * gens->k);

  server_mpegts_generation_fill (gens, s->media->index,
      server_cache_file_data (s->media->file), s->next_gen, data);
  s->gen = gst_gpustream_nc_generation_new (&s->params, s->gen_id++, data,
      server_mpegts_generation_length (gens, s->next_gen));
  s->gen->pts = server_mpegts_generation_due_ns (gens, s->media->index,
      s->next_gen);
  s->gen_coded = FALSE;
  s->gen_packet = 0;
  s->next_gen++;
  gst_gpustream_nc_generation_submit (s->gen, self->backend,
      self->cuda_context);
}

/* Sends (or queues) the packets of the session's generation, coded by
 * now; FALSE when its connection cannot take them all now (the rest go
 * in a later round) */
static gboolean
send_generation (ServerSender * self, ServerSenderSession * s)
{
  GstGpuStreamNcGeneration *gen = s->gen;
  guint32 ts = rtp_time (s, gen->pts);

  if (!s->gen_coded) {
    s->gen_coded = TRUE;
    s->gen_end = gen->n_packets;
    /* a failed job's coded packets would carry what it left: only the
     * source blocks go */
    if (!gst_gpustream_nc_generation_finish (gen)) {
      g_warning ("shared sender: the coding of generation %u failed; its "
          "source blocks are sent without redundancy", gen->id);
      s->gen_end = gen->n_packets - gen->n_coded;
    }
  }
  while (s->gen_packet < s->gen_end) {
    GstBuffer *packet = gen->packets[s->gen_packet];

    if (s->write == NULL) {
      /* queued: mapped until the flush that sends it (one mapping a
       * queued message) */
      GstMapInfo *map = &self->maps[self->n_mapped];

      self->mapped[self->n_mapped++] = packet;
      gst_buffer_map (packet, map, GST_MAP_READ);
      send_packet (self, s, ts, map->data, map->size);
      s->gen_packet++;
      flush_full (self);
      /* a seek or a free while the flush let the lock go */
      if (s->drop_gen || s->dead)
        return TRUE;
    } else {
      /* written as a copy */
      GstMapInfo map;
      gboolean sent;

      gst_buffer_map (packet, &map, GST_MAP_READ);
      sent = send_packet (self, s, ts, map.data, map.size);
      gst_buffer_unmap (packet, &map);
      if (!sent)
        return FALSE;
      s->gen_packet++;
    }
  }
  return TRUE;
}

/* Starts the network-coded session's next generation when it is due (one
 * a round: a session behind catches up over rounds) */
static void
serve_generations (ServerSender * self, ServerSenderSession * s, gint64 now,
    gint64 * wake)
{
  const ServerMpegtsGenerations *gens = s->media->gens;

  if (s->gen == NULL && s->next_gen < gens->n_generations) {
    gint64 due = generation_due_us (s, s->next_gen);

    if (due > now) {
      *wake = MIN (*wake, due);
      return;
    }
    start_generation (self, s);
  }
  if (s->gen != NULL) {
    g_ptr_array_add (self->coding, s);
    *wake = MIN (*wake, s->next_gen < gens->n_generations ?
        generation_due_us (s, s->next_gen) : now);
  }
}

/* Waits, without the lock, for the pool to code the round's generations */
static void
wait_for_coding (ServerSender * self)
{
  if (self->coding->len == 0)
    return;
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < self->coding->len; i++) {
    ServerSenderSession *s = g_ptr_array_index (self->coding, i);

    if (!s->gen_coded)
      gst_gpustream_nc_generation_wait (s->gen);
  }
  g_mutex_lock (&self->lock);
}

/* The round's generations, coded by the pool in the meantime, go out */
static void
send_generations (ServerSender * self, gint64 * wake, gint64 now)
{
  wait_for_coding (self);
  for (guint i = 0; i < self->coding->len; i++) {
    ServerSenderSession *s = g_ptr_array_index (self->coding, i);

    if (s->dead || s->drop_gen)
      continue;
    if (!send_generation (self, s))
      *wake = now;
  }
  flush_queued (self);
  for (guint i = 0; i < self->coding->len; i++) {
    ServerSenderSession *s = g_ptr_array_index (self->coding, i);

    if (s->drop_gen || (s->gen_coded && s->gen_packet == s->gen_end)) {
      g_clear_pointer (&s->gen, gst_gpustream_nc_generation_free);
      s->drop_gen = FALSE;
    }
  }
  g_ptr_array_set_size (self->coding, 0);
}

/* The session sent everything: its BYE, a little later */
static void
finish_session (ServerSender * self, ServerSenderSession * s, gint64 now,
    gint64 * wake)
{
  if (s->bye_us == 0)
    s->bye_us = now + BYE_DELAY_US;
  if (now < s->bye_us) {
    *wake = MIN (*wake, s->bye_us);
    return;
  }
  send_report (self, s, now, TRUE);
  s->playing = FALSE;
  s->bye_us = 0;
}

/* Sends the plain or SRTP session's chunks that are due */
static void
serve_chunks (ServerSender * self, ServerSenderSession * s, gint64 now,
    gint64 * wake)
{
  const ServerMpegtsIndex *index = s->media->index;
  guint sent = 0;

  /* a flush lets the lock go: a pause, seek or free may come */
  while (s->playing && !s->dead && s->next < index->n_chunks) {
    gint64 due = chunk_due_us (s, s->next);

    if (due > now) {
      *wake = MIN (*wake, due);
      break;
    }
    if (sent == CATCH_UP_PACKETS || !send_chunk (self, s)) {
      *wake = now;
      break;
    }
    sent++;
  }
}

static gboolean
sent_everything (const ServerSenderSession * s)
{
  if (s->nc)
    return s->gen == NULL && s->next_gen >= s->media->gens->n_generations;
  return s->next >= s->media->index->n_chunks;
}

/* Sends what is due of session s; the time of its next packet in *wake */
static void
serve_session (ServerSender * self, ServerSenderSession * s, gint64 now,
    gint64 * wake)
{
  if (s->nc)
    serve_generations (self, s, now, wake);
  else
    serve_chunks (self, s, now, wake);
  /* a flush lets the lock go: a pause, seek or free may have come */
  if (!s->playing || s->dead)
    return;
  if (sent_everything (s)) {
    /* the queued packets go before the BYE, unless a seek came while they
     * went */
    flush_queued (self);
    if (s->playing && !s->dead && sent_everything (s))
      finish_session (self, s, now, wake);
  } else if (now >= s->next_report_us) {
    send_report (self, s, now, FALSE);
    s->next_report_us = now + SR_INTERVAL_US;
  }
}

static void session_free (ServerSenderSession * s);

/* the sessions freed during the round go */
static void
sweep_sessions (ServerSender * self)
{
  for (guint i = 0; i < self->sessions->len;) {
    ServerSenderSession *s = g_ptr_array_index (self->sessions, i);

    if (s->dead) {
      g_ptr_array_remove_index_fast (self->sessions, i);
      session_free (s);
    } else {
      i++;
    }
  }
}

static gpointer
sender_thread (gpointer data)
{
  ServerSender *self = data;

  g_mutex_lock (&self->lock);
  for (;;) {
    gint64 now = g_get_monotonic_time ();
    gint64 wake = now + G_USEC_PER_SEC;

    self->in_round = TRUE;
    /* sessions come (at the end) while the lock is let go; none leaves */
    for (guint i = 0; i < self->sessions->len; i++) {
      ServerSenderSession *s = g_ptr_array_index (self->sessions, i);

      if (s->playing && !s->dead)
        serve_session (self, s, now, &wake);
    }
    flush_queued (self);
    send_generations (self, &wake, now);
    sweep_sessions (self);
    self->in_round = FALSE;
    g_cond_wait_until (&self->wake, &self->lock, MAX (wake, now + TICK_US));
  }
  return NULL;
}

/* an even port for RTP and the next for RTCP, both on address */
static gboolean
bind_pair (ServerSender * self, const gchar * address, GError ** err)
{
  struct sockaddr_in sa = { 0 };

  sa.sin_family = AF_INET;
  if (address != NULL && inet_pton (AF_INET, address, &sa.sin_addr) != 1) {
    g_set_error (err, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
        "the shared sender sends from IPv4 addresses, not %s", address);
    return FALSE;
  }
  for (int attempt = 0; attempt < 64; attempt++) {
    int rtp = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rtcp = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof sa;
    int size = SEND_BUFFER;

    if (rtp < 0 || rtcp < 0) {
      g_set_error (err, G_IO_ERROR, g_io_error_from_errno (errno),
          "cannot make the shared sender's sockets: %s", g_strerror (errno));
      if (rtp >= 0)
        close (rtp);
      if (rtcp >= 0)
        close (rtcp);
      return FALSE;
    }
    sa.sin_port = 0;
    if (bind (rtp, (struct sockaddr *) &sa, sizeof sa) == 0 &&
        getsockname (rtp, (struct sockaddr *) &sa, &len) == 0 &&
        ntohs (sa.sin_port) % 2 == 0 && ntohs (sa.sin_port) < 65535) {
      sa.sin_port = htons (ntohs (sa.sin_port) + 1);
      if (bind (rtcp, (struct sockaddr *) &sa, sizeof sa) == 0) {
        setsockopt (rtp, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        self->rtp_fd = rtp;
        self->rtcp_fd = rtcp;
        self->rtp_port = ntohs (sa.sin_port) - 1;
        return TRUE;
      }
    }
    close (rtp);
    close (rtcp);
  }
  g_set_error (err, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE,
      "no pair of free UDP ports for the shared sender");
  return FALSE;
}

ServerSender *
server_sender_get (const gchar * address, GstGpuStreamBackend backend,
    GError ** err)
{
  static GMutex lock;
  static ServerSender *sender;
  ServerSender *self;

  g_mutex_lock (&lock);
  if (sender != NULL) {
    g_mutex_unlock (&lock);
    return sender;
  }
  self = g_new0 (ServerSender, 1);
  if (!bind_pair (self, address, err)) {
    g_free (self);
    g_mutex_unlock (&lock);
    return NULL;
  }
  g_mutex_init (&self->lock);
  g_cond_init (&self->wake);
  self->sessions = g_ptr_array_new ();
  self->coding = g_ptr_array_new ();
  self->backend = backend;
  if (backend != GST_GPUSTREAM_BACKEND_CPU && gst_gpustream_gpu_available ())
    self->cuda_context = gst_gpustream_cuda_context_new (0, NULL);
  if (self->cuda_context == NULL)
    self->backend = GST_GPUSTREAM_BACKEND_CPU;
  else if (backend == GST_GPUSTREAM_BACKEND_AUTO)
    self->backend = GST_GPUSTREAM_BACKEND_GPU;
  /* it serves until the process ends */
  g_thread_unref (g_thread_new ("shared-sender", sender_thread, self));
  sender = self;
  g_mutex_unlock (&lock);
  return sender;
}

guint
server_sender_rtp_port (ServerSender * sender)
{
  return sender->rtp_port;
}

int
server_sender_rtcp_fd (ServerSender * sender)
{
  return sender->rtcp_fd;
}

gboolean
server_sender_media_prepare_nc (ServerSenderMedia * media,
    const ServerSenderNc * nc)
{
  gboolean ok;

  g_mutex_lock (&media_lock);
  if (media->gens == NULL)
    media->gens = server_mpegts_generations_new (media->index, nc->m, nc->k,
        SERVER_SENDER_NC_CAPS);
  ok = media->gens != NULL && media->gens->m == nc->m &&
      media->gens->k == nc->k;
  g_mutex_unlock (&media_lock);
  return ok;
}

static ServerSenderSession *
session_new (ServerSender * sender, ServerSenderMedia * media,
    const ServerSenderKey * key, const ServerSenderNc * nc)
{
  ServerSenderSession *s = g_new0 (ServerSenderSession, 1);

  server_sender_media_ref (media);
  s->sender = sender;
  s->media = media;
  s->pt = SERVER_SENDER_PT;
  if (nc != NULL) {
    s->nc = TRUE;
    s->pt = SERVER_SENDER_NC_PT;
    /* ncencoder's defaults: systematic, seeded coefficients, framed */
    s->params.m = nc->m;
    s->params.k = nc->k;
    s->params.redundancy = gst_gpustream_nc_redundancy_from_percent (nc->m,
        nc->redundancy_percent);
    s->params.systematic = TRUE;
    s->params.framed = TRUE;
    s->params.session = g_random_int ();
  }
  s->ssrc = key != NULL ? key->ssrc : g_random_int ();
  if (key != NULL) {
    s->srtp = g_malloc0 (sizeof (GsSrtpCtx));
    gsrtp_ctx_init (s->srtp, GSRTP_AES_CM_128_HMAC_SHA1_80,
        GSRTP_AES_CM_128_HMAC_SHA1_80, key->key, sizeof key->key, 0);
  }
  s->seq = g_random_int_range (0, 65536);
  s->rtp_base = g_random_int ();
  g_mutex_lock (&sender->lock);
  g_ptr_array_add (sender->sessions, s);
  g_mutex_unlock (&sender->lock);
  return s;
}

ServerSenderSession *
server_sender_session_new_udp (ServerSender * sender,
    ServerSenderMedia * media, const ServerSenderKey * key,
    const ServerSenderNc * nc, const struct sockaddr_in *rtp_to,
    const struct sockaddr_in *rtcp_to)
{
  ServerSenderSession *s = session_new (sender, media, key, nc);

  s->rtp_to = *rtp_to;
  s->rtcp_to = *rtcp_to;
  return s;
}

ServerSenderSession *
server_sender_session_new_tcp (ServerSender * sender,
    ServerSenderMedia * media, const ServerSenderKey * key,
    const ServerSenderNc * nc, guint8 rtp_channel, ServerSenderWrite write,
    gpointer user_data)
{
  ServerSenderSession *s = session_new (sender, media, key, nc);

  s->channel = rtp_channel;
  s->write = write;
  s->user_data = user_data;
  return s;
}

guint32
server_sender_session_ssrc (ServerSenderSession * session)
{
  return session->ssrc;
}

void
server_sender_session_seek (ServerSenderSession * s, gint64 from_packet,
    guint16 * seq, guint32 * rtptime, guint64 * start_ns)
{
  const ServerMpegtsIndex *index = s->media->index;
  ServerSender *self = s->sender;
  gint64 n_packets = index->size / SERVER_MPEGTS_PACKET;

  g_mutex_lock (&self->lock);
  s->playing = FALSE;
  s->bye_us = 0;
  if (from_packet >= n_packets) {
    s->next = index->n_chunks;
    s->skip = 0;
    s->mark = FALSE;
  } else if (from_packet >= 0) {
    s->next = from_packet / SERVER_MPEGTS_CHUNK_PACKETS;
    s->skip = s->nc ? 0 : from_packet % SERVER_MPEGTS_CHUNK_PACKETS;
    s->mark = !s->nc && from_packet > 0;
  }
  if (!s->nc) {
    s->anchor_ns = s->next < index->n_chunks ? index->due_ns[s->next] :
        index->duration_ns;
  } else {
    const ServerMpegtsGenerations *gens = s->media->gens;

    /* from the generation where that chunk's record begins (one half
     * written to its connection is dropped: the client flushes) */
    if (from_packet >= 0) {
      s->next_gen = server_mpegts_generations_seek (gens, index, s->next);
      if (self->in_round)
        s->drop_gen = s->gen != NULL;
      else
        g_clear_pointer (&s->gen, gst_gpustream_nc_generation_free);
    }
    s->anchor_ns = s->next_gen < gens->n_generations ?
        server_mpegts_generation_due_ns (gens, index, s->next_gen) :
        index->duration_ns;
  }
  *seq = s->seq;
  *rtptime = rtp_time (s, s->anchor_ns);
  *start_ns = s->anchor_ns;
  g_mutex_unlock (&self->lock);
}

void
server_sender_session_start (ServerSenderSession * s)
{
  ServerSender *self = s->sender;

  g_mutex_lock (&self->lock);
  s->anchor_us = g_get_monotonic_time ();
  s->next_report_us = s->anchor_us + SR_FIRST_US;
  s->playing = TRUE;
  g_cond_signal (&self->wake);
  g_mutex_unlock (&self->lock);
}

void
server_sender_session_pause (ServerSenderSession * s)
{
  g_mutex_lock (&s->sender->lock);
  s->playing = FALSE;
  g_mutex_unlock (&s->sender->lock);
}

void
server_sender_session_free (ServerSenderSession * s)
{
  ServerSender *self = s->sender;

  g_mutex_lock (&self->lock);
  if (self->in_round) {
    s->dead = TRUE;
    g_mutex_unlock (&self->lock);
    return;
  }
  g_ptr_array_remove_fast (self->sessions, s);
  g_mutex_unlock (&self->lock);
  session_free (s);
}

static void
session_free (ServerSenderSession * s)
{
  g_clear_pointer (&s->gen, gst_gpustream_nc_generation_free);
  server_sender_media_unref (s->media);
  if (s->srtp != NULL) {
    gsrtp_ctx_clear (s->srtp);
    g_free (s->srtp);
  }
  g_free (s);
}

void
server_sender_session_counts (ServerSenderSession * s, guint32 * packets,
    guint32 * octets, guint32 * generations)
{
  g_mutex_lock (&s->sender->lock);
  *packets = s->packets;
  *octets = s->octets;
  *generations = s->gen_id;
  g_mutex_unlock (&s->sender->lock);
}

const gchar *
server_sender_backend (ServerSender * sender)
{
  return gst_gpustream_backend_nick (sender->backend);
}

const gchar *
server_sender_srtp_backend (ServerSender * sender)
{
  return g_atomic_int_get (&sender->srtp_on_gpu) ? "gpu" : "cpu";
}
