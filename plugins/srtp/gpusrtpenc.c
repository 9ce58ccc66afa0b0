/* gpusrtpenc: SRTP / SRTCP protection (RFC 3711, 6188, 7714), a drop-in for
 * srtpenc.
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
#include <gst/gpustream/gpsschedclient.h>
#include <gst/gpustream/gpssrtp.h>
#include "gpusrtpenc.h"

GST_DEBUG_CATEGORY_STATIC (gst_gpu_srtp_enc_debug);
#define GST_CAT_DEFAULT gst_gpu_srtp_enc_debug

/* ---- properties ---------------------------------------------------------- */

#define DEFAULT_CIPHER GST_GPU_SRTP_CIPHER_AES_128_ICM
#define DEFAULT_AUTH GST_GPU_SRTP_AUTH_HMAC_SHA1_80
#define DEFAULT_RANDOM_KEY FALSE
#define DEFAULT_ALLOW_REPEAT_TX FALSE
#define DEFAULT_CYCLE 0
#define DEFAULT_MAX_RATE 0
#define DEFAULT_OUTPUT_LISTS FALSE

enum
{
  PROP_0,
  PROP_KEY,
  PROP_MKI,
  PROP_RTP_CIPHER,
  PROP_RTP_AUTH,
  PROP_RTCP_CIPHER,
  PROP_RTCP_AUTH,
  PROP_RANDOM_KEY,
  PROP_REPLAY_WINDOW_SIZE,
  PROP_ALLOW_REPEAT_TX,
  PROP_CYCLE,
  PROP_MAX_LATENCY,
  PROP_MAX_RATE,
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

/* The RTP and RTCP pads of one index (rtpbin's session N: the RTCP of the
 * SSRCs whose RTP comes through rtp_sink_N comes through rtcp_sink_N). In
 * scheduled mode, while PLAYING, the two share one scheduler stream, so an
 * RTCP packet (the BYE at the end of a stream) never leaves before RTP
 * packets that arrived before it; a receiver that takes a BYE for the end
 * then loses nothing. Before PLAYING the RTCP pad has a stream of its own:
 * an RTP sink prerolling holds the RTP behind its first packet, and RTCP
 * held behind that would keep an RTCP sink from ever prerolling. */
typedef struct _EncLink
{
  gint refcount;                /* the element's table, each pair, the
                                 * scheduler stream */
  guint index;
  GstElement *element;          /* not a ref: the element owns the table */
  /* object lock; no references: cleared when the pads are released */
  struct _EncPair *rtp, *rtcp;
  GstGpuStreamSchedClientStream *stream;
  guint n_scheduled;            /* pairs joined to stream */
} EncLink;

/* One request sink pad and its source pad. Both pads hold a reference; the
 * pad pointers are cleared (object lock) when the pair is released. */
typedef struct _EncPair
{
  gint refcount;
  GstElement *element;          /* not a ref: the element owns the pads */
  GstPad *sinkpad;
  GstPad *srcpad;
  gboolean is_rtcp;
  EncLink *link;                /* a reference */
  GstCaps *sink_caps;           /* object lock */
  /* the "roc" (and "ssrc") of the RTP sink caps, as srtpdec takes them:
   * where a new context of that stream starts. Streaming thread only. */
  gboolean have_caps_roc, have_caps_ssrc;
  guint32 caps_roc, caps_ssrc;
  guint caps_gen;               /* settings generation of the pushed caps */
  gint last_ret;                /* atomic GstFlowReturn of the last push */
  /* scheduled mode; written under the object lock, read atomically: the
   * link's stream, and an RTCP pad's own (used until PLAYING) */
  GstGpuStreamSchedClientStream *sched_stream;
  GstGpuStreamSchedClientStream *solo_stream;
  /* the stream of the pad's last item: streaming thread */
  GstGpuStreamSchedClientStream *last_stream_used;
  /* the stream of the pad's last packet (a reference) and the clearing of
   * the element's table it belongs to (streams_epoch): element lock */
  struct _EncStream *last_stream;
  guint last_stream_epoch;
} EncPair;

/* Sender side of one SSRC: the kernel context plus libsrtp's sender replay
 * check (a packet index sent twice is refused unless allow-repeat-tx), kept
 * here because the kernel does no sender-side check. */
typedef struct _EncStream
{
  gint refcount;                /* the table, each batched packet, and the
                                 * pad whose last packet it had */
  guint32 ssrc;
  GsSrtpCtx ctx;
  gboolean have_seq;            /* shadow of the index estimate, in order */
  guint32 roc;
  guint16 s_l;
  guint64 top;
  guint64 *bits;                /* window / 64 words; bit d: top - d sent */
  gboolean soft_limit;          /* soft-limit emitted */
  guint gen;                    /* settings generation of its key */
} EncStream;

typedef struct
{
  guint gen;
  GstBuffer *key;
  GstBuffer *mki;               /* NULL: no MKI */
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

  /* settings, object lock; gen counts changes of key / mki / cipher / auth */
  GstBuffer *key;
  GstBuffer *mki;
  GstGpuSrtpCipherType rtp_cipher, rtcp_cipher;
  GstGpuSrtpAuthType rtp_auth, rtcp_auth;
  gboolean random_key;
  guint replay_window;
  gboolean allow_repeat_tx;
  GstClockTime cycle;
  guint64 max_rate;
  gboolean output_lists;
  guint gen;
  guint valid_gen;              /* gen whose key / mki sizes were checked */

  /* streams and counters, lock (taken by every streaming thread) */
  GMutex lock;
  GHashTable *streams;          /* ssrc -> EncStream */
  guint streams_gen;
  guint streams_epoch;          /* counts clearings of streams */
  guint64 st_packets_in, st_packets_out, st_bytes_in, st_bytes_out;
  guint64 st_dropped, st_repeated, st_bad, st_batches, st_gpu_batches;
  gint64 last_warn;
  gint hard_limit;              /* atomic: an index space ran out */
  gint hard_limit_gen;          /* atomic: under the key of that generation */

  /* the contexts' packet state (ROC, SRTCP index): one batch at a time */
  GMutex protect_lock;

  /* scheduled mode (cycle > 0): sched lives as long as the element,
   * scheduled is fixed from READY to PAUSED until PAUSED to READY */
  GstGpuStreamSchedClient *sched;
  gboolean scheduled;
  GHashTable *links;            /* pad index -> EncLink, object lock */
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

static EncLink *
enc_link_ref (EncLink * link)
{
  g_atomic_int_inc (&link->refcount);
  return link;
}

static void
enc_link_unref (gpointer data)
{
  EncLink *link = data;

  if (g_atomic_int_dec_and_test (&link->refcount))
    g_free (link);
}

static void enc_stream_unref (gpointer data);

static void
enc_pair_unref (gpointer data)
{
  EncPair *pair = data;

  if (g_atomic_int_dec_and_test (&pair->refcount)) {
    if (pair->last_stream)
      enc_stream_unref (pair->last_stream);
    if (pair->link)
      enc_link_unref (pair->link);
    gst_clear_caps (&pair->sink_caps);
    g_free (pair);
  }
}

static EncStream *
enc_stream_ref (EncStream * s)
{
  g_atomic_int_inc (&s->refcount);
  return s;
}

static void
enc_stream_unref (gpointer data)
{
  EncStream *s = data;

  if (!g_atomic_int_dec_and_test (&s->refcount))
    return;
  gsrtp_ctx_clear (&s->ctx);    /* wipes the session keys */
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
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
          ("getrandom() failed, no random key"), (NULL));
      return FALSE;
    }
    self->key = gst_buffer_new_wrapped (k, n);
    self->gen++;
  }
  set->gen = self->gen;
  set->key = self->key ? gst_buffer_ref (self->key) : NULL;
  set->mki = self->mki ? gst_buffer_ref (self->mki) : NULL;
  set->rtp_cipher = self->rtp_cipher;
  set->rtcp_cipher = self->rtcp_cipher;
  set->rtp_auth = self->rtp_auth;
  set->rtcp_auth = self->rtcp_auth;
  set->window = self->replay_window;
  set->allow_repeat_tx = self->allow_repeat_tx;
  set->output_lists = self->output_lists;
  GST_OBJECT_UNLOCK (self);

  if (!set->key) {
    gst_clear_buffer (&set->mki);
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("No key: set \"key\" (master key || salt) or random-key=true"),
        (NULL));
    return FALSE;
  }
  /* every key / mki / cipher / auth change bumps gen: check once per gen,
   * not per buffer */
  if ((guint) g_atomic_int_get (&self->valid_gen) == set->gen)
    return TRUE;
  want = gst_gpu_srtp_key_length (set->rtp_cipher);
  if (gst_buffer_get_size (set->key) != want ||
      gst_gpu_srtp_key_length (set->rtcp_cipher) != want) {
    /* the sizes only, never the bytes */
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("key is %" G_GSIZE_FORMAT " bytes, %s / %s need %" G_GSIZE_FORMAT
            " / %" G_GSIZE_FORMAT, gst_buffer_get_size (set->key),
            gst_gpu_srtp_cipher_nick (set->rtp_cipher),
            gst_gpu_srtp_cipher_nick (set->rtcp_cipher), want,
            gst_gpu_srtp_key_length (set->rtcp_cipher)), (NULL));
    gst_clear_buffer (&set->key);
    gst_clear_buffer (&set->mki);
    return FALSE;
  }
  if (set->mki && (gst_buffer_get_size (set->mki) == 0 ||
          gst_buffer_get_size (set->mki) > GSRTP_MAX_MKI)) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("mki is %" G_GSIZE_FORMAT " bytes, it must be 1 to %d",
            gst_buffer_get_size (set->mki), GSRTP_MAX_MKI), (NULL));
    gst_clear_buffer (&set->key);
    gst_clear_buffer (&set->mki);
    return FALSE;
  }
  g_atomic_int_set (&self->valid_gen, set->gen);
  return TRUE;
}

