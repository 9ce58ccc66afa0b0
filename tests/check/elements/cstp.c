/* cstp: the frame packet of cstpsink / cstpsrc byte for byte and under
 * truncation, the sender's errors on bad settings and oversized frames, and
 * a frame's bytes, caps, timestamps and flags through both elements on
 * loopback. (Loss, reordering and bad datagrams: tests/network/test_cstp_*.) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include <gst/check/gstcheck.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

#include <fountain/fountain.h>
#include "element_backend.h"

GST_START_TEST (test_frame_packet_bytes)
{
  static const char caps[] = "video/x-raw";
  FountainMeta m = {.streams = 4,.stream = 2,.flags = FOUNTAIN_META_FLAG_DELTA,
    .frame_id = 0x01020304,.frame_len = 100000,.pts = 0x1122334455667788ull,
    .duration = FOUNTAIN_META_NONE,.caps_len = sizeof caps - 1,.caps = caps
  };
  static const guint8 want[36] = { 'C', 'S', 'T', 'M', 1, 4, 2, 1,
    1, 2, 3, 4, 0x00, 0x01, 0x86, 0xA0,
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 11, 0, 0
  };
  guint8 buf[64];
  int len = fountain_meta_write (&m, buf, sizeof buf);
  fail_unless_equals_int (len, 36 + 11);
  fail_unless (memcmp (buf, want, 36) == 0);
  fail_unless (memcmp (buf + 36, caps, 11) == 0);

  FountainMeta g;
  fail_unless_equals_int (fountain_meta_parse (buf, len, &g), FOUNTAIN_OK);
  fail_unless (g.streams == 4 && g.stream == 2 && g.flags == 1
      && g.frame_id == 0x01020304 && g.frame_len == 100000
      && g.pts == m.pts && g.duration == FOUNTAIN_META_NONE
      && g.caps_len == 11 && memcmp (g.caps, caps, 11) == 0);

  /* every truncation and one byte too many */
  for (int t = 0; t < len; t++) {
    guint8 *cut = g_memdup2 (buf, t ? t : 1);
    fail_if (fountain_meta_parse (cut, t, &g) == FOUNTAIN_OK, "cut at %d", t);
    g_free (cut);
  }
  guint8 longer[64];
  memcpy (longer, buf, len);
  fail_unless_equals_int (fountain_meta_parse (longer, len + 1, &g),
      FOUNTAIN_ERR_LENGTH);

  /* each rule on its own */
  struct
  {
    int off;
    guint8 val;
    int err;
  } bad[] = {
    {0, 'X', FOUNTAIN_ERR_MAGIC}, {4, 2, FOUNTAIN_ERR_VERSION},
    {5, 0, FOUNTAIN_ERR_STREAMS}, {5, 65, FOUNTAIN_ERR_STREAMS},
    {6, 4, FOUNTAIN_ERR_STREAMS}, {7, 0x80, FOUNTAIN_ERR_KIND},
    {34, 1, FOUNTAIN_ERR_KIND}, {36 + 3, 0, FOUNTAIN_ERR_LENGTH},
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    guint8 b[64];
    memcpy (b, buf, len);
    b[bad[i].off] = bad[i].val;
    fail_unless_equals_int (fountain_meta_parse (b, len, &g), bad[i].err);
  }
  guint8 zero_len[64];
  memcpy (zero_len, buf, len);
  memset (zero_len + 12, 0, 4);
  fail_unless_equals_int (fountain_meta_parse (zero_len, len, &g),
      FOUNTAIN_ERR_GEOMETRY);
  /* a code packet is not a frame packet, and the other way round */
  memcpy (zero_len, buf, len);
  zero_len[3] = 'P';
  fail_unless_equals_int (fountain_meta_parse (zero_len, len, &g),
      FOUNTAIN_ERR_MAGIC);
  FountainHeader h;
  fail_if (fountain_header_parse (buf, len, &h, NULL) == FOUNTAIN_OK);
}

GST_END_TEST;

