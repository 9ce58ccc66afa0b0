/* ncpacket: the wire format of ncencoder / ncdecoder, and the fuzz pass of
 * its parser (the one piece of code that reads bytes off the network). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/check/gstcheck.h>

#include "gpsncframing.h"
#include <gst/gpustream/gpsncpacket.h>

#define TEST_M 16
#define TEST_K 64

static guint8 *
make_packet (guint flags, guint32 seed, gsize * size, guint8 * coefs_out)
{
  NcHeader h = { NC_PACKET_VERSION, flags, TEST_M, 0x01020304, TEST_K,
    TEST_M * TEST_K - 5, seed
  };
  guint8 coefs[TEST_M], payload[TEST_K];
  guint8 *p;
  guint i;

  for (i = 0; i < TEST_M; i++)
    coefs[i] = (guint8) (i * 7 + 3);
  for (i = 0; i < TEST_K; i++)
    payload[i] = (guint8) (i * 13 + 1);
  *size = nc_packet_size (&h);
  p = g_malloc (*size);
  nc_packet_write (p, &h, coefs, payload);
  if (coefs_out)
    memcpy (coefs_out, coefs, TEST_M);
  return p;
}

static const struct
{
  guint flags;
  guint32 seed;
} kinds[] = {
  {NC_FLAG_SEED, 0xdeadbeef},
  {NC_FLAG_SOURCE, 5},
  {0, 0},
  {NC_FLAG_RECODED, 0},
};

GST_START_TEST (test_round_trip)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (kinds); i++) {
    guint8 coefs[TEST_M], vec[TEST_M];
    const guint8 *c, *pl;
    gsize size;
    guint8 *p = make_packet (kinds[i].flags, kinds[i].seed, &size, coefs);
    NcHeader h;
    guint j;

    fail_unless_equals_int (nc_packet_parse (p, size, &h, &c, &pl),
        NC_PARSE_OK);
    fail_unless_equals_int (h.version, NC_PACKET_VERSION);
    fail_unless_equals_int (h.flags, kinds[i].flags);
    fail_unless_equals_int (h.m, TEST_M);
    fail_unless_equals_int (h.generation, 0x01020304);
    fail_unless_equals_int (h.block_size, TEST_K);
    fail_unless_equals_int (h.data_length, TEST_M * TEST_K - 5);
    fail_unless_equals_int (h.seed, kinds[i].seed);
    fail_unless (pl == p + size - TEST_K);
    for (j = 0; j < TEST_K; j++)
      fail_unless_equals_int (pl[j], (guint8) (j * 13 + 1));

    nc_packet_coefficients (&h, c, vec);
    if (kinds[i].flags & NC_FLAG_SOURCE) {
      fail_unless (c == NULL);
      for (j = 0; j < TEST_M; j++)
        fail_unless_equals_int (vec[j], j == kinds[i].seed ? 1 : 0);
    } else if (kinds[i].flags & NC_FLAG_SEED) {
      fail_unless (c == NULL);
      fail_unless_equals_int (size, NC_HEADER_SIZE + TEST_K);
      for (j = 0; j < TEST_M; j++)
        fail_unless (vec[j] != 0);
    } else {
      fail_unless (c == p + NC_HEADER_SIZE);
      fail_unless_equals_int (size, NC_HEADER_SIZE + TEST_M + TEST_K);
      fail_unless (memcmp (vec, coefs, TEST_M) == 0);
    }
    g_free (p);
  }
}

GST_END_TEST;

/* CRC-32 as zlib computes it: the check value of "123456789" is 0xcbf43926.
 * A packet's CRC is over the packet with the crc field zero, so checking
 * the convention needs a packet whose bytes we know: recompute it here with
 * a bitwise reference. */
static guint32
crc32_bitwise (const guint8 * d, gsize n)
{
  guint32 crc = 0xffffffff;
  gsize i;
  gint b;

  for (i = 0; i < n; i++) {
    crc ^= d[i];
    for (b = 0; b < 8; b++)
      crc = (crc >> 1) ^ (0xedb88320 & (0 - (crc & 1)));
  }
  return crc ^ 0xffffffff;
}

GST_START_TEST (test_crc_convention)
{
  gsize size;
  guint8 *p = make_packet (NC_FLAG_SEED, 1, &size, NULL);
  guint32 stored = GST_READ_UINT32_BE (p + 20);

  fail_unless_equals_int (crc32_bitwise ((const guint8 *) "123456789", 9),
      0xcbf43926);
  GST_WRITE_UINT32_BE (p + 20, 0);
  fail_unless_equals_int (crc32_bitwise (p, size), stored);
  g_free (p);
}

