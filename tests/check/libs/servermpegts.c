/* The send schedule of an MPEG-TS file (pipelines/server/server_mpegts.c),
 * the shared sender's clock: on transport streams made here with known
 * clock references (PCR), each chunk of seven packets is due at the PCR
 * time interpolated at its first packet; PCR wrap-around, discontinuities
 * and packets before the first PCR; refusals of what is not MPEG-TS. And
 * the network-coded sessions' generations, read back by ncdecoder's
 * deframer: every chunk a record, from any generation on. */
#include <gst/check/gstcheck.h>
#include <string.h>

#include "gpsncframing.h"
#include "server_mpegts.h"

#define PCR_PID 0x100
#define HZ 27000000ULL

/* n packets; every `every` packets one carries PCR pcr0 + k * step (27 MHz
 * ticks), starting at packet `first` */
static guint8 *
make_ts (guint n, guint first, guint every, guint64 pcr0, guint64 step)
{
  guint8 *ts = g_malloc0 ((gsize) n * 188);

  for (guint i = 0; i < n; i++) {
    guint8 *p = ts + (gsize) i * 188;

    p[0] = 0x47;
    p[1] = PCR_PID >> 8;
    p[2] = PCR_PID & 0xff;
    p[3] = 0x10;                /* payload only */
    if (i >= first && (i - first) % every == 0) {
      guint64 pcr = (pcr0 + (i - first) / every * step) % ((1ULL << 33) * 300);
      guint64 base = pcr / 300, ext = pcr % 300;

      p[3] = 0x30;              /* adaptation field and payload */
      p[4] = 7;
      p[5] = 0x10;              /* PCR flag */
      p[6] = base >> 25;
      p[7] = base >> 17;
      p[8] = base >> 9;
      p[9] = base >> 1;
      p[10] = ((base & 1) << 7) | 0x7e | (ext >> 8);
      p[11] = ext & 0xff;
    }
  }
  return ts;
}

GST_START_TEST (test_chunks_follow_the_clock)
{
  /* one PCR every 10 packets, 10 ms apart: 1 ms a packet, 7 ms a chunk */
  guint n = 700;
  g_autofree guint8 *ts = make_ts (n, 0, 10, 5 * HZ, HZ / 100);
  const gchar *why = NULL;
  ServerMpegtsIndex *index = server_mpegts_index_new (ts, n * 188, &why);

  fail_unless (index != NULL, "%s", why);
  fail_unless_equals_int (index->n_chunks, 100);
  fail_unless_equals_uint64 (index->size, n * 188);
  for (guint c = 0; c < index->n_chunks; c++)
    fail_unless_equals_uint64 (index->due_ns[c], c * 7 * G_GUINT64_CONSTANT
        (1000000));
  /* after the last PCR (packet 690): its rate goes on */
  fail_unless_equals_uint64 (index->duration_ns, 699 * 1000000);
  fail_unless_equals_int (server_mpegts_index_seek (index, 0), 0);
  fail_unless_equals_int (server_mpegts_index_seek (index, 7000000), 1);
  fail_unless_equals_int (server_mpegts_index_seek (index, 7000001), 2);
  fail_unless_equals_int (server_mpegts_index_seek (index, G_MAXUINT64), 100);
  server_mpegts_index_free (index);
}

GST_END_TEST;

GST_START_TEST (test_before_the_first_pcr_and_partial_packets)
{
  guint n = 100;
  g_autofree guint8 *ts = make_ts (n, 35, 10, 0, HZ / 100);
  const gchar *why = NULL;
  /* half a packet at the end is not sent */
  ServerMpegtsIndex *index = server_mpegts_index_new (ts, n * 188 - 94, &why);

  fail_unless (index != NULL, "%s", why);
  fail_unless_equals_uint64 (index->size, (n - 1) * 188);
  fail_unless_equals_int (index->n_chunks, (n - 1 + 6) / 7);
  /* chunks 0..5 start before packet 35: due at once */
  for (guint c = 0; c * 7 <= 35; c++)
    fail_unless_equals_uint64 (index->due_ns[c], 0);
  fail_unless_equals_uint64 (index->due_ns[6], (42 - 35) * 1000000);
  server_mpegts_index_free (index);
}

