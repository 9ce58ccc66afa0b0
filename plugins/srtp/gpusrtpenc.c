/* gpusrtpenc: SRTP / SRTCP protection (RFC 3711, 6188, 7714), a drop-in for
 * srtpenc (paper 001).
 *
 * SECTION:element-gpusrtpenc
 * @title: gpusrtpenc
 *
 * Protects RTP (`rtp_sink_%u` -> `rtp_src_%u`) and RTCP (`rtcp_sink_%u` ->
 * `rtcp_src_%u`) with the master `key` (master key || salt) and the chosen
 * ciphers, exactly as srtpenc does: the same request pads, caps, properties
 * and output bytes. One SRTP context per SSRC, shared by every pad of the
 * element (the RTP and RTCP of one SSRC share it, as in libsrtp).
 *
 * A buffer list is protected with one call of the kernels' batch API (AES-NI,
 * PCLMUL, SHA-NI when the CPU has them), a single buffer as a batch of one.
 * The source caps carry the key for srtpdec / gpusrtpdec downstream
 * (srtp-key, srtp-cipher, srtp-auth, srtcp-cipher, srtcp-auth); changing
 * `key` while playing starts new contexts (ROC 0) for the packets that follow
 * and sends new caps first.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 audiotestsrc num-buffers=100 ! rtpL16pay ! \
 *     gpusrtpenc key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d ! \
 *     srtpdec ! rtpL16depay ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include <gst/gpustream/gstgpustream.h>

#include "gpusrtp.h"
#include "gpusrtpenc.h"

GST_DEBUG_CATEGORY_STATIC (gst_gpu_srtp_enc_debug);
#define GST_CAT_DEFAULT gst_gpu_srtp_enc_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_CIPHER GST_GPU_SRTP_CIPHER_AES_128_ICM
#define DEFAULT_AUTH GST_GPU_SRTP_AUTH_HMAC_SHA1_80
#define DEFAULT_RANDOM_KEY FALSE
#define DEFAULT_ALLOW_REPEAT_TX FALSE
#define DEFAULT_MAX_LATENCY 0
#define DEFAULT_OUTPUT_LISTS FALSE

enum
{
  PROP_0,
  PROP_KEY,
  PROP_RTP_CIPHER,
  PROP_RTP_AUTH,
  PROP_RTCP_CIPHER,
  PROP_RTCP_AUTH,
  PROP_RANDOM_KEY,
  PROP_REPLAY_WINDOW_SIZE,
  PROP_ALLOW_REPEAT_TX,
  PROP_MAX_LATENCY,
  PROP_OUTPUT_LISTS,
  PROP_STATS,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

enum
{
  SIGNAL_SOFT_LIMIT,
  LAST_SIGNAL
};

static guint signals[LAST_SIGNAL];

/* ---- caps ---------------------------------------------------------------- */

static GstStaticPadTemplate rtp_sink_template =
GST_STATIC_PAD_TEMPLATE ("rtp_sink_%u", GST_PAD_SINK, GST_PAD_REQUEST,
    GST_STATIC_CAPS ("application/x-rtp"));
static GstStaticPadTemplate rtp_src_template =
GST_STATIC_PAD_TEMPLATE ("rtp_src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES,
    GST_STATIC_CAPS ("application/x-srtp"));
static GstStaticPadTemplate rtcp_sink_template =
GST_STATIC_PAD_TEMPLATE ("rtcp_sink_%u", GST_PAD_SINK, GST_PAD_REQUEST,
    GST_STATIC_CAPS ("application/x-rtcp"));
static GstStaticPadTemplate rtcp_src_template =
GST_STATIC_PAD_TEMPLATE ("rtcp_src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES,
    GST_STATIC_CAPS ("application/x-srtcp"));

/* ---- instance ------------------------------------------------------------ */

/* One request sink pad and its source pad. Both pads hold a reference; the
 * pad pointers are cleared (object lock) when the pair is released. */
typedef struct
{
  gint refcount;
  GstPad *sinkpad;
  GstPad *srcpad;
  gboolean is_rtcp;
  GstCaps *sink_caps;           /* object lock */
  guint caps_gen;               /* settings generation of the pushed caps */
} EncPair;

/* Sender side of one SSRC: the kernel context plus libsrtp's sender replay
 * check (a packet index sent twice is refused unless allow-repeat-tx), kept
 * here because the kernel does no sender-side check. */
typedef struct
{
  guint32 ssrc;
  GsSrtpCtx ctx;
  gboolean have_seq;            /* shadow of the index estimate, in order */
  guint32 roc;
  guint16 s_l;
  guint64 top;
  guint64 *bits;                /* window / 64 words; bit d: top - d sent */
  gboolean soft_limit;          /* soft-limit emitted */
} EncStream;

typedef struct
{
  guint gen;
  GstBuffer *key;
  GstGpuSrtpCipherType rtp_cipher, rtcp_cipher;
  GstGpuSrtpAuthType rtp_auth, rtcp_auth;
  guint window;
  gboolean allow_repeat_tx;
  gboolean output_lists;
} EncSettings;

struct _GstGpuSrtpEnc
{
  GstElement parent;

