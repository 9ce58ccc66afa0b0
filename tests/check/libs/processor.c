/* The registry of scheduler processors (gpsprocessor.h): lookup by name, an
 * unknown name refused with an error that names it, a name taken twice
 * refused; the library's srtp-protect: its configuration checked field by
 * field, and a batch of RTP packets protected to the bytes of the kernels'
 * scalar reference, a packet that is not RTP dropped and counted; the
 * library's nc-encode: its configuration checked, and a batch coded into
 * packets of the NC wire format that the rlnc decoder turns back into the
 * input. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "gpsprocessor.h"
#include "gpssrtp.h"
#include "gpsnc.h"
#include <rlnc/rlnc.h>

static const guint8 key30[30] = {
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
  0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d
};

/* ---- the registry --------------------------------------------------------- */

static gpointer
double_setup (const GstStructure * config, GstElement * owner,
    GError ** error)
{
  return g_new0 (gint, 1);
}

static void
double_cpu (gpointer data, GstGpuStreamSchedItem * items, guint n)
{
}

static const GstGpuStreamProcessorInfo double_info = {
  "test-double", "does nothing",
  {"test-double", double_cpu, NULL}, double_setup, g_free
};

GST_START_TEST (test_lookup)
{
  const GstGpuStreamProcessorInfo *info;
  GError *err = NULL;
  gchar **names;

  info = gst_gpustream_processor_lookup ("srtp-protect", &err);
  fail_unless (info != NULL && err == NULL);
  fail_unless_equals_string (info->name, "srtp-protect");

  /* unknown: refused, the error names it and what there is */
  fail_unless (gst_gpustream_processor_lookup ("no-such-job", &err) == NULL);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_PROCESSOR_ERROR,
          GST_GPUSTREAM_PROCESSOR_ERROR_UNKNOWN));
  fail_unless (strstr (err->message, "\"no-such-job\"") != NULL, "%s",
      err->message);
  fail_unless (strstr (err->message, "srtp-protect") != NULL, "%s",
      err->message);
  g_clear_error (&err);

  /* registered: found; the same name again: refused */
  fail_unless (gst_gpustream_processor_register (&double_info, &err));
  fail_unless (gst_gpustream_processor_lookup ("test-double", NULL) ==
      &double_info);
  fail_if (gst_gpustream_processor_register (&double_info, &err));
  fail_unless (g_error_matches (err, GST_GPUSTREAM_PROCESSOR_ERROR,
          GST_GPUSTREAM_PROCESSOR_ERROR_EXISTS));
  fail_unless (strstr (err->message, "test-double") != NULL);
  g_clear_error (&err);

  names = gst_gpustream_processor_list_names ();
  fail_unless_equals_int (g_strv_length (names), 4);
  fail_unless_equals_string (names[0], "dxt-encode");
  fail_unless_equals_string (names[1], "nc-encode");
  fail_unless_equals_string (names[2], "srtp-protect");
  fail_unless_equals_string (names[3], "test-double");
  g_strfreev (names);
}

GST_END_TEST;

/* ---- srtp-protect --------------------------------------------------------- */

static GstStructure *
srtp_config (gsize key_len, const gchar * cipher, const gchar * impl)
{
  GstBuffer *key = gst_buffer_new_memdup (key30, key_len);
  GstStructure *s = gst_structure_new ("srtp-protect",
      "srtp-key", GST_TYPE_BUFFER, key, NULL);

  if (cipher)
    gst_structure_set (s, "srtp-cipher", G_TYPE_STRING, cipher, NULL);
  if (impl)
    gst_structure_set (s, "impl", G_TYPE_STRING, impl, NULL);
  gst_buffer_unref (key);
  return s;
}

