/* gpusrtpdec: SRTP / SRTCP authentication and decryption (RFC 3711, 6188,
 * 7714), a drop-in for srtpdec.
 *
 * SECTION:element-gpusrtpdec
 * @title: gpusrtpdec
 *
 * Checks and removes SRTP on `rtp_sink` -> `rtp_src` and SRTCP on
 * `rtcp_sink` -> `rtcp_src`. One context per SSRC, its key from:
 *  - sink caps carrying `ssrc` and srtp-key, srtp-cipher, srtp-auth,
 *    srtcp-cipher, srtcp-auth (optionally `roc`), as srtpenc / gpusrtpenc
 *    send them;
 *  - the `request-key` signal (SSRC in, caps out) when a packet of an unknown
 *    SSRC arrives;
 *  - sink caps with the key fields but no `ssrc` (srtpdec ignores those): used
 *    for any SSRC that request-key gives no key for.
 *
 * The tag is checked before anything is decrypted, then the replay window of
 * the SSRC (`replay-window-size`). Packets that fail (bad tag, replay, unknown
 * SSRC, too short) are dropped and counted in `stats`; the stream goes on.
 * The drops are said on the bus, per SSRC at most once a second and once
 * more at EOS for those not said yet: an element message
 * `gpusrtpdec-packets-dropped` with the counts by reason, and a WARNING
 * ("authentication failed for 150 packets of SSRC 0x00000457: wrong key?")
 * unless all of them were replays. No key material is in either.
 *
 * Buffer lists are checked as one batch: with a GPU (backend gpu / hybrid),
 * one launch of srtp_unprotect_batch checks the tags and decrypts the batch,
 * the host keeps ROC and replay windows in packet order.
 *
 * Negotiation is srtpdec's: a sink pad's CAPS query answers what downstream
 * takes, renamed x-srtp / x-srtcp (so udpsrc caps="application/x-srtp,
 * payload=8, ..." learns media and clock-rate from the depayloader), a
 * source pad answers its template, ACCEPT_CAPS is GStreamer's default.
 *
 * With an `mki` in the caps every packet must carry it; caps may add more
 * master keys as srtpdec reads them (`srtp-key2` + `mki2` ... up to 16): a
 * packet picks its key by its MKI, and the stream keeps its ROC and replay
 * window across the change. A packet with an unknown MKI is dropped and
 * counted (`bad-mki-count`).
 *
 * `soft-limit` is emitted once per SSRC when its index enters the last ROC
 * (2^48 - 2^16 packets), `hard-limit` when the index space is exhausted; caps
 * returned by either replace the key of that SSRC (the packet that hit the
 * hard limit is dropped).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 audiotestsrc num-buffers=100 ! rtpL16pay ! \
 *     srtpenc key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d ! \
 *     gpusrtpdec ! rtpL16depay ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gpustream/gstgpustream.h>

#include <gst/gpustream/gpssrtp.h>
#include "gpusrtpdec.h"

GST_DEBUG_CATEGORY_STATIC (gst_gpu_srtp_dec_debug);
#define GST_CAT_DEFAULT gst_gpu_srtp_dec_debug

/* ---- properties ---------------------------------------------------------- */

enum
{
  PROP_0,
  PROP_REPLAY_WINDOW_SIZE,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

enum
{
  SIGNAL_REQUEST_KEY,
  SIGNAL_SOFT_LIMIT,
  SIGNAL_HARD_LIMIT,
  SIGNAL_CLEAR_KEYS,
  SIGNAL_REMOVE_KEY,
  LAST_SIGNAL
};

static guint signals[LAST_SIGNAL];

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate rtp_sink_template =
GST_STATIC_PAD_TEMPLATE ("rtp_sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-srtp"));
static GstStaticPadTemplate rtp_src_template =
GST_STATIC_PAD_TEMPLATE ("rtp_src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtp"));
static GstStaticPadTemplate rtcp_sink_template =
GST_STATIC_PAD_TEMPLATE ("rtcp_sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-srtcp"));
static GstStaticPadTemplate rtcp_src_template =
GST_STATIC_PAD_TEMPLATE ("rtcp_src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtcp"));

/* ---- instance ------------------------------------------------------------ */

/* Why a packet was dropped, as the bus hears it, in the order a warning
 * names them; replays alone (duplicates on the path) make no warning. */
typedef enum
{
  DROP_AUTH,
  DROP_NO_KEY,
  DROP_BAD_MKI,
  DROP_EXHAUSTED,
  DROP_MALFORMED,
  DROP_REPLAY,
  DROP_N
} DropReason;

static const struct
{
  const gchar *what, *hint, *field;
} drop_reasons[DROP_N] = {
  {"authentication failed", "wrong key?", "auth-fail-count"},
  {"no key", "no key in the caps nor from request-key", "unknown-ssrc-count"},
  {"unknown MKI", "the sender uses a master key the caps do not hold",
      "bad-mki-count"},
  {"packet index exhausted", "the key is used up and hard-limit gave no "
        "other", "hard-limit-count"},
  {"malformed", "not SRTP, or truncated", "malformed-count"},
  {"replayed or older than the replay window", NULL, "replay-count"},
};

/* The drops of one SSRC not yet said on the bus. */
typedef struct
{
  gint64 last;                  /* gst_gpustream_warn_ok */
  guint64 n[DROP_N];
} DropTally;

/* One tally taken for the bus. */
typedef struct
{
  gboolean have_ssrc;
  guint32 ssrc;
  guint64 n[DROP_N];
} DropReport;

/* SSRCs tallied one by one; packets of more (or without an SSRC) share one
 * tally, so a flood of random SSRCs cannot grow the table */
#define DEC_MAX_TALLIES 256

