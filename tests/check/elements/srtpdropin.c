/* gpusrtpdec / gpusrtpenc as drop-ins for srtpdec / srtpenc in caps
 * negotiation: every pad answers CAPS and ACCEPT_CAPS queries as the
 * gst-plugins-bad element does, and a receiver whose source has only part of
 * the caps (udpsrc caps="application/x-srtp, payload=8, ssrc=..., key...",
 * the srtpdec documentation's example) negotiates the same caps and decodes
 * the audio. Then gpusrtpdec's drops on the bus: a wrong key is a WARNING
 * with the count and the SSRC (and an element message), the right key none.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gio/gio.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

/* srtpdec's documentation example: key, SSRC and payload type */
#define KEY "012345678901234567890123456789012345678901234567890123456789"
#define WRONG_KEY "112345678901234567890123456789012345678901234567890123456789"
#define SSRC 1356955624u
#define N_BUFFERS 25
#define SAMPLES 160
/* alawdec's S16 mono out of N_BUFFERS buffers of SAMPLES samples */
#define AUDIO_BYTES (N_BUFFERS * SAMPLES * 2)

/* The receiver's source caps, as in the srtpdec example: no media, no
 * clock-rate (the depayloader tells them). */
static gchar *
partial_caps_string (const gchar * key)
{
  return g_strdup_printf ("application/x-srtp, payload=(int)8, "
      "ssrc=(uint)%u, srtp-key=(buffer)%s, srtp-cipher=(string)aes-128-icm, "
      "srtp-auth=(string)hmac-sha1-80, srtcp-cipher=(string)aes-128-icm, "
      "srtcp-auth=(string)hmac-sha1-80", SSRC, key);
}

/* caps to print in a failure: without the key */
static gchar *
caps_str (const GstCaps * caps)
{
  GstCaps *c;
  gchar *s;
  guint i;

  if (!caps)
    return g_strdup ("(none)");
  c = gst_caps_copy (caps);
  for (i = 0; i < gst_caps_get_size (c); i++)
    gst_structure_remove_field (gst_caps_get_structure (c, i), "srtp-key");
  s = gst_caps_to_string (c);
  gst_caps_unref (c);
  return s;
}

static gboolean
have_element (const gchar * name)
{
  GstElementFactory *f = gst_element_factory_find (name);

  if (!f)
    return FALSE;
  gst_object_unref (f);
  return TRUE;
}

/* The peers every test here runs against: not a test of ours without them. */
static void
require_peers (void)
{
  const gchar *need[] = { "srtpenc", "srtpdec", "rtppcmapay", "rtppcmadepay",
    "alawenc", "alawdec", "appsrc", "appsink", "udpsrc", "audiotestsrc",
    "gpusrtpenc", "gpusrtpdec"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (need); i++)
    fail_unless (have_element (need[i]), "element %s missing", need[i]);
}

static GstElement *
make (const gchar * factory, const gchar * name)
{
  GstElement *e = gst_element_factory_make (factory, name);

  fail_unless (e != NULL, "cannot make %s", factory);
  return e;
}

static GstElement *
capsfilter (const gchar * caps)
{
  GstElement *cf = make ("capsfilter", NULL);
  GstCaps *c = gst_caps_from_string (caps);

  g_object_set (cf, "caps", c, NULL);
  gst_caps_unref (c);
  return cf;
}

static void
link_pads (GstPad * src, GstElement * sink)
{
  GstPad *sp = gst_element_get_static_pad (sink, "sink");

  fail_unless_equals_int (gst_pad_link (src, sp), GST_PAD_LINK_OK);
  gst_object_unref (sp);
}

/* ---- what each pad answers ---- */

/* One query's answer: caps (CAPS) or a verdict (ACCEPT_CAPS). */
typedef struct
{
  gchar *what;
  GstCaps *caps;
  gboolean accepted;
} Answer;

static void
answer_clear (gpointer data)
{
  Answer *a = data;

  g_free (a->what);
  gst_clear_caps (&a->caps);
}

static GArray *
answers_new (void)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (Answer));

  g_array_set_clear_func (a, answer_clear);
  return a;
}

static void
ask_caps (GArray * out, GstElement * e, const gchar * pad_name,
    const gchar * filter)
{
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstCaps *f = filter ? gst_caps_from_string (filter) : NULL;
  Answer a = { NULL, NULL, FALSE };

  fail_unless (pad != NULL, "no pad %s", pad_name);
  a.what = g_strdup_printf ("%s CAPS filter %s", pad_name,
      filter ? filter : "none");
  a.caps = gst_pad_query_caps (pad, f);
  fail_unless (a.caps != NULL);
  g_array_append_val (out, a);
  gst_clear_caps (&f);
  gst_object_unref (pad);
}

