/* rtgpuqueue on the CPU backend: Theorem 1 (no admitted packet misses its
 * deadline), admission under a 2x offer, streams joining and leaving,
 * policing, the LATENCY query, request pads and state cycles.
 *
 * Timing: cycle I = 2 ms, mu = 0.1 ms, so Theorem 1 bounds a packet's stay
 * by 3I + mu = 6.1 ms. Deadlines are 100 ms: room for a shared 2-core
 * machine to stall our threads for ~90 ms (a container throttled by its CPU
 * quota does; 20 ms deadlines missed there under load), never room for an
 * overloaded worker, whose backlog and latency grow without bound (the
 * admission=off run passes 100 ms within half a second and ends near 500 ms). The busy processor costs 125 ns
 * per byte on one core, so the worker computes at most 8 MB/s; capacity is
 * set to 5 MB/s (a batch at capacity takes 1.25 ms of the 2 ms cycle). */
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <string.h>

#define CYCLE (2 * GST_MSECOND)
#define DEADLINE (100 * GST_MSECOND)
#define PKT 1000
#define RATE 1250000            /* bytes/s per stream: 1250 packets/s */
#define CAPACITY 5000000
#define BUSY_NS_PER_KB 128000

typedef struct
{
  GstPad *src;                  /* ours, linked to sink_%u */
  GstPad *sink;                 /* ours, linked to src_%u */
  GstPad *req;                  /* the element's sink_%u */
  guint64 next;                 /* next expected offset */
  guint64 received;
  gint out_of_order;
  gint bad_pts;
  /* producer */
  guint64 count;
  guint64 rate;                 /* bytes/s actually sent */
  GThread *thread;
} Stream;

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  Stream *s = gst_pad_get_element_private (pad);
  guint64 seq = GST_BUFFER_OFFSET (buf);

  if (seq < s->next)
    s->out_of_order++;
  if (GST_BUFFER_PTS (buf) != seq * GST_MSECOND)
    s->bad_pts++;
  s->next = seq + 1;
  s->received++;
  gst_buffer_unref (buf);
  return GST_FLOW_OK;
}

static gboolean
src_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    gst_query_set_latency (query, TRUE, 5 * GST_MSECOND, 7 * GST_MSECOND);
    return TRUE;
  }
  return gst_pad_query_default (pad, parent, query);
}

static GstElement *
make_queue (gboolean admission)
{
  GstElement *q = gst_element_factory_make ("rtgpuqueue", NULL);

  fail_unless (q != NULL);
  g_object_set (q, "cycle", (guint64) CYCLE, "capacity", (guint64) CAPACITY,
      "processor", 1 /* busy */ , "busy-ns-per-kb", BUSY_NS_PER_KB,
      "admission", admission, "pipelines", 2,
      /* a producer thread late by up to 50 ms is not policed */
      "police-burst", (guint64) (50 * GST_MSECOND), "backend", 1 /* cpu */ ,
      /* the worker should own a core, as in the paper; where SCHED_FIFO is
       * denied the element logs it and the 100 ms deadlines are the margin */
      "rt-priority", 10, NULL);
  return q;
}

static GstCaps *
stream_caps (guint64 rate, GstClockTime deadline)
{
  return gst_caps_new_simple ("x-rtgpu/stream",
      "max-packet-size", G_TYPE_INT, PKT,
      "deadline", G_TYPE_UINT64, deadline,
      "max-rate", G_TYPE_UINT64, rate, NULL);
}

