/* gpusrtpenc / gpusrtpdec: interop with srtpenc / srtpdec in real pipelines,
 * byte identity with srtpenc, negative cases, key hygiene in the logs. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <srtp/srtp_kernels.h>

static const guint8 key46[46] = {
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
  0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
  0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d
};

static const gchar *ciphers[] = { "null", "aes-128-icm", "aes-256-icm",
  "aes-128-gcm", "aes-256-gcm"
};
static const gchar *auths[] = { "null", "hmac-sha1-32", "hmac-sha1-80" };
/* gpusrtpenc's two modes, for the loop tests (__i__): each buffer protected
 * as it comes, and every pad batched through the scheduler (1 ms cycles) */
static const gchar *enc_modes[] = { "", "max-latency=3000000" };

static gsize
key_len_for (guint cipher)
{
  return gsrtp_master_key_len ((GsSrtpCipher) cipher) +
      gsrtp_master_salt_len ((GsSrtpCipher) cipher);
}

static gchar *
key_hex (const guint8 * key, gsize len)
{
  GString *s = g_string_new (NULL);
  gsize i;

  for (i = 0; i < len; i++)
    g_string_append_printf (s, "%02x", key[i]);
  return g_string_free (s, FALSE);
}

/* ---- running pipelines ---- */

typedef struct
{
  GMutex lock;
  GPtrArray *bytes;             /* GBytes of every buffer */
  GstCaps *caps;                /* last caps seen */
  gint arrived;                 /* buffers at the sink pad, preroll included */
} Collected;

static GstPadProbeReturn
count_arrival (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Collected *c = user_data;

  g_atomic_int_inc (&c->arrived);
  return GST_PAD_PROBE_OK;
}

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user_data)
{
  Collected *c = user_data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_READ);
  g_mutex_lock (&c->lock);
  g_ptr_array_add (c->bytes, g_bytes_new (map.data, map.size));
  gst_caps_replace (&c->caps, gst_sample_get_caps (sample));
  g_mutex_unlock (&c->lock);
  gst_buffer_unmap (buf, &map);
  gst_sample_unref (sample);
  return GST_FLOW_OK;
}

static Collected *
collected_new (void)
{
  Collected *c = g_new0 (Collected, 1);
  g_mutex_init (&c->lock);
  c->bytes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  return c;
}

static void
collected_free (Collected * c)
{
  g_ptr_array_unref (c->bytes);
  gst_clear_caps (&c->caps);
  g_mutex_clear (&c->lock);
  g_free (c);
}

typedef struct
{
  const gchar *name;
  GstCaps *caps;
  GPtrArray *packets;           /* GBytes */
  gboolean as_list;             /* push everything as one list */
  guint wait_sink;              /* n > 0: first wait until sink n - 1 got a
                                 * buffer */
} Feed;

/* Takes the probe and the callbacks run_pipeline put on the sinks, which
 * point into the Collected of this run: the next run of the same pipeline
 * must not count into a freed one. */
static void
release_sinks (GstElement * pipe, const gchar ** sinks, gulong * probes,
    guint n_sinks)
{
  guint i;

  for (i = 0; i < n_sinks; i++) {
    GstElement *s = gst_bin_get_by_name (GST_BIN (pipe), sinks[i]);
    GstPad *sp = gst_element_get_static_pad (s, "sink");
    GstAppSinkCallbacks none = { NULL, NULL, NULL };

    gst_pad_remove_probe (sp, probes[i]);
    gst_app_sink_set_callbacks (GST_APP_SINK (s), &none, NULL, NULL);
    gst_object_unref (sp);
    gst_object_unref (s);
  }
}

/* Feeds packets into the named appsrcs, collects every named appsink
 * (sync=false), waits for EOS; there, before the pipeline stops (which ends
 * the streams), takes the `stats` of the n_stats elements named in
 * stats_of into stats[] (left NULL on error). Returns FALSE on an error
 * message. */
static gboolean
run_pipeline_stats (GstElement * pipe, Feed * feeds, guint n_feeds,
    const gchar ** sinks, Collected ** out, guint n_sinks,
    const gchar ** stats_of, GstStructure ** stats, guint n_stats)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;
  gulong *probes = g_new0 (gulong, MAX (n_sinks, 1));
  gboolean ok;
  guint i, j;

  for (i = 0; i < n_stats; i++)
    stats[i] = NULL;
  for (i = 0; i < n_sinks; i++) {
    GstElement *s = gst_bin_get_by_name (GST_BIN (pipe), sinks[i]);
    GstAppSinkCallbacks cb = { NULL, NULL, on_sample };
    fail_unless (s != NULL, "no sink %s", sinks[i]);
    out[i] = collected_new ();
    g_object_set (s, "sync", FALSE, "emit-signals", FALSE, NULL);
    gst_app_sink_set_callbacks (GST_APP_SINK (s), &cb, out[i], NULL);
    {
      GstPad *sp = gst_element_get_static_pad (s, "sink");
      probes[i] = gst_pad_add_probe (sp, GST_PAD_PROBE_TYPE_BUFFER |
          GST_PAD_PROBE_TYPE_BUFFER_LIST, count_arrival, out[i], NULL);
      gst_object_unref (sp);
    }
    gst_object_unref (s);
  }
  if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    gst_element_set_state (pipe, GST_STATE_NULL);
    release_sinks (pipe, sinks, probes, n_sinks);
    g_free (probes);
    gst_object_unref (bus);
    return FALSE;
  }
  for (i = 0; i < n_feeds; i++) {
    GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), feeds[i].name);
    GstBufferList *list = gst_buffer_list_new ();

    if (feeds[i].wait_sink > 0) {
      /* at the sink pad, not collected: the sink holds its first buffer in
       * preroll until every sink has one */
      Collected *c = out[feeds[i].wait_sink - 1];
      gint64 end = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;

      while (g_atomic_int_get (&c->arrived) == 0 &&
          g_get_monotonic_time () < end)
        g_usleep (1000);
      fail_unless (g_atomic_int_get (&c->arrived) > 0,
          "nothing reached sink %s in 10 s", sinks[feeds[i].wait_sink - 1]);
    }

    fail_unless (src != NULL, "no appsrc %s", feeds[i].name);
    g_object_set (src, "caps", feeds[i].caps, "format", GST_FORMAT_TIME,
        NULL);
    for (j = 0; j < feeds[i].packets->len; j++) {
      gsize sz;
      const guint8 *d = g_bytes_get_data (feeds[i].packets->pdata[j], &sz);
      GstBuffer *b = gst_buffer_new_memdup (d, sz);
      GST_BUFFER_PTS (b) = j * GST_MSECOND;
      if (feeds[i].as_list) {
        gst_buffer_list_add (list, b);
      } else {
        gst_app_src_push_buffer (GST_APP_SRC (src), b);
      }
    }
    if (feeds[i].as_list)
      gst_app_src_push_buffer_list (GST_APP_SRC (src), list);
    else
      gst_buffer_list_unref (list);
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    gst_object_unref (src);
  }
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg && !ok) {
    GError *err = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    GST_INFO ("pipeline error: %s (%s)", err->message, dbg);
    g_clear_error (&err);
    g_free (dbg);
  }
  fail_unless (msg != NULL, "pipeline timed out");
  gst_message_unref (msg);
  for (i = 0; ok && i < n_stats; i++) {
    GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), stats_of[i]);

    fail_unless (e != NULL, "no element %s", stats_of[i]);
    g_object_get (e, "stats", &stats[i], NULL);
    gst_object_unref (e);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  release_sinks (pipe, sinks, probes, n_sinks);
  g_free (probes);
  gst_object_unref (bus);
  return ok;
}

static gboolean
run_pipeline (GstElement * pipe, Feed * feeds, guint n_feeds,
    const gchar ** sinks, Collected ** out, guint n_sinks)
{
  return run_pipeline_stats (pipe, feeds, n_feeds, sinks, out, n_sinks, NULL,
      NULL, 0);
}

static GstElement *
parse (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL && err == NULL, "parse '%s': %s", desc,
      err ? err->message : "?");
  return p;
}

/* Real RTP from a payloader: packets and the payloader's caps. */
static GPtrArray *
make_rtp (const gchar * src_pay, GstCaps ** caps)
{
  gchar *desc = g_strdup_printf ("%s ! appsink name=s", src_pay);
  GstElement *p = parse (desc);
  const gchar *sinks[] = { "s" };
  Collected *c;
  GPtrArray *res;

  fail_unless (run_pipeline (p, NULL, 0, sinks, &c, 1));
  gst_object_unref (p);
  g_free (desc);
  res = g_ptr_array_ref (c->bytes);
  *caps = gst_caps_ref (c->caps);
  collected_free (c);
  fail_unless (res->len > 0);
  return res;
}

static GPtrArray *
make_audio_rtp (guint32 ssrc, guint seq, guint n, GstCaps ** caps)
{
  gchar *d = g_strdup_printf ("audiotestsrc num-buffers=%u samplesperbuffer=160"
      " ! audio/x-raw,rate=8000,channels=1 ! rtpL16pay ssrc=%u seqnum-offset=%u"
      " timestamp-offset=1000", n, ssrc, seq);
  GPtrArray *r = make_rtp (d, caps);
  g_free (d);
  return r;
}

/* A sender report of ssrc (28 bytes), n different ones. */
static GPtrArray *
make_rtcp (guint32 ssrc, guint n)
{
  GPtrArray *a = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  guint i;

  for (i = 0; i < n; i++) {
    guint8 p[28] = { 0x80, 200, 0, 6 };
    GST_WRITE_UINT32_BE (p + 4, ssrc);
    GST_WRITE_UINT32_BE (p + 8, 0x83aa7e80 + i);
    GST_WRITE_UINT32_BE (p + 16, 1000 + 160 * i);
    GST_WRITE_UINT32_BE (p + 20, i);
    GST_WRITE_UINT32_BE (p + 24, 320 * i);
    g_ptr_array_add (a, g_bytes_new (p, sizeof p));
  }
  return a;
}

static void
assert_same (GPtrArray * a, GPtrArray * b, const gchar * what)
{
  guint i;

  fail_unless_equals_int_hex (a->len, b->len);
  for (i = 0; i < a->len; i++)
    fail_unless (g_bytes_equal (a->pdata[i], b->pdata[i]),
        "%s: packet %u differs", what, i);
}

/* srtpenc and gpusrtpenc (in mode) with the same policy string pol, fed
 * the same RTP and RTCP through tees: out[] gets srtpenc's RTP, ours, then
 * srtpenc's RTCP, ours. FALSE when the pipeline failed (srtpenc refuses). */
static gboolean
run_beside_srtpenc (const gchar * pol, const gchar * mode, GstCaps * caps,
    GPtrArray * rtp, GstCaps * rtcp_caps, GPtrArray * rtcp, Collected ** out)
{
  gchar *desc = g_strdup_printf ("appsrc name=r ! tee name=t "
      "appsrc name=c ! tee name=u "
      "srtpenc name=e1 %s gpusrtpenc name=e2 %s %s "
      "t. ! queue ! e1.rtp_sink_0  t. ! queue ! e2.rtp_sink_0 "
      "u. ! queue ! e1.rtcp_sink_0  u. ! queue ! e2.rtcp_sink_0 "
      "e1.rtp_src_0 ! appsink name=a1  e2.rtp_src_0 ! appsink name=a2 "
      "e1.rtcp_src_0 ! appsink name=c1  e2.rtcp_src_0 ! appsink name=c2",
      pol, pol, mode);
  GstElement *p = parse (desc);
  Feed feeds[] = { {"r", caps, rtp, FALSE}, {"c", rtcp_caps, rtcp, FALSE} };
  const gchar *sinks[] = { "a1", "a2", "c1", "c2" };
  gboolean ok = run_pipeline (p, feeds, 2, sinks, out, 4);

  gst_object_unref (p);
  g_free (desc);
  return ok;
}

/* ---- stats ---- */

static guint64
stat_u64 (GstStructure * s, const gchar * f)
{
  guint64 v = G_MAXUINT64;
  fail_unless (gst_structure_get_uint64 (s, f, &v), "no %s", f);
  return v;
}

/* srtpdec's stats as code written for srtpdec 1.22 reads them: guint
 * counters through gst_structure_get_uint, at the top and in each entry of
 * `streams`. */
typedef struct
{
  guint recv, drop;
  guint n_streams;
  guint ssrc[8], roc[8], stream_recv[8], stream_drop[8];
} DecStats;

static void
read_dec_stats (const GstStructure * s, DecStats * d, const gchar * who)
{
  const GValue *streams;
  guint i;

  memset (d, 0, sizeof *d);
  fail_unless (gst_structure_has_name (s, "application/x-srtp-decoder-stats"),
      "%s: stats named %s", who, gst_structure_get_name (s));
  fail_unless (gst_structure_get_uint (s, "recv-count", &d->recv),
      "%s: no guint recv-count", who);
  fail_unless (gst_structure_get_uint (s, "recv-drop-count", &d->drop),
      "%s: no guint recv-drop-count", who);
  streams = gst_structure_get_value (s, "streams");
  fail_unless (streams && GST_VALUE_HOLDS_ARRAY (streams), "%s: no streams",
      who);
  d->n_streams = gst_value_array_get_size (streams);
  fail_unless (d->n_streams <= G_N_ELEMENTS (d->ssrc));
  for (i = 0; i < d->n_streams; i++) {
    const GstStructure *e =
        gst_value_get_structure (gst_value_array_get_value (streams, i));

    fail_unless (gst_structure_has_name (e, "application/x-srtp-stream"));
    fail_unless (gst_structure_get_uint (e, "ssrc", &d->ssrc[i]) &&
        gst_structure_get_uint (e, "roc", &d->roc[i]) &&
        gst_structure_get_uint (e, "recv-count", &d->stream_recv[i]) &&
        gst_structure_get_uint (e, "recv-drop-count", &d->stream_drop[i]),
        "%s: stream %u lacks a guint ssrc / roc / recv-count / "
        "recv-drop-count", who, i);
  }
}