static void
enc_settings_clear (EncSettings * set)
{
  gst_clear_buffer (&set->key);
  gst_clear_buffer (&set->mki);
}

static void enc_push_event (GstGpuSrtpEnc * self, EncPair * pair,
    GstPad * srcpad, GstEvent * event);

/* Pushes source caps for the settings generation set->gen if not done yet. */
static void
enc_ensure_caps (GstGpuSrtpEnc * self, EncPair * pair, const EncSettings * set)
{
  GstCaps *sink_caps, *caps, *log;
  GstPad *srcpad;

  /* per buffer: caps_gen only changes in this pad's streaming thread or
   * under the lock, a stale read just takes the locked path */
  if ((guint) g_atomic_int_get (&pair->caps_gen) == set->gen)
    return;
  GST_OBJECT_LOCK (self);
  if (pair->caps_gen == set->gen || !pair->srcpad) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  g_atomic_int_set (&pair->caps_gen, set->gen);
  sink_caps = pair->sink_caps ? gst_caps_ref (pair->sink_caps) : NULL;
  srcpad = gst_object_ref (pair->srcpad);
  GST_OBJECT_UNLOCK (self);

  caps = gst_gpu_srtp_make_src_caps (sink_caps, pair->is_rtcp, set->key,
      set->mki, set->rtp_cipher, set->rtp_auth, set->rtcp_cipher, set->rtcp_auth);
  log = gst_gpu_srtp_caps_for_log (caps);
  GST_DEBUG_OBJECT (srcpad, "caps (key removed here) %" GST_PTR_FORMAT, log);
  gst_caps_unref (log);
  enc_push_event (self, pair, srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  gst_clear_caps (&sink_caps);
  gst_object_unref (srcpad);
}

/* roc: where the stream's index goes on from (-1: a new stream, ROC 0) */
static EncStream *
enc_stream_get (GstGpuSrtpEnc * self, guint32 ssrc, const EncSettings * set,
    gint64 roc)
{
  EncStream *s = g_hash_table_lookup (self->streams, GUINT_TO_POINTER (ssrc));
  GstMapInfo map;
  GsSrtpResult r;

  if (s)
    return s;
  s = g_new0 (EncStream, 1);
  s->refcount = 1;
  s->ssrc = ssrc;
  s->gen = set->gen;
  s->bits = g_new0 (guint64, (set->window + 63) / 64);
  gst_buffer_map (set->key, &map, GST_MAP_READ);
  r = gsrtp_ctx_init (&s->ctx,
      gst_gpu_srtp_policy (set->rtp_cipher, set->rtp_auth),
      gst_gpu_srtp_policy (set->rtcp_cipher, set->rtcp_auth),
      map.data, map.size, 0);
  gst_buffer_unmap (set->key, &map);
  if (r == GSRTP_OK && set->mki) {
    gst_buffer_map (set->mki, &map, GST_MAP_READ);
    r = gsrtp_ctx_set_mki (&s->ctx, map.data, map.size);
    gst_buffer_unmap (set->mki, &map);
  }
  if (r != GSRTP_OK) {
    GST_WARNING_OBJECT (self, "context for SSRC 0x%08x: %s", ssrc,
        gsrtp_result_name (r));
    enc_stream_unref (s);
    return NULL;
  }
  if (roc >= 0) {
    /* a stream that goes on under the same key: its next index follows
     * the ROC it had, so no index (and keystream) is used twice and the
     * key's lifetime counts on from there */
    gsrtp_ctx_set_roc (&s->ctx, (guint32) roc);
    s->roc = (guint32) roc;
    GST_INFO_OBJECT (self, "SSRC 0x%08x starts at ROC %u (caps)", ssrc,
        (guint) roc);
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
  if (gst_gpustream_warn_ok (&self->last_warn))
    GST_WARNING_OBJECT (self, "dropped a packet of SSRC 0x%08x: %s (further "
        "drops are counted in stats, warned once a second)", ssrc, why);
}

/* The output packets of one enc_prepare call (a buffer list, or one buffer)
 * in ONE allocation: each packet is copied into its slot (room for tag +
 * MKI), protected there, and its buffer then wraps the slot (maxsize = the
 * slot, so nothing downstream can grow into a neighbour). Per-packet buffer
 * allocations, maps and unmaps were most of the element's cost beyond the
 * kernel. Not gst_memory_share: it refuses a parent mapped for writing, and
 * its shares are read-only. */
typedef struct
{
  gint refcount;                /* the prepare call + each slot's memory */
  guint8 *data;                 /* ENC_SLOT_ALIGN aligned */
} EncBlock;

#define ENC_SLOT_ALIGN 16
#define ENC_SLOT_SIZE(n) (((n) + ENC_SLOT_ALIGN - 1) & ~(gsize) (ENC_SLOT_ALIGN - 1))

static void
enc_block_unref (gpointer data)
{
  EncBlock *b = data;

  if (g_atomic_int_dec_and_test (&b->refcount))
    g_free (b);
}

/* One packet on its way through a batch, or a serialized event travelling
 * with the packets (scheduled mode). */
typedef struct
{
  GstMiniObject *obj;           /* the output buffer (metadata only until
                                 * enc_item_attach), or an event */
  EncStream *stream;            /* a reference; NULL for events */
  EncBlock *block;              /* a reference until attached */
  guint8 *data;                 /* the packet's slot in block */
  gboolean is_rtcp;
  gboolean in_slot;             /* part of a caller's array: not freed */
  gboolean in_place;            /* obj is the input buffer, mapped in map */
  GstMapInfo map;
  guint32 len, cap;
  GsSrtpResult result;
} EncItem;

static void
enc_item_free (gpointer data)
{
  EncItem *it = data;

  if (it->in_place)
    gst_buffer_unmap (GST_BUFFER_CAST (it->obj), &it->map);
  if (it->obj)
    gst_mini_object_unref (it->obj);
  if (it->stream)
    enc_stream_unref (it->stream);
  if (it->block)
    enc_block_unref (it->block);
  if (!it->in_slot)
    g_free (it);
}

/* Gives a protected packet's buffer its bytes (len of them) from the block;
 * the memory holds the item's block reference. */
static void
enc_item_attach (EncItem * it)
{
  GstBuffer *buf = GST_BUFFER_CAST (it->obj);

  if (it->in_place) {
    gst_buffer_unmap (buf, &it->map);
    gst_buffer_set_size (buf, it->len);
    it->in_place = FALSE;
    return;
  }
  gst_buffer_append_memory (buf, gst_memory_new_wrapped (0, it->data,
          ENC_SLOT_SIZE (it->cap), 0, it->len, it->block, enc_block_unref));
  /* as gst_buffer_new_allocate: a fresh buffer, not a changed one */
  GST_BUFFER_FLAG_UNSET (buf, GST_BUFFER_FLAG_TAG_MEMORY);
  it->block = NULL;
}

/* The bytes of a buffer upstream gave away (writable, one writable memory)
 * with room behind them for the tag and MKI: protected where they are, no
 * copy and no new buffer (a payloader that allocates with padding). NULL
 * otherwise, or when mapping fails; the buffer is then left as it was. */
static guint8 *
enc_map_in_place (GstBuffer * buf, gsize len, gsize cap, GstMapInfo * map)
{
  GstMemory *mem;
  gsize offset, maxsize;

  if (gst_buffer_n_memory (buf) != 1 || !gst_buffer_is_writable (buf))
    return NULL;
  mem = gst_buffer_peek_memory (buf, 0);
  if (!gst_memory_is_writable (mem))
    return NULL;
  gst_memory_get_sizes (mem, &offset, &maxsize);
  if (maxsize - offset < cap)
    return NULL;
  gst_buffer_set_size (buf, cap);
  if (!gst_buffer_map (buf, map, GST_MAP_READWRITE)) {
    gst_buffer_set_size (buf, len);
    return NULL;
  }
  return map->data;
}

/* Checks and copies the packets of one pad into one block with room for
 * the tag, in order: the context per SSRC and the sender's repeat check
 * happen here, in the streaming thread. Takes no input buffer, except a
 * single buffer of the caller's (owned) that it protects in place: in[0] is
 * then set to NULL. items (n of them) receives the k items to protect;
 * slots: n items to use in place (direct mode), or NULL to allocate each
 * (scheduled mode). */
static guint
enc_prepare (GstGpuSrtpEnc * self, EncPair * pair, const EncSettings * set,
    GstBuffer ** in, guint n, gboolean owned, EncItem ** items,
    EncItem * slots)
{
  GsSrtpPolicy rtp_pol = gst_gpu_srtp_policy (set->rtp_cipher, set->rtp_auth);
  GsSrtpPolicy rtcp_pol = gst_gpu_srtp_policy (set->rtcp_cipher,
      set->rtcp_auth);
  gsize overhead = (pair->is_rtcp ? gsrtp_rtcp_overhead (rtcp_pol) :
      gsrtp_rtp_overhead (rtp_pol)) +
      (set->mki ? gst_buffer_get_size (set->mki) : 0);
  gsize min_len = pair->is_rtcp ? 8 : 12, total = 0, off = 0;
  EncStream *last = NULL;
  EncBlock *block = NULL;
  GstMapInfo map;
  guint8 *in_place = NULL;
  guint i, k = 0;

  if (n == 0)
    return 0;
  /* one buffer of ours, direct mode: in place when it has the room */
  if (owned && n == 1 && slots) {
    gsize len = gst_buffer_get_size (in[0]);

    if (len >= min_len && len <= G_MAXUINT32 - overhead)
      in_place = enc_map_in_place (in[0], len, len + overhead, &map);
  }
  if (!in_place) {
    for (i = 0; i < n; i++) {
      gsize len = gst_buffer_get_size (in[i]);

      if (len <= G_MAXUINT32 - overhead)
        total += ENC_SLOT_SIZE (len + overhead);
    }
    block = g_malloc (sizeof (EncBlock) + ENC_SLOT_ALIGN - 1 + total);
    block->refcount = 1;
    block->data = (guint8 *) ENC_SLOT_SIZE ((guintptr) (block + 1));
  }

  g_mutex_lock (&self->lock);
  if (self->streams_gen != set->gen) {
    /* a new key: new contexts (ROC and SRTCP index from 0), as srtpenc;
     * packets already batched keep their old context (a reference) */
    if (g_hash_table_size (self->streams) > 0)
      GST_INFO_OBJECT (self, "key or policy changed: new contexts");
    g_hash_table_remove_all (self->streams);
    self->streams_epoch++;
    self->streams_gen = set->gen;
  }
  for (i = 0; i < n; i++) {
    gsize len = in_place ? map.size - overhead : gst_buffer_get_size (in[i]);
    guint8 *slot = in_place ? in_place : block->data + off;
    guint32 ssrc;
    EncStream *s;
    EncItem *it;
    gboolean repeat;

    self->st_packets_in++;
    self->st_bytes_in += len;
    if (len < min_len || len > G_MAXUINT32 - overhead) {
      self->st_bad++;
      enc_drop_warn (self, 0, "not an RTP / RTCP packet");
      continue;
    }
    off += ENC_SLOT_SIZE (len + overhead);
    /* the one copy; the header is read from it */
    if (!in_place)
      gst_buffer_extract (in[i], 0, slot, len);
    if ((slot[0] >> 6) != 2) {
      self->st_bad++;
      enc_drop_warn (self, 0, "not an RTP / RTCP packet");
      continue;
    }
    ssrc = GST_READ_UINT32_BE (slot + (pair->is_rtcp ? 4 : 8));
    /* mostly one SSRC per pad: the pad's last stream, else the table (a
     * stream stays in the table until the table is cleared: a new key, a
     * stop) */
    if (!last && pair->last_stream &&
        pair->last_stream_epoch == self->streams_epoch)
      last = pair->last_stream;
    if (last && last->ssrc == ssrc) {
      s = last;
    } else {
      s = last = enc_stream_get (self, ssrc, set, !pair->is_rtcp &&
          pair->have_caps_roc && (!pair->have_caps_ssrc ||
              pair->caps_ssrc == ssrc) ? (gint64) pair->caps_roc : -1);
      if (s && s != pair->last_stream) {
        if (pair->last_stream)
          enc_stream_unref (pair->last_stream);
        pair->last_stream = enc_stream_ref (s);
        pair->last_stream_epoch = self->streams_epoch;
      }
    }
    if (!s) {
      self->st_bad++;
      continue;
    }
    if (!pair->is_rtcp && !enc_stream_check_tx (s, GST_READ_UINT16_BE (slot + 2),
            set->window, set->allow_repeat_tx, &repeat)) {
      self->st_repeated++;
      enc_drop_warn (self, ssrc, "sequence number already sent or too old "
          "(allow-repeat-tx=false)");
      continue;
    }

    if (slots) {
      it = &slots[k];
      memset (it, 0, sizeof *it);
      it->in_slot = TRUE;
    } else {
      it = g_new0 (EncItem, 1);
    }
    if (in_place) {
      /* taken from the caller: the item unmaps it */
      it->obj = GST_MINI_OBJECT_CAST (in[i]);
      in[i] = NULL;
      it->in_place = TRUE;
      it->map = map;
      in_place = NULL;
    } else {
      it->obj = GST_MINI_OBJECT_CAST (gst_buffer_new ());
      gst_buffer_copy_into (GST_BUFFER_CAST (it->obj), in[i],
          GST_BUFFER_COPY_METADATA, 0, -1);
      g_atomic_int_inc (&block->refcount);
      it->block = block;
    }
    it->stream = enc_stream_ref (s);
    it->data = slot;
    it->is_rtcp = pair->is_rtcp;
    it->len = (guint32) len;
    it->cap = (guint32) (len + overhead);
    items[k++] = it;
  }
  g_mutex_unlock (&self->lock);
  if (in_place)                 /* dropped: the caller releases it */
    gst_buffer_unmap (in[0], &map);
  if (block)
    enc_block_unref (block);
  return k;
}

#define ENC_STACK 64

/* Starts n prepared packets as one batch (gpssrtp.h): on the GPU, queued on
 * the CUDA stream of lane (GST_GPUSTREAM_SRTP_LANE_NONE outside the
 * scheduler); on the CPU, protected now. pkts: room for n. */
static void
enc_fill_packets (EncItem ** items, guint n, GsSrtpPacket * pkts)
{
  guint i;

  for (i = 0; i < n; i++) {
    pkts[i].ctx = &items[i]->stream->ctx;
    pkts[i].data = items[i]->data;
    pkts[i].len = items[i]->len;
    pkts[i].cap = items[i]->cap;
    pkts[i].is_rtcp = items[i]->is_rtcp;
    pkts[i].result = GSRTP_OK;
  }
}

static GstGpuStreamSrtpBatch *
enc_protect_submit (GstGpuSrtpEnc * self, EncItem ** items, guint n,
    GsSrtpPacket * pkts, GstGpuStreamBackend backend,
    GstObject * cuda_context, guint lane)
{
  GstGpuStreamSrtpBatch *batch;

  enc_fill_packets (items, n, pkts);
  /* contexts are shared by pads (RTP and RTCP of one SSRC): one batch at a
   * time touches them, in its submit half only */
  g_mutex_lock (&self->protect_lock);
  batch = gst_gpustream_srtp_protect_submit (pkts, n, backend, cuda_context,
      lane);
  g_mutex_unlock (&self->protect_lock);
  return batch;
}

/* Waits for the batch, gives each packet its bytes and counts the results;
 * a failed packet keeps its result for the caller to drop. TRUE when a
 * context ran out of packet indexes (the hard limit). */
static gboolean enc_protect_done (GstGpuSrtpEnc * self, EncItem ** items,
    guint n, GsSrtpPacket * pkts, gboolean on_gpu);

static gboolean
enc_protect_finish (GstGpuSrtpEnc * self, EncItem ** items, guint n,
    GsSrtpPacket * pkts, GstGpuStreamSrtpBatch * batch)
{
  gboolean on_gpu = FALSE;

  gst_gpustream_srtp_protect_finish (batch, &on_gpu);
  return enc_protect_done (self, items, n, pkts, on_gpu);
}

/* Gives each protected packet its bytes and counts the batch. */
static gboolean
enc_protect_done (GstGpuSrtpEnc * self, EncItem ** items, guint n,
    GsSrtpPacket * pkts, gboolean on_gpu)
{
  gboolean hard_limit = FALSE, hard_rtcp = FALSE;
  guint i, n_soft = 0, hard_gen = 0;

  for (i = 0; i < n; i++) {
    items[i]->result = pkts[i].result;
    if (pkts[i].result == GSRTP_OK) {
      items[i]->len = pkts[i].len;
      enc_item_attach (items[i]);
    }
  }

  g_mutex_lock (&self->lock);
  self->st_batches++;
  if (on_gpu)
    self->st_gpu_batches++;
  for (i = 0; i < n; i++) {
    EncItem *it = items[i];

    if (it->result != GSRTP_OK) {
      if (it->result == GSRTP_ERR_INDEX_EXHAUSTED) {
        hard_limit = TRUE;
        hard_rtcp |= it->is_rtcp;
        hard_gen = it->stream->gen;
      }
      self->st_dropped++;
      enc_drop_warn (self, it->stream->ssrc, gsrtp_result_name (it->result));
      continue;
    }
    self->st_packets_out++;
    self->st_bytes_out += it->len;
    /* RFC 3711 9.2: warn before the index space runs out (the last ROC) */
    if (!it->is_rtcp && it->stream->ctx.roc == G_MAXUINT32 &&
        !it->stream->soft_limit) {
      it->stream->soft_limit = TRUE;
      n_soft++;
    }
  }
  g_mutex_unlock (&self->lock);

  for (i = 0; i < n_soft; i++)
    g_signal_emit (self, signals[SIGNAL_SOFT_LIMIT], 0);
  /* RFC 3711 9.2: the packet that would take an index past the last is
   * dropped, and every later one gets GST_FLOW_ERROR (enc_process) until
   * a new key is set or the element starts again from READY */
  if (hard_limit)
    g_atomic_int_set (&self->hard_limit_gen, (gint) hard_gen);
  if (hard_limit && !g_atomic_int_exchange (&self->hard_limit, TRUE))
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Key usage limit has been reached (%s exhausted): set a new key",
            hard_rtcp ? "SRTCP index" : "ROC"), (NULL));
  return hard_limit;
}