/* The error message the pipeline posts when going to PAUSED / PLAYING. */
static gchar *
run_to_error (const gchar * desc, GstBuffer * push)
{
  GstElement *p = gst_parse_launch (desc, NULL);
  fail_unless (p != NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "in");
  gst_element_set_state (p, GST_STATE_PLAYING);
  if (src && push) {
    gst_app_src_push_buffer (GST_APP_SRC (src), push);
    gst_app_src_end_of_stream (GST_APP_SRC (src));
  }
  GstMessage *msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p),
      10 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  gchar *text = NULL;
  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    /* the reason is the error's first line, what gst-launch-1.0 prints */
    gst_message_parse_error (msg, &err, NULL);
    text = g_strdup (err->message);
    g_error_free (err);
  }
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (p, GST_STATE_NULL);
  if (src)
    gst_object_unref (src);
  gst_object_unref (p);
  return text;
}

GST_START_TEST (test_sink_errors)
{
  gchar *e = run_to_error ("appsrc name=in ! cstpsink streams=3 "
      "destinations=127.0.0.1:9,127.0.0.1:10", NULL);
  fail_unless (e && strstr (e, "destinations has 2 entries, streams is 3"),
      "%s", e);
  g_free (e);
  e = run_to_error ("appsrc name=in ! cstpsink streams=1 "
      "destinations=127.0.0.1:x", NULL);
  fail_unless (e && strstr (e, "is not host:port"), "%s", e);
  g_free (e);
  e = run_to_error ("appsrc name=in ! cstpsink streams=2 port=65535", NULL);
  fail_unless (e && strstr (e, "beyond 65535"), "%s", e);
  g_free (e);
  /* 1-byte symbols: a 20000-byte frame needs N = 20000 > 16384 */
  e = run_to_error ("appsrc name=in ! cstpsink streams=1 packet-size=33 "
      "host=127.0.0.1 port=9 sync=false", gst_buffer_new_allocate (NULL,
          20000, NULL));
  fail_unless (e && strstr (e, "raise packet-size or streams"), "%s", e);
  g_free (e);
}

GST_END_TEST;

static gint
free_udp_port (void)
{
  int fd = socket (AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET };
  socklen_t len = sizeof a;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  getsockname (fd, (struct sockaddr *) &a, &len);
  close (fd);
  return ntohs (a.sin_port);
}

/* Five GRAY8 frames through cstpsink -> loopback -> cstpsrc: the caps come
 * from the frame packets, the bytes are equal, the sender's spacing of
 * timestamps stays, DELTA_UNIT and HEADER travel, the first buffer is
 * DISCONT and no later one is. The sender is paced at 8 kbit/s a stream,
 * 25 s a frame, but max-latency holds each frame to 20 ms. */