/* Requests a stream; NULL when refused. */
static Stream *
stream_new (GstElement * q, guint64 declared_rate, GstClockTime deadline)
{
  GstCaps *caps = stream_caps (declared_rate, deadline);
  GstPad *req = gst_element_request_pad (q,
      gst_element_get_pad_template (q, "sink_%u"), NULL, caps);
  Stream *s;
  gchar *name;
  GstPad *srcpad;

  gst_caps_unref (caps);
  if (!req)
    return NULL;
  s = g_new0 (Stream, 1);
  s->req = req;
  s->src = gst_pad_new ("src", GST_PAD_SRC);
  gst_pad_set_query_function (s->src, src_query);
  s->sink = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_element_private (s->sink, s);
  gst_pad_set_chain_function (s->sink, sink_chain);
  fail_unless_equals_int (gst_pad_link (s->src, req), GST_PAD_LINK_OK);
  name = g_strdup_printf ("src_%s", GST_OBJECT_NAME (req) + 5);
  srcpad = gst_element_get_static_pad (q, name);
  fail_unless (srcpad != NULL);
  fail_unless_equals_int (gst_pad_link (srcpad, s->sink), GST_PAD_LINK_OK);
  gst_object_unref (srcpad);
  g_free (name);
  gst_pad_set_active (s->src, TRUE);
  gst_pad_set_active (s->sink, TRUE);
  return s;
}

static void
stream_free (GstElement * q, Stream * s)
{
  gst_pad_set_active (s->src, FALSE);
  gst_pad_set_active (s->sink, FALSE);
  gst_element_release_request_pad (q, s->req);
  gst_object_unref (s->req);
  gst_object_unref (s->src);
  gst_object_unref (s->sink);
  g_free (s);
}

static void
stream_start_events (Stream * s)
{
  GstSegment seg;

  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (s->src,
          gst_event_new_stream_start ("rtgpu-test")));
  fail_unless (gst_pad_push_event (s->src,
          gst_event_new_caps (gst_caps_new_empty_simple ("x-test/packets"))));
  fail_unless (gst_pad_push_event (s->src, gst_event_new_segment (&seg)));
}

static guint64
now_ns (void)
{
  return g_get_monotonic_time () * 1000;
}

/* Paced by absolute times: count packets of PKT bytes at s->rate. */
static gpointer
produce (gpointer data)
{
  Stream *s = data;
  guint64 interval = GST_SECOND * PKT / s->rate, start = now_ns ();
  guint64 seq;

  for (seq = 0; seq < s->count; seq++) {
    guint64 due = start + seq * interval, now = now_ns ();
    GstBuffer *buf;

    if (due > now)
      g_usleep ((due - now) / 1000);
    buf = gst_buffer_new_allocate (NULL, PKT, NULL);
    GST_BUFFER_OFFSET (buf) = seq;
    GST_BUFFER_PTS (buf) = seq * GST_MSECOND;
    if (gst_pad_push (s->src, buf) != GST_FLOW_OK)
      break;
  }
  return NULL;
}

static void
start_producers (Stream ** streams, guint n, guint64 count)
{
  guint i;

  for (i = 0; i < n; i++) {
    stream_start_events (streams[i]);
    streams[i]->count = count;
    if (!streams[i]->rate)
      streams[i]->rate = RATE;
    streams[i]->thread = g_thread_new ("producer", produce, streams[i]);
  }
}

static void
join_producers (Stream ** streams, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    g_thread_join (streams[i]->thread);
  /* the last packets leave within 3I + mu */
  g_usleep (50 * 1000);
}

static const GstStructure *
stream_stats (const GstStructure * stats, Stream * s)
{
  const GValue *arr = gst_structure_get_value (stats, "stream-stats");
  guint i;

  for (i = 0; i < gst_value_array_get_size (arr); i++) {
    const GstStructure *st =
        gst_value_get_structure (gst_value_array_get_value (arr, i));
    if (!g_strcmp0 (gst_structure_get_string (st, "pad"),
            GST_OBJECT_NAME (s->req)))
      return st;
  }
  fail ("no stats for %s", GST_OBJECT_NAME (s->req));
  return NULL;
}

static guint64
get_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "%s", field);
  return v;
}

/* ---- Theorem 1 ----------------------------------------------------------- */

