/* cstpsink: sends each buffer as one frame over S parallel UDP streams with
 * the cross-stream code of Shaofeng Liu, Jürgen P. Schulze, Thomas A.
 * DeFanti, "CSTP: A parallel data transfer protocol using cross-stream
 * coding" (2011).
 *
 * SECTION:element-cstpsink
 * @title: cstpsink
 *
 * Every buffer is one frame. The frame is cut into S sub-frames, one per
 * stream (stream i goes to port + i, or to the i-th of `destinations`); each
 * stream sends a frame packet (the frame's length, timestamps and caps),
 * its N source packets as they are, then `overhead` x N redundancy packets:
 * repairs of its own sub-frame and, a share `pipe-width` of them, pipe
 * packets that add repairs of 2 or all S streams, so that the streams which
 * lose little lend their redundancy to those which lose much, without a
 * round trip. By default every redundancy packet is a pipe of all S
 * streams: the frame's redundancy is one pool, and a frame decodes once S x
 * N of its packets arrive, however the loss falls on the streams (at S
 * times the coding work of per-stream repairs). cstpsrc decodes.
 *
 * With `index` and `peers`, the element is one sender of a sending cluster:
 * its buffers are its tiles of the frames (the frame is the S tiles back to
 * back), it sends its own stream, sends its parts of the other streams'
 * pipe packets to their senders and adds theirs into its own, and sender 0
 * releases each frame once every sender has it (cstpcluster.c). The wire format is
 * docs/elements/cstp-code.md. The redundancy is coded on the process's
 * coder pool, as ncencoder's generations are: ISA-L on the CPU, the GPU
 * with backend=gpu (or hybrid, or auto where a CUDA device is found).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! video/x-raw,format=I420,width=1280,height=720 ! \
 *     cstpsink streams=4 host=127.0.0.1 port=5100 overhead=0.15 rate=400000000
 * ]|
 */
/* sendmmsg, recvmmsg, pipe2 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/base/gstbasesink.h>
#include <gst/video/video.h>
#include <fountain/fountain.h>
#include <gstgpustream.h>
#include <rlnc/rlnc_seed.h>

#include "cstpcluster.h"
#include "cstpmulticast.h"
#include "cstpsink.h"

GST_DEBUG_CATEGORY_STATIC (gst_cstp_sink_debug);
#define GST_CAT_DEFAULT gst_cstp_sink_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_STREAMS 4
#define DEFAULT_HOST "127.0.0.1"
#define DEFAULT_PORT 5100
#define DEFAULT_PACKET_SIZE 1400
#define DEFAULT_OVERHEAD 0.15
#define DEFAULT_PIPE_WIDTH 1.0
#define DEFAULT_STREAM_DEGREE GST_CSTP_STREAM_DEGREE_ALL
#define DEFAULT_RATE 0
#define DEFAULT_MAX_LATENCY 0
#define DEFAULT_TTL_MC 1
#define DEFAULT_LOOP TRUE
#define DEFAULT_INDEX -1
#define DEFAULT_SYNC_TIMEOUT (200 * GST_MSECOND)
/* the largest UDP payload over IPv4 */
#define MAX_PACKET_SIZE 65507
/* datagrams per sendmmsg call */
#define SEND_BATCH 64
/* the most a frame is sent ahead of its rate to make up the time spent
 * coding it (µs) */
#define PACE_CATCH_UP_US 10000

enum
{
  PROP_0,
  PROP_STREAMS,
  PROP_HOST,
  PROP_PORT,
  PROP_DESTINATIONS,
  PROP_PACKET_SIZE,
  PROP_OVERHEAD,
  PROP_PIPE_WIDTH,
  PROP_STREAM_DEGREE,
  PROP_RATE,
  PROP_MAX_LATENCY,
  PROP_TTL_MC,
  PROP_LOOP,
  PROP_MULTICAST_IFACE,
  PROP_INDEX,
  PROP_PEERS,
  PROP_SYNC_TIMEOUT,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

GType
gst_cstp_stream_degree_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CSTP_STREAM_DEGREE_MIXED, "Half of the pipe packets add all S "
          "streams, half the own stream and one other: D_s(x) = p (x^S / 2 + "
          "x^2 / 2) + (1 - p) x", "mixed"},
    {GST_CSTP_STREAM_DEGREE_ALL, "Every pipe packet adds all S streams: "
          "D_s(x) = p x^S + (1 - p) x", "all"},
    {GST_CSTP_STREAM_DEGREE_PAIRS, "Every pipe packet adds the own stream "
          "and one other: D_s(x) = p x^2 + (1 - p) x", "pairs"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCstpStreamDegree", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

struct _GstCstpSink
{
  GstBaseSink parent;

  /* properties (object lock) */
  guint streams;
  gchar *host;
  gint port;
  gchar *destinations;
  guint packet_size;
  gdouble overhead;
  gdouble pipe_width;
  GstCstpStreamDegree stream_degree;
  guint64 rate;
  guint64 max_latency;
  gint ttl_mc;
  gboolean loop;
  gchar *multicast_iface;
  gint index;                   /* this sender's stream in a cluster, or -1 */
  gchar *peers;
  guint64 sync_timeout;
  GstGpuStreamGpu gpu;          /* backend, cuda-device-id; the device */

  /* streaming state, set up in start () */
  guint n_streams;
  CstpCluster *cluster;         /* a cluster's sender: the exchange */
  guint own;                    /* its stream */
  gint *fds;                    /* one UDP socket per stream sent here */
  struct sockaddr_storage *addrs;
  socklen_t *addr_lens;
  gchar *caps_str;              /* the frame packets' caps */
  guint32 frame_id;
  /* the pacing schedule: since pace_origin (µs), pace_bytes per stream */
  gint64 pace_origin;
  guint64 pace_bytes, pace_rate;
  /* a frame's memory, kept for the next (render only) */
  gpointer padded, dgs, meta, heads, repairs, masks, drawn, parts;
  gsize padded_cap, dgs_cap, meta_cap, heads_cap, repairs_cap, masks_cap,
      drawn_cap, parts_cap;

  /* stats (object lock) */
  guint64 frames;
  guint64 frames_rate_raised;
  guint64 *packets_sent;
  guint64 *send_errors;
  guint64 bytes_sent;
  guint64 encode_ns;
};

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

G_DEFINE_TYPE (GstCstpSink, gst_cstp_sink, GST_TYPE_BASE_SINK);
GST_ELEMENT_REGISTER_DEFINE (cstpsink, "cstpsink", GST_RANK_NONE,
    GST_TYPE_CSTP_SINK);

/* What `streams` tiles make together, as the frame packets announce it:
 * raw video of one plane becomes S times as tall (the tiles are its bands,
 * top to bottom); other caps stay as they are. */
static GstCaps *
cluster_frame_caps (GstCaps * tile, guint streams)
{
  GstVideoInfo info;
  GstCaps *frame = gst_caps_copy (tile);
  if (gst_caps_is_fixed (tile) && gst_video_info_from_caps (&info, tile)
      && GST_VIDEO_INFO_N_PLANES (&info) == 1)
    gst_caps_set_simple (frame, "height", G_TYPE_INT,
        (gint) (GST_VIDEO_INFO_HEIGHT (&info) * streams), NULL);
  return frame;
}

static gboolean
gst_cstp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);
  GstCaps *frame = self->cluster ? cluster_frame_caps (caps, self->n_streams)
      : gst_caps_ref (caps);
  gchar *s = gst_caps_to_string (frame);
  gst_caps_unref (frame);

  if (strlen (s) > G_MAXUINT16) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("caps of %" G_GSIZE_FORMAT " bytes do not fit a frame packet "
            "(at most 65535)", strlen (s)), (NULL));
    g_free (s);
    return FALSE;
  }
  g_free (self->caps_str);
  self->caps_str = s;
  return TRUE;
}

