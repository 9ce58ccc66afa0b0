/* rtgpuqueue on the CPU backend: the guarantee of the admission condition
 * of Zhang, Hu, Hua, "A holistic approach to build real-time stream
 * processing system with GPU" (2015) (no admitted packet misses its
 * deadline), admission under a 2x offer, streams joining and leaving,
 * policing, the LATENCY query, request pads and state cycles; and
 * processor=srtp-protect: srtpdec (libsrtp) gets the original packets back,
 * the bytes are gpusrtpenc's, a missing key fails clearly; and
 * processor=nc-encode: ncencoder's packet format (header fields, source
 * blocks), ncdecoder gets the input bytes back, also with packets lost.
 *
 * Timing: cycle I = 2 ms, mu = 0.1 ms, so the guarantee bounds a packet's stay
 * by 3I + mu = 6.1 ms. Deadlines are 100 ms: room for a shared 2-core
 * machine to stall our threads for ~90 ms (a container throttled by its CPU
 * quota does; 20 ms deadlines missed there under load), never room for an
 * overloaded worker, whose backlog and latency grow without bound (the
 * admission=off run passes 100 ms within half a second and ends near 500 ms). The busy processor costs 125 ns
 * per byte on one core, so the worker computes at most 8 MB/s; capacity is
 * set to 5 MB/s (a batch at capacity takes 1.25 ms of the 2 ms cycle).
 * A run with misses is repeated (twice at most) only when the machine broke
 * the model: a monitor thread saw the whole process stopped for 50 ms, or a
 * batch took 25 ms (run_timed). */
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include "check/gpu_expected.h"
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

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
  gboolean catch_up;            /* keep to absolute times after a stall */
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
      /* a producer thread stalled by up to 200 ms (a loaded 2-core
       * machine) catches up without being policed */
      "police-burst", (guint64) (200 * GST_MSECOND), "backend", 1 /* cpu */ ,
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
  GstCaps *caps = gst_caps_new_empty_simple ("x-test/packets");

  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_pad_push_event (s->src,
          gst_event_new_stream_start ("rtgpu-test")));
  /* the event takes a reference of its own */
  fail_unless (gst_pad_push_event (s->src, gst_event_new_caps (caps)));
  gst_caps_unref (caps);
  fail_unless (gst_pad_push_event (s->src, gst_event_new_segment (&seg)));
}

static guint64
now_ns (void)
{
  return g_get_monotonic_time () * 1000;
}

/* count packets of PKT bytes at s->rate. A stream at its declared rate
 * (RATE) never sends faster than that, even after a stall of this thread:
 * catching up would be policed, rightly, but would say nothing about the
 * scheduler (seen under load: 3 packets policed in test_theorem). A stream
 * sent faster on purpose, or one that must keep an overload offered
 * (admission=off), keeps to absolute times. */
static gpointer
produce (gpointer data)
{
  Stream *s = data;
  guint64 interval = GST_SECOND * PKT / s->rate, start = now_ns (), last = 0;
  gboolean catch_up = s->catch_up || s->rate > RATE;
  guint64 seq;

  for (seq = 0; seq < s->count; seq++) {
    guint64 due = start + seq * interval, now = now_ns ();
    GstBuffer *buf;

    if (!catch_up && seq > 0 && last + interval > due)
      due = last + interval;
    if (due > now)
      g_usleep ((due - now) / 1000);
    last = now_ns ();
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

/* Waits (up to 5 s) until s has received n packets: a loaded machine may
 * forward the last ones later than join_producers' margin. */
static void
wait_received (Stream * s, guint64 n)
{
  gint64 end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;

  while (__atomic_load_n (&s->received, __ATOMIC_RELAXED) < n &&
      g_get_monotonic_time () < end)
    g_usleep (1000);
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

/* what keep-deadlines dropped from a stream: late, shed or over a cycle */
static guint64
kept_deadline_drops (const GstStructure * st)
{
  return get_u64 (st, "drops-late") + get_u64 (st, "drops-shed") +
      get_u64 (st, "drops-capped");
}

/* An unpaced burst far beyond a cycle's batch, then EOS: every packet
 * comes out or is counted as dropped (drops-overflow), and EOS comes after
 * the packets. EOS used to overtake a full batch and end the stream with
 * the packets still in it, sent nowhere and counted nowhere. */
static void
count_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer data)
{
  (*(guint *) data)++;
}

GST_START_TEST (test_eos_after_full_batch)
{
  guint round;

  for (round = 0; round < 5; round++) {
    GstElement *pipe = gst_parse_launch ("rtgpuqueue name=q processor=copy "
        "backend=cpu cycle=2000000 default-max-rate=100000000 "
        "police-burst=1000000000 fakesrc num-buffers=600 sizetype=fixed "
        "sizemax=1300 filltype=zero ! q.sink_0 q.src_0 ! fakesink name=out "
        "sync=false signal-handoffs=true", NULL);
    GstElement *q = gst_bin_get_by_name (GST_BIN (pipe), "q");
    GstElement *out = gst_bin_get_by_name (GST_BIN (pipe), "out");
    GstMessage *m;
    GstStructure *st;
    guint got = 0;

    g_signal_connect (out, "handoff", G_CALLBACK (count_handoff), &got);
    gst_element_set_state (pipe, GST_STATE_PLAYING);
    m = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipe), 20 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS);
    gst_message_unref (m);
    g_object_get (q, "stats", &st, NULL);
    fail_unless_equals_uint64 (got + get_u64 (st, "drops-overflow") +
        get_u64 (st, "drops-policed"), 600);
    fail_unless_equals_uint64 (get_u64 (st, "packets"), got);
    gst_structure_free (st);
    gst_element_set_state (pipe, GST_STATE_NULL);
    gst_object_unref (q);
    gst_object_unref (out);
    gst_object_unref (pipe);
  }
}

GST_END_TEST;

/* ---- stalls of the whole process ---------------------------------------- */

/* A thread that wakes every millisecond and keeps the longest gap between
 * wake-ups. A deadline miss while the whole process was stopped for half
 * the deadline or more (a CPU-quota throttled container does that) says
 * nothing about the scheduler: such a run is measured again, at most twice.
 * A miss without such a stall fails at once. */
typedef struct
{
  GThread *thread;
  gint stop;
  guint64 worst_gap;            /* ns */
} StallMonitor;

static gpointer
stall_loop (gpointer data)
{
  StallMonitor *m = data;
  gint64 last = g_get_monotonic_time ();

  while (!g_atomic_int_get (&m->stop)) {
    gint64 now;

    g_usleep (1000);
    now = g_get_monotonic_time ();
    if ((guint64) (now - last) * 1000 > m->worst_gap)
      m->worst_gap = (guint64) (now - last) * 1000;
    last = now;
  }
  return NULL;
}

static void
stall_monitor_start (StallMonitor * m)
{
  m->stop = 0;
  m->worst_gap = 0;
  m->thread = g_thread_new ("stall-monitor", stall_loop, m);
}

static guint64
stall_monitor_stop (StallMonitor * m)
{
  g_atomic_int_set (&m->stop, 1);
  g_thread_join (m->thread);
  return m->worst_gap;
}

/* The worst batch time T_S of the last run (its stats' worst-batch-time).
 * The guarantee assumes T_S <= I; a batch at capacity is 1.25 ms of work, so
 * one that took a quarter of the deadline means the worker lost its core
 * (another process on the 2 cores), not that the scheduler broke. */
static guint64 last_worst_batch;

static void
note_worst_batch (const GstStructure * stats)
{
  guint64 v = 0;

  gst_structure_get_uint64 (stats, "worst-batch-time", &v);
  last_worst_batch = v;
}

/* Runs attempt until it reports no deadline miss, three times at most. A
 * miss is excused when the machine visibly broke the model (the process
 * stalled for half the deadline, or a batch took a quarter of it); once,
 * a miss without that evidence is measured again too: one busy process on
 * the other core of a 2-core machine starves the worker and forwarders
 * without the stall monitor seeing a gap (measured: the same failure one
 * run in four with a busy loop beside the test, before and after the
 * shared device worker). A second unexcused miss fails, as does a miss in
 * every attempt. */
static void
run_timed (guint64 (*attempt) (void), const gchar * what)
{
  guint i, unexcused = 0;

  for (i = 0; i < 3; i++) {
    StallMonitor m;
    guint64 misses, gap;
    gboolean excused;

    last_worst_batch = 0;
    stall_monitor_start (&m);
    misses = attempt ();
    gap = stall_monitor_stop (&m);
    if (misses == 0)
      return;
    excused = gap >= DEADLINE / 2 || last_worst_batch >= DEADLINE / 4;
    if (!excused)
      unexcused++;
    fail_unless (unexcused < 2,
        "%s: %" G_GUINT64_FORMAT " deadline misses while the process never "
        "stalled (longest gap %" G_GUINT64_FORMAT " ms) and no batch took long"
        " (worst %" G_GUINT64_FORMAT " ms), the second such run", what, misses,
        gap / GST_MSECOND, last_worst_batch / GST_MSECOND);
    g_print ("%s: %" G_GUINT64_FORMAT " misses with the process stalled for %"
        G_GUINT64_FORMAT " ms, worst batch %" G_GUINT64_FORMAT " ms%s: "
        "measuring again\n", what, misses, gap / GST_MSECOND,
        last_worst_batch / GST_MSECOND, excused ? "" : " (no visible stall)");
  }
  fail ("%s: deadline misses in 3 runs", what);
}

/* ---- the deadline guarantee (3I + mu) ------------------------------------ */

static guint64
theorem_attempt (void)
{
  GstElement *q = make_queue (TRUE);
  Stream *streams[4];
  GstStructure *stats;
  guint64 misses;
  guint i;

  /* 4 x 1.25 MB/s = capacity exactly */
  for (i = 0; i < 4; i++)
    fail_unless ((streams[i] = stream_new (q, RATE, DEADLINE)) != NULL);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  /* 4.4 s at full declared rate: 2200 cycles */
  start_producers (streams, 4, 5500);
  join_producers (streams, 4);
  /* a loaded machine may forward the last ones after join's margin */
  for (i = 0; i < 4; i++)
    wait_received (streams[i], 5500);

  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, stats);
  fail_unless (get_u64 (stats, "cycles") >= 2000);
  misses = get_u64 (stats, "deadline-misses");
  for (i = 0; i < 4; i++) {
    const GstStructure *st = stream_stats (stats, streams[i]);
    /* a collector buffer overflows only when the worker swaps it late:
     * counted with the misses, and every packet is either out or counted;
     * so are the packets keep-deadlines dropped rather than send late */
    guint64 overflow = get_u64 (st, "drops-overflow") +
        kept_deadline_drops (st);

    fail_unless_equals_uint64 (get_u64 (st, "drops-policed"), 0);
    fail_unless_equals_uint64 (get_u64 (st, "packets") + overflow, 5500);
    /* latency-max <= DEADLINE exactly when the stream has no miss */
    fail_unless ((get_u64 (st, "latency-max") <= DEADLINE) ==
        (get_u64 (st, "deadline-misses") == 0));
    fail_unless_equals_uint64 (streams[i]->received, 5500 - overflow);
    fail_unless_equals_int (streams[i]->out_of_order, 0);
    fail_unless_equals_int (streams[i]->bad_pts, 0);
    misses += overflow;
  }
  note_worst_batch (stats);
  gst_structure_free (stats);

  gst_element_set_state (q, GST_STATE_NULL);
  for (i = 0; i < 4; i++)
    stream_free (q, streams[i]);
  gst_object_unref (q);
  return misses;
}

