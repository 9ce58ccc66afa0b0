/* ncencoder / ncdecoder: byte-exact round trips under loss, reordering,
 * recoding, bad input, and the element basics. Loss is a seeded GRand, so
 * every run drops the same packets. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/app/gstappsink.h>

#include <gst/gpustream/gpsncpacket.h>

/* ---- helpers ------------------------------------------------------------- */

static GBytes *
random_bytes (gsize size, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  guint8 *d = g_malloc (size);
  gsize i;

  for (i = 0; i + 4 <= size; i += 4)
    GST_WRITE_UINT32_LE (d + i, g_rand_int (rand));
  for (; i < size; i++)
    d[i] = g_rand_int (rand);
  g_rand_free (rand);
  return g_bytes_new_take (d, size);
}

/* A harness around one element, its properties set (gst-launch syntax)
 * before it starts. */
static GstHarness *
harness_new (const gchar * factory, const gchar * props)
{
  GstElement *e = gst_element_factory_make (factory, NULL);
  gchar **kv = g_strsplit (props ? props : "", " ", -1);
  GstHarness *h;
  guint i;

  fail_unless (e != NULL);
  for (i = 0; kv[i]; i++) {
    gchar **pair = g_strsplit (kv[i], "=", 2);
    if (pair[0] && pair[1])
      gst_util_set_object_arg (G_OBJECT (e), pair[0], pair[1]);
    g_strfreev (pair);
  }
  g_strfreev (kv);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  return h;
}

/* Runs the bytes through an ncencoder configured by `props` (gst-launch
 * syntax), pushed in uneven chunks; returns the packets. */
static GPtrArray *
encode (GBytes * input, const gchar * props, GstCaps ** caps_out)
{
  GstHarness *h = harness_new ("ncencoder", props);
  GPtrArray *pkts = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  gsize size, off = 0, chunk = 1;
  const guint8 *data = g_bytes_get_data (input, &size);
  GstBuffer *b;

  gst_harness_set_src_caps_str (h, "application/octet-stream");
  while (off < size) {
    gsize n = MIN (chunk, size - off);
    b = gst_buffer_new_memdup (data + off, n);
    GST_BUFFER_PTS (b) = off * GST_USECOND;
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    off += n;
    /* 1, 2, 4 ... then 7777-byte pieces: tiny, odd and big buffers */
    chunk = chunk < 4096 ? chunk * 2 : 7777;
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  /* with cycle > 0 the packets come from the scheduler's forwarder */
  while (gst_harness_pull_until_eos (h, &b) && b)
    g_ptr_array_add (pkts, b);
  if (caps_out)
    *caps_out = gst_pad_get_current_caps (h->sinkpad);
  gst_harness_teardown (h);
  return pkts;
}

/* Independent loss with probability pct/100 (seeded). */
static GPtrArray *
lose (GPtrArray * in, gdouble pct, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  GPtrArray *out = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  guint i;

  for (i = 0; i < in->len; i++)
    if (g_rand_double (rand) * 100.0 >= pct)
      g_ptr_array_add (out, gst_buffer_ref (g_ptr_array_index (in, i)));
  g_rand_free (rand);
  return out;
}

/* Shuffles packets within consecutive windows of `window`. */
static void
shuffle (GPtrArray * a, guint window, guint32 seed)
{
  GRand *rand = g_rand_new_with_seed (seed);
  guint i, j;

  for (i = 0; i < a->len; i += window) {
    guint n = MIN (window, a->len - i);
    for (j = n - 1; j > 0; j--) {
      guint r = g_rand_int_range (rand, 0, j + 1);
      gpointer t = a->pdata[i + j];
      a->pdata[i + j] = a->pdata[i + r];
      a->pdata[i + r] = t;
    }
  }
  g_rand_free (rand);
}

typedef struct
{
  GByteArray *bytes;
  GPtrArray *bufs;              /* every output buffer */
  GstStructure *stats;
} Decoded;

static void
decoded_clear (Decoded * d)
{
  g_byte_array_unref (d->bytes);
  g_ptr_array_unref (d->bufs);
  gst_structure_free (d->stats);
}

static Decoded
decode (GPtrArray * pkts, const gchar * caps, const gchar * props)
{
  GstHarness *h = harness_new ("ncdecoder", props);
  Decoded d;
  GstBuffer *b;
  guint i;

  d.bytes = g_byte_array_new ();
  d.bufs = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  gst_harness_set_src_caps_str (h, caps ? caps : "application/x-rlnc");
  for (i = 0; i < pkts->len; i++) {
    fail_unless_equals_int (gst_harness_push (h,
            gst_buffer_ref (g_ptr_array_index (pkts, i))), GST_FLOW_OK);
    while ((b = gst_harness_try_pull (h)))
      g_ptr_array_add (d.bufs, b);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while ((b = gst_harness_try_pull (h)))
    g_ptr_array_add (d.bufs, b);
  for (i = 0; i < d.bufs->len; i++) {
    GstMapInfo map;
    b = g_ptr_array_index (d.bufs, i);
    gst_buffer_map (b, &map, GST_MAP_READ);
    g_byte_array_append (d.bytes, map.data, map.size);
    gst_buffer_unmap (b, &map);
  }
  g_object_get (h->element, "stats", &d.stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, d.stats);
  gst_harness_teardown (h);
  return d;
}

static guint64
stat (const GstStructure * s, const gchar * name)
{
  guint64 v = 0;
  fail_unless (gst_structure_get_uint64 (s, name, &v), "no %s", name);
  return v;
}

static void
assert_same (GBytes * input, GByteArray * out)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (input, &size);
  gsize i;

  fail_unless_equals_uint64 (out->len, size);
  if (memcmp (out->data, data, size) != 0) {
    for (i = 0; i < size && out->data[i] == data[i]; i++);
    fail ("output differs from input at byte %" G_GSIZE_FORMAT, i);
  }
}

/* Encode, lose, (shuffle), decode, compare. */
static void
round_trip (GBytes * input, const gchar * enc_props, gdouble loss,
    guint window, guint32 seed)
{
  GPtrArray *pkts = encode (input, enc_props, NULL), *rx;
  Decoded d;

  rx = lose (pkts, loss, seed);
  if (window > 1)
    shuffle (rx, window, seed + 1);
  GST_INFO ("%s, loss %.0f%%: %u packets, %u received", enc_props, loss,
      pkts->len, rx->len);
  d = decode (rx, NULL, NULL);
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 0);
  assert_same (input, d.bytes);
  decoded_clear (&d);
  g_ptr_array_unref (rx);
  g_ptr_array_unref (pkts);
}