static void
ask_accept (GArray * out, GstElement * e, const gchar * pad_name,
    const gchar * caps)
{
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstCaps *c = gst_caps_from_string (caps);
  Answer a = { NULL, NULL, FALSE };

  fail_unless (pad != NULL, "no pad %s", pad_name);
  fail_unless (c != NULL, "bad caps %s", caps);
  a.what = g_strdup_printf ("%s ACCEPT_CAPS %s", pad_name, caps);
  a.accepted = gst_pad_query_accept_caps (pad, c);
  g_array_append_val (out, a);
  gst_caps_unref (c);
  gst_object_unref (pad);
}

/* The same questions to ours as to theirs, the same answers. */
static void
compare_answers (GArray * theirs, GArray * ours, const gchar * their_name,
    const gchar * our_name)
{
  guint i;

  fail_unless_equals_int (theirs->len, ours->len);
  for (i = 0; i < theirs->len; i++) {
    Answer *t = &g_array_index (theirs, Answer, i);
    Answer *o = &g_array_index (ours, Answer, i);

    if (t->caps) {
      gchar *ts = caps_str (t->caps), *os = caps_str (o->caps);

      fail_unless (gst_caps_is_equal (t->caps, o->caps),
          "%s: %s answers %s, %s answers %s", t->what, their_name, ts,
          our_name, os);
      g_free (ts);
      g_free (os);
    } else {
      fail_unless (t->accepted == o->accepted, "%s: %s says %d, %s says %d",
          t->what, their_name, t->accepted, our_name, o->accepted);
    }
  }
}

static Answer *
answer (GArray * a, guint i)
{
  return &g_array_index (a, Answer, i);
}

/* First structure of caps, with a name and an int field. */
static void
assert_first (const GstCaps * caps, const gchar * name, const gchar * field,
    gint value)
{
  const GstStructure *s;
  gint v = -1;
  gchar *str = caps_str (caps);

  fail_unless (!gst_caps_is_empty (caps) && !gst_caps_is_any (caps),
      "caps %s", str);
  s = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_has_name (s, name), "%s is not %s", str, name);
  if (field)
    fail_unless (gst_structure_get_int (s, field, &v) && v == value,
        "%s: %s is not %d", str, field, value);
  g_free (str);
}

/* A decoder (in NULL: queries need no state) with rtppcmadepay after
 * rtp_src and a capsfilter application/x-rtcp, test-field=5 after
 * rtcp_src; the answers of its four pads. */
static GArray *
dec_answers (const gchar * factory)
{
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *d = make (factory, "d"), *depay = make ("rtppcmadepay", NULL);
  GstElement *cf = capsfilter ("application/x-rtcp, test-field=(int)5");
  GstElement *fs1 = make ("fakesink", NULL), *fs2 = make ("fakesink", NULL);
  GArray *a = answers_new ();
  gchar *partial = partial_caps_string (KEY), *full, *wrong_pt;
  GstPad *p;

  gst_bin_add_many (GST_BIN (pipe), d, depay, cf, fs1, fs2, NULL);
  p = gst_element_get_static_pad (d, "rtp_src");
  link_pads (p, depay);
  gst_object_unref (p);
  p = gst_element_get_static_pad (d, "rtcp_src");
  link_pads (p, cf);
  gst_object_unref (p);
  fail_unless (gst_element_link (depay, fs1));
  fail_unless (gst_element_link (cf, fs2));

  full = g_strdup_printf ("%s, media=(string)audio, clock-rate=(int)8000",
      partial);
  wrong_pt = g_strdup_printf ("application/x-srtp, payload=(int)0, "
      "media=(string)audio, clock-rate=(int)8000, ssrc=(uint)%u", SSRC);

  ask_caps (a, d, "rtp_sink", NULL);    /* 0 */
  ask_caps (a, d, "rtp_sink", partial); /* 1 */
  ask_caps (a, d, "rtp_sink", "application/x-srtp, payload=(int)0");    /* 2 */
  ask_caps (a, d, "rtcp_sink", NULL);   /* 3 */
  ask_caps (a, d, "rtcp_sink", "application/x-srtcp, "  /* 4 */
      "srtcp-cipher=(string)aes-128-icm, test-field=(int)[1, 10]");
  ask_caps (a, d, "rtp_src", NULL);     /* 5 */
  ask_caps (a, d, "rtp_src", "application/x-rtp, payload=(int)8");      /* 6 */
  ask_caps (a, d, "rtcp_src", NULL);    /* 7 */
  ask_accept (a, d, "rtp_sink", full);  /* 8 */
  ask_accept (a, d, "rtp_sink", wrong_pt);      /* 9 */
  ask_accept (a, d, "rtp_sink", partial);       /* 10 */
  ask_accept (a, d, "rtcp_sink", "application/x-srtcp, test-field=(int)5");
  ask_accept (a, d, "rtcp_sink", "application/x-srtcp, test-field=(int)6");
  ask_accept (a, d, "rtp_src", "application/x-rtp, payload=(int)8");
  ask_accept (a, d, "rtp_src", "application/x-srtp");
  ask_accept (a, d, "rtcp_src", "application/x-rtcp");  /* 15 */
  ask_accept (a, d, "rtcp_src", "application/x-srtcp");

  g_free (partial);
  g_free (full);
  g_free (wrong_pt);
  gst_object_unref (pipe);
  return a;
}

