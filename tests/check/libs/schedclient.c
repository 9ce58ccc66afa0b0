/* The scheduler client of libgstgpustream (gpsschedclient.h) on the CPU:
 * items and events leave in push order, processed; a flush drops what is
 * in flight and waits for an output under way; EOS drains; a push waits
 * while the stream's limit is reached and goes on when the forwarder makes
 * room, or gives up at a flush; the latency answer adds 3 cycles; a cycle
 * below the minimum is refused with an error message; the element's
 * declared rate is counted by the device's admission. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <string.h>

#include "gpsschedclient.h"

#define CYCLE (2 * GST_MSECOND)

/* ---- items, a processor that marks them, an output that logs them ----- */

typedef struct
{
  gint seq;
  gboolean processed;
} Item;

static void
mark_cpu (gpointer data, GstGpuStreamSchedItem * items, guint n)
{
  guint i;

  for (i = 0; i < n; i++)
    if (items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
      ((Item *) items[i].data)->processed = TRUE;
}

static const GstGpuStreamProcessor mark_proc = { "mark", mark_cpu, NULL };

/* what the forwarder did, in order: item seqs, and -(n + 1) for the custom
 * event number n, -1000 for EOS */
static GMutex log_lock;
static GCond log_cond;
static GArray *out_log;
static gint unprocessed;
static gint dropped;
/* an output blocks while the gate is closed (a downstream that blocks) */
static gboolean gate_closed;
static gint in_output;
static GstFlowReturn output_ret;

static gint
event_code (GstEvent * event)
{
  const GstStructure *s;
  gint n = 0;

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    return -1000;
  s = gst_event_get_structure (event);
  fail_unless (s && gst_structure_get_int (s, "n", &n));
  return -(n + 1);
}

static GstFlowReturn
log_output (gpointer stream_data, gpointer data, GstEvent * event)
{
  gint code;

  g_mutex_lock (&log_lock);
  in_output++;
  g_cond_broadcast (&log_cond);
  while (gate_closed)
    g_cond_wait (&log_cond, &log_lock);
  if (event) {
    code = event_code (event);
    gst_event_unref (event);
  } else {
    Item *it = data;

    code = it->seq;
    if (!it->processed)
      unprocessed++;
    g_free (it);
  }
  g_array_append_val (out_log, code);
  in_output--;
  g_cond_broadcast (&log_cond);
  g_mutex_unlock (&log_lock);
  return output_ret;
}

static void
item_drop (gpointer data)
{
  g_free (data);
  g_atomic_int_inc (&dropped);
}

static const GstGpuStreamSchedClientCallbacks log_callbacks = {
  log_output, item_drop
};

static void
log_reset (void)
{
  g_mutex_lock (&log_lock);
  if (out_log)
    g_array_unref (out_log);
  out_log = g_array_new (FALSE, FALSE, sizeof (gint));
  unprocessed = 0;
  gate_closed = FALSE;
  in_output = 0;
  output_ret = GST_FLOW_OK;
  g_mutex_unlock (&log_lock);
  g_atomic_int_set (&dropped, 0);
}

static Item *
item_new (gint seq)
{
  Item *it = g_new0 (Item, 1);

  it->seq = seq;
  return it;
}

static GstEvent *
custom_event (gint n)
{
  return gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
      gst_structure_new ("test", "n", G_TYPE_INT, n, NULL));
}

static void
set_gate (gboolean closed)
{
  g_mutex_lock (&log_lock);
  gate_closed = closed;
  g_cond_broadcast (&log_cond);
  g_mutex_unlock (&log_lock);
}

/* waits until an output is blocked at the gate */
static void
wait_in_output (void)
{
  g_mutex_lock (&log_lock);
  while (in_output == 0)
    g_cond_wait (&log_cond, &log_lock);
  g_mutex_unlock (&log_lock);
}

static guint
log_len (void)
{
  guint n;

  g_mutex_lock (&log_lock);
  n = out_log->len;
  g_mutex_unlock (&log_lock);
  return n;
}

static gint
log_at (guint i)
{
  gint v;

  g_mutex_lock (&log_lock);
  v = g_array_index (out_log, gint, i);
  g_mutex_unlock (&log_lock);
  return v;
}

static GstGpuStreamSchedClient *
client_new_started (GstElement ** elem)
{
  GstGpuStreamSchedClient *c;

  *elem = gst_bin_new (NULL);
  c = gst_gpustream_sched_client_new (*elem, &mark_proc, NULL,
      &log_callbacks, NULL);
  fail_unless (gst_gpustream_sched_client_start (c, CYCLE, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL));
  return c;
}