/* ---- round trips --------------------------------------------------------- */

GST_START_TEST (test_round_trip_loss)
{
  GBytes *mib = random_bytes (1 << 20, 1);
  GBytes *odd = random_bytes (1000003, 2);

  /* redundancy chosen so the seeded loss never beats it */
  round_trip (mib, "generation-size=32 block-size=1024 redundancy=0", 0, 0, 10);
  round_trip (mib, "generation-size=32 block-size=1024 redundancy-percent=25",
      5, 0, 11);
  round_trip (odd, "generation-size=32 block-size=1024 redundancy-percent=40",
      10, 0, 12);
  round_trip (odd, "generation-size=32 block-size=1024 redundancy-percent=100",
      20, 0, 13);
  round_trip (mib, "generation-size=32 block-size=1024 redundancy-percent=100",
      20, 0, 14);
  g_bytes_unref (mib);
  g_bytes_unref (odd);
}

GST_END_TEST;

GST_START_TEST (test_round_trip_modes)
{
  GBytes *in = random_bytes (300001, 3);

  round_trip (in, "generation-size=16 block-size=700 systematic=false "
      "redundancy=10 coefficients=seed", 10, 0, 20);
  round_trip (in, "generation-size=16 block-size=700 systematic=false "
      "redundancy=10 coefficients=vector", 10, 0, 21);
  round_trip (in, "generation-size=16 block-size=700 systematic=true "
      "redundancy=10 coefficients=vector", 10, 0, 22);
  /* reordering within 50 packets, across generation boundaries */
  round_trip (in, "generation-size=16 block-size=700 redundancy=6", 5, 50, 23);
  round_trip (in, "generation-size=16 block-size=700 systematic=false "
      "redundancy=6", 0, 50, 24);
  g_bytes_unref (in);
}

GST_END_TEST;

GST_START_TEST (test_edge_m)
{
  GBytes *small = random_bytes (10007, 4);
  GBytes *big = random_bytes (100000, 5);

  round_trip (small, "generation-size=1 block-size=100 redundancy=6", 20, 0,
      30);
  round_trip (small, "generation-size=1 block-size=1 redundancy=0", 0, 0, 31);
  round_trip (big, "generation-size=256 block-size=64 redundancy-percent=20",
      10, 0, 32);
  round_trip (big, "generation-size=256 block-size=64 systematic=false "
      "coefficients=vector redundancy=8", 0, 0, 33);
  g_bytes_unref (small);
  g_bytes_unref (big);
}

GST_END_TEST;

GST_START_TEST (test_burst_loss)
{
  GBytes *in = random_bytes (8 * 32 * 512, 6);
  GPtrArray *pkts = encode (in,
      "generation-size=32 block-size=512 redundancy-percent=100", NULL);
  Decoded d;

  /* 64 packets a generation: 30 in a row lost inside generation 3 */
  fail_unless_equals_int (pkts->len, 8 * 64);
  g_ptr_array_remove_range (pkts, 3 * 64 + 10, 30);
  d = decode (pkts, NULL, NULL);
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 0);
  fail_unless_equals_uint64 (stat (d.stats, "generations-decoded"), 8);
  assert_same (in, d.bytes);
  decoded_clear (&d);
  g_ptr_array_unref (pkts);
  g_bytes_unref (in);
}