/* ---- the data path ------------------------------------------------------- */

static gdouble
stream_degree_all_share (GstCstpStreamDegree degree)
{
  return degree == GST_CSTP_STREAM_DEGREE_ALL ? 1.0
      : degree == GST_CSTP_STREAM_DEGREE_PAIRS ? 0.0 : 0.5;
}

/* One datagram to send: its header (or a whole frame packet) and its
 * payload, sent as two pieces so that source payloads go out of the
 * buffer itself, uncopied. */
typedef struct
{
  guint8 *head;
  gsize head_len;
  const guint8 *payload;
  gsize payload_len;
} Datagram;

/* Memory a frame needs, kept from frame to frame (streaming thread only):
 * fresh allocations of a 4 MiB frame cost a page fault every 4 KiB. */
static gpointer
scratch (gpointer * area, gsize * cap, gsize len)
{
  if (len > *cap) {
    g_free (*area);
    *area = g_malloc (len);
    *cap = len;
  }
  return *area;
}

static void
xor_into (guint8 * dst, const guint8 * src, gsize len)
{
  gsize i = 0;
  for (; i + 8 <= len; i += 8) {
    guint64 a, b;
    memcpy (&a, dst + i, 8);
    memcpy (&b, src + i, 8);
    a ^= b;
    memcpy (dst + i, &a, 8);
  }
  for (; i < len; i++)
    dst[i] ^= src[i];
}

/* Sleeps until a stream that sent `bytes` since the schedule's origin is
 * within its rate. */
static void
pace (guint64 bits_per_s, gint64 origin, guint64 bytes)
{
  if (bits_per_s == 0)
    return;
  gint64 due = origin + (gint64) (bytes * 8 * G_USEC_PER_SEC / bits_per_s);
  gint64 now = g_get_monotonic_time ();
  if (due > now)
    g_usleep ((gulong) (due - now));
}

/* Sends the frame's datagrams, stream by stream in turns of SEND_BATCH, so
 * that the S streams leave side by side. The rate holds over frames, not
 * within each: time spent coding a frame is made up by sending it early, by
 * at most PACE_CATCH_UP_US of the rate (else a sender that coded for long
 * would be below its rate on average); after a longer gap (idle, or a
 * frame later than that) the schedule starts again from now. */
static gboolean
send_frame (GstCstpSink * self, Datagram ** dg, guint per_stream,
    guint64 rate)
{
  guint S = self->n_streams;
  struct mmsghdr msgs[SEND_BATCH];
  struct iovec iov[SEND_BATCH][2];
  gint64 now = g_get_monotonic_time ();

  if (rate != self->pace_rate || rate == 0 || now - (self->pace_origin +
          (gint64) (self->pace_bytes * 8 * G_USEC_PER_SEC / rate))
      > PACE_CATCH_UP_US) {
    self->pace_origin = now;
    self->pace_bytes = 0;
    self->pace_rate = rate;
  }
  for (guint off = 0; off < per_stream; off += SEND_BATCH) {
    guint count = MIN (SEND_BATCH, per_stream - off);
    gsize turn_bytes = 0;
    gint turn_bytes_stream = -1;        /* the first stream sent here */
    for (guint s = 0; s < S; s++) {
      if (dg[s] == NULL)
        continue;               /* another sender's stream */
      memset (msgs, 0, sizeof msgs);
      for (guint i = 0; i < count; i++) {
        Datagram *d = &dg[s][off + i];
        iov[i][0].iov_base = d->head;
        iov[i][0].iov_len = d->head_len;
        iov[i][1].iov_base = (void *) d->payload;
        iov[i][1].iov_len = d->payload_len;
        msgs[i].msg_hdr.msg_iov = iov[i];
        msgs[i].msg_hdr.msg_iovlen = d->payload_len ? 2 : 1;
        msgs[i].msg_hdr.msg_name = &self->addrs[s];
        msgs[i].msg_hdr.msg_namelen = self->addr_lens[s];
        if (turn_bytes_stream < 0)
          turn_bytes_stream = (gint) s;
        if ((gint) s == turn_bytes_stream)
          turn_bytes += d->head_len + d->payload_len;
      }
      guint done = 0;
      while (done < count) {
        int n = sendmmsg (self->fds[s], msgs + done, count - done, 0);
        if (n < 0) {
          if (errno == EINTR)
            continue;
          /* an unreachable port or a full queue: the datagram is lost like
           * any other, the code is there for that */
          GST_OBJECT_LOCK (self);
          self->send_errors[s]++;
          GST_OBJECT_UNLOCK (self);
          GST_LOG_OBJECT (self, "stream %u: send failed: %s", s,
              g_strerror (errno));
          done++;
          continue;
        }
        done += (guint) n;
      }
      GST_OBJECT_LOCK (self);
      self->packets_sent[s] += count;
      GST_OBJECT_UNLOCK (self);
    }
    self->pace_bytes += turn_bytes;
    pace (rate, self->pace_origin, self->pace_bytes);
  }
  return TRUE;
}