GST_START_TEST (test_theorem)
{
  GstElement *q = make_queue (TRUE);
  Stream *streams[4];
  GstStructure *stats;
  guint i;

  /* 4 x 1.25 MB/s = capacity exactly */
  for (i = 0; i < 4; i++)
    fail_unless ((streams[i] = stream_new (q, RATE, DEADLINE)) != NULL);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  /* 4.4 s at full declared rate: 2200 cycles */
  start_producers (streams, 4, 5500);
  join_producers (streams, 4);

  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, stats);
  fail_unless (get_u64 (stats, "cycles") >= 2000);
  for (i = 0; i < 4; i++) {
    const GstStructure *st = stream_stats (stats, streams[i]);

    fail_unless_equals_uint64 (get_u64 (st, "deadline-misses"), 0);
    fail_unless_equals_uint64 (get_u64 (st, "drops-policed"), 0);
    fail_unless_equals_uint64 (get_u64 (st, "packets"), 5500);
    fail_unless (get_u64 (st, "latency-max") <= DEADLINE);
    fail_unless_equals_uint64 (streams[i]->received, 5500);
    fail_unless_equals_int (streams[i]->out_of_order, 0);
    fail_unless_equals_int (streams[i]->bad_pts, 0);
  }
  fail_unless_equals_uint64 (get_u64 (stats, "deadline-misses"), 0);
  gst_structure_free (stats);

  gst_element_set_state (q, GST_STATE_NULL);
  for (i = 0; i < 4; i++)
    stream_free (q, streams[i]);
  gst_object_unref (q);
}

GST_END_TEST;

/* ---- admission: a 2x offer ----------------------------------------------- */

static guint64
offer_twice_capacity (gboolean admission, guint * admitted)
{
  GstElement *q = make_queue (admission);
  GstBus *bus = gst_bus_new ();
  Stream *streams[8];
  GstStructure *stats;
  GstMessage *msg;
  guint64 misses;
  guint i, n = 0, warnings = 0;

  gst_element_set_bus (q, bus);
  for (i = 0; i < 8; i++) {
    Stream *s = stream_new (q, RATE, DEADLINE);
    if (s)
      streams[n++] = s;
  }
  /* each refusal is a warning naming the limit */
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING))) {
    GError *err;

    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (strstr (err->message, "exceeds capacity 5e+06 B/s"),
        "%s", err->message);
    g_error_free (err);
    gst_message_unref (msg);
    warnings++;
  }
  fail_unless_equals_int (warnings, 8 - n);
  *admitted = n;

  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  start_producers (streams, n, 2500);   /* 2 s */
  join_producers (streams, n);
  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("admission %d: %" GST_PTR_FORMAT, admission, stats);
  misses = get_u64 (stats, "deadline-misses");
  fail_unless_equals_uint64 (get_u64 (stats, "streams-refused"), 8 - n);
  gst_structure_free (stats);

  gst_element_set_state (q, GST_STATE_NULL);
  for (i = 0; i < n; i++)
    stream_free (q, streams[i]);
  gst_element_set_bus (q, NULL);
  gst_object_unref (bus);
  gst_object_unref (q);
  return misses;
}

GST_START_TEST (test_admission)
{
  guint admitted;

  fail_unless_equals_uint64 (offer_twice_capacity (TRUE, &admitted), 0);
  fail_unless_equals_int (admitted, 4);
}

GST_END_TEST;

GST_START_TEST (test_admission_off)
{
  guint admitted;

  /* 10 MB/s on a worker that computes 8 MB/s: the backlog grows */
  fail_unless (offer_twice_capacity (FALSE, &admitted) > 0);
  fail_unless_equals_int (admitted, 8);
}

GST_END_TEST;