GST_END_TEST;

GST_START_TEST (test_wrap_and_discontinuity)
{
  guint n = 400;
  /* the 33-bit PCR base wraps half-way */
  guint64 wrap = (1ULL << 33) * 300;
  g_autofree guint8 *ts = make_ts (n, 0, 10, wrap - 20 * HZ / 100, HZ / 100);
  const gchar *why = NULL;
  ServerMpegtsIndex *index = server_mpegts_index_new (ts, n * 188, &why);

  fail_unless (index != NULL, "%s", why);
  for (guint c = 0; c < index->n_chunks; c++)
    fail_unless_equals_uint64 (index->due_ns[c], c * 7 * G_GUINT64_CONSTANT
        (1000000));
  server_mpegts_index_free (index);

  /* a file spliced at packet 300 from another, whose clock starts again
   * at 0: the jump is a discontinuity, across which the rate goes on */
  {
    g_autofree guint8 *after = make_ts (n - 300, 0, 10, 0, HZ / 100);

    memcpy (ts + 300 * 188, after, (gsize) (n - 300) * 188);
    index = server_mpegts_index_new (ts, n * 188, &why);
    fail_unless (index != NULL, "%s", why);
    for (guint c = 0; c < index->n_chunks; c++)
      fail_unless_equals_uint64 (index->due_ns[c], c * 7 *
          G_GUINT64_CONSTANT (1000000));
    server_mpegts_index_free (index);
  }
}

GST_END_TEST;

/* A PES start with PTS pts in packet p (PID 0x101), marked a random
 * access point when rap */
static void
write_pes_start (guint8 * p, guint64 pts, gboolean rap)
{
  guint8 *pes = p + 4;

  p[1] = 0x40 | 0x01;
  p[2] = 0x01;
  p[3] = 0x10;
  if (rap) {
    p[3] = 0x30;
    p[4] = 1;
    p[5] = 0x40;                /* random_access_indicator */
    pes = p + 6;
  }
  memcpy (pes, "\x00\x00\x01\xe0\x00\x00\x80\x80\x05", 9);
  pes[9] = 0x21 | ((pts >> 29) & 0x0e);
  pes[10] = pts >> 22;
  pes[11] = ((pts >> 14) & 0xfe) | 1;
  pes[12] = pts >> 7;
  pes[13] = ((pts << 1) & 0xfe) | 1;
}

GST_START_TEST (test_random_access_points)
{
  /* a PES start every 100 packets, 1 s apart, its PTS wrapping after the
   * first; every other one a random access point */
  guint n = 700;
  guint64 first = (G_GUINT64_CONSTANT (1) << 33) - 45000;
  g_autofree guint8 *ts = make_ts (n, 0, 10, 5 * HZ, HZ / 100);
  g_autofree guint8 *plain = make_ts (n, 0, 10, 5 * HZ, HZ / 100);
  const gchar *why = NULL;
  ServerMpegtsIndex *index;
  guint64 at = 1;

  for (guint k = 0; k < 7; k++)
    write_pes_start (ts + (5 + 100 * k) * 188, (first + k * 90000) %
        (G_GUINT64_CONSTANT (1) << 33), k % 2 == 0);
  index = server_mpegts_index_new (ts, n * 188, &why);
  fail_unless (index != NULL, "%s", why);
  fail_unless_equals_uint64 (index->first_pts, first);
  fail_unless_equals_uint64 (index->pts_span_ns, 6 * GST_SECOND);
  fail_unless_equals_int (index->n_points, 4);
  for (guint i = 0; i < 4; i++) {
    fail_unless_equals_int (index->point_packet[i], 5 + 200 * i);
    fail_unless_equals_uint64 (index->point_ns[i], 2 * i * GST_SECOND);
  }
  /* before the second point: the whole file */
  fail_unless_equals_int (server_mpegts_index_seek_pts (index, GST_SECOND,
          &at), 0);
  fail_unless_equals_uint64 (at, 0);
  /* the last point at or before the time: not the unmarked PES after it */
  fail_unless_equals_int (server_mpegts_index_seek_pts (index,
          3 * GST_SECOND + 1, &at), 205);
  fail_unless_equals_uint64 (at, 2 * GST_SECOND);
  fail_unless_equals_int (server_mpegts_index_seek_pts (index,
          4 * GST_SECOND, &at), 405);
  fail_unless_equals_int (server_mpegts_index_seek_pts (index, G_MAXUINT64,
          &at), 605);
  server_mpegts_index_free (index);

  /* no PTS: the clock's chunks */
  index = server_mpegts_index_new (plain, n * 188, &why);
  fail_unless (index != NULL, "%s", why);
  fail_unless_equals_int (index->first_pts, -1);
  fail_unless_equals_int (index->n_points, 0);
  fail_unless_equals_int (server_mpegts_index_seek_pts (index, 7000001,
          &at), 14);
  fail_unless_equals_uint64 (at, 14000000);
  server_mpegts_index_free (index);
}