/* The redundancy payloads of a frame: for each stream t, every repair
 * combination of t's sub-frame that a packet needs (its own repairs, its
 * part of every pipe that covers it); the first part of a packet is coded
 * straight into it, later ones (the other streams of a pipe) added. One
 * GF(2^8) product per stream, all S in flight at once on the process's
 * coder pool (gstgpustream.h), where the backend says: its CPU coders
 * (ISA-L), the GPU coder of the element's device, or whichever is idle
 * first. The bytes are the same on each (a coefficient of a seed is
 * rlnc_seed_coef everywhere), and those of fountain_encode_repairs. FALSE
 * when a job failed. */
static gboolean
encode_redundancy (GstCstpSink * self, guint32 n, gsize k, guint32 red,
    guint32 frame_id, const guint8 * const *subs, const guint64 * masks,
    guint8 * repairs)
{
  guint S = self->n_streams;
  GstGpuStreamBackend where = self->gpu.resolved;
  gsize most = (gsize) S * red;
  /* per stream t: its parts' seeds, the packets they go to, where each is
   * coded; parts of a pipe beyond its first need room of their own */
  guint32 *seeds = g_new (guint32, S * most);
  guint8 **targets = g_new (guint8 *, S * most);
  guint8 **outs = g_new (guint8 *, S * most);
  gint *count = g_new0 (gint, S);
  guint8 *started = g_malloc0 (most);
  gsize extra = 0;
  gboolean ok = TRUE;

  /* a cluster's sender has its own sub-frame only (the others NULL): its
   * parts of the other streams' pipes are coded into their packets' slots,
   * which it sends to their senders instead */
  for (guint t = 0; t < S; t++)
    for (guint s = 0; subs[t] && s < S; s++)
      for (guint32 r = 0; r < red; r++) {
        guint64 mask = masks[(gsize) s * red + r];
        if (mask >> t & 1 && started[(gsize) s * red + r])
          extra++;
        else if (mask >> t & 1)
          started[(gsize) s * red + r] = 1;
      }
  guint8 *parts = scratch ((gpointer *) & self->parts, &self->parts_cap,
      MAX (extra, 1) * k);
  memset (started, 0, most);
  extra = 0;
  for (guint t = 0; t < S; t++) {
    guint32 *ts = seeds + t * most;
    guint8 **tt = targets + t * most, **to = outs + t * most;
    for (guint s = 0; subs[t] && s < S; s++)
      for (guint32 r = 0; r < red; r++) {
        guint64 mask = masks[(gsize) s * red + r];
        if (!(mask >> t & 1))
          continue;
        guint32 seed = cstp_redundancy_seed (frame_id, s, r);
        gsize packet = (gsize) s * red + r;
        gint j = count[t]++;
        ts[j] = mask == 1ull << s ? seed
            : fountain_pipe_component_seed (seed, (int) t);
        tt[j] = repairs + packet * k;
        if (started[packet]) {
          to[j] = parts + extra++ * k;
        } else {
          to[j] = tt[j];
          started[packet] = 1;
        }
      }
  }

  GstGpuStreamCoderJob **jobs = g_new0 (GstGpuStreamCoderJob *, S);
  guint8 **coefs = g_new0 (guint8 *, S);
  const guint8 **src = g_new (const guint8 *, (gsize) S * n);
  for (guint t = 0; t < S; t++) {
    if (count[t] == 0)
      continue;
    coefs[t] = g_malloc ((gsize) count[t] * n);
    for (gint j = 0; j < count[t]; j++)
      rlnc_seed_coefs (seeds[t * most + j], (int) n, coefs[t] + (gsize) j * n);
    for (guint32 i = 0; i < n; i++)
      src[(gsize) t * n + i] = subs[t] + (gsize) i * k;
    GstGpuStreamGfProduct product = {.k = k,.m = (gint) n,.n = count[t],
      .coefs = coefs[t],.src = src + (gsize) t * n,.out = outs + t * most
    };
    jobs[t] = gst_gpustream_coder_submit (&product, where,
        self->gpu.cuda_context);
  }
  for (guint t = 0; t < S; t++) {
    if (jobs[t] && !gst_gpustream_coder_job_wait (jobs[t]))
      ok = FALSE;
    g_free (coefs[t]);
  }
  g_free (jobs);
  g_free (coefs);
  g_free (src);
  for (guint t = 0; ok && t < S; t++)
    for (gint j = 0; j < count[t]; j++)
      if (outs[t * most + j] != targets[t * most + j])
        xor_into (targets[t * most + j], outs[t * most + j], k);
  g_free (seeds);
  g_free (targets);
  g_free (outs);
  g_free (count);
  g_free (started);
  return ok;
}

/* A sender of a cluster cuts its tile of T bytes into N symbols of one
 * size that divides T, so that tile s is exactly sub-frame s of the frame
 * of S x T bytes: the largest divisor of T up to the packet's payload, or 0
 * when that is under half of it (a tile size with no useful divisor). */
static gsize
cluster_symbol_size (gsize tile, gsize most)
{
  for (gsize k = MIN (most, tile); k >= 1 && k * 2 >= MIN (most, tile); k--)
    if (tile % k == 0)
      return k;
  return 0;
}