/* Every field of theirs (srtpenc's / srtpdec's stats), at the top and in
 * the entries of `streams`, is in ours with the same GType; same structure
 * names. Ours may have more. */
static void
assert_fields_like (const GstStructure * theirs, const GstStructure * ours,
    const gchar * what)
{
  guint i, n = gst_structure_n_fields (theirs);

  fail_unless_equals_string (gst_structure_get_name (ours),
      gst_structure_get_name (theirs));
  for (i = 0; i < n; i++) {
    const gchar *f = gst_structure_nth_field_name (theirs, i);
    const GValue *t = gst_structure_get_value (theirs, f);
    const GValue *o = gst_structure_get_value (ours, f);

    fail_unless (o != NULL, "%s: no field %s", what, f);
    fail_unless (G_VALUE_TYPE (o) == G_VALUE_TYPE (t),
        "%s: %s is %s, theirs %s", what, f, G_VALUE_TYPE_NAME (o),
        G_VALUE_TYPE_NAME (t));
    if (GST_VALUE_HOLDS_ARRAY (t) && gst_value_array_get_size (t) > 0) {
      fail_unless (gst_value_array_get_size (o) > 0, "%s: %s empty", what, f);
      assert_fields_like (gst_value_get_structure (gst_value_array_get_value
              (t, 0)), gst_value_get_structure (gst_value_array_get_value (o,
                  0)), what);
    }
  }
}

/* ---- tests ---- */

/* A tee into srtpenc and gpusrtpenc, RTP and RTCP, same key: same bytes,
 * for every cipher / auth combination srtpenc takes. */
GST_START_TEST (test_identical_to_srtpenc)
{
  GstCaps *caps, *rtcp_caps = gst_caps_new_empty_simple ("application/x-rtcp");
  GPtrArray *rtp = make_audio_rtp (0x1234abcd, 1000, 40, &caps);
  GPtrArray *rtcp = make_rtcp (0x1234abcd, 5);
  guint c, a, identical = 0, skipped = 0;

  for (c = 0; c < G_N_ELEMENTS (ciphers); c++) {
    for (a = 0; a < G_N_ELEMENTS (auths); a++) {
      gchar *hex = key_hex (key46, key_len_for (c));
      /* srtpenc wants RTCP authenticated whenever it is encrypted */
      const gchar *rtcp_auth = (a == 0 && c != 0 && c < 3) ? auths[2] :
          auths[a];
      gchar *pol = g_strdup_printf ("rtp-cipher=%s rtp-auth=%s rtcp-cipher=%s "
          "rtcp-auth=%s key=%s", ciphers[c], auths[a], ciphers[c], rtcp_auth,
          hex);
      Collected *out[4];

      if (!run_beside_srtpenc (pol, enc_modes[__i__], caps, rtp, rtcp_caps,
              rtcp, out) || out[0]->bytes->len == 0) {
        /* srtpenc refused this combination */
        g_print ("srtpenc does not take %s/%s\n", ciphers[c], auths[a]);
        skipped++;
      } else {
        assert_same (out[0]->bytes, out[1]->bytes, "rtp");
        fail_unless_equals_int (out[1]->bytes->len, rtp->len);
        assert_same (out[2]->bytes, out[3]->bytes, "rtcp");
        fail_unless_equals_int (out[3]->bytes->len, rtcp->len);
        identical++;
        GST_INFO ("%s/%s identical", ciphers[c], auths[a]);
      }
      for (guint i = 0; i < 4; i++)
        collected_free (out[i]);
      g_free (pol);
      g_free (hex);
    }
  }
  g_print ("srtp identical: %u combinations byte-identical to srtpenc, %u not "
      "taken by srtpenc\n", identical, skipped);
  /* srtpenc 1.22 takes: AES-CM 128/256 x {null, 32, 80} and GCM 128/256
   * with auth null; it refuses the null cipher ("Master key size is wrong")
   * and GCM with an HMAC auth (gpusrtpenc ignores the auth with GCM) */
  fail_unless (identical >= 8, "only %u identical", identical);
  g_ptr_array_unref (rtp);
  g_ptr_array_unref (rtcp);
  gst_caps_unref (caps);
  gst_caps_unref (rtcp_caps);
}

GST_END_TEST;

static GstCaps *
return_caps_cb (GstElement * dec, guint ssrc, gpointer user_data)
{
  return gst_caps_ref (user_data);
}

/* enc ! dec for every pairing, audio with a ROC wrap and RTCP. The decoder
 * also answers request-key: RTCP may reach it before the RTP caps that
 * carry the SSRC (two appsrc threads), and srtpdec only keys from caps with
 * an ssrc. */
static void
check_roundtrip_mki (const gchar * enc, const gchar * dec, guint seq,
    const gchar * cipher, const gchar * auth, const gchar * mki_hex)
{
  GstCaps *caps, *rtcp_caps = gst_caps_new_empty_simple ("application/x-rtcp");
  GPtrArray *rtp = make_audio_rtp (0x55667788, seq, 60, &caps);
  GPtrArray *rtcp = make_rtcp (0x55667788, 4);
  guint c;
  gchar *hex, *desc;
  GstElement *p;
  Collected *out[2];
  const gchar *sinks[] = { "a", "b" };
  /* RTCP only once RTP came through: srtpdec 1.22 replaces the SSRC's
   * libsrtp stream when the RTP caps arrive, and RTCP unprotected by its
   * other streaming thread in that moment fails (no_ctx); seen under load */
  Feed feeds[] = { {"r", caps, rtp, FALSE}, {"c", rtcp_caps, rtcp, FALSE, 1} };

  for (c = 0; c < G_N_ELEMENTS (ciphers) && strcmp (ciphers[c], cipher); c++);
  hex = key_hex (key46, key_len_for (c));
  desc = g_strdup_printf ("appsrc name=r ! e.rtp_sink_0 "
      "appsrc name=c ! e.rtcp_sink_0 "
      "%s name=e key=%s rtp-cipher=%s rtp-auth=%s rtcp-cipher=%s rtcp-auth=%s "
      "%s%s e.rtp_src_0 ! d.rtp_sink  e.rtcp_src_0 ! d.rtcp_sink "
      "%s name=d  d.rtp_src ! appsink name=a  d.rtcp_src ! appsink name=b",
      enc, hex, cipher, auth, cipher, auth, mki_hex ? "mki=" : "",
      mki_hex ? mki_hex : "", dec);
  p = parse (desc);
  {
    GstElement *d = gst_bin_get_by_name (GST_BIN (p), "d");
    GstBuffer *kb = gst_buffer_new_memdup (key46, key_len_for (c));
    GstCaps *kc = gst_caps_new_simple ("application/x-srtp",
        "srtp-key", GST_TYPE_BUFFER, kb, "srtp-cipher", G_TYPE_STRING, cipher,
        "srtp-auth", G_TYPE_STRING, auth, "srtcp-cipher", G_TYPE_STRING,
        cipher, "srtcp-auth", G_TYPE_STRING, auth, NULL);
    if (mki_hex) {
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_BUFFER);
      fail_unless (gst_value_deserialize (&v, mki_hex));
      gst_caps_set_value (kc, "mki", &v);
      g_value_unset (&v);
    }
    g_signal_connect_data (d, "request-key", G_CALLBACK (return_caps_cb), kc,
        (GClosureNotify) (void (*) (void)) gst_caps_unref, 0);
    gst_buffer_unref (kb);
    gst_object_unref (d);
  }
  fail_unless (run_pipeline (p, feeds, 2, sinks, out, 2));
  assert_same (rtp, out[0]->bytes, "rtp roundtrip");
  assert_same (rtcp, out[1]->bytes, "rtcp roundtrip");
  /* the source caps are plain RTP again */
  fail_unless (gst_structure_has_name (gst_caps_get_structure (out[0]->caps,
              0), "application/x-rtp"));
  collected_free (out[0]);
  collected_free (out[1]);
  gst_object_unref (p);
  g_free (desc);
  g_free (hex);
  g_ptr_array_unref (rtp);
  g_ptr_array_unref (rtcp);
  gst_caps_unref (caps);
  gst_caps_unref (rtcp_caps);
}

static void
check_roundtrip (const gchar * enc, const gchar * dec, guint seq,
    const gchar * cipher, const gchar * auth)
{
  check_roundtrip_mki (enc, dec, seq, cipher, auth, NULL);
}

GST_START_TEST (test_interop_gpusrtpenc_srtpdec)
{
  check_roundtrip ("gpusrtpenc", "srtpdec", 100, "aes-128-icm", "hmac-sha1-80");
  check_roundtrip ("gpusrtpenc", "srtpdec", 100, "aes-256-icm", "hmac-sha1-32");
  check_roundtrip ("gpusrtpenc", "srtpdec", 100, "aes-128-gcm", "null");
  check_roundtrip ("gpusrtpenc", "srtpdec", 100, "aes-256-gcm", "null");
}

GST_END_TEST;

GST_START_TEST (test_interop_srtpenc_gpusrtpdec)
{
  check_roundtrip ("srtpenc", "gpusrtpdec", 100, "aes-128-icm", "hmac-sha1-80");
  check_roundtrip ("srtpenc", "gpusrtpdec", 100, "aes-256-icm", "hmac-sha1-32");
  check_roundtrip ("srtpenc", "gpusrtpdec", 100, "aes-128-gcm", "null");
  check_roundtrip ("srtpenc", "gpusrtpdec", 100, "aes-256-gcm", "null");
  check_roundtrip ("gpusrtpenc", "gpusrtpdec", 100, "aes-128-icm",
      "hmac-sha1-80");
}

GST_END_TEST;

/* seqnum-offset near 65535: the ROC goes to 1 in the middle */
GST_START_TEST (test_roc_wrap)
{
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x0badcafe, 65510, 60, &caps);
  gchar *hex = key_hex (key46, 30);
  gchar *desc = g_strdup_printf ("appsrc name=r ! tee name=t "
      "t. ! queue ! srtpenc key=%s ! appsink name=a1 "
      "t. ! queue ! gpusrtpenc name=e key=%s ! appsink name=a2",
      hex, hex);
  GstElement *p = parse (desc), *e;
  Feed feeds[] = { {"r", caps, rtp, FALSE} };
  const gchar *sinks[] = { "a1", "a2" };
  Collected *out[2];
  GstStructure *stats;
  const GValue *streams;

  e = gst_bin_get_by_name (GST_BIN (p), "e");
  fail_unless (run_pipeline (p, feeds, 1, sinks, out, 2));
  assert_same (out[0]->bytes, out[1]->bytes, "roc wrap vs srtpenc");
  fail_unless_equals_int (out[1]->bytes->len, rtp->len);
  g_object_get (e, "stats", &stats, NULL);
  streams = gst_structure_get_value (stats, "streams");
  fail_unless_equals_int (gst_value_array_get_size (streams), 0);       /* NULL: stopped */
  gst_structure_free (stats);
  check_roundtrip ("srtpenc", "gpusrtpdec", 65500, "aes-128-icm",
      "hmac-sha1-80");
  check_roundtrip ("gpusrtpenc", "srtpdec", 65500, "aes-128-gcm", "null");
  for (guint i = 0; i < 2; i++)
    collected_free (out[i]);
  gst_object_unref (e);
  gst_object_unref (p);
  g_free (desc);
  g_free (hex);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* stats while running: ROC 1 after the wrap */
GST_START_TEST (test_stats_roc)
{
  GstElement *p = parse ("appsrc name=r ! gpusrtpenc name=e "
      "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d ! "
      "fakesink");
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), "e");
  GstElement *r = gst_bin_get_by_name (GST_BIN (p), "r");
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0xabcdef01, 65530, 20, &caps);
  GstStructure *stats;
  const GValue *streams, *st;
  guint ssrc, roc;
  guint64 out;

  g_object_set (r, "caps", caps, NULL);
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (guint i = 0; i < rtp->len; i++)
    gst_app_src_push_buffer (GST_APP_SRC (r),
        gst_buffer_new_wrapped_bytes (rtp->pdata[i]));
  /* wait until all are through */
  for (guint t = 0; t < 500; t++) {
    g_object_get (e, "stats", &stats, NULL);
    gst_structure_get_uint64 (stats, "packets-out", &out);
    if (out == rtp->len)
      break;
    gst_structure_free (stats);
    stats = NULL;
    g_usleep (10000);
  }
  fail_unless (stats != NULL);
  streams = gst_structure_get_value (stats, "streams");
  fail_unless_equals_int (gst_value_array_get_size (streams), 1);
  st = gst_value_array_get_value (streams, 0);
  gst_structure_get_uint (gst_value_get_structure (st), "ssrc", &ssrc);
  gst_structure_get_uint (gst_value_get_structure (st), "roc", &roc);
  fail_unless_equals_int_hex (ssrc, 0xabcdef01);
  fail_unless_equals_int (roc, 1);
  gst_structure_free (stats);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (e);
  gst_object_unref (r);
  gst_object_unref (p);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* gpusrtpenc's stats read as srtpenc's: the same structure and fields
 * (streams of ssrc, roc as guint), the same values, for the same packets
 * across a ROC step. */