GST_END_TEST;

GST_START_TEST (test_refusals)
{
  g_autofree guint8 *ts = make_ts (50, 0, 10, 0, HZ / 100);
  g_autofree guint8 *none = make_ts (50, 1000, 10, 0, HZ / 100);
  const gchar *why = NULL;

  fail_unless (server_mpegts_index_new (ts, 100, &why) == NULL);
  fail_unless (strstr (why, "no transport packet") != NULL, "%s", why);
  fail_unless (server_mpegts_index_new (none, 50 * 188, &why) == NULL);
  fail_unless (strstr (why, "no clock reference") != NULL, "%s", why);
  ts[17 * 188] = 0x48;
  fail_unless (server_mpegts_index_new (ts, 50 * 188, &why) == NULL);
  fail_unless (strstr (why, "sync byte") != NULL, "%s", why);
}

GST_END_TEST;

/* The chunks deframed from generations first.. of gens: each chunk's
 * index in *chunks (its payload checked against the file, its pts against
 * its due time), how many there were in *n, and the CAPS records met */
static guint
deframe_from (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, const guint8 * ts, guint first,
    guint * chunks, guint * n)
{
  NcDeframer *d = nc_deframer_new ();
  gsize block = (gsize) gens->m * gens->k;
  guint caps = 0;
  gboolean typed = FALSE;

  *n = 0;
  for (guint g = first; g < gens->n_generations; g++) {
    guint8 *data = g_malloc (block);
    guint32 length = server_mpegts_generation_length (gens, g);
    GstClockTime pts;
    NcRecordHeader h;
    GstBuffer *payload;
    NcDeframeResult r;

    /* what is not data is zero, up to a whole block */
    memset (data, 0xAA, block);
    server_mpegts_generation_fill (gens, index, ts, g, data);
    for (guint32 i = length; i < (length + gens->k - 1) / gens->k * gens->k;
        i++)
      fail_unless_equals_int (data[i], 0);
    fail_unless (length <= block);
    fail_unless (nc_deframer_push (d, gst_buffer_new_wrapped (data, length),
            &pts));
    fail_unless_equals_uint64 (pts, server_mpegts_generation_due_ns (gens,
            index, g));
    while ((r = nc_deframer_next (d, &h, &payload)) == NC_DEFRAME_RECORD) {
      if (h.type == NC_RECORD_CAPS) {
        fail_unless (gst_buffer_memcmp (payload, 0, gens->caps,
                gens->caps_length) == 0);
        caps++;
        typed = TRUE;
      } else {
        /* the next chunk, whole, timed as the plain path sends it */
        guint c = *n == 0 ? 0 : chunks[*n - 1] + 1;
        gsize offset = (gsize) c * 7 * 188;

        fail_unless (typed, "a buffer before the caps");
        if (*n == 0) {
          /* the first is wherever the first generation's record starts */
          for (c = 0; c < index->n_chunks && index->due_ns[c] != h.pts; c++);
          while (c + 1 < index->n_chunks && index->due_ns[c + 1] == h.pts &&
              gst_buffer_memcmp (payload, 0, ts + (gsize) c * 7 * 188,
                  gst_buffer_get_size (payload)) != 0)
            c++;
          offset = (gsize) c * 7 * 188;
        }
        fail_unless (c < index->n_chunks);
        fail_unless_equals_int (gst_buffer_get_size (payload),
            MIN (7 * 188, index->size - offset));
        fail_unless (gst_buffer_memcmp (payload, 0, ts + offset,
                gst_buffer_get_size (payload)) == 0, "chunk %u", c);
        fail_unless_equals_uint64 (h.pts, index->due_ns[c]);
        chunks[(*n)++] = c;
      }
      gst_buffer_unref (payload);
    }
    fail_unless_equals_int (r, NC_DEFRAME_NEED_MORE);
  }
  nc_deframer_free (d);
  return caps;
}