/* Both halves at once: the direct mode, in the streaming thread. */
static gboolean
enc_protect (GstGpuSrtpEnc * self, EncItem ** items, guint n,
    GstGpuStreamBackend backend, GstObject * cuda_context)
{
  GsSrtpPacket stack_pkts[ENC_STACK];
  GsSrtpPacket *pkts = n <= ENC_STACK ? stack_pkts : g_new (GsSrtpPacket, n);
  gboolean hard_limit, on_gpu = FALSE;

  /* one call, no batch object: on the CPU nothing is allocated */
  enc_fill_packets (items, n, pkts);
  g_mutex_lock (&self->protect_lock);
  gst_gpustream_srtp_protect_batch (pkts, n, backend, cuda_context, &on_gpu);
  g_mutex_unlock (&self->protect_lock);
  hard_limit = enc_protect_done (self, items, n, pkts, on_gpu);
  if (pkts != stack_pkts)
    g_free (pkts);
  return hard_limit;
}

/* ---- scheduled mode: cycle > 0 ----
 * The packets of every pad go through the element's scheduler client
 * (gpsschedclient.h), one stream per RTP / RTCP pad pair (EncLink):
 * prepared in the streaming threads, collected without a lock, protected
 * as one batch per stream and cycle by the device's worker (on the GPU
 * every stream's batch is one launch on a CUDA stream of its own, all of
 * them in flight together) and pushed in order by the forwarders, each
 * packet to its own pad. Serialized events travel with the packets as
 * items of their own (an EncItem holding the event), so that the forwarder
 * knows which of the two pads an event is for. */