GST_END_TEST;

/* ---- loss beyond redundancy ---------------------------------------------- */

static guint32
packet_generation (GstBuffer * b)
{
  guint8 hdr[NC_HEADER_SIZE];
  gst_buffer_extract (b, 0, hdr, sizeof (hdr));
  return GST_READ_UINT32_BE (hdr + 4);
}

GST_START_TEST (test_loss_beyond_redundancy)
{
  const guint gens = 50, gsize_bytes = 16 * 256;
  GBytes *in = random_bytes (gens * gsize_bytes, 7);
  GPtrArray *pkts = encode (in,
      "generation-size=16 block-size=256 redundancy=4", NULL);
  GPtrArray *rx = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GRand *rand = g_rand_new_with_seed (8);
  const guint8 *data = g_bytes_get_data (in, NULL);
  guint i, gen, out_i = 0;
  Decoded d;

  for (i = 0; i < pkts->len; i++) {
    GstBuffer *b = g_ptr_array_index (pkts, i);
    gen = packet_generation (b);
    /* 60 % loss on three generations (the last one too) */
    if ((gen == 5 || gen == 17 || gen == 49) && g_rand_double (rand) < 0.6)
      continue;
    g_ptr_array_add (rx, gst_buffer_ref (b));
  }
  d = decode (rx, NULL, NULL);
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 3);
  fail_unless_equals_uint64 (stat (d.stats, "generations-decoded"), gens - 3);
  fail_unless_equals_int (d.bufs->len, gens - 3);

  /* the others byte-exact and in order; DISCONT right after each loss */
  for (gen = 0; gen < gens; gen++) {
    GstBuffer *b;
    if (gen == 5 || gen == 17 || gen == 49)
      continue;
    b = g_ptr_array_index (d.bufs, out_i++);
    fail_unless (gst_buffer_memcmp (b, 0, data + gen * gsize_bytes,
            gsize_bytes) == 0, "generation %u differs", gen);
    fail_unless_equals_int (gst_buffer_get_size (b), gsize_bytes);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_DISCONT), gen == 6 || gen == 18);
  }
  decoded_clear (&d);
  g_rand_free (rand);
  g_ptr_array_unref (rx);
  g_ptr_array_unref (pkts);
  g_bytes_unref (in);
}

GST_END_TEST;

/* Whole generations missing, and the late packets of an old one. */
GST_START_TEST (test_missing_and_late)
{
  GBytes *in = random_bytes (40 * 8 * 128, 9);
  GPtrArray *pkts = encode (in, "generation-size=8 block-size=128 redundancy=2",
      NULL);
  GPtrArray *rx = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GPtrArray *held = g_ptr_array_new ();
  guint i;
  Decoded d;

  for (i = 0; i < pkts->len; i++) {
    GstBuffer *b = g_ptr_array_index (pkts, i);
    guint32 gen = packet_generation (b);
    if (gen >= 10 && gen <= 12)
      continue;                 /* nothing of these arrives */
    if (gen == 2 && (i % 10) < 5) {
      g_ptr_array_add (held, b);        /* arrives after the window */
      continue;
    }
    g_ptr_array_add (rx, gst_buffer_ref (b));
    if (gen == 30 && held->len) {
      guint j;
      for (j = 0; j < held->len; j++)
        g_ptr_array_add (rx, gst_buffer_ref (held->pdata[j]));
      g_ptr_array_set_size (held, 0);
    }
  }
  d = decode (rx, NULL, "max-generations-in-flight=4");
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 4);
  fail_unless_equals_uint64 (stat (d.stats, "generations-decoded"), 36);
  fail_unless (stat (d.stats, "packets-late") > 0);
  decoded_clear (&d);
  g_ptr_array_unref (held);
  g_ptr_array_unref (rx);
  g_ptr_array_unref (pkts);
  g_bytes_unref (in);
}

GST_END_TEST;

/* A live source that goes silent without EOS: the generation timeout is
 * enforced by the decoder's timer, so a complete generation waiting behind
 * an incomplete one comes out (DISCONT, the loss counted) with no further
 * packet and no EOS. */