GST_END_TEST;

GST_START_TEST (test_truncation)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (kinds); i++) {
    gsize size, len;
    guint8 *p = make_packet (kinds[i].flags, kinds[i].seed, &size, NULL);

    for (len = 0; len < size; len++) {
      /* an exact-size copy, so a read past len is an ASan / valgrind error */
      guint8 *t = g_memdup2 (p, MAX (len, 1));
      NcHeader h;
      fail_unless_equals_int (nc_packet_parse (len ? t : NULL, len, &h, NULL,
              NULL), NC_PARSE_TRUNCATED);
      fail_unless_equals_int (nc_packet_parse (t, len, &h, NULL, NULL),
          NC_PARSE_TRUNCATED);
      g_free (t);
    }
    g_free (p);
  }
}

GST_END_TEST;

GST_START_TEST (test_bit_flips)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (kinds); i++) {
    gsize size, bit;
    guint8 *p = make_packet (kinds[i].flags, kinds[i].seed, &size, NULL);

    for (bit = 0; bit < size * 8; bit++) {
      NcHeader h;
      p[bit / 8] ^= 1 << (bit % 8);
      fail_if (nc_packet_parse (p, size, &h, NULL, NULL) == NC_PARSE_OK,
          "bit %" G_GSIZE_FORMAT " flipped and still OK", bit);
      p[bit / 8] ^= 1 << (bit % 8);
    }
    fail_unless_equals_int (nc_packet_parse (p, size, NULL, NULL, NULL),
        NC_PARSE_OK);
    g_free (p);
  }
}

GST_END_TEST;

static guint8 *
make_header_only (guint8 version, guint8 flags, guint16 m, guint32 k,
    guint32 len, guint32 seed, gsize * size)
{
  guint8 *p = g_malloc0 (4096);

  p[0] = version;
  p[1] = flags;
  GST_WRITE_UINT16_BE (p + 2, m);
  GST_WRITE_UINT32_BE (p + 8, k);
  GST_WRITE_UINT32_BE (p + 12, len);
  GST_WRITE_UINT32_BE (p + 16, seed);
  *size = 4096;
  return p;
}

GST_START_TEST (test_bad_fields)
{
  static const struct
  {
    guint8 version, flags;
    guint16 m;
    guint32 k, len, seed;
    NcParseResult expect;
  } cases[] = {
    {2, NC_FLAG_SEED, 4, 16, 10, 1, NC_PARSE_BAD_VERSION},
    {0, NC_FLAG_SEED, 4, 16, 10, 1, NC_PARSE_BAD_VERSION},
    {1, NC_FLAG_SEED, 0, 16, 10, 1, NC_PARSE_BAD_FIELD},        /* m = 0 */
    {1, NC_FLAG_SEED, 257, 16, 10, 1, NC_PARSE_BAD_FIELD},
    {1, NC_FLAG_SEED, 4, 0, 10, 1, NC_PARSE_BAD_FIELD},         /* k = 0 */
    {1, NC_FLAG_SEED, 4, 65537, 10, 1, NC_PARSE_BAD_FIELD},
    {1, NC_FLAG_SEED, 4, 0xffffffff, 10, 1, NC_PARSE_BAD_FIELD},
    {1, NC_FLAG_SEED, 4, 16, 65, 1, NC_PARSE_BAD_FIELD},        /* > m*k */
    {1, NC_FLAG_SEED, 4, 16, 0, 1, NC_PARSE_BAD_FIELD},
    {1, 0x10, 4, 16, 10, 0, NC_PARSE_BAD_FIELD},        /* unknown flag */
    {1, NC_FLAG_SEED | NC_FLAG_SOURCE, 4, 16, 10, 0, NC_PARSE_BAD_FIELD},
    {1, NC_FLAG_RECODED | NC_FLAG_SEED, 4, 16, 10, 0, NC_PARSE_BAD_FIELD},
    {1, NC_FLAG_SOURCE, 4, 16, 10, 4, NC_PARSE_BAD_FIELD},      /* index m */
    {1, 0, 4, 16, 10, 7, NC_PARSE_BAD_FIELD},   /* vector with a seed */
    {1, NC_FLAG_SEED, 4, 16, 10, 1, NC_PARSE_BAD_FIELD},        /* too long */
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    gsize size;
    guint8 *p = make_header_only (cases[i].version, cases[i].flags,
        cases[i].m, cases[i].k, cases[i].len, cases[i].seed, &size);
    fail_unless_equals_int (nc_packet_parse (p, size, NULL, NULL, NULL),
        cases[i].expect);
    g_free (p);
  }
  /* right size, zero CRC */
  {
    gsize size;
    guint8 *p = make_header_only (1, NC_FLAG_SEED, 4, 16, 10, 1, &size);
    fail_unless_equals_int (nc_packet_parse (p, NC_HEADER_SIZE + 16, NULL,
            NULL, NULL), NC_PARSE_BAD_CRC);
    g_free (p);
  }
}