GST_START_TEST (test_enc_stats_like_srtpenc)
{
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x5eed5eed, 65530, 12, &caps);
  gchar *hex = key_hex (key46, 30);
  gchar *desc = g_strdup_printf ("appsrc name=r ! tee name=t "
      "t. ! queue ! srtpenc name=e1 key=%s ! appsink name=a1 "
      "t. ! queue ! gpusrtpenc name=e2 key=%s ! appsink name=a2", hex, hex);
  GstElement *p = parse (desc);
  Feed feeds[] = { {"r", caps, rtp, FALSE} };
  const gchar *sinks[] = { "a1", "a2" }, *encs[] = { "e1", "e2" };
  Collected *out[2];
  GstStructure *stats[2];
  guint i;

  fail_unless (run_pipeline_stats (p, feeds, 1, sinks, out, 2, encs, stats,
          2));
  assert_same (out[0]->bytes, out[1]->bytes, "beside srtpenc");
  assert_fields_like (stats[0], stats[1], "srtpenc / gpusrtpenc");
  for (i = 0; i < 2; i++) {
    const GValue *streams = gst_structure_get_value (stats[i], "streams");
    const GstStructure *e;
    guint ssrc = 0, roc = 0;

    fail_unless_equals_int (gst_value_array_get_size (streams), 1);
    e = gst_value_get_structure (gst_value_array_get_value (streams, 0));
    fail_unless (gst_structure_get_uint (e, "ssrc", &ssrc));
    fail_unless (gst_structure_get_uint (e, "roc", &roc));
    fail_unless_equals_int_hex (ssrc, 0x5eed5eed);
    fail_unless_equals_int (roc, 1);
    gst_structure_free (stats[i]);
    collected_free (out[i]);
  }
  gst_object_unref (p);
  g_free (desc);
  g_free (hex);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* 8 SSRCs on 8 request pads: identical to srtpenc's 8 pads; all 8
 * interleaved into one gpusrtpdec that gets its keys from request-key. */
static GstCaps *
request_key_cb (GstElement * dec, guint ssrc, gpointer user_data)
{
  GstBuffer *key = gst_buffer_new_memdup (key46, 30);
  GstCaps *caps = gst_caps_new_simple ("application/x-srtp",
      "srtp-key", GST_TYPE_BUFFER, key,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "srtcp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtcp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);
  gst_buffer_unref (key);
  (*(guint *) user_data)++;
  return caps;
}

GST_START_TEST (test_eight_ssrcs)
{
  GString *desc = g_string_new (NULL);
  gchar *hex = key_hex (key46, 30);
  GPtrArray *rtp[8], *all, *srtp_all;
  GstCaps *caps[8];
  Feed feeds[8];
  const gchar *sinks[16];
  gchar *names[24];
  Collected *out[16], *dout;
  GstElement *p, *d;
  guint i, j, requests = 0;
  GstStructure *stats;
  guint drops;

  g_string_append_printf (desc, "srtpenc name=e1 key=%s gpusrtpenc name=e2 "
      "key=%s %s ", hex, hex, enc_modes[__i__]);
  for (i = 0; i < 8; i++) {
    rtp[i] = make_audio_rtp (0x10000000 + i * 7919, 100 * i, 12, &caps[i]);
    names[i] = g_strdup_printf ("r%u", i);
    names[8 + i] = g_strdup_printf ("a%u", i);
    names[16 + i] = g_strdup_printf ("b%u", i);
    feeds[i] = (Feed) { names[i], caps[i], rtp[i], FALSE };
    sinks[i] = names[8 + i];
    sinks[8 + i] = names[16 + i];
    g_string_append_printf (desc, "appsrc name=r%u ! tee name=t%u "
        "t%u. ! queue ! e1.rtp_sink_%u t%u. ! queue ! e2.rtp_sink_%u "
        "e1.rtp_src_%u ! appsink name=a%u e2.rtp_src_%u ! appsink name=b%u ",
        i, i, i, i, i, i, i, i, i, i);
  }
  p = parse (desc->str);
  fail_unless (run_pipeline (p, feeds, 8, sinks, out, 16));
  all = g_ptr_array_new ();
  srtp_all = g_ptr_array_new ();
  for (i = 0; i < 8; i++) {
    assert_same (out[i]->bytes, out[8 + i]->bytes, "8 ssrcs");
    fail_unless_equals_int (out[8 + i]->bytes->len, rtp[i]->len);
  }
  {
    /* every packet went through a batch; batched mode also reports how
     * long packets waited */
    GstElement *e2 = gst_bin_get_by_name (GST_BIN (p), "e2");
    guint64 batches, out_packets, misses;
    g_object_get (e2, "stats", &stats, NULL);
    fail_unless (gst_structure_get_uint64 (stats, "batches", &batches));
    fail_unless (gst_structure_get_uint64 (stats, "packets-out",
            &out_packets));
    fail_unless_equals_int (out_packets, 8 * 12);
    fail_unless (batches >= 1 && batches <= out_packets);
    fail_unless (gst_structure_get_uint64 (stats, "latency-misses", &misses));
    GST_INFO ("%s: %" G_GUINT64_FORMAT " batches for %" G_GUINT64_FORMAT
        " packets", enc_modes[__i__], batches, out_packets);
    gst_structure_free (stats);
    gst_object_unref (e2);
  }
  /* interleave the 8 protected streams into one decoder */
  for (j = 0; j < 12; j++)
    for (i = 0; i < 8; i++) {
      g_ptr_array_add (srtp_all, out[8 + i]->bytes->pdata[j]);
      g_ptr_array_add (all, rtp[i]->pdata[j]);
    }
  gst_object_unref (p);

  p = parse ("appsrc name=s ! gpusrtpdec name=d ! appsink name=o");
  d = gst_bin_get_by_name (GST_BIN (p), "d");
  g_signal_connect (d, "request-key", G_CALLBACK (request_key_cb), &requests);
  {
    GstCaps *c = gst_caps_new_empty_simple ("application/x-srtp");
    Feed f = { "s", c, srtp_all, TRUE };
    const gchar *o[] = { "o" };
    fail_unless (run_pipeline (p, &f, 1, o, &dout, 1));
    gst_caps_unref (c);
  }
  assert_same (all, dout->bytes, "8 ssrcs through gpusrtpdec");
  fail_unless_equals_int (requests, 8);
  g_object_get (d, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint (stats, "recv-drop-count", &drops));
  fail_unless_equals_int (drops, 0);
  gst_structure_free (stats);

  collected_free (dout);
  for (i = 0; i < 16; i++)
    collected_free (out[i]);
  for (i = 0; i < 8; i++) {
    g_ptr_array_unref (rtp[i]);
    gst_caps_unref (caps[i]);
  }
  for (i = 0; i < 24; i++)
    g_free (names[i]);
  g_ptr_array_unref (all);
  g_ptr_array_unref (srtp_all);
  gst_object_unref (d);
  gst_object_unref (p);
  g_string_free (desc, TRUE);
  g_free (hex);
}

GST_END_TEST;

/* rtpvrawpay pushes buffer lists: gpusrtpenc ! srtpdec, no CRITICAL
 * (G_DEBUG=fatal-criticals), and the raw video comes back */
GST_START_TEST (test_buffer_lists)
{
  const gchar *pairs[][2] = {
    {"gpusrtpenc", "srtpdec"},
    {"gpusrtpenc output-lists=true", "gpusrtpdec"},
    {"srtpenc", "gpusrtpdec"},
  };
  GstCaps *caps;
  GPtrArray *rtp = make_rtp ("videotestsrc num-buffers=3 ! "
      "video/x-raw,width=320,height=240,format=RGB ! rtpvrawpay ssrc=4242 "
      "seqnum-offset=65000 timestamp-offset=7", &caps);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (pairs); i++) {
    gboolean ours = g_str_has_prefix (pairs[i][0], "gpusrtpenc");
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
        "video/x-raw,width=320,height=240,format=RGB ! rtpvrawpay ssrc=4242 "
        "seqnum-offset=65000 timestamp-offset=7 ! %s %s "
        "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d ! "
        "%s ! appsink name=o", pairs[i][0], ours ? enc_modes[__i__] : "",
        pairs[i][1]);
    GstElement *p = parse (desc);
    const gchar *o[] = { "o" };
    Collected *out;

    fail_unless (run_pipeline (p, NULL, 0, o, &out, 1));
    assert_same (rtp, out->bytes, pairs[i][0]);
    collected_free (out);
    gst_object_unref (p);
    g_free (desc);
  }
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- negative cases into gpusrtpdec ---- */

static GBytes *
protect (GsSrtpCtx * ctx, GBytes * rtp)
{
  gsize len;
  const guint8 *d = g_bytes_get_data (rtp, &len);
  guint8 *buf = g_malloc (len + 32);
  size_t out_len;

  memcpy (buf, d, len);
  fail_unless (gsrtp_rtp_protect (ctx, buf, len, len + 32, &out_len) ==
      GSRTP_OK);
  return g_bytes_new_take (buf, out_len);
}

static GBytes *
modified (GBytes * b, gssize at, gssize new_len)
{
  gsize len;
  guint8 *d = g_bytes_unref_to_data (g_bytes_ref (b), &len);
  if (at >= 0)
    d[at < 0 ? 0 : at] ^= 0x01;
  return g_bytes_new_take (d, new_len >= 0 ? (gsize) new_len : len);
}

GST_START_TEST (test_negative)
{
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x77777777, 500, 10, &caps);
  GPtrArray *in = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GPtrArray *expect = g_ptr_array_new ();
  GsSrtpCtx ctx, wrong, other;
  guint8 wrong_key[30];
  GBytes *p[10];
  gsize len;
  guint i;
  GstBuffer *kb = gst_buffer_new_memdup (key46, 30);
  GstCaps *scaps = gst_caps_copy (caps);
  GstElement *pipe, *d;
  Collected *out;
  const gchar *o[] = { "o" };
  GstStructure *stats, *gpusrtpdec_stats = NULL;
  guint8 shortpkt[17];

  memset (wrong_key, 0x5a, sizeof wrong_key);
  gsrtp_ctx_init (&ctx, GSRTP_AES_CM_128_HMAC_SHA1_80,
      GSRTP_AES_CM_128_HMAC_SHA1_80, key46, 30, 0);
  gsrtp_ctx_init (&wrong, GSRTP_AES_CM_128_HMAC_SHA1_80,
      GSRTP_AES_CM_128_HMAC_SHA1_80, wrong_key, 30, 0);
  gsrtp_ctx_init (&other, GSRTP_AES_CM_128_HMAC_SHA1_80,
      GSRTP_AES_CM_128_HMAC_SHA1_80, key46, 30, 0);
  for (i = 0; i < 10; i++)
    p[i] = protect (&ctx, rtp->pdata[i]);
  g_bytes_get_data (p[1], &len);

#define GOOD(i) do { g_ptr_array_add (in, g_bytes_ref (p[i])); \
    g_ptr_array_add (expect, rtp->pdata[i]); } while (0)
  GOOD (0);
  g_ptr_array_add (in, modified (p[1], 20, -1));        /* tampered payload */
  GOOD (2);
  g_ptr_array_add (in, modified (p[3], len - 1, -1));   /* tampered tag */
  g_ptr_array_add (in, g_bytes_ref (p[2]));     /* replayed */
  g_ptr_array_add (in, modified (p[4], -1, len - 5));   /* truncated */
  memcpy (shortpkt, g_bytes_get_data (p[5], NULL), sizeof shortpkt);
  g_ptr_array_add (in, g_bytes_new (shortpkt, sizeof shortpkt));        /* < tag */
  g_ptr_array_add (in, g_bytes_new (shortpkt, 6));      /* < header */
  g_ptr_array_add (in, protect (&wrong, rtp->pdata[6]));        /* wrong key */
  {
    /* an SSRC nobody has a key for */
    GBytes *b = protect (&other, rtp->pdata[7]);
    guint8 *dd = g_bytes_unref_to_data (b, &len);
    dd[8] ^= 0xff;
    g_ptr_array_add (in, g_bytes_new_take (dd, len));
  }
  GOOD (8);
  GOOD (9);
  GOOD (7);                     /* late but inside the window */