  GstGpuStreamGpu gpu;

  /* settings, object lock; gen counts changes of key / cipher / auth */
  GstBuffer *key;
  GstGpuSrtpCipherType rtp_cipher, rtcp_cipher;
  GstGpuSrtpAuthType rtp_auth, rtcp_auth;
  gboolean random_key;
  guint replay_window;
  gboolean allow_repeat_tx;
  guint64 max_latency;
  gboolean output_lists;
  guint gen;

  /* streams and counters, lock (taken by every streaming thread) */
  GMutex lock;
  GHashTable *streams;          /* ssrc -> EncStream */
  guint streams_gen;
  guint64 st_packets_in, st_packets_out, st_bytes_in, st_bytes_out;
  guint64 st_dropped, st_repeated, st_bad, st_batches;
  gint64 last_warn;
};

#define gst_gpu_srtp_enc_parent_class parent_class
G_DEFINE_TYPE (GstGpuSrtpEnc, gst_gpu_srtp_enc, GST_TYPE_ELEMENT);

GST_ELEMENT_REGISTER_DEFINE (gpusrtpenc, "gpusrtpenc", GST_RANK_NONE,
    GST_TYPE_GPU_SRTP_ENC);

/* ---- the data path ------------------------------------------------------- */

static EncPair *
enc_pair_ref (EncPair * pair)
{
  g_atomic_int_inc (&pair->refcount);
  return pair;
}

static void
enc_pair_unref (gpointer data)
{
  EncPair *pair = data;

  if (g_atomic_int_dec_and_test (&pair->refcount)) {
    gst_clear_caps (&pair->sink_caps);
    g_free (pair);
  }
}

static void
enc_stream_free (gpointer data)
{
  EncStream *s = data;

  gsrtp_ctx_clear (&s->ctx);
  g_free (s->bits);
  g_free (s);
}

/* Snapshot of the settings, with a random key made on demand. FALSE when
 * there is no usable key (an error is posted). */
static gboolean
enc_settings_get (GstGpuSrtpEnc * self, EncSettings * set)
{
  gsize want;

  GST_OBJECT_LOCK (self);
  if (!self->key && self->random_key) {
    gsize n = gst_gpu_srtp_key_length (self->rtp_cipher);
    guint8 *k = g_malloc (n);

    if (!gst_gpu_srtp_random_bytes (k, n)) {
      g_free (k);
      GST_OBJECT_UNLOCK (self);
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
          ("getrandom() failed, no random key"));
      return FALSE;
    }
    self->key = gst_buffer_new_wrapped (k, n);
    self->gen++;
  }
  set->gen = self->gen;
  set->key = self->key ? gst_buffer_ref (self->key) : NULL;
  set->rtp_cipher = self->rtp_cipher;
  set->rtcp_cipher = self->rtcp_cipher;
  set->rtp_auth = self->rtp_auth;
  set->rtcp_auth = self->rtcp_auth;
  set->window = self->replay_window;
  set->allow_repeat_tx = self->allow_repeat_tx;
  set->output_lists = self->output_lists;
  GST_OBJECT_UNLOCK (self);

  if (!set->key) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, (NULL),
        ("No key: set \"key\" (master key || salt) or random-key=true"));
    return FALSE;
  }
  want = gst_gpu_srtp_key_length (set->rtp_cipher);
  if (gst_buffer_get_size (set->key) != want ||
      gst_gpu_srtp_key_length (set->rtcp_cipher) != want) {
    /* the sizes only, never the bytes */
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, (NULL),
        ("key is %" G_GSIZE_FORMAT " bytes, %s / %s need %" G_GSIZE_FORMAT
            " / %" G_GSIZE_FORMAT, gst_buffer_get_size (set->key),
            gst_gpu_srtp_cipher_nick (set->rtp_cipher),
            gst_gpu_srtp_cipher_nick (set->rtcp_cipher), want,
            gst_gpu_srtp_key_length (set->rtcp_cipher)));
    gst_clear_buffer (&set->key);
    return FALSE;
  }
  return TRUE;
}

static GstCaps *
enc_make_src_caps (EncPair * pair, GstCaps * sink_caps, const EncSettings * set)
{
  GstCaps *caps = sink_caps ? gst_caps_copy (sink_caps) :
      gst_caps_new_empty_simple ("application/x-rtp");
  guint i;

  if (gst_caps_is_empty (caps))
    gst_caps_append_structure (caps, gst_structure_new_empty ("x"));
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_caps_get_structure (caps, i);

    gst_structure_set_name (s, pair->is_rtcp ? "application/x-srtcp" :
        "application/x-srtp");
    gst_structure_set (s, "srtp-key", GST_TYPE_BUFFER, set->key,
        "srtp-cipher", G_TYPE_STRING,
        gst_gpu_srtp_cipher_nick (set->rtp_cipher),
        "srtp-auth", G_TYPE_STRING, gst_gpu_srtp_auth_nick (set->rtp_auth),
        "srtcp-cipher", G_TYPE_STRING,
        gst_gpu_srtp_cipher_nick (set->rtcp_cipher),
        "srtcp-auth", G_TYPE_STRING, gst_gpu_srtp_auth_nick (set->rtcp_auth),
        NULL);
  }
  return caps;
}