static GstFlowReturn
gst_cstp_sink_render (GstBaseSink * bsink, GstBuffer * buf)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);
  guint S = self->n_streams;
  gint me = self->cluster ? (gint) self->own : -1;
  GstMapInfo map;

  /* what failed on the GPU among the frames before is said here */
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);

  GST_OBJECT_LOCK (self);
  guint packet_size = self->packet_size;
  gdouble overhead = self->overhead, pipe_width = self->pipe_width;
  gdouble all_share = stream_degree_all_share (self->stream_degree);
  guint64 rate = self->rate, max_latency = self->max_latency;
  GST_OBJECT_UNLOCK (self);

  gsize k = packet_size - FOUNTAIN_HEADER_SIZE;
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return GST_FLOW_ERROR;
  if (map.size == 0) {
    gst_buffer_unmap (buf, &map);
    return GST_FLOW_OK;         /* nothing to carry */
  }
  /* a cluster's sender has its own tile, sub-frame `me` of S x T bytes */
  gsize frame_size = me >= 0 ? map.size * S : map.size;
  if (me >= 0) {
    k = cluster_symbol_size (map.size, k);
    if (k == 0) {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("a tile of %" G_GSIZE_FORMAT " bytes has no divisor between half "
              "the packet's payload and all of it (%u bytes): choose a "
              "packet-size whose payload divides the tile", map.size,
              packet_size - FOUNTAIN_HEADER_SIZE), (NULL));
      gst_buffer_unmap (buf, &map);
      return GST_FLOW_ERROR;
    }
  }
  guint32 n = frame_size > G_MAXUINT32 ? 0
      : fountain_subframe_symbols ((guint32) frame_size, (int) S,
      (uint16_t) k);
  if (n == 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("a frame of %" G_GSIZE_FORMAT " bytes over %u streams in symbols of "
            "%" G_GSIZE_FORMAT " bytes needs more than %d symbols per stream: "
            "raise packet-size or streams", frame_size, S, k, FOUNTAIN_MAX_N),
        (NULL));
    gst_buffer_unmap (buf, &map);
    return GST_FLOW_ERROR;
  }
  guint32 red = (guint32) ceil (n * overhead);
  guint32 frame_id = self->frame_id++;
  gint64 t0 = g_get_monotonic_time ();

  /* stream s's sub-frame is bytes s*N*k.. of the frame, zero-padded to N*k:
   * read in place, but for the sub-frames that reach past the end, copied
   * with their padding; a cluster's sender has only its own */
  gsize sub_len = (gsize) n * k;
  guint whole = (guint) MIN (map.size / sub_len, S);
  guint8 *padded = scratch (&self->padded, &self->padded_cap,
      MAX ((S - whole) * sub_len, 1));
  const guint8 *subs[FOUNTAIN_MAX_STREAMS] = { NULL };
  for (guint s = 0; s < S; s++) {
    if (me >= 0) {
      subs[s] = s == (guint) me ? map.data : NULL;
      continue;
    }
    if (s < whole) {
      subs[s] = map.data + (gsize) s * sub_len;
      continue;
    }
    guint8 *p = padded + (gsize) (s - whole) * sub_len;
    gsize off = (gsize) s * sub_len;
    gsize have = off < map.size ? MIN (sub_len, map.size - off) : 0;
    memcpy (p, map.data + off, have);
    memset (p + have, 0, sub_len - have);
    subs[s] = p;
  }

  /* every stream's redundancy masks (a cluster's sender needs the others'
   * too: its parts of their pipes), then the payloads */
  guint8 *repairs = scratch ((gpointer *) & self->repairs, &self->repairs_cap,
      MAX ((gsize) S * red * k, 1));
  guint64 *masks = scratch ((gpointer *) & self->masks, &self->masks_cap,
      (gsize) S * MAX (red, 1) * sizeof (guint64));
  guint64 *drawn = scratch ((gpointer *) & self->drawn, &self->drawn_cap,
      (gsize) S * MAX (red, 1) * sizeof (guint64));
  for (guint s = 0; s < S; s++)
    for (guint32 r = 0; r < red; r++)
      masks[(gsize) s * red + r] = drawn[(gsize) s * red + r] =
          fountain_stream_degree_draw_shared (pipe_width, all_share, (int) S,
          (int) s, frame_id, r);
  if (red > 0 && !encode_redundancy (self, n, k, red, frame_id, subs, masks,
          repairs)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("coding the redundancy of frame %u failed", frame_id), (NULL));
    gst_buffer_unmap (buf, &map);
    return GST_FLOW_ERROR;
  }
  if (me >= 0 && red > 0) {
    /* the others' parts of this stream's pipes; a pipe carries the streams
     * whose part came (its mask says which) */
    CstpClusterFrame cf = {.frame_id = frame_id,.n = (guint16) n,
      .symbol_size = (guint16) k,.frame_len = (guint32) frame_size,
      .red = red,.masks = drawn
    };
    if (!cstp_cluster_exchange (self->cluster, &cf, repairs, repairs
            + (gsize) me * red * k, masks + (gsize) me * red)) {
      gst_buffer_unmap (buf, &map);
      return GST_FLOW_FLUSHING;
    }
  }
  gint64 t1 = g_get_monotonic_time ();

  /* datagrams: per stream the frame packet, N sources, `red` redundancy */
  guint per_stream = 1 + n + red;
  gsize caps_len = self->caps_str ? strlen (self->caps_str) : 0;
  Datagram *dgs = scratch ((gpointer *) & self->dgs, &self->dgs_cap,
      (gsize) S * per_stream * sizeof (Datagram));
  Datagram *dg[FOUNTAIN_MAX_STREAMS] = { NULL };
  guint8 *meta = scratch ((gpointer *) & self->meta, &self->meta_cap,
      (FOUNTAIN_META_SIZE + caps_len) * S);
  guint8 *heads = scratch ((gpointer *) & self->heads, &self->heads_cap,
      (gsize) S * (n + red) * FOUNTAIN_HEADER_SIZE);
  guint8 flags = (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT) ?
      FOUNTAIN_META_FLAG_DELTA : 0) |
      (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_HEADER) ?
      FOUNTAIN_META_FLAG_HEADER : 0);

  for (guint s = 0; s < S; s++) {
    if (subs[s] == NULL)
      continue;
    dg[s] = dgs + (gsize) s * per_stream;
    FountainMeta m = {.streams = (uint8_t) S,.stream = (uint8_t) s,
      .flags = flags,.frame_id = frame_id,.frame_len = (uint32_t) frame_size,
      .pts = GST_BUFFER_PTS_IS_VALID (buf) ? GST_BUFFER_PTS (buf) :
          FOUNTAIN_META_NONE,
      .duration = GST_BUFFER_DURATION_IS_VALID (buf) ?
          GST_BUFFER_DURATION (buf) : FOUNTAIN_META_NONE,
      .caps_len = (uint16_t) caps_len,.caps = self->caps_str
    };
    guint8 *mp = meta + (FOUNTAIN_META_SIZE + caps_len) * s;
    dg[s][0] = (Datagram) {.head = mp,.head_len = (gsize)
          fountain_meta_write (&m, mp, FOUNTAIN_META_SIZE + caps_len)
    };

    for (guint32 i = 0; i < n + red; i++) {
      guint8 *head = heads + ((gsize) s * (n + red) + i) * FOUNTAIN_HEADER_SIZE;
      FountainHeader h = {.streams = (uint8_t) S,.stream = (uint8_t) s,
        .frame_id = frame_id,.n = (uint16_t) n,.symbol_size = (uint16_t) k,
        .frame_len = (uint32_t) frame_size
      };
      const guint8 *payload;
      if (i < n) {
        h.kind = FOUNTAIN_KIND_SOURCE;
        h.index_or_seed = i;
        payload = subs[s] + (gsize) i * k;
      } else {
        guint32 r = i - n;
        guint64 mask = masks[(gsize) s * red + r];
        guint32 seed = cstp_redundancy_seed (frame_id, s, r);
        h.kind = mask == 1ull << s ? FOUNTAIN_KIND_REPAIR : FOUNTAIN_KIND_PIPE;
        h.pipe_mask = h.kind == FOUNTAIN_KIND_PIPE ? mask : 0;
        /* a pipe left with its own part alone is a repair of that part */
        h.index_or_seed = h.kind == FOUNTAIN_KIND_PIPE
            || drawn[(gsize) s * red + r] == mask ? seed
            : fountain_pipe_component_seed (seed, (int) s);
        payload = repairs + ((gsize) s * red + r) * k;
      }
      /* the 32 header bytes; the payload goes out from where it is */
      fountain_header_write (&h, head, FOUNTAIN_HEADER_SIZE);
      dg[s][1 + i] = (Datagram) {.head = head,.head_len = FOUNTAIN_HEADER_SIZE,
        .payload = payload,.payload_len = k
      };
    }
  }

  /* a frame may not take longer than max-latency to leave */
  guint64 frame_bits = (guint64) per_stream * packet_size * 8;
  gboolean raised = FALSE;
  if (rate > 0 && max_latency > 0
      && gst_util_uint64_scale (frame_bits, GST_SECOND, rate) > max_latency) {
    rate = gst_util_uint64_scale (frame_bits, GST_SECOND, max_latency);
    raised = TRUE;
  }
  send_frame (self, dg, per_stream, rate);

  guint sent_streams = me >= 0 ? 1 : S;
  GST_OBJECT_LOCK (self);
  self->frames++;
  self->frames_rate_raised += raised;
  self->bytes_sent += (guint64) sent_streams * ((guint64) (n + red) *
      (FOUNTAIN_HEADER_SIZE + k) + FOUNTAIN_META_SIZE + caps_len);
  self->encode_ns += (guint64) (t1 - t0) * 1000;
  GST_OBJECT_UNLOCK (self);

  gst_buffer_unmap (buf, &map);
  return GST_FLOW_OK;
}