GST_END_TEST;

/* Seeded random mutations of valid packets: never a crash, never OK unless
 * the bytes are back to the original. */
GST_START_TEST (test_fuzz)
{
  GRand *rand = g_rand_new_with_seed (20240601);
  guint iter, i;
  guint8 *orig[G_N_ELEMENTS (kinds)];
  gsize sizes[G_N_ELEMENTS (kinds)];
  guint oks = 0;

  for (i = 0; i < G_N_ELEMENTS (kinds); i++)
    orig[i] = make_packet (kinds[i].flags, kinds[i].seed, &sizes[i], NULL);

  for (iter = 0; iter < 200000; iter++) {
    guint kind = g_rand_int_range (rand, 0, G_N_ELEMENTS (kinds));
    gsize size = sizes[kind], cap = size + 64;
    guint8 *p = g_malloc (cap);
    guint n, j;
    NcHeader h;
    const guint8 *c, *pl;
    NcParseResult r;

    memcpy (p, orig[kind], size);
    memset (p + size, 0, cap - size);
    switch (g_rand_int_range (rand, 0, 5)) {
      case 0:                  /* a few random bytes */
        n = g_rand_int_range (rand, 1, 5);
        for (j = 0; j < n; j++)
          p[g_rand_int_range (rand, 0, size)] = g_rand_int_range (rand, 0, 256);
        break;
      case 1:                  /* the header only */
        n = g_rand_int_range (rand, 1, 4);
        for (j = 0; j < n; j++)
          p[g_rand_int_range (rand, 0, NC_HEADER_SIZE)] ^=
              1 << g_rand_int_range (rand, 0, 8);
        break;
      case 2:                  /* other length */
        size = g_rand_int_range (rand, 0, cap);
        break;
      case 3:                  /* all garbage */
        for (j = 0; j < size; j++)
          p[j] = g_rand_int_range (rand, 0, 256);
        p[0] = g_rand_boolean (rand) ? 1 : p[0];
        break;
      default:                 /* a byte and a length */
        p[g_rand_int_range (rand, 0, size)] ^= g_rand_int_range (rand, 1, 256);
        size = g_rand_int_range (rand, NC_HEADER_SIZE, cap);
        break;
    }
    {
      /* exact-size copy: any overread is out of the allocation */
      guint8 *t = g_memdup2 (p, MAX (size, 1));
      r = nc_packet_parse (t, size, &h, &c, &pl);
      if (r == NC_PARSE_OK) {
        oks++;
        fail_unless (size == sizes[kind] &&
            memcmp (t, orig[kind], size) == 0,
            "mutation %u parsed OK with a changed body", iter);
      } else {
        fail_unless (r > NC_PARSE_OK && r <= NC_PARSE_BAD_CRC);
      }
      g_free (t);
    }
    g_free (p);
  }
  GST_INFO ("%u of 200000 mutations were no-ops", oks);
  for (i = 0; i < G_N_ELEMENTS (kinds); i++)
    g_free (orig[i]);
  g_rand_free (rand);
}

GST_END_TEST;


/* ---- framing records (gpsncframing.h) --------------------------------------- */

/* Writes records into generations of gen_bytes as ncencoder does: a prefix
 * per generation, records back to back across them. */
typedef struct
{
  gsize gen_bytes;
  GPtrArray *gens;              /* GByteArray each */
  GByteArray *cur;
  guint32 first;
} FrameWriter;

static void
fw_begin (FrameWriter * w)
{
  static const guint8 zeros[NC_FRAMING_PREFIX_SIZE] = { 0 };
  w->cur = g_byte_array_new ();
  g_byte_array_append (w->cur, zeros, sizeof (zeros));
  w->first = NC_FRAMING_NO_RECORD;
}