/* Pushes source caps for the settings generation set->gen if not done yet. */
static void
enc_ensure_caps (GstGpuSrtpEnc * self, EncPair * pair, const EncSettings * set)
{
  GstCaps *sink_caps, *caps, *log;
  GstPad *srcpad;

  GST_OBJECT_LOCK (self);
  if (pair->caps_gen == set->gen || !pair->srcpad) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  pair->caps_gen = set->gen;
  sink_caps = pair->sink_caps ? gst_caps_ref (pair->sink_caps) : NULL;
  srcpad = gst_object_ref (pair->srcpad);
  GST_OBJECT_UNLOCK (self);

  caps = enc_make_src_caps (pair, sink_caps, set);
  log = gst_gpu_srtp_caps_for_log (caps);
  GST_DEBUG_OBJECT (srcpad, "caps (key removed here) %" GST_PTR_FORMAT, log);
  gst_caps_unref (log);
  gst_pad_push_event (srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  gst_clear_caps (&sink_caps);
  gst_object_unref (srcpad);
}

static EncStream *
enc_stream_get (GstGpuSrtpEnc * self, guint32 ssrc, const EncSettings * set)
{
  EncStream *s = g_hash_table_lookup (self->streams, GUINT_TO_POINTER (ssrc));
  GstMapInfo map;
  GsSrtpResult r;

  if (s)
    return s;
  s = g_new0 (EncStream, 1);
  s->ssrc = ssrc;
  s->bits = g_new0 (guint64, (set->window + 63) / 64);
  gst_buffer_map (set->key, &map, GST_MAP_READ);
  r = gsrtp_ctx_init (&s->ctx,
      gst_gpu_srtp_policy (set->rtp_cipher, set->rtp_auth),
      gst_gpu_srtp_policy (set->rtcp_cipher, set->rtcp_auth),
      map.data, map.size, 0);
  gst_buffer_unmap (set->key, &map);
  if (r != GSRTP_OK) {
    GST_WARNING_OBJECT (self, "context for SSRC 0x%08x: %s", ssrc,
        gsrtp_result_name (r));
    enc_stream_free (s);
    return NULL;
  }
  GST_DEBUG_OBJECT (self, "new stream SSRC 0x%08x", ssrc);
  g_hash_table_insert (self->streams, GUINT_TO_POINTER (ssrc), s);
  return s;
}

/* libsrtp's sender check, in packet order: FALSE when this RTP sequence
 * number was already sent (repeat) or is older than the window. Mirrors the
 * kernel's RFC 3711 3.3.1 index estimate so both agree on the index. */
static gboolean
enc_stream_check_tx (EncStream * s, guint16 seq, guint window,
    gboolean allow_repeat, gboolean * repeat)
{
  gint64 v = s->roc;
  guint64 idx, d;
  guint nw = (window + 63) / 64, i;

  *repeat = FALSE;
  if (s->have_seq) {
    if (s->s_l < 32768) {
      if ((gint64) seq - s->s_l > 32768)
        v = (gint64) s->roc - 1;
    } else if ((gint64) s->s_l - 32768 > seq) {
      v = (gint64) s->roc + 1;
    }
    if (v < 0)
      v = 0;
  }
  idx = ((guint64) v << 16) | seq;

  if (s->have_seq && idx <= s->top) {
    d = s->top - idx;
    if (d >= window)
      return FALSE;
    if ((s->bits[d / 64] >> (d % 64)) & 1) {
      *repeat = TRUE;
      if (!allow_repeat)
        return FALSE;
    }
    s->bits[d / 64] |= G_GUINT64_CONSTANT (1) << (d % 64);
  } else {
    /* a new highest index: slide the window by d */
    d = s->have_seq ? idx - s->top : window;
    if (d >= window) {
      memset (s->bits, 0, nw * sizeof (guint64));
    } else if (d > 0) {
      guint ws = (guint) (d / 64), bs = (guint) (d % 64);
      for (i = nw; i-- > 0;) {
        guint64 w = i >= ws ? s->bits[i - ws] << bs : 0;
        if (bs && i >= ws + 1)
          w |= s->bits[i - ws - 1] >> (64 - bs);
        s->bits[i] = w;
      }
    }
    s->bits[0] |= 1;
    s->top = idx;
  }

  /* the same ROC / s_l update the kernel makes */
  if (!s->have_seq) {
    s->roc = (guint32) v;
    s->s_l = seq;
    s->have_seq = TRUE;
  } else if (v == (gint64) s->roc + 1) {
    s->roc = (guint32) v;
    s->s_l = seq;
  } else if (v == s->roc && seq > s->s_l) {
    s->s_l = seq;
  }
  return TRUE;
}

static void
enc_drop_warn (GstGpuSrtpEnc * self, guint32 ssrc, const gchar * why)
{
  if (gst_gpu_srtp_warn_ok (&self->last_warn))
    GST_WARNING_OBJECT (self, "dropped a packet of SSRC 0x%08x: %s (further "
        "drops are counted in stats, warned once a second)", ssrc, why);
}

/* Protects n buffers of one pad as one batch and pushes what succeeded, as a
 * list when as_list. Takes the buffers. */
static GstFlowReturn
enc_process (GstGpuSrtpEnc * self, EncPair * pair, GstBuffer ** in, guint n,
    gboolean as_list)
{
  EncSettings set;
  GsSrtpPacket *pkts;
  GstBuffer **outs;
  GstMapInfo *maps;
  guint i, k = 0;
  gboolean hard_limit = FALSE;
  guint32 soft_ssrcs[8];
  guint n_soft = 0;
  GstFlowReturn ret = GST_FLOW_OK;
  GstPad *srcpad;
  GsSrtpPolicy rtp_pol, rtcp_pol;
  size_t overhead;

  if (!enc_settings_get (self, &set)) {
    for (i = 0; i < n; i++)
      gst_buffer_unref (in[i]);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  enc_ensure_caps (self, pair, &set);
  rtp_pol = gst_gpu_srtp_policy (set.rtp_cipher, set.rtp_auth);
  rtcp_pol = gst_gpu_srtp_policy (set.rtcp_cipher, set.rtcp_auth);
  overhead = pair->is_rtcp ? gsrtp_rtcp_overhead (rtcp_pol) :
      gsrtp_rtp_overhead (rtp_pol);

  pkts = g_new (GsSrtpPacket, n);
  outs = g_new (GstBuffer *, n);
  maps = g_new (GstMapInfo, n);

  g_mutex_lock (&self->lock);
  if (self->streams_gen != set.gen) {
    /* a new key: new contexts (ROC and SRTCP index from 0), as srtpenc */
    if (g_hash_table_size (self->streams) > 0)
      GST_INFO_OBJECT (self, "key or policy changed: new contexts");
    g_hash_table_remove_all (self->streams);
    self->streams_gen = set.gen;
  }
  for (i = 0; i < n; i++) {
    gsize len = gst_buffer_get_size (in[i]);
    guint8 hdr[12];
    guint32 ssrc;
    EncStream *s;
    gboolean repeat;

    self->st_packets_in++;
    self->st_bytes_in += len;
    if (gst_buffer_extract (in[i], 0, hdr, 12) < (pair->is_rtcp ? 8 : 12)
        || (hdr[0] >> 6) != 2) {
      self->st_bad++;
      enc_drop_warn (self, 0, "not an RTP / RTCP packet");
      continue;
    }
    ssrc = GST_READ_UINT32_BE (hdr + (pair->is_rtcp ? 4 : 8));
    s = enc_stream_get (self, ssrc, &set);
    if (!s) {
      self->st_bad++;
      continue;
    }
    if (!pair->is_rtcp && !enc_stream_check_tx (s, GST_READ_UINT16_BE (hdr + 2),
            set.window, set.allow_repeat_tx, &repeat)) {
      self->st_repeated++;
      enc_drop_warn (self, ssrc, "sequence number already sent or too old "
          "(allow-repeat-tx=false)");
      continue;
    }

    outs[k] = gst_buffer_new_allocate (NULL, len + overhead, NULL);
    gst_buffer_copy_into (outs[k], in[i], GST_BUFFER_COPY_METADATA, 0, -1);
    gst_buffer_map (outs[k], &maps[k], GST_MAP_READWRITE);
    gst_buffer_extract (in[i], 0, maps[k].data, len);
    pkts[k].ctx = &s->ctx;
    pkts[k].data = maps[k].data;
    pkts[k].len = (uint32_t) len;
    pkts[k].cap = (uint32_t) (len + overhead);
    pkts[k].is_rtcp = pair->is_rtcp;
    pkts[k].result = GSRTP_OK;
    k++;
  }

  if (k > 0) {
    gsrtp_protect_batch (pkts, k, GSRTP_IMPL_AUTO);
    self->st_batches++;
  }

  for (i = 0; i < k; i++) {
    guint32 ssrc = GST_READ_UINT32_BE (pkts[i].data + (pair->is_rtcp ? 4 : 8));
    gboolean ok = pkts[i].result == GSRTP_OK;
    gsize out_len = ok ? pkts[i].len : 0;

    gst_buffer_unmap (outs[i], &maps[i]);
    if (!ok) {
      if (pkts[i].result == GSRTP_ERR_INDEX_EXHAUSTED)
        hard_limit = TRUE;
      self->st_dropped++;
      enc_drop_warn (self, ssrc, gsrtp_result_name (pkts[i].result));
      gst_clear_buffer (&outs[i]);
      continue;
    }
    gst_buffer_set_size (outs[i], out_len);
    self->st_packets_out++;
    self->st_bytes_out += out_len;
    /* RFC 3711 9.2: warn before the index space runs out (the last ROC) */
    if (!pair->is_rtcp && pkts[i].ctx->roc == G_MAXUINT32) {
      EncStream *s = g_hash_table_lookup (self->streams,
          GUINT_TO_POINTER (ssrc));
      if (s && !s->soft_limit && n_soft < G_N_ELEMENTS (soft_ssrcs)) {
        s->soft_limit = TRUE;
        soft_ssrcs[n_soft++] = ssrc;
      }
    }
  }
  g_mutex_unlock (&self->lock);

  for (i = 0; i < n; i++)
    gst_buffer_unref (in[i]);
  for (i = 0; i < n_soft; i++)
    g_signal_emit (self, signals[SIGNAL_SOFT_LIMIT], 0);

  GST_OBJECT_LOCK (self);
  srcpad = pair->srcpad ? gst_object_ref (pair->srcpad) : NULL;
  GST_OBJECT_UNLOCK (self);

  if (as_list && set.output_lists) {
    GstBufferList *list = gst_buffer_list_new_sized (MAX (k, 1));
    for (i = 0; i < k; i++)
      if (outs[i])
        gst_buffer_list_add (list, outs[i]);
    if (srcpad && gst_buffer_list_length (list) > 0)
      ret = gst_pad_push_list (srcpad, list);
    else
      gst_buffer_list_unref (list);
  } else {
    for (i = 0; i < k; i++) {
      if (!outs[i])
        continue;
      if (srcpad && ret == GST_FLOW_OK)
        ret = gst_pad_push (srcpad, outs[i]);
      else
        gst_buffer_unref (outs[i]);
    }
  }
  if (srcpad)
    gst_object_unref (srcpad);
  gst_buffer_unref (set.key);
  g_free (pkts);
  g_free (outs);
  g_free (maps);

  if (hard_limit) {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED, (NULL),
        ("Key usage limit has been reached (ROC exhausted): set a new key"));
    return GST_FLOW_ERROR;
  }
  return ret;
}

static GstFlowReturn
gst_gpu_srtp_enc_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  EncPair *pair = gst_pad_get_element_private (pad);

  return enc_process (GST_GPU_SRTP_ENC (parent), pair, &buf, 1, FALSE);
}

