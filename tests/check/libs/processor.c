/* The registry of scheduler processors (gpsprocessor.h): lookup by name, an
 * unknown name refused with an error that names it, a name taken twice
 * refused; the library's srtp-protect: its configuration checked field by
 * field, and a batch of RTP packets protected to the bytes of the kernels'
 * scalar reference, a packet that is not RTP dropped and counted. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "gpsprocessor.h"
#include "gpssrtp.h"

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
  fail_unless_equals_int (g_strv_length (names), 3);
  fail_unless_equals_string (names[0], "nc-encode");
  fail_unless_equals_string (names[1], "srtp-protect");
  fail_unless_equals_string (names[2], "test-double");
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
  return s;
}

GST_CHECK_MAIN (processor);