static void
fw_end (FrameWriter * w)
{
  nc_framing_prefix_write (w->cur->data, w->first, 1000 * w->gens->len);
  g_ptr_array_add (w->gens, w->cur);
  w->cur = NULL;
}

static void
fw_bytes (FrameWriter * w, const guint8 * d, gsize n)
{
  while (n > 0) {
    gsize room;
    if (!w->cur)
      fw_begin (w);
    room = MIN (n, w->gen_bytes - w->cur->len);
    g_byte_array_append (w->cur, d, room);
    d += room;
    n -= room;
    if (w->cur->len == w->gen_bytes)
      fw_end (w);
  }
}

static void
fw_record (FrameWriter * w, guint8 type, const guint8 * payload, guint32 len,
    GstClockTime pts)
{
  NcRecordHeader h = { type, 0, len, pts, GST_CLOCK_TIME_NONE, 10 };
  guint8 hdr[NC_RECORD_HEADER_SIZE];

  if (!w->cur)
    fw_begin (w);
  if (w->first == NC_FRAMING_NO_RECORD)
    w->first = w->cur->len;
  nc_record_header_write (hdr, &h);
  fw_bytes (w, hdr, sizeof (hdr));
  fw_bytes (w, payload, len);
}

/* Reads every record out of gens (skipping those in skip); checks each
 * BUFFER record against what was written. Returns the records read. */
static guint
read_back (GPtrArray * gens, guint skip, guint8 * const *payloads,
    const guint32 * lens, guint n_records, gboolean * seen)
{
  NcDeframer *d = nc_deframer_new ();
  guint i, got = 0;

  for (i = 0; i < gens->len; i++) {
    GByteArray *g = g_ptr_array_index (gens, i);
    GstClockTime pts;
    NcRecordHeader h;
    GstBuffer *payload;
    NcDeframeResult r;

    if (i == skip) {
      nc_deframer_lost (d);
      continue;
    }
    fail_unless (nc_deframer_push (d, gst_buffer_new_memdup (g->data, g->len),
            &pts));
    fail_unless_equals_uint64 (pts, 1000 * i);
    while ((r = nc_deframer_next (d, &h, &payload)) == NC_DEFRAME_RECORD) {
      guint idx = (guint) h.pts;
      fail_unless (idx < n_records);
      fail_unless_equals_int (h.type, NC_RECORD_BUFFER);
      fail_unless_equals_int (h.length, lens[idx]);
      fail_unless_equals_uint64 (h.duration, 10);
      fail_unless (gst_buffer_memcmp (payload, 0, payloads[idx], lens[idx]) == 0);
      seen[idx] = TRUE;
      gst_buffer_unref (payload);
      got++;
    }
    fail_unless_equals_int (r, NC_DEFRAME_NEED_MORE);
  }
  nc_deframer_free (d);
  return got;
}

GST_START_TEST (test_framing_round_trip_and_loss)
{
  FrameWriter w = { 1000, g_ptr_array_new_with_free_func (
        (GDestroyNotify) g_byte_array_unref), NULL, 0
  };
  guint8 *payloads[40];
  guint32 lens[40];
  gboolean seen[40] = { 0 };
  GRand *rand = g_rand_new_with_seed (7);
  guint i, j, got;

  /* sizes from 0 to several generations */
  for (i = 0; i < 40; i++) {
    lens[i] = (i % 5 == 4) ? 2500 + i : (guint32) g_rand_int_range (rand, 0, 400);
    payloads[i] = g_malloc (lens[i] + 1);
    for (j = 0; j < lens[i]; j++)
      payloads[i][j] = (guint8) g_rand_int (rand);
    fw_record (&w, NC_RECORD_BUFFER, payloads[i], lens[i], i);
  }
  fw_end (&w);

  got = read_back (w.gens, G_MAXUINT, payloads, lens, 40, seen);
  fail_unless_equals_int (got, 40);

  /* a lost generation: the records it touches go, every other comes back */
  for (j = 1; j < w.gens->len - 1; j++) {
    memset (seen, 0, sizeof (seen));
    got = read_back (w.gens, j, payloads, lens, 40, seen);
    fail_unless (got < 40 && got >= 40 - 6, "lost %u: %u back", j, got);
  }
  for (i = 0; i < 40; i++)
    g_free (payloads[i]);
  g_ptr_array_unref (w.gens);
  g_rand_free (rand);
}

GST_END_TEST;

