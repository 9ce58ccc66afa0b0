/* rtpncpay / rtpncdepay: the coded stream over RTP, in process. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

static GBytes *
random_bytes (gsize size, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  guint8 *d = g_malloc (size);
  gsize i;

  for (i = 0; i < size; i++)
    d[i] = g_rand_int (rand);
  g_rand_free (rand);
  return g_bytes_new_take (d, size);
}

/* Drops RTP packets with a seeded GRand, in a pad probe. */
static GstPadProbeReturn
drop_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GRand *rand = user_data;
  return g_rand_double (rand) < 0.1 ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
}

static void
run_pipeline (const gchar * enc_props, gboolean with_loss)
{
  GBytes *in = random_bytes (400000, 1);
  gchar *desc = g_strdup_printf ("appsrc name=src format=bytes ! ncencoder %s "
      "! rtpncpay name=pay ! rtpncdepay name=depay ! ncdecoder name=dec ! "
      "appsink name=sink sync=false", enc_props);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstElement *depay = gst_bin_get_by_name (GST_BIN (pipe), "depay");
  GstElement *dec = gst_bin_get_by_name (GST_BIN (pipe), "dec");
  GRand *rand = g_rand_new_with_seed (7);
  GByteArray *out = g_byte_array_new ();
  GstStructure *stats;
  GstSample *sample;
  GstPad *pad;
  guint64 lost = 1;
  gsize off;

  fail_unless (pipe != NULL);
  if (with_loss) {
    pad = gst_element_get_static_pad (depay, "sink");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, drop_probe, rand, NULL);
    gst_object_unref (pad);
  }
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (off = 0; off < g_bytes_get_size (in); off += 10000) {
    GBytes *part = g_bytes_new_from_bytes (in, off,
        MIN (10000, g_bytes_get_size (in) - off));
    gst_app_src_push_buffer (GST_APP_SRC (src),
        gst_buffer_new_wrapped_bytes (part));
    g_bytes_unref (part);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    GstMapInfo map;
    GstBuffer *b = gst_sample_get_buffer (sample);
    gst_buffer_map (b, &map, GST_MAP_READ);
    g_byte_array_append (out, map.data, map.size);
    gst_buffer_unmap (b, &map);
    gst_sample_unref (sample);
  }
  g_object_get (dec, "stats", &stats, NULL);
  gst_structure_get_uint64 (stats, "generations-lost", &lost);
  fail_unless_equals_uint64 (lost, 0);
  gst_structure_free (stats);
  fail_unless_equals_uint64 (out->len, g_bytes_get_size (in));
  fail_unless (memcmp (out->data, g_bytes_get_data (in, NULL), out->len) == 0);

  gst_element_set_state (pipe, GST_STATE_NULL);
  g_byte_array_unref (out);
  g_rand_free (rand);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (depay);
  gst_object_unref (dec);
  gst_object_unref (pipe);
  g_free (desc);
  g_bytes_unref (in);
}

GST_START_TEST (test_rtp_round_trip)
{
  run_pipeline ("generation-size=16 block-size=1000", FALSE);
  run_pipeline ("generation-size=16 block-size=1000 coefficients=vector "
      "systematic=false redundancy-percent=50", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rtp_caps)
{
  GstHarness *h = gst_harness_new ("rtpncpay");
  GstHarness *d = gst_harness_new ("rtpncdepay");
  GstCaps *caps;
  GstStructure *s;
  gint v;

  gst_harness_set_src_caps_str (h, "application/x-rlnc, generation-size=32, "
      "block-size=1316, coefficients=seed");
  gst_harness_push (h, gst_buffer_new_allocate (NULL, 24 + 1316, NULL));
  caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (caps != NULL);
  s = gst_caps_get_structure (caps, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "encoding-name"),
      "X-RLNC");
  fail_unless_equals_string (gst_structure_get_string (s,
          "sprop-generation-size"), "32");
  fail_unless_equals_string (gst_structure_get_string (s, "sprop-block-size"),
      "1316");
  fail_unless (gst_structure_get_int (s, "payload", &v) && v == 96);
  fail_unless (gst_structure_get_int (s, "clock-rate", &v) && v == 90000);

  /* the depayloader turns the sprop fields back into m / k */
  gst_harness_set_src_caps (d, caps);
  gst_harness_push (d, gst_harness_pull (h));
  caps = gst_pad_get_current_caps (d->sinkpad);
  s = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_has_name (s, "application/x-rlnc"));
  fail_unless (gst_structure_get_int (s, "generation-size", &v) && v == 32);
  fail_unless (gst_structure_get_int (s, "block-size", &v) && v == 1316);
  gst_caps_unref (caps);
  gst_buffer_unref (gst_harness_pull (d));

  gst_harness_teardown (h);
  gst_harness_teardown (d);
}

GST_END_TEST;

GST_START_TEST (test_mtu_refused)
{
  GstHarness *h = gst_harness_new ("rtpncpay");
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;

  gst_element_set_bus (h->element, bus);
  g_object_set (h->element, "mtu", 1000, NULL);
  gst_harness_set_src_caps_str (h, "application/x-rlnc, generation-size=32, "
      "block-size=1400, coefficients=seed");
  fail_if (gst_harness_push (h, gst_buffer_new_allocate (NULL, 24 + 1400,
              NULL)) == GST_FLOW_OK);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &debug);
  GST_INFO ("%s / %s", err->message, debug);
  fail_unless (strstr (err->message, "block-size") != NULL);
  fail_unless (strstr (err->message, "mtu") != NULL);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Hostile RTP into rtpncdepay ! ncdecoder: buffers that are not RTP and
 * RTP packets without payload stop at the depayloader; RTP packets whose
 * payload is a truncated, corrupted or made-up coded packet reach the
 * decoder and are counted there as bad. None of them costs a byte of the
 * stream, which comes out whole. */