typedef struct
{
  EncItem **items;
  GsSrtpPacket *pkts;
  guint k;
  GstGpuStreamSrtpBatch *batch;
} EncSchedBatch;

static gpointer
enc_sched_submit_batch (gpointer proc_data, GstObject * cuda_context,
    guint lane, GstGpuStreamSchedItem * items, guint n)
{
  EncSchedBatch *b = g_new0 (EncSchedBatch, 1);
  guint i;

  b->items = g_new (EncItem *, MAX (n, 1));
  for (i = 0; i < n; i++) {
    EncItem *it = items[i].data;
    if ((items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) &&
        !GST_IS_EVENT (it->obj))
      b->items[b->k++] = it;
  }
  b->pkts = g_new (GsSrtpPacket, MAX (b->k, 1));
  if (b->k > 0)
    b->batch = enc_protect_submit (proc_data, b->items, b->k, b->pkts,
        cuda_context ? GST_GPUSTREAM_BACKEND_GPU : GST_GPUSTREAM_BACKEND_CPU,
        cuda_context, lane);
  return b;
}

static void
enc_sched_finish_batch (gpointer proc_data, gpointer submitted)
{
  EncSchedBatch *b = submitted;

  if (b->k > 0)
    enc_protect_finish (proc_data, b->items, b->k, b->pkts, b->batch);
  g_free (b->items);
  g_free (b->pkts);
  g_free (b);
}