#undef GOOD

  gst_structure_set (gst_caps_get_structure (scaps, 0),
      "srtp-key", GST_TYPE_BUFFER, kb,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "srtcp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtcp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);
  gst_structure_set_name (gst_caps_get_structure (scaps, 0),
      "application/x-srtp");

  for (i = 0; i < 3; i++) {
    /* one buffer at a time, then as one list; then srtpdec (one at a time:
     * srtpdec 1.22 mishandles lists) read by the same code */
    Feed f = { "s", scaps, in, i == 1 };
    const gchar *dn[] = { "d" };
    DecStats ds;
    guint64 v;

    pipe = parse (i < 2 ? "appsrc name=s ! gpusrtpdec name=d ! appsink name=o"
        : "appsrc name=s ! srtpdec name=d ! appsink name=o");
    d = gst_bin_get_by_name (GST_BIN (pipe), "d");
    fail_unless (run_pipeline_stats (pipe, &f, 1, o, &out, 1, dn, &stats, 1));
    assert_same (expect, out->bytes, i < 2 ? "negative" : "negative, srtpdec");
    /* while running, each stream with its counters: every packet of SSRC
     * 0x77777777 that reached its key (all but the 6-byte one and the
     * unknown SSRC's) and the 6 of those refused (payload, tag, replay,
     * truncated, 17 bytes, wrong key); the same with srtpdec */
    read_dec_stats (stats, &ds, i < 2 ? "gpusrtpdec" : "srtpdec");
    fail_unless_equals_int (ds.n_streams, 1);
    fail_unless_equals_int_hex (ds.ssrc[0], 0x77777777);
    fail_unless_equals_int (ds.roc[0], 0);
    fail_unless_equals_int (ds.stream_recv[0], in->len - 2);
    fail_unless_equals_int (ds.stream_drop[0], 6);
    if (i == 2) {
      /* srtpdec counts only packets of an SSRC with a key at the top too */
      fail_unless_equals_int (ds.recv, in->len - 2);
      fail_unless_equals_int (ds.drop, 6);
      assert_fields_like (stats, gpusrtpdec_stats, "srtpdec / gpusrtpdec");
      gst_structure_free (stats);
      g_object_get (d, "stats", &stats, NULL);
      read_dec_stats (stats, &ds, "srtpdec stopped");
      fail_unless_equals_int (ds.n_streams, 0);
      fail_unless_equals_int (ds.recv, in->len - 2);
      gst_structure_free (stats);
      collected_free (out);
      gst_object_unref (d);
      gst_object_unref (pipe);
      continue;
    }
    if (i == 0)
      gpusrtpdec_stats = gst_structure_copy (stats);
    gst_structure_free (stats);
    /* stopped: no streams (their keys are gone), the counters stay; every
     * packet counted at the top, the ones no key reached included */
    g_object_get (d, "stats", &stats, NULL);
    read_dec_stats (stats, &ds, "gpusrtpdec stopped");
    fail_unless_equals_int (ds.n_streams, 0);
    fail_unless_equals_int (ds.recv, in->len);
    fail_unless_equals_int (ds.drop, in->len - expect->len);
    fail_unless_equals_int (stat_u64 (stats, "packets-in"), in->len);
    fail_unless_equals_int (stat_u64 (stats, "packets-out"), expect->len);
    fail_unless_equals_int (stat_u64 (stats, "packets-dropped"),
        in->len - expect->len);
    /* payload, tag, truncated, wrong key */
    fail_unless_equals_int (stat_u64 (stats, "auth-fail-count"), 4);
    fail_unless_equals_int (stat_u64 (stats, "replay-count"), 1);
    fail_unless_equals_int (stat_u64 (stats, "too-short-count"), 2);
    fail_unless_equals_int (stat_u64 (stats, "unknown-ssrc-count"), 1);
    v = stat_u64 (stats, "batches");
    fail_unless (i == 0 || v == 1, "list in %" G_GUINT64_FORMAT " batches", v);
    gst_structure_free (stats);
    collected_free (out);
    gst_object_unref (d);
    gst_object_unref (pipe);
  }

  gst_structure_free (gpusrtpdec_stats);
  for (i = 0; i < 10; i++)
    g_bytes_unref (p[i]);
  gsrtp_ctx_clear (&ctx);
  gsrtp_ctx_clear (&wrong);
  gsrtp_ctx_clear (&other);
  gst_buffer_unref (kb);
  gst_caps_unref (scaps);
  gst_caps_unref (caps);
  g_ptr_array_unref (in);
  g_ptr_array_unref (expect);
  g_ptr_array_unref (rtp);
}

GST_END_TEST;

/* Protected packets of rtp (protected in index order by one sender
 * context) into gpusrtpdec (extra properties dec_props) in the order of
 * feed[]; checks that exactly the plain packets of want[] come out, in that
 * order, and returns the decoder's stats (stopped). */