GST_START_TEST (test_dec_pad_queries)
{
  GArray *theirs, *ours;
  const GstStructure *s;

  require_peers ();
  theirs = dec_answers ("srtpdec");
  ours = dec_answers ("gpusrtpdec");
  compare_answers (theirs, ours, "srtpdec", "gpusrtpdec");

  /* and what they are: downstream's caps renamed on the sink pads */
  assert_first (answer (ours, 0)->caps, "application/x-srtp", "clock-rate",
      8000);
  s = gst_caps_get_structure (answer (ours, 1)->caps, 0);
  fail_unless (gst_structure_has_field (s, "srtp-key"));
  fail_unless_equals_string (gst_structure_get_string (s, "media"), "audio");
  assert_first (answer (ours, 1)->caps, "application/x-srtp", "clock-rate",
      8000);
  assert_first (answer (ours, 1)->caps, "application/x-srtp", "payload", 8);
  /* payload 0: only by encoding-name */
  s = gst_caps_get_structure (answer (ours, 2)->caps, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "encoding-name"),
      "PCMA");
  assert_first (answer (ours, 3)->caps, "application/x-srtcp", "test-field",
      5);
  s = gst_caps_get_structure (answer (ours, 4)->caps, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "srtcp-cipher"),
      "aes-128-icm");
  assert_first (answer (ours, 4)->caps, "application/x-srtcp", "test-field",
      5);
  /* the source pads: their template */
  assert_first (answer (ours, 5)->caps, "application/x-rtp", NULL, 0);
  assert_first (answer (ours, 7)->caps, "application/x-rtcp", NULL, 0);
  fail_unless (answer (ours, 8)->accepted);
  fail_if (answer (ours, 9)->accepted);
  fail_unless (answer (ours, 11)->accepted);
  fail_if (answer (ours, 12)->accepted);
  fail_unless (answer (ours, 13)->accepted);
  fail_if (answer (ours, 14)->accepted);
  fail_unless (answer (ours, 15)->accepted);
  fail_if (answer (ours, 16)->accepted);

  g_array_unref (theirs);
  g_array_unref (ours);
}

GST_END_TEST;

/* An encoder (NULL state) with rtp_sink_0 / rtcp_sink_0 requested, a
 * capsfilter application/x-srtp, payload=96 after rtp_src_0 and
 * application/x-srtcp, test-field=5 after rtcp_src_0. */