/* "h:p,h:p,..." or, when empty, host:port+i; one address per stream. */
static gboolean
resolve_destinations (GstCstpSink * self, GError ** err)
{
  guint S = self->n_streams;
  gchar **list = NULL;
  if (self->destinations && *self->destinations) {
    list = g_strsplit (self->destinations, ",", -1);
    if (g_strv_length (list) != S) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "destinations has %u entries, streams is %u", g_strv_length (list),
          S);
      g_strfreev (list);
      return FALSE;
    }
  }
  for (guint s = 0; s < S; s++) {
    gchar *host;
    gint port;
    if (self->index >= 0 && s != (guint) self->index)
      continue;                 /* a cluster's sender sends its own stream */
    if (list) {
      gchar *entry = g_strstrip (list[s]);
      gchar *colon = strrchr (entry, ':');
      gchar *end = NULL;
      port = colon ? (gint) g_ascii_strtoll (colon + 1, &end, 10) : -1;
      if (!colon || colon == entry || !end || *end || port < 1 || port > 65535) {
        g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
            "destination '%s' is not host:port", entry);
        g_strfreev (list);
        return FALSE;
      }
      host = g_strndup (entry, (gsize) (colon - entry));
    } else {
      host = g_strdup (self->host);
      port = self->port + (gint) s;
      if (port > 65535) {
        g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
            "port %d + stream %u is beyond 65535", self->port, s);
        g_free (host);
        return FALSE;
      }
    }
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM }, *ai = NULL;
    gchar service[8];
    g_snprintf (service, sizeof service, "%d", port);
    int rc = getaddrinfo (host, service, &hints, &ai);
    if (rc != 0 || ai == NULL) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "cannot resolve '%s': %s", host, gai_strerror (rc));
      g_free (host);
      g_strfreev (list);
      return FALSE;
    }
    memcpy (&self->addrs[s], ai->ai_addr, ai->ai_addrlen);
    self->addr_lens[s] = ai->ai_addrlen;
    self->fds[s] = socket (ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    freeaddrinfo (ai);
    if (self->fds[s] < 0) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_WRITE,
          "cannot open a UDP socket for stream %u: %s", s, g_strerror (errno));
      g_free (host);
      g_strfreev (list);
      return FALSE;
    }
    int sndbuf = 4 << 20;
    setsockopt (self->fds[s], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (cstp_address_is_multicast ((struct sockaddr *) &self->addrs[s])
        && !cstp_multicast_setup_sender (self->fds[s],
            (struct sockaddr *) &self->addrs[s], self->ttl_mc, self->loop,
            self->multicast_iface, err)) {
      g_prefix_error (err, "stream %u to %s:%d: ", s, host, port);
      g_free (host);
      g_strfreev (list);
      return FALSE;
    }
    GST_INFO_OBJECT (self, "stream %u -> %s:%d", s, host, port);
    g_free (host);
  }
  g_strfreev (list);
  return TRUE;
}

static void
close_sockets (GstCstpSink * self)
{
  for (guint s = 0; self->fds && s < self->n_streams; s++)
    if (self->fds[s] >= 0)
      close (self->fds[s]);
  g_clear_pointer (&self->fds, g_free);
  g_clear_pointer (&self->addrs, g_free);
  g_clear_pointer (&self->addr_lens, g_free);
}