GST_START_TEST (test_rtp_hostile_packets)
{
  GBytes *in = random_bytes (30000, 3);
  GstHarness *enc = gst_harness_new_parse ("ncencoder generation-size=8 "
      "block-size=256 redundancy=2 framing=bytes ! rtpncpay");
  GstHarness *dec = gst_harness_new_parse ("rtpncdepay ! ncdecoder");
  GstElement *decoder = gst_harness_find_element (dec, "ncdecoder");
  GPtrArray *rtp = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GByteArray *out = g_byte_array_new ();
  GRand *rand = g_rand_new_with_seed (5);
  GstStructure *stats;
  GstCaps *caps;
  GstBuffer *b;
  guint64 v;
  guint i, sent = 0, bad_payload = 0;
  gsize off;

  gst_harness_set_src_caps_str (enc, "application/octet-stream");
  for (off = 0; off < g_bytes_get_size (in); off += 3000) {
    GBytes *part = g_bytes_new_from_bytes (in, off,
        MIN (3000, g_bytes_get_size (in) - off));
    fail_unless_equals_int (gst_harness_push (enc,
            gst_buffer_new_wrapped_bytes (part)), GST_FLOW_OK);
    g_bytes_unref (part);
  }
  gst_harness_push_event (enc, gst_event_new_eos ());
  while ((b = gst_harness_try_pull (enc)))
    g_ptr_array_add (rtp, b);
  fail_unless (rtp->len > 20);
  caps = gst_pad_get_current_caps (enc->sinkpad);
  gst_harness_set_src_caps (dec, caps);       /* takes caps */

  for (i = 0; i < rtp->len; i++) {
    GstBuffer *good = g_ptr_array_index (rtp, i);
    GstMapInfo map;
    guint8 junk[200];
    guint j;

    if (i % 5 == 2) {
      /* not RTP: version 0, then a runt */
      for (j = 0; j < sizeof junk; j++)
        junk[j] = g_rand_int (rand);
      junk[0] &= 0x3f;
      gst_harness_push (dec, gst_buffer_new_memdup (junk, sizeof junk));
      gst_harness_push (dec, gst_buffer_new_memdup (junk, 5));
      gst_buffer_map (good, &map, GST_MAP_READ);
      /* the RTP header alone: no payload */
      gst_harness_push (dec, gst_buffer_new_memdup (map.data, 12));
      /* RTP, payload cut after 30 bytes */
      gst_harness_push (dec, gst_buffer_new_memdup (map.data, 12 + 30));
      /* RTP, one payload byte flipped (the CRC catches it), after an
       * untouched copy (a duplicate: redundant, not bad) */
      memcpy (junk, map.data, 12);
      gst_harness_push (dec, gst_buffer_new_memdup (map.data, map.size));
      {
        GstBuffer *flipped = gst_buffer_new_memdup (map.data, map.size);
        GstMapInfo fm;
        gst_buffer_map (flipped, &fm, GST_MAP_WRITE);
        fm.data[12 + 40] ^= 0x10;
        gst_buffer_unmap (flipped, &fm);
        gst_harness_push (dec, flipped);
      }
      /* RTP, a payload of random bytes */
      for (j = 12; j < sizeof junk; j++)
        junk[j] = g_rand_int (rand);
      gst_harness_push (dec, gst_buffer_new_memdup (junk, sizeof junk));
      gst_buffer_unmap (good, &map);
      sent += 1;                /* the untouched copy pushed among them */
      bad_payload += 3;
    }
    fail_unless_equals_int (gst_harness_push (dec, gst_buffer_ref (good)),
        GST_FLOW_OK);
    sent++;
  }
  gst_harness_push_event (dec, gst_event_new_eos ());
  while ((b = gst_harness_try_pull (dec))) {
    GstMapInfo map;
    gst_buffer_map (b, &map, GST_MAP_READ);
    g_byte_array_append (out, map.data, map.size);
    gst_buffer_unmap (b, &map);
    gst_buffer_unref (b);
  }
  fail_unless_equals_uint64 (out->len, g_bytes_get_size (in));
  fail_unless (memcmp (out->data, g_bytes_get_data (in, NULL), out->len) == 0);

  g_object_get (decoder, "stats", &stats, NULL);
  /* what got past the depayloader: every RTP packet with a payload */
  fail_unless (gst_structure_get_uint64 (stats, "packets-received", &v));
  fail_unless_equals_uint64 (v, sent + bad_payload);
  fail_unless (gst_structure_get_uint64 (stats, "packets-bad", &v));
  fail_unless_equals_uint64 (v, bad_payload);
  fail_unless (gst_structure_get_uint64 (stats, "generations-lost", &v));
  fail_unless_equals_uint64 (v, 0);
  gst_structure_free (stats);

  gst_object_unref (decoder);
  g_rand_free (rand);
  g_byte_array_unref (out);
  g_ptr_array_unref (rtp);
  gst_harness_teardown (enc);
  gst_harness_teardown (dec);
  g_bytes_unref (in);
}

GST_END_TEST;

static Suite *
rtpnc_suite (void)
{
  Suite *s = suite_create ("rtpnc");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_rtp_caps);
  tcase_add_test (tc, test_mtu_refused);
  tcase_add_test (tc, test_rtp_round_trip);
  tcase_add_test (tc, test_rtp_hostile_packets);
  return s;
}

GST_CHECK_MAIN (rtpnc);