GST_START_TEST (test_refusal_deadline)
{
  GstElement *q = make_queue (TRUE);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err;
  Stream *s;

  gst_element_set_bus (q, bus);
  /* 6 ms is not above 3 x 2 + 0.1 ms */
  fail_unless (stream_new (q, 1000, 6 * GST_MSECOND) == NULL);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless_equals_string (err->message, "stream refused: deadline 6 ms "
      "is not above 3 x cycle 2 ms + mu 0.1 ms");
  g_error_free (err);
  gst_message_unref (msg);
  fail_unless ((s = stream_new (q, 1000, 6200 * GST_USECOND)) != NULL);
  stream_free (q, s);
  gst_element_set_bus (q, NULL);
  gst_object_unref (bus);
  gst_object_unref (q);
}

GST_END_TEST;

/* ---- joining, leaving, policing ------------------------------------------ */

GST_START_TEST (test_join_leave_police)
{
  GstElement *q = make_queue (TRUE);
  Stream *a, *b, *greedy, *late;
  Stream *first[2], *second[2];
  GstStructure *stats;
  const GstStructure *st;

  fail_unless ((a = stream_new (q, RATE, DEADLINE)) != NULL);
  fail_unless ((b = stream_new (q, RATE, DEADLINE)) != NULL);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  first[0] = a;
  first[1] = b;
  start_producers (first, 2, 2500);

  /* joining while running: one declares 1.25 MB/s and sends 3x that */
  g_usleep (300 * 1000);
  fail_unless ((greedy = stream_new (q, RATE, DEADLINE)) != NULL);
  greedy->rate = 3 * RATE;
  fail_unless ((late = stream_new (q, RATE, DEADLINE)) != NULL);
  /* capacity is full: a fifth is refused */
  fail_unless (stream_new (q, RATE, DEADLINE) == NULL);
  second[0] = greedy;
  second[1] = late;
  start_producers (second, 2, 1000);
  join_producers (second, 2);

  g_object_get (q, "stats", &stats, NULL);
  st = stream_stats (stats, greedy);
  /* sent 3x for 0.27 s: about two thirds dropped */
  fail_unless (get_u64 (st, "drops-policed") > 500);
  fail_unless (get_u64 (st, "packets") < 500);
  fail_unless_equals_uint64 (get_u64 (st, "deadline-misses"), 0);
  st = stream_stats (stats, late);
  fail_unless_equals_uint64 (get_u64 (st, "packets"), 1000);
  fail_unless_equals_uint64 (get_u64 (st, "drops-policed"), 0);
  gst_structure_free (stats);

  /* leaving while running frees the rate: a new stream fits again */
  stream_free (q, greedy);
  fail_unless ((greedy = stream_new (q, RATE, DEADLINE)) != NULL);
  stream_free (q, greedy);
  stream_free (q, late);

  join_producers (first, 2);
  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, stats);
  st = stream_stats (stats, a);
  fail_unless_equals_uint64 (get_u64 (st, "packets"), 2500);
  fail_unless_equals_uint64 (get_u64 (st, "deadline-misses"), 0);
  fail_unless_equals_uint64 (get_u64 (st, "drops-policed"), 0);
  st = stream_stats (stats, b);
  fail_unless_equals_uint64 (get_u64 (st, "packets"), 2500);
  fail_unless_equals_uint64 (get_u64 (st, "deadline-misses"), 0);
  fail_unless_equals_uint64 (get_u64 (stats, "streams-admitted"), 5);
  fail_unless_equals_uint64 (get_u64 (stats, "streams-refused"), 1);
  fail_unless_equals_uint64 (get_u64 (stats, "deadline-misses"), 0);
  gst_structure_free (stats);
  fail_unless_equals_int (a->out_of_order + b->out_of_order, 0);

  gst_element_set_state (q, GST_STATE_NULL);
  stream_free (q, a);
  stream_free (q, b);
  gst_object_unref (q);
}

GST_END_TEST;

/* ---- latency, pads, states ----------------------------------------------- */