static void
client_free (GstGpuStreamSchedClient * c, GstGpuStreamSchedClientStream * s,
    GstElement * elem)
{
  gst_gpustream_sched_client_stop (c);
  gst_gpustream_sched_client_remove_stream (c, s);
  gst_gpustream_sched_client_free (c);
  gst_object_unref (elem);
}

/* ---- tests --------------------------------------------------------------- */

/* 300 items with an event after every 7th and EOS at the end: all processed,
 * all out, in push order, EOS last; two streams do not mix. */
GST_START_TEST (test_order_items_and_events)
{
  GstElement *elem;
  GstGpuStreamSchedClient *c;
  GstGpuStreamSchedClientStream *s;
  GArray *want = g_array_new (FALSE, FALSE, sizeof (gint));
  gint i, code;
  guint j;

  log_reset ();
  c = client_new_started (&elem);
  s = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  fail_unless (s != NULL);
  for (i = 0; i < 300; i++) {
    fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (i),
            sizeof (Item)), GST_FLOW_OK);
    g_array_append_val (want, i);
    if (i % 7 == 6) {
      fail_unless (gst_gpustream_sched_client_push_event (s,
              custom_event (i / 7)));
      code = -(i / 7 + 1);
      g_array_append_val (want, code);
    }
  }
  fail_unless (gst_gpustream_sched_client_push_event (s, gst_event_new_eos ()));
  code = -1000;
  g_array_append_val (want, code);
  /* EOS drains: everything is out when wait (0) returns */
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0), GST_FLOW_OK);

  fail_unless_equals_int (log_len (), want->len);
  for (j = 0; j < want->len; j++)
    fail_unless_equals_int (log_at (j), g_array_index (want, gint, j));
  fail_unless_equals_int (unprocessed, 0);
  fail_unless_equals_int (g_atomic_int_get (&dropped), 0);

  client_free (c, s, elem);
  g_array_unref (want);
}

GST_END_TEST;

static gpointer
open_gate_later (gpointer data)
{
  g_usleep (50 * G_TIME_SPAN_MILLISECOND);
  set_gate (FALSE);
  return NULL;
}

/* A flush drops what is in flight; flush_stop waits for the output under
 * way (item 0, blocked downstream) to end; after it, only new items. */
GST_START_TEST (test_flush_drops_in_flight)
{
  GstElement *elem;
  GstGpuStreamSchedClient *c;
  GstGpuStreamSchedClientStream *s;
  GThread *opener;
  gint i;

  log_reset ();
  c = client_new_started (&elem);
  s = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  set_gate (TRUE);
  for (i = 0; i < 10; i++)
    fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (i),
            sizeof (Item)), GST_FLOW_OK);
  wait_in_output ();            /* item 0 is being output, blocked */

  gst_gpustream_sched_client_flush_start (s);
  /* flushing: a push gives up, and the item is dropped */
  fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (99),
          sizeof (Item)), GST_FLOW_FLUSHING);
  opener = g_thread_new ("opener", open_gate_later, NULL);
  gst_gpustream_sched_client_flush_stop (s);
  /* returned only once item 0's output ended */
  g_mutex_lock (&log_lock);
  fail_unless (!gate_closed);
  fail_unless_equals_int (in_output, 0);
  g_mutex_unlock (&log_lock);
  g_thread_join (opener);

  for (i = 10; i < 15; i++)
    fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (i),
            sizeof (Item)), GST_FLOW_OK);
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0), GST_FLOW_OK);

  /* 0 (under way at the flush), then 10..14: 1..9 and 99 dropped */
  fail_unless_equals_int (log_len (), 6);
  fail_unless_equals_int (log_at (0), 0);
  for (i = 1; i < 6; i++)
    fail_unless_equals_int (log_at (i), 9 + i);
  fail_unless_equals_int (g_atomic_int_get (&dropped), 10);
  client_free (c, s, elem);
}

GST_END_TEST;

typedef struct
{
  GstGpuStreamSchedClientStream *s;
  gint first, n;
  gint pushed;                  /* atomic */
  GstFlowReturn last;
} Pusher;

static gpointer
pusher_main (gpointer data)
{
  Pusher *p = data;
  gint i;

  for (i = 0; i < p->n; i++) {
    p->last = gst_gpustream_sched_client_push (p->s, item_new (p->first + i),
        sizeof (Item));
    if (p->last != GST_FLOW_OK)
      break;
    g_atomic_int_inc (&p->pushed);
  }
  return NULL;
}