static GstStructure *
run_dec_order (GPtrArray * rtp, GstCaps * caps, const gchar * dec_props,
    const guint * feed, guint n_feed, const guint * want, guint n_want,
    DecStats * running)
{
  GPtrArray *in = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GPtrArray *expect = g_ptr_array_new ();
  GPtrArray *prot = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GstBuffer *kb = gst_buffer_new_memdup (key46, 30);
  GstCaps *scaps = gst_caps_copy (caps);
  const gchar *o[] = { "o" }, *dn[] = { "d" };
  GstStructure *stats, *stopped;
  GsSrtpCtx ctx;
  GstElement *pipe, *d;
  Collected *out;
  gchar *desc;
  guint i;

  gsrtp_ctx_init (&ctx, GSRTP_AES_CM_128_HMAC_SHA1_80,
      GSRTP_AES_CM_128_HMAC_SHA1_80, key46, 30, 0);
  for (i = 0; i < rtp->len; i++)
    g_ptr_array_add (prot, protect (&ctx, rtp->pdata[i]));
  for (i = 0; i < n_feed; i++)
    g_ptr_array_add (in, g_bytes_ref (prot->pdata[feed[i]]));
  for (i = 0; i < n_want; i++)
    g_ptr_array_add (expect, rtp->pdata[want[i]]);

  gst_structure_set (gst_caps_get_structure (scaps, 0),
      "srtp-key", GST_TYPE_BUFFER, kb,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "srtcp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtcp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);
  gst_structure_set_name (gst_caps_get_structure (scaps, 0),
      "application/x-srtp");
  desc = g_strdup_printf ("appsrc name=s ! gpusrtpdec name=d %s ! "
      "appsink name=o", dec_props);
  pipe = parse (desc);
  d = gst_bin_get_by_name (GST_BIN (pipe), "d");
  {
    Feed f = { "s", scaps, in, FALSE };
    fail_unless (run_pipeline_stats (pipe, &f, 1, o, &out, 1, dn, &stats, 1));
  }
  /* every byte downstream is a whole packet that was meant to pass */
  assert_same (expect, out->bytes, desc);
  read_dec_stats (stats, running, "gpusrtpdec");
  gst_structure_free (stats);
  g_object_get (d, "stats", &stopped, NULL);

  collected_free (out);
  gst_object_unref (d);
  gst_object_unref (pipe);
  g_free (desc);
  gsrtp_ctx_clear (&ctx);
  gst_buffer_unref (kb);
  gst_caps_unref (scaps);
  g_ptr_array_unref (in);
  g_ptr_array_unref (expect);
  g_ptr_array_unref (prot);
  return stopped;
}

/* The replay window at its edges (replay-window-size=64): with index 1080
 * the highest seen, 1080 - 63 is still inside (accepted once), 1080 - 64 is
 * exactly the window's size behind (dropped, never decrypted), duplicates
 * of the top and of a packet inside are dropped, and when the top moves by
 * one the packet that was just inside falls out of it. */
GST_START_TEST (test_replay_window_edges)
{
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x5eed0001, 1000, 100, &caps);
  /* positions in rtp: sequence number 1000 + position */
  const guint feed[] = { 80, 17, 16, 17, 80, 81, 17, 18, 18, 82 };
  const guint want[] = { 80, 17, 81, 18, 82 };
  GstStructure *stats;
  DecStats ds;

  stats = run_dec_order (rtp, caps, "replay-window-size=64", feed,
      G_N_ELEMENTS (feed), want, G_N_ELEMENTS (want), &ds);
  fail_unless_equals_int (ds.n_streams, 1);
  fail_unless_equals_int (ds.stream_recv[0], G_N_ELEMENTS (feed));
  fail_unless_equals_int (ds.stream_drop[0], 5);
  /* 16 (one beyond), 17 and 80 again, 17 after the top moved, 18 again */
  fail_unless_equals_int (stat_u64 (stats, "replay-count"), 5);
  fail_unless_equals_int (stat_u64 (stats, "auth-fail-count"), 0);
  fail_unless_equals_int (stat_u64 (stats, "packets-out"), G_N_ELEMENTS (want));
  gst_structure_free (stats);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* The ROC across the 16-bit sequence number wrap with the packets reordered
 * around it (RFC 3711 3.3.1's index estimate): late packets of ROC 0 that
 * arrive after the first ones of ROC 1 still decrypt, each exactly once,
 * and the stream ends at ROC 1. The sender's ROC goes into its tag, so a
 * wrong guess would be an authentication failure. */
GST_START_TEST (test_roc_reordered_across_wrap)
{
  GstCaps *caps;
  /* sequence numbers 65530 .. 65535, 0 .. 7 */
  GPtrArray *rtp = make_audio_rtp (0x5eed0002, 65530, 14, &caps);
  const guint feed[] = { 0, 1, 6, 2, 7, 5, 3, 8, 4, 9, 5, 6, 10, 11, 12, 13 };
  const guint want[] = { 0, 1, 6, 2, 7, 5, 3, 8, 4, 9, 10, 11, 12, 13 };
  GstStructure *stats;
  DecStats ds;

  stats = run_dec_order (rtp, caps, "", feed, G_N_ELEMENTS (feed), want,
      G_N_ELEMENTS (want), &ds);
  fail_unless_equals_int (ds.n_streams, 1);
  fail_unless_equals_int (ds.roc[0], 1);
  fail_unless_equals_int (ds.stream_drop[0], 2);       /* 65535 and 0 again */
  fail_unless_equals_int (stat_u64 (stats, "replay-count"), 2);
  fail_unless_equals_int (stat_u64 (stats, "auth-fail-count"), 0);
  gst_structure_free (stats);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- MKI ---- */

/* srtpenc and gpusrtpenc with the same key and MKI: the same bytes, RTP and
 * RTCP, and the MKI in the source caps. */
GST_START_TEST (test_mki_identical_to_srtpenc)
{
  static const gchar *pols[][2] = { {"aes-128-icm", "hmac-sha1-80"},
  {"aes-256-icm", "hmac-sha1-32"}, {"aes-128-gcm", "null"}
  };
  GstCaps *caps, *rtcp_caps = gst_caps_new_empty_simple ("application/x-rtcp");
  GPtrArray *rtp = make_audio_rtp (0x1234abcd, 65530, 20, &caps);
  GPtrArray *rtcp = make_rtcp (0x1234abcd, 5);
  guint k;

  for (k = 0; k < G_N_ELEMENTS (pols); k++) {
    guint c;
    gchar *hex, *pol;
    Collected *out[4];
    GstBuffer *mki = NULL;
    GstMapInfo map;

    for (c = 0; strcmp (ciphers[c], pols[k][0]); c++);
    hex = key_hex (key46, key_len_for (c));
    pol = g_strdup_printf ("rtp-cipher=%s rtp-auth=%s rtcp-cipher=%s "
        "rtcp-auth=%s key=%s mki=%s", pols[k][0], pols[k][1], pols[k][0],
        pols[k][1], hex, k == 0 ? "c0ffee01" : "a5");
    fail_unless (run_beside_srtpenc (pol, enc_modes[__i__], caps, rtp,
            rtcp_caps, rtcp, out));
    fail_unless_equals_int (out[1]->bytes->len, rtp->len);
    assert_same (out[0]->bytes, out[1]->bytes, "rtp with mki");
    fail_unless_equals_int (out[3]->bytes->len, rtcp->len);
    assert_same (out[2]->bytes, out[3]->bytes, "rtcp with mki");
    fail_unless (gst_structure_get (gst_caps_get_structure (out[1]->caps, 0),
            "mki", GST_TYPE_BUFFER, &mki, NULL), "no mki in the caps");
    gst_buffer_map (mki, &map, GST_MAP_READ);
    fail_unless (map.size == (k == 0 ? 4 : 1) && map.data[0] ==
        (k == 0 ? 0xc0 : 0xa5));
    gst_buffer_unmap (mki, &map);
    gst_buffer_unref (mki);
    for (guint i = 0; i < 4; i++)
      collected_free (out[i]);
    g_free (pol);
    g_free (hex);
  }
  g_ptr_array_unref (rtp);
  g_ptr_array_unref (rtcp);
  gst_caps_unref (caps);
  gst_caps_unref (rtcp_caps);
}

GST_END_TEST;

GST_START_TEST (test_mki_interop)
{
  check_roundtrip_mki ("gpusrtpenc", "srtpdec", 100, "aes-128-icm",
      "hmac-sha1-80", "01020304");
  check_roundtrip_mki ("srtpenc", "gpusrtpdec", 100, "aes-128-icm",
      "hmac-sha1-80", "01020304");
  check_roundtrip_mki ("gpusrtpenc", "srtpdec", 100, "aes-128-gcm", "null",
      "0102");
  check_roundtrip_mki ("srtpenc", "gpusrtpdec", 100, "aes-256-gcm", "null",
      "0102");
}

GST_END_TEST;

/* Packets of one SSRC protected by srtpenc under key 1 / MKI 1, then key 2 /
 * MKI 2 (a new srtpenc session: ROC 0, so no wrap here; the kernel test
 * covers the ROC across a key switch), plus one packet with an MKI
 * nobody announced: srtpdec and gpusrtpdec, keyed by the same caps
 * (srtp-key + mki, srtp-key2 + mki2), deliver the same packets, and
 * gpusrtpdec counts the stranger. */
static GPtrArray *
srtpenc_run (GPtrArray * rtp, guint from, guint to, GstCaps * caps,
    const gchar * key_hex_s, const gchar * mki_hex)
{
  gchar *desc = g_strdup_printf ("appsrc name=r ! srtpenc key=%s mki=%s ! "
      "appsink name=o", key_hex_s, mki_hex);
  GstElement *p = parse (desc);
  GPtrArray *part = g_ptr_array_new ();
  Feed f = { "r", caps, part, FALSE };
  const gchar *o[] = { "o" };
  Collected *out;
  GPtrArray *res;
  guint i;

  for (i = from; i < to; i++)
    g_ptr_array_add (part, rtp->pdata[i]);
  fail_unless (run_pipeline (p, &f, 1, o, &out, 1));
  res = g_ptr_array_ref (out->bytes);
  collected_free (out);
  gst_object_unref (p);
  g_ptr_array_unref (part);
  g_free (desc);
  return res;
}

GST_START_TEST (test_mki_two_keys)
{
  static const guint8 key2[30] = { 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96,
    0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa1, 0xa2,
    0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad
  };
  static const guint8 mki1[4] = { 0, 0, 0, 1 }, mki2[4] = { 0, 0, 0, 2 };
  GstCaps *caps, *scaps;
  GPtrArray *rtp = make_audio_rtp (0x31415926, 1000, 40, &caps);
  gchar *hex1 = key_hex (key46, 30), *hex2 = key_hex (key2, 30);
  GPtrArray *a = srtpenc_run (rtp, 0, 20, caps, hex1, "00000001");
  GPtrArray *b = srtpenc_run (rtp, 20, 40, caps, hex2, "00000002");
  GPtrArray *in = g_ptr_array_new ();
  GstBuffer *k1 = gst_buffer_new_memdup (key46, 30);
  GstBuffer *k2 = gst_buffer_new_memdup (key2, 30);
  GstBuffer *m1 = gst_buffer_new_memdup (mki1, 4);
  GstBuffer *m2 = gst_buffer_new_memdup (mki2, 4);
  GBytes *stranger;
  const gchar *o[] = { "o" };
  Collected *out[2];
  guint i, d;

  fail_unless_equals_int (a->len, 20);
  fail_unless_equals_int (b->len, 20);
  {
    /* b's first packet again with MKI 3: unknown, dropped */
    gsize len;
    guint8 *dd = g_bytes_unref_to_data (g_bytes_ref (b->pdata[0]), &len);
    dd[len - 10 - 1] = 3;
    stranger = g_bytes_new_take (dd, len);
  }
  for (i = 0; i < 20; i++)
    g_ptr_array_add (in, a->pdata[i]);
  g_ptr_array_add (in, stranger);
  for (i = 0; i < 20; i++)
    g_ptr_array_add (in, b->pdata[i]);

  scaps = gst_caps_copy (caps);
  gst_structure_set_name (gst_caps_get_structure (scaps, 0),
      "application/x-srtp");
  gst_caps_set_simple (scaps, "ssrc", G_TYPE_UINT, 0x31415926,
      "srtp-key", GST_TYPE_BUFFER, k1, "mki", GST_TYPE_BUFFER, m1,
      "srtp-key2", GST_TYPE_BUFFER, k2, "mki2", GST_TYPE_BUFFER, m2,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "srtcp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtcp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);

  for (d = 0; d < 2; d++) {
    gchar *desc = g_strdup_printf ("appsrc name=s ! %s name=d ! appsink "
        "name=o", d == 0 ? "srtpdec" : "gpusrtpdec");
    GstElement *pipe = parse (desc);
    Feed f = { "s", scaps, in, FALSE };

    fail_unless (run_pipeline (pipe, &f, 1, o, &out[d], 1));
    fail_unless_equals_int (out[d]->bytes->len, rtp->len);
    assert_same (rtp, out[d]->bytes, d == 0 ? "srtpdec, two keys" :
        "gpusrtpdec, two keys");
    if (d == 1) {
      GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), "d");
      GstStructure *stats;

      g_object_get (e, "stats", &stats, NULL);
      fail_unless_equals_int (stat_u64 (stats, "bad-mki-count"), 1);
      fail_unless_equals_int (stat_u64 (stats, "packets-dropped"), 1);
      {
        DecStats ds;
        read_dec_stats (stats, &ds, "gpusrtpdec, two keys");
        fail_unless_equals_int (ds.drop, 1);
      }
      gst_structure_free (stats);
      gst_object_unref (e);
    }
    gst_object_unref (pipe);
    g_free (desc);
  }
  collected_free (out[0]);
  collected_free (out[1]);
  g_bytes_unref (stranger);
  g_ptr_array_unref (in);
  g_ptr_array_unref (a);
  g_ptr_array_unref (b);
  g_ptr_array_unref (rtp);
  gst_buffer_unref (k1);
  gst_buffer_unref (k2);
  gst_buffer_unref (m1);
  gst_buffer_unref (m2);
  gst_caps_unref (scaps);
  gst_caps_unref (caps);
  g_free (hex1);
  g_free (hex2);
}

GST_END_TEST;

/* ---- key change, state cycles ---- */

GST_START_TEST (test_key_change)
{
  gchar *desc = g_strdup_printf ("appsrc name=r ! gpusrtpenc name=e %s "
      "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d ! "
      "srtpdec ! appsink name=o sync=false", enc_modes[__i__]);
  GstElement *p = parse (desc);
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), "e");
  GstElement *r = gst_bin_get_by_name (GST_BIN (p), "r");
  GstElement *o = gst_bin_get_by_name (GST_BIN (p), "o");
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x31415926, 2000, 40, &caps);
  GstBuffer *k2;
  guint8 key2[30];
  guint i, got = 0;

  memset (key2, 0xa5, sizeof key2);
  k2 = gst_buffer_new_memdup (key2, sizeof key2);
  g_object_set (r, "caps", caps, NULL);
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (i = 0; i < rtp->len; i++) {
    GstSample *s;
    GstMapInfo map;

    if (i == 20)
      g_object_set (e, "key", k2, NULL);
    gst_app_src_push_buffer (GST_APP_SRC (r),
        gst_buffer_new_wrapped_bytes (rtp->pdata[i]));
    s = gst_app_sink_try_pull_sample (GST_APP_SINK (o), 5 * GST_SECOND);
    fail_unless (s != NULL, "packet %u did not come out", i);
    gst_buffer_map (gst_sample_get_buffer (s), &map, GST_MAP_READ);
    fail_unless (map.size == g_bytes_get_size (rtp->pdata[i]) &&
        memcmp (map.data, g_bytes_get_data (rtp->pdata[i], NULL),
            map.size) == 0);
    gst_buffer_unmap (gst_sample_get_buffer (s), &map);
    got++;
    gst_sample_unref (s);
  }
  fail_unless_equals_int (got, rtp->len);
  {
    /* the caps on gpusrtpenc's source pad carry the new key */
    GstPad *src = gst_element_get_static_pad (e, "rtp_src_0");
    GstCaps *cur = gst_pad_get_current_caps (src);
    const GValue *v = gst_structure_get_value (gst_caps_get_structure (cur,
            0), "srtp-key");
    fail_unless (gst_buffer_memcmp (gst_value_get_buffer (v), 0, key2,
            sizeof key2) == 0);
    gst_caps_unref (cur);
    gst_object_unref (src);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  g_free (desc);
  gst_buffer_unref (k2);
  gst_object_unref (e);
  gst_object_unref (r);
  gst_object_unref (o);
  gst_object_unref (p);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

GST_START_TEST (test_state_cycles)
{
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x01020304, 1, 10, &caps);
  gchar *desc = g_strdup_printf ("appsrc name=r ! gpusrtpenc name=e "
      "random-key=true %s ! gpusrtpdec ! appsink name=o", enc_modes[__i__]);
  GstElement *p = parse (desc);
  guint i;

  g_free (desc);
  for (i = 0; i < 3; i++) {
    Feed f = { "r", caps, rtp, i == 1 };
    const gchar *o[] = { "o" };
    Collected *out;

    fail_unless (run_pipeline (p, &f, 1, o, &out, 1));
    assert_same (rtp, out->bytes, "cycle");
    collected_free (out);
  }
  {
    /* random-key made a key of the right size */
    GstElement *e = gst_bin_get_by_name (GST_BIN (p), "e");
    GstBuffer *k;
    g_object_get (e, "key", &k, NULL);
    fail_unless (k && gst_buffer_get_size (k) == 30);
    gst_buffer_unref (k);
    gst_object_unref (e);
  }
  gst_object_unref (p);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* The batching knob is cycle, as on ncencoder and dxtenc; max-latency
 * stays as a deprecated alias that sets cycle to max-latency / 3. Both
 * batch through the scheduler and give back the packets, decodable. */
GST_START_TEST (test_cycle_and_max_latency_alias)
{
  const gchar *modes[] = { "cycle=1000000", "max-latency=3000000" };
  GstElement *e = gst_element_factory_make ("gpusrtpenc", NULL);
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "max-latency");
  guint64 cycle = 0, max_latency = 0;
  GstCaps *caps;
  GPtrArray *rtp;
  guint m;

  fail_unless (ps && (ps->flags & G_PARAM_DEPRECATED));
  g_object_set (e, "max-latency", (guint64) 3000000, NULL);
  g_object_get (e, "cycle", &cycle, NULL);
  fail_unless_equals_uint64 (cycle, 1000000);
  g_object_set (e, "cycle", (guint64) 2000000, NULL);
  g_object_get (e, "max-latency", &max_latency, NULL);
  fail_unless_equals_uint64 (max_latency, 6000000);
  gst_object_unref (e);

  rtp = make_audio_rtp (0x0a0b0c0d, 7, 20, &caps);
  for (m = 0; m < G_N_ELEMENTS (modes); m++) {
    gchar *desc = g_strdup_printf ("appsrc name=r ! gpusrtpenc name=e "
        "random-key=true %s ! gpusrtpdec ! appsink name=o", modes[m]);
    GstElement *p = parse (desc);
    Feed f = { "r", caps, rtp, FALSE };
    const gchar *o[] = { "o" };
    const gchar *stats_of[] = { "e" };
    GstStructure *stats[1] = { NULL };
    Collected *out;
    guint64 batches = 0;

    fail_unless (run_pipeline_stats (p, &f, 1, o, &out, 1, stats_of, stats,
            1));
    assert_same (rtp, out->bytes, modes[m]);
    fail_unless (stats[0] != NULL);
    fail_unless (gst_structure_get_uint64 (stats[0], "scheduled-batches",
            &batches));
    fail_unless (batches >= 1, "%s: not batched", modes[m]);
    gst_structure_free (stats[0]);
    collected_free (out);
    gst_object_unref (p);
    g_free (desc);
  }
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- keys in the logs ---- */

typedef struct
{
  GMutex lock;
  GPtrArray *needles_ours;      /* never in any line of our categories */
  GPtrArray *needles_any;       /* never in any line at all */
  guint lines, ours, core_key_lines;
  gchar *bad;
} LogCheck;

static LogCheck logcheck;

static void
log_fn (GstDebugCategory * cat, GstDebugLevel level, const gchar * file,
    const gchar * func, gint line, GObject * obj, GstDebugMessage * msg,
    gpointer user_data)
{
  const gchar *text = gst_debug_message_get (msg);
  const gchar *name = gst_debug_category_get_name (cat);
  gboolean ours = g_str_has_prefix (name, "gpusrtp") ||
      g_str_has_prefix (name, "gpustream");
  guint i;

  if (!text)
    return;
  g_mutex_lock (&logcheck.lock);
  logcheck.lines++;
  if (ours)
    logcheck.ours++;
  for (i = 0; i < logcheck.needles_any->len; i++)
    if (strstr (text, logcheck.needles_any->pdata[i]) && !logcheck.bad)
      logcheck.bad = g_strdup_printf ("session key in %s: %s", name, text);
  for (i = 0; i < logcheck.needles_ours->len; i++) {
    if (strstr (text, logcheck.needles_ours->pdata[i])) {
      if (ours && !logcheck.bad)
        logcheck.bad = g_strdup_printf ("master key in %s: %s", name, text);
      else
        logcheck.core_key_lines++;
    }
  }
  g_mutex_unlock (&logcheck.lock);
}

static void
add_needles (GPtrArray * a, const guint8 * d, gsize n)
{
  gchar *hex = key_hex (d, n);
  g_ptr_array_add (a, g_ascii_strup (hex, -1));
  g_ptr_array_add (a, hex);
  g_ptr_array_add (a, g_base64_encode (d, n));
}

GST_START_TEST (test_no_key_in_logs)
{
  guint8 salt[14], out[32];
  guint label;
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x4b455921, 30, 20, &caps);
  GstElement *p;
  const gchar *o[] = { "o" };
  Collected *res;
  Feed f;

  g_mutex_init (&logcheck.lock);
  logcheck.needles_ours = g_ptr_array_new_with_free_func (g_free);
  logcheck.needles_any = g_ptr_array_new_with_free_func (g_free);
  add_needles (logcheck.needles_ours, key46, 30);
  /* any 8 consecutive key bytes would be a leak too */
  add_needles (logcheck.needles_ours, key46 + 4, 8);
  memcpy (salt, key46 + 16, 14);
  for (label = 0; label < 6; label++) {
    gsize n = (label % 3) == 1 ? 20 : (label % 3) == 0 ? 16 : 14;
    gsrtp_kdf (key46, 16, salt, label, out, n);
    add_needles (logcheck.needles_any, out, n);
  }

  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_add_log_function (log_fn, NULL, NULL);
  gst_debug_set_default_threshold (GST_LEVEL_MEMDUMP);

  p = parse ("appsrc name=r ! gpusrtpenc name=e "
      "key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d ! "
      "gpusrtpdec ! appsink name=o");
  f = (Feed) { "r", caps, rtp, FALSE };
  fail_unless (run_pipeline (p, &f, 1, o, &res, 1));
  assert_same (rtp, res->bytes, "logged run");
  collected_free (res);
  gst_object_unref (p);

  gst_debug_set_default_threshold (GST_LEVEL_NONE);
  gst_debug_remove_log_function (log_fn);

  g_print ("srtp logs: %u lines at level 9, %u from our categories, %u core "
      "lines (GST_CAPS / GST_EVENT / GST_PADS caps dumps) show srtp-key\n",
      logcheck.lines, logcheck.ours, logcheck.core_key_lines);
  fail_unless (logcheck.ours > 0);
  fail_unless (logcheck.bad == NULL, "%s", logcheck.bad);
  g_ptr_array_unref (logcheck.needles_ours);
  g_ptr_array_unref (logcheck.needles_any);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- srtpenc's enum types ---- */

/* GType names are process-global and stay once registered, so each load
 * order runs in a fresh process: this test binary again, with
 * --load-order ORDER (see main). */
static gchar *self_exe;

#define CHILD_CHECK(cond, ...) G_STMT_START { if (!(cond)) { \
    g_printerr ("load order %s: ", order); g_printerr (__VA_ARGS__); \
    g_printerr ("\n"); return 1; } } G_STMT_END