static GArray *
enc_answers (const gchar * factory)
{
  GstElement *pipe = gst_pipeline_new (NULL);
  GstElement *e = make (factory, "e");
  GstElement *cf1 = capsfilter ("application/x-srtp, payload=(int)96");
  GstElement *cf2 = capsfilter ("application/x-srtcp, test-field=(int)5");
  GstElement *fs1 = make ("fakesink", NULL), *fs2 = make ("fakesink", NULL);
  GstPad *rtp_sink, *rtcp_sink, *p;
  GArray *a = answers_new ();

  gst_bin_add_many (GST_BIN (pipe), e, cf1, cf2, fs1, fs2, NULL);
  /* (by name: srtpenc names a pad asked for by template "pad0") */
  rtp_sink = gst_element_request_pad_simple (e, "rtp_sink_0");
  rtcp_sink = gst_element_request_pad_simple (e, "rtcp_sink_0");
  fail_unless (rtp_sink && rtcp_sink);
  fail_unless_equals_string (GST_PAD_NAME (rtp_sink), "rtp_sink_0");
  fail_unless_equals_string (GST_PAD_NAME (rtcp_sink), "rtcp_sink_0");
  p = gst_element_get_static_pad (e, "rtp_src_0");
  fail_unless (p != NULL);
  link_pads (p, cf1);
  gst_object_unref (p);
  p = gst_element_get_static_pad (e, "rtcp_src_0");
  fail_unless (p != NULL);
  link_pads (p, cf2);
  gst_object_unref (p);
  fail_unless (gst_element_link (cf1, fs1));
  fail_unless (gst_element_link (cf2, fs2));

  ask_caps (a, e, "rtp_sink_0", NULL);  /* 0 */
  ask_caps (a, e, "rtp_sink_0", "application/x-rtp, media=(string)video, "
      "payload=(int)[90, 100], clock-rate=(int)90000, ssrc=(uint)5");   /* 1 */
  ask_caps (a, e, "rtp_sink_0", "application/x-rtp, payload=(int)8");   /* 2 */
  ask_caps (a, e, "rtcp_sink_0", NULL); /* 3 */
  ask_caps (a, e, "rtp_src_0", NULL);   /* 4 */
  ask_caps (a, e, "rtp_src_0", "application/x-srtp, payload=(int)8");   /* 5 */
  ask_caps (a, e, "rtcp_src_0", NULL);  /* 6 */
  ask_accept (a, e, "rtp_sink_0", "application/x-rtp, payload=(int)96");
  ask_accept (a, e, "rtp_sink_0", "application/x-rtp, payload=(int)8");
  ask_accept (a, e, "rtcp_sink_0", "application/x-rtcp, test-field=(int)5");
  ask_accept (a, e, "rtcp_sink_0", "application/x-rtcp");       /* 10 */
  ask_accept (a, e, "rtp_src_0", "application/x-srtp, payload=(int)8");
  ask_accept (a, e, "rtp_src_0", "application/x-rtp");
  ask_accept (a, e, "rtcp_src_0", "application/x-srtcp");
  ask_accept (a, e, "rtcp_src_0", "application/x-rtcp");        /* 14 */

  gst_element_release_request_pad (e, rtp_sink);
  gst_element_release_request_pad (e, rtcp_sink);
  gst_object_unref (rtp_sink);
  gst_object_unref (rtcp_sink);
  gst_object_unref (pipe);
  return a;
}

GST_START_TEST (test_enc_pad_queries)
{
  GArray *theirs, *ours;
  const GstStructure *s;

  require_peers ();
  theirs = enc_answers ("srtpenc");
  ours = enc_answers ("gpusrtpenc");
  compare_answers (theirs, ours, "srtpenc", "gpusrtpenc");

  /* downstream's caps renamed on the sink pads */
  assert_first (answer (ours, 0)->caps, "application/x-rtp", "payload", 96);
  assert_first (answer (ours, 1)->caps, "application/x-rtp", "payload", 96);
  s = gst_caps_get_structure (answer (ours, 1)->caps, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "media"), "video");
  fail_unless (gst_caps_is_empty (answer (ours, 2)->caps));
  assert_first (answer (ours, 3)->caps, "application/x-rtcp", "test-field",
      5);
  assert_first (answer (ours, 4)->caps, "application/x-srtp", NULL, 0);
  assert_first (answer (ours, 6)->caps, "application/x-srtcp", NULL, 0);
  fail_unless (answer (ours, 7)->accepted);
  fail_if (answer (ours, 8)->accepted);
  fail_unless (answer (ours, 9)->accepted);
  fail_if (answer (ours, 10)->accepted);
  fail_unless (answer (ours, 11)->accepted);
  fail_if (answer (ours, 12)->accepted);
  fail_unless (answer (ours, 13)->accepted);
  fail_if (answer (ours, 14)->accepted);

  g_array_unref (theirs);
  g_array_unref (ours);
}

GST_END_TEST;

/* ---- a sender and receivers ---- */

/* srtpdec's example sender (with N_BUFFERS buffers): its SRTP packets, and
 * the caps the encoder's source pad sent. */
static GPtrArray *
send_packets (const gchar * enc, GstCaps ** caps_out)
{
  gchar *desc = g_strdup_printf ("audiotestsrc num-buffers=%d "
      "samplesperbuffer=%d ! alawenc ! rtppcmapay ssrc=%u timestamp-offset=0 "
      "seqnum-offset=0 ! %s key=%s ! "
      "appsink name=o sync=false wait-on-eos=false", N_BUFFERS, SAMPLES,
      SSRC, enc, KEY);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstElement *o;
  GstBus *bus;
  GstMessage *msg;
  GstSample *sample;
  GPtrArray *pkts = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);

  fail_unless (pipe && !err, "%s: %s", desc, err ? err->message : "?");
  o = gst_bin_get_by_name (GST_BIN (pipe), "o");
  bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "sender %s did not finish", enc);
  gst_message_unref (msg);
  *caps_out = NULL;
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (o), 0))) {
    GstBuffer *b = gst_sample_get_buffer (sample);
    GstMapInfo map;

    if (!*caps_out)
      *caps_out = gst_caps_ref (gst_sample_get_caps (sample));
    gst_buffer_map (b, &map, GST_MAP_READ);
    g_ptr_array_add (pkts, g_bytes_new (map.data, map.size));
    gst_buffer_unmap (b, &map);
    gst_sample_unref (sample);
  }
  fail_unless (pkts->len > 0);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (o);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_free (desc);
  return pkts;
}