/* Starts a thread pushing n items from first with the gate closed, and
 * checks that it stops at the stream's limit of 2 while the forwarder is
 * blocked: 20 cycles, it would be long done if nothing held it. */
static GThread *
start_blocked_pusher (Pusher * p, GstGpuStreamSchedClientStream * s,
    gint first, gint n)
{
  GThread *t;

  memset (p, 0, sizeof *p);
  p->s = s;
  p->first = first;
  p->n = n;
  set_gate (TRUE);
  t = g_thread_new ("pusher", pusher_main, p);
  wait_in_output ();
  g_usleep (20 * CYCLE / 1000);
  fail_unless_equals_int (g_atomic_int_get (&p->pushed), 2);
  return t;
}

/* With max-items 2 and the forwarder blocked downstream, the third push
 * waits; it goes on when the output resumes. Blocked again, a flush makes
 * the waiting push give up. */
GST_START_TEST (test_back_pressure)
{
  GstElement *elem;
  GstGpuStreamSchedClient *c;
  GstGpuStreamSchedClientStream *s;
  Pusher p = { 0 };
  GThread *t;
  gint i;

  log_reset ();
  c = client_new_started (&elem);
  s = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  gst_gpustream_sched_client_stream_set_limits (s, 2, 0);

  t = start_blocked_pusher (&p, s, 0, 6);
  set_gate (FALSE);
  g_thread_join (t);
  fail_unless_equals_int (p.pushed, 6);
  fail_unless_equals_int (p.last, GST_FLOW_OK);
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0), GST_FLOW_OK);
  fail_unless_equals_int (log_len (), 6);
  for (i = 0; i < 6; i++)
    fail_unless_equals_int (log_at (i), i);

  /* blocked again: a flush releases the waiting pusher with FLUSHING */
  t = start_blocked_pusher (&p, s, 100, 6);
  gst_gpustream_sched_client_flush_start (s);
  g_thread_join (t);
  fail_unless_equals_int (p.pushed, 2);
  fail_unless_equals_int (p.last, GST_FLOW_FLUSHING);
  set_gate (FALSE);
  gst_gpustream_sched_client_flush_stop (s);
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0), GST_FLOW_OK);
  /* 100 was under way at the flush; 101 and the refused 102 dropped */
  fail_unless_equals_int (log_len (), 7);
  fail_unless_equals_int (log_at (6), 100);
  fail_unless_equals_int (g_atomic_int_get (&dropped), 2);
  client_free (c, s, elem);
}

GST_END_TEST;

/* A failure downstream comes back to the streaming thread once. */
GST_START_TEST (test_flow_return)
{
  GstElement *elem;
  GstGpuStreamSchedClient *c;
  GstGpuStreamSchedClientStream *s;

  log_reset ();
  c = client_new_started (&elem);
  s = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  g_mutex_lock (&log_lock);
  output_ret = GST_FLOW_NOT_LINKED;
  g_mutex_unlock (&log_lock);
  fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (0),
          sizeof (Item)), GST_FLOW_OK);
  /* wait reports it and leaves it for the next push */
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0),
      GST_FLOW_NOT_LINKED);
  g_mutex_lock (&log_lock);
  output_ret = GST_FLOW_OK;
  g_mutex_unlock (&log_lock);
  fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (1),
          sizeof (Item)), GST_FLOW_NOT_LINKED);
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0), GST_FLOW_OK);
  fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (2),
          sizeof (Item)), GST_FLOW_OK);
  client_free (c, s, elem);
}

GST_END_TEST;

/* The LATENCY answer: upstream's + what the element holds + 3 cycles. */
static GstGpuStreamSchedClient *latency_client;

static gboolean
latency_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY)
    return gst_gpustream_sched_client_query_latency (latency_client, pad,
        parent, query, 5 * GST_MSECOND);
  return gst_pad_query_default (pad, parent, query);
}