/* srtpenc's enum types are found by name with srtpenc's values and nicks. */
static gint
child_check_types (const gchar * order)
{
  GType types[2] = { g_type_from_name ("GstSrtpCipherType"),
    g_type_from_name ("GstSrtpAuthType")
  };
  const gchar **nicks[2] = { ciphers, auths };
  guint n[2] = { G_N_ELEMENTS (ciphers), G_N_ELEMENTS (auths) };
  guint t, v;

  for (t = 0; t < 2; t++) {
    GEnumClass *k;

    CHILD_CHECK (types[t] && G_TYPE_IS_ENUM (types[t]), "no enum type %s",
        t ? "GstSrtpAuthType" : "GstSrtpCipherType");
    k = g_type_class_ref (types[t]);
    CHILD_CHECK (k->n_values == n[t], "%s has %u values",
        g_type_name (types[t]), k->n_values);
    for (v = 0; v < n[t]; v++) {
      GEnumValue *ev = g_enum_get_value_by_nick (k, nicks[t][v]);
      CHILD_CHECK (ev && ev->value == (gint) v, "%s: %s is not %u",
          g_type_name (types[t]), nicks[t][v], v);
    }
    g_type_class_unref (k);
  }
  return 0;
}

/* Set by nick (as gst-launch and gst_util_set_object_arg do) and by a
 * GValue of srtpenc's type; read back as numbers. */
static gint
child_check_props (const gchar * order, GstElement * e)
{
  GValue v = G_VALUE_INIT;
  gint c = -1, a = -1, rc = -1;

  gst_util_set_object_arg (G_OBJECT (e), "rtp-cipher", "aes-256-icm");
  gst_util_set_object_arg (G_OBJECT (e), "rtp-auth", "hmac-sha1-32");
  g_value_init (&v, g_type_from_name ("GstSrtpCipherType"));
  g_value_set_enum (&v, 3);     /* aes-128-gcm */
  g_object_set_property (G_OBJECT (e), "rtcp-cipher", &v);
  g_value_unset (&v);
  g_object_get (e, "rtp-cipher", &c, "rtp-auth", &a, "rtcp-cipher", &rc,
      NULL);
  CHILD_CHECK (c == 2 && a == 1 && rc == 3, "%s: rtp-cipher %d, rtp-auth %d, "
      "rtcp-cipher %d", GST_OBJECT_NAME (e), c, a, rc);
  return 0;
}

/* One protected run through enc (ciphers set by nick in the launch line)
 * into dec: every packet decoded, and the encoder's caps announce the
 * cipher and auth set by nick. */
static gint
child_run (const gchar * order, const gchar * enc, const gchar * dec)
{
  gchar *hex = key_hex (key46, 46);
  gchar *desc = g_strdup_printf ("audiotestsrc num-buffers=5 "
      "samplesperbuffer=160 ! audio/x-raw,rate=8000,channels=1 ! rtpL16pay ! "
      "%s name=e key=%s rtp-cipher=aes-256-icm rtp-auth=hmac-sha1-32 "
      "rtcp-cipher=aes-256-icm rtcp-auth=hmac-sha1-32 ! %s name=d ! "
      "fakesink", enc, hex, dec);
  GstElement *p = gst_parse_launch (desc, NULL), *e, *d;
  GstMessage *msg;
  GstStructure *stats;
  GstCaps *caps;
  GstPad *pad;
  guint recv = 0, drop = 1;
  const gchar *cipher = NULL, *auth = NULL;

  g_free (hex);
  CHILD_CHECK (p != NULL, "cannot parse %s", desc);
  g_free (desc);
  e = gst_bin_get_by_name (GST_BIN (p), "e");
  d = gst_bin_get_by_name (GST_BIN (p), "d");
  gst_element_set_state (p, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p), 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  CHILD_CHECK (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "%s ! %s did not finish", enc, dec);
  gst_message_unref (msg);
  g_object_get (d, "stats", &stats, NULL);
  gst_structure_get_uint (stats, "recv-count", &recv);
  gst_structure_get_uint (stats, "recv-drop-count", &drop);
  gst_structure_free (stats);
  pad = gst_element_get_static_pad (e, "rtp_src_0");
  caps = gst_pad_get_current_caps (pad);
  if (caps) {
    cipher = gst_structure_get_string (gst_caps_get_structure (caps, 0),
        "srtp-cipher");
    auth = gst_structure_get_string (gst_caps_get_structure (caps, 0),
        "srtp-auth");
  }
  CHILD_CHECK (recv == 5 && drop == 0, "%s ! %s: recv-count %u, "
      "recv-drop-count %u", enc, dec, recv, drop);
  CHILD_CHECK (g_strcmp0 (cipher, "aes-256-icm") == 0 &&
      g_strcmp0 (auth, "hmac-sha1-32") == 0, "%s announces %s / %s", enc,
      cipher, auth);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (e);
  gst_object_unref (d);
  gst_object_unref (p);
  return 0;
}

/* The child: creates the first element, checks srtpenc's type names
 * resolve, creates the second, sets the enum properties of both by nick and
 * by srtpenc's type, runs both directions. "no-srtpenc": a registry without
 * gst-plugins-bad (set up by the parent), our elements alone. Prints the
 * enum type gpusrtpenc's property has. G_DEBUG=fatal-criticals: srtpenc
 * left without its types would abort here. */
static gint
load_order_child (const gchar * order)
{
  gboolean alone = g_str_equal (order, "no-srtpenc");
  gboolean ours_first = alone || g_str_equal (order, "gpusrtpenc-first");
  const gchar *first = ours_first ? "gpusrtpenc" : "srtpenc";
  const gchar *second = ours_first ? "srtpenc" : "gpusrtpenc";
  GstElement *e1, *e2 = NULL, *ours;
  GParamSpec *ps;
  gint r;

  CHILD_CHECK (alone || ours_first || g_str_equal (order, "srtpenc-first"),
      "unknown order");
  e1 = gst_element_factory_make (first, NULL);
  CHILD_CHECK (e1 != NULL, "no %s", first);
  if ((r = child_check_types (order)))
    return r;
  if (!alone) {
    e2 = gst_element_factory_make (second, NULL);
    CHILD_CHECK (e2 != NULL, "no %s", second);
    if ((r = child_check_types (order)) || (r = child_check_props (order, e2)))
      return r;
  } else {
    CHILD_CHECK (gst_element_factory_find ("srtpenc") == NULL,
        "srtpenc is in the registry");
  }
  if ((r = child_check_props (order, e1)))
    return r;
  ours = ours_first ? e1 : e2;
  ps = g_object_class_find_property (G_OBJECT_GET_CLASS (ours), "rtp-cipher");
  g_print ("rtp-cipher type: %s\n", g_type_name (ps->value_type));
  if (!alone) {
    if ((r = child_run (order, "srtpenc", "gpusrtpdec")) ||
        (r = child_run (order, "gpusrtpenc", "srtpdec")))
      return r;
    gst_object_unref (e2);
  }
  gst_object_unref (e1);
  return 0;
}

static const gchar *load_orders[] = { "srtpenc-first", "gpusrtpenc-first",
  "no-srtpenc"
};

GST_START_TEST (test_enum_types_load_order)
{
  const gchar *order = load_orders[__i__];
  gchar *argv[] = { self_exe, (gchar *) "--load-order", (gchar *) order,
    NULL
  };
  gchar **envp = g_get_environ ();
  gchar *out = NULL, *err = NULL, *registry = NULL, *expect;
  GError *error = NULL;
  gint status = -1;

  if (g_str_equal (order, "no-srtpenc")) {
    /* our plugins alone, in a registry of their own */
    gint fd = g_file_open_tmp ("srtp-no-srtpenc-XXXXXX.registry", &registry,
        NULL);
    fail_unless (fd >= 0);
    close (fd);
    g_unlink (registry);
    envp = g_environ_setenv (envp, "GST_PLUGIN_SYSTEM_PATH_1_0", "", TRUE);
    envp = g_environ_setenv (envp, "GST_REGISTRY_1_0", registry, TRUE);
  }
  fail_unless (g_spawn_sync (NULL, argv, envp, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, &status, &error), "spawn: %s",
      error ? error->message : "?");
  GST_INFO ("%s: %s%s", order, out, err);
  fail_unless (g_spawn_check_wait_status (status, NULL),
      "load order %s failed (wait status 0x%x): %s%s", order, status, out,
      err);
  /* srtpenc first: our properties have srtpenc's own types; otherwise ours,
   * with srtpenc's names taken by srtpenc's plugin (or by ours without it) */
  expect = g_strdup_printf ("rtp-cipher type: %s\n",
      g_str_equal (order, "srtpenc-first") ? "GstSrtpCipherType" :
      "GstGpuSrtpCipherType");
  fail_unless (strstr (out, expect) != NULL, "%s: %s", order, out);
  if (registry) {
    g_unlink (registry);
    g_free (registry);
  }
  g_free (expect);
  g_free (out);
  g_free (err);
  g_strfreev (envp);
}

GST_END_TEST;

/* A buffer with room behind its bytes for the tag is protected in place
 * when upstream gave it away (no copy: the output has the input's memory),
 * and copied when upstream still holds it: its bytes and size stay as they
 * were. Both give libsrtp's bytes. */
static GstBuffer *
buffer_with_room (GBytes * b)
{
  gsize len;
  const guint8 *d = g_bytes_get_data (b, &len);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, len + 64, NULL);

  gst_buffer_fill (buf, 0, d, len);
  gst_buffer_set_size (buf, len);
  return buf;
}

static const guint8 *
buffer_data (GstBuffer * buf)
{
  GstMapInfo map;
  const guint8 *d;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  d = map.data;
  gst_buffer_unmap (buf, &map);
  return d;
}