GST_START_TEST (test_srtp_config_refused)
{
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("srtp-protect", NULL);
  GstStructure *c;
  GError *err = NULL;

  /* no key */
  c = gst_structure_new_empty ("srtp-protect");
  fail_unless (info->setup (c, NULL, &err) == NULL);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_PROCESSOR_ERROR,
          GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG));
  fail_unless (strstr (err->message, "\"srtp-key\"") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  gst_structure_free (c);

  /* a key of the wrong length for the cipher: the sizes, never the bytes */
  c = srtp_config (30, "aes-256-icm", NULL);
  fail_unless (info->setup (c, NULL, &err) == NULL);
  fail_unless_equals_string (err->message, "srtp-key is 30 bytes, "
      "srtp-cipher=aes-256-icm needs 46 (master key || salt)");
  g_clear_error (&err);
  gst_structure_free (c);

  /* an unknown cipher, an unknown impl */
  c = srtp_config (30, "rot13", NULL);
  fail_unless (info->setup (c, NULL, &err) == NULL);
  fail_unless (strstr (err->message, "srtp-cipher") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  gst_structure_free (c);
  c = srtp_config (30, NULL, "fastest");
  fail_unless (info->setup (c, NULL, &err) == NULL);
  fail_unless (strstr (err->message, "fastest") != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_structure_free (c);
}

GST_END_TEST;

static GstBuffer *
rtp_packet (guint32 ssrc, guint16 seq, gsize payload)
{
  GstBuffer *b = gst_buffer_new_allocate (NULL, 12 + payload, NULL);
  GstMapInfo m;
  gsize i;

  gst_buffer_map (b, &m, GST_MAP_WRITE);
  m.data[0] = 0x80;
  m.data[1] = 96;
  GST_WRITE_UINT16_BE (m.data + 2, seq);
  GST_WRITE_UINT32_BE (m.data + 4, 160u * seq);
  GST_WRITE_UINT32_BE (m.data + 8, ssrc);
  for (i = 0; i < payload; i++)
    m.data[12 + i] = (guint8) (i * 7 + seq);
  gst_buffer_unmap (b, &m);
  GST_BUFFER_PTS (b) = seq * GST_MSECOND;
  return b;
}

/* What the kernels' scalar reference makes of the same packets, one
 * context per SSRC, in the same order. */
static GBytes *
reference_protect (GsSrtpCtx * ctx, GstBuffer * in)
{
  gsize len = gst_buffer_get_size (in);
  guint8 *data = g_malloc (len + 16);
  GsSrtpPacket p = { 0 };

  gst_buffer_extract (in, 0, data, len);
  p.ctx = ctx;
  p.data = data;
  p.len = (uint32_t) len;
  p.cap = (uint32_t) (len + 16);
  fail_unless_equals_int (gsrtp_protect_batch (&p, 1, GSRTP_IMPL_SCALAR), 1);
  fail_unless_equals_int (p.result, GSRTP_OK);
  return g_bytes_new_take (data, p.len);
}

static void
run_batch (const gchar * impl)
{
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("srtp-protect", NULL);
  GstStructure *c = srtp_config (30, "aes-128-icm", impl);
  GstStructure *stats = gst_structure_new_empty ("stats");
  GstGpuStreamSchedItem items[9] = { {0} };
  GsSrtpCtx ref[2];
  GBytes *want[9] = { NULL };
  gpointer inst, batch;
  guint i, streams = 0;
  guint64 drops = 99;

  inst = info->setup (c, NULL, NULL);
  fail_unless (inst != NULL);
  for (i = 0; i < 2; i++)
    fail_unless_equals_int (gsrtp_ctx_init (&ref[i],
            GSRTP_AES_CM_128_HMAC_SHA1_80, GSRTP_AES_CM_128_HMAC_SHA1_80,
            key30, sizeof key30, 0), GSRTP_OK);
  /* two SSRCs interleaved, an event-like item in the middle, and a packet
   * that is not RTP (version 0) */
  for (i = 0; i < 9; i++) {
    if (i == 4) {
      items[i].data = GUINT_TO_POINTER (0xdead);        /* not a packet */
      continue;
    }
    items[i].flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
    if (i == 6) {
      GstBuffer *bad = gst_buffer_new_allocate (NULL, 40, NULL);
      gst_buffer_memset (bad, 0, 0, 40);
      items[i].data = bad;
      continue;
    }
    items[i].data = rtp_packet (0x1000 + i % 2, (guint16) (100 + i), 100 + i);
    want[i] = reference_protect (&ref[i % 2], items[i].data);
  }

  batch = info->processor.submit (inst, NULL, 0, items, 9);
  info->processor.finish (inst, batch);

  for (i = 0; i < 9; i++) {
    GstMapInfo m;

    if (i == 4) {
      fail_unless (items[i].data == GUINT_TO_POINTER (0xdead));
      continue;
    }
    if (i == 6) {
      fail_unless (items[i].data == NULL, "not RTP, yet forwarded");
      continue;
    }
    gst_buffer_map (items[i].data, &m, GST_MAP_READ);
    fail_unless_equals_int (m.size, g_bytes_get_size (want[i]));
    fail_unless (memcmp (m.data, g_bytes_get_data (want[i], NULL),
            m.size) == 0, "%s: packet %u differs from the reference",
        impl ? impl : "auto", i);
    gst_buffer_unmap (items[i].data, &m);
    /* the metadata stays */
    fail_unless_equals_uint64 (GST_BUFFER_PTS (items[i].data),
        (100 + i) * GST_MSECOND);
    gst_buffer_unref (items[i].data);
    g_bytes_unref (want[i]);
  }

  info->get_stats (inst, stats);
  fail_unless (gst_structure_get_uint (stats, "srtp-streams", &streams));
  fail_unless_equals_int (streams, 2);
  fail_unless (gst_structure_get_uint64 (stats, "srtp-drops", &drops));
  fail_unless_equals_uint64 (drops, 1);

  for (i = 0; i < 2; i++)
    gsrtp_ctx_clear (&ref[i]);
  info->teardown (inst);
  gst_structure_free (stats);
  gst_structure_free (c);
}

GST_START_TEST (test_srtp_batch)
{
  run_batch (NULL);
  run_batch ("scalar");
}

GST_END_TEST;

GST_START_TEST (test_srtp_caps)
{
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("srtp-protect", NULL);
  GstStructure *c = srtp_config (30, NULL, NULL);
  gpointer inst = info->setup (c, NULL, NULL);
  GstCaps *in = gst_caps_from_string ("application/x-rtp, media=audio, "
      "clock-rate=8000, ssrc=(uint)1");
  GstCaps *out = info->transform_caps (inst, in);
  GstStructure *s = gst_caps_get_structure (out, 0);

  fail_unless (gst_structure_has_name (s, "application/x-srtp"));
  fail_unless_equals_string (gst_structure_get_string (s, "srtp-cipher"),
      "aes-128-icm");
  fail_unless_equals_string (gst_structure_get_string (s, "srtp-auth"),
      "hmac-sha1-80");
  fail_unless (gst_structure_has_field_typed (s, "srtp-key", GST_TYPE_BUFFER));
  gst_caps_unref (out);
  gst_caps_unref (in);
  info->teardown (inst);
  gst_structure_free (c);
}

GST_END_TEST;

/* ---- nc-encode ----------------------------------------------------------- */

GST_START_TEST (test_nc_config_refused)
{
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("nc-encode", NULL);
  const gchar *bad[][2] = {
    {"nc-encode, generation-size=(int)0", "generation-size"},
    {"nc-encode, generation-size=(int)257", "generation-size"},
    {"nc-encode, block-size=(int)65537", "block-size"},
    {"nc-encode, redundancy=(int)-1", "redundancy"},
    {"nc-encode, redundancy-percent=(string)half", "redundancy-percent"},
    {"nc-encode, systematic=(string)maybe", "systematic"},
    {"nc-encode, coefficients=(string)dense", "coefficients"},
  };
  GstStructure *c;
  GError *err = NULL;
  gpointer inst;
  guint i;

  fail_unless (info != NULL);
  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    c = gst_structure_from_string (bad[i][0], NULL);
    fail_unless (c != NULL, "%s", bad[i][0]);
    fail_unless (info->setup (c, NULL, &err) == NULL, "%s", bad[i][0]);
    fail_unless (g_error_matches (err, GST_GPUSTREAM_PROCESSOR_ERROR,
            GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG));
    fail_unless (strstr (err->message, bad[i][1]) != NULL, "%s",
        err->message);
    g_clear_error (&err);
    gst_structure_free (c);
  }
  /* no configuration: ncencoder's defaults */
  inst = info->setup (NULL, NULL, &err);
  fail_unless (inst != NULL && err == NULL);
  info->teardown (inst);
}

GST_END_TEST;

/* Not systematic, explicit vectors: 50 bytes in generations of 4 x 8 are
 * a full generation (4 + 2 coded packets) and a partial one of 18 bytes
 * (3 blocks, ceil (2 x 3 / 4) = 2 more); an empty buffer codes to nothing,
 * an event item is left alone. */
GST_START_TEST (test_nc_batch)
{
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("nc-encode", NULL);
  GstStructure *c = gst_structure_from_string ("nc-encode, "
      "generation-size=(int)4, block-size=(int)8, redundancy=(int)2, "
      "systematic=(boolean)false, coefficients=(string)vector", NULL);
  GstGpuStreamSchedItem items[3] = { {0} };
  GstEvent *event = gst_event_new_eos ();
  guint8 in[50];
  const guint want_m[] = { 4, 3 }, want_packets[] = { 6, 5 };
  GstStructure *stats;
  GstBufferList *list;
  guint64 v;
  gpointer inst, b;
  guint i, gen, p = 0;

  for (i = 0; i < sizeof (in); i++)
    in[i] = (i * 37 + 11) & 0xff;
  inst = info->setup (c, NULL, NULL);
  fail_unless (inst != NULL);
  items[0].data = gst_buffer_new_memdup (in, sizeof (in));
  GST_BUFFER_PTS (items[0].data) = 5 * GST_SECOND;
  items[0].flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
  items[1].data = gst_buffer_new ();
  items[1].flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
  items[2].data = event;
  b = info->processor.submit (inst, NULL, 0, items, 3);
  info->processor.finish (inst, b);

  fail_unless (GST_IS_BUFFER_LIST (items[0].data));
  fail_unless (items[1].data == NULL);
  fail_unless (items[2].data == (gpointer) event);
  list = items[0].data;
  fail_unless_equals_int (gst_buffer_list_length (list), 11);
  for (gen = 0; gen < 2; gen++) {
    RlncDecoder *d = rlnc_decoder_new (want_m[gen], 8);
    guint8 out[32], coefs[4];

    for (i = 0; i < want_packets[gen]; i++, p++) {
      GstBuffer *pkt = gst_buffer_list_get (list, p);
      const guint8 *vec, *payload;
      GstMapInfo map;
      NcHeader h;

      fail_unless_equals_uint64 (GST_BUFFER_PTS (pkt), 5 * GST_SECOND);
      gst_buffer_map (pkt, &map, GST_MAP_READ);
      fail_unless_equals_int (nc_packet_parse (map.data, map.size, &h, &vec,
              &payload), NC_PARSE_OK);
      fail_unless_equals_int (h.generation, gen);
      fail_unless_equals_int (h.m, want_m[gen]);
      fail_unless_equals_int (h.block_size, 8);
      fail_unless_equals_int (h.data_length, gen ? 18 : 32);
      fail_unless_equals_int (h.flags, 0);      /* coded, vector */
      nc_packet_coefficients (&h, vec, coefs);
      rlnc_decoder_add (d, coefs, payload);
      gst_buffer_unmap (pkt, &map);
    }
    fail_unless_equals_int (rlnc_decoder_rank (d), want_m[gen]);
    fail_unless_equals_int (rlnc_decoder_solve (d, out), 0);
    fail_unless (memcmp (out, in + gen * 32, gen ? 18 : 32) == 0,
        "generation %u decodes to other bytes", gen);
    rlnc_decoder_free (d);
  }

  stats = gst_structure_new_empty ("stats");
  info->get_stats (inst, stats);
  fail_unless (gst_structure_get_uint64 (stats, "nc-generations", &v));
  fail_unless_equals_uint64 (v, 2);
  fail_unless (gst_structure_get_uint64 (stats, "nc-packets", &v));
  fail_unless_equals_uint64 (v, 11);
  gst_structure_free (stats);
  gst_buffer_list_unref (list);
  gst_event_unref (event);
  info->teardown (inst);
  gst_structure_free (c);
}

GST_END_TEST;

static Suite *
processor_suite (void)
{
  Suite *s = suite_create ("processor");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_lookup);
  tcase_add_test (tc, test_srtp_config_refused);
  tcase_add_test (tc, test_srtp_batch);
  tcase_add_test (tc, test_srtp_caps);
  tcase_add_test (tc, test_nc_config_refused);
  tcase_add_test (tc, test_nc_batch);
  return s;
}

GST_CHECK_MAIN (processor);