typedef struct
{
  GstCaps *up_caps;             /* what the source negotiated */
  GstCaps *dec_caps;            /* the decoder's rtp_src caps */
  GstCaps *src_answer;          /* rtp_src's CAPS answer once negotiated */
  GstCaps *out_caps;            /* the sink's */
  GByteArray *audio;
  GPtrArray *warnings;          /* the decoder's WARNING texts */
  GPtrArray *warning_debugs;
  GPtrArray *drops;             /* its gpusrtpdec-packets-dropped */
  gboolean eos;
  gchar *error;
  gint64 wall_us;
} Recv;

static void
recv_clear (Recv * r)
{
  gst_clear_caps (&r->up_caps);
  gst_clear_caps (&r->dec_caps);
  gst_clear_caps (&r->src_answer);
  gst_clear_caps (&r->out_caps);
  g_byte_array_unref (r->audio);
  g_ptr_array_unref (r->warnings);
  g_ptr_array_unref (r->warning_debugs);
  g_ptr_array_unref (r->drops);
  g_free (r->error);
}

static void
recv_message (Recv * r, GstMessage * msg, GstElement * d)
{
  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_EOS:
      r->eos = TRUE;
      break;
    case GST_MESSAGE_ERROR:{
      GError *err = NULL;

      gst_message_parse_error (msg, &err, NULL);
      if (!r->error)
        r->error = g_strdup (err->message);
      g_clear_error (&err);
      break;
    }
    case GST_MESSAGE_WARNING:{
      GError *err = NULL;
      gchar *dbg = NULL;

      if (GST_MESSAGE_SRC (msg) != GST_OBJECT (d))
        break;
      gst_message_parse_warning (msg, &err, &dbg);
      g_ptr_array_add (r->warnings, g_strdup (err->message));
      g_ptr_array_add (r->warning_debugs, dbg ? dbg : g_strdup (""));
      g_clear_error (&err);
      break;
    }
    case GST_MESSAGE_ELEMENT:{
      const GstStructure *s = gst_message_get_structure (msg);

      if (GST_MESSAGE_SRC (msg) == GST_OBJECT (d) &&
          gst_structure_has_name (s, "gpusrtpdec-packets-dropped"))
        g_ptr_array_add (r->drops, gst_structure_copy (s));
      break;
    }
    default:
      break;
  }
}

static void
recv_pull (Recv * r, GstElement * o)
{
  GstSample *sample;

  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (o), 0))) {
    GstBuffer *b = gst_sample_get_buffer (sample);
    GstMapInfo map;

    gst_caps_replace (&r->out_caps, gst_sample_get_caps (sample));
    gst_buffer_map (b, &map, GST_MAP_READ);
    g_byte_array_append (r->audio, map.data, map.size);
    gst_buffer_unmap (b, &map);
    gst_sample_unref (sample);
  }
}

/* Sends pkts to udpsrc's port on 127.0.0.1. */
static void
send_udp (GstElement * src, GPtrArray * pkts)
{
  GSocket *used = NULL, *out;
  GSocketAddress *local, *to;
  GError *err = NULL;
  guint i;

  g_object_get (src, "used-socket", &used, NULL);
  fail_unless (used != NULL, "udpsrc has no socket");
  local = g_socket_get_local_address (used, &err);
  fail_unless (local != NULL, "%s", err ? err->message : "?");
  to = g_inet_socket_address_new_from_string ("127.0.0.1",
      g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (local)));
  out = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_DATAGRAM,
      G_SOCKET_PROTOCOL_UDP, &err);
  fail_unless (out != NULL, "%s", err ? err->message : "?");
  for (i = 0; i < pkts->len; i++) {
    gsize sz;
    const gchar *d = g_bytes_get_data (pkts->pdata[i], &sz);

    fail_unless_equals_int (g_socket_send_to (out, to, d, sz, NULL, &err),
        (gssize) sz);
    g_usleep (500);             /* (the socket's buffer is udpsrc's) */
  }
  g_object_unref (out);
  g_object_unref (to);
  g_object_unref (local);
  g_object_unref (used);
}