GST_START_TEST (test_in_place)
{
  GstCaps *caps;
  GPtrArray *rtp = make_audio_rtp (0x1a2b3c4d, 700, 12, &caps);
  GstBuffer *kb = gst_buffer_new_memdup (key46, 30);
  guint i, n_in_place = 0;

  for (i = 0; i < 2; i++) {
    gboolean shared = i == 1;
    GstElement *enc = gst_element_factory_make ("gpusrtpenc", NULL);
    GstHarness *h;
    GsSrtpCtx ref;
    guint j;

    gst_util_set_object_arg (G_OBJECT (enc), "backend", "cpu");
    g_object_set (enc, "key", kb, NULL);
    h = gst_harness_new_with_element (enc, "rtp_sink_0", "rtp_src_0");
    gst_harness_set_src_caps (h, gst_caps_ref (caps));
    gsrtp_ctx_init (&ref, GSRTP_AES_CM_128_HMAC_SHA1_80,
        GSRTP_AES_CM_128_HMAC_SHA1_80, key46, 30, 0);
    for (j = 0; j < rtp->len; j++) {
      GBytes *want = protect (&ref, rtp->pdata[j]);
      GstBuffer *in = buffer_with_room (rtp->pdata[j]);
      GstBuffer *kept = shared ? gst_buffer_ref (in) : NULL;
      const guint8 *in_data = buffer_data (in);
      gsize in_len = gst_buffer_get_size (in);
      GstBuffer *out;
      GstMapInfo map;
      GBytes *got;

      GST_BUFFER_PTS (in) = j * GST_MSECOND;
      fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
      out = gst_harness_pull (h);
      fail_unless (out != NULL);
      fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
      got = g_bytes_new (map.data, map.size);
      gst_buffer_unmap (out, &map);
      fail_unless (g_bytes_equal (got, want), "packet %u (%s): not libsrtp's "
          "bytes", j, shared ? "shared" : "given away");
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), j * GST_MSECOND);
      if (shared) {
        /* upstream's buffer: same size, same bytes, not the output */
        fail_unless (out != kept);
        fail_unless (buffer_data (out) != in_data);
        fail_unless_equals_uint64 (gst_buffer_get_size (kept), in_len);
        fail_unless (gst_buffer_map (kept, &map, GST_MAP_READ));
        fail_unless (map.size == g_bytes_get_size (rtp->pdata[j]) &&
            memcmp (map.data, g_bytes_get_data (rtp->pdata[j], NULL),
                map.size) == 0, "packet %u: upstream's buffer changed", j);
        gst_buffer_unmap (kept, &map);
        gst_buffer_unref (kept);
      } else {
        n_in_place += buffer_data (out) == in_data;
      }
      gst_buffer_unref (out);
      g_bytes_unref (got);
      g_bytes_unref (want);
    }
    gsrtp_ctx_clear (&ref);
    gst_harness_teardown (h);
    gst_object_unref (enc);     /* the harness took a reference of its own */
  }
  /* every buffer given away with room was protected where it was */
  fail_unless_equals_int (n_in_place, rtp->len);
  gst_buffer_unref (kb);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- constant time, key lifetime ---- */

/* gpusrtpdec switching master key by the MKI, back and forth (key 1, 2,
 * 1), on the constant-time path (GS_SRTP_FORCE_PORTABLE, read by the
 * plugin's first SRTP call of this forked test): the switching packet is
 * unprotected as a batch of one like every other. Each packet alone, then
 * all as one list (the other key's packets are redone after the batch, in
 * order): what srtpdec (libsrtp) gives, and the RTP that was sent. */
GST_START_TEST (test_mki_switch_portable)
{
  static const guint8 key2[30] = { 0x31, 0x41, 0x59, 0x26, 0x53, 0x58, 0x97,
    0x93, 0x23, 0x84, 0x62, 0x64, 0x33, 0x83, 0x27, 0x95, 0x02, 0x88, 0x41,
    0x97, 0x16, 0x93, 0x99, 0x37, 0x51, 0x05, 0x82, 0x09, 0x74, 0x94
  };
  static const guint8 mki1[4] = { 0, 0, 0, 1 }, mki2[4] = { 0, 0, 0, 2 };
  GstCaps *caps, *scaps;
  GPtrArray *rtp, *a1, *b, *a2, *in = g_ptr_array_new ();
  gchar *hex1 = key_hex (key46, 30), *hex2 = key_hex (key2, 30);
  GstBuffer *k1 = gst_buffer_new_memdup (key46, 30);
  GstBuffer *k2 = gst_buffer_new_memdup (key2, 30);
  GstBuffer *m1 = gst_buffer_new_memdup (mki1, 4);
  GstBuffer *m2 = gst_buffer_new_memdup (mki2, 4);
  const gchar *o[] = { "o" };
  Collected *out[3];
  guint i, list;

  g_setenv ("GS_SRTP_FORCE_PORTABLE", "1", TRUE);
  rtp = make_audio_rtp (0x27182818, 2000, 45, &caps);
  a1 = srtpenc_run (rtp, 0, 15, caps, hex1, "00000001");
  b = srtpenc_run (rtp, 15, 30, caps, hex2, "00000002");
  a2 = srtpenc_run (rtp, 30, 45, caps, hex1, "00000001");
  for (i = 0; i < 15; i++)
    g_ptr_array_add (in, a1->pdata[i]);
  for (i = 0; i < 15; i++)
    g_ptr_array_add (in, b->pdata[i]);
  for (i = 0; i < 15; i++)
    g_ptr_array_add (in, a2->pdata[i]);

  scaps = gst_caps_copy (caps);
  gst_structure_set_name (gst_caps_get_structure (scaps, 0),
      "application/x-srtp");
  gst_caps_set_simple (scaps, "ssrc", G_TYPE_UINT, 0x27182818,
      "srtp-key", GST_TYPE_BUFFER, k1, "mki", GST_TYPE_BUFFER, m1,
      "srtp-key2", GST_TYPE_BUFFER, k2, "mki2", GST_TYPE_BUFFER, m2,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "srtcp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtcp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);

  /* srtpdec packet by packet (its list path is not what we compare) */
  for (list = 0; list < 3; list++) {
    GstElement *pipe = parse (list == 0 ?
        "appsrc name=s ! srtpdec ! appsink name=o" :
        "appsrc name=s ! gpusrtpdec backend=cpu ! appsink name=o");
    Feed f = { "s", scaps, in, list == 2 };

    fail_unless (run_pipeline (pipe, &f, 1, o, &out[list], 1));
    gst_object_unref (pipe);
  }
  assert_same (rtp, out[0]->bytes, "srtpdec, keys 1, 2, 1");
  assert_same (out[0]->bytes, out[1]->bytes,
      "gpusrtpdec against srtpdec, keys 1, 2, 1");
  assert_same (out[0]->bytes, out[2]->bytes,
      "gpusrtpdec (one list) against srtpdec, keys 1, 2, 1");
  for (list = 0; list < 3; list++)
    collected_free (out[list]);
  g_unsetenv ("GS_SRTP_FORCE_PORTABLE");
  g_ptr_array_unref (in);
  g_ptr_array_unref (a1);
  g_ptr_array_unref (b);
  g_ptr_array_unref (a2);
  g_ptr_array_unref (rtp);
  gst_buffer_unref (k1);
  gst_buffer_unref (k2);
  gst_buffer_unref (m1);
  gst_buffer_unref (m2);
  gst_caps_unref (scaps);
  gst_caps_unref (caps);
  g_free (hex1);
  g_free (hex2);
}

GST_END_TEST;

static void
count_soft_limit (GstElement * enc, gint * count)
{
  (*count)++;
}

/* An RTP packet of ssrc with sequence number seq and a 20-byte payload. */
static GBytes *
rtp_packet (guint32 ssrc, guint16 seq)
{
  guint8 p[32] = { 0x80, 96 };
  guint i;

  GST_WRITE_UINT16_BE (p + 2, seq);
  GST_WRITE_UINT32_BE (p + 4, 160 * (guint32) seq);
  GST_WRITE_UINT32_BE (p + 8, ssrc);
  for (i = 12; i < sizeof p; i++)
    p[i] = (guint8) (i * 7 + seq);
  return g_bytes_new (p, sizeof p);
}

/* RFC 3711 9.2 key lifetime: a stream that goes on at ROC 2^32 - 2 (the
 * "roc" of its caps). soft-limit comes with the first packet of the last
 * ROC, once; the last index (ROC 2^32 - 1, sequence number 65535) is still
 * sent; the next packet is dropped with an error naming the limit, and
 * nothing is sent after it. Every packet sent is libsrtp's bytes: srtpdec,
 * keyed by the output caps (which carry the ROC), gives back the RTP. A new
 * key then lets packets through again, protected under it. */
GST_START_TEST (test_key_limits)
{
  static const guint16 seqs[] = { 65534, 65535, 0, 1, 16384, 32768, 49152,
    65535
  };
  GstElement *enc = gst_element_factory_make ("gpusrtpenc", NULL);
  GstBuffer *kb = gst_buffer_new_memdup (key46, 30);
  GstBus *bus = gst_bus_new ();
  GPtrArray *sent = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);
  GPtrArray *plain = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);
  GstCaps *caps = gst_caps_new_simple ("application/x-rtp",
      "media", G_TYPE_STRING, "audio", "clock-rate", G_TYPE_INT, 8000,
      "encoding-name", G_TYPE_STRING, "L16", "payload", G_TYPE_INT, 96,
      "ssrc", G_TYPE_UINT, 0x5eed0001, "roc", G_TYPE_UINT, 0xfffffffe, NULL);
  GstCaps *out_caps;
  GstHarness *h;
  GstMessage *msg;
  GError *err = NULL;
  gchar *dbg = NULL;
  GsSrtpCtx ref;
  GstStructure *stats;
  gint soft = 0;
  guint32 roc = 0;
  guint i;

  gst_util_set_object_arg (G_OBJECT (enc), "backend", "cpu");
  g_object_set (enc, "key", kb, NULL);
  g_signal_connect (enc, "soft-limit", G_CALLBACK (count_soft_limit), &soft);
  h = gst_harness_new_with_element (enc, "rtp_sink_0", "rtp_src_0");
  gst_element_set_bus (enc, bus);
  gst_harness_set_src_caps (h, gst_caps_ref (caps));
  gsrtp_ctx_init (&ref, GSRTP_AES_CM_128_HMAC_SHA1_80,
      GSRTP_AES_CM_128_HMAC_SHA1_80, key46, 30, 0);
  gsrtp_ctx_set_roc (&ref, 0xfffffffe);
  for (i = 0; i < G_N_ELEMENTS (seqs); i++) {
    GBytes *pkt = rtp_packet (0x5eed0001, seqs[i]);
    GBytes *want = protect (&ref, pkt);
    GstBuffer *out;
    GstMapInfo map;

    fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_memdup
            (g_bytes_get_data (pkt, NULL), g_bytes_get_size (pkt))),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    fail_unless (map.size == g_bytes_get_size (want) &&
        memcmp (map.data, g_bytes_get_data (want, NULL), map.size) == 0,
        "packet %u (seq %u): not the bytes of the reference at its ROC", i,
        seqs[i]);
    g_ptr_array_add (sent, g_bytes_new (map.data, map.size));
    g_ptr_array_add (plain, pkt);
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
    g_bytes_unref (want);
    /* the signal with the first packet of ROC 2^32 - 1 (seq 0), once */
    fail_unless_equals_int (soft, i >= 2 ? 1 : 0);
  }
  fail_unless_equals_int (ref.roc, G_MAXUINT32);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);

  /* past the last index: dropped, an error, and nothing after it */
  for (i = 0; i < 2; i++) {
    GBytes *pkt = rtp_packet (0x5eed0001, (guint16) i);

    fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_memdup
            (g_bytes_get_data (pkt, NULL), g_bytes_get_size (pkt))),
        GST_FLOW_ERROR);
    g_bytes_unref (pkt);
  }
  fail_unless (gst_harness_try_pull (h) == NULL);
  fail_unless_equals_int (soft, 1);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error at the hard limit");
  gst_message_parse_error (msg, &err, &dbg);
  fail_unless (g_error_matches (err, GST_LIBRARY_ERROR,
          GST_LIBRARY_ERROR_FAILED));
  /* the reason is the error's first line */
  fail_unless (strstr (err->message, "Key usage limit has been reached "
          "(ROC exhausted)") != NULL, "%s", err->message);
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (msg);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL,
      "one error, not one per packet");
  g_object_get (enc, "stats", &stats, NULL);
  fail_unless_equals_int (stat_u64 (stats, "packets-out"), G_N_ELEMENTS (seqs));
  fail_unless_equals_int (stat_u64 (stats, "packets-dropped"), 1);
  {
    const GValue *streams = gst_structure_get_value (stats, "streams");
    const GstStructure *e;

    fail_unless (streams && gst_value_array_get_size (streams) == 1);
    e = gst_value_get_structure (gst_value_array_get_value (streams, 0));
    fail_unless (gst_structure_get_uint (e, "roc", &roc));
    fail_unless_equals_int_hex (roc, G_MAXUINT32);
  }
  gst_structure_free (stats);

  /* what went out, through srtpdec, keyed by the output caps */
  out_caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (out_caps != NULL);
  fail_unless (gst_structure_get_uint (gst_caps_get_structure (out_caps, 0),
          "roc", &roc));
  fail_unless_equals_int_hex (roc, 0xfffffffe);
  {
    GstElement *pipe = parse ("appsrc name=s ! srtpdec ! appsink name=o");
    Feed f = { "s", out_caps, sent, FALSE };
    const gchar *o[] = { "o" };
    Collected *c;

    fail_unless (run_pipeline (pipe, &f, 1, o, &c, 1));
    assert_same (plain, c->bytes, "srtpdec of the packets up to the limit");
    collected_free (c);
    gst_object_unref (pipe);
  }
  gst_caps_unref (out_caps);

  /* a new key lifts the limit: the next packet goes out under it, with a
   * fresh context at the ROC its new caps announce */
  {
    guint8 key2[30];
    GstBuffer *kb2;
    GBytes *pkt = rtp_packet (0x5eed0001, 7), *want;
    GstBuffer *out;
    GstMapInfo map;
    GsSrtpCtx ref2;

    for (i = 0; i < sizeof key2; i++)
      key2[i] = (guint8) (key46[i] ^ 0xa5);
    kb2 = gst_buffer_new_memdup (key2, sizeof key2);
    g_object_set (enc, "key", kb2, NULL);
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_new_memdup
            (g_bytes_get_data (pkt, NULL), g_bytes_get_size (pkt))),
        GST_FLOW_OK);
    out = gst_harness_pull (h);
    out_caps = gst_pad_get_current_caps (h->sinkpad);
    fail_unless (gst_structure_get_uint (gst_caps_get_structure (out_caps,
                0), "roc", &roc));
    gsrtp_ctx_init (&ref2, GSRTP_AES_CM_128_HMAC_SHA1_80,
        GSRTP_AES_CM_128_HMAC_SHA1_80, key2, 30, 0);
    gsrtp_ctx_set_roc (&ref2, roc);
    want = protect (&ref2, pkt);
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    fail_unless (map.size == g_bytes_get_size (want) &&
        memcmp (map.data, g_bytes_get_data (want, NULL), map.size) == 0,
        "after a new key: not the reference's bytes under it (ROC %u)", roc);
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
    fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);
    g_bytes_unref (want);
    g_bytes_unref (pkt);
    gsrtp_ctx_clear (&ref2);
    gst_caps_unref (out_caps);
    gst_buffer_unref (kb2);
  }
  gsrtp_ctx_clear (&ref);
  gst_element_set_bus (enc, NULL);
  gst_harness_teardown (h);
  gst_object_unref (bus);
  g_ptr_array_unref (sent);
  g_ptr_array_unref (plain);
  gst_caps_unref (caps);
  gst_buffer_unref (kb);
}