GST_START_TEST (test_latency_query)
{
  GstElement *q = make_queue (TRUE);
  Stream *s = stream_new (q, 1000, DEADLINE);
  GstQuery *query = gst_query_new_latency ();
  GstClockTime min, max;
  gboolean live;

  fail_unless (gst_pad_peer_query (s->sink, query));
  gst_query_parse_latency (query, &live, &min, &max);
  /* upstream 5..7 ms, plus 3 x 2 ms + 0.1 ms */
  fail_unless (live);
  fail_unless_equals_uint64 (min, 5 * GST_MSECOND + 6100 * GST_USECOND);
  fail_unless_equals_uint64 (max, 7 * GST_MSECOND + 6100 * GST_USECOND);
  gst_query_unref (query);
  stream_free (q, s);
  gst_object_unref (q);
}

GST_END_TEST;

GST_START_TEST (test_pads_and_states)
{
  GstElement *q = make_queue (TRUE);
  Stream *s[3];
  guint i, cycle;

  for (i = 0; i < 3; i++)
    fail_unless ((s[i] = stream_new (q, 1000, DEADLINE)) != NULL);
  fail_unless_equals_int (g_list_length (GST_ELEMENT (q)->pads), 6);
  for (cycle = 0; cycle < 5; cycle++) {
    GstBuffer *buf;

    fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
        GST_STATE_CHANGE_SUCCESS);
    stream_start_events (s[0]);
    buf = gst_buffer_new_allocate (NULL, 100, NULL);
    GST_BUFFER_OFFSET (buf) = 0;
    GST_BUFFER_PTS (buf) = 0;
    s[0]->next = 0;
    fail_unless_equals_int (gst_pad_push (s[0]->src, buf), GST_FLOW_OK);
    /* within 3I + mu, plus scheduling noise */
    for (i = 0; i < 100 && s[0]->received < cycle + 1; i++)
      g_usleep (1000);
    fail_unless_equals_uint64 (s[0]->received, cycle + 1);
    fail_unless_equals_int (gst_element_set_state (q, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }
  for (i = 0; i < 3; i++) {
    gpointer weak = s[i]->req;

    /* the element's, ours and the scheduler stream's */
    ASSERT_OBJECT_REFCOUNT (s[i]->req, "request pad", 3);
    g_object_add_weak_pointer (weak, &weak);
    stream_free (q, s[i]);
    fail_unless (weak == NULL, "released pad still alive");
  }
  fail_unless (GST_ELEMENT (q)->pads == NULL);
  gst_object_unref (q);
}

GST_END_TEST;

GST_START_TEST (test_calibrate_action)
{
  GstElement *q = make_queue (TRUE);
  guint64 cap = 0, prop = 0;

  /* 125 ns per byte: at most 8 MB/s, and 80 % of the cycle of that */
  g_signal_emit_by_name (q, "calibrate", NULL, &cap);
  g_object_get (q, "capacity", &prop, NULL);
  GST_INFO ("calibrated capacity %" G_GUINT64_FORMAT " B/s", cap);
  fail_unless_equals_uint64 (prop, cap);
  /* upper bound: the cost; a loaded machine measures lower */
  fail_unless (cap > 0 && cap <= 6400000 + 6400000 / 16,
      "%" G_GUINT64_FORMAT, cap);
  gst_object_unref (q);
}

GST_END_TEST;

static Suite *
rtgpuqueue_suite (void)
{
  Suite *s = suite_create ("rtgpuqueue");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_latency_query);
  tcase_add_test (tc, test_pads_and_states);
  tcase_add_test (tc, test_refusal_deadline);
  tcase_add_test (tc, test_calibrate_action);
  tcase_add_test (tc, test_theorem);
  tcase_add_test (tc, test_admission);
  tcase_add_test (tc, test_admission_off);
  tcase_add_test (tc, test_join_leave_police);
  return s;
}

GST_CHECK_MAIN (rtgpuqueue);