/* named for the element: its items are its own prepared packets, not the
 * buffers of the library's srtp-protect (gpsprocessor.h) */
static const GstGpuStreamProcessor enc_sched_processor = {
  "gpusrtpenc", NULL, NULL, enc_sched_submit_batch, enc_sched_finish_batch
};

/* The forwarder thread of the link's pipeline, in push order: each item to
 * the pad it came from (a released pad's items are dropped). An event
 * comes here bare only when the client is not running (gpusrtpenc pushes
 * its events as items), never in practice: it goes to the RTP pad. */
static GstFlowReturn
enc_sched_output (gpointer stream_data, gpointer data, GstEvent * event)
{
  EncLink *link = stream_data;
  EncItem *it = data;
  gboolean rtcp = it && it->is_rtcp;
  GstFlowReturn ret = GST_FLOW_OK;
  GstPad *srcpad = NULL;
  EncPair *pair;

  GST_OBJECT_LOCK (link->element);
  pair = rtcp ? link->rtcp : link->rtp;
  if (pair && pair->srcpad) {
    srcpad = gst_object_ref (pair->srcpad);
    enc_pair_ref (pair);
  }
  GST_OBJECT_UNLOCK (link->element);

  if (it && GST_IS_EVENT (it->obj))
    event = GST_EVENT_CAST (g_steal_pointer (&it->obj));
  if (srcpad && event) {
    /* a refused event is not a flow error of the packets */
    gst_pad_push_event (srcpad, g_steal_pointer (&event));
  } else if (srcpad && it && it->result == GSRTP_OK) {
    ret = gst_pad_push (srcpad, GST_BUFFER_CAST (g_steal_pointer (&it->obj)));
    g_atomic_int_set (&pair->last_ret, ret);
  }
  if (srcpad) {
    gst_object_unref (srcpad);
    enc_pair_unref (pair);
  }
  gst_clear_event (&event);
  if (it)
    enc_item_free (it);
  return ret;
}

static const GstGpuStreamSchedClientCallbacks enc_sched_callbacks = {
  enc_sched_output, enc_item_free
};

/* Hands one packet to the scheduler; a full batch (a burst beyond what the
 * batch has grown to) waits for the next cycle instead of dropping. Takes
 * it. FALSE when the pair is flushing, released or the scheduler stopped. */
/* The stream the pair's next item goes to (the streaming thread): the
 * link's, or, for an RTCP pad before PLAYING or without its RTP pad, its
 * own. Set before the pad is added, cleared after it is deactivated: no
 * lock needed to read them. */
static GstGpuStreamSchedClientStream *
enc_pair_stream (GstGpuSrtpEnc * self, EncPair * pair)
{
  GstGpuStreamSchedClientStream *shared =
      g_atomic_pointer_get (&pair->sched_stream);
  GstGpuStreamSchedClientStream *solo, *use;
  gboolean behind_rtp;

  if (!pair->is_rtcp)
    return shared;
  solo = g_atomic_pointer_get (&pair->solo_stream);
  GST_OBJECT_LOCK (self);
  behind_rtp = GST_STATE (self) == GST_STATE_PLAYING && pair->link->rtp;
  GST_OBJECT_UNLOCK (self);
  use = (behind_rtp && shared) || !solo ? shared : solo;
  /* RTCP keeps its own order across the switch: what went through its own
   * stream leaves before what follows the RTP */
  if (use != pair->last_stream_used && pair->last_stream_used == solo && solo)
    gst_gpustream_sched_client_wait (solo, 0);
  pair->last_stream_used = use;
  return use;
}

static gboolean
enc_sched_submit (GstGpuSrtpEnc * self, EncPair * pair, EncItem * it)
{
  GstGpuStreamSchedClientStream *stream = enc_pair_stream (self, pair);

  if (!stream) {
    enc_item_free (it);
    return FALSE;
  }
  return gst_gpustream_sched_client_push (stream, it, it->len) !=
      GST_FLOW_FLUSHING;
}

/* Caps (and events) toward the pair's source pad: straight out, or through
 * the scheduler behind the packets already batched. */
static void
enc_push_event (GstGpuSrtpEnc * self, EncPair * pair, GstPad * srcpad,
    GstEvent * event)
{
  GstGpuStreamSchedClientStream *stream = self->scheduled ?
      enc_pair_stream (self, pair) : NULL;

  EncItem *it;

  if (!stream) {
    gst_pad_push_event (srcpad, event);
    return;
  }
  /* an item, not the client's bare event: the stream is the pair's link's,
   * and the forwarder must know which of its two pads the event is for */
  it = g_new0 (EncItem, 1);
  it->obj = GST_MINI_OBJECT_CAST (event);
  it->is_rtcp = pair->is_rtcp;
  gst_gpustream_sched_client_push (stream, it, 0);
}

/* Drops the input: the list, whose buffers were borrowed, or the buffers. */
static void
enc_release_input (GstBuffer ** in, guint n, GstBufferList * list)
{
  guint i;

  if (list) {
    gst_buffer_list_unref (list);
    return;
  }
  for (i = 0; i < n; i++)
    if (in[i])                  /* NULL: taken (protected in place) */
      gst_buffer_unref (in[i]);
}

/* Protects n buffers of one pad. Direct mode: one batch now, pushed as a
 * list when list and output-lists. Scheduled mode: into the scheduler.
 * Takes list (in[] are its buffers, borrowed), or else the buffers. */