GST_START_TEST (test_theorem)
{
  run_timed (theorem_attempt, "theorem");
}

GST_END_TEST;

/* ---- admission: a 2x offer ----------------------------------------------- */

static guint64
offer_twice_capacity (gboolean admission, gboolean keep_deadlines,
    guint * admitted, GstStructure ** stats_out)
{
  GstElement *q = make_queue (admission);
  GstBus *bus = gst_bus_new ();
  Stream *streams[8];
  GstStructure *stats;
  GstMessage *msg;
  guint64 misses;
  guint i, n = 0, warnings = 0;

  g_object_set (q, "keep-deadlines", keep_deadlines, NULL);
  gst_element_set_bus (q, bus);
  /* offered while running: a refused request gets no pad (a pad requested
   * while stopped is refused at start instead: test_refusal_deadline) */
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
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

  for (i = 0; i < n; i++)
    streams[i]->catch_up = !admission;
  start_producers (streams, n, 2500);   /* 2 s */
  join_producers (streams, n);
  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("admission %d: %" GST_PTR_FORMAT, admission, stats);
  misses = get_u64 (stats, "deadline-misses");
  note_worst_batch (stats);
  fail_unless_equals_uint64 (get_u64 (stats, "streams-refused"), 8 - n);
  for (i = 0; i < n; i++)
    fail_unless_equals_uint64 (get_u64 (stream_stats (stats, streams[i]),
            "packets"), streams[i]->received);
  if (stats_out)
    *stats_out = stats;
  else
    gst_structure_free (stats);

  gst_element_set_state (q, GST_STATE_NULL);
  for (i = 0; i < n; i++)
    stream_free (q, streams[i]);
  gst_element_set_bus (q, NULL);
  gst_object_unref (bus);
  gst_object_unref (q);
  return misses;
}

static guint64
admission_attempt (void)
{
  guint admitted;
  GstStructure *stats;
  guint64 misses = offer_twice_capacity (TRUE, TRUE, &admitted, &stats);

  fail_unless_equals_int (admitted, 4);
  /* what keep-deadlines dropped would have been late: a miss to run_timed */
  misses += get_u64 (stats, "drops-late") + get_u64 (stats, "drops-shed");
  gst_structure_free (stats);
  return misses;
}

GST_START_TEST (test_admission)
{
  run_timed (admission_attempt, "admission");
}

GST_END_TEST;

/* 10 MB/s on a worker that computes 8 MB/s, every stream admitted. The
 * paper's scheduler (keep-deadlines off) lets the backlog grow: latency
 * without bound, misses. With keep-deadlines a cycle's batches take at most
 * capacity x cycle bytes, the rest refused and counted (drops-capped), and
 * no packet waits longer than 3 I + mu. */
GST_START_TEST (test_admission_off)
{
  GstClockTime bound = 3 * CYCLE + 100 * GST_USECOND;
  GstStructure *stats;
  const GValue *arr;
  guint admitted, i, attempt;
  gboolean within = FALSE;

  fail_unless (offer_twice_capacity (FALSE, FALSE, &admitted, NULL) > 0);
  fail_unless_equals_int (admitted, 8);

  /* the bound is a latency: a machine busy with other tests may stretch
   * one run past it, so three runs are given, and one must keep it on
   * every stream (the bench measures it on a quiet machine) */
  for (attempt = 0; attempt < 3 && !within; attempt++) {
    guint64 worst = 0;

    fail_unless_equals_uint64 (offer_twice_capacity (FALSE, TRUE, &admitted,
            &stats), 0);
    fail_unless_equals_int (admitted, 8);
    /* half the offer is over the capacity */
    fail_unless (get_u64 (stats, "drops-capped") > 8 * 2500 / 4,
        "%" GST_PTR_FORMAT, stats);
    fail_unless (get_u64 (stats, "packets") > 8 * 2500 / 4);
    arr = gst_structure_get_value (stats, "stream-stats");
    for (i = 0; i < gst_value_array_get_size (arr); i++) {
      const GstStructure *st =
          gst_value_get_structure (gst_value_array_get_value (arr, i));

      worst = MAX (worst, get_u64 (st, "latency-p99"));
    }
    /* the histogram's bucket holding the 99th percentile: 12.5 % wide */
    within = worst <= bound + bound / 8;
    if (!within)
      g_print ("admission off, keep-deadlines: p99 %.2f ms over 3 I + mu "
          "%.2f ms: measuring again\n", worst / 1e6, bound / 1e6);
    gst_structure_free (stats);
  }
  fail_unless (within, "p99 over 3 I + mu in 3 runs");
}

GST_END_TEST;

/* ---- keep-deadlines: a busy machine -------------------------------------- */

static gint hogs_stop;

static gpointer
hog_loop (gpointer data)
{
  volatile guint64 x = 0;

  while (!g_atomic_int_get (&hogs_stop))
    x++;
  return NULL;
}

/* A device that promises more than it has (capacity 10 MB/s where the stage
 * computes 8 MB/s on a quiet core: a calibration made before the machine got
 * busy), 8 streams admitted to it, a busy loop at normal priority on each
 * of two cores and the worker at normal priority too. The worker's watch
 * lowers the capacity, sheds the most recently admitted streams and says so
 * (a message and a warning); the streams still carried at the end missed no
 * deadline, the oldest among them, and every packet is forwarded or counted
 * as dropped. */
GST_START_TEST (test_overload_sheds)
{
  GstElement *q = make_queue (TRUE);
  GstBus *bus = gst_bus_new ();
  Stream *streams[8];
  GThread *hogs[2];
  GstStructure *stats;
  GstMessage *msg;
  guint i, changes = 0, shed_msgs = 0, warnings = 0, carried = 0;
  /* 5 s: the watch needs two overloaded windows in a row, which a slow
   * build (AddressSanitizer) was not always given in 3 s */
  const guint64 count = 6250;

  g_object_set (q, "capacity", (guint64) 8 * RATE, "rt-priority", 0, NULL);
  gst_element_set_bus (q, bus);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < 8; i++)
    fail_unless ((streams[i] = stream_new (q, RATE, DEADLINE)) != NULL);
  g_atomic_int_set (&hogs_stop, 0);
  for (i = 0; i < 2; i++)
    hogs[i] = g_thread_new ("hog", hog_loop, NULL);
  start_producers (streams, 8, count);
  join_producers (streams, 8);
  g_atomic_int_set (&hogs_stop, 1);
  for (i = 0; i < 2; i++)
    g_thread_join (hogs[i]);

  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, stats);
  /* (the whole stats text is beyond what check carries in a message) */
  fail_unless (get_u64 (stats, "capacity-lowered") >= 1,
      "capacity never lowered: %" G_GUINT64_FORMAT " overruns in %"
      G_GUINT64_FORMAT " cycles, %" G_GUINT64_FORMAT " late, %"
      G_GUINT64_FORMAT " misses", get_u64 (stats, "overruns"),
      get_u64 (stats, "cycles"), get_u64 (stats, "drops-late"),
      get_u64 (stats, "deadline-misses"));
  fail_unless (get_u64 (stats, "sheds") >= 1);
  for (i = 0; i < 8; i++) {
    const GstStructure *st = stream_stats (stats, streams[i]);
    gboolean shed = TRUE;
    guint64 dropped = get_u64 (st, "drops-late") + get_u64 (st, "drops-shed")
        + get_u64 (st, "drops-overflow") + get_u64 (st, "drops-policed") +
        get_u64 (st, "drops-capped");

    fail_unless (gst_structure_get_boolean (st, "shed", &shed));
    wait_received (streams[i], get_u64 (st, "packets"));
    fail_unless_equals_uint64 (streams[i]->received, get_u64 (st, "packets"));
    fail_unless_equals_uint64 (get_u64 (st, "packets") + dropped, count);
    fail_unless_equals_int (streams[i]->out_of_order, 0);
    if (shed)
      continue;
    carried++;
    fail_unless_equals_uint64 (get_u64 (st, "deadline-misses"), 0);
  }
  /* shedding goes newest first: the first stream admitted is kept */
  fail_unless (carried >= 1);
  {
    gboolean first_shed = TRUE;

    gst_structure_get_boolean (stream_stats (stats, streams[0]), "shed",
        &first_shed);
    fail_if (first_shed, "the oldest stream was shed: %" GST_PTR_FORMAT,
        stats);
  }
  gst_structure_free (stats);

  while ((msg = gst_bus_pop (bus))) {
    const GstStructure *s = gst_message_get_structure (msg);

    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (s, "rtgpuqueue-admission")) {
      guint64 before = 0, after = 0;

      changes++;
      fail_unless (gst_structure_get_uint64 (s, "capacity-before", &before));
      fail_unless (gst_structure_get_uint64 (s, "capacity-after", &after));
      fail_unless (before != after);
      if (after < before && *gst_structure_get_string (s, "shed"))
        shed_msgs++;
    } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
      GError *err;

      gst_message_parse_warning (msg, &err, NULL);
      if (strstr (err->message, "shed"))
        warnings++;
      g_error_free (err);
    }
    gst_message_unref (msg);
  }
  fail_unless (changes >= 1);
  fail_unless (shed_msgs >= 1);
  fail_unless (warnings >= 1);

  gst_element_set_state (q, GST_STATE_NULL);
  for (i = 0; i < 8; i++)
    stream_free (q, streams[i]);
  gst_element_set_bus (q, NULL);
  gst_object_unref (bus);
  gst_object_unref (q);
}

GST_END_TEST;

/* Running, a refused request gets no pad and a warning (the pipeline goes
 * on); stopped, it gets a pad, nothing is posted, and READY->PAUSED fails
 * with the refusal as the error. Either way the text states the cause once,
 * with its figures, and the debug text names the pad. */