GST_START_TEST (test_timeout_without_traffic)
{
  GBytes *in = random_bytes (2 * 8 * 128, 21);
  GPtrArray *pkts = encode (in, "generation-size=8 block-size=128 redundancy=2",
      NULL);
  GstHarness *h = harness_new ("ncdecoder",
      "generation-timeout=200000000 max-generations-in-flight=16");
  GstStructure *stats;
  GstBuffer *out = NULL;
  GstMapInfo map;
  gint64 start;
  guint i, sent0 = 0;

  gst_harness_set_src_caps_str (h, "application/x-rlnc");
  for (i = 0; i < pkts->len; i++) {
    GstBuffer *b = g_ptr_array_index (pkts, i);
    if (packet_generation (b) == 0 && sent0++ >= 5)
      continue;                 /* generation 0 stays at rank 5 of 8 */
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (b)),
        GST_FLOW_OK);
  }
  fail_unless (gst_harness_try_pull (h) == NULL);       /* 1 waits for 0 */

  start = g_get_monotonic_time ();
  while (!out && g_get_monotonic_time () - start < 5 * G_USEC_PER_SEC) {
    out = gst_harness_try_pull (h);
    if (!out)
      g_usleep (10000);
  }
  fail_unless (out != NULL, "the timeout did not release generation 1");
  fail_unless (g_get_monotonic_time () - start >= 100000);
  fail_unless (GST_BUFFER_FLAG_IS_SET (out, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_map (out, &map, GST_MAP_READ);
  fail_unless_equals_int (map.size, 8 * 128);
  fail_unless (memcmp (map.data, (const guint8 *) g_bytes_get_data (in,
              NULL) + 8 * 128, 8 * 128) == 0);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);

  g_object_get (h->element, "stats", &stats, NULL);
  fail_unless_equals_uint64 (stat (stats, "generations-lost"), 1);
  fail_unless_equals_uint64 (stat (stats, "generations-decoded"), 1);
  gst_structure_free (stats);
  gst_harness_teardown (h);
  g_ptr_array_unref (pkts);
  g_bytes_unref (in);
}

GST_END_TEST;

/* A sender that restarts its generation numbering is followed, not
 * ignored as late. */
GST_START_TEST (test_sender_restart)
{
  GBytes *a = random_bytes (200 * 4 * 16, 13), *b = random_bytes (5000, 14);
  GPtrArray *pa = encode (a, "generation-size=4 block-size=16 redundancy=1",
      NULL);
  GPtrArray *pb = encode (b, "generation-size=4 block-size=16 redundancy=1",
      NULL);
  GByteArray *both = g_byte_array_new ();
  GBytes *expect;
  guint i;
  Decoded d;

  for (i = 0; i < pb->len; i++)
    g_ptr_array_add (pa, gst_buffer_ref (g_ptr_array_index (pb, i)));
  d = decode (pa, NULL, NULL);
  g_byte_array_append (both, g_bytes_get_data (a, NULL), g_bytes_get_size (a));
  g_byte_array_append (both, g_bytes_get_data (b, NULL), g_bytes_get_size (b));
  expect = g_byte_array_free_to_bytes (both);
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 0);
  assert_same (expect, d.bytes);
  decoded_clear (&d);
  g_bytes_unref (expect);
  g_ptr_array_unref (pa);
  g_ptr_array_unref (pb);
  g_bytes_unref (a);
  g_bytes_unref (b);
}

GST_END_TEST;

/* ---- recoding ------------------------------------------------------------ */

GST_START_TEST (test_relay)
{
  GBytes *in = random_bytes (500000, 10);
  GstCaps *caps = NULL;
  GPtrArray *pkts = encode (in, "generation-size=16 block-size=512 "
      "redundancy-percent=50", &caps);
  GPtrArray *hop1 = lose (pkts, 10, 40), *relayed, *hop2;
  GstHarness *h = harness_new ("ncencoder", "redundancy=8");
  GstStructure *rs;
  GstBuffer *b;
  GstCaps *relay_caps;
  guint i;
  Decoded d;

  gst_harness_set_src_caps (h, gst_caps_ref (caps));
  relayed = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  for (i = 0; i < hop1->len; i++)
    fail_unless_equals_int (gst_harness_push (h,
            gst_buffer_ref (g_ptr_array_index (hop1, i))), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while ((b = gst_harness_try_pull (h))) {
    guint8 hdr[NC_HEADER_SIZE];
    gst_buffer_extract (b, 0, hdr, sizeof (hdr));
    fail_unless_equals_int (hdr[1], NC_FLAG_RECODED);
    g_ptr_array_add (relayed, b);
  }
  relay_caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (relay_caps != NULL);
  {
    const GstStructure *s = gst_caps_get_structure (relay_caps, 0);
    gint m = 0, k = 0;
    fail_unless (gst_structure_get_int (s, "generation-size", &m));
    fail_unless (gst_structure_get_int (s, "block-size", &k));
    fail_unless_equals_int (m, 16);
    fail_unless_equals_int (k, 512);
    fail_unless_equals_string (gst_structure_get_string (s, "coefficients"),
        "vector");
  }
  g_object_get (h->element, "stats", &rs, NULL);
  GST_INFO ("relay %" GST_PTR_FORMAT, rs);
  fail_unless_equals_uint64 (stat (rs, "packets-bad"), 0);
  gst_structure_free (rs);
  gst_harness_teardown (h);

  hop2 = lose (relayed, 10, 41);
  d = decode (hop2, NULL, NULL);
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 0);
  assert_same (in, d.bytes);
  decoded_clear (&d);

  gst_caps_unref (relay_caps);
  gst_caps_unref (caps);
  g_ptr_array_unref (hop2);
  g_ptr_array_unref (relayed);
  g_ptr_array_unref (hop1);
  g_ptr_array_unref (pkts);
  g_bytes_unref (in);
}