GST_START_TEST (test_latency)
{
  GstElement *elem;
  GstHarness *h = gst_harness_new ("identity");
  GstPad *srcpad = gst_element_get_static_pad (h->element, "src");

  log_reset ();
  latency_client = gst_gpustream_sched_client_new (h->element, &mark_proc,
      NULL, &log_callbacks, NULL);
  gst_pad_set_query_function (srcpad, latency_query);
  gst_harness_set_upstream_latency (h, GST_MSECOND);
  /* not running: nothing added for the scheduler */
  fail_unless_equals_uint64 (gst_gpustream_sched_client_get_latency
      (latency_client), 0);
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      GST_MSECOND + 5 * GST_MSECOND);
  fail_unless (gst_gpustream_sched_client_start (latency_client, CYCLE, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL));
  fail_unless_equals_uint64 (gst_gpustream_sched_client_get_latency
      (latency_client), 3 * CYCLE);
  fail_unless_equals_uint64 (gst_harness_query_latency (h),
      GST_MSECOND + 5 * GST_MSECOND + 3 * CYCLE);
  gst_gpustream_sched_client_stop (latency_client);
  fail_unless_equals_uint64 (gst_gpustream_sched_client_get_latency
      (latency_client), 0);
  gst_gpustream_sched_client_free (latency_client);
  gst_object_unref (srcpad);
  gst_harness_teardown (h);

  /* a cycle below the minimum: refused, the element posts why */
  {
    GstBus *bus = gst_bus_new ();
    GstGpuStreamSchedClient *c;
    GstMessage *msg;
    GError *err = NULL;
    gchar *debug = NULL;

    elem = gst_bin_new (NULL);
    gst_element_set_bus (elem, bus);
    c = gst_gpustream_sched_client_new (elem, &mark_proc, NULL,
        &log_callbacks, NULL);
    fail_if (gst_gpustream_sched_client_start (c, 50 * GST_USECOND, 1,
            GST_GPUSTREAM_BACKEND_CPU, NULL));
    fail_if (gst_gpustream_sched_client_is_running (c));
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    gst_message_parse_error (msg, &err, &debug);
    fail_unless (g_error_matches (err, GST_LIBRARY_ERROR,
            GST_LIBRARY_ERROR_SETTINGS));
    fail_unless (strstr (err->message, "cycle 50000 ns") != NULL, "%s",
        err->message);
    g_clear_error (&err);
    g_free (debug);
    gst_message_unref (msg);
    /* and no stream without a running client */
    fail_unless (gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL,
            &err) == NULL);
    fail_unless (err != NULL);
    g_clear_error (&err);
    gst_gpustream_sched_client_free (c);
    gst_element_set_bus (elem, NULL);
    gst_object_unref (bus);
    gst_object_unref (elem);
  }
}

GST_END_TEST;

/* The stats: batches and the latency of every stream, kept after stop. */
GST_START_TEST (test_stats)
{
  GstElement *elem;
  GstGpuStreamSchedClient *c;
  GstGpuStreamSchedClientStream *s;
  GstStructure *st = gst_structure_new_empty ("stats");
  guint64 batches = 0, p99 = 0, max = 0, misses = G_MAXUINT64;
  gint i;

  log_reset ();
  c = client_new_started (&elem);
  s = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  for (i = 0; i < 20; i++)
    fail_unless_equals_int (gst_gpustream_sched_client_push (s, item_new (i),
            sizeof (Item)), GST_FLOW_OK);
  fail_unless_equals_int (gst_gpustream_sched_client_wait (s, 0), GST_FLOW_OK);
  gst_gpustream_sched_client_stop (c);
  gst_gpustream_sched_client_remove_stream (c, s);
  gst_gpustream_sched_client_get_stats (c, st);
  fail_unless (gst_structure_get_uint64 (st, "scheduled-batches", &batches));
  fail_unless (gst_structure_get_uint64 (st, "latency-p99-us", &p99));
  fail_unless (gst_structure_get_uint64 (st, "latency-max-us", &max));
  fail_unless (gst_structure_get_uint64 (st, "latency-misses", &misses));
  fail_unless (batches >= 1);
  fail_unless (max > 0 && p99 > 0);
  fail_unless (misses <= 20);
  /* a run without a cycle reports 0 */
  fail_unless (gst_gpustream_sched_client_start (c, 0, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL));
  gst_gpustream_sched_client_get_stats (c, st);
  fail_unless (gst_structure_get_uint64 (st, "scheduled-batches", &batches));
  fail_unless_equals_uint64 (batches, 0);
  gst_structure_free (st);
  gst_gpustream_sched_client_free (c);
  gst_object_unref (elem);
}

GST_END_TEST;

/* The element's declared rate is counted by the device's admission: beside
 * a scheduler with admission on and a capacity it starts while the sum
 * fits, a raise that does not fit posts an ERROR with the figures and keeps
 * the old rate; without a rate the first stream of a run posts one
 * WARNING. */
static void
forward_nothing (gpointer stream_data, gpointer data, guint16 flags)
{
}

static const GstGpuStreamSchedCallbacks nothing_cb = { forward_nothing, NULL };