static GstFlowReturn
gst_gpu_srtp_enc_chain_list (GstPad * pad, GstObject * parent,
    GstBufferList * list)
{
  EncPair *pair = gst_pad_get_element_private (pad);
  guint i, n = gst_buffer_list_length (list);
  GstBuffer **bufs = g_new (GstBuffer *, MAX (n, 1));
  GstFlowReturn ret;

  for (i = 0; i < n; i++)
    bufs[i] = gst_buffer_ref (gst_buffer_list_get (list, i));
  gst_buffer_list_unref (list);
  ret = enc_process (GST_GPU_SRTP_ENC (parent), pair, bufs, n, TRUE);
  g_free (bufs);
  return ret;
}

static gboolean
gst_gpu_srtp_enc_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (parent);
  EncPair *pair = gst_pad_get_element_private (pad);

  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    EncSettings set;

    gst_event_parse_caps (event, &caps);
    GST_OBJECT_LOCK (self);
    gst_caps_replace (&pair->sink_caps, caps);
    pair->caps_gen = G_MAXUINT;
    GST_OBJECT_UNLOCK (self);
    gst_event_unref (event);
    /* with no key yet the caps go out with the first buffer (or the error) */
    if (enc_settings_get (self, &set)) {
      enc_ensure_caps (self, pair, &set);
      gst_buffer_unref (set.key);
    }
    return TRUE;
  }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