GST_START_TEST (test_framing_fuzz)
{
  FrameWriter w = { 700, g_ptr_array_new_with_free_func (
        (GDestroyNotify) g_byte_array_unref), NULL, 0
  };
  GRand *rand = g_rand_new_with_seed (11);
  guint8 payload[3000];
  guint i, round, records = 0, corrupt = 0;

  for (i = 0; i < sizeof (payload); i++)
    payload[i] = (guint8) i;
  for (i = 0; i < 60; i++)
    fw_record (&w, i % 9 ? NC_RECORD_BUFFER : NC_RECORD_CAPS, payload,
        g_rand_int_range (rand, 1, sizeof (payload)), i);
  fw_end (&w);

  /* mutated, truncated and random generations, in random order: whatever
   * comes out is bounded, nothing reads out of bounds */
  for (round = 0; round < 3000; round++) {
    NcDeframer *d = nc_deframer_new ();
    guint n = g_rand_int_range (rand, 1, 12);

    for (i = 0; i < n; i++) {
      GByteArray *g = g_ptr_array_index (w.gens,
          g_rand_int_range (rand, 0, w.gens->len));
      gsize size = g->len;
      guint8 *data = g_memdup2 (g->data, size);
      GstClockTime pts;
      NcRecordHeader h;
      GstBuffer *p;
      NcDeframeResult r;
      guint flips = g_rand_int_range (rand, 0, 4), f;

      if (round % 3 == 0)
        size = g_rand_int_range (rand, 0, size + 1);
      for (f = 0; f < flips && size > 0; f++)
        data[g_rand_int_range (rand, 0, size)] ^= 1 << g_rand_int_range (rand,
            0, 8);
      if (round % 7 == 0)
        for (f = 0; f < size; f++)
          data[f] = (guint8) g_rand_int (rand);
      if (!nc_deframer_push (d, size ? gst_buffer_new_memdup (data, size) :
              gst_buffer_new (), &pts))
        nc_deframer_lost (d);
      while ((r = nc_deframer_next (d, &h, &p)) != NC_DEFRAME_NEED_MORE) {
        if (r == NC_DEFRAME_CORRUPT) {
          corrupt++;
          continue;
        }
        fail_unless (h.length <= NC_RECORD_MAX_LENGTH);
        fail_unless_equals_int (gst_buffer_get_size (p), h.length);
        gst_buffer_unref (p);
        records++;
      }
      g_free (data);
    }
    nc_deframer_free (d);
  }
  fail_unless (records > 1000 && corrupt > 100, "%u records, %u corrupt",
      records, corrupt);
  g_ptr_array_unref (w.gens);
  g_rand_free (rand);
}

GST_END_TEST;

GST_START_TEST (test_framing_prefix_rules)
{
  guint8 d[64] = { 0 };
  guint32 first_rec;
  GstClockTime pts;

  nc_framing_prefix_write (d, 16, 5);
  fail_unless (nc_framing_prefix_parse (d, 64, &first_rec, &pts));
  fail_unless_equals_int (first_rec, 16);
  fail_unless_equals_uint64 (pts, 5);
  fail_if (nc_framing_prefix_parse (d, 15, &first_rec, &pts));    /* short */
  fail_if (nc_framing_prefix_parse (d, 16, &first_rec, &pts));    /* 16 >= len */
  nc_framing_prefix_write (d, 15, 5);                         /* in the prefix */
  fail_if (nc_framing_prefix_parse (d, 64, &first_rec, &pts));
  nc_framing_prefix_write (d, NC_FRAMING_NO_RECORD, GST_CLOCK_TIME_NONE);
  fail_unless (nc_framing_prefix_parse (d, 16, &first_rec, &pts));
  d[5] = 1;                                                   /* reserved */
  fail_if (nc_framing_prefix_parse (d, 64, &first_rec, &pts));
}

GST_END_TEST;

static Suite *
ncpacket_suite (void)
{
  Suite *s = suite_create ("ncpacket");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_round_trip);
  tcase_add_test (tc, test_crc_convention);
  tcase_add_test (tc, test_truncation);
  tcase_add_test (tc, test_bit_flips);
  tcase_add_test (tc, test_bad_fields);
  tcase_add_test (tc, test_fuzz);
  tcase_add_test (tc, test_framing_round_trip_and_loss);
  tcase_add_test (tc, test_framing_fuzz);
  tcase_add_test (tc, test_framing_prefix_rules);
  return s;
}

GST_CHECK_MAIN (ncpacket);