static GstFlowReturn
enc_process (GstGpuSrtpEnc * self, EncPair * pair, GstBuffer ** in, guint n,
    GstBufferList * list)
{
  EncSettings set;
  EncItem *stack_ptrs[ENC_STACK], stack_slots[ENC_STACK];
  EncItem **items, *slots = NULL;
  guint i, k;
  GstFlowReturn ret = g_atomic_int_get (&pair->last_ret);
  GstPad *srcpad;

  if (ret != GST_FLOW_OK && ret != GST_FLOW_NOT_LINKED) {
    /* like queue: a downstream error comes back to the producer */
    enc_release_input (in, n, list);
    return ret;
  }
  if (!enc_settings_get (self, &set)) {
    enc_release_input (in, n, list);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (g_atomic_int_get (&self->hard_limit)) {
    if ((guint) g_atomic_int_get (&self->hard_limit_gen) == set.gen) {
      enc_settings_clear (&set);
      enc_release_input (in, n, list);
      return GST_FLOW_ERROR;
    }
    /* a new key since: its contexts start their indexes again */
    GST_INFO_OBJECT (self, "new key after the key usage limit: sending again");
    g_atomic_int_set (&self->hard_limit, FALSE);
  }
  enc_ensure_caps (self, pair, &set);
  /* direct mode: the items live in this call (on the stack up to a list
   * of ENC_STACK), not one allocation each */
  items = n <= ENC_STACK ? stack_ptrs : g_new (EncItem *, n);
  if (!self->scheduled)
    slots = n <= ENC_STACK ? stack_slots : g_new (EncItem, n);
  k = enc_prepare (self, pair, &set, in, n, list == NULL, items, slots);
  enc_settings_clear (&set);
  enc_release_input (in, n, list);

  if (self->scheduled) {
    for (i = 0; i < k; i++)
      if (!enc_sched_submit (self, pair, items[i]))
        ret = GST_FLOW_FLUSHING;
    if (items != stack_ptrs)
      g_free (items);
    return ret == GST_FLOW_FLUSHING ? ret : g_atomic_int_get (&pair->last_ret);
  }

  ret = GST_FLOW_OK;
  if (k > 0 && enc_protect (self, items, k, self->gpu.resolved,
          self->gpu.cuda_context)) {
    ret = GST_FLOW_ERROR;
    goto done;
  }

  GST_OBJECT_LOCK (self);
  srcpad = pair->srcpad ? gst_object_ref (pair->srcpad) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (list && set.output_lists) {
    GstBufferList *out = gst_buffer_list_new_sized (MAX (k, 1));
    for (i = 0; i < k; i++)
      if (items[i]->result == GSRTP_OK) {
        gst_buffer_list_add (out, GST_BUFFER_CAST (items[i]->obj));
        items[i]->obj = NULL;
      }
    if (srcpad && gst_buffer_list_length (out) > 0)
      ret = gst_pad_push_list (srcpad, out);
    else
      gst_buffer_list_unref (out);
  } else {
    for (i = 0; i < k; i++) {
      if (items[i]->result != GSRTP_OK)
        continue;
      if (srcpad && ret == GST_FLOW_OK) {
        ret = gst_pad_push (srcpad, GST_BUFFER_CAST (items[i]->obj));
        items[i]->obj = NULL;
      }
    }
  }
  if (srcpad)
    gst_object_unref (srcpad);
  g_atomic_int_set (&pair->last_ret, ret);

done:
  for (i = 0; i < k; i++)
    enc_item_free (items[i]);
  if (items != stack_ptrs)
    g_free (items);
  if (slots != stack_slots)
    g_free (slots);
  return ret;
}

static GstFlowReturn
gst_gpu_srtp_enc_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  EncPair *pair = gst_pad_get_element_private (pad);
  GstFlowReturn ret = enc_process (GST_GPU_SRTP_ENC (parent), pair, &buf, 1, NULL);

  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (parent),
      &GST_GPU_SRTP_ENC (parent)->gpu);
  return ret;
}

static GstFlowReturn
gst_gpu_srtp_enc_chain_list (GstPad * pad, GstObject * parent,
    GstBufferList * list)
{
  EncPair *pair = gst_pad_get_element_private (pad);
  guint i, n = gst_buffer_list_length (list);
  GstBuffer *stack_bufs[ENC_STACK];
  GstBuffer **bufs = n <= ENC_STACK ? stack_bufs : g_new (GstBuffer *, n);
  GstFlowReturn ret;

  /* borrowed: the list holds them until enc_process has copied them */
  for (i = 0; i < n; i++)
    bufs[i] = gst_buffer_list_get (list, i);
  ret = enc_process (GST_GPU_SRTP_ENC (parent), pair, bufs, n, list);
  if (bufs != stack_bufs)
    g_free (bufs);
  gst_gpustream_gpu_check_fallbacks (GST_ELEMENT (parent),
      &GST_GPU_SRTP_ENC (parent)->gpu);
  return ret;
}

/* The scheduler stream a flush on the pair's sink pad flushes: the link's
 * from the RTP pad, its own from an RTCP pad (RTCP flushing must not drop
 * the RTP packets in flight). */
static GstGpuStreamSchedClientStream *
enc_pair_flushed_stream (GstGpuSrtpEnc * self, EncPair * pair)
{
  GstGpuStreamSchedClientStream *stream;

  GST_OBJECT_LOCK (self);
  stream = pair->is_rtcp ? pair->solo_stream : pair->sched_stream;
  GST_OBJECT_UNLOCK (self);
  return stream;
}

static gboolean
gst_gpu_srtp_enc_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (parent);
  EncPair *pair = gst_pad_get_element_private (pad);
  GstPad *srcpad;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      EncSettings set;

      gst_event_parse_caps (event, &caps);
      if (gst_caps_get_size (caps) > 0) {
        const GstStructure *st = gst_caps_get_structure (caps, 0);

        pair->have_caps_roc = gst_structure_get_uint (st, "roc",
            &pair->caps_roc);
        pair->have_caps_ssrc = gst_structure_get_uint (st, "ssrc",
            &pair->caps_ssrc);
      }
      GST_OBJECT_LOCK (self);
      gst_caps_replace (&pair->sink_caps, caps);
      g_atomic_int_set (&pair->caps_gen, G_MAXUINT);
      GST_OBJECT_UNLOCK (self);
      gst_event_unref (event);
      /* with no key yet the caps go out with the first buffer (or the
       * error) */
      if (enc_settings_get (self, &set)) {
        enc_ensure_caps (self, pair, &set);
        enc_settings_clear (&set);
      }
      return TRUE;
    }
    case GST_EVENT_FLUSH_START:{
      GstGpuStreamSchedClientStream *stream;

      g_atomic_int_set (&pair->last_ret, GST_FLOW_FLUSHING);
      stream = enc_pair_flushed_stream (self, pair);
      if (stream)
        gst_gpustream_sched_client_flush_start (stream);
      return gst_pad_event_default (pad, parent, event);
    }
    case GST_EVENT_FLUSH_STOP:{
      GstGpuStreamSchedClientStream *stream;

      stream = enc_pair_flushed_stream (self, pair);
      if (stream)
        gst_gpustream_sched_client_flush_stop (stream);
      g_atomic_int_set (&pair->last_ret, GST_FLOW_OK);
      return gst_pad_event_default (pad, parent, event);
    }
    default:
      break;
  }
  if (!self->scheduled || !GST_EVENT_IS_SERIALIZED (event))
    return gst_pad_event_default (pad, parent, event);
  GST_OBJECT_LOCK (self);
  srcpad = pair->srcpad ? gst_object_ref (pair->srcpad) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (!srcpad) {
    gst_event_unref (event);
    return FALSE;
  }
  enc_push_event (self, pair, srcpad, event);
  gst_object_unref (srcpad);
  return TRUE;
}

/* A sink pad's CAPS query, as srtpenc answers it: what downstream of the
 * pair's source pad takes (asked with the filter renamed x-srtp / x-srtcp),
 * within the source template, renamed x-rtp / x-rtcp without the key and
 * policy fields. Like srtpenc's, not intersected with the filter again. */