GST_END_TEST;

/* ---- bad input ----------------------------------------------------------- */

static GstBuffer *
copy_modified (GstBuffer * b, gsize keep, gint flip_at)
{
  GstMapInfo map;
  GstBuffer *c;

  gst_buffer_map (b, &map, GST_MAP_READ);
  c = gst_buffer_new_memdup (map.data, MIN (keep, map.size));
  gst_buffer_unmap (b, &map);
  if (flip_at >= 0) {
    gst_buffer_map (c, &map, GST_MAP_WRITE);
    map.data[flip_at % map.size] ^= 0x40;
    gst_buffer_unmap (c, &map);
  }
  return c;
}

static GstBuffer *
header_packet (guint16 m, guint32 k)
{
  guint8 d[NC_HEADER_SIZE + 64] = { 0 };

  d[0] = NC_PACKET_VERSION;
  d[1] = NC_FLAG_SEED;
  GST_WRITE_UINT16_BE (d + 2, m);
  GST_WRITE_UINT32_BE (d + 8, k);
  GST_WRITE_UINT32_BE (d + 12, 1);
  return gst_buffer_new_memdup (d, sizeof (d));
}

GST_START_TEST (test_bad_input)
{
  GBytes *in = random_bytes (200000, 11);
  GBytes *other = random_bytes (20000, 12);
  GPtrArray *pkts = encode (in, "generation-size=16 block-size=512 "
      "redundancy=4", NULL);
  GPtrArray *wrong = encode (other, "generation-size=8 block-size=256 "
      "redundancy=0", NULL);
  GPtrArray *rx = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  guint i, bad = 0, n_wrong = 0;
  Decoded d;

  for (i = 0; i < pkts->len; i++) {
    GstBuffer *b = g_ptr_array_index (pkts, i);
    gsize size = gst_buffer_get_size (b);

    if (i % 7 == 3) {
      g_ptr_array_add (rx, copy_modified (b, size / 2, -1));    /* truncated */
      g_ptr_array_add (rx, copy_modified (b, size, 100 + i));   /* CRC */
      g_ptr_array_add (rx, gst_buffer_new ());  /* empty */
      bad += 3;
    }
    if (i == 50) {
      g_ptr_array_add (rx, header_packet (0, 512));     /* m = 0 */
      g_ptr_array_add (rx, header_packet (16, 0x7fffffff));     /* k huge */
      bad += 2;
    }
    if (i == 100) {                     /* another stream's m/k, valid CRC */
      guint j;
      for (j = 0; j < wrong->len; j++)
        g_ptr_array_add (rx, gst_buffer_ref (g_ptr_array_index (wrong, j)));
      n_wrong = wrong->len;
    }
    g_ptr_array_add (rx, gst_buffer_ref (b));
  }
  d = decode (rx, NULL, NULL);
  fail_unless_equals_uint64 (stat (d.stats, "packets-bad"), bad);
  fail_unless_equals_uint64 (stat (d.stats, "packets-wrong-parameters"),
      n_wrong);
  fail_unless_equals_uint64 (stat (d.stats, "packets-received"), rx->len);
  fail_unless_equals_uint64 (stat (d.stats, "generations-lost"), 0);
  assert_same (in, d.bytes);
  decoded_clear (&d);

  /* m/k from the caps: then even the first packet may be the wrong one */
  g_ptr_array_insert (rx, 0, gst_buffer_ref (g_ptr_array_index (wrong, 0)));
  d = decode (rx, "application/x-rlnc, generation-size=16, block-size=512",
      NULL);
  fail_unless_equals_uint64 (stat (d.stats, "packets-wrong-parameters"),
      n_wrong + 1);
  assert_same (in, d.bytes);
  decoded_clear (&d);

  g_ptr_array_unref (rx);
  g_ptr_array_unref (wrong);
  g_ptr_array_unref (pkts);
  g_bytes_unref (in);
  g_bytes_unref (other);
}

GST_END_TEST;

/* ---- MPEG-TS ------------------------------------------------------------- */