GST_START_TEST (test_frames_caps_flags)
{
  const gchar *caps = "video/x-raw, format=(string)GRAY8, width=(int)160, "
      "height=(int)120, framerate=(fraction)30/1";
  gint ports[3];
  for (int i = 0; i < 3; i++)
    ports[i] = free_udp_port ();
  gchar *rdesc = g_strdup_printf ("cstpsrc name=src streams=3 "
      "address=127.0.0.1 ports=%d,%d,%d ! appsink name=out sync=false",
      ports[0], ports[1], ports[2]);
  gchar *sdesc = g_strdup_printf ("appsrc name=in format=time caps=\"%s\" ! "
      "cstpsink name=sink streams=3 destinations=127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d "
      "packet-size=532 overhead=0.2 rate=8000 max-latency=20000000 "
      "sync=false", caps, ports[0], ports[1],
      ports[2]);
  GstElement *recv = gst_parse_launch (rdesc, NULL);
  GstElement *send = gst_parse_launch (sdesc, NULL);
  GstElement *in = gst_bin_get_by_name (GST_BIN (send), "in");
  GstElement *out = gst_bin_get_by_name (GST_BIN (recv), "out");
  fail_unless (gst_element_set_state (recv, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_set_state (send, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  const gsize size = 160 * 120;
  for (int f = 0; f < 5; f++) {
    GstBuffer *b = gst_buffer_new_allocate (NULL, size, NULL);
    GstMapInfo map;
    gst_buffer_map (b, &map, GST_MAP_WRITE);
    for (gsize i = 0; i < size; i++)
      map.data[i] = (guint8) (i * 7 + f * 31 + (i >> 8));
    gst_buffer_unmap (b, &map);
    GST_BUFFER_PTS (b) = f * GST_SECOND / 30;
    GST_BUFFER_DURATION (b) = GST_SECOND / 30;
    if (f > 0)
      GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_DELTA_UNIT);
    if (f == 2)
      GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_HEADER);
    gst_app_src_push_buffer (GST_APP_SRC (in), b);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  GstClockTime pts0 = 0;
  for (int f = 0; f < 5; f++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
        10 * GST_SECOND);
    fail_unless (s != NULL, "frame %d did not arrive", f);
    GstCaps *want = gst_caps_from_string (caps);
    fail_unless (gst_caps_is_equal (gst_sample_get_caps (s), want));
    gst_caps_unref (want);
    GstBuffer *b = gst_sample_get_buffer (s);
    GstMapInfo map;
    fail_unless_equals_int (gst_buffer_get_size (b), size);
    gst_buffer_map (b, &map, GST_MAP_READ);
    gboolean same = TRUE;
    for (gsize i = 0; i < size; i++)
      same &= map.data[i] == (guint8) (i * 7 + f * 31 + (i >> 8));
    gst_buffer_unmap (b, &map);
    fail_unless (same, "frame %d bytes differ", f);
    if (f == 0)
      pts0 = GST_BUFFER_PTS (b);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b) - pts0,
        f * GST_SECOND / 30);
    fail_unless_equals_uint64 (GST_BUFFER_DURATION (b), GST_SECOND / 30);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_DELTA_UNIT), f > 0);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_HEADER), f == 2);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (b,
            GST_BUFFER_FLAG_DISCONT), f == 0);
    gst_sample_unref (s);
  }
  GstStructure *st = NULL;
  GstElement *src = gst_bin_get_by_name (GST_BIN (recv), "src");
  g_object_get (src, "stats", &st, NULL);
  guint64 decoded = 0, lost = 1, bad = 1;
  gst_structure_get_uint64 (st, "frames-decoded", &decoded);
  gst_structure_get_uint64 (st, "frames-lost", &lost);
  gst_structure_get_uint64 (st, "bad-datagrams", &bad);
  fail_unless (decoded == 5 && lost == 0 && bad == 0, "%" GST_PTR_FORMAT, st);
  gst_structure_free (st);
  gst_object_unref (src);
  /* the sender counts a frame once it is all out: after its EOS */
  GstMessage *eos = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (send),
      10 * GST_SECOND, GST_MESSAGE_EOS);
  fail_unless (eos != NULL);
  gst_message_unref (eos);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (send), "sink");
  g_object_get (sink, "stats", &st, NULL);
  guint64 frames = 0, raised = 0, rendered = 0, dropped = 1;
  gst_structure_get_uint64 (st, "frames", &frames);
  gst_structure_get_uint64 (st, "frames-rate-raised", &raised);
  fail_unless (frames == 5 && raised == 5, "frames %" G_GUINT64_FORMAT
      " raised %" G_GUINT64_FORMAT, frames, raised);
  /* GstBaseSink's own counters survive in the element's stats */
  fail_unless (gst_structure_get_uint64 (st, "rendered", &rendered)
      && gst_structure_get_uint64 (st, "dropped", &dropped)
      && rendered == 5 && dropped == 0, "%" GST_PTR_FORMAT, st);
  gst_structure_free (st);
  gst_object_unref (sink);
  gst_element_set_state (send, GST_STATE_NULL);
  gst_element_set_state (recv, GST_STATE_NULL);
  gst_object_unref (in);
  gst_object_unref (out);
  gst_object_unref (send);
  gst_object_unref (recv);
  g_free (rdesc);
  g_free (sdesc);
}

GST_END_TEST;

enum
{ BACKEND_STREAMS = 3 };

/* Every datagram cstpsink sent for frame with this backend, per stream in
 * arrival order (loopback keeps it), as GBytes. */