GST_START_TEST (test_generations_carry_the_chunks)
{
  /* 703 packets: 101 chunks, the last of 1 packet; the packets' bytes
   * differ, so that a chunk out of place shows */
  guint n = 701;
  g_autofree guint8 *ts = make_ts (n, 0, 10, 0, HZ / 100);
  const gchar *why = NULL;
  ServerMpegtsIndex *index;
  g_autofree guint *chunks = NULL;

  for (guint i = 0; i < n; i++)
    for (guint b = 12; b < 188; b++)
      ts[(gsize) i * 188 + b] = (guint8) (i * 7 + b);
  index = server_mpegts_index_new (ts, n * 188, &why);
  fail_unless (index != NULL, "%s", why);
  chunks = g_new (guint, index->n_chunks);

  /* generations smaller than a record (every record spans two or three)
   * and larger (several records each) */
  for (guint shape = 0; shape < 2; shape++) {
    guint m = shape == 0 ? 2 : 16, k = shape == 0 ? 500 : 1316;
    ServerMpegtsGenerations *gens = server_mpegts_generations_new (index,
        m, k, "video/mpegts, systemstream=(boolean)true");
    guint got, caps;

    fail_unless (gens != NULL);
    /* the whole stream from generation 0: every chunk once, in order, and
     * a CAPS record in every generation where a record starts */
    caps = deframe_from (gens, index, ts, 0, chunks, &got);
    fail_unless_equals_int (got, index->n_chunks);
    for (guint c = 0; c < got; c++)
      fail_unless_equals_int (chunks[c], c);
    {
      guint starts = 0;

      for (guint g = 0; g < gens->n_generations; g++)
        starts += gens->first_record[g] != NC_FRAMING_NO_RECORD;
      fail_unless_equals_int (caps, starts);
      if (shape == 1)
        fail_unless_equals_int (starts, gens->n_generations);
    }

    /* a session that starts at the generation a seek gives has the
     * chunk asked for and what follows, to the end; one generation later
     * it would not have it */
    for (guint c = 0; c < index->n_chunks; c += 9) {
      guint g = server_mpegts_generations_seek (gens, index, c);

      deframe_from (gens, index, ts, g, chunks, &got);
      fail_unless (got > 0 && chunks[0] <= c, "chunk %u from %u", c, g);
      fail_unless_equals_int (chunks[got - 1], index->n_chunks - 1);
      if (g + 1 < gens->n_generations) {
        deframe_from (gens, index, ts, g + 1, chunks, &got);
        fail_unless (got == 0 || chunks[0] > c, "chunk %u from %u", c, g);
      }
    }
    fail_unless_equals_int (server_mpegts_generations_seek (gens, index,
            index->n_chunks), gens->n_generations);
    server_mpegts_generations_free (gens);
  }
  /* too small for the framing prefix and a record header */
  fail_unless (server_mpegts_generations_new (index, 1, 48, "x") == NULL);
  server_mpegts_index_free (index);
}

GST_END_TEST;

static Suite *
servermpegts_suite (void)
{
  Suite *s = suite_create ("servermpegts");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_chunks_follow_the_clock);
  tcase_add_test (tc, test_before_the_first_pcr_and_partial_packets);
  tcase_add_test (tc, test_wrap_and_discontinuity);
  tcase_add_test (tc, test_random_access_points);
  tcase_add_test (tc, test_refusals);
  tcase_add_test (tc, test_generations_carry_the_chunks);
  return s;
}

GST_CHECK_MAIN (servermpegts);