static GBytes *
make_mpegts (void)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=60 ! "
      "video/x-raw,width=320,height=240 ! x264enc speed-preset=ultrafast ! "
      "mpegtsmux ! appsink name=sink sync=false", &err);
  GstElement *sink;
  GByteArray *ts = g_byte_array_new ();
  GstSample *sample;

  if (!pipe) {
    g_clear_error (&err);
    g_byte_array_unref (ts);
    return NULL;
  }
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    GstBuffer *b = gst_sample_get_buffer (sample);
    GstMapInfo map;
    gst_buffer_map (b, &map, GST_MAP_READ);
    g_byte_array_append (ts, map.data, map.size);
    gst_buffer_unmap (b, &map);
    gst_sample_unref (sample);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  return g_byte_array_free_to_bytes (ts);
}

GST_START_TEST (test_mpegts)
{
  GBytes *ts;

  if (!gst_registry_check_feature_version (gst_registry_get (), "x264enc", 1,
          0, 0) ||
      !gst_registry_check_feature_version (gst_registry_get (), "mpegtsmux", 1,
          0, 0)) {
    g_print ("x264enc or mpegtsmux missing: MPEG-TS round trip skipped\n");
    return;
  }
  ts = make_mpegts ();
  fail_unless (ts != NULL && g_bytes_get_size (ts) > 10000);
  round_trip (ts, "generation-size=32 block-size=1316 redundancy=0", 0, 0, 50);
  round_trip (ts, "generation-size=32 block-size=1316 redundancy-percent=25",
      5, 0, 51);
  round_trip (ts, "generation-size=32 block-size=1316 redundancy-percent=40",
      10, 0, 52);
  round_trip (ts, "generation-size=32 block-size=1316 redundancy-percent=100",
      20, 0, 53);
  g_bytes_unref (ts);
}

GST_END_TEST;

/* ---- scheduled mode (cycle > 0) ---------------------------------------- */

/* The header fields of packet i (gst/gpustream/gpsncpacket.h): what must be
 * the same whatever coded it. */
static void
assert_same_layout (GPtrArray * a, GPtrArray * b)
{
  guint i;

  fail_unless_equals_int (a->len, b->len);
  for (i = 0; i < a->len; i++) {
    GstBuffer *x = g_ptr_array_index (a, i), *y = g_ptr_array_index (b, i);
    guint8 hx[NC_HEADER_SIZE], hy[NC_HEADER_SIZE];

    fail_unless_equals_uint64 (gst_buffer_get_size (x),
        gst_buffer_get_size (y));
    gst_buffer_extract (x, 0, hx, sizeof (hx));
    gst_buffer_extract (y, 0, hy, sizeof (hy));
    /* version, flags, m, generation, block size, length */
    fail_unless (memcmp (hx, hy, 16) == 0, "packet %u header differs", i);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (x), GST_BUFFER_PTS (y));
    /* source packets carry the input as it is: the same bytes */
    if (hx[1] & NC_FLAG_SOURCE) {
      GstMapInfo map;

      gst_buffer_map (y, &map, GST_MAP_READ);
      fail_unless (gst_buffer_memcmp (x, 0, map.data, map.size) == 0,
          "source packet %u differs", i);
      gst_buffer_unmap (y, &map);
    }
  }
}

GST_START_TEST (test_scheduled)
{
  GBytes *in = random_bytes (400003, 60);
  static const gchar *modes[] = {
    "generation-size=32 block-size=1024 redundancy-percent=25",
    "generation-size=16 block-size=700 systematic=false redundancy=6 "
        "coefficients=vector",
    "generation-size=16 block-size=700 systematic=false redundancy=6",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (modes); i++) {
    gchar *sched = g_strdup_printf ("%s cycle=1000000", modes[i]);
    GPtrArray *direct = encode (in, modes[i], NULL);
    GPtrArray *batched = encode (in, sched, NULL);

    /* the same packets, in the same order, whichever way they were coded */
    assert_same_layout (direct, batched);
    g_ptr_array_unref (direct);
    g_ptr_array_unref (batched);
    /* and what they carry decodes, through 5 % loss (seeded: never more
     * than the redundancy in one generation) */
    round_trip (in, sched, 5, 0, 61 + i);
    g_free (sched);
  }
  g_bytes_unref (in);
}

GST_END_TEST;

/* Stats, the LATENCY query and a flush in the middle of a scheduled stream:
 * what was in flight is dropped, what follows the flush decodes. */