static gboolean
gst_cstp_sink_start (GstBaseSink * bsink)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);
  GError *err = NULL;

  GST_OBJECT_LOCK (self);
  self->n_streams = self->streams;
  if (self->packet_size <= FOUNTAIN_HEADER_SIZE) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("packet-size %u leaves no payload after the %d-byte header",
            self->packet_size, FOUNTAIN_HEADER_SIZE), (NULL));
    return FALSE;
  }
  self->fds = g_new (gint, self->n_streams);
  for (guint s = 0; s < self->n_streams; s++)
    self->fds[s] = -1;
  self->addrs = g_new0 (struct sockaddr_storage, self->n_streams);
  self->addr_lens = g_new0 (socklen_t, self->n_streams);
  g_free (self->packets_sent);
  g_free (self->send_errors);
  self->packets_sent = g_new0 (guint64, self->n_streams);
  self->send_errors = g_new0 (guint64, self->n_streams);
  self->frames = self->frames_rate_raised = self->bytes_sent = 0;
  self->encode_ns = 0;
  gboolean ok = TRUE;
  if (self->index >= (gint) self->n_streams) {
    g_set_error (&err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "index %d is not a stream of %u", self->index, self->n_streams);
    ok = FALSE;
  }
  ok = ok && resolve_destinations (self, &err);
  CstpClusterConfig cfg = {.streams = self->n_streams,
    .index = (guint) MAX (self->index, 0),.peers = self->peers,
    .timeout_us = (gint64) (self->sync_timeout / 1000),
    .overhead = self->overhead,.pipe_width = self->pipe_width,
    .all_share = stream_degree_all_share (self->stream_degree)
  };
  gboolean clustered = self->index >= 0;
  GST_OBJECT_UNLOCK (self);
  if (ok && clustered) {
    self->cluster = cstp_cluster_new (GST_ELEMENT (self), &cfg, &err);
    self->own = cfg.index;
    ok = self->cluster != NULL;
  }
  self->frame_id = 0;
  self->pace_origin = 0;
  self->pace_bytes = self->pace_rate = 0;
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("%s", err->message), (NULL));
    g_error_free (err);
    close_sockets (self);
  }
  return ok;
}

static void
free_scratch (GstCstpSink * self)
{
  g_clear_pointer (&self->padded, g_free);
  g_clear_pointer (&self->dgs, g_free);
  g_clear_pointer (&self->meta, g_free);
  g_clear_pointer (&self->heads, g_free);
  g_clear_pointer (&self->repairs, g_free);
  g_clear_pointer (&self->masks, g_free);
  g_clear_pointer (&self->drawn, g_free);
  g_clear_pointer (&self->parts, g_free);
  self->padded_cap = self->dgs_cap = self->meta_cap = self->heads_cap = 0;
  self->repairs_cap = self->masks_cap = self->drawn_cap = self->parts_cap = 0;
}

static gboolean
gst_cstp_sink_stop (GstBaseSink * bsink)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);
  /* stats read the cluster's counters under the object lock */
  GST_OBJECT_LOCK (self);
  CstpCluster *cluster = self->cluster;
  self->cluster = NULL;
  GST_OBJECT_UNLOCK (self);
  cstp_cluster_free (cluster);
  close_sockets (self);
  free_scratch (self);
  g_clear_pointer (&self->caps_str, g_free);
  return TRUE;
}

/* A frame waiting for its release gives up at once when flushing. */
static gboolean
gst_cstp_sink_unlock (GstBaseSink * bsink)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);
  if (self->cluster)
    cstp_cluster_set_flushing (self->cluster, TRUE);
  return TRUE;
}

static gboolean
gst_cstp_sink_unlock_stop (GstBaseSink * bsink)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);
  if (self->cluster)
    cstp_cluster_set_flushing (self->cluster, FALSE);
  return TRUE;
}

/* ---- GObject boilerplate ------------------------------------------------- */

static GstStructure *
gst_cstp_sink_get_stats (GstCstpSink * self)
{
  GstStructure *s;
  GST_OBJECT_LOCK (self);
  s = gst_structure_new ("application/x-cstp-sink-stats",
      "streams", G_TYPE_UINT, self->n_streams,
      "frames", G_TYPE_UINT64, self->frames,
      "frames-rate-raised", G_TYPE_UINT64, self->frames_rate_raised,
      "bytes-sent", G_TYPE_UINT64, self->bytes_sent,
      "encode-time", G_TYPE_UINT64, self->encode_ns,
      "backend", G_TYPE_STRING, gst_gpustream_backend_nick (self->gpu.resolved),
      NULL);
  guint64 total = 0;
  for (guint i = 0; self->packets_sent && i < self->n_streams; i++) {
    gchar name[48];
    g_snprintf (name, sizeof name, "stream-%u-packets-sent", i);
    gst_structure_set (s, name, G_TYPE_UINT64, self->packets_sent[i], NULL);
    g_snprintf (name, sizeof name, "stream-%u-send-errors", i);
    gst_structure_set (s, name, G_TYPE_UINT64, self->send_errors[i], NULL);
    total += self->packets_sent[i];
  }
  gst_structure_set (s, "packets-sent", G_TYPE_UINT64, total, NULL);
  if (self->cluster)
    cstp_cluster_add_stats (self->cluster, s);
  GST_OBJECT_UNLOCK (self);
  /* this property hides GstBaseSink's "stats": carry its fields (rendered,
   * dropped, average-rate) along, so nothing of the base class is lost */
  GstStructure *base = gst_base_sink_get_stats (GST_BASE_SINK (self));
  for (gint i = 0; base && i < gst_structure_n_fields (base); i++) {
    const gchar *field = gst_structure_nth_field_name (base, i);
    gst_structure_set_value (s, field, gst_structure_get_value (base, field));
  }
  g_clear_pointer (&base, gst_structure_free);
  return s;
}