static GPtrArray **
datagrams_of (const gchar * backend, GBytes * frame)
{
  GPtrArray **got = g_new (GPtrArray *, BACKEND_STREAMS);
  int fds[BACKEND_STREAMS];
  GString *dests = g_string_new (NULL);

  for (int s = 0; s < BACKEND_STREAMS; s++) {
    struct sockaddr_in a = {.sin_family = AF_INET };
    socklen_t len = sizeof a;
    int size = 4 << 20;
    fds[s] = socket (AF_INET, SOCK_DGRAM, 0);
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    fail_unless (bind (fds[s], (struct sockaddr *) &a, sizeof a) == 0);
    setsockopt (fds[s], SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    getsockname (fds[s], (struct sockaddr *) &a, &len);
    g_string_append_printf (dests, "%s127.0.0.1:%d", s ? "," : "",
        ntohs (a.sin_port));
    got[s] = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  }
  gchar *desc = g_strdup_printf ("appsrc name=in ! cstpsink name=out "
      "backend=%s "
      "streams=%d destinations=%s packet-size=1032 overhead=0.3 "
      "pipe-width=0.5 sync=false", backend, BACKEND_STREAMS, dests->str);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstElement *in = gst_bin_get_by_name (GST_BIN (p), "in");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE, "%s", desc);
  gst_app_src_push_buffer (GST_APP_SRC (in), gst_buffer_new_wrapped_bytes
      (frame));
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  GstMessage *msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p),
      10 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS, "%s", desc);
  gst_message_unref (msg);
  /* the coder it says it used is the one asked for */
  GstElement *out = gst_bin_get_by_name (GST_BIN (p), "out");
  GstStructure *st;
  g_object_get (out, "stats", &st, NULL);
  fail_unless_equals_string (gst_structure_get_string (st, "backend"),
      backend);
  gst_structure_free (st);
  gst_object_unref (out);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (in);
  gst_object_unref (p);
  for (int s = 0; s < BACKEND_STREAMS; s++) {
    guint8 d[2048];
    ssize_t n;
    while ((n = recv (fds[s], d, sizeof d, MSG_DONTWAIT)) > 0)
      g_ptr_array_add (got[s], g_bytes_new (d, n));
    close (fds[s]);
  }
  g_free (desc);
  g_string_free (dests, TRUE);
  return got;
}

/* The redundancy of a frame through the coder pool (backend gpu or hybrid,
 * where a CUDA device is found) is the CPU's byte for byte; without a device
 * those backends refuse to start, saying why. */
GST_START_TEST (test_backends_same_datagrams)
{
  GRand *rand = g_rand_new_with_seed (11);
  gsize size = 50000;
  guint8 *bytes = g_malloc (size);
  for (gsize i = 0; i < size; i++)
    bytes[i] = (guint8) g_rand_int (rand);
  GBytes *frame = g_bytes_new_take (bytes, size);
  GPtrArray **cpu = datagrams_of ("cpu", frame);
  /* 17 sources and 6 redundancy packets a stream, and the frame packet */
  for (int s = 0; s < BACKEND_STREAMS; s++)
    fail_unless_equals_int (cpu[s]->len, 1 + 17 + 6);

  if (!element_gpu_usable ("cstpsink")) {
    gchar *e = run_to_error ("appsrc name=in ! cstpsink backend=gpu "
        "host=127.0.0.1 port=9", NULL);
    fail_unless (e && strstr (e, "backend=gpu but no CUDA device"), "%s", e);
    g_free (e);
    g_print ("no CUDA device: cstpsink backend=gpu / hybrid comparison "
        "skipped\n");
  } else {
    static const gchar *backends[] = { "gpu", "hybrid" };
    for (guint b = 0; b < G_N_ELEMENTS (backends); b++) {
      GPtrArray **other = datagrams_of (backends[b], frame);
      for (int s = 0; s < BACKEND_STREAMS; s++) {
        fail_unless_equals_int (other[s]->len, cpu[s]->len);
        for (guint i = 0; i < cpu[s]->len; i++)
          fail_unless (g_bytes_equal (g_ptr_array_index (other[s], i),
                  g_ptr_array_index (cpu[s], i)), "%s: stream %d datagram %u "
              "differs from the CPU's", backends[b], s, i);
        g_ptr_array_unref (other[s]);
      }
      g_free (other);
    }
  }
  for (int s = 0; s < BACKEND_STREAMS; s++)
    g_ptr_array_unref (cpu[s]);
  g_free (cpu);
  g_bytes_unref (frame);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
cstp_suite (void)
{
  Suite *s = suite_create ("cstp");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_frame_packet_bytes);
  tcase_add_test (tc, test_sink_errors);
  tcase_add_test (tc, test_frames_caps_flags);
  tcase_add_test (tc, test_backends_same_datagrams);
  return s;
}

GST_CHECK_MAIN (cstp);