typedef struct
{
  guint32 ssrc;
  GsSrtpCtx ctx;                /* the master key in use, ROC, replay windows */
  GsSrtpCtx *keys;              /* with MKIs: every master key (keys only) */
  guint n_keys;
  GstGpuSrtpKeyInfo info;       /* to tell a re-sent key from a new one */
  gboolean soft_limit;
  /* srtpdec's per-stream counters: packets checked with this key, and those
   * of them refused; a new key starts them again, as srtpdec's new stream */
  guint64 recv, drop;
} DecStream;

struct _GstGpuSrtpDec
{
  GstElement parent;

  GstPad *rtp_sink, *rtp_src, *rtcp_sink, *rtcp_src;

  GstGpuStreamGpu gpu;

  /* settings, object lock */
  guint replay_window;

  /* streams and counters, lock */
  GMutex lock;
  GHashTable *streams;          /* ssrc -> DecStream */
  GstCaps *fallback;            /* key caps without ssrc */
  guint64 st_recv, st_drop, st_auth, st_replay, st_unknown, st_short;
  guint64 st_bad_header, st_exhausted, st_batches, st_gpu_batches;
  guint64 st_bad_mki;
  GHashTable *tallies;          /* ssrc -> DropTally */
  DropTally untracked;          /* no SSRC read, or past DEC_MAX_TALLIES */
};

#define gst_gpu_srtp_dec_parent_class parent_class
G_DEFINE_TYPE (GstGpuSrtpDec, gst_gpu_srtp_dec, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (gpusrtpdec, "gpusrtpdec", GST_RANK_NONE,
    GST_TYPE_GPU_SRTP_DEC);

/* ---- the data path ------------------------------------------------------- */

static void
dec_stream_free (gpointer data)
{
  DecStream *s = data;

  guint i;

  gsrtp_ctx_clear (&s->ctx);
  for (i = 0; i < s->n_keys; i++)
    gsrtp_ctx_clear (&s->keys[i]);
  g_free (s->keys);
  gst_gpu_srtp_key_info_clear (&s->info);
  g_free (s);
}

/* The same master keys, MKIs and policies as info (ROC aside). */
static gboolean
dec_same_keys (const GstGpuSrtpKeyInfo * a, const GstGpuSrtpKeyInfo * b)
{
  guint i;

  if (a->n_keys != b->n_keys || a->key_len != b->key_len ||
      a->mki_len != b->mki_len ||
      memcmp (&a->rtp, &b->rtp, sizeof a->rtp) != 0 ||
      memcmp (&a->rtcp, &b->rtcp, sizeof a->rtcp) != 0)
    return FALSE;
  for (i = 0; i < a->n_keys; i++)
    if (memcmp (a->key[i], b->key[i], a->key_len) != 0 ||
        memcmp (a->mki[i], b->mki[i], a->mki_len) != 0)
      return FALSE;
  return TRUE;
}

/* One context per master key of info into ctx (key 0) and, with several
 * keys, keys[]. */
static GsSrtpResult
dec_stream_init_keys (DecStream * s, const GstGpuSrtpKeyInfo * info,
    guint window)
{
  GsSrtpResult r;
  guint i;

  r = gsrtp_ctx_init (&s->ctx, info->rtp, info->rtcp, info->key[0],
      info->key_len, window);
  if (r == GSRTP_OK)
    r = gsrtp_ctx_set_mki (&s->ctx, info->mki[0], info->mki_len);
  if (r != GSRTP_OK || info->n_keys < 2)
    return r;
  s->keys = g_new0 (GsSrtpCtx, info->n_keys);
  s->n_keys = info->n_keys;
  for (i = 0; i < info->n_keys && r == GSRTP_OK; i++) {
    r = gsrtp_ctx_init (&s->keys[i], info->rtp, info->rtcp, info->key[i],
        info->key_len, window);
    if (r == GSRTP_OK)
      r = gsrtp_ctx_set_mki (&s->keys[i], info->mki[i], info->mki_len);
  }
  return r;
}

/* Installs (or keeps, when the same key comes again) the context of ssrc.
 * Called with the lock. */
static gboolean
dec_set_stream (GstGpuSrtpDec * self, guint32 ssrc,
    const GstGpuSrtpKeyInfo * info, guint window)
{
  DecStream *s = g_hash_table_lookup (self->streams, GUINT_TO_POINTER (ssrc));
  GsSrtpResult r;

  if (s && !info->have_roc && dec_same_keys (&s->info, info))
    return TRUE;

  s = g_new0 (DecStream, 1);
  s->ssrc = ssrc;
  s->info = *info;
  r = dec_stream_init_keys (s, info, MIN (window, GSRTP_MAX_WINDOW));
  if (r != GSRTP_OK) {
    GST_WARNING_OBJECT (self, "SSRC 0x%08x: cannot use the key: %s", ssrc,
        gsrtp_result_name (r));
    dec_stream_free (s);
    return FALSE;
  }
  if (info->have_roc)
    gsrtp_ctx_set_roc (&s->ctx, info->roc);
  GST_INFO_OBJECT (self, "SSRC 0x%08x: %u master key(s) set (%s%s)", ssrc,
      info->n_keys, info->have_roc ? "with ROC" : "ROC 0",
      info->mki_len ? ", with MKI" : "");
  g_hash_table_replace (self->streams, GUINT_TO_POINTER (ssrc), s);
  return TRUE;
}

static gboolean
dec_set_stream_from_caps (GstGpuSrtpDec * self, guint32 ssrc, GstCaps * caps)
{
  GstGpuSrtpKeyInfo info;
  const gchar *why;
  gboolean ok;
  guint window;

  if (!caps || gst_caps_is_empty (caps))
    return FALSE;
  if (!gst_gpu_srtp_key_info_from_structure (gst_caps_get_structure (caps, 0),
          &info, &why)) {
    GST_WARNING_OBJECT (self, "SSRC 0x%08x: unusable key caps: %s", ssrc,
        why);
    return FALSE;
  }
  GST_OBJECT_LOCK (self);
  window = self->replay_window;
  GST_OBJECT_UNLOCK (self);
  g_mutex_lock (&self->lock);
  ok = dec_set_stream (self, ssrc, &info, window);
  g_mutex_unlock (&self->lock);
  gst_gpu_srtp_key_info_clear (&info);
  return ok;
}

/* The key of an unknown SSRC: request-key, then key caps without ssrc. */
static gboolean
dec_request_key (GstGpuSrtpDec * self, guint32 ssrc)
{
  GstCaps *caps = NULL;
  gboolean ok = FALSE;

  GST_DEBUG_OBJECT (self, "unknown SSRC 0x%08x: emitting request-key", ssrc);
  g_signal_emit (self, signals[SIGNAL_REQUEST_KEY], 0, ssrc, &caps);
  if (caps) {
    ok = dec_set_stream_from_caps (self, ssrc, caps);
    gst_caps_unref (caps);
  }
  if (!ok) {
    g_mutex_lock (&self->lock);
    caps = self->fallback ? gst_caps_ref (self->fallback) : NULL;
    g_mutex_unlock (&self->lock);
    if (caps) {
      ok = dec_set_stream_from_caps (self, ssrc, caps);
      gst_caps_unref (caps);
    }
  }
  return ok;
}

/* ---- drops on the bus ---- */

static gboolean
tally_idle (gpointer key, gpointer value, gpointer user_data)
{
  DropTally *t = value;
  guint r;

  for (r = 0; r < DROP_N; r++)
    if (t->n[r])
      return FALSE;
  return TRUE;
}

/* The tally of ssrc (have_ssrc FALSE: none read). Called with the lock. */
static DropTally *
dec_tally (GstGpuSrtpDec * self, gboolean have_ssrc, guint32 ssrc)
{
  DropTally *t;

  if (!have_ssrc)
    return &self->untracked;
  t = g_hash_table_lookup (self->tallies, GUINT_TO_POINTER (ssrc));
  if (t)
    return t;
  if (g_hash_table_size (self->tallies) >= DEC_MAX_TALLIES) {
    /* those with nothing pending only hold a time */
    g_hash_table_foreach_remove (self->tallies, tally_idle, NULL);
    if (g_hash_table_size (self->tallies) >= DEC_MAX_TALLIES)
      return &self->untracked;
  }
  t = g_new0 (DropTally, 1);
  g_hash_table_insert (self->tallies, GUINT_TO_POINTER (ssrc), t);
  return t;
}

/* Counts a drop for the bus. Called with the lock. */
static void
dec_drop (GstGpuSrtpDec * self, gboolean have_ssrc, guint32 ssrc,
    DropReason why)
{
  dec_tally (self, have_ssrc, ssrc)->n[why]++;
}

/* Moves what t holds into reports when its second is up, or at once when
 * force (EOS). Called with the lock. */
static void
dec_tally_take (DropTally * t, gboolean have_ssrc, guint32 ssrc,
    gboolean force, GArray * reports)
{
  DropReport rep = { have_ssrc, ssrc, {0} };
  guint64 pending = 0;
  guint r;

  for (r = 0; r < DROP_N; r++)
    pending += t->n[r];
  if (pending == 0 || (!force && !gst_gpustream_warn_ok (&t->last)))
    return;
  memcpy (rep.n, t->n, sizeof rep.n);
  memset (t->n, 0, sizeof t->n);
  g_array_append_val (reports, rep);
}

/* Every tally with drops not said yet into reports (EOS). Called with the
 * lock. */
static void
dec_tally_take_all (GstGpuSrtpDec * self, GArray * reports)
{
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, self->tallies);
  while (g_hash_table_iter_next (&it, &key, &value))
    dec_tally_take (value, TRUE, GPOINTER_TO_UINT (key), TRUE, reports);
  dec_tally_take (&self->untracked, FALSE, 0, TRUE, reports);
}