GST_END_TEST;

/* ---- scheduled mode: RTCP behind its RTP ---- */

/* What left the element, in the order it left, on both source pads. */
typedef struct
{
  GMutex lock;
  GCond cond;
  GPtrArray *log;               /* gchar*: "rtp SEQ", "rtcp LEN", "eos PAD" */
  GPtrArray *rtcp;              /* GBytes of the SRTCP packets */
  gboolean hold;                /* the RTP chain waits while set */
  gboolean held;                /* the RTP chain is waiting */
} Order;

static GstFlowReturn
order_rtp_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  Order *o = g_object_get_data (G_OBJECT (pad), "order");
  guint8 hdr[4];

  gst_buffer_extract (buf, 0, hdr, 4);
  g_mutex_lock (&o->lock);
  while (o->hold) {
    o->held = TRUE;
    g_cond_broadcast (&o->cond);
    g_cond_wait (&o->cond, &o->lock);
  }
  g_ptr_array_add (o->log, g_strdup_printf ("rtp %u",
          GST_READ_UINT16_BE (hdr + 2)));
  g_cond_broadcast (&o->cond);
  g_mutex_unlock (&o->lock);
  gst_buffer_unref (buf);
  return GST_FLOW_OK;
}

static GstFlowReturn
order_rtcp_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  Order *o = g_object_get_data (G_OBJECT (pad), "order");
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_READ);
  g_mutex_lock (&o->lock);
  g_ptr_array_add (o->log, g_strdup_printf ("rtcp %u", (guint) map.size));
  g_ptr_array_add (o->rtcp, g_bytes_new (map.data, map.size));
  g_cond_broadcast (&o->cond);
  g_mutex_unlock (&o->lock);
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (buf);
  return GST_FLOW_OK;
}

static gboolean
order_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  Order *o = g_object_get_data (G_OBJECT (pad), "order");

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    g_mutex_lock (&o->lock);
    g_ptr_array_add (o->log, g_strdup_printf ("eos %s",
            GST_OBJECT_NAME (pad)));
    g_cond_broadcast (&o->cond);
    g_mutex_unlock (&o->lock);
  }
  gst_event_unref (event);
  return TRUE;
}

static GstPad *
order_sink_pad (Order * o, const gchar * name, GstPadChainFunction chain)
{
  GstPad *pad = gst_pad_new (name, GST_PAD_SINK);

  g_object_set_data (G_OBJECT (pad), "order", o);
  gst_pad_set_chain_function (pad, chain);
  gst_pad_set_event_function (pad, order_event);
  gst_pad_set_active (pad, TRUE);
  return pad;
}

/* An upstream source pad of ours, its stream started with caps. */
static GstPad *
order_src_pad (const gchar * name, GstCaps * caps, GstPad * peer)
{
  GstPad *pad = gst_pad_new (name, GST_PAD_SRC);
  GstSegment seg;

  gst_pad_set_active (pad, TRUE);
  fail_unless_equals_int (gst_pad_link (pad, peer), GST_PAD_LINK_OK);
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (pad, gst_event_new_stream_start (name)));
  fail_unless (gst_pad_push_event (pad, gst_event_new_caps (caps)));
  fail_unless (gst_pad_push_event (pad, gst_event_new_segment (&seg)));
  return pad;
}

/* With cycle > 0 the RTCP of a pad pair leaves behind the RTP that came in
 * before it: RTP packets go in and are held downstream (the first blocks in
 * the RTP sink), an SR + BYE then goes in on the RTCP pad and must not come
 * out while they are held (a receiver that sees the BYE stops there); once
 * released, everything comes out in the order it went in: the RTP, the
 * SRTCP packet, then each pad's EOS. */
GST_START_TEST (test_scheduled_rtcp_after_rtp)
{
  const guint n_rtp = 10;
  GstCaps *caps, *rtcp_caps = gst_caps_new_empty_simple ("application/x-rtcp");
  GPtrArray *rtp = make_audio_rtp (0x1234abcd, 100, n_rtp, &caps);
  /* SR of the SSRC, then a BYE of it: the compound packet that ends a
   * stream */
  guint8 bye[36] = { 0x80, 200, 0, 6 };
  Order o = { 0 };
  GstElement *e = gst_element_factory_make ("gpusrtpenc", NULL);
  GstPad *rtp_sink, *rtcp_sink, *rtp_src, *rtcp_src, *up_rtp, *up_rtcp,
      *down_rtp, *down_rtcp;
  GstBuffer *key = gst_buffer_new_memdup (key46, 30);
  gint64 end;
  guint i;

  GST_WRITE_UINT32_BE (bye + 4, 0x1234abcd);
  bye[28] = 0x81;
  bye[29] = 203;
  bye[31] = 1;
  GST_WRITE_UINT32_BE (bye + 32, 0x1234abcd);
  g_mutex_init (&o.lock);
  g_cond_init (&o.cond);
  o.log = g_ptr_array_new_with_free_func (g_free);
  o.rtcp = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  o.hold = TRUE;

  /* 50 ms cycles: the RTP is still batched when the RTCP comes */
  g_object_set (e, "key", key, "cycle", (guint64) 50 * GST_MSECOND, NULL);
  rtp_sink = gst_element_request_pad_simple (e, "rtp_sink_0");
  rtcp_sink = gst_element_request_pad_simple (e, "rtcp_sink_0");
  rtp_src = gst_element_get_static_pad (e, "rtp_src_0");
  rtcp_src = gst_element_get_static_pad (e, "rtcp_src_0");
  fail_unless (rtp_sink && rtcp_sink && rtp_src && rtcp_src);
  down_rtp = order_sink_pad (&o, "rtp", order_rtp_chain);
  down_rtcp = order_sink_pad (&o, "rtcp", order_rtcp_chain);
  fail_unless_equals_int (gst_pad_link (rtp_src, down_rtp), GST_PAD_LINK_OK);
  fail_unless_equals_int (gst_pad_link (rtcp_src, down_rtcp),
      GST_PAD_LINK_OK);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  up_rtp = order_src_pad ("up_rtp", caps, rtp_sink);
  up_rtcp = order_src_pad ("up_rtcp", rtcp_caps, rtcp_sink);

  for (i = 0; i < n_rtp; i++) {
    gsize sz;
    const guint8 *d = g_bytes_get_data (rtp->pdata[i], &sz);
    fail_unless_equals_int (gst_pad_push (up_rtp, gst_buffer_new_memdup (d,
                sz)), GST_FLOW_OK);
  }
  fail_unless_equals_int (gst_pad_push (up_rtcp, gst_buffer_new_memdup (bye,
              sizeof bye)), GST_FLOW_OK);
  fail_unless (gst_pad_push_event (up_rtcp, gst_event_new_eos ()));

  /* the first RTP packet is held in the sink: many cycles go by, and
   * nothing else may come out meanwhile */
  g_mutex_lock (&o.lock);
  end = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (!o.held && g_cond_wait_until (&o.cond, &o.lock, end));
  fail_unless (o.held, "no RTP packet came out in 10 s");
  end = g_get_monotonic_time () + 400 * G_TIME_SPAN_MILLISECOND;
  while (o.log->len == 0 && g_cond_wait_until (&o.cond, &o.lock, end));
  fail_unless_equals_int (o.log->len, 0);
  o.hold = FALSE;
  g_cond_broadcast (&o.cond);
  g_mutex_unlock (&o.lock);

  fail_unless (gst_pad_push_event (up_rtp, gst_event_new_eos ()));
  g_mutex_lock (&o.lock);
  end = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  while (o.log->len < n_rtp + 3 && g_cond_wait_until (&o.cond, &o.lock, end));
  g_mutex_unlock (&o.lock);

  fail_unless_equals_int (o.log->len, n_rtp + 3);
  for (i = 0; i < n_rtp; i++) {
    gchar *want = g_strdup_printf ("rtp %u", 100 + i);
    fail_unless_equals_string (o.log->pdata[i], want);
    g_free (want);
  }
  /* SRTCP: the packet, E flag and index (4), the 80-bit tag (10) */
  fail_unless_equals_string (o.log->pdata[n_rtp], "rtcp 50");
  fail_unless_equals_string (o.log->pdata[n_rtp + 1], "eos rtcp");
  fail_unless_equals_string (o.log->pdata[n_rtp + 2], "eos rtp");
  /* what came out is that BYE: its header in clear, the rest encrypted */
  {
    gsize sz;
    const guint8 *d = g_bytes_get_data (o.rtcp->pdata[0], &sz);
    fail_unless (memcmp (d, bye, 8) == 0);
    fail_unless (memcmp (d + 8, bye + 8, sizeof bye - 8) != 0);
    /* encrypted (E), the stream's first SRTCP index (libsrtp's: 1) */
    fail_unless_equals_int (GST_READ_UINT32_BE (d + sizeof bye), 0x80000001);
  }

  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (up_rtp);
  gst_object_unref (up_rtcp);
  gst_object_unref (down_rtp);
  gst_object_unref (down_rtcp);
  gst_object_unref (rtp_src);
  gst_object_unref (rtcp_src);
  gst_element_release_request_pad (e, rtp_sink);
  gst_element_release_request_pad (e, rtcp_sink);
  gst_object_unref (rtp_sink);
  gst_object_unref (rtcp_sink);
  gst_object_unref (e);
  gst_buffer_unref (key);
  g_ptr_array_unref (o.log);
  g_ptr_array_unref (o.rtcp);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
  gst_caps_unref (rtcp_caps);
  g_mutex_clear (&o.lock);
  g_cond_clear (&o.cond);
}

GST_END_TEST;

static Suite *
srtp_suite (void)
{
  Suite *s = suite_create ("gpusrtp");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 60);
  tcase_add_loop_test (tc, test_identical_to_srtpenc, 0, G_N_ELEMENTS (enc_modes));
  tcase_add_test (tc, test_interop_gpusrtpenc_srtpdec);
  tcase_add_test (tc, test_interop_srtpenc_gpusrtpdec);
  tcase_add_test (tc, test_roc_wrap);
  tcase_add_test (tc, test_stats_roc);
  tcase_add_test (tc, test_enc_stats_like_srtpenc);
  tcase_add_loop_test (tc, test_eight_ssrcs, 0, G_N_ELEMENTS (enc_modes));
  tcase_add_loop_test (tc, test_buffer_lists, 0, G_N_ELEMENTS (enc_modes));
  tcase_add_test (tc, test_negative);
  tcase_add_test (tc, test_replay_window_edges);
  tcase_add_test (tc, test_roc_reordered_across_wrap);
  tcase_add_loop_test (tc, test_mki_identical_to_srtpenc, 0,
      G_N_ELEMENTS (enc_modes));
  tcase_add_test (tc, test_mki_interop);
  tcase_add_test (tc, test_mki_two_keys);
  tcase_add_loop_test (tc, test_key_change, 0, G_N_ELEMENTS (enc_modes));
  tcase_add_loop_test (tc, test_state_cycles, 0, G_N_ELEMENTS (enc_modes));
  tcase_add_test (tc, test_no_key_in_logs);
  tcase_add_test (tc, test_cycle_and_max_latency_alias);
  tcase_add_loop_test (tc, test_enum_types_load_order, 0,
      G_N_ELEMENTS (load_orders));
  tcase_add_test (tc, test_in_place);
  tcase_add_test (tc, test_mki_switch_portable);
  tcase_add_test (tc, test_key_limits);
  tcase_add_test (tc, test_scheduled_rtcp_after_rtp);
  return s;
}

int
main (int argc, char **argv)
{
  gint ret;

  if (argc == 3 && g_str_equal (argv[1], "--load-order")) {
    gint one = 1;

    gst_check_init (&one, &argv);
    return load_order_child (argv[2]);
  }
  gst_check_init (&argc, &argv);
  self_exe = g_canonicalize_filename (argv[0], NULL);
  ret = gst_check_run_suite (srtp_suite (), "srtp", __FILE__);
  g_free (self_exe);
  return ret;
}