/* srtpdec's example receiver with dec: udpsrc on loopback with the partial
 * caps (until all the audio is there), or appsrc (to EOS) with media and
 * clock-rate added, since appsrc sends its caps as they are, without asking
 * downstream. */
static void
run_receiver (Recv * r, const gchar * dec, gboolean udp, const gchar * key,
    GPtrArray * pkts)
{
  gchar *partial = partial_caps_string (key);
  gchar *caps = udp ? g_strdup (partial) : g_strdup_printf ("%s, "
      "media=(string)audio, clock-rate=(int)8000", partial);
  gchar *desc = g_strdup_printf ("%s name=s caps=\"%s\" ! %s name=d ! "
      "rtppcmadepay ! alawdec ! appsink name=o sync=false",
      udp ? "udpsrc address=127.0.0.1 port=0" : "appsrc format=time",
      caps, dec);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err), *s, *d, *o;
  GstPad *up, *dsrc;
  GstBus *bus;
  gint64 start, end;
  guint i;

  memset (r, 0, sizeof *r);
  r->audio = g_byte_array_new ();
  r->warnings = g_ptr_array_new_with_free_func (g_free);
  r->warning_debugs = g_ptr_array_new_with_free_func (g_free);
  r->drops = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
  fail_unless (pipe && !err, "receiver: %s", err ? err->message : "?");
  s = gst_bin_get_by_name (GST_BIN (pipe), "s");
  d = gst_bin_get_by_name (GST_BIN (pipe), "d");
  o = gst_bin_get_by_name (GST_BIN (pipe), "o");
  up = gst_element_get_static_pad (s, "src");
  dsrc = gst_element_get_static_pad (d, "rtp_src");
  bus = gst_element_get_bus (pipe);

  start = g_get_monotonic_time ();
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  if (udp) {
    send_udp (s, pkts);
  } else {
    for (i = 0; i < pkts->len; i++) {
      gsize sz;
      const guint8 *data = g_bytes_get_data (pkts->pdata[i], &sz);
      GstBuffer *b = gst_buffer_new_memdup (data, sz);

      GST_BUFFER_PTS (b) = i * 20 * GST_MSECOND;
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s), b),
          GST_FLOW_OK);
    }
    gst_app_src_end_of_stream (GST_APP_SRC (s));
  }
  end = g_get_monotonic_time () + 20 * G_TIME_SPAN_SECOND;
  while (g_get_monotonic_time () < end && !r->error && !r->eos &&
      !(udp && r->audio->len >= AUDIO_BYTES)) {
    GstMessage *msg = gst_bus_timed_pop (bus, 20 * GST_MSECOND);

    if (msg) {
      recv_message (r, msg, d);
      gst_message_unref (msg);
    }
    recv_pull (r, o);
    if (!r->src_answer && gst_pad_has_current_caps (dsrc))
      r->src_answer = gst_pad_query_caps (dsrc, NULL);
  }
  r->wall_us = g_get_monotonic_time () - start;
  recv_pull (r, o);
  r->up_caps = gst_pad_get_current_caps (up);
  r->dec_caps = gst_pad_get_current_caps (dsrc);
  if (!r->src_answer && r->dec_caps)
    r->src_answer = gst_pad_query_caps (dsrc, NULL);
  gst_element_set_state (pipe, GST_STATE_NULL);
  /* what was posted before the stop */
  {
    GstMessage *msg;

    while ((msg = gst_bus_pop (bus))) {
      recv_message (r, msg, d);
      gst_message_unref (msg);
    }
  }
  gst_object_unref (bus);
  gst_object_unref (up);
  gst_object_unref (dsrc);
  gst_object_unref (s);
  gst_object_unref (d);
  gst_object_unref (o);
  gst_object_unref (pipe);
  g_free (desc);
  g_free (caps);
  g_free (partial);
}

static void
assert_caps_equal (const GstCaps * a, const GstCaps * b, const gchar * what)
{
  gchar *as = caps_str (a), *bs = caps_str (b);

  fail_unless (a && b && gst_caps_is_equal (a, b), "%s: srtpdec %s, "
      "gpusrtpdec %s", what, as, bs);
  g_free (as);
  g_free (bs);
}

/* The srtpdec example (udpsrc on loopback, its caps without media and
 * clock-rate) through srtpdec and gpusrtpdec: the same caps negotiated on
 * every link, and all the audio decoded, the same bytes. */