/* Posts the reports: an element message each, and a WARNING for each that
 * holds more than replays. Called without the lock (a sync bus handler may
 * call back into the element). Only SSRCs and counts: never a key. */
static void
dec_post_reports (GstGpuSrtpDec * self, GArray * reports)
{
  guint i, r;

  for (i = 0; i < reports->len; i++) {
    DropReport *rep = &g_array_index (reports, DropReport, i);
    GString *what = g_string_new (NULL);
    const gchar *hint = NULL;
    guint64 total = 0;
    gboolean warn = FALSE;
    GstStructure *st;

    st = gst_structure_new_empty ("gpusrtpdec-packets-dropped");
    if (rep->have_ssrc)
      gst_structure_set (st, "ssrc", G_TYPE_UINT, rep->ssrc, NULL);
    for (r = 0; r < DROP_N; r++) {
      guint64 n = rep->n[r];

      gst_structure_set (st, drop_reasons[r].field, G_TYPE_UINT64, n, NULL);
      if (n == 0)
        continue;
      total += n;
      warn |= r != DROP_REPLAY;
      if (!hint)
        hint = drop_reasons[r].hint;
      g_string_append_printf (what, "%s%s for %" G_GUINT64_FORMAT " packet%s",
          what->len ? ", " : "", drop_reasons[r].what, n, n == 1 ? "" : "s");
    }
    if (rep->have_ssrc)
      g_string_append_printf (what, " of SSRC 0x%08x", rep->ssrc);
    else
      g_string_append (what, " (SSRC not read, or past the SSRCs counted "
          "one by one)");
    if (hint)
      g_string_append_printf (what, ": %s", hint);
    gst_structure_set (st, "count", G_TYPE_UINT64, total,
        "reason", G_TYPE_STRING, what->str, NULL);
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self), st));
    if (warn)
      GST_ELEMENT_WARNING (self, STREAM, DECRYPT, ("%s", what->str),
          ("dropped, counted in the stats property; said at most once a "
              "second per SSRC and at EOS"));
    else
      GST_DEBUG_OBJECT (self, "%s", what->str);
    g_string_free (what, TRUE);
  }
}