gst_gpu_srtp_enc_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (parent);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *tmpl = gst_pad_get_pad_template_caps (pad), *res;

      gst_query_parse_caps (query, &filter);
      res = filter ? gst_caps_intersect_full (filter, tmpl,
          GST_CAPS_INTERSECT_FIRST) : gst_caps_ref (tmpl);
      gst_query_set_caps_result (query, res);
      gst_caps_unref (res);
      gst_caps_unref (tmpl);
      return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS:{
      GstCaps *caps, *tmpl = gst_pad_get_pad_template_caps (pad);

      gst_query_parse_accept_caps (query, &caps);
      gst_query_set_accept_caps_result (query,
          gst_caps_can_intersect (caps, tmpl));
      gst_caps_unref (tmpl);
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

static gboolean
gst_gpu_srtp_enc_src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (parent);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *cur = gst_pad_get_current_caps (pad), *res;

      if (!cur)
        cur = gst_pad_get_pad_template_caps (pad);
      gst_query_parse_caps (query, &filter);
      res = filter ? gst_caps_intersect_full (filter, cur,
          GST_CAPS_INTERSECT_FIRST) : gst_caps_ref (cur);
      gst_query_set_caps_result (query, res);
      gst_caps_unref (res);
      gst_caps_unref (cur);
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
gst_gpu_srtp_enc_iterate_internal_links (GstPad * pad, GstObject * parent)
{
  EncPair *pair = gst_pad_get_element_private (pad);
  GstPad *other;
  GstIterator *it = NULL;
  GValue v = G_VALUE_INIT;

  GST_OBJECT_LOCK (parent);
  other = pad == pair->sinkpad ? pair->srcpad : pair->sinkpad;
  if (other)
    gst_object_ref (other);
  GST_OBJECT_UNLOCK (parent);
  if (!other)
    return NULL;
  g_value_init (&v, GST_TYPE_PAD);
  g_value_take_object (&v, other);
  it = gst_iterator_new_single (GST_TYPE_PAD, &v);
  g_value_unset (&v);
  return it;
}

static GstPad *
gst_gpu_srtp_enc_request_new_pad (GstElement * element, GstPadTemplate * templ,
    const gchar * name, const GstCaps * caps)
{
  GstElementClass *klass = GST_ELEMENT_GET_CLASS (element);
  gboolean is_rtcp =
      templ == gst_element_class_get_pad_template (klass, "rtcp_sink_%u");
  const gchar *prefix = is_rtcp ? "rtcp" : "rtp";
  guint index = 0;
  gchar *sink_name, *src_name;
  GstPad *existing;
  EncPair *pair;

  if (name) {
    gchar *fmt = g_strdup_printf ("%s_sink_%%u", prefix);
    gboolean ok = sscanf (name, fmt, &index) == 1;
    g_free (fmt);
    if (!ok)
      return NULL;
  } else {
    /* the lowest free index */
    while ((existing = gst_element_get_static_pad (element,
                (sink_name = g_strdup_printf ("%s_sink_%u", prefix, index))))) {
      gst_object_unref (existing);
      g_free (sink_name);
      index++;
    }
    g_free (sink_name);
  }
  sink_name = g_strdup_printf ("%s_sink_%u", prefix, index);
  src_name = g_strdup_printf ("%s_src_%u", prefix, index);
  if ((existing = gst_element_get_static_pad (element, sink_name))) {
    gst_object_unref (existing);
    GST_WARNING_OBJECT (element, "pad %s already exists", sink_name);
    g_free (sink_name);
    g_free (src_name);
    return NULL;
  }

  pair = g_new0 (EncPair, 1);
  pair->refcount = 1;
  pair->is_rtcp = is_rtcp;
  pair->caps_gen = G_MAXUINT;
  pair->sinkpad = gst_pad_new_from_template (templ, sink_name);
  pair->srcpad = gst_pad_new_from_static_template (is_rtcp ?
      &rtcp_src_template : &rtp_src_template, src_name);
  g_free (sink_name);
  g_free (src_name);

  gst_pad_set_element_private (pair->sinkpad, pair);
  g_object_set_data_full (G_OBJECT (pair->sinkpad), "gpusrtp-pair", pair,
      enc_pair_unref);
  gst_pad_set_element_private (pair->srcpad, enc_pair_ref (pair));
  g_object_set_data_full (G_OBJECT (pair->srcpad), "gpusrtp-pair", pair,
      enc_pair_unref);

  gst_pad_set_chain_function (pair->sinkpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_chain));
  gst_pad_set_chain_list_function (pair->sinkpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_chain_list));
  gst_pad_set_event_function (pair->sinkpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_sink_event));
  gst_pad_set_query_function (pair->sinkpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_sink_query));
  gst_pad_set_iterate_internal_links_function (pair->sinkpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_iterate_internal_links));
  GST_PAD_SET_PROXY_ALLOCATION (pair->sinkpad);

  gst_pad_set_query_function (pair->srcpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_src_query));
  gst_pad_set_iterate_internal_links_function (pair->srcpad,
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_iterate_internal_links));

  /* add_pad activates the pads when the element is running */
  gst_element_add_pad (element, pair->srcpad);
  gst_element_add_pad (element, pair->sinkpad);
  return pair->sinkpad;
}