GST_START_TEST (test_partial_caps_receiver)
{
  GstCaps *enc_caps;
  GPtrArray *pkts;
  Recv theirs, ours;
  const GstStructure *st;
  gint rate = 0;

  require_peers ();
  pkts = send_packets ("srtpenc", &enc_caps);
  run_receiver (&theirs, "srtpdec", TRUE, KEY, pkts);
  run_receiver (&ours, "gpusrtpdec", TRUE, KEY, pkts);

  fail_unless (theirs.error == NULL, "srtpdec: %s", theirs.error);
  fail_unless (ours.error == NULL, "gpusrtpdec: %s", ours.error);
  fail_unless_equals_int (theirs.audio->len, AUDIO_BYTES);
  fail_unless_equals_int (ours.audio->len, AUDIO_BYTES);
  fail_unless (memcmp (theirs.audio->data, ours.audio->data,
          AUDIO_BYTES) == 0, "gpusrtpdec decoded other audio than srtpdec");

  /* the source learnt media and clock-rate from the depayloader */
  fail_unless (ours.up_caps != NULL);
  st = gst_caps_get_structure (ours.up_caps, 0);
  fail_unless (gst_structure_has_name (st, "application/x-srtp"));
  fail_unless_equals_string (gst_structure_get_string (st, "media"), "audio");
  fail_unless (gst_structure_get_int (st, "clock-rate", &rate));
  fail_unless_equals_int (rate, 8000);
  assert_caps_equal (theirs.up_caps, ours.up_caps, "source caps");
  assert_caps_equal (theirs.dec_caps, ours.dec_caps, "decoder rtp_src caps");
  assert_caps_equal (theirs.src_answer, ours.src_answer,
      "rtp_src CAPS answer while negotiated");
  assert_caps_equal (theirs.out_caps, ours.out_caps, "decoded audio caps");
  st = gst_caps_get_structure (ours.dec_caps, 0);
  fail_unless (gst_structure_has_name (st, "application/x-rtp"));
  fail_if (gst_structure_has_field (st, "srtp-key"));
  fail_unless (ours.warnings->len == 0, "right key, warning: %s",
      ours.warnings->len ? (gchar *) ours.warnings->pdata[0] : "");
  fail_unless_equals_int (ours.drops->len, 0);

  recv_clear (&theirs);
  recv_clear (&ours);
  gst_caps_unref (enc_caps);
  g_ptr_array_unref (pkts);
}

GST_END_TEST;

/* What srtpenc and gpusrtpenc send downstream in the example sender, and
 * gpusrtpdec decodes gpusrtpenc's packets in the partial-caps receiver. */
GST_START_TEST (test_sender_caps)
{
  GstCaps *theirs, *ours;
  GPtrArray *p1, *p2;
  Recv r;
  gchar *ts, *os;

  require_peers ();
  p1 = send_packets ("srtpenc", &theirs);
  p2 = send_packets ("gpusrtpenc", &ours);
  ts = caps_str (theirs);
  os = caps_str (ours);
  fail_unless (gst_caps_is_equal (theirs, ours), "srtpenc sends %s, "
      "gpusrtpenc sends %s", ts, os);
  fail_unless_equals_int (p1->len, p2->len);

  run_receiver (&r, "gpusrtpdec", FALSE, KEY, p2);
  fail_unless (r.error == NULL, "%s", r.error);
  fail_unless_equals_int (r.audio->len, AUDIO_BYTES);
  recv_clear (&r);
  g_free (ts);
  g_free (os);
  gst_caps_unref (theirs);
  gst_caps_unref (ours);
  g_ptr_array_unref (p1);
  g_ptr_array_unref (p2);
}

GST_END_TEST;

/* ---- drops on the bus ---- */

static guint64
drop_field (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "no %s", field);
  return v;
}

/* A wrong key: WARNINGs naming the SSRC, the reason and how many, at most
 * one a second plus one at EOS, their counts adding up to every packet;
 * the element messages say the same in fields. Never the key. */