static guint32
dec_packet_ssrc (GstBuffer * buf, gboolean is_rtcp, gboolean * ok)
{
  guint8 hdr[12];
  gsize need = is_rtcp ? 8 : 12;

  *ok = gst_buffer_extract (buf, 0, hdr, need) == need;
  return *ok ? GST_READ_UINT32_BE (hdr + (is_rtcp ? 4 : 8)) : 0;
}

/* Emits soft-limit / hard-limit for ssrc and installs the returned key. */
static void
dec_limit (GstGpuSrtpDec * self, guint sig, guint32 ssrc)
{
  GstCaps *caps = NULL;

  GST_INFO_OBJECT (self, "SSRC 0x%08x reached its %s limit", ssrc,
      sig == SIGNAL_SOFT_LIMIT ? "soft" : "hard");
  g_signal_emit (self, signals[sig], 0, ssrc, &caps);
  if (caps) {
    dec_set_stream_from_caps (self, ssrc, caps);
    gst_caps_unref (caps);
  }
}

/* A packet refused for its MKI: when the stream has a master key with that
 * MKI, switch to it (ROC and replay state stay) and unprotect again. Called
 * with the lock, the packet still mapped and untouched. */
static GsSrtpResult
dec_try_other_key (GstGpuSrtpDec * self, GsSrtpPacket * pkt, guint32 ssrc)
{
  DecStream *s = g_hash_table_lookup (self->streams, GUINT_TO_POINTER (ssrc));
  const guint8 *mki;
  GsSrtpResult r = GSRTP_ERR_BAD_MKI;
  guint i;

  if (!s || s->n_keys < 2)
    return r;
  mki = gsrtp_packet_mki (&s->ctx, pkt->data, pkt->len, pkt->is_rtcp);
  for (i = 0; mki && i < s->n_keys; i++) {
    if (memcmp (mki, s->keys[i].rtp_keys.mki, s->info.mki_len) != 0)
      continue;
    GST_INFO_OBJECT (self, "SSRC 0x%08x: now master key %u (by its MKI)",
        ssrc, i + 1);
    gsrtp_ctx_take_keys (&s->ctx, &s->keys[i]);
    /* a batch of one: AES-NI or the constant-time path, as every other
     * packet; it sets result and, when accepted, len */
    gsrtp_unprotect_batch (pkt, 1, GSRTP_IMPL_AUTO);
    r = pkt->result;
    break;
  }
  return r;
}

/* Unprotects n buffers of one pad as one batch and pushes what passed, as a
 * list when as_list. Takes the buffers. */