static void
gst_gpu_srtp_enc_release_pad (GstElement * element, GstPad * pad)
{
  EncPair *pair = gst_pad_get_element_private (pad);
  GstPad *sinkpad, *srcpad;

  GST_OBJECT_LOCK (element);
  sinkpad = pair->sinkpad;
  srcpad = pair->srcpad;
  pair->sinkpad = pair->srcpad = NULL;
  GST_OBJECT_UNLOCK (element);

  if (srcpad) {
    gst_pad_set_active (srcpad, FALSE);
    gst_element_remove_pad (element, srcpad);
  }
  if (sinkpad) {
    gst_pad_set_active (sinkpad, FALSE);
    gst_element_remove_pad (element, sinkpad);
  }
}

static GstStructure *
gst_gpu_srtp_enc_get_stats (GstGpuSrtpEnc * self)
{
  GstStructure *s;
  GValue streams = G_VALUE_INIT;
  GHashTableIter it;
  gpointer value;

  g_value_init (&streams, GST_TYPE_ARRAY);
  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&it, self->streams);
  while (g_hash_table_iter_next (&it, NULL, &value)) {
    EncStream *es = value;

    gst_gpu_srtp_stats_add_stream (&streams, es->ssrc, es->ctx.roc);
  }
  s = gst_structure_new ("application/x-srtp-encoder-stats",
      "packets-in", G_TYPE_UINT64, self->st_packets_in,
      "bytes-in", G_TYPE_UINT64, self->st_bytes_in,
      "packets-out", G_TYPE_UINT64, self->st_packets_out,
      "bytes-out", G_TYPE_UINT64, self->st_bytes_out,
      "packets-dropped", G_TYPE_UINT64, self->st_dropped,
      "packets-repeated", G_TYPE_UINT64, self->st_repeated,
      "packets-bad", G_TYPE_UINT64, self->st_bad,
      "batches", G_TYPE_UINT64, self->st_batches,
      /* the GPU protect is not wired yet: every batch runs on the CPU */
      "backend", G_TYPE_STRING, "cpu", NULL);
  g_mutex_unlock (&self->lock);
  gst_structure_take_value (s, "streams", &streams);
  return s;
}