static void
gst_cstp_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCstpSink *self = GST_CSTP_SINK (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_STREAMS:
      self->streams = g_value_get_uint (value);
      break;
    case PROP_HOST:
      g_free (self->host);
      self->host = g_value_dup_string (value);
      break;
    case PROP_PORT:
      self->port = g_value_get_int (value);
      break;
    case PROP_DESTINATIONS:
      g_free (self->destinations);
      self->destinations = g_value_dup_string (value);
      break;
    case PROP_PACKET_SIZE:
      self->packet_size = g_value_get_uint (value);
      break;
    case PROP_OVERHEAD:
      self->overhead = g_value_get_double (value);
      break;
    case PROP_PIPE_WIDTH:
      self->pipe_width = g_value_get_double (value);
      break;
    case PROP_STREAM_DEGREE:
      self->stream_degree = g_value_get_enum (value);
      break;
    case PROP_RATE:
      self->rate = g_value_get_uint64 (value);
      break;
    case PROP_MAX_LATENCY:
      self->max_latency = g_value_get_uint64 (value);
      break;
    case PROP_TTL_MC:
      self->ttl_mc = g_value_get_int (value);
      break;
    case PROP_LOOP:
      self->loop = g_value_get_boolean (value);
      break;
    case PROP_MULTICAST_IFACE:
      g_free (self->multicast_iface);
      self->multicast_iface = g_value_dup_string (value);
      break;
    case PROP_INDEX:
      self->index = g_value_get_int (value);
      break;
    case PROP_PEERS:
      g_free (self->peers);
      self->peers = g_value_dup_string (value);
      break;
    case PROP_SYNC_TIMEOUT:
      self->sync_timeout = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cstp_sink_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCstpSink *self = GST_CSTP_SINK (object);

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_cstp_sink_get_stats (self));
    return;
  }
  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_STREAMS:
      g_value_set_uint (value, self->streams);
      break;
    case PROP_HOST:
      g_value_set_string (value, self->host);
      break;
    case PROP_PORT:
      g_value_set_int (value, self->port);
      break;
    case PROP_DESTINATIONS:
      g_value_set_string (value, self->destinations);
      break;
    case PROP_PACKET_SIZE:
      g_value_set_uint (value, self->packet_size);
      break;
    case PROP_OVERHEAD:
      g_value_set_double (value, self->overhead);
      break;
    case PROP_PIPE_WIDTH:
      g_value_set_double (value, self->pipe_width);
      break;
    case PROP_STREAM_DEGREE:
      g_value_set_enum (value, self->stream_degree);
      break;
    case PROP_RATE:
      g_value_set_uint64 (value, self->rate);
      break;
    case PROP_MAX_LATENCY:
      g_value_set_uint64 (value, self->max_latency);
      break;
    case PROP_TTL_MC:
      g_value_set_int (value, self->ttl_mc);
      break;
    case PROP_LOOP:
      g_value_set_boolean (value, self->loop);
      break;
    case PROP_MULTICAST_IFACE:
      g_value_set_string (value, self->multicast_iface);
      break;
    case PROP_INDEX:
      g_value_set_int (value, self->index);
      break;
    case PROP_PEERS:
      g_value_set_string (value, self->peers);
      break;
    case PROP_SYNC_TIMEOUT:
      g_value_set_uint64 (value, self->sync_timeout);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cstp_sink_finalize (GObject * object)
{
  GstCstpSink *self = GST_CSTP_SINK (object);

  close_sockets (self);
  free_scratch (self);
  g_free (self->host);
  g_free (self->destinations);
  g_free (self->multicast_iface);
  g_free (self->peers);
  g_free (self->caps_str);
  g_free (self->packets_sent);
  g_free (self->send_errors);
  G_OBJECT_CLASS (gst_cstp_sink_parent_class)->finalize (object);
}

static gboolean
gst_cstp_sink_query (GstBaseSink * bsink, GstQuery * query)
{
  GstCstpSink *self = GST_CSTP_SINK (bsink);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self), &self->gpu,
          query))
    return TRUE;
  return GST_BASE_SINK_CLASS (gst_cstp_sink_parent_class)->query (bsink,
      query);
}