static GstFlowReturn
dec_process (GstGpuSrtpDec * self, gboolean is_rtcp, GstBuffer ** in, guint n,
    gboolean as_list)
{
  GsSrtpPacket *pkts = g_new (GsSrtpPacket, n);
  GstMapInfo *maps = g_new (GstMapInfo, n);
  GstBuffer **bufs = g_new (GstBuffer *, n);
  guint32 *ssrcs = g_new (guint32, n);
  gboolean *have = g_new0 (gboolean, n);
  GArray *limits = g_array_new (FALSE, FALSE, sizeof (guint32) * 2);
  GArray *reports = g_array_new (FALSE, FALSE, sizeof (DropReport));
  guint32 *first_ssrcs;
  GHashTable *asked = NULL;
  GstPad *srcpad = is_rtcp ? self->rtcp_src : self->rtp_src;
  GstFlowReturn ret = GST_FLOW_OK;
  guint i, k = 0;

  /* keys for unknown SSRCs first, signals outside the lock */
  for (i = 0; i < n; i++) {
    gboolean known;

    ssrcs[i] = dec_packet_ssrc (in[i], is_rtcp, &have[i]);
    if (!have[i])
      continue;
    g_mutex_lock (&self->lock);
    known = g_hash_table_contains (self->streams, GUINT_TO_POINTER (ssrcs[i]));
    g_mutex_unlock (&self->lock);
    if (known)
      continue;
    if (!asked)
      asked = g_hash_table_new (NULL, NULL);
    if (!g_hash_table_contains (asked, GUINT_TO_POINTER (ssrcs[i]))) {
      g_hash_table_add (asked, GUINT_TO_POINTER (ssrcs[i]));
      dec_request_key (self, ssrcs[i]);
    }
  }
  if (asked)
    g_hash_table_unref (asked);
  /* (ssrcs[] is compacted to the packets checked below) */
  first_ssrcs = g_memdup2 (ssrcs, n * sizeof (guint32));

  g_mutex_lock (&self->lock);
  for (i = 0; i < n; i++) {
    DecStream *s;

    self->st_recv++;
    if (!have[i]) {
      self->st_short++;
      self->st_drop++;
      dec_drop (self, FALSE, 0, DROP_MALFORMED);
      gst_buffer_unref (in[i]);
      continue;
    }
    s = g_hash_table_lookup (self->streams, GUINT_TO_POINTER (ssrcs[i]));
    if (!s) {
      self->st_unknown++;
      self->st_drop++;
      dec_drop (self, TRUE, ssrcs[i], DROP_NO_KEY);
      gst_buffer_unref (in[i]);
      continue;
    }
    bufs[k] = gst_buffer_make_writable (in[i]);
    gst_buffer_map (bufs[k], &maps[k], GST_MAP_READWRITE);
    pkts[k].ctx = &s->ctx;
    pkts[k].data = maps[k].data;
    pkts[k].len = (uint32_t) maps[k].size;
    pkts[k].cap = (uint32_t) maps[k].size;
    pkts[k].is_rtcp = is_rtcp;
    pkts[k].result = GSRTP_OK;
    ssrcs[k] = ssrcs[i];
    k++;
  }
  if (k > 0) {
    gboolean on_gpu = FALSE;

    /* with a GPU: one launch checks every tag and decrypts the batch */
    gst_gpustream_srtp_unprotect_batch (pkts, k, self->gpu.resolved,
        self->gpu.cuda_context, &on_gpu);
    self->st_batches++;
    if (on_gpu)
      self->st_gpu_batches++;
  }
  for (i = 0; i < k; i++) {
    GsSrtpResult r = pkts[i].result;
    DropReason why;
    DecStream *s;

    if (r == GSRTP_ERR_BAD_MKI)
      r = pkts[i].result = dec_try_other_key (self, &pkts[i], ssrcs[i]);
    gst_buffer_unmap (bufs[i], &maps[i]);
    s = g_hash_table_lookup (self->streams, GUINT_TO_POINTER (ssrcs[i]));
    if (s) {
      s->recv++;
      if (r != GSRTP_OK)
        s->drop++;
    }
    if (r == GSRTP_OK) {
      gst_buffer_set_size (bufs[i], pkts[i].len);
      if (!is_rtcp && s && !s->soft_limit && s->ctx.roc == G_MAXUINT32) {
        guint32 l[2] = { SIGNAL_SOFT_LIMIT, ssrcs[i] };
        s->soft_limit = TRUE;
        g_array_append_val (limits, l);
      }
      continue;
    }
    self->st_drop++;
    switch (r) {
      case GSRTP_ERR_AUTH:
        self->st_auth++;
        why = DROP_AUTH;
        break;
      case GSRTP_ERR_REPLAY:
      case GSRTP_ERR_REPLAY_OLD:
        self->st_replay++;
        why = DROP_REPLAY;
        break;
      case GSRTP_ERR_TOO_SHORT:
        self->st_short++;
        why = DROP_MALFORMED;
        break;
      case GSRTP_ERR_BAD_MKI:
        self->st_bad_mki++;
        why = DROP_BAD_MKI;
        break;
      case GSRTP_ERR_INDEX_EXHAUSTED:{
        guint32 l[2] = { SIGNAL_HARD_LIMIT, ssrcs[i] };
        self->st_exhausted++;
        why = DROP_EXHAUSTED;
        g_array_append_val (limits, l);
        break;
      }
      default:
        self->st_bad_header++;
        why = DROP_MALFORMED;
        break;
    }
    GST_LOG_OBJECT (self, "dropped a packet of SSRC 0x%08x: %s", ssrcs[i],
        gsrtp_result_name (r));
    dec_drop (self, TRUE, ssrcs[i], why);
    gst_clear_buffer (&bufs[i]);
  }
  /* the tallies this batch added to, when their second is up (the
   * first pass's SSRCs hold every SSRC of the batch) */
  for (i = 0; i < n; i++) {
    DropTally *t = have[i] ? g_hash_table_lookup (self->tallies,
        GUINT_TO_POINTER (first_ssrcs[i])) : NULL;

    if (t)
      dec_tally_take (t, TRUE, first_ssrcs[i], FALSE, reports);
    else
      dec_tally_take (&self->untracked, FALSE, 0, FALSE, reports);
  }
  g_mutex_unlock (&self->lock);
  dec_post_reports (self, reports);
  g_array_unref (reports);

  for (i = 0; i < limits->len; i++) {
    guint32 *l = &g_array_index (limits, guint32, 2 * i);
    dec_limit (self, l[0], l[1]);
  }

  if (as_list) {
    GstBufferList *list = gst_buffer_list_new_sized (MAX (k, 1));
    for (i = 0; i < k; i++)
      if (bufs[i])
        gst_buffer_list_add (list, bufs[i]);
    if (gst_buffer_list_length (list) > 0)
      ret = gst_pad_push_list (srcpad, list);
    else
      gst_buffer_list_unref (list);
  } else {
    for (i = 0; i < k; i++) {
      if (!bufs[i])
        continue;
      if (ret == GST_FLOW_OK)
        ret = gst_pad_push (srcpad, bufs[i]);
      else
        gst_buffer_unref (bufs[i]);
    }
  }
  g_array_unref (limits);
  g_free (pkts);
  g_free (maps);
  g_free (bufs);
  g_free (ssrcs);
  g_free (first_ssrcs);
  g_free (have);
  return ret;
}

static GstFlowReturn
gst_gpu_srtp_dec_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (parent);
  GstFlowReturn ret = dec_process (self, pad == self->rtcp_sink, &buf, 1, FALSE);

  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  return ret;
}

static GstFlowReturn
gst_gpu_srtp_dec_chain_list (GstPad * pad, GstObject * parent,
    GstBufferList * list)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (parent);
  guint i, n = gst_buffer_list_length (list);
  GstBuffer **bufs = g_new (GstBuffer *, MAX (n, 1));
  GstFlowReturn ret;

  for (i = 0; i < n; i++)
    bufs[i] = gst_buffer_ref (gst_buffer_list_get (list, i));
  gst_buffer_list_unref (list);
  ret = dec_process (self, pad == self->rtcp_sink, bufs, n, TRUE);
  g_free (bufs);
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (self), &self->gpu);
  return ret;
}