GST_START_TEST (test_refusal_deadline)
{
  GstElement *q = make_queue (TRUE);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err;
  gchar *debug;
  Stream *s, *refused;

  gst_element_set_bus (q, bus);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  /* 6 ms is not above 3 x 2 + 0.1 ms */
  fail_unless (stream_new (q, 1000, 6 * GST_MSECOND) == NULL);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless_equals_string (err->message, "stream refused: deadline 6 ms "
      "is not above 3 x cycle 2 ms + mu 0.1 ms");
  fail_unless (g_str_has_suffix (debug, "pad sink_0: not created"), "%s",
      debug);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  fail_unless ((s = stream_new (q, 1000, 6200 * GST_USECOND)) != NULL);
  stream_free (q, s);
  gst_element_set_state (q, GST_STATE_NULL);

  /* stopped: the pad is made, the refusal waits for the start */
  fail_unless ((refused = stream_new (q, 1000, 6 * GST_MSECOND)) != NULL);
  fail_unless (gst_bus_pop_filtered (bus,
          GST_MESSAGE_WARNING | GST_MESSAGE_ERROR) == NULL);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_SETTINGS));
  fail_unless_equals_string (err->message, "stream refused: deadline 6 ms "
      "is not above 3 x cycle 2 ms + mu 0.1 ms");
  fail_unless (strstr (debug, "pad sink_2: refused when it was requested"),
      "%s", debug);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  gst_element_set_state (q, GST_STATE_NULL);
  /* released, it no longer stops the start */
  stream_free (q, refused);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (q, GST_STATE_NULL);
  gst_element_set_bus (q, NULL);
  gst_object_unref (bus);
  gst_object_unref (q);
}

GST_END_TEST;

/* What gst-launch-1.0 does with a launch line: the pads are requested while
 * the pipeline is built, so the line parses (no "could not link") and the
 * refusal is the error of the state change, which gst-launch prints. */
static void
launch_refused (const gchar * desc, const gchar * message,
    const gchar * pad_name, gint code)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstBus *bus;
  GstMessage *msg;
  gchar *debug, *want;

  fail_unless (pipe != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "?");
  bus = gst_element_get_bus (pipe);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "%s: no error", desc);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR, code), "%s",
      err->message);
  fail_unless_equals_string (err->message, message);
  want = g_strdup_printf ("pad %s: ", pad_name);
  fail_unless (strstr (debug, want) != NULL, "%s", debug);
  g_free (want);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

/* the launch lines of docs/elements/rtgpuqueue.md ("When a stream is
 * refused"), and the first with a deadline that fits, which plays */
#define LAUNCH_DEADLINE "rtgpuqueue name=q cycle=10000000 " \
    "default-deadline=%s audiotestsrc num-buffers=10 ! q.sink_0 " \
    "q.src_0 ! fakesink"
#define LAUNCH_CAPACITY "rtgpuqueue name=q pipelines=2 capacity=1000000 " \
    "default-max-rate=800000 " \
    "audiotestsrc num-buffers=10 ! q.sink_0 q.src_0 ! fakesink " \
    "audiotestsrc num-buffers=10 ! q.sink_1 q.src_1 ! fakesink"

GST_START_TEST (test_refusal_launch_line)
{
  gchar *desc = g_strdup_printf (LAUNCH_DEADLINE, "20000000");
  GstElement *pipe;
  GstMessage *msg;
  GError *err = NULL;

  launch_refused (desc, "stream refused: deadline 20 ms is not above "
      "3 x cycle 10 ms + mu 0.1 ms", "sink_0", GST_RESOURCE_ERROR_SETTINGS);
  g_free (desc);
  launch_refused (LAUNCH_CAPACITY, "stream refused: total rate 8e+05 + "
      "8e+05 B/s exceeds capacity 1e+06 B/s", "sink_1",
      GST_RESOURCE_ERROR_BUSY);

  /* 40 ms > 30.1 ms: admitted, the same line plays to the end */
  desc = g_strdup_printf (LAUNCH_DEADLINE, "40000000");
  pipe = gst_parse_launch (desc, &err);
  fail_unless (pipe != NULL && err == NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipe), 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  g_free (desc);
}

GST_END_TEST;

/* ---- joining, leaving, policing ------------------------------------------ */

static guint64
join_leave_police_attempt (void)
{
  GstElement *q = make_queue (TRUE);
  Stream *a, *b, *greedy, *late;

  /* the paper's policing and admission, counted exactly: without the
   * worker's watch, which on a loaded machine may shed the newest stream
   * (test_overload_sheds) */
  g_object_set (q, "keep-deadlines", FALSE, NULL);
  Stream *first[2], *second[2];
  GstStructure *stats;
  const GstStructure *st;
  guint64 misses, overflow;

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
  start_producers (&greedy, 1, 2000);
  start_producers (&late, 1, 1000);
  join_producers (second, 2);
  wait_received (late, 1000);

  g_object_get (q, "stats", &stats, NULL);
  st = stream_stats (stats, greedy);
  /* 2000 sent at 3x in 0.53 s: the rate lets through 0.53 s of it plus the
   * 200 ms burst, ~920 packets; ~1080 dropped */
  fail_unless (get_u64 (st, "drops-policed") > 800);
  fail_unless (get_u64 (st, "packets") < 1200);
  st = stream_stats (stats, late);
  /* overflow (a late swap) counts with the misses, as in test_theorem */
  overflow = get_u64 (st, "drops-overflow");
  fail_unless_equals_uint64 (get_u64 (st, "packets") + overflow, 1000);
  fail_unless_equals_uint64 (get_u64 (st, "drops-policed"), 0);
  gst_structure_free (stats);

  /* leaving while running frees the rate: a new stream fits again */
  stream_free (q, greedy);
  fail_unless ((greedy = stream_new (q, RATE, DEADLINE)) != NULL);
  stream_free (q, greedy);
  stream_free (q, late);

  join_producers (first, 2);
  wait_received (a, 2500);
  wait_received (b, 2500);
  g_object_get (q, "stats", &stats, NULL);
  GST_INFO ("%" GST_PTR_FORMAT, stats);
  st = stream_stats (stats, a);
  overflow += get_u64 (st, "drops-overflow");
  fail_unless_equals_uint64 (get_u64 (st, "packets") +
      get_u64 (st, "drops-overflow"), 2500);
  fail_unless_equals_uint64 (get_u64 (st, "drops-policed"), 0);
  st = stream_stats (stats, b);
  overflow += get_u64 (st, "drops-overflow");
  fail_unless_equals_uint64 (get_u64 (st, "packets") +
      get_u64 (st, "drops-overflow"), 2500);
  fail_unless_equals_uint64 (get_u64 (stats, "streams-admitted"), 5);
  fail_unless_equals_uint64 (get_u64 (stats, "streams-refused"), 1);
  /* every stream's, the ones gone included */
  misses = get_u64 (stats, "deadline-misses") + overflow;
  note_worst_batch (stats);
  gst_structure_free (stats);
  fail_unless_equals_int (a->out_of_order + b->out_of_order, 0);

  gst_element_set_state (q, GST_STATE_NULL);
  stream_free (q, a);
  stream_free (q, b);
  gst_object_unref (q);
  return misses;
}

GST_START_TEST (test_join_leave_police)
{
  run_timed (join_leave_police_attempt, "join/leave/police");
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

/* pipe fails to start, with an error on bus whose text holds needle; it is
 * back in NULL after */
static void
start_refused (GstElement * pipe, GstBus * bus, const gchar * needle)
{
  GstMessage *msg;
  GError *err = NULL;

  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, needle) != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
}

/* Two rtgpuqueues on the CPU share the device's worker, so admission
 * counts both: the second, whose stream would take the total over the
 * capacity, fails to start with an error naming the limit, and starts once
 * the first has stopped. With another cycle they still share it, and
 * admission counts the bytes of a device cycle. */