GST_START_TEST (test_wrong_key_warns)
{
  GstCaps *enc_caps;
  GPtrArray *pkts;
  Recv r;
  guint i;
  guint64 sum_msg = 0, sum_text = 0;
  gchar ssrc_hex[16];

  require_peers ();
  g_snprintf (ssrc_hex, sizeof ssrc_hex, "0x%08x", SSRC);
  pkts = send_packets ("srtpenc", &enc_caps);
  run_receiver (&r, "gpusrtpdec", FALSE, WRONG_KEY, pkts);
  fail_unless (r.error == NULL, "%s", r.error);
  fail_unless (r.eos);
  fail_unless_equals_int (r.audio->len, 0);

  fail_unless (r.warnings->len >= 1, "a wrong key and no warning");
  /* the first at once, then at most one a second, and one at EOS */
  fail_unless (r.warnings->len <= 2 + r.wall_us / G_USEC_PER_SEC,
      "%u warnings in %" G_GINT64_FORMAT " us", r.warnings->len, r.wall_us);
  fail_unless_equals_int (r.drops->len, r.warnings->len);
  for (i = 0; i < r.warnings->len; i++) {
    const gchar *w = r.warnings->pdata[i];
    const gchar *dbg = r.warning_debugs->pdata[i];
    const GstStructure *s = r.drops->pdata[i];
    const gchar *at = strstr (w, "authentication failed for ");
    guint64 n = 0, count = drop_field (s, "count");
    guint ssrc = 0;

    GST_INFO ("warning: %s (%s)", w, dbg);
    fail_unless (at != NULL, "warning '%s'", w);
    n = g_ascii_strtoull (at + strlen ("authentication failed for "), NULL,
        10);
    fail_unless (n > 0, "warning '%s'", w);
    fail_unless (strstr (w, ssrc_hex) != NULL, "no SSRC in '%s'", w);
    fail_unless (g_str_has_suffix (w, ": wrong key?"), "warning '%s'", w);
    fail_if (strstr (w, KEY) || strstr (w, WRONG_KEY) || strstr (dbg, KEY) ||
        strstr (dbg, WRONG_KEY), "a key in '%s' / '%s'", w, dbg);
    /* the element message of the same report */
    fail_unless (gst_structure_get_uint (s, "ssrc", &ssrc));
    fail_unless_equals_int (ssrc, SSRC);
    fail_unless_equals_uint64 (count, n);
    fail_unless_equals_uint64 (drop_field (s, "auth-fail-count"), n);
    fail_unless_equals_uint64 (drop_field (s, "replay-count"), 0);
    fail_unless_equals_uint64 (drop_field (s, "unknown-ssrc-count"), 0);
    fail_unless_equals_string (gst_structure_get_string (s, "reason"), w);
    sum_text += n;
    sum_msg += count;
  }
  fail_unless_equals_uint64 (sum_text, pkts->len);
  fail_unless_equals_uint64 (sum_msg, pkts->len);

  recv_clear (&r);
  gst_caps_unref (enc_caps);
  g_ptr_array_unref (pkts);
}

GST_END_TEST;

/* Every packet twice, the right key: the copies are replays, counted in an
 * element message, and no WARNING (duplicates on the path are no fault). */
GST_START_TEST (test_replays_no_warning)
{
  GstCaps *enc_caps;
  GPtrArray *pkts, *twice;
  Recv r;
  guint i;
  guint64 replays = 0;

  require_peers ();
  pkts = send_packets ("srtpenc", &enc_caps);
  twice = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (i = 0; i < pkts->len; i++) {
    g_ptr_array_add (twice, g_bytes_ref (pkts->pdata[i]));
    g_ptr_array_add (twice, g_bytes_ref (pkts->pdata[i]));
  }
  run_receiver (&r, "gpusrtpdec", FALSE, KEY, twice);
  fail_unless (r.error == NULL, "%s", r.error);
  fail_unless_equals_int (r.audio->len, AUDIO_BYTES);
  fail_unless (r.warnings->len == 0, "replays, warning: %s",
      r.warnings->len ? (gchar *) r.warnings->pdata[0] : "");
  fail_unless (r.drops->len >= 1);
  for (i = 0; i < r.drops->len; i++) {
    const GstStructure *s = r.drops->pdata[i];

    fail_unless_equals_uint64 (drop_field (s, "auth-fail-count"), 0);
    fail_unless_equals_uint64 (drop_field (s, "count"),
        drop_field (s, "replay-count"));
    replays += drop_field (s, "replay-count");
  }
  fail_unless_equals_uint64 (replays, pkts->len);

  recv_clear (&r);
  gst_caps_unref (enc_caps);
  g_ptr_array_unref (pkts);
  g_ptr_array_unref (twice);
}

GST_END_TEST;

static Suite *
srtpdropin_suite (void)
{
  Suite *s = suite_create ("srtpdropin");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 90);
  tcase_add_test (tc, test_dec_pad_queries);
  tcase_add_test (tc, test_enc_pad_queries);
  tcase_add_test (tc, test_partial_caps_receiver);
  tcase_add_test (tc, test_sender_caps);
  tcase_add_test (tc, test_wrong_key_warns);
  tcase_add_test (tc, test_replays_no_warning);
  return s;
}

GST_CHECK_MAIN (srtpdropin);