/* caps of one side of the element made into the other's: to_srtp renames
 * them application/x-srtp (x-srtcp when is_rtcp); otherwise they are renamed
 * application/x-rtp (x-rtcp) and lose what stays on this side, the key and
 * policy fields (srtp-key, mki, srtp-keyN, mkiN, the ciphers and auths, roc).
 * What the source pad sends downstream and what the sink pad's CAPS query
 * asks downstream about, so the two agree. */
static GstCaps *
dec_caps_convert (const GstCaps * caps, gboolean is_rtcp, gboolean to_srtp)
{
  GstCaps *out = to_srtp ? gst_caps_copy (caps) :
      gst_gpu_srtp_caps_for_log (caps);
  guint i;

  for (i = 0; i < gst_caps_get_size (out); i++) {
    GstStructure *o = gst_caps_get_structure (out, i);

    if (!to_srtp)
      gst_structure_remove_fields (o, "srtp-cipher", "srtp-auth",
          "srtcp-cipher", "srtcp-auth", "roc", NULL);
    if (to_srtp)
      gst_structure_set_name (o, is_rtcp ? "application/x-srtcp" :
          "application/x-srtp");
    else
      gst_structure_set_name (o, is_rtcp ? "application/x-rtcp" :
          "application/x-rtp");
  }
  return out;
}

/* A sink pad's CAPS query, as srtpdec answers it: what downstream of the
 * matching source pad takes (asked with the filter made plain), within the
 * source template, renamed x-srtp / x-srtcp, within the filter. So an
 * upstream udpsrc caps=... or appsrc with a key and a payload type learns
 * media, clock-rate, encoding-name from the depayloader, and the caps it
 * sends are ones the depayloader accepts once renamed. */
static GstCaps *
dec_sink_query_caps (GstGpuSrtpDec * self, GstPad * pad, GstCaps * filter)
{
  gboolean is_rtcp = pad == self->rtcp_sink;
  GstPad *srcpad = is_rtcp ? self->rtcp_src : self->rtp_src;
  GstCaps *plain_filter = filter ? dec_caps_convert (filter, is_rtcp,
      FALSE) : NULL;
  GstCaps *down, *tmpl, *plain, *res;

  /* without a peer: ANY (or the filter), then the template */
  down = gst_pad_peer_query_caps (srcpad, plain_filter);
  tmpl = gst_pad_get_pad_template_caps (srcpad);
  plain = gst_caps_intersect_full (down, tmpl, GST_CAPS_INTERSECT_FIRST);
  res = dec_caps_convert (plain, is_rtcp, TRUE);
  if (filter) {
    GstCaps *tmp = gst_caps_intersect (res, filter);

    gst_caps_unref (res);
    res = tmp;
  }
  gst_clear_caps (&plain_filter);
  gst_caps_unref (down);
  gst_caps_unref (tmpl);
  gst_caps_unref (plain);
  return res;
}

static gboolean
dec_sink_caps (GstGpuSrtpDec * self, GstPad * pad, GstCaps * caps)
{
  gboolean is_rtcp = pad == self->rtcp_sink;
  GstStructure *s;
  GstCaps *out;
  GstGpuSrtpKeyInfo info;
  const gchar *why;
  guint ssrc;
  gboolean ret;

  if (gst_caps_is_empty (caps))
    return FALSE;
  s = gst_caps_get_structure (caps, 0);
  if (gst_structure_has_field (s, "srtp-key")) {
    if (!gst_gpu_srtp_key_info_from_structure (s, &info, &why)) {
      GST_WARNING_OBJECT (pad, "ignoring the key in the caps: %s", why);
    } else if (gst_structure_get_uint (s, "ssrc", &ssrc)) {
      guint window;

      GST_OBJECT_LOCK (self);
      window = self->replay_window;
      GST_OBJECT_UNLOCK (self);
      g_mutex_lock (&self->lock);
      dec_set_stream (self, ssrc, &info, window);
      g_mutex_unlock (&self->lock);
    } else {
      g_mutex_lock (&self->lock);
      gst_caps_replace (&self->fallback, caps);
      g_mutex_unlock (&self->lock);
      GST_INFO_OBJECT (pad, "key caps without ssrc: used for SSRCs that "
          "request-key gives no key for");
    }
    gst_gpu_srtp_key_info_clear (&info);
  }

  out = dec_caps_convert (caps, is_rtcp, FALSE);
  /* no key left in out: safe to log */
  GST_DEBUG_OBJECT (pad, "source caps %" GST_PTR_FORMAT, out);
  ret = gst_pad_push_event (is_rtcp ? self->rtcp_src : self->rtp_src,
      gst_event_new_caps (out));
  gst_caps_unref (out);
  return ret;
}

static gboolean
gst_gpu_srtp_dec_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (parent);

  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gboolean ret;

    gst_event_parse_caps (event, &caps);
    ret = dec_sink_caps (self, pad, caps);
    gst_event_unref (event);
    return ret;
  }
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    /* what the last second's drops have not said yet, before the EOS
     * message */
    GArray *reports = g_array_new (FALSE, FALSE, sizeof (DropReport));

    g_mutex_lock (&self->lock);
    dec_tally_take_all (self, reports);
    g_mutex_unlock (&self->lock);
    dec_post_reports (self, reports);
    g_array_unref (reports);
  }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