/* ---- GObject / GstElement boilerplate ------------------------------------ */

static void
gst_gpu_srtp_enc_set_context (GstElement * element, GstContext * context)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static GstStateChangeReturn
gst_gpu_srtp_enc_change_state (GstElement * element, GstStateChange transition)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
      if (!gst_gpustream_gpu_start (element, &self->gpu))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      g_mutex_lock (&self->lock);
      g_hash_table_remove_all (self->streams);
      self->streams_gen = G_MAXUINT;
      self->st_packets_in = self->st_packets_out = 0;
      self->st_bytes_in = self->st_bytes_out = 0;
      self->st_dropped = self->st_repeated = self->st_bad = 0;
      self->st_batches = 0;
      self->last_warn = 0;
      g_mutex_unlock (&self->lock);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* pads are inactive: no streaming thread left. Keys wiped on free. */
      g_mutex_lock (&self->lock);
      g_hash_table_remove_all (self->streams);
      g_mutex_unlock (&self->lock);
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
gst_gpu_srtp_enc_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (object);

  if (gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KEY:
      gst_clear_buffer (&self->key);
      self->key = g_value_dup_boxed (value);
      self->gen++;
      break;
    case PROP_RTP_CIPHER:
      self->rtp_cipher = g_value_get_enum (value);
      self->gen++;
      break;
    case PROP_RTP_AUTH:
      self->rtp_auth = g_value_get_enum (value);
      self->gen++;
      break;
    case PROP_RTCP_CIPHER:
      self->rtcp_cipher = g_value_get_enum (value);
      self->gen++;
      break;
    case PROP_RTCP_AUTH:
      self->rtcp_auth = g_value_get_enum (value);
      self->gen++;
      break;
    case PROP_RANDOM_KEY:
      self->random_key = g_value_get_boolean (value);
      break;
    case PROP_REPLAY_WINDOW_SIZE:
      self->replay_window = g_value_get_uint (value);
      break;
    case PROP_ALLOW_REPEAT_TX:
      self->allow_repeat_tx = g_value_get_boolean (value);
      break;
    case PROP_MAX_LATENCY:
      self->max_latency = g_value_get_uint64 (value);
      break;
    case PROP_OUTPUT_LISTS:
      self->output_lists = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_gpu_srtp_enc_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (object);

  if (gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu, prop_id,
          PROP_BACKEND, PROP_CUDA_DEVICE_ID, value))
    return;

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, gst_gpu_srtp_enc_get_stats (self));
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KEY:
      g_value_set_boxed (value, self->key);
      break;
    case PROP_RTP_CIPHER:
      g_value_set_enum (value, self->rtp_cipher);
      break;
    case PROP_RTP_AUTH:
      g_value_set_enum (value, self->rtp_auth);
      break;
    case PROP_RTCP_CIPHER:
      g_value_set_enum (value, self->rtcp_cipher);
      break;
    case PROP_RTCP_AUTH:
      g_value_set_enum (value, self->rtcp_auth);
      break;
    case PROP_RANDOM_KEY:
      g_value_set_boolean (value, self->random_key);
      break;
    case PROP_REPLAY_WINDOW_SIZE:
      g_value_set_uint (value, self->replay_window);
      break;
    case PROP_ALLOW_REPEAT_TX:
      g_value_set_boolean (value, self->allow_repeat_tx);
      break;
    case PROP_MAX_LATENCY:
      g_value_set_uint64 (value, self->max_latency);
      break;
    case PROP_OUTPUT_LISTS:
      g_value_set_boolean (value, self->output_lists);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_gpu_srtp_enc_finalize (GObject * object)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (object);

  g_clear_pointer (&self->streams, g_hash_table_unref);
  gst_clear_buffer (&self->key);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_gpu_srtp_enc_class_init (GstGpuSrtpEncClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  const GParamFlags flags_playing = G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;

  gobject_class->set_property = gst_gpu_srtp_enc_set_property;
  gobject_class->get_property = gst_gpu_srtp_enc_get_property;
  gobject_class->finalize = gst_gpu_srtp_enc_finalize;

  g_object_class_install_property (gobject_class, PROP_KEY,
      g_param_spec_boxed ("key", "Key",
          "Master key || master salt (30 bytes for aes-128-icm and null, 46 "
          "for aes-256-icm, 28 for aes-128-gcm, 44 for aes-256-gcm); may be "
          "changed while playing: new contexts and caps for what follows",
          GST_TYPE_BUFFER, flags_playing));
  g_object_class_install_property (gobject_class, PROP_RTP_CIPHER,
      g_param_spec_enum ("rtp-cipher", "RTP Cipher", "RTP Cipher",
          GST_TYPE_GPU_SRTP_CIPHER_TYPE, DEFAULT_CIPHER, flags));
  g_object_class_install_property (gobject_class, PROP_RTP_AUTH,
      g_param_spec_enum ("rtp-auth", "RTP Authentication",
          "RTP Authentication (ignored with the GCM ciphers)",
          GST_TYPE_GPU_SRTP_AUTH_TYPE, DEFAULT_AUTH, flags));
  g_object_class_install_property (gobject_class, PROP_RTCP_CIPHER,
      g_param_spec_enum ("rtcp-cipher", "RTCP Cipher", "RTCP Cipher",
          GST_TYPE_GPU_SRTP_CIPHER_TYPE, DEFAULT_CIPHER, flags));
  g_object_class_install_property (gobject_class, PROP_RTCP_AUTH,
      g_param_spec_enum ("rtcp-auth", "RTCP Authentication",
          "RTCP Authentication (ignored with the GCM ciphers)",
          GST_TYPE_GPU_SRTP_AUTH_TYPE, DEFAULT_AUTH, flags));
  g_object_class_install_property (gobject_class, PROP_RANDOM_KEY,
      g_param_spec_boolean ("random-key", "Random key",
          "Generate a random key (getrandom) when no key is set",
          DEFAULT_RANDOM_KEY, flags));
  g_object_class_install_property (gobject_class, PROP_REPLAY_WINDOW_SIZE,
      g_param_spec_uint ("replay-window-size", "Replay window size",
          "Size of the sender's repeat-detection window (packets)",
          GST_GPU_SRTP_MIN_WINDOW, GST_GPU_SRTP_MAX_WINDOW_PROP,
          GST_GPU_SRTP_DEFAULT_WINDOW, flags));
  g_object_class_install_property (gobject_class, PROP_ALLOW_REPEAT_TX,
      g_param_spec_boolean ("allow-repeat-tx", "Allow repeat TX",
          "Whether retransmissions of packets with the same sequence number "
          "are allowed (they must then carry the same payload, or a severe "
          "security weakness is introduced)", DEFAULT_ALLOW_REPEAT_TX, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_LATENCY,
      g_param_spec_uint64 ("max-latency", "Max latency",
          "Batching bound in ns for the GPU path (packets of all pads held "
          "at most this long); the CPU path protects each buffer or list "
          "as it arrives", 0, G_MAXUINT64, DEFAULT_MAX_LATENCY, flags));
  g_object_class_install_property (gobject_class, PROP_OUTPUT_LISTS,
      g_param_spec_boolean ("output-lists", "Output lists",
          "Push a protected input list as a list (one push per batch). Off "
          "by default because srtpdec 1.22 mishandles buffer lists "
          "(GStreamer-CRITICAL, double unref): enable it toward gpusrtpdec, "
          "udpsink, multiudpsink", DEFAULT_OUTPUT_LISTS, flags_playing));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "streams (array of ssrc, roc), packets-in, bytes-in, packets-out, "
          "bytes-out, packets-dropped, packets-repeated, packets-bad, "
          "batches, backend", GST_TYPE_STRUCTURE,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_CUDA_DEVICE_ID);

  /**
   * GstGpuSrtpEnc::soft-limit:
   *
   * As srtpenc: emitted once per SSRC when its packet index enters the last
   * ROC (2^48 - 2^16 packets protected): time to set a new key.
   */
  signals[SIGNAL_SOFT_LIMIT] = g_signal_new ("soft-limit",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
      G_TYPE_NONE, 0);

  gst_element_class_add_static_pad_template (element_class,
      &rtp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &rtp_src_template);
  gst_element_class_add_static_pad_template (element_class,
      &rtcp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &rtcp_src_template);
  gst_element_class_set_static_metadata (element_class,
      "SRTP encoder (GPU / batched CPU)", "Filter/Network/SRTP",
      "Protects RTP and RTCP with SRTP / SRTCP (AES-CM, AES-GCM, HMAC-SHA1) "
      "in batches, a drop-in for srtpenc", "gst-gpustream developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_change_state);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_set_context);
  element_class->request_new_pad =
      GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR (gst_gpu_srtp_enc_release_pad);

  GST_DEBUG_CATEGORY_INIT (gst_gpu_srtp_enc_debug, "gpusrtpenc", 0,
      "SRTP encoder");
}

static void
gst_gpu_srtp_enc_init (GstGpuSrtpEnc * self)
{
  gst_gpustream_gpu_init (&self->gpu);
  g_mutex_init (&self->lock);
  self->rtp_cipher = self->rtcp_cipher = DEFAULT_CIPHER;
  self->rtp_auth = self->rtcp_auth = DEFAULT_AUTH;
  self->random_key = DEFAULT_RANDOM_KEY;
  self->replay_window = GST_GPU_SRTP_DEFAULT_WINDOW;
  self->allow_repeat_tx = DEFAULT_ALLOW_REPEAT_TX;
  self->max_latency = DEFAULT_MAX_LATENCY;
  self->output_lists = DEFAULT_OUTPUT_LISTS;
  self->streams = g_hash_table_new_full (NULL, NULL, NULL, enc_stream_free);
  self->streams_gen = G_MAXUINT;
}