static void
gst_cstp_sink_set_context (GstElement * element, GstContext * context)
{
  GstCstpSink *self = GST_CSTP_SINK (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (gst_cstp_sink_parent_class)->set_context (element,
      context);
}

static GstStateChangeReturn
gst_cstp_sink_change_state (GstElement * element, GstStateChange transition)
{
  GstCstpSink *self = GST_CSTP_SINK (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_NULL_TO_READY &&
      !gst_gpustream_gpu_start (element, &self->gpu))
    return GST_STATE_CHANGE_FAILURE;
  ret = GST_ELEMENT_CLASS (gst_cstp_sink_parent_class)->change_state (element,
      transition);
  if (transition == GST_STATE_CHANGE_READY_TO_NULL)
    gst_gpustream_gpu_stop (&self->gpu);
  return ret;
}

static void
gst_cstp_sink_class_init (GstCstpSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_cstp_sink_set_property;
  gobject_class->get_property = gst_cstp_sink_get_property;
  gobject_class->finalize = gst_cstp_sink_finalize;

  g_object_class_install_property (gobject_class, PROP_STREAMS,
      g_param_spec_uint ("streams", "Streams",
          "S: parallel UDP streams, each carrying one sub-frame of every frame",
          1, FOUNTAIN_MAX_STREAMS, DEFAULT_STREAMS, rw));
  g_object_class_install_property (gobject_class, PROP_HOST,
      g_param_spec_string ("host", "Host",
          "Receiver's address (with port; ignored when destinations is set)",
          DEFAULT_HOST, rw));
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port",
          "Base port: stream i goes to port + i", 1, 65535, DEFAULT_PORT, rw));
  g_object_class_install_property (gobject_class, PROP_DESTINATIONS,
      g_param_spec_string ("destinations", "Destinations",
          "One host:port per stream, comma-separated (\"h:p,h:p,...\"); "
          "overrides host and port", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_PACKET_SIZE,
      g_param_spec_uint ("packet-size", "Packet size",
          "Bytes of every code datagram: the 32-byte header plus one symbol",
          FOUNTAIN_HEADER_SIZE + 1, MAX_PACKET_SIZE, DEFAULT_PACKET_SIZE, rw));
  g_object_class_install_property (gobject_class, PROP_OVERHEAD,
      g_param_spec_double ("overhead", "Overhead",
          "Redundancy packets per stream as a fraction of its N source "
          "packets (rounded up): the loss the streams can recover together",
          0.0, 10.0, DEFAULT_OVERHEAD, rw));
  g_object_class_install_property (gobject_class, PROP_PIPE_WIDTH,
      g_param_spec_double ("pipe-width", "Pipe width",
          "p: the share of redundancy packets that are pipe packets, which "
          "let streams lend redundancy to each other (0: every stream on its "
          "own; 1 with stream-degree=all: one pool for the whole frame)",
          0.0, 1.0, DEFAULT_PIPE_WIDTH, rw));
  g_object_class_install_property (gobject_class, PROP_STREAM_DEGREE,
      g_param_spec_enum ("stream-degree", "Stream degree",
          "How many streams a pipe packet adds", GST_TYPE_CSTP_STREAM_DEGREE,
          DEFAULT_STREAM_DEGREE, rw));
  g_object_class_install_property (gobject_class, PROP_RATE,
      g_param_spec_uint64 ("rate", "Rate",
          "Pacing of every stream, bits per second of datagrams (0: as fast "
          "as the sockets take them)", 0, G_MAXUINT64, DEFAULT_RATE, rw));
  g_object_class_install_property (gobject_class, PROP_MAX_LATENCY,
      g_param_spec_uint64 ("max-latency", "Maximum latency",
          "Longest a frame may take to leave, in ns: a frame that would take "
          "longer at rate is sent faster (0: no bound)", 0, G_MAXUINT64,
          DEFAULT_MAX_LATENCY, rw));
  g_object_class_install_property (gobject_class, PROP_TTL_MC,
      g_param_spec_int ("ttl-mc", "Multicast TTL",
          "Hop limit of the datagrams sent to a multicast destination", 0, 255,
          DEFAULT_TTL_MC, rw));
  g_object_class_install_property (gobject_class, PROP_LOOP,
      g_param_spec_boolean ("loop", "Multicast loopback",
          "Deliver the datagrams sent to a multicast destination to receivers "
          "on this host too", DEFAULT_LOOP, rw));
  g_object_class_install_property (gobject_class, PROP_MULTICAST_IFACE,
      g_param_spec_string ("multicast-iface", "Multicast interface",
          "Network interface that multicast destinations are sent from, by "
          "name (none: the routing table's)", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_INDEX,
      g_param_spec_int ("index", "Index",
          "This sender's stream in a sending cluster (one cstpsink per "
          "stream, each with its own tile of the frame: the buffers are "
          "tiles, the frame is the S tiles back to back); -1 sends every "
          "stream of whole frames from here", -1, FOUNTAIN_MAX_STREAMS - 1,
          DEFAULT_INDEX, rw));
  g_object_class_install_property (gobject_class, PROP_PEERS,
      g_param_spec_string ("peers", "Peers",
          "With index: one host:port per stream, where the sender of stream "
          "i takes its peers' parts of its pipe packets (this one's own "
          "entry is the port it listens on); sender 0 synchronises the "
          "frames", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_SYNC_TIMEOUT,
      g_param_spec_uint64 ("sync-timeout", "Synchronisation timeout",
          "With index: the longest a frame waits for a silent sender (ns); "
          "the frame then leaves without that sender's parts, which is "
          "reported (the first frame waits 5 s more, as the senders start)",
          GST_MSECOND, G_MAXUINT64, DEFAULT_SYNC_TIMEOUT, rw));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "frames, packets-sent, bytes-sent, encode-time (ns), "
          "frames-rate-raised and per stream stream-<i>-packets-sent, "
          "stream-<i>-send-errors; in a cluster also index, "
          "exchange-parts-sent, exchange-parts-received, exchange-bytes-sent, "
          "exchange-bytes-received, exchange-bound-bytes ((S - 1) parts of "
          "each of the p x R pipe packets a frame), exchange-bad, "
          "exchange-duplicates, exchange-late, parts-missing, "
          "frames-unsynchronised, release-wait-max, release-wait-mean (ns), "
          "peers-alive, peer-<i>-alive, and on sender 0 "
          "frames-released-partial, sync-skew-last, sync-skew-max, "
          "sync-skew-mean (ns between the first and the last sender having "
          "a frame); also GstBaseSink's rendered, dropped and "
          "average-rate", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "CSTP sender", "Sink/Network",
      "Sends every buffer as a frame over parallel UDP streams with "
      "cross-stream coding (Liu, Schulze, DeFanti, \"CSTP: A parallel data "
      "transfer protocol using cross-stream coding\", 2011)",
      "gst-gpustream");

  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  element_class->change_state = GST_DEBUG_FUNCPTR (gst_cstp_sink_change_state);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cstp_sink_set_context);
  basesink_class->query = GST_DEBUG_FUNCPTR (gst_cstp_sink_query);
  basesink_class->set_caps = GST_DEBUG_FUNCPTR (gst_cstp_sink_set_caps);
  basesink_class->render = GST_DEBUG_FUNCPTR (gst_cstp_sink_render);
  basesink_class->start = GST_DEBUG_FUNCPTR (gst_cstp_sink_start);
  basesink_class->stop = GST_DEBUG_FUNCPTR (gst_cstp_sink_stop);
  basesink_class->unlock = GST_DEBUG_FUNCPTR (gst_cstp_sink_unlock);
  basesink_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cstp_sink_unlock_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_CSTP_STREAM_DEGREE, 0);
  GST_DEBUG_CATEGORY_INIT (gst_cstp_sink_debug, "cstpsink", 0,
      "CSTP sender");
}

static void
gst_cstp_sink_init (GstCstpSink * self)
{
  self->streams = DEFAULT_STREAMS;
  self->host = g_strdup (DEFAULT_HOST);
  self->port = DEFAULT_PORT;
  self->packet_size = DEFAULT_PACKET_SIZE;
  self->overhead = DEFAULT_OVERHEAD;
  self->pipe_width = DEFAULT_PIPE_WIDTH;
  self->stream_degree = DEFAULT_STREAM_DEGREE;
  self->rate = DEFAULT_RATE;
  self->max_latency = DEFAULT_MAX_LATENCY;
  self->ttl_mc = DEFAULT_TTL_MC;
  self->loop = DEFAULT_LOOP;
  self->index = DEFAULT_INDEX;
  self->sync_timeout = DEFAULT_SYNC_TIMEOUT;
  gst_gpustream_gpu_init (&self->gpu);
}