gst_gpu_srtp_dec_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (parent);

  /* The rest of the caps negotiation is GStreamer's default, as in srtpdec:
   * a source pad's CAPS is its template within the filter; ACCEPT_CAPS on
   * every pad takes caps that are a subset of the pad's CAPS answer (on a
   * sink pad: what downstream takes, renamed). */
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *res;

      if (GST_PAD_IS_SRC (pad))
        break;
      gst_query_parse_caps (query, &filter);
      res = dec_sink_query_caps (self, pad, filter);
      gst_query_set_caps_result (query, res);
      gst_caps_unref (res);
      return TRUE;
    }
    case GST_QUERY_CONTEXT:
      if (gst_gpustream_gpu_handle_context_query (GST_ELEMENT (self),
              &self->gpu, query))
        return TRUE;
      break;
    default:
      break;
  }
  return gst_pad_query_default (pad, parent, query);
}

static GstIterator *
gst_gpu_srtp_dec_iterate_internal_links (GstPad * pad, GstObject * parent)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (parent);
  GstPad *other;
  GstIterator *it;
  GValue v = G_VALUE_INIT;

  if (pad == self->rtp_sink)
    other = self->rtp_src;
  else if (pad == self->rtp_src)
    other = self->rtp_sink;
  else if (pad == self->rtcp_sink)
    other = self->rtcp_src;
  else
    other = self->rtcp_sink;
  g_value_init (&v, GST_TYPE_PAD);
  g_value_set_object (&v, other);
  it = gst_iterator_new_single (GST_TYPE_PAD, &v);
  g_value_unset (&v);
  return it;
}

static void
gst_gpu_srtp_dec_clear_keys (GstGpuSrtpDec * self)
{
  g_mutex_lock (&self->lock);
  g_hash_table_remove_all (self->streams);
  gst_clear_caps (&self->fallback);
  g_mutex_unlock (&self->lock);
}

static void
gst_gpu_srtp_dec_remove_key (GstGpuSrtpDec * self, guint ssrc)
{
  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->streams, GUINT_TO_POINTER (ssrc));
  g_mutex_unlock (&self->lock);
}

/* srtpdec's stats structure, field for field and type for type (guint
 * counters that wrap as srtpdec's do), then ours under names of their own:
 * 64-bit totals and the drops by reason. */
static GstStructure *
gst_gpu_srtp_dec_get_stats (GstGpuSrtpDec * self)
{
  GstStructure *s;
  GValue streams = G_VALUE_INIT;
  GHashTableIter it;
  gpointer value;

  g_value_init (&streams, GST_TYPE_ARRAY);
  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&it, self->streams);
  while (g_hash_table_iter_next (&it, NULL, &value)) {
    DecStream *ds = value;

    gst_gpu_srtp_stats_add_stream (&streams, ds->ssrc, ds->ctx.roc,
        "recv-count", G_TYPE_UINT, (guint) ds->recv,
        "recv-drop-count", G_TYPE_UINT, (guint) ds->drop, NULL);
  }
  s = gst_structure_new_empty ("application/x-srtp-decoder-stats");
  gst_structure_take_value (s, "streams", &streams);
  gst_structure_set (s,
      "recv-count", G_TYPE_UINT, (guint) self->st_recv,
      "recv-drop-count", G_TYPE_UINT, (guint) self->st_drop,
      "packets-in", G_TYPE_UINT64, self->st_recv,
      "packets-out", G_TYPE_UINT64, self->st_recv - self->st_drop,
      "packets-dropped", G_TYPE_UINT64, self->st_drop,
      "auth-fail-count", G_TYPE_UINT64, self->st_auth,
      "replay-count", G_TYPE_UINT64, self->st_replay,
      "unknown-ssrc-count", G_TYPE_UINT64, self->st_unknown,
      "too-short-count", G_TYPE_UINT64, self->st_short,
      "bad-header-count", G_TYPE_UINT64, self->st_bad_header,
      "hard-limit-count", G_TYPE_UINT64, self->st_exhausted,
      "bad-mki-count", G_TYPE_UINT64, self->st_bad_mki,
      "batches", G_TYPE_UINT64, self->st_batches,
      "gpu-batches", G_TYPE_UINT64, self->st_gpu_batches,
      "backend", G_TYPE_STRING, gst_gpustream_backend_nick (self->gpu.resolved),
      NULL);
  g_mutex_unlock (&self->lock);
  return s;
}

/* ---- GObject / GstElement boilerplate ------------------------------------ */