GST_START_TEST (test_device_shared_admission)
{
  GstElement *q1 = make_queue (TRUE), *q2 = make_queue (TRUE);
  GstElement *pipe = gst_pipeline_new (NULL);
  GstBus *bus = gst_pipeline_get_bus (GST_PIPELINE (pipe));
  Stream *s1, *s2;

  /* 3 of 5 MB/s each */
  fail_unless ((s1 = stream_new (q1, CAPACITY * 3 / 5, DEADLINE)) != NULL);
  fail_unless ((s2 = stream_new (q2, CAPACITY * 3 / 5, DEADLINE)) != NULL);
  gst_bin_add (GST_BIN (pipe), gst_object_ref (q2));
  fail_unless_equals_int (gst_element_set_state (q1, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);

  start_refused (pipe, bus, "exceeds capacity");

  /* the first leaves: the second fits */
  gst_element_set_state (q1, GST_STATE_NULL);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (pipe, GST_STATE_NULL);

  /* another cycle, 5 ms: the same worker, q2 every second 2 ms device
   * cycle (its own cycle 4 ms), and each device cycle may carry q1's 6000 B
   * and q2's 12000 B: refused, naming the device cycle */
  g_object_set (q2, "cycle", (guint64) (5 * GST_MSECOND), NULL);
  fail_unless_equals_int (gst_element_set_state (q1, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  start_refused (pipe, bus, "one device cycle of 2 ms may carry 1.8e+04 B");
  /* a tenth of the capacity on q2: 6000 + 2000 B of 10000 fit, both run */
  stream_free (q2, s2);
  fail_unless ((s2 = stream_new (q2, CAPACITY / 10, DEADLINE)) != NULL);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  {
    GstStructure *st1, *st2;
    guint64 eff1 = 0, eff2 = 0;

    g_object_get (q1, "stats", &st1, NULL);
    g_object_get (q2, "stats", &st2, NULL);
    fail_unless (gst_structure_get_uint64 (st1, "effective-cycle", &eff1));
    fail_unless (gst_structure_get_uint64 (st2, "effective-cycle", &eff2));
    fail_unless_equals_uint64 (eff1, CYCLE);
    fail_unless_equals_uint64 (eff2, 2 * CYCLE);
    gst_structure_free (st1);
    gst_structure_free (st2);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_element_set_state (q1, GST_STATE_NULL);

  stream_free (q1, s1);
  stream_free (q2, s2);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  gst_object_unref (q1);
  gst_object_unref (q2);
}

GST_END_TEST;

GST_START_TEST (test_calibrate_action)
{
  GstElement *q = make_queue (TRUE);
  guint64 cap = 0, prop = 0, again = 0, met;
  GKeyFile *kf = g_key_file_new ();
  gdouble margin;
  gchar *path;
  guint attempt;
  gint fd;

  fd = g_file_open_tmp ("rtgpucal-XXXXXX", &path, NULL);
  close (fd);
  /* 125 ns per byte: the worker keeps up with at most 8 MB/s (2 % for the
   * trial's counting window), and B_I is that less the margin. A trial run
   * of the real worker on a loaded 2-core machine measures lower, or fails
   * outright: up to 3 attempts */
  for (attempt = 0; attempt < 3 && cap == 0; attempt++)
    g_signal_emit_by_name (q, "calibrate", path, &cap);
  g_object_get (q, "capacity", &prop, NULL);
  GST_INFO ("calibrated capacity %" G_GUINT64_FORMAT " B/s", cap);
  fail_unless_equals_uint64 (prop, cap);
  fail_unless (g_key_file_load_from_file (kf, path, 0, NULL));
  margin = g_key_file_get_double (kf, "calibration", "margin", NULL);
  met = g_key_file_get_uint64 (kf, "calibration",
      "trial-met-bytes-per-second", NULL);
  fail_unless (margin > 0 && margin < 1);
  fail_unless_equals_uint64 (g_key_file_get_uint64 (kf, "calibration",
          "capacity-bytes-per-second", NULL), cap);
  fail_unless_equals_uint64 (cap, (guint64) (met * (1.0 - margin)));
  fail_unless (met > 0 && met <= 8160000, "%" G_GUINT64_FORMAT, met);
  /* the same device, stage, cycle and size: the figure of this process,
   * not a second trial disturbing what runs there */
  g_signal_emit_by_name (q, "calibrate", NULL, &again);
  fail_unless_equals_uint64 (again, cap);
  g_key_file_free (kf);
  g_unlink (path);
  g_free (path);
  gst_object_unref (q);
}

GST_END_TEST;

/* ---- admission of the batching elements ------------------------------------ */

/* fakesrc ! ncencoder cycle=CYCLE max-rate=rate ! fakesink */
static GstElement *
nc_pipeline (guint64 rate, GstElement ** enc)
{
  GstElement *pipe = gst_parse_launch ("fakesrc sizetype=fixed sizemax=1024 "
      "filltype=zero is-live=true datarate=100000 ! ncencoder name=enc "
      "backend=cpu ! fakesink sync=false", NULL);

  fail_unless (pipe != NULL);
  *enc = gst_bin_get_by_name (GST_BIN (pipe), "enc");
  g_object_set (*enc, "cycle", (guint64) CYCLE, "max-rate", rate, NULL);
  return pipe;
}

/* The element's ERROR on the bus, its text checked against each needle. */
static void
expect_error (GstBus * bus, const gchar * const *needles)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  GError *err = NULL;

  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, NULL);
  GST_INFO ("refused: %s", err->message);
  for (; *needles; needles++)
    fail_unless (strstr (err->message, *needles) != NULL, "'%s' not in '%s'",
        *needles, err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
}

/* An ncencoder scheduled with a declared rate and an rtgpuqueue with
 * admission on share the CPU's worker: the device's admission counts both
 * against the rtgpuqueue's capacity, so both start when the sum fits, and
 * the second one is refused, with the figures, when it does not, whichever
 * comes second. */
GST_START_TEST (test_batching_element_admitted)
{
  GstElement *q = make_queue (TRUE), *qpipe = gst_pipeline_new (NULL);
  GstBus *qbus = gst_pipeline_get_bus (GST_PIPELINE (qpipe));
  GstElement *enc, *npipe;
  GstBus *nbus;
  Stream *s;
  const gchar *enc_refused[] = { "rate 3e+06 B/s (max-rate) does not fit "
        "the device", "total rate 3e+06 + 3e+06 B/s exceeds capacity 5e+06 "
        "B/s (B_I at cycle 2 ms)", "beside it: rtgpuqueue", NULL
  };
  const gchar *queue_refused[] = { "cannot join the CPU's worker: total rate "
        "6e+06 B/s exceeds capacity 5e+06 B/s (B_I at cycle 2 ms)",
    "beside it: ncencoder (cycle 2 ms, 3e+06 B/s)", NULL
  };

  /* the queue admits 3 of its 5 MB/s */
  fail_unless ((s = stream_new (q, CAPACITY * 3 / 5, DEADLINE)) != NULL);
  gst_bin_add (GST_BIN (qpipe), gst_object_ref (q));
  fail_unless_equals_int (gst_element_set_state (qpipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);

  /* 1 MB/s more fits */
  npipe = nc_pipeline (CAPACITY / 5, &enc);
  nbus = gst_pipeline_get_bus (GST_PIPELINE (npipe));
  fail_unless (gst_element_set_state (npipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (npipe, NULL, NULL,
          5 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_bus_pop_filtered (nbus, GST_MESSAGE_ERROR |
          GST_MESSAGE_WARNING) == NULL);
  /* and the queue still admits a stream beside it: 3 + 1 + 1 MB/s */
  {
    Stream *more = stream_new (q, CAPACITY / 5, DEADLINE);
    fail_unless (more != NULL);
    stream_free (q, more);
  }
  gst_element_set_state (npipe, GST_STATE_NULL);

  /* 3 MB/s more does not: the encoder fails to start, naming the figures */
  g_object_set (enc, "max-rate", (guint64) CAPACITY * 3 / 5, NULL);
  fail_unless_equals_int (gst_element_set_state (npipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  expect_error (nbus, enc_refused);
  gst_element_set_state (npipe, GST_STATE_NULL);

  /* the other way round: the encoder runs, the queue comes second */
  gst_element_set_state (qpipe, GST_STATE_NULL);
  fail_unless (gst_element_set_state (npipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (npipe, NULL, NULL,
          5 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (qpipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  expect_error (qbus, queue_refused);
  gst_element_set_state (qpipe, GST_STATE_NULL);
  /* once it leaves, the queue starts */
  gst_element_set_state (npipe, GST_STATE_NULL);
  fail_unless_equals_int (gst_element_set_state (qpipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (qpipe, GST_STATE_NULL);

  stream_free (q, s);
  gst_object_unref (enc);
  gst_object_unref (nbus);
  gst_object_unref (npipe);
  gst_object_unref (qbus);
  gst_object_unref (qpipe);
  gst_object_unref (q);
}

GST_END_TEST;

/* Without a rate the encoder keeps today's behaviour (it counts as
 * unlimited: a queue with admission on and a capacity cannot start beside
 * it) and says so once. */
GST_START_TEST (test_batching_element_no_rate)
{
  GstElement *enc, *npipe = nc_pipeline (0, &enc);
  GstBus *nbus = gst_pipeline_get_bus (GST_PIPELINE (npipe));
  GstElement *q = make_queue (TRUE), *qpipe = gst_pipeline_new (NULL);
  GstBus *qbus = gst_pipeline_get_bus (GST_PIPELINE (qpipe));
  const gchar *queue_refused[] = { "cannot join the CPU's worker",
    "beside it: ncencoder (cycle 2 ms, rate not declared: an element that "
        "only batches)", NULL
  };
  GstMessage *msg;
  GError *err = NULL;
  Stream *s;

  fail_unless (gst_element_set_state (npipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (npipe, NULL, NULL,
          5 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  msg = gst_bus_pop_filtered (nbus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, "no rate declared: set max-rate") !=
      NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  /* once */
  g_usleep (50000);
  fail_unless (gst_bus_pop_filtered (nbus, GST_MESSAGE_WARNING) == NULL);

  fail_unless ((s = stream_new (q, CAPACITY / 5, DEADLINE)) != NULL);
  gst_bin_add (GST_BIN (qpipe), gst_object_ref (q));
  fail_unless_equals_int (gst_element_set_state (qpipe, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  expect_error (qbus, queue_refused);
  gst_element_set_state (qpipe, GST_STATE_NULL);
  gst_element_set_state (npipe, GST_STATE_NULL);
  stream_free (q, s);
  gst_object_unref (q);
  gst_object_unref (qbus);
  gst_object_unref (qpipe);
  gst_object_unref (enc);
  gst_object_unref (nbus);
  gst_object_unref (npipe);
}

GST_END_TEST;

/* dxtenc without max-rate declares what its caps give (frame size x
 * framerate) when they come: beside a queue holding 3 of its 5 MB/s, 64x64
 * UYVY at 30 fps (0.25 MB/s) runs to the end; beside one holding 4.9 MB/s
 * the caps are refused with the figures. backend=cpu: the queue is on the
 * CPU's worker, and on a machine with a GPU dxtenc's auto would take the
 * GPU's, whose admission is another. */
GST_START_TEST (test_batching_element_caps_rate)
{
  GstElement *q = make_queue (TRUE), *qpipe = gst_pipeline_new (NULL);
  GstElement *dpipe;
  GstBus *dbus;
  GstMessage *msg;
  Stream *s;
  const gchar *caps_refused[] = { "rate 2.46e+05 B/s (caps: 64x64 UYVY at "
        "30/1 fps) does not fit the device: declared rate refused on the "
        "CPU's worker: total rate 4.9e+06 + 2.46e+05 B/s exceeds capacity "
        "5e+06 B/s (B_I at cycle 2 ms)", NULL
  };
  guint i;

  gst_bin_add (GST_BIN (qpipe), gst_object_ref (q));
  for (i = 0; i < 2; i++) {
    guint64 held = i == 0 ? CAPACITY * 3 / 5 : CAPACITY * 49 / 50;

    fail_unless ((s = stream_new (q, held, DEADLINE)) != NULL);
    fail_unless_equals_int (gst_element_set_state (qpipe, GST_STATE_PLAYING),
        GST_STATE_CHANGE_SUCCESS);
    dpipe = gst_parse_launch ("videotestsrc num-buffers=10 ! "
        "video/x-raw,format=UYVY,width=64,height=64,framerate=30/1 ! "
        "dxtenc format=dxt1 backend=cpu cycle=2000000 ! fakesink", NULL);
    fail_unless (dpipe != NULL);
    dbus = gst_pipeline_get_bus (GST_PIPELINE (dpipe));
    gst_element_set_state (dpipe, GST_STATE_PLAYING);
    msg = gst_bus_timed_pop_filtered (dbus, 10 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    if (i == 0) {
      fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
      gst_message_unref (msg);
    } else {
      fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_ERROR);
      /* back on the bus for expect_error */
      gst_bus_post (dbus, msg);
      expect_error (dbus, caps_refused);
    }
    gst_element_set_state (dpipe, GST_STATE_NULL);
    gst_element_set_state (qpipe, GST_STATE_NULL);
    stream_free (q, s);
    gst_object_unref (dbus);
    gst_object_unref (dpipe);
  }
  gst_object_unref (qpipe);
  gst_object_unref (q);
}

GST_END_TEST;

/* ---- srtp-protect ----------------------------------------------------------- */

/* master key || salt: the first 30 (AES-128), 46 (AES-256), 28 (AES-128-GCM)
 * or 44 (AES-256-GCM) bytes */
static const guint8 srtp_key[46] = {
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
  0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
  0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d
};

typedef struct
{
  const gchar *cipher, *auth;
  guint key_len;
} SrtpPolicy;

static const SrtpPolicy srtp_policies[] = {
  {"aes-128-icm", "hmac-sha1-80", 30},
  {"aes-128-icm", "hmac-sha1-32", 30},
  {"aes-256-icm", "hmac-sha1-80", 46},
  {"aes-128-gcm", "null", 28},
  {"aes-256-gcm", "hmac-sha1-80", 44},     /* the auth does not apply */
  {"null", "hmac-sha1-80", 30},
  {"null", "null", 30},
};

static gchar *
srtp_key_hex (guint len)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < len; i++)
    g_string_append_printf (s, "%02x", srtp_key[i]);
  return g_string_free (s, FALSE);
}

/* n RTP packets of ssrc (12-byte header, payload type 96), sizes 100..1299
 * bytes, a sequence number wrap in the middle, payloads that differ */
static GPtrArray *
make_rtp_packets (guint32 ssrc, guint n)
{
  GPtrArray *a = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  guint i, j;

  for (i = 0; i < n; i++) {
    gsize size = 100 + (i * 37 + ssrc) % 1200;
    guint8 *p = g_malloc (size);

    p[0] = 0x80;
    p[1] = 96 | (i % 10 == 0 ? 0x80 : 0);   /* a marker now and then */
    GST_WRITE_UINT16_BE (p + 2, (guint16) (65536 - n / 2 + i));
    GST_WRITE_UINT32_BE (p + 4, 1000 + 160 * i);
    GST_WRITE_UINT32_BE (p + 8, ssrc);
    for (j = 12; j < size; j++)
      p[j] = (guint8) (j * 7 + i + ssrc);
    g_ptr_array_add (a, g_bytes_new_take (p, size));
  }
  return a;
}

/* n sender reports of ssrc (28 bytes) */
static GPtrArray *
make_rtcp_packets (guint32 ssrc, guint n)
{
  GPtrArray *a = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  guint i;

  for (i = 0; i < n; i++) {
    guint8 p[28] = { 0x80, 200, 0, 6 };

    GST_WRITE_UINT32_BE (p + 4, ssrc);
    GST_WRITE_UINT32_BE (p + 8, 0x83aa7e80 + i);
    GST_WRITE_UINT32_BE (p + 16, 1000 + 160 * i);
    GST_WRITE_UINT32_BE (p + 20, i);
    g_ptr_array_add (a, g_bytes_new (p, sizeof p));
  }
  return a;
}

static GstCaps *
rtp_caps (guint32 ssrc)
{
  return gst_caps_new_simple ("application/x-rtp", "media", G_TYPE_STRING,
      "audio", "clock-rate", G_TYPE_INT, 8000, "encoding-name", G_TYPE_STRING,
      "L16", "payload", G_TYPE_INT, 96, "ssrc", G_TYPE_UINT, ssrc, NULL);
}

typedef struct
{
  GMutex lock;
  GPtrArray *bytes;             /* GBytes of every buffer, in order */
  GstCaps *caps;                /* the last caps */
} Collected;

static GstFlowReturn
collect_sample (GstAppSink * sink, gpointer user_data)
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
  const gchar *name;            /* an appsrc */
  GstCaps *caps;
  GPtrArray *packets;
} Feed;

/* Plays desc: feeds every appsrc, collects every appsink (sync=false) until
 * EOS; prepare (when set) gets the pipeline before it starts. Returns the
 * error message (to free) or NULL. */
static gchar *
run_pipeline (const gchar * desc, Feed * feeds, guint n_feeds,
    const gchar ** sinks, Collected ** out, guint n_sinks,
    void (*prepare) (GstElement * pipe, gpointer data), gpointer data)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstBus *bus;
  GstMessage *msg;
  gchar *error = NULL;
  guint i, j;

  fail_unless (pipe != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "?");
  bus = gst_element_get_bus (pipe);
  for (i = 0; i < n_sinks; i++) {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), sinks[i]);
    GstAppSinkCallbacks cb = { NULL, NULL, collect_sample };

    fail_unless (sink != NULL, "no %s", sinks[i]);
    out[i] = g_new0 (Collected, 1);
    g_mutex_init (&out[i]->lock);
    out[i]->bytes =
        g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
    g_object_set (sink, "sync", FALSE, NULL);
    gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, out[i], NULL);
    gst_object_unref (sink);
  }
  if (prepare)
    prepare (pipe, data);
  if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    goto done;
  for (i = 0; i < n_feeds; i++) {
    GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), feeds[i].name);

    fail_unless (src != NULL, "no %s", feeds[i].name);
    g_object_set (src, "caps", feeds[i].caps, "format", GST_FORMAT_TIME,
        NULL);
    for (j = 0; j < feeds[i].packets->len; j++) {
      gsize size;
      const guint8 *d = g_bytes_get_data (feeds[i].packets->pdata[j], &size);
      GstBuffer *b = gst_buffer_new_memdup (d, size);

      GST_BUFFER_PTS (b) = j * GST_MSECOND;
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), b),
          GST_FLOW_OK);
    }
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    gst_object_unref (src);
  }
done:
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "%s: timed out", desc);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    error = g_strdup (err->message);
    g_clear_error (&err);
  }
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return error;
}

static gchar *
run_srtp_pipeline (const gchar * desc, Feed * feeds, guint n_feeds,
    const gchar ** sinks, Collected ** out, guint n_sinks)
{
  gchar *on_gpu = NULL, **parts;
  gchar *error;

  /* on the simulated device the same queues run their stage on the GPU,
   * one launch per pipeline batch on a lane of its own, and must give the
   * same bytes */
  if (gpu_expected ()) {
    parts = g_strsplit (desc, " backend=cpu ", -1);
    on_gpu = g_strjoinv (" backend=gpu ", parts);
    g_strfreev (parts);
    desc = on_gpu;
  }
  error = run_pipeline (desc, feeds, n_feeds, sinks, out, n_sinks, NULL, NULL);
  g_free (on_gpu);
  return error;
}

static void
assert_same_packets (GPtrArray * want, GPtrArray * got, const gchar * what)
{
  guint i;

  fail_unless_equals_int (got->len, want->len);
  for (i = 0; i < want->len; i++)
    fail_unless (g_bytes_equal (want->pdata[i], got->pdata[i]),
        "%s: packet %u differs (%" G_GSIZE_FORMAT " bytes, want %"
        G_GSIZE_FORMAT ")", what, i, g_bytes_get_size (got->pdata[i]),
        g_bytes_get_size (want->pdata[i]));
}

/* generous rates, no capacity condition: every packet of these bursts is
 * admitted and kept; deadlines are not what these tests look at. One
 * forwarder per stream: a prerolling appsink blocks its forwarder. */
#define SRTP_QUEUE "rtgpuqueue name=q processor=srtp-protect backend=cpu " \
    "cycle=2000000 pipelines=3 default-max-rate=100000000 " \
    "police-burst=1000000000 "

/* Two RTP streams (two SSRCs, two pads, two forwarders) through
 * srtp-protect, each into libsrtp's srtpdec keyed from our source caps
 * alone: the original packets come out, byte for byte, in order. */
GST_START_TEST (test_srtp_to_srtpdec)
{
  guint p;

  for (p = 0; p < G_N_ELEMENTS (srtp_policies); p++) {
    const SrtpPolicy *pol = &srtp_policies[p];
    gchar *hex, *desc;
    GPtrArray *rtp0, *rtp1;
    GstCaps *caps0, *caps1;
    Collected *out[2];
    gchar *error;

    /* libsrtp as srtpdec 1.22 sets it up drops every packet of the null
     * cipher (srtpenc refuses it: "Master key size is wrong"); the
     * gpusrtpenc comparison covers it */
    if (!strcmp (pol->cipher, "null"))
      continue;
    hex = srtp_key_hex (pol->key_len);
    rtp0 = make_rtp_packets (0x11111111, 150);
    rtp1 = make_rtp_packets (0x22222222, 150);
    caps0 = rtp_caps (0x11111111);
    caps1 = rtp_caps (0x22222222);
    Feed feeds[] = { {"r0", caps0, rtp0}, {"r1", caps1, rtp1} };
    const gchar *sinks[] = { "a0", "a1" };

    desc = g_strdup_printf (SRTP_QUEUE "srtp-key=%s srtp-cipher=%s "
        "srtp-auth=%s appsrc name=r0 ! q.sink_0 appsrc name=r1 ! q.sink_1 "
        "q.src_0 ! srtpdec ! appsink name=a0 "
        "q.src_1 ! srtpdec ! appsink name=a1", hex, pol->cipher, pol->auth);
    error = run_srtp_pipeline (desc, feeds, 2, sinks, out, 2);
    fail_unless (error == NULL, "%s/%s: %s", pol->cipher, pol->auth, error);
    assert_same_packets (rtp0, out[0]->bytes, "stream 0 through srtpdec");
    assert_same_packets (rtp1, out[1]->bytes, "stream 1 through srtpdec");
    /* srtpdec gives plain RTP caps again */
    fail_unless (gst_structure_has_name (gst_caps_get_structure (out[0]->caps,
                0), "application/x-rtp"));
    GST_INFO ("%s/%s: 2 x 150 packets through srtpdec", pol->cipher,
        pol->auth);
    collected_free (out[0]);
    collected_free (out[1]);
    g_free (desc);
    g_free (hex);
    g_ptr_array_unref (rtp0);
    g_ptr_array_unref (rtp1);
    gst_caps_unref (caps0);
    gst_caps_unref (caps1);
  }
}

GST_END_TEST;

/* The same with the configuration in processor-config (the library's
 * srtp-protect looked up by name), the srtp-* properties unset; a config
 * the processor refuses fails the start with the field named. */
GST_START_TEST (test_srtp_processor_config)
{
  gchar *hex = srtp_key_hex (46), *desc, *error;
  GPtrArray *rtp0 = make_rtp_packets (0x33333333, 100);
  GstCaps *caps0 = rtp_caps (0x33333333);
  Feed feeds[] = { {"r0", caps0, rtp0} };
  const gchar *sinks[] = { "a0" };
  Collected *out[1];

  desc = g_strdup_printf (SRTP_QUEUE "processor-config=\"srtp-protect, "
      "srtp-key=(buffer)%s, srtp-cipher=aes-256-icm, "
      "srtp-auth=hmac-sha1-32\" appsrc name=r0 ! q.sink_0 "
      "q.src_0 ! srtpdec ! appsink name=a0", hex);
  error = run_srtp_pipeline (desc, feeds, 1, sinks, out, 1);
  fail_unless (error == NULL, "%s", error);
  assert_same_packets (rtp0, out[0]->bytes, "processor-config through "
      "srtpdec");
  collected_free (out[0]);
  g_free (desc);

  desc = g_strdup_printf (SRTP_QUEUE "processor-config=\"srtp-protect, "
      "srtp-key=(buffer)%s, srtp-cipher=aes-128-icm\" appsrc name=r0 ! "
      "q.sink_0 q.src_0 ! srtpdec ! appsink name=a0", hex);
  error = run_srtp_pipeline (desc, feeds, 1, sinks, out, 1);
  fail_unless (error != NULL);
  fail_unless_equals_string (error, "srtp-key is 46 bytes, "
      "srtp-cipher=aes-128-icm needs 30 (master key || salt)");
  collected_free (out[0]);
  g_free (error);
  g_free (desc);
  g_free (hex);
  g_ptr_array_unref (rtp0);
  gst_caps_unref (caps0);
}

GST_END_TEST;

static void
assert_caps_field (const GstStructure * a, const GstStructure * b,
    const gchar * field)
{
  const GValue *va = gst_structure_get_value (a, field);
  const GValue *vb = gst_structure_get_value (b, field);

  fail_unless (va != NULL && vb != NULL, "%s missing", field);
  fail_unless (gst_value_compare (va, vb) == GST_VALUE_EQUAL,
      "%s differs", field);
}

/* The same input into rtgpuqueue and gpusrtpenc (tees), two RTP streams and
 * the RTCP of one: the same bytes and the same key fields in the caps, for
 * every cipher / auth. */
GST_START_TEST (test_srtp_identical_to_gpusrtpenc)
{
  guint p, i;

  for (p = 0; p < G_N_ELEMENTS (srtp_policies); p++) {
    const SrtpPolicy *pol = &srtp_policies[p];
    gchar *hex = srtp_key_hex (pol->key_len);
    GPtrArray *rtp0 = make_rtp_packets (0x0a0b0c0d, 120);
    GPtrArray *rtp1 = make_rtp_packets (0x01020304, 120);
    GPtrArray *rtcp = make_rtcp_packets (0x0a0b0c0d, 10);
    GstCaps *caps0 = rtp_caps (0x0a0b0c0d), *caps1 = rtp_caps (0x01020304);
    GstCaps *rtcp_caps = gst_caps_new_empty_simple ("application/x-rtcp");
    Feed feeds[] = { {"r0", caps0, rtp0}, {"r1", caps1, rtp1},
    {"c", rtcp_caps, rtcp}
    };
    const gchar *sinks[] = { "a0", "a1", "a2", "b0", "b1", "b2" };
    Collected *out[6];
    gchar *desc, *error;
    const GstStructure *qs, *es;

    desc = g_strdup_printf (SRTP_QUEUE "srtp-key=%s srtp-cipher=%s "
        "srtp-auth=%s gpusrtpenc name=e key=%s rtp-cipher=%s rtp-auth=%s "
        "rtcp-cipher=%s rtcp-auth=%s "
        "appsrc name=r0 ! tee name=t0  appsrc name=r1 ! tee name=t1 "
        "appsrc name=c ! tee name=t2 "
        "t0. ! queue ! q.sink_0  t0. ! queue ! e.rtp_sink_0 "
        "t1. ! queue ! q.sink_1  t1. ! queue ! e.rtp_sink_1 "
        "t2. ! queue ! q.sink_2  t2. ! queue ! e.rtcp_sink_0 "
        "q.src_0 ! appsink name=a0  q.src_1 ! appsink name=a1 "
        "q.src_2 ! appsink name=a2 "
        "e.rtp_src_0 ! appsink name=b0  e.rtp_src_1 ! appsink name=b1 "
        "e.rtcp_src_0 ! appsink name=b2", hex, pol->cipher, pol->auth,
        hex, pol->cipher, pol->auth, pol->cipher, pol->auth);
    error = run_srtp_pipeline (desc, feeds, 3, sinks, out, 6);
    fail_unless (error == NULL, "%s/%s: %s", pol->cipher, pol->auth, error);
    for (i = 0; i < 3; i++) {
      fail_unless (out[i]->bytes->len > 0);
      assert_same_packets (out[3 + i]->bytes, out[i]->bytes, sinks[i]);
      qs = gst_caps_get_structure (out[i]->caps, 0);
      es = gst_caps_get_structure (out[3 + i]->caps, 0);
      fail_unless_equals_string (gst_structure_get_name (qs),
          gst_structure_get_name (es));
      assert_caps_field (qs, es, "srtp-key");
      assert_caps_field (qs, es, "srtp-cipher");
      assert_caps_field (qs, es, "srtcp-cipher");
      if (g_str_has_suffix (pol->cipher, "gcm")) {
        /* GCM authenticates by itself: we announce auth null, which is what
         * srtpdec needs to take RFC 7714 (gpusrtpenc repeats its property) */
        fail_unless_equals_string (gst_structure_get_string (qs, "srtp-auth"),
            "null");
        fail_unless_equals_string (gst_structure_get_string (qs,
                "srtcp-auth"), "null");
      } else {
        assert_caps_field (qs, es, "srtp-auth");
        assert_caps_field (qs, es, "srtcp-auth");
      }
    }
    fail_unless_equals_int (out[0]->bytes->len, 120);
    fail_unless_equals_int (out[2]->bytes->len, 10);
    fail_unless_equals_string (gst_structure_get_name (gst_caps_get_structure
            (out[2]->caps, 0)), "application/x-srtcp");
    /* protected: grown by the tag (none with null / null), and the
     * payload encrypted unless the cipher is null */
    fail_unless (g_bytes_get_size (out[0]->bytes->pdata[5]) >=
        g_bytes_get_size (rtp0->pdata[5]));
    if (strcmp (pol->cipher, "null"))
      fail_if (memcmp ((const guint8 *) g_bytes_get_data (rtp0->pdata[5],
                  NULL) + 12, (const guint8 *) g_bytes_get_data (out[0]->bytes->
                  pdata[5], NULL) + 12, 16) == 0);
    GST_INFO ("%s/%s: identical to gpusrtpenc", pol->cipher, pol->auth);
    for (i = 0; i < 6; i++)
      collected_free (out[i]);
    g_free (desc);
    g_free (hex);
    g_ptr_array_unref (rtp0);
    g_ptr_array_unref (rtp1);
    g_ptr_array_unref (rtcp);
    gst_caps_unref (caps0);
    gst_caps_unref (caps1);
    gst_caps_unref (rtcp_caps);
  }
}

GST_END_TEST;

/* What the area test keeps of a run: every buffer the queue pushed, a copy
 * of its bytes taken at the push, and the queue's stats at the last one. */
typedef struct
{
  guint n;
  GPtrArray *held;              /* GstBuffer */
  GPtrArray *at_push;           /* GBytes */
  GstStructure *stats;
} AreaRun;

static GstPadProbeReturn
hold_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  AreaRun *r = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_READ);
  g_ptr_array_add (r->at_push, g_bytes_new (map.data, map.size));
  gst_buffer_unmap (buf, &map);
  g_ptr_array_add (r->held, gst_buffer_ref (buf));
  if (r->held->len == r->n) {
    GstElement *q = gst_pad_get_parent_element (pad);

    g_object_get (q, "stats", &r->stats, NULL);
    gst_object_unref (q);
  }
  return GST_PAD_PROBE_OK;
}

static void
area_prepare (GstElement * pipe, gpointer data)
{
  GstElement *q = gst_bin_get_by_name (GST_BIN (pipe), "q");
  GstPad *src = gst_element_get_static_pad (q, "src_0");

  fail_unless (src != NULL);
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, hold_buffer, data, NULL);
  gst_object_unref (src);
  gst_object_unref (q);
}

static void
area_run (const gchar * backend, const gchar * hex, Feed * feed, AreaRun * r)
{
  const gchar *sinks[] = { "a" };
  Collected *out[1];
  /* one batch for the whole burst: a 1 s cycle (the longest), fed at once */
  gchar *desc = g_strdup_printf ("rtgpuqueue name=q processor=srtp-protect "
      "backend=%s cycle=1000000000 admission=false pipelines=1 "
      "default-max-packet-size=2000 default-max-rate=1000000000 "
      "police-burst=1000000000 srtp-key=%s appsrc name=r ! q.sink_0 "
      "q.src_0 ! appsink name=a", backend, hex);
  gchar *error;

  r->n = feed->packets->len;
  r->held = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  r->at_push = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  error = run_pipeline (desc, feed, 1, sinks, out, 1, area_prepare, r);
  fail_unless (error == NULL, "%s: %s", backend, error);
  fail_unless (r->stats != NULL, "%s: %u of %u packets", backend,
      r->held->len, r->n);
  assert_same_packets (r->at_push, out[0]->bytes, "the appsink's");
  collected_free (out[0]);
  g_free (desc);
}

static void
area_run_clear (AreaRun * r)
{
  g_ptr_array_unref (r->held);
  g_ptr_array_unref (r->at_push);
  gst_structure_free (r->stats);
}

/* On the GPU, srtp-protect's collectors copy each packet into their batch's
 * area as it arrives and the queue pushes buffers that wrap the area (the
 * worker copies nothing per packet); a burst beyond the area's room is
 * protected by the collectors on the CPU. Either way the bytes are the CPU
 * path's (itself checked against libsrtp above), in order; and the pushed
 * buffers stay valid and unchanged after the element and its processor are
 * gone. On the CPU no packet goes that way. */
GST_START_TEST (test_srtp_collected_in_area)
{
  const guint n = 240;
  GPtrArray *rtp = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GstCaps *caps = rtp_caps (0x5a5a5a5a);
  gchar *hex = srtp_key_hex (30);
  AreaRun want = { 0 }, got = { 0 };
  guint64 collected = 0, area_full = 0, gpu_batches = 0;
  guint i, j;

  /* 1900-byte packets: an area made before any was seen has room for
   * 1500-byte ones, about 200 of these */
  for (i = 0; i < n; i++) {
    guint8 *p = g_malloc (1900);

    p[0] = 0x80;
    p[1] = 96;
    GST_WRITE_UINT16_BE (p + 2, (guint16) (65500 + i));     /* a ROC step */
    GST_WRITE_UINT32_BE (p + 4, 90 * i);
    GST_WRITE_UINT32_BE (p + 8, 0x5a5a5a5a);
    for (j = 12; j < 1900; j++)
      p[j] = (guint8) (j * 13 + i);
    g_ptr_array_add (rtp, g_bytes_new_take (p, 1900));
  }
  Feed feed = { "r", caps, rtp };

  area_run ("cpu", hex, &feed, &want);
  area_run (gpu_expected ()? "gpu" : "cpu", hex, &feed, &got);
  assert_same_packets (want.at_push, got.at_push, "against the CPU path");

  gst_structure_get_uint64 (got.stats, "srtp-collected", &collected);
  gst_structure_get_uint64 (got.stats, "srtp-area-full", &area_full);
  gst_structure_get_uint64 (got.stats, "srtp-gpu-batches", &gpu_batches);
  GST_INFO ("collected %" G_GUINT64_FORMAT ", area full %" G_GUINT64_FORMAT
      ", GPU batches %" G_GUINT64_FORMAT, collected, area_full, gpu_batches);
  if (gpu_expected ()) {
    fail_unless (collected > 0 && area_full > 0 && collected + area_full == n,
        "collected %" G_GUINT64_FORMAT ", area full %" G_GUINT64_FORMAT,
        collected, area_full);
    fail_unless (gpu_batches > 0);
  } else {
    fail_unless (collected == 0 && area_full == 0);
  }
  /* the pipeline, the element and its processor are gone: what it pushed
   * is still there, as it was */
  fail_unless_equals_int (got.held->len, n);
  for (i = 0; i < n; i++) {
    GstMapInfo map;
    GBytes *now;

    gst_buffer_map (got.held->pdata[i], &map, GST_MAP_READ);
    now = g_bytes_new (map.data, map.size);
    gst_buffer_unmap (got.held->pdata[i], &map);
    fail_unless (g_bytes_equal (now, got.at_push->pdata[i]),
        "pushed buffer %u changed after the element went", i);
    fail_unless_equals_int (g_bytes_get_size (now), 1900 + 10);
    g_bytes_unref (now);
  }
  area_run_clear (&want);
  area_run_clear (&got);

  /* 12 SSRCs in one batch: more contexts than a first area has room for
   * the keys of (their keys then go to the device on their own) */
  g_ptr_array_set_size (rtp, 0);
  for (i = 0; i < 120; i++) {
    guint8 *p = g_malloc (200);

    p[0] = 0x80;
    p[1] = 96;
    GST_WRITE_UINT16_BE (p + 2, (guint16) (i / 12));
    GST_WRITE_UINT32_BE (p + 4, 90 * i);
    GST_WRITE_UINT32_BE (p + 8, 0x7000 + i % 12);
    for (j = 12; j < 200; j++)
      p[j] = (guint8) (j * 5 + i);
    g_ptr_array_add (rtp, g_bytes_new_take (p, 200));
  }
  memset (&want, 0, sizeof want);
  memset (&got, 0, sizeof got);
  area_run ("cpu", hex, &feed, &want);
  area_run (gpu_expected ()? "gpu" : "cpu", hex, &feed, &got);
  assert_same_packets (want.at_push, got.at_push, "12 SSRCs, against the CPU "
      "path");
  collected = 0;
  gst_structure_get_uint64 (got.stats, "srtp-collected", &collected);
  fail_unless_equals_uint64 (collected, gpu_expected ()? 120 : 0);
  area_run_clear (&want);
  area_run_clear (&got);
  g_free (hex);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* No key, a key of the wrong size: the state change fails with an error
 * that names the property; a packet that is not RTP is dropped, counted and
 * reported, and the stream goes on. */
GST_START_TEST (test_srtp_errors)
{
  GPtrArray *rtp = make_rtp_packets (0x12345678, 20);
  GstCaps *caps = rtp_caps (0x12345678);
  Feed feeds[] = { {"r", caps, rtp} };
  const gchar *sinks[] = { "a" };
  Collected *out[1];
  gchar *error, *hex = srtp_key_hex (30);
  gchar *desc;
  GstElement *q;
  GstBus *bus;
  GstMessage *msg;
  GstStructure *stats;
  guint8 junk[40] = { 0x40, 0x60 };   /* version 1 */
  guint64 drops = 0;
  Stream *s;

  error = run_srtp_pipeline (SRTP_QUEUE "appsrc name=r ! q.sink_0 "
      "q.src_0 ! appsink name=a", feeds, 1, sinks, out, 1);
  fail_unless (error != NULL);
  fail_unless (strstr (error, "\"srtp-key\"") != NULL, "%s", error);
  collected_free (out[0]);
  g_free (error);

  desc = g_strdup_printf (SRTP_QUEUE "srtp-key=%s srtp-cipher=aes-256-icm "
      "appsrc name=r ! q.sink_0 q.src_0 ! appsink name=a", hex);
  error = run_srtp_pipeline (desc, feeds, 1, sinks, out, 1);
  fail_unless (error != NULL);
  fail_unless_equals_string (error, "srtp-key is 30 bytes, "
      "srtp-cipher=aes-256-icm needs 46 (master key || salt)");
  collected_free (out[0]);
  g_free (error);
  g_free (desc);

  /* a pad of our own: a junk packet between two good ones */
  q = make_queue (TRUE);
  bus = gst_bus_new ();
  gst_element_set_bus (q, bus);
  {
    GstBuffer *key = gst_buffer_new_memdup (srtp_key, 30);
    g_object_set (q, "processor", 3 /* srtp-protect */ , "srtp-key", key,
        NULL);
    gst_buffer_unref (key);
  }
  fail_unless ((s = stream_new (q, RATE, DEADLINE)) != NULL);
  fail_unless_equals_int (gst_element_set_state (q, GST_STATE_PLAYING),
      GST_STATE_CHANGE_SUCCESS);
  {
    GstSegment seg;
    guint i;

    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_pad_push_event (s->src,
            gst_event_new_stream_start ("srtp")));
    /* the sink pads take RTP, not anything */
    {
      GstCaps *other = gst_caps_new_empty_simple ("x-test/packets");
      fail_if (gst_pad_query_accept_caps (s->req, other));
      fail_unless (gst_pad_query_accept_caps (s->req, caps));
      gst_caps_unref (other);
    }
    fail_unless (gst_pad_push_event (s->src,
            gst_event_new_caps (caps)));
    fail_unless (gst_pad_push_event (s->src, gst_event_new_segment (&seg)));
    for (i = 0; i < 3; i++) {
      GstBuffer *b = i == 1 ? gst_buffer_new_memdup (junk, sizeof junk) :
          gst_buffer_new_memdup (g_bytes_get_data (rtp->pdata[i], NULL),
          g_bytes_get_size (rtp->pdata[i]));
      GST_BUFFER_OFFSET (b) = i;
      GST_BUFFER_PTS (b) = i * GST_MSECOND;
      fail_unless_equals_int (gst_pad_push (s->src, b), GST_FLOW_OK);
    }
    for (i = 0; i < 1000 && s->received < 2; i++)
      g_usleep (1000);
  }
  fail_unless_equals_uint64 (s->received, 2);
  /* the source caps are SRTP with the key fields */
  {
    GstCaps *cur = gst_pad_get_current_caps (s->sink);
    const GstStructure *st;

    fail_unless (cur != NULL);
    st = gst_caps_get_structure (cur, 0);
    fail_unless (gst_structure_has_name (st, "application/x-srtp"));
    fail_unless_equals_string (gst_structure_get_string (st, "srtp-cipher"),
        "aes-128-icm");
    fail_unless_equals_string (gst_structure_get_string (st, "srtp-auth"),
        "hmac-sha1-80");
    fail_unless (gst_structure_has_field_typed (st, "srtp-key",
            GST_TYPE_BUFFER));
    gst_caps_unref (cur);
  }
  g_object_get (q, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint64 (stats, "srtp-drops", &drops));
  fail_unless_equals_uint64 (drops, 1);
  gst_structure_free (stats);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  {
    GError *err;

    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (strstr (err->message, "not an RTP or RTCP packet"), "%s",
        err->message);
    g_error_free (err);
  }
  gst_message_unref (msg);

  gst_element_set_state (q, GST_STATE_NULL);
  stream_free (q, s);
  gst_element_set_bus (q, NULL);
  gst_object_unref (bus);
  gst_object_unref (q);
  g_free (hex);
  g_ptr_array_unref (rtp);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* ---- nc-encode ----------------------------------------------------------- */

#define NC_QUEUE "rtgpuqueue name=q processor=nc-encode backend=cpu " \
    "cycle=2000000 default-max-rate=100000000 police-burst=1000000000 " \
    "default-max-packet-size=131072 processor-config=\"nc-encode, " \
    "generation-size=(int)16, block-size=(int)1024, redundancy=(int)4\" "
#define NC_M 16
#define NC_K 1024
#define NC_R 4

/* the redundancy of a generation of m blocks: in proportion when partial */
static guint
nc_redundancy (guint m)
{
  return m == NC_M ? NC_R : (NC_R * m + NC_M - 1) / NC_M;
}

static GPtrArray *
make_nc_input (const guint * sizes, guint n, guint32 seed)
{
  GPtrArray *a = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GRand *r = g_rand_new_with_seed (seed);
  guint i, j;

  for (i = 0; i < n; i++) {
    guint8 *d = g_malloc (sizes[i]);

    for (j = 0; j < sizes[i]; j++)
      d[j] = g_rand_int (r) & 0xff;
    g_ptr_array_add (a, g_bytes_new_take (d, sizes[i]));
  }
  g_rand_free (r);
  return a;
}

static GByteArray *
concat_bytes (GPtrArray * a)
{
  GByteArray *all = g_byte_array_new ();
  guint i;

  for (i = 0; i < a->len; i++) {
    gsize size;
    const guint8 *d = g_bytes_get_data (a->pdata[i], &size);

    g_byte_array_append (all, d, size);
  }
  return all;
}

/* The packets of each input buffer, read against the wire format
 * (docs/elements/nc-wire-format.md) field by field: per buffer one
 * generation per m * k bytes, numbered on from the previous buffer's; the
 * m source packets whole, then the coded ones with their seeds. */
GST_START_TEST (test_nc_encode_packets)
{
  const guint sizes[] = { 100, 16384, 20000, 1024 };
  GPtrArray *in = make_nc_input (sizes, G_N_ELEMENTS (sizes), 7);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-nctest");
  Feed feeds[] = { {"r0", caps, in} };
  const gchar *sinks[] = { "a0" };
  Collected *out[1];
  guint b, pkt = 0, gen = 0;
  gint m = 0, k = 0;
  const gchar *coefs;
  gchar *error;

  error = run_srtp_pipeline (NC_QUEUE "appsrc name=r0 ! q.sink_0 "
      "q.src_0 ! appsink name=a0", feeds, 1, sinks, out, 1);
  fail_unless (error == NULL, "%s", error);

  for (b = 0; b < in->len; b++) {
    gsize size, off;
    const guint8 *data = g_bytes_get_data (in->pdata[b], &size);

    for (off = 0; off < size; off += NC_M * NC_K, gen++) {
      guint32 len = MIN (NC_M * NC_K, size - off);
      guint gm = (len + NC_K - 1) / NC_K, i;

      for (i = 0; i < gm + nc_redundancy (gm); i++, pkt++) {
        gsize psize;
        const guint8 *p;

        fail_unless (pkt < out[0]->bytes->len, "only %u packets",
            out[0]->bytes->len);
        p = g_bytes_get_data (out[0]->bytes->pdata[pkt], &psize);
        fail_unless_equals_int (psize, 24 + NC_K);
        fail_unless_equals_int (p[0], 1);       /* version */
        fail_unless_equals_int (GST_READ_UINT16_BE (p + 2), gm);
        fail_unless_equals_int (GST_READ_UINT32_BE (p + 4), gen);
        fail_unless_equals_int (GST_READ_UINT32_BE (p + 8), NC_K);
        fail_unless_equals_int (GST_READ_UINT32_BE (p + 12), len);
        if (i < gm) {
          /* NC_FLAG_SOURCE, the block index, the block's bytes */
          gsize blen = MIN (NC_K, len - i * NC_K);

          fail_unless_equals_int (p[1], 2);
          fail_unless_equals_int (GST_READ_UINT32_BE (p + 16), i);
          fail_unless (memcmp (p + 24, data + off + i * NC_K, blen) == 0,
              "buffer %u generation %u block %u differs", b, gen, i);
        } else {
          /* NC_FLAG_SEED */
          fail_unless_equals_int (p[1], 1);
        }
      }
    }
  }
  fail_unless_equals_int (out[0]->bytes->len, pkt);
  fail_unless_equals_int (gen, 5);
  /* ncencoder's caps, the input's caps as original-caps */
  fail_unless (gst_structure_has_name (gst_caps_get_structure (out[0]->caps,
              0), "application/x-rlnc"));
  fail_unless (gst_structure_get_int (gst_caps_get_structure (out[0]->caps,
              0), "generation-size", &m));
  fail_unless (gst_structure_get_int (gst_caps_get_structure (out[0]->caps,
              0), "block-size", &k));
  fail_unless_equals_int (m, NC_M);
  fail_unless_equals_int (k, NC_K);
  coefs = gst_structure_get_string (gst_caps_get_structure (out[0]->caps, 0),
      "coefficients");
  fail_unless_equals_string (coefs, "seed");
  fail_unless_equals_string (gst_structure_get_string
      (gst_caps_get_structure (out[0]->caps, 0), "original-caps"),
      "application/x-nctest");
  collected_free (out[0]);
  g_ptr_array_unref (in);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* On ncdecoder's sink pad: in every generation the first packet is lost,
 * and the third too where the redundancy covers two losses. */
static GstPadProbeReturn
nc_lose_packets (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  guint *lost = user_data;
  GstBufferList *list = gst_pad_probe_info_get_buffer_list (info);
  guint i = 0, pos = 0;
  gint32 cur = -1;

  list = gst_buffer_list_make_writable (list);
  while (i < gst_buffer_list_length (list)) {
    GstBuffer *buf = gst_buffer_list_get (list, i);
    guint8 h[24];
    guint m;

    fail_unless_equals_int (gst_buffer_extract (buf, 0, h, 24), 24);
    if ((gint32) GST_READ_UINT32_BE (h + 4) != cur) {
      cur = GST_READ_UINT32_BE (h + 4);
      pos = 0;
    }
    m = GST_READ_UINT16_BE (h + 2);
    if (pos == 0 || (pos == 2 && nc_redundancy (m) >= 2)) {
      gst_buffer_list_remove (list, i, 1);
      (*lost)++;
    } else {
      i++;
    }
    pos++;
  }
  GST_PAD_PROBE_INFO_DATA (info) = list;
  return GST_PAD_PROBE_OK;
}

/* the loss on the pad of ncdecoder d0 */
static void
nc_add_loss (GstElement * pipe, gpointer lost)
{
  GstElement *d0 = gst_bin_get_by_name (GST_BIN (pipe), "d0");
  GstPad *pad = gst_element_get_static_pad (d0, "sink");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER_LIST, nc_lose_packets,
      lost, NULL);
  gst_object_unref (pad);
  gst_object_unref (d0);
}

/* rtgpuqueue processor=nc-encode ! ncdecoder gives back the input bytes,
 * one buffer per generation, with and without lost packets; two streams
 * number their generations each on their own. */
GST_START_TEST (test_nc_encode_to_ncdecoder)
{
  const guint sizes[] = { 1, 1000, 1024, 16384, 16385, 40000, 3000, 70000 };
  GPtrArray *in0 = make_nc_input (sizes, G_N_ELEMENTS (sizes), 11);
  GPtrArray *in1 = make_nc_input (sizes, G_N_ELEMENTS (sizes), 12);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-nctest");
  Feed feeds[] = { {"r0", caps, in0}, {"r1", caps, in1} };
  const gchar *sinks[] = { "a0", "a1" };
  guint gens = 0, i, lose;

  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    gens += (sizes[i] + NC_M * NC_K - 1) / (NC_M * NC_K);

  for (lose = 0; lose < 2; lose++) {
    Collected *out[2];
    GByteArray *want0 = concat_bytes (in0), *want1 = concat_bytes (in1);
    GByteArray *got0, *got1;
    guint lost = 0;
    gchar *error, *desc;

    desc = g_strdup (NC_QUEUE "pipelines=2 appsrc name=r0 ! q.sink_0 "
        "appsrc name=r1 ! q.sink_1 q.src_0 ! ncdecoder name=d0 ! "
        "appsink name=a0 q.src_1 ! ncdecoder ! appsink name=a1");
    error = run_pipeline (desc, feeds, 2, sinks, out, 2,
        lose ? nc_add_loss : NULL, &lost);
    fail_unless (error == NULL, "%s", error);
    got0 = concat_bytes (out[0]->bytes);
    got1 = concat_bytes (out[1]->bytes);
    fail_unless_equals_int (got0->len, want0->len);
    fail_unless (memcmp (got0->data, want0->data, want0->len) == 0,
        "stream 0 (%s): decoded bytes differ", lose ? "lossy" : "lossless");
    fail_unless_equals_int (got1->len, want1->len);
    fail_unless (memcmp (got1->data, want1->data, want1->len) == 0,
        "stream 1: decoded bytes differ");
    /* one decoded buffer per generation */
    fail_unless_equals_int (out[0]->bytes->len, gens);
    fail_unless_equals_int (out[1]->bytes->len, gens);
    if (lose)
      fail_unless (lost > gens, "only %u packets lost", lost);
    fail_unless (gst_structure_has_name (gst_caps_get_structure (out[0]->caps,
                0), "application/x-nctest"));
    collected_free (out[0]);
    collected_free (out[1]);
    g_byte_array_unref (want0);
    g_byte_array_unref (want1);
    g_byte_array_unref (got0);
    g_byte_array_unref (got1);
    g_free (desc);
  }
  g_ptr_array_unref (in0);
  g_ptr_array_unref (in1);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* A configuration the processor refuses fails the start with the field
 * named. */
GST_START_TEST (test_nc_encode_bad_config)
{
  GPtrArray *in = make_nc_input ((const guint[]) { 10 }, 1, 1);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-nctest");
  Feed feeds[] = { {"r0", caps, in} };
  const gchar *sinks[] = { "a0" };
  Collected *out[1];
  gchar *error;

  error = run_srtp_pipeline ("rtgpuqueue name=q processor=nc-encode "
      "processor-config=\"nc-encode, generation-size=(int)300\" "
      "appsrc name=r0 ! q.sink_0 q.src_0 ! appsink name=a0", feeds, 1, sinks,
      out, 1);
  fail_unless (error && strstr (error, "generation-size"), "%s", error);
  g_free (error);
  collected_free (out[0]);
  error = run_srtp_pipeline ("rtgpuqueue name=q processor=nc-encode "
      "processor-config=\"nc-encode, coefficients=dense\" "
      "appsrc name=r0 ! q.sink_0 q.src_0 ! appsink name=a0", feeds, 1, sinks,
      out, 1);
  fail_unless (error && strstr (error, "coefficients"), "%s", error);
  g_free (error);
  collected_free (out[0]);
  g_ptr_array_unref (in);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* the launch line of docs/elements/rtgpuqueue.md ("processor=nc-encode"),
 * run as written: what fakesink gets is what audiotestsrc made */
#define NC_LAUNCH "rtgpuqueue name=q processor=nc-encode " \
    "default-max-packet-size=18000 processor-config=\"nc-encode, " \
    "generation-size=(int)16, block-size=(int)1024, redundancy=(int)4\" " \
    "audiotestsrc is-live=true num-buffers=10 samplesperbuffer=9000 ! " \
    "q.sink_0 q.src_0 ! ncdecoder ! fakesink"

static GstPadProbeReturn
nc_collect_bytes (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstMapInfo map;
  GstBuffer *buf = gst_pad_probe_info_get_buffer (info);

  gst_buffer_map (buf, &map, GST_MAP_READ);
  g_byte_array_append (user_data, map.data, map.size);
  gst_buffer_unmap (buf, &map);
  return GST_PAD_PROBE_OK;
}

static GstElement *
bin_find_factory (GstBin * bin, const gchar * factory)
{
  GstIterator *it = gst_bin_iterate_elements (bin);
  GValue v = G_VALUE_INIT;
  GstElement *found = NULL;

  while (!found && gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object (&v);

    if (!g_strcmp0 (GST_OBJECT_NAME (gst_element_get_factory (e)), factory))
      found = gst_object_ref (e);
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return found;
}

GST_START_TEST (test_nc_encode_launch_line)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (NC_LAUNCH, &err);
  GstElement *src, *sink, *q;
  GByteArray *made = g_byte_array_new (), *got = g_byte_array_new ();
  GstPad *pad;
  GstMessage *msg;
  GstBus *bus;
  GstCaps *caps;
  gint m = 0;

  fail_unless (pipe != NULL && err == NULL, "%s", err ? err->message : "?");
  src = bin_find_factory (GST_BIN (pipe), "audiotestsrc");
  sink = bin_find_factory (GST_BIN (pipe), "fakesink");
  q = gst_bin_get_by_name (GST_BIN (pipe), "q");
  pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, nc_collect_bytes, made,
      NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, nc_collect_bytes, got,
      NULL);
  gst_object_unref (pad);
  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "the launch line did not play to the end");
  gst_message_unref (msg);
  pad = gst_element_get_static_pad (q, "src_0");
  caps = gst_pad_get_current_caps (pad);
  fail_unless (caps != NULL);
  fail_unless (gst_structure_has_name (gst_caps_get_structure (caps, 0),
          "application/x-rlnc"));
  fail_unless (gst_structure_get_int (gst_caps_get_structure (caps, 0),
          "generation-size", &m));
  fail_unless_equals_int (m, 16);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_element_set_state (pipe, GST_STATE_NULL);
  /* 10 buffers of 9000 S16 samples */
  fail_unless_equals_int (made->len, 10 * 18000);
  fail_unless_equals_int (got->len, made->len);
  fail_unless (memcmp (got->data, made->data, made->len) == 0);
  g_byte_array_unref (made);
  g_byte_array_unref (got);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (q);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

static Suite *
rtgpuqueue_suite (void)
{
  Suite *s = suite_create ("rtgpuqueue");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 150);   /* run_timed may measure three times */
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_latency_query);
  tcase_add_test (tc, test_pads_and_states);
  tcase_add_test (tc, test_refusal_deadline);
  tcase_add_test (tc, test_refusal_launch_line);
  tcase_add_test (tc, test_calibrate_action);
  tcase_add_test (tc, test_device_shared_admission);
  tcase_add_test (tc, test_batching_element_admitted);
  tcase_add_test (tc, test_batching_element_no_rate);
  /* dxtenc is built where its dependencies are */
  {
    GstPluginFeature *dxtenc =
        gst_registry_lookup_feature (gst_registry_get (), "dxtenc");
    if (dxtenc)
      tcase_add_test (tc, test_batching_element_caps_rate);
    gst_clear_object (&dxtenc);
  }
  tcase_add_test (tc, test_theorem);
  tcase_add_test (tc, test_admission);
  tcase_add_test (tc, test_admission_off);
  tcase_add_test (tc, test_overload_sheds);
  tcase_add_test (tc, test_join_leave_police);
  tcase_add_test (tc, test_srtp_to_srtpdec);
  tcase_add_test (tc, test_srtp_processor_config);
  tcase_add_test (tc, test_srtp_identical_to_gpusrtpenc);
  tcase_add_test (tc, test_srtp_errors);
  tcase_add_test (tc, test_srtp_collected_in_area);
  tcase_add_test (tc, test_nc_encode_packets);
  tcase_add_test (tc, test_nc_encode_to_ncdecoder);
  tcase_add_test (tc, test_nc_encode_bad_config);
  tcase_add_test (tc, test_nc_encode_launch_line);
  tcase_add_test (tc, test_eos_after_full_batch);
  return s;
}

GST_CHECK_MAIN (rtgpuqueue);