GST_START_TEST (test_scheduled_flush_and_latency)
{
  GstHarness *h = harness_new ("ncencoder", "generation-size=8 "
      "block-size=500 redundancy=2 cycle=20000000");
  GBytes *before = random_bytes (40000, 70), *after = random_bytes (30001, 71);
  GPtrArray *pkts = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GstClockTime min, max;
  GstStructure *stats;
  GstQuery *q;
  GstBuffer *b;
  gboolean live;
  Decoded d;

  gst_harness_set_src_caps_str (h, "application/octet-stream");
  gst_harness_set_upstream_latency (h, 5 * GST_MSECOND);
  q = gst_query_new_latency ();
  fail_unless (gst_element_query (h->element, q));
  gst_query_parse_latency (q, &live, &min, &max);
  /* upstream's 5 ms and 3 cycles of 20 ms */
  fail_unless_equals_uint64 (min, 65 * GST_MSECOND);
  gst_query_unref (q);

  /* 40 kB is 10 generations: most are still in the scheduler (20 ms
   * cycles) when the flush comes */
  fail_unless_equals_int (gst_harness_push (h,
          gst_buffer_new_wrapped_bytes (before)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  while ((b = gst_harness_try_pull (h)))
    gst_buffer_unref (b);

  {
    GstSegment seg;

    gst_segment_init (&seg, GST_FORMAT_TIME);
    gst_harness_push_event (h, gst_event_new_segment (&seg));
  }
  fail_unless_equals_int (gst_harness_push (h,
          gst_buffer_new_wrapped_bytes (after)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while (gst_harness_pull_until_eos (h, &b) && b)
    g_ptr_array_add (pkts, b);
  d = decode (pkts, NULL, NULL);
  assert_same (after, d.bytes);
  decoded_clear (&d);

  g_object_get (h->element, "stats", &stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, stats);
  fail_unless (stat (stats, "scheduled-batches") > 0);
  fail_unless (stat (stats, "latency-max-us") > 0);
  gst_structure_free (stats);
  g_ptr_array_unref (pkts);
  /* gst_buffer_new_wrapped_bytes takes refs of its own */
  g_bytes_unref (before);
  g_bytes_unref (after);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Torn down with generations in the scheduler: nothing hangs, and a cycle
 * too short for the scheduler is refused, naming the property. */
GST_START_TEST (test_scheduled_teardown_and_bad_cycle)
{
  GstHarness *h = harness_new ("ncencoder", "generation-size=4 "
      "block-size=100 cycle=50000000");
  GstElement *e;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  guint i;

  gst_harness_set_src_caps_str (h, "application/octet-stream");
  for (i = 0; i < 20; i++) {
    GBytes *bytes = random_bytes (1000, 80 + i);

    fail_unless_equals_int (gst_harness_push (h,
            gst_buffer_new_wrapped_bytes (bytes)), GST_FLOW_OK);
    g_bytes_unref (bytes);
  }
  gst_harness_teardown (h);

  e = gst_element_factory_make ("ncencoder", NULL);
  g_object_set (e, "cycle", (guint64) 50000, NULL);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (debug && strstr (debug, "cycle") != NULL, "%s", debug);
  gst_message_unref (msg);
  g_clear_error (&err);
  g_free (debug);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* ---- element basics ------------------------------------------------------ */

/* framing=buffers that a generation cannot hold (the 16-byte prefix, a
 * 32-byte record header and a byte: 49 bytes) is refused at the start,
 * naming the sizes; 49 bytes start, and so does auto with 48 (it codes a
 * byte stream) */
static gboolean
encoder_starts (guint m, guint k, const gchar * framing, gchar ** message)
{
  GstElement *e = gst_element_factory_make ("ncencoder", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  gboolean started;

  gst_util_set_object_arg (G_OBJECT (e), "framing", framing);
  g_object_set (e, "generation-size", m, "block-size", k, NULL);
  gst_element_set_bus (e, bus);
  started = gst_element_set_state (e, GST_STATE_PAUSED) !=
      GST_STATE_CHANGE_FAILURE;
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  *message = NULL;
  if (msg) {
    GError *err = NULL;

    gst_message_parse_error (msg, &err, NULL);
    fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
            GST_RESOURCE_ERROR_SETTINGS), "%s", err->message);
    *message = g_strdup (err->message);
    g_clear_error (&err);
    gst_message_unref (msg);
  }
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  return started;
}

GST_START_TEST (test_framing_buffers_too_small)
{
  gchar *message;

  fail_if (encoder_starts (4, 12, "buffers", &message));
  fail_unless_equals_string (message, "framing=buffers needs "
      "generation-size x block-size of at least 49 bytes, it is 48");
  g_free (message);
  fail_unless (encoder_starts (7, 7, "buffers", &message));
  fail_unless (message == NULL, "%s", message);
  fail_unless (encoder_starts (4, 12, "auto", &message));
  fail_unless (message == NULL, "%s", message);
}

GST_END_TEST;

GST_START_TEST (test_max_latency)
{
  GstHarness *h = harness_new ("ncencoder", "generation-size=8 "
      "block-size=100 redundancy=0 max-latency=10000000");
  guint8 data[30] = { 1, 2, 3 };
  GstBuffer *b;
  guint n = 0;

  gst_harness_set_src_caps_str (h, "application/octet-stream");
  b = gst_buffer_new_memdup (data, sizeof (data));
  GST_BUFFER_PTS (b) = 0;
  gst_harness_push (h, b);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  b = gst_buffer_new_memdup (data, sizeof (data));
  GST_BUFFER_PTS (b) = 20 * GST_MSECOND;
  gst_harness_push (h, b);
  /* the first 30 bytes left as a partial generation: one block, the only
   * one with data, not 8 source packets of which 7 are padding */
  while ((b = gst_harness_try_pull (h))) {
    guint8 hdr[NC_HEADER_SIZE];
    gst_buffer_extract (b, 0, hdr, sizeof (hdr));
    fail_unless_equals_int (GST_READ_UINT16_BE (hdr + 2), 1);
    fail_unless_equals_int (GST_READ_UINT32_BE (hdr + 12), 30);
    fail_unless_equals_int (GST_READ_UINT32_BE (hdr + 4), 0);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), 0);
    gst_buffer_unref (b);
    n++;
  }
  fail_unless_equals_int (n, 1);
  gst_harness_teardown (h);
}

GST_END_TEST;

static const gchar *elements[] = { "ncencoder", "ncdecoder", "rtpncpay",
  "rtpncdepay"
};

GST_START_TEST (test_state_changes)
{
  guint i, j;

  for (i = 0; i < G_N_ELEMENTS (elements); i++) {
    GstElement *e = gst_element_factory_make (elements[i], NULL);
    fail_unless (e != NULL, "cannot make %s", elements[i]);
    for (j = 0; j < 20; j++) {
      fail_unless (gst_element_set_state (e, GST_STATE_PLAYING) !=
          GST_STATE_CHANGE_FAILURE);
      fail_unless (gst_element_set_state (e, GST_STATE_NULL) ==
          GST_STATE_CHANGE_SUCCESS);
    }
    ASSERT_OBJECT_REFCOUNT (e, elements[i], 1);
    gst_object_unref (e);
  }
}

GST_END_TEST;

GST_START_TEST (test_inspect)
{
  GstPlugin *plugin = gst_registry_find_plugin (gst_registry_get (),
      "gpustreamnc");
  guint i, j;

  fail_unless (plugin != NULL, "plugin gpustreamnc not found");
  fail_unless_equals_string (gst_plugin_get_license (plugin), "LGPL");
  gst_object_unref (plugin);

  for (i = 0; i < G_N_ELEMENTS (elements); i++) {
    GstElement *e = gst_element_factory_make (elements[i], NULL);
    GParamSpec **props;
    guint n;
    const gchar *klass;

    fail_unless (e != NULL);
    klass = gst_element_get_metadata (e, GST_ELEMENT_METADATA_KLASS);
    fail_unless (klass && strstr (klass, "Network"));
    props = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);
    for (j = 0; j < n; j++) {
      const gchar *blurb = g_param_spec_get_blurb (props[j]);
      fail_unless (blurb && *blurb, "%s::%s has no blurb", elements[i],
          props[j]->name);
    }
    g_free (props);
    gst_object_unref (e);
  }
}

GST_END_TEST;

GST_START_TEST (test_stats_fields)
{
  GstElement *e = gst_element_factory_make ("ncdecoder", NULL);
  static const gchar *fields[] = { "generations-decoded", "generations-lost",
    "packets-received", "packets-innovative", "packets-redundant",
    "packets-dependent", "packets-bad", "packets-late",
    "packets-wrong-parameters", "decode-latency-avg-us",
    "decode-latency-max-us"
  };
  GstStructure *s;
  guint i;

  g_object_get (e, "stats", &s, NULL);
  fail_unless (gst_structure_has_name (s, "application/x-ncdecoder-stats"));
  for (i = 0; i < G_N_ELEMENTS (fields); i++)
    fail_unless (gst_structure_has_field (s, fields[i]), "%s", fields[i]);
  gst_structure_free (s);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
nc_suite (void)
{
  Suite *s = suite_create ("nc");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_inspect);
  tcase_add_test (tc, test_stats_fields);
  tcase_add_test (tc, test_state_changes);
  tcase_add_test (tc, test_max_latency);
  tcase_add_test (tc, test_framing_buffers_too_small);
  tcase_add_test (tc, test_round_trip_loss);
  tcase_add_test (tc, test_round_trip_modes);
  tcase_add_test (tc, test_edge_m);
  tcase_add_test (tc, test_burst_loss);
  tcase_add_test (tc, test_loss_beyond_redundancy);
  tcase_add_test (tc, test_missing_and_late);
  tcase_add_test (tc, test_timeout_without_traffic);
  tcase_add_test (tc, test_sender_restart);
  tcase_add_test (tc, test_relay);
  tcase_add_test (tc, test_bad_input);
  tcase_add_test (tc, test_mpegts);
  tcase_add_test (tc, test_scheduled);
  tcase_add_test (tc, test_scheduled_flush_and_latency);
  tcase_add_test (tc, test_scheduled_teardown_and_bad_cycle);
  return s;
}

GST_CHECK_MAIN (nc);