static void
gst_gpu_srtp_dec_set_context (GstElement * element, GstContext * context)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstStateChangeReturn
gst_gpu_srtp_dec_change_state (GstElement * element, GstStateChange transition)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
      if (!gst_gpustream_gpu_start (element, &self->gpu))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      g_mutex_lock (&self->lock);
      self->st_recv = self->st_drop = self->st_auth = self->st_replay = 0;
      self->st_unknown = self->st_short = self->st_bad_header = 0;
      self->st_exhausted = self->st_batches = self->st_gpu_batches = 0;
      self->st_bad_mki = 0;
      g_hash_table_remove_all (self->tallies);
      memset (&self->untracked, 0, sizeof self->untracked);
      g_mutex_unlock (&self->lock);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* keys and replay state end with the stream, as srtpdec */
      gst_gpu_srtp_dec_clear_keys (self);
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
gst_gpu_srtp_dec_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_REPLAY_WINDOW_SIZE:
      self->replay_window = g_value_get_uint (value);
      if (self->replay_window > GSRTP_MAX_WINDOW)
        GST_INFO_OBJECT (self, "replay window %u clamped to %u",
            self->replay_window, GSRTP_MAX_WINDOW);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_gpu_srtp_dec_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  switch (prop_id) {
    case PROP_REPLAY_WINDOW_SIZE:
      GST_OBJECT_LOCK (self);
      g_value_set_uint (value, self->replay_window);
      GST_OBJECT_UNLOCK (self);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, gst_gpu_srtp_dec_get_stats (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_gpu_srtp_dec_finalize (GObject * object)
{
  GstGpuSrtpDec *self = GST_GPU_SRTP_DEC (object);

  g_clear_pointer (&self->streams, g_hash_table_unref);
  g_clear_pointer (&self->tallies, g_hash_table_unref);
  gst_clear_caps (&self->fallback);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_gpu_srtp_dec_class_init (GstGpuSrtpDecClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gst_gpu_srtp_dec_set_property;
  gobject_class->get_property = gst_gpu_srtp_dec_get_property;
  gobject_class->finalize = gst_gpu_srtp_dec_finalize;

  g_object_class_install_property (gobject_class, PROP_REPLAY_WINDOW_SIZE,
      g_param_spec_uint ("replay-window-size", "Replay window size",
          "Size of the replay protection window (packets), as srtpdec's. "
          "Applies to keys set after the change", GST_GPU_SRTP_MIN_WINDOW,
          GST_GPU_SRTP_MAX_WINDOW_PROP, GST_GPU_SRTP_DEFAULT_WINDOW,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "application/x-srtp-decoder-stats, as srtpdec's: streams (array "
          "of application/x-srtp-stream: ssrc, roc, recv-count, "
          "recv-drop-count), recv-count, recv-drop-count (guint); and "
          "packets-in, packets-out, packets-dropped (64-bit), drops by "
          "reason: auth-fail-count, replay-count, unknown-ssrc-count, "
          "too-short-count, bad-header-count, hard-limit-count, "
          "bad-mki-count; batches, gpu-batches, backend", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  /**
   * GstGpuSrtpDec::request-key:
   * @ssrc: the SSRC of a packet with no key
   *
   * Returns: (transfer full): application/x-srtp caps with srtp-key,
   * srtp-cipher, srtp-auth, srtcp-cipher, srtcp-auth (and optionally roc),
   * or NULL: the packet is dropped and counted.
   */
  signals[SIGNAL_REQUEST_KEY] = g_signal_new ("request-key",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
      GST_TYPE_CAPS, 1, G_TYPE_UINT);
  /**
   * GstGpuSrtpDec::soft-limit:
   * @ssrc: the SSRC whose index entered the last ROC
   *
   * Returns: (transfer full): new key caps, or NULL to go on with the key.
   */
  signals[SIGNAL_SOFT_LIMIT] = g_signal_new ("soft-limit",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
      GST_TYPE_CAPS, 1, G_TYPE_UINT);
  /**
   * GstGpuSrtpDec::hard-limit:
   * @ssrc: the SSRC whose index space is exhausted
   *
   * Returns: (transfer full): new key caps, or NULL: its packets are dropped.
   */
  signals[SIGNAL_HARD_LIMIT] = g_signal_new ("hard-limit",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
      GST_TYPE_CAPS, 1, G_TYPE_UINT);
  signals[SIGNAL_CLEAR_KEYS] = g_signal_new_class_handler ("clear-keys",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_gpu_srtp_dec_clear_keys), NULL, NULL, NULL,
      G_TYPE_NONE, 0);
  signals[SIGNAL_REMOVE_KEY] = g_signal_new_class_handler ("remove-key",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_gpu_srtp_dec_remove_key), NULL, NULL, NULL,
      G_TYPE_NONE, 1, G_TYPE_UINT);

  gst_element_class_add_static_pad_template (element_class,
      &rtp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &rtp_src_template);
  gst_element_class_add_static_pad_template (element_class,
      &rtcp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &rtcp_src_template);
  gst_element_class_set_static_metadata (element_class,
      "SRTP decoder (GPU / batched CPU)", "Filter/Network/SRTP",
      "Authenticates and decrypts SRTP and SRTCP in batches, with replay "
      "protection per SSRC, a drop-in for srtpdec",
      "gst-gpustream developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_change_state);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_set_context);

  GST_DEBUG_CATEGORY_INIT (gst_gpu_srtp_dec_debug, "gpusrtpdec", 0,
      "SRTP decoder");
}

static GstPad *
dec_make_pad (GstGpuSrtpDec * self, GstStaticPadTemplate * templ,
    const gchar * name)
{
  GstPad *pad = gst_pad_new_from_static_template (templ, name);

  if (GST_PAD_IS_SINK (pad)) {
    gst_pad_set_chain_function (pad, GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_chain));
    gst_pad_set_chain_list_function (pad,
        GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_chain_list));
    gst_pad_set_event_function (pad,
        GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_sink_event));
  }
  gst_pad_set_query_function (pad, GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_query));
  gst_pad_set_iterate_internal_links_function (pad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_dec_iterate_internal_links));
  gst_element_add_pad (GST_ELEMENT (self), pad);
  return pad;
}

static void
gst_gpu_srtp_dec_init (GstGpuSrtpDec * self)
{
  /* here, not in class_init: that runs while our plugin loads */
  gst_gpu_srtp_publish_srtpenc_types ();
  self->rtp_sink = dec_make_pad (self, &rtp_sink_template, "rtp_sink");
  self->rtp_src = dec_make_pad (self, &rtp_src_template, "rtp_src");
  self->rtcp_sink = dec_make_pad (self, &rtcp_sink_template, "rtcp_sink");
  self->rtcp_src = dec_make_pad (self, &rtcp_src_template, "rtcp_src");

  gst_gpustream_gpu_init (&self->gpu);
  g_mutex_init (&self->lock);
  self->replay_window = GST_GPU_SRTP_DEFAULT_WINDOW;
  self->streams = g_hash_table_new_full (NULL, NULL, NULL, dec_stream_free);
  self->tallies = g_hash_table_new_full (NULL, NULL, NULL, g_free);
}