static GstMessage *
pop_one (GstBus * bus, GstMessageType type, const gchar * needle)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, type);
  GError *err = NULL;

  fail_unless (msg != NULL);
  if (type == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, NULL);
  else
    gst_message_parse_warning (msg, &err, NULL);
  fail_unless (strstr (err->message, needle) != NULL, "%s", err->message);
  g_clear_error (&err);
  return msg;
}

GST_START_TEST (test_declared_rate)
{
  GstGpuStreamScheduler *q =
      gst_gpustream_scheduler_new (&mark_proc, NULL, &nothing_cb);
  GstGpuStreamSchedulerParams p;
  GstGpuStreamSchedStream *qs;
  GstGpuStreamSchedClient *c;
  GstGpuStreamSchedClientStream *s1, *s2;
  GstElement *elem = gst_bin_new (NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;

  log_reset ();
  gst_element_set_bus (elem, bus);
  gst_gpustream_scheduler_get_params (q, &p);
  p.cycle = CYCLE;
  p.capacity = 1000000;
  p.admission = TRUE;
  gst_gpustream_scheduler_set_params (q, &p);
  qs = gst_gpustream_scheduler_add_stream (q, 64, 100 * GST_MSECOND, 600000,
      NULL, NULL, NULL);
  fail_unless (qs != NULL);
  fail_unless (gst_gpustream_scheduler_start (q, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));

  c = gst_gpustream_sched_client_new (elem, &mark_proc, NULL, &log_callbacks,
      NULL);
  fail_unless (gst_gpustream_sched_client_set_rate (c, 300000, "max-rate"));
  fail_unless (gst_gpustream_sched_client_start (c, CYCLE, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL));
  s1 = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  fail_unless (s1 != NULL);
  fail_unless (gst_bus_pop (bus) == NULL);

  /* 0.6 + 0.5 MB/s does not fit 1 MB/s */
  fail_if (gst_gpustream_sched_client_set_rate (c, 500000, "max-rate"));
  msg = pop_one (bus, GST_MESSAGE_ERROR, "rate 5e+05 B/s (max-rate) does not "
      "fit the device: declared rate refused on the CPU's worker: total rate "
      "6e+05 + 5e+05 B/s exceeds capacity 1e+06 B/s (B_I at cycle 2 ms)");
  gst_message_unref (msg);
  /* the old rate stays: beside 0.6 + 0.3, 0.2 MB/s more does not fit and
   * 0.1 does */
  fail_unless (gst_gpustream_scheduler_add_stream (q, 64, 100 * GST_MSECOND,
          200000, NULL, NULL, NULL) == NULL);
  {
    GstGpuStreamSchedStream *more = gst_gpustream_scheduler_add_stream (q, 64,
        100 * GST_MSECOND, 100000, NULL, NULL, NULL);
    fail_unless (more != NULL);
    gst_gpustream_scheduler_remove_stream (q, more);
  }
  gst_gpustream_sched_client_stop (c);
  gst_gpustream_sched_client_remove_stream (c, s1);

  /* no rate: one warning a run, at the first stream */
  fail_unless (gst_gpustream_sched_client_set_rate (c, 0, NULL));
  fail_unless (gst_gpustream_sched_client_start (c, CYCLE, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL));
  s1 = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  s2 = gst_gpustream_sched_client_add_stream (c, 64, NULL, NULL, NULL);
  fail_unless (s1 != NULL && s2 != NULL);
  msg = pop_one (bus, GST_MESSAGE_WARNING, "no rate declared: set max-rate");
  gst_message_unref (msg);
  fail_unless (gst_bus_pop (bus) == NULL);

  gst_gpustream_sched_client_stop (c);
  gst_gpustream_sched_client_remove_stream (c, s1);
  gst_gpustream_sched_client_remove_stream (c, s2);
  gst_gpustream_sched_client_free (c);
  gst_gpustream_scheduler_stop (q);
  gst_gpustream_scheduler_remove_stream (q, qs);
  gst_gpustream_scheduler_free (q);
  gst_element_set_bus (elem, NULL);
  gst_object_unref (bus);
  gst_object_unref (elem);
}

GST_END_TEST;

static Suite *
schedclient_suite (void)
{
  Suite *s = suite_create ("schedclient");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_order_items_and_events);
  tcase_add_test (tc, test_flush_drops_in_flight);
  tcase_add_test (tc, test_back_pressure);
  tcase_add_test (tc, test_flow_return);
  tcase_add_test (tc, test_latency);
  tcase_add_test (tc, test_stats);
  tcase_add_test (tc, test_declared_rate);
  return s;
}

GST_CHECK_MAIN (schedclient);