static GstCaps *
enc_sink_query_caps (GstGpuSrtpEnc * self, EncPair * pair, GstPad * pad,
    GstCaps * filter)
{
  GstCaps *srtp_filter = NULL, *down, *tmpl, *res;
  GstPad *srcpad;
  guint i;

  GST_OBJECT_LOCK (self);
  srcpad = pair && pair->srcpad ? gst_object_ref (pair->srcpad) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (!srcpad)
    return gst_pad_get_pad_template_caps (pad);
  if (filter) {
    srtp_filter = gst_caps_copy (filter);
    for (i = 0; i < gst_caps_get_size (srtp_filter); i++)
      gst_structure_set_name (gst_caps_get_structure (srtp_filter, i),
          pair->is_rtcp ? "application/x-srtcp" : "application/x-srtp");
  }
  /* without a peer: ANY (or the filter), then the template */
  down = gst_pad_peer_query_caps (srcpad, srtp_filter);
  tmpl = gst_pad_get_pad_template_caps (srcpad);
  res = gst_caps_intersect_full (down, tmpl, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (down);
  gst_caps_unref (tmpl);
  /* (a copy without srtp-key, mki, srtp-keyN, mkiN) */
  down = gst_gpu_srtp_caps_for_log (res);
  gst_caps_unref (res);
  res = down;
  for (i = 0; i < gst_caps_get_size (res); i++) {
    GstStructure *st = gst_caps_get_structure (res, i);

    gst_structure_set_name (st, pair->is_rtcp ? "application/x-rtcp" :
        "application/x-rtp");
    gst_structure_remove_fields (st, "srtp-cipher", "srtp-auth",
        "srtcp-cipher", "srtcp-auth", NULL);
  }
  gst_clear_caps (&srtp_filter);
  gst_object_unref (srcpad);
  return res;
}

static gboolean
gst_gpu_srtp_enc_sink_query (GstPad * pad, GstObject * parent,
    GstQuery * query)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (parent);

  /* ACCEPT_CAPS is GStreamer's default, as in srtpenc: caps that are a
   * subset of the CAPS answer */
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *res;

      gst_query_parse_caps (query, &filter);
      res = enc_sink_query_caps (self, gst_pad_get_element_private (pad),
          pad, filter);
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

static gboolean
gst_gpu_srtp_enc_src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (parent);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_LATENCY:
      /* scheduled: a packet leaves within three cycles */
      return gst_gpustream_sched_client_query_latency (self->sched, pad,
          parent, query, 0);
      /* CAPS and ACCEPT_CAPS are GStreamer's default, as in srtpenc: the
       * template within the filter, and caps that are a subset of it */
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

/* Scheduled mode: every pair is a stream of the scheduler, never policed:
 * the element's max-rate stands for all of them in the device's
 * admission. */
#define ENC_SCHED_MAX_PACKET 65536

static GstGpuStreamSchedClientStream *
enc_sched_new_stream (GstGpuSrtpEnc * self, EncLink * link)
{
  GstGpuStreamSchedClientStream *stream;
  GError *err = NULL;

  stream = gst_gpustream_sched_client_add_stream (self->sched,
      ENC_SCHED_MAX_PACKET, enc_link_ref (link), enc_link_unref, &err);
  if (!stream) {
    /* streams are not refused one by one: only a stopped client gets here */
    GST_ERROR_OBJECT (self, "scheduler refused a pad: %s", err->message);
    g_clear_error (&err);
    enc_link_unref (link);
  }
  return stream;
}

static void
enc_sched_add_pair (GstGpuSrtpEnc * self, EncPair * pair)
{
  GstGpuStreamSchedClientStream *stream = NULL, *solo = NULL;
  EncLink *link = pair->link;

  GST_OBJECT_LOCK (self);
  if (pair->sched_stream) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  stream = link->stream;
  GST_OBJECT_UNLOCK (self);

  /* requests and state changes come from one thread at a time */
  if (!stream && !(stream = enc_sched_new_stream (self, link)))
    return;
  if (pair->is_rtcp)
    solo = enc_sched_new_stream (self, link);
  GST_OBJECT_LOCK (self);
  link->stream = stream;
  link->n_scheduled++;
  g_atomic_pointer_set (&pair->sched_stream, stream);
  g_atomic_pointer_set (&pair->solo_stream, solo);
  pair->last_stream_used = NULL;
  GST_OBJECT_UNLOCK (self);
}

/* The link's stream leaves with the last of its two pads (its packets still
 * in flight are dropped); until then the other pad's go on. */
static void
enc_sched_remove_pair (GstGpuSrtpEnc * self, EncPair * pair)
{
  GstGpuStreamSchedClientStream *stream = NULL, *solo;
  EncLink *link = pair->link;

  GST_OBJECT_LOCK (self);
  if (pair->sched_stream) {
    g_atomic_pointer_set (&pair->sched_stream, NULL);
    if (--link->n_scheduled == 0)
      stream = g_steal_pointer (&link->stream);
  }
  solo = g_steal_pointer (&pair->solo_stream);
  GST_OBJECT_UNLOCK (self);
  if (stream)
    gst_gpustream_sched_client_remove_stream (self->sched, stream);
  if (solo)
    gst_gpustream_sched_client_remove_stream (self->sched, solo);
}

/* READY to PAUSED: with cycle > 0, the pads' packets are protected in
 * batches of one cycle (a packet leaves within 3 cycles, the bound of the
 * GPU-centric model of Zhang et al., 2015), one forwarder per pad (up to
 * 16) so that a sink blocking on one pad (prerolling) does not hold the
 * others. */
static gboolean
enc_sched_start (GstGpuSrtpEnc * self)
{
  GstClockTime cycle;
  GList *l;
  guint n_pads;
  guint64 rate;

  GST_OBJECT_LOCK (self);
  cycle = self->cycle;
  rate = self->max_rate;
  n_pads = GST_ELEMENT (self)->numsinkpads;
  GST_OBJECT_UNLOCK (self);
  self->scheduled = FALSE;
  gst_gpustream_sched_client_set_rate (self->sched, rate, "max-rate");
  if (!gst_gpustream_sched_client_start (self->sched, cycle,
          CLAMP (n_pads, 1, 16), self->gpu.resolved, self->gpu.cuda_context))
    return FALSE;
  if (cycle == 0)
    return TRUE;
  self->scheduled = TRUE;

  GST_OBJECT_LOCK (self);
  for (l = GST_ELEMENT (self)->sinkpads; l; l = l->next) {
    EncPair *pair = gst_pad_get_element_private (l->data);
    if (pair && !pair->sched_stream) {
      GST_OBJECT_UNLOCK (self);
      enc_sched_add_pair (self, pair);
      GST_OBJECT_LOCK (self);
    }
  }
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

/* PAUSED to READY, the pads inactive: packets in flight are dropped. */
static void
enc_sched_stop (GstGpuSrtpEnc * self)
{
  GList *l, *pairs = NULL;

  if (!self->scheduled)
    return;
  gst_gpustream_sched_client_stop (self->sched);
  GST_OBJECT_LOCK (self);
  for (l = GST_ELEMENT (self)->sinkpads; l; l = l->next) {
    EncPair *pair = gst_pad_get_element_private (l->data);
    if (pair)
      pairs = g_list_prepend (pairs, enc_pair_ref (pair));
  }
  GST_OBJECT_UNLOCK (self);
  for (l = pairs; l; l = l->next)
    enc_sched_remove_pair (self, l->data);
  g_list_free_full (pairs, enc_pair_unref);
  self->scheduled = FALSE;
}

static GstPad *
gst_gpu_srtp_enc_request_new_pad (GstElement * element, GstPadTemplate * templ,
    const gchar * name, const GstCaps * caps)
{
  GstGpuSrtpEnc *self = GST_GPU_SRTP_ENC (element);
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
  pair->element = element;
  GST_OBJECT_LOCK (element);
  pair->link = g_hash_table_lookup (self->links, GUINT_TO_POINTER (index));
  if (!pair->link) {
    pair->link = g_new0 (EncLink, 1);
    pair->link->refcount = 1;
    pair->link->index = index;
    pair->link->element = element;
    g_hash_table_insert (self->links, GUINT_TO_POINTER (index), pair->link);
  }
  enc_link_ref (pair->link);
  if (is_rtcp)
    pair->link->rtcp = pair;
  else
    pair->link->rtp = pair;
  GST_OBJECT_UNLOCK (element);
  pair->last_ret = GST_FLOW_OK;
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

  /* a pad requested while playing joins the running scheduler */
  if (GST_GPU_SRTP_ENC (element)->scheduled)
    enc_sched_add_pair (GST_GPU_SRTP_ENC (element), pair);

  /* add_pad activates the pads when the element is running */
  gst_element_add_pad (element, pair->srcpad);
  gst_element_add_pad (element, pair->sinkpad);
  return pair->sinkpad;
}

static void
gst_gpu_srtp_enc_release_pad (GstElement * element, GstPad * pad)
{
  EncPair *pair = enc_pair_ref (gst_pad_get_element_private (pad));
  GstPad *sinkpad, *srcpad;

  GST_OBJECT_LOCK (element);
  sinkpad = pair->sinkpad;
  srcpad = pair->srcpad;
  pair->sinkpad = pair->srcpad = NULL;
  if (pair->is_rtcp)
    pair->link->rtcp = NULL;
  else
    pair->link->rtp = NULL;
  if (!pair->link->rtp && !pair->link->rtcp)
    g_hash_table_remove (GST_GPU_SRTP_ENC (element)->links,
        GUINT_TO_POINTER (pair->link->index));
  GST_OBJECT_UNLOCK (element);

  if (srcpad) {
    gst_pad_set_active (srcpad, FALSE);
    gst_element_remove_pad (element, srcpad);
  }
  if (sinkpad) {
    gst_pad_set_active (sinkpad, FALSE);
    gst_element_remove_pad (element, sinkpad);
  }
  /* no streaming thread is in the pair any more: its packets still in the
   * scheduler are dropped */
  enc_sched_remove_pair (GST_GPU_SRTP_ENC (element), pair);
  enc_pair_unref (pair);
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

    gst_gpu_srtp_stats_add_stream (&streams, es->ssrc, es->ctx.roc, NULL);
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
      "gpu-batches", G_TYPE_UINT64, self->st_gpu_batches,
      "backend", G_TYPE_STRING, gst_gpustream_backend_nick (self->gpu.resolved),
      NULL);
  g_mutex_unlock (&self->lock);
  gst_structure_take_value (s, "streams", &streams);

  /* scheduled mode: how long packets waited, against 3 cycles */
  gst_gpustream_sched_client_get_stats (self->sched, s);
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
      self->streams_epoch++;
      self->streams_gen = G_MAXUINT;
      self->st_packets_in = self->st_packets_out = 0;
      self->st_bytes_in = self->st_bytes_out = 0;
      self->st_dropped = self->st_repeated = self->st_bad = 0;
      self->st_batches = self->st_gpu_batches = 0;
      self->last_warn = 0;
      g_mutex_unlock (&self->lock);
      g_atomic_int_set (&self->hard_limit, FALSE);
      if (!enc_sched_start (self))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* a streaming thread waiting for the scheduler lets the pads go */
      gst_gpustream_sched_client_unblock (self->sched);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      /* pads are inactive: no streaming thread left. Keys wiped on free. */
      enc_sched_stop (self);
      g_mutex_lock (&self->lock);
      g_hash_table_remove_all (self->streams);
      self->streams_epoch++;
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
    case PROP_MKI:
      gst_clear_buffer (&self->mki);
      self->mki = g_value_dup_boxed (value);
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
    case PROP_CYCLE:
      self->cycle = g_value_get_uint64 (value);
      break;
    case PROP_MAX_LATENCY:
      /* the deprecated name: a packet leaves within 3 cycles */
      self->cycle = g_value_get_uint64 (value) / 3;
      break;
    case PROP_MAX_RATE:
      self->max_rate = g_value_get_uint64 (value);
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
    case PROP_MKI:
      g_value_set_boxed (value, self->mki);
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
    case PROP_CYCLE:
      g_value_set_uint64 (value, self->cycle);
      break;
    case PROP_MAX_LATENCY:
      g_value_set_uint64 (value, 3 * self->cycle);
      break;
    case PROP_MAX_RATE:
      g_value_set_uint64 (value, self->max_rate);
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

  g_clear_pointer (&self->sched, gst_gpustream_sched_client_free);
  g_clear_pointer (&self->streams, g_hash_table_unref);
  g_clear_pointer (&self->links, g_hash_table_unref);
  gst_clear_buffer (&self->key);
  gst_clear_buffer (&self->mki);
  g_mutex_clear (&self->protect_lock);
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
  g_object_class_install_property (gobject_class, PROP_MKI,
      g_param_spec_boxed ("mki", "MKI",
          "Master Key Identifier (NULL means no MKI), 1 to 128 bytes, sent in "
          "every packet and in the caps (mki) as srtpenc does; a change starts "
          "new contexts like a key change",
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
  g_object_class_install_property (gobject_class, PROP_CYCLE,
      g_param_spec_uint64 ("cycle", "Cycle",
          "0: each buffer (or list) is protected as it arrives. Otherwise the "
          "packets of all pads are gathered and protected as one batch (one "
          "GPU launch) every cycle ns, and leave within 3 cycles (the "
          "real-time scheduler of Kai Zhang, Jiayu Hu, Bei Hua, \"A holistic "
          "approach to build real-time stream processing system with GPU\", "
          "2015; at least 100000)", 0, G_MAXUINT64, DEFAULT_CYCLE, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_LATENCY,
      g_param_spec_uint64 ("max-latency", "Max latency",
          "Deprecated: use cycle. Setting max-latency sets cycle to "
          "max-latency / 3; reading it gives 3 x cycle", 0, G_MAXUINT64,
          3 * DEFAULT_CYCLE, flags | G_PARAM_DEPRECATED));
  g_object_class_install_property (gobject_class, PROP_MAX_RATE,
      g_param_spec_uint64 ("max-rate", "Max rate",
          "With cycle > 0: the most bytes per second of all pads together, "
          "counted by the device's admission like an rtgpuqueue stream; "
          "start fails when it does not fit beside what the device has "
          "admitted (0 = no rate: a warning, and an rtgpuqueue with "
          "admission on and a capacity on the same device refuses its "
          "streams meanwhile)", 0, G_MAXUINT64, DEFAULT_MAX_RATE, flags));
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
          "batches, gpu-batches, backend; with cycle > 0: scheduled-batches, "
          "latency-p99-us, latency-max-us (upper bounds, worst pad) and "
          "latency-misses (packets held longer than 3 cycles)",
          GST_TYPE_STRUCTURE,
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
  /* here, not in class_init: that runs while our plugin loads */
  gst_gpu_srtp_publish_srtpenc_types ();
  gst_gpustream_gpu_init (&self->gpu);
  g_mutex_init (&self->lock);
  g_mutex_init (&self->protect_lock);
  self->sched = gst_gpustream_sched_client_new (GST_ELEMENT (self),
      &enc_sched_processor, self, &enc_sched_callbacks, NULL);
  self->rtp_cipher = self->rtcp_cipher = DEFAULT_CIPHER;
  self->rtp_auth = self->rtcp_auth = DEFAULT_AUTH;
  self->random_key = DEFAULT_RANDOM_KEY;
  self->replay_window = GST_GPU_SRTP_DEFAULT_WINDOW;
  self->allow_repeat_tx = DEFAULT_ALLOW_REPEAT_TX;
  self->cycle = DEFAULT_CYCLE;
  self->max_rate = DEFAULT_MAX_RATE;
  self->output_lists = DEFAULT_OUTPUT_LISTS;
  self->streams = g_hash_table_new_full (NULL, NULL, NULL, enc_stream_unref);
  self->streams_gen = G_MAXUINT;
  self->valid_gen = G_MAXUINT;
  self->links = g_hash_table_new_full (NULL, NULL, NULL, enc_link_unref);
}
