/* The real-time scheduler of libgstgpustream (gpsscheduler.h) on the CPU:
 * admission (beta + v <= B_I, min(theta, d) > 3I + mu), buffer swapping under concurrent collectors,
 * policing, calibration. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "gpsscheduler.h"

/* ---- a processor whose cost is known: ns_per_byte of busy CPU ---------- */

static guint64 busy_ns_per_byte;

static void
busy_cpu (gpointer data, GstGpuStreamSchedItem * items, guint n)
{
  guint64 bytes = 0, end;
  guint i;

  /* (a packet dropped late is skipped, as a real stage does) */
  for (i = 0; i < n; i++)
    if ((items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) &&
        !gst_gpustream_sched_item_is_flushed (&items[i]))
      bytes += items[i].size;
  end = gst_gpustream_sched_now () + bytes * busy_ns_per_byte;
  while (gst_gpustream_sched_now () < end);
}

static const GstGpuStreamProcessor busy_proc = { "busy", busy_cpu, NULL };

/* ---- forwarding checks: every number once, in order, per stream -------- */

#define N_STREAMS 8

typedef struct
{
  guint id;
  guint64 next;                 /* expected next sequence number */
  gint bad;
} Sink;

static Sink sinks[N_STREAMS];

static void
fwd_check (gpointer stream_data, gpointer data, guint16 flags)
{
  Sink *s = stream_data;
  guint64 seq = GPOINTER_TO_SIZE (data);

  /* one forwarder per pipeline, a stream in one pipeline: no race here */
  if (seq != s->next)
    g_atomic_int_inc (&s->bad);
  s->next = seq + 1;
}

static void
drop_nothing (gpointer data)
{
}

static const GstGpuStreamSchedCallbacks check_cb = { fwd_check, drop_nothing };

static void
set_params (GstGpuStreamScheduler * sched, GstClockTime cycle,
    guint64 capacity, gboolean admission)
{
  GstGpuStreamSchedulerParams p;

  gst_gpustream_scheduler_get_params (sched, &p);
  p.cycle = cycle;
  p.capacity = capacity;
  p.admission = admission;
  gst_gpustream_scheduler_set_params (sched, &p);
}

GST_START_TEST (test_admission)
{
  GstGpuStreamScheduler *sched =
      gst_gpustream_scheduler_new (&busy_proc, NULL, &check_cb);
  GstGpuStreamSchedStream *a, *b;
  GstGpuStreamSchedulerStats st;
  GError *err = NULL;

  /* I = 10 ms, mu = 0.1 ms (default), B_I = 1.4e9 B/s */
  set_params (sched, 10 * GST_MSECOND, 1400000000, TRUE);
  a = gst_gpustream_scheduler_add_stream (sched, 1400, 100 * GST_MSECOND,
      1200000000, &sinks[0], NULL, &err);
  fail_unless (a != NULL);
  b = gst_gpustream_scheduler_add_stream (sched, 1400, 100 * GST_MSECOND,
      300000000, &sinks[1], NULL, &err);
  fail_unless (b == NULL);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY));
  fail_unless_equals_string (err->message, "stream refused: total rate "
      "1.2e+09 + 3e+08 B/s exceeds capacity 1.4e+09 B/s");
  g_clear_error (&err);

  /* 20 ms is not above 3 x 10 + 0.1 ms */
  b = gst_gpustream_scheduler_add_stream (sched, 1400, 20 * GST_MSECOND,
      1000, &sinks[1], NULL, &err);
  fail_unless (b == NULL);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_DEADLINE));
  fail_unless_equals_string (err->message, "stream refused: deadline 20 ms "
      "is not above 3 x cycle 10 ms + mu 0.1 ms");
  g_clear_error (&err);
  /* 30.2 ms is */
  b = gst_gpustream_scheduler_add_stream (sched, 1400, 30200 * GST_USECOND,
      1000, &sinks[1], NULL, &err);
  fail_unless (b != NULL);

  gst_gpustream_scheduler_get_stats (sched, &st);
  fail_unless_equals_uint64 (st.beta, 1200001000);
  fail_unless_equals_uint64 (st.theta, 30200 * GST_USECOND);
  fail_unless_equals_uint64 (st.streams_admitted, 2);
  fail_unless_equals_uint64 (st.streams_refused, 2);

  /* leaving frees the rate and raises theta */
  gst_gpustream_scheduler_remove_stream (sched, a);
  gst_gpustream_scheduler_remove_stream (sched, b);
  gst_gpustream_scheduler_get_stats (sched, &st);
  fail_unless_equals_uint64 (st.beta, 0);
  fail_unless (!GST_CLOCK_TIME_IS_VALID (st.theta));
  b = gst_gpustream_scheduler_add_stream (sched, 1400, 100 * GST_MSECOND,
      300000000, &sinks[1], NULL, &err);
  fail_unless (b != NULL);

  /* a larger cycle makes the admitted set unschedulable: start says so */
  set_params (sched, 40 * GST_MSECOND, 1400000000, TRUE);
  fail_if (gst_gpustream_scheduler_start (sched, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_DEADLINE));
  fail_unless_equals_string (err->message, "the admitted streams no longer "
      "fit: deadline 100 ms is not above 3 x cycle 40 ms + mu 0.1 ms");
  g_clear_error (&err);

  /* admission off admits anything */
  set_params (sched, 10 * GST_MSECOND, 1000, FALSE);
  a = gst_gpustream_scheduler_add_stream (sched, 1400, GST_MSECOND,
      1000000, &sinks[0], NULL, &err);
  fail_unless (a != NULL);
  gst_gpustream_scheduler_free (sched);
}

GST_END_TEST;

typedef struct
{
  GstGpuStreamSchedStream *stream;
  guint64 count;
  guint64 retries;
} Producer;

static gpointer
produce (gpointer data)
{
  Producer *p = data;
  guint64 seq;

  for (seq = 0; seq < p->count; seq++) {
    /* a full batch refuses the packet (counted); the producer offers it
     * again, so every number must come out exactly once */
    while (!gst_gpustream_sched_stream_push (p->stream,
            GSIZE_TO_POINTER (seq), 100, GST_GPUSTREAM_SCHED_ITEM_PACKET)) {
      p->retries++;
      g_thread_yield ();
    }
  }
  return NULL;
}

GST_START_TEST (test_swap_stress)
{
  GstGpuStreamScheduler *sched;
  Producer prod[N_STREAMS];
  GThread *threads[N_STREAMS];
  guint64 total_retries = 0;
  guint i;
  gint64 until;

  busy_ns_per_byte = 0;
  sched = gst_gpustream_scheduler_new (&busy_proc, NULL, &check_cb);
  set_params (sched, GST_MSECOND, 0, TRUE);
  /* 3 pipelines for 8 streams: several collectors share each batch */
  fail_unless (gst_gpustream_scheduler_start (sched, 3,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));
  for (i = 0; i < N_STREAMS; i++) {
    memset (&sinks[i], 0, sizeof (Sink));
    sinks[i].id = i;
    prod[i].stream = gst_gpustream_scheduler_add_stream (sched, 100,
        GST_SECOND, G_GUINT64_CONSTANT (1) << 50, &sinks[i], NULL, NULL);
    fail_unless (prod[i].stream != NULL);
    prod[i].count = 200000;
    prod[i].retries = 0;
  }
  for (i = 0; i < N_STREAMS; i++)
    threads[i] = g_thread_new ("producer", produce, &prod[i]);
  for (i = 0; i < N_STREAMS; i++)
    g_thread_join (threads[i]);

  /* everything collected is forwarded within a few cycles */
  until = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  for (i = 0; i < N_STREAMS; i++)
    while (sinks[i].next < prod[i].count && g_get_monotonic_time () < until)
      g_usleep (1000);
  for (i = 0; i < N_STREAMS; i++) {
    GstGpuStreamSchedStreamStats ss;

    gst_gpustream_sched_stream_get_stats (prod[i].stream, &ss);
    fail_unless_equals_int (sinks[i].bad, 0);
    fail_unless_equals_uint64 (sinks[i].next, prod[i].count);
    fail_unless_equals_uint64 (ss.packets, prod[i].count);
    fail_unless_equals_uint64 (ss.drops_overflow, prod[i].retries);
    total_retries += prod[i].retries;
  }
  GST_INFO ("8 x 200000 packets, %" G_GUINT64_FORMAT " refused by full "
      "batches and offered again", total_retries);
  gst_gpustream_scheduler_free (sched);
}

GST_END_TEST;

GST_START_TEST (test_policing)
{
  GstGpuStreamScheduler *sched;
  GstGpuStreamSchedStream *s;
  GstGpuStreamSchedStreamStats ss;
  guint i, ok = 0;

  busy_ns_per_byte = 0;
  memset (&sinks[0], 0, sizeof (Sink));
  sched = gst_gpustream_scheduler_new (&busy_proc, NULL, &check_cb);
  set_params (sched, 10 * GST_MSECOND, 0, TRUE);
  fail_unless (gst_gpustream_scheduler_start (sched, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));
  /* 100 kB/s, bucket 10 ms = 1000 B + one packet of 100 B: 11 packets
   * pass at once, then about one per ms */
  s = gst_gpustream_scheduler_add_stream (sched, 100, GST_SECOND, 100000,
      &sinks[0], NULL, NULL);
  for (i = 0; i < 1000; i++)
    ok += gst_gpustream_sched_stream_push (s, GSIZE_TO_POINTER (ok), 100,
        GST_GPUSTREAM_SCHED_ITEM_PACKET);
  gst_gpustream_sched_stream_get_stats (s, &ss);
  fail_unless (ok >= 11 && ok < 20, "%u passed", ok);
  fail_unless_equals_uint64 (ss.drops_policed, 1000 - ok);
  gst_gpustream_scheduler_free (sched);
}

GST_END_TEST;

static gpointer
make_packet (gpointer user_data, guint32 size)
{
  return GSIZE_TO_POINTER (1);
}

GST_START_TEST (test_calibration)
{
  GstGpuStreamCalibration cal = { 0 }, back = { 0 };
  gchar *path;
  gint fd;

  /* 1 ns per byte, I = 2 ms, margin 20 %: B_I is at most 1.6 MB per 2 ms
   * = 0.8e9 B/s; noise only makes the worst batch slower, so lower */
  busy_ns_per_byte = 1;
  fail_unless (gst_gpustream_scheduler_calibrate (&busy_proc, NULL,
          GST_GPUSTREAM_BACKEND_CPU, NULL, make_packet, drop_nothing, NULL,
          2 * GST_MSECOND, 1000, 0.2, &cal, NULL));
  GST_INFO ("capacity %" G_GUINT64_FORMAT " B/s", cal.capacity);
  fail_unless (cal.capacity <= 800000000 + 800000000 / 16);
  /* a loaded machine measures a slower worst case: only the upper bound is
   * physics; the measured T_S must still sit under the limit */
  fail_unless (cal.capacity > 0);
  fail_unless (cal.worst_batch < 1600 * GST_USECOND);

  fd = g_file_open_tmp ("gpscal-XXXXXX", &path, NULL);
  close (fd);
  fail_unless (gst_gpustream_calibration_save (&cal, path, NULL));
  fail_unless (gst_gpustream_calibration_load (&back, path, NULL));
  fail_unless_equals_uint64 (back.capacity, cal.capacity);
  fail_unless_equals_uint64 (back.cycle, 2 * GST_MSECOND);
  fail_unless_equals_string (back.processor, "busy");
  g_unlink (path);
  g_free (path);
  gst_gpustream_calibration_clear (&cal);
  gst_gpustream_calibration_clear (&back);
}

GST_END_TEST;

/* ---- a batching scheduler's declared rate ---------------------------------- */

/* A batching scheduler (admission off for its own streams) with a declared
 * rate is counted by the device's admission like a stream of that rate:
 * beside a scheduler with a capacity it starts while the sum fits, the
 * other's streams are admitted up to the capacity, and a rate that does
 * not fit is refused at start or when raised, the text naming the rates,
 * the capacity and the cycle. */
GST_START_TEST (test_declared_rate)
{
  GstGpuStreamScheduler *b =
      gst_gpustream_scheduler_new (&busy_proc, NULL, &check_cb);
  GstGpuStreamScheduler *e =
      gst_gpustream_scheduler_new (&busy_proc, NULL, &check_cb);
  GstGpuStreamSchedStream *sb, *se, *extra;
  GError *err = NULL;

  busy_ns_per_byte = 0;
  memset (sinks, 0, sizeof sinks);
  set_params (b, 2 * GST_MSECOND, 1000000, TRUE);
  sb = gst_gpustream_scheduler_add_stream (b, 1000, 100 * GST_MSECOND,
      600000, &sinks[0], NULL, NULL);
  fail_unless (sb != NULL);
  fail_unless (gst_gpustream_scheduler_start (b, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));

  /* stopped: only stored */
  gst_gpustream_scheduler_set_batching (e, 2 * GST_MSECOND);
  fail_unless (gst_gpustream_scheduler_declare_rate (e, 300000, NULL));
  se = gst_gpustream_scheduler_add_stream (e, 1000,
      GST_GPUSTREAM_SCHED_BATCHING_DEADLINE (2 * GST_MSECOND),
      GST_GPUSTREAM_SCHED_UNLIMITED_RATE, &sinks[1], NULL, NULL);
  fail_unless (se != NULL);
  fail_unless (gst_gpustream_scheduler_start (e, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));

  /* 0.6 + 0.3 MB/s admitted: 0.2 more is over the capacity, 0.1 is not */
  extra = gst_gpustream_scheduler_add_stream (b, 1000, 100 * GST_MSECOND,
      200000, &sinks[2], NULL, &err);
  fail_unless (extra == NULL);
  fail_unless (strstr (err->message, "stream refused: total rate 9e+05 + "
          "2e+05 B/s exceeds capacity 1e+06 B/s (B_I at cycle 2 ms); beside "
          "it: busy (cycle 2 ms, 3e+05 B/s)") != NULL, "%s", err->message);
  g_clear_error (&err);
  extra = gst_gpustream_scheduler_add_stream (b, 1000, 100 * GST_MSECOND,
      100000, &sinks[2], NULL, &err);
  fail_unless (extra != NULL);
  gst_gpustream_scheduler_remove_stream (b, extra);

  /* raised while running: refused, the old rate stays */
  fail_if (gst_gpustream_scheduler_declare_rate (e, 500000, &err));
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY));
  fail_unless (strstr (err->message, "declared rate refused on the CPU's "
          "worker: total rate 6e+05 + 5e+05 B/s exceeds capacity 1e+06 B/s "
          "(B_I at cycle 2 ms)") != NULL, "%s", err->message);
  g_clear_error (&err);
  fail_unless_equals_uint64 (gst_gpustream_scheduler_get_declared_rate (e),
      300000);

  /* the same rate at start: the start fails */
  gst_gpustream_scheduler_stop (e);
  fail_unless (gst_gpustream_scheduler_declare_rate (e, 500000, NULL));
  fail_if (gst_gpustream_scheduler_start (e, 1, GST_GPUSTREAM_BACKEND_CPU,
          NULL, &err));
  fail_unless (strstr (err->message, "declared rate cannot join the CPU's "
          "worker: total rate 6e+05 + 5e+05 B/s exceeds capacity 1e+06 B/s "
          "(B_I at cycle 2 ms); beside it: busy (cycle 2 ms, 6e+05 B/s)") !=
      NULL, "%s", err->message);
  g_clear_error (&err);
  /* 0.4 fits */
  fail_unless (gst_gpustream_scheduler_declare_rate (e, 400000, NULL));
  fail_unless (gst_gpustream_scheduler_start (e, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));

  gst_gpustream_scheduler_stop (e);
  gst_gpustream_scheduler_stop (b);
  gst_gpustream_scheduler_remove_stream (e, se);
  gst_gpustream_scheduler_remove_stream (b, sb);
  gst_gpustream_scheduler_free (e);
  gst_gpustream_scheduler_free (b);
}

GST_END_TEST;

/* ---- calibration by trial run ------------------------------------------- */

typedef struct
{
  GstGpuStreamSchedStream *stream;
  guint64 rate, end;
  guint64 refused;
} Pacer;

/* pushes 0, 1, 2, ... of PACED_SIZE bytes at p->rate until p->end */
#define PACED_SIZE 1000
static gpointer
paced_push (gpointer data)
{
  Pacer *p = data;
  guint64 interval = GST_SECOND * PACED_SIZE / p->rate;
  guint64 start = gst_gpustream_sched_now (), k;

  for (k = 0;; k++) {
    guint64 due = start + k * interval, now = gst_gpustream_sched_now ();

    if (due >= p->end)
      break;
    if (due > now + 500 * GST_USECOND)
      g_usleep ((due - now) / 1000);
    if (!gst_gpustream_sched_stream_push (p->stream, GSIZE_TO_POINTER (k),
            PACED_SIZE, GST_GPUSTREAM_SCHED_ITEM_PACKET))
      p->refused++;
  }
  return NULL;
}

/* The trial calibration returns a figure the real worker keeps: streams
 * offering all of it then meet every deadline, in order, nothing lost. It
 * is below what the processor's cost allows, cached for the device,
 * processor, cycle and size, and takes well under 10 s with a short
 * window. */
GST_START_TEST (test_calibration_trial)
{
  GstGpuStreamTrialParams trial;
  GstGpuStreamCalibration cal = { 0 }, again = { 0 };
  GstGpuStreamScheduler *sched;
  GstGpuStreamSchedulerParams params = { 0 };
  Pacer pacers[2];
  GThread *threads[2];
  GError *err = NULL;
  gint64 t0 = g_get_monotonic_time ();
  guint i;

  /* 100 ns per byte: at most 10 MB/s on one core */
  busy_ns_per_byte = 100;
  gst_gpustream_trial_params_init (&trial);
  trial.n_pipelines = 2;
  trial.n_streams = 2;
  trial.deadline = 100 * GST_MSECOND;
  trial.window = 200 * GST_MSECOND;
  trial.steps = 3;
  fail_unless (gst_gpustream_scheduler_calibrate_trial (&busy_proc, NULL,
          GST_GPUSTREAM_BACKEND_CPU, NULL, make_packet, drop_nothing, NULL,
          5 * GST_MSECOND, PACED_SIZE, &trial, &cal, &err), "%s",
      err ? err->message : "");
  GST_INFO ("B_I %" G_GUINT64_FORMAT " B/s (met %" G_GUINT64_FORMAT
      ", standalone %" G_GUINT64_FORMAT ") in %.2f s", cal.capacity,
      cal.trial_met, cal.standalone, (g_get_monotonic_time () - t0) / 1e6);
  fail_unless (g_get_monotonic_time () - t0 < 10 * G_USEC_PER_SEC);
  fail_unless (cal.standalone > 0 && cal.standalone <= 10000000);
  /* the cost bounds what the worker keeps up with; the counting window of
   * 200 ms may take in a 5 ms cycle more at each edge (2 x 2.5 %: once
   * 10,500,000 in CI under the sanitizers), so 10 % is allowed; a loaded
   * machine meets less */
  fail_unless (cal.trial_met > 0 && cal.trial_met <= 11000000,
      "%" G_GUINT64_FORMAT, cal.trial_met);
  fail_unless_equals_uint64 (cal.capacity,
      (guint64) (cal.trial_met * (1.0 - GST_GPUSTREAM_TRIAL_MARGIN)));
  fail_unless_equals_string (cal.processor, "busy");

  /* cached per device, processor, cycle and size */
  fail_unless (gst_gpustream_calibration_lookup (NULL, "busy",
          5 * GST_MSECOND, PACED_SIZE, &again));
  fail_unless_equals_uint64 (again.capacity, cal.capacity);
  gst_gpustream_calibration_clear (&again);
  fail_if (gst_gpustream_calibration_lookup (NULL, "busy", 2 * GST_MSECOND,
          PACED_SIZE, &again));
  fail_if (gst_gpustream_calibration_lookup (NULL, "other",
          5 * GST_MSECOND, PACED_SIZE, &again));

  /* the figure holds: two streams of half of it each, 0.5 s */
  memset (sinks, 0, sizeof sinks);
  sched = gst_gpustream_scheduler_new (&busy_proc, NULL, &check_cb);
  params.cycle = 5 * GST_MSECOND;
  params.capacity = cal.capacity;
  params.mu = 100 * GST_USECOND;
  params.admission = TRUE;
  /* a pacer stalled by the machine catches up unpoliced */
  params.police_burst = GST_SECOND;
  gst_gpustream_scheduler_set_params (sched, &params);
  memset (pacers, 0, sizeof pacers);
  for (i = 0; i < 2; i++) {
    pacers[i].rate = cal.capacity / 2;
    pacers[i].stream = gst_gpustream_scheduler_add_stream (sched,
        PACED_SIZE, 100 * GST_MSECOND, pacers[i].rate, &sinks[i], NULL,
        NULL);
    fail_unless (pacers[i].stream != NULL);
  }
  fail_unless (gst_gpustream_scheduler_start (sched, 2,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));
  for (i = 0; i < 2; i++) {
    pacers[i].end = gst_gpustream_sched_now () + 500 * GST_MSECOND;
    threads[i] = g_thread_new ("pacer", paced_push, &pacers[i]);
  }
  for (i = 0; i < 2; i++)
    g_thread_join (threads[i]);
  g_usleep (100000);
  for (i = 0; i < 2; i++) {
    GstGpuStreamSchedStreamStats st;

    gst_gpustream_sched_stream_get_stats (pacers[i].stream, &st);
    GST_INFO ("stream %u: %" G_GUINT64_FORMAT " packets, max %.2f ms", i,
        st.packets, st.latency_max / 1e6);
    fail_unless_equals_uint64 (st.misses, 0);
    fail_unless_equals_uint64 (st.drops_overflow, 0);
    fail_unless_equals_uint64 (pacers[i].refused, 0);
    fail_unless_equals_uint64 (st.packets, sinks[i].next);
    fail_unless (st.packets > 0);
    fail_unless_equals_int (sinks[i].bad, 0);
  }
  gst_gpustream_scheduler_stop (sched);
  for (i = 0; i < 2; i++)
    gst_gpustream_scheduler_remove_stream (sched, pacers[i].stream);
  gst_gpustream_scheduler_free (sched);
  gst_gpustream_calibration_clear (&cal);
}

GST_END_TEST;

/* ---- a blocked forwarder (a sink prerolling) holds only its pipeline ---- */

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean blocking;            /* stream 0's forward waits while TRUE */
  guint64 got[2];               /* forwarded, per stream */
  guint64 next[2];
  gint bad;
} BlockState;

static BlockState block;

static void
fwd_blocking (gpointer stream_data, gpointer data, guint16 flags)
{
  guint id = GPOINTER_TO_UINT (stream_data);
  guint64 seq = GPOINTER_TO_SIZE (data);

  g_mutex_lock (&block.lock);
  while (id == 0 && block.blocking)
    g_cond_wait (&block.cond, &block.lock);
  if (seq != block.next[id])
    block.bad++;
  block.next[id] = seq + 1;
  block.got[id]++;
  g_cond_broadcast (&block.cond);
  g_mutex_unlock (&block.lock);
}

static const GstGpuStreamSchedCallbacks block_cb = { fwd_blocking,
  drop_nothing
};

static guint64
block_got (guint id)
{
  guint64 n;

  g_mutex_lock (&block.lock);
  n = block.got[id];
  g_mutex_unlock (&block.lock);
  return n;
}

/* ---- keep_deadlines: who pays when the worker cannot keep up ---------- */

typedef struct
{
  GstGpuStreamSchedStream *stream;
  guint64 per_ms;               /* packets pushed each millisecond */
  guint64 pushed;
  gint64 end;                   /* monotonic us */
  GThread *thread;
} Pusher;

static gint forwarded[2];

static void
fwd_count (gpointer stream_data, gpointer data, guint16 flags)
{
  g_atomic_int_inc (&forwarded[GPOINTER_TO_UINT (stream_data)]);
}

static const GstGpuStreamSchedCallbacks forward_count_cb = { fwd_count,
  drop_nothing
};

static gpointer
pusher_main (gpointer data)
{
  Pusher *p = data;
  gint64 next = g_get_monotonic_time ();
  guint64 i;

  while (next < p->end) {
    for (i = 0; i < p->per_ms; i++)
      p->pushed += gst_gpustream_sched_stream_push (p->stream,
          GSIZE_TO_POINTER (p->pushed + 1), 1000,
          GST_GPUSTREAM_SCHED_ITEM_PACKET);
    next += 1000;
    while (g_get_monotonic_time () < next)
      g_usleep (200);
  }
  return NULL;
}

/* A stage that carries 50,000 packets/s, offered 70,000 by two streams: a
 * third of the packets cannot leave in time. The late drops fall on the
 * stream admitted last, as the shedding would, and the first one admitted
 * loses (almost) nothing; dropping oldest first across both would have
 * spread the loss over both (a third each). */
GST_START_TEST (test_late_drops_newest_first)
{
  GstGpuStreamScheduler *sched = gst_gpustream_scheduler_new (&busy_proc,
      NULL, &forward_count_cb);
  GstGpuStreamSchedulerParams p;
  GstGpuStreamSchedStreamStats st[2];
  Pusher push[2];
  guint64 lost[2];
  gint64 end;
  guint i;

  busy_ns_per_byte = 20;        /* 20 us a 1000-byte packet */
  memset (forwarded, 0, sizeof forwarded);
  gst_gpustream_scheduler_get_params (sched, &p);
  p.cycle = 2 * GST_MSECOND;
  p.capacity = 0;
  p.admission = FALSE;
  p.keep_deadlines = TRUE;
  gst_gpustream_scheduler_set_params (sched, &p);
  memset (push, 0, sizeof push);
  for (i = 0; i < 2; i++) {
    push[i].stream = gst_gpustream_scheduler_add_stream (sched, 1000,
        20 * GST_MSECOND, 35000 * 1000, GUINT_TO_POINTER (i), NULL, NULL);
    fail_unless (push[i].stream != NULL);
    push[i].per_ms = 35;
  }
  fail_unless (gst_gpustream_scheduler_start (sched, 2,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));
  end = g_get_monotonic_time () + 1500 * G_TIME_SPAN_MILLISECOND;
  for (i = 0; i < 2; i++) {
    push[i].end = end;
    push[i].thread = g_thread_new ("pusher", pusher_main, &push[i]);
  }
  for (i = 0; i < 2; i++)
    g_thread_join (push[i].thread);
  /* the backlog leaves within a deadline or is dropped (bounded wait) */
  end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  for (i = 0; i < 2 && g_get_monotonic_time () < end;) {
    gst_gpustream_sched_stream_get_stats (push[i].stream, &st[i]);
    if (st[i].packets + st[i].drops_late < push[i].pushed)
      g_usleep (10 * 1000);
    else
      i++;
  }
  gst_gpustream_scheduler_stop (sched);

  for (i = 0; i < 2; i++) {
    gst_gpustream_sched_stream_get_stats (push[i].stream, &st[i]);
    /* every packet pushed is forwarded or dropped late, once */
    fail_unless (st[i].packets + st[i].drops_late == push[i].pushed,
        "stream %u: %" G_GUINT64_FORMAT " pushed, %" G_GUINT64_FORMAT
        " forwarded, %" G_GUINT64_FORMAT " late, %" G_GUINT64_FORMAT
        " overflow, %" G_GUINT64_FORMAT " policed", i, push[i].pushed,
        st[i].packets, st[i].drops_late, st[i].drops_overflow,
        st[i].drops_policed);
    fail_unless_equals_uint64 (st[i].packets,
        (guint64) g_atomic_int_get (&forwarded[i]));
    lost[i] = st[i].drops_late + st[i].misses;
  }
  /* the overload is there (a third of everything), and the newer stream
   * pays for it */
  fail_unless (lost[1] > push[1].pushed / 5, "the newer stream lost %"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, lost[1], push[1].pushed);
  fail_unless (lost[0] <= push[0].pushed / 50 && lost[0] * 10 < lost[1],
      "the older stream lost %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
      " (the newer %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT ")", lost[0],
      push[0].pushed, lost[1], push[1].pushed);
  gst_gpustream_scheduler_free (sched);
  busy_ns_per_byte = 0;
}

GST_END_TEST;

GST_START_TEST (test_blocked_forwarder)
{
  GstGpuStreamScheduler *sched = gst_gpustream_scheduler_new (&busy_proc,
      NULL, &block_cb);
  GstGpuStreamSchedStream *st[2];
  guint64 seq[2] = { 0, 0 };
  gint64 end;
  guint i, round;

  memset (&block, 0, sizeof block);
  g_mutex_init (&block.lock);
  g_cond_init (&block.cond);
  block.blocking = TRUE;
  busy_ns_per_byte = 0;
  set_params (sched, 2 * GST_MSECOND, 0, FALSE);
  for (i = 0; i < 2; i++) {
    st[i] = gst_gpustream_scheduler_add_stream (sched, 1500,
        GST_SECOND, 100000000, GUINT_TO_POINTER (i), NULL, NULL);
    fail_unless (st[i] != NULL);
  }
  fail_unless (gst_gpustream_scheduler_start (sched, 2,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));

  /* stream 0's forwarder blocks on its first packet; stream 1 (the other
   * pipeline) must keep flowing meanwhile, cycle after cycle */
  for (round = 0; round < 20; round++) {
    for (i = 0; i < 2; i++)
      if (gst_gpustream_sched_stream_push (st[i],
              GSIZE_TO_POINTER (seq[i]), 100, GST_GPUSTREAM_SCHED_ITEM_PACKET))
        seq[i]++;
    g_usleep (2000);
  }
  end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  while (block_got (1) < seq[1] && g_get_monotonic_time () < end)
    g_usleep (1000);
  fail_unless_equals_int (block_got (1), seq[1]);
  fail_unless_equals_int (block_got (0), 0);

  /* released: everything of stream 0 that was collected comes out, in
   * order, nothing twice */
  g_mutex_lock (&block.lock);
  block.blocking = FALSE;
  g_cond_broadcast (&block.cond);
  g_mutex_unlock (&block.lock);
  end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  while (block_got (0) < seq[0] && g_get_monotonic_time () < end)
    g_usleep (1000);
  fail_unless_equals_int (block_got (0), seq[0]);
  fail_unless_equals_int (block.bad, 0);
  fail_unless (seq[0] > 0);

  gst_gpustream_scheduler_stop (sched);
  for (i = 0; i < 2; i++)
    gst_gpustream_scheduler_remove_stream (sched, st[i]);
  gst_gpustream_scheduler_free (sched);
  g_mutex_clear (&block.lock);
  g_cond_clear (&block.cond);
}

GST_END_TEST;

/* ---- one worker per device ------------------------------------------- */

/* records the thread each scheduler's batches run on */
static void
thread_cpu (gpointer data, GstGpuStreamSchedItem * items, guint n)
{
  g_atomic_pointer_set ((gpointer *) data, g_thread_self ());
}

static const GstGpuStreamProcessor thread_proc = { "thread", thread_cpu,
  NULL
};

static GstGpuStreamScheduler *
device_sched (GThread ** seen, GstClockTime cycle, guint64 capacity,
    guint64 v, guint sink, GstGpuStreamSchedStream ** stream)
{
  GstGpuStreamScheduler *sched =
      gst_gpustream_scheduler_new (&thread_proc, seen, &check_cb);
  GstGpuStreamSchedulerParams p;
  GError *err = NULL;

  set_params (sched, cycle, capacity, TRUE);
  /* bursts of 50 packets of 100 bytes pass the policer */
  gst_gpustream_scheduler_get_params (sched, &p);
  p.police_burst = GST_SECOND;
  gst_gpustream_scheduler_set_params (sched, &p);
  *stream = gst_gpustream_scheduler_add_stream (sched, 1400,
      100 * GST_MSECOND, v, &sinks[sink], NULL, &err);
  fail_unless (*stream != NULL, "%s", err ? err->message : "");
  return sched;
}

/* Packets pushed to s until it has forwarded n more (bounded wait). */
static void
push_through (GstGpuStreamSchedStream * s, Sink * sink, guint n)
{
  guint64 want = sink->next + n, seq = sink->next;
  gint64 end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;

  while (seq < want)
    fail_unless (gst_gpustream_sched_stream_push (s,
            GSIZE_TO_POINTER (seq++), 100, GST_GPUSTREAM_SCHED_ITEM_PACKET));
  while (sink->next < want && g_get_monotonic_time () < end)
    g_usleep (1000);
  fail_unless_equals_uint64 (sink->next, want);
}

/* c's own cycles since its start: about elapsed / its effective cycle */
static void
check_own_cycles (GstGpuStreamScheduler * sched, GstClockTime want_cycle,
    gint64 started_us)
{
  GstGpuStreamSchedulerStats st;
  guint64 elapsed;

  gst_gpustream_scheduler_get_stats (sched, &st);
  elapsed = (g_get_monotonic_time () - started_us) * 1000;
  fail_unless_equals_uint64 (st.effective_cycle, want_cycle);
  fail_unless (st.cycles >= 1);
  /* counted on its own grid, not the device's: never more than elapsed / I
   * (+1 for the first launch at the start, +1 as its grid may sit half a
   * device cycle off the device's) */
  fail_unless (st.cycles <= elapsed / want_cycle + 2,
      "%" G_GUINT64_FORMAT " cycles of %" G_GUINT64_FORMAT " ns in %"
      G_GUINT64_FORMAT " ns", st.cycles, want_cycle, elapsed);
  fail_unless (st.launches <= st.cycles);
}

GST_START_TEST (test_device_worker)
{
  GThread *seen_a = NULL, *seen_b = NULL, *seen_c = NULL, *seen_d = NULL;
  GstGpuStreamScheduler *a, *b, *c, *d;
  GstGpuStreamSchedStream *sa, *sb, *sc, *sd, *extra;
  GError *err = NULL;
  gint64 b_start, c_start, d_start;
  guint i;

  for (i = 0; i < 4; i++)
    memset (&sinks[i], 0, sizeof sinks[i]);
  /* capacity 1 MB/s everywhere: 2000 B per 2 ms device cycle. Two
   * schedulers of I = 2 ms and one of 6 ms share one worker thread on the
   * CPU; the 6 ms one runs every third device cycle. A device cycle may
   * carry 600 kB/s x 2 ms + 100 kB/s x 6 ms = 1800 B: it fits. */
  a = device_sched (&seen_a, 2 * GST_MSECOND, 1000000, 300000, 0, &sa);
  b = device_sched (&seen_b, 2 * GST_MSECOND, 1000000, 300000, 1, &sb);
  c = device_sched (&seen_c, 6 * GST_MSECOND, 1000000, 100000, 2, &sc);
  fail_unless (gst_gpustream_scheduler_start (a, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  b_start = g_get_monotonic_time ();
  fail_unless (gst_gpustream_scheduler_start (b, 2,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  c_start = g_get_monotonic_time ();
  fail_unless (gst_gpustream_scheduler_start (c, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err), "%s", err->message);
  push_through (sa, &sinks[0], 50);
  push_through (sb, &sinks[1], 50);
  push_through (sc, &sinks[2], 50);
  fail_unless (seen_a != NULL && seen_a == seen_b && seen_c == seen_a);
  g_usleep (60000);
  check_own_cycles (b, 2 * GST_MSECOND, b_start);
  check_own_cycles (c, 6 * GST_MSECOND, c_start);

  /* admission counts the device cycle's bytes: 150 kB/s more on b would
   * make 2100 B, though the rates (850 kB/s) are below the capacity; c's
   * batch holds three device cycles of its rate */
  extra = gst_gpustream_scheduler_add_stream (b, 1400, 100 * GST_MSECOND,
      150000, &sinks[3], NULL, &err);
  fail_unless (extra == NULL);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY));
  fail_unless_equals_string (err->message, "stream refused: one device "
      "cycle of 2 ms may carry 2.1e+03 B (each scheduler's rate times its "
      "own cycle), beyond capacity 1e+06 B/s x 2 ms = 2e+03 B; beside it: "
      "thread (cycle 2 ms, 3e+05 B/s), thread (cycle 6 ms, 1e+05 B/s)");
  g_clear_error (&err);
  /* a fourth of I = 1 ms would halve the device cycle: 1000 B of room for
   * 1200 + 600 + 100 B */
  d = device_sched (&seen_d, 1 * GST_MSECOND, 1000000, 100000, 3, &sd);
  fail_if (gst_gpustream_scheduler_start (d, 1, GST_GPUSTREAM_BACKEND_CPU,
          NULL, &err));
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY));
  fail_unless (g_str_has_prefix (err->message, "cannot join the CPU's "
          "worker: one device cycle of 1 ms may carry 1.9e+03 B"), "%s",
      err->message);
  g_clear_error (&err);

  /* a and c leave: b runs on, and d now fits (600 + 100 B of 1000): the
   * device cycle becomes 1 ms, b runs every second one */
  gst_gpustream_scheduler_stop (a);
  gst_gpustream_scheduler_stop (c);
  push_through (sb, &sinks[1], 50);
  d_start = g_get_monotonic_time ();
  fail_unless (gst_gpustream_scheduler_start (d, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err), "%s", err->message);
  push_through (sd, &sinks[3], 50);
  push_through (sb, &sinks[1], 50);
  fail_unless (seen_d == seen_b);
  g_usleep (30000);
  check_own_cycles (d, 1 * GST_MSECOND, d_start);
  check_own_cycles (b, 2 * GST_MSECOND, b_start);
  /* d leaves: the device cycle is b's again */
  gst_gpustream_scheduler_stop (d);
  push_through (sb, &sinks[1], 50);
  check_own_cycles (b, 2 * GST_MSECOND, b_start);
  for (i = 0; i < 4; i++)
    fail_unless_equals_int (sinks[i].bad, 0);

  /* an element that only batches (no declared rate) beside b: a scheduler
   * with a capacity cannot promise anything there, and the refusal says why */
  {
    GThread *seen_e = NULL;
    GstGpuStreamScheduler *e =
        gst_gpustream_scheduler_new (&thread_proc, &seen_e, &check_cb);
    GstGpuStreamSchedStream *se;

    gst_gpustream_scheduler_set_batching (e, 4 * GST_MSECOND);
    se = gst_gpustream_scheduler_add_stream (e, 1400,
        GST_GPUSTREAM_SCHED_BATCHING_DEADLINE (4 * GST_MSECOND),
        GST_GPUSTREAM_SCHED_UNLIMITED_RATE, &sinks[3], NULL, &err);
    fail_unless (se != NULL);
    /* its admission is off: it joins (with a warning) */
    fail_unless (gst_gpustream_scheduler_start (e, 1,
            GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
    extra = gst_gpustream_scheduler_add_stream (b, 1400, 100 * GST_MSECOND,
        1000, &sinks[2], NULL, &err);
    fail_unless (extra == NULL);
    fail_unless (strstr (err->message, "beside it: thread (cycle 4 ms, rate "
            "not declared: an element that only batches)") != NULL, "%s",
        err->message);
    g_clear_error (&err);
    gst_gpustream_scheduler_stop (e);
    gst_gpustream_scheduler_remove_stream (e, se);
    gst_gpustream_scheduler_free (e);
  }

  gst_gpustream_scheduler_stop (b);
  gst_gpustream_scheduler_remove_stream (a, sa);
  gst_gpustream_scheduler_remove_stream (b, sb);
  gst_gpustream_scheduler_remove_stream (c, sc);
  gst_gpustream_scheduler_remove_stream (d, sd);
  gst_gpustream_scheduler_free (a);
  gst_gpustream_scheduler_free (b);
  gst_gpustream_scheduler_free (c);
  gst_gpustream_scheduler_free (d);
}

GST_END_TEST;

/* A worker of a long cycle neither holds up a stop nor a scheduler of a
 * short cycle joining it: both take effect at once, not a cycle later. */
GST_START_TEST (test_device_cycle_changes)
{
  GThread *seen_slow = NULL, *seen_fast = NULL;
  GstGpuStreamScheduler *slow, *fast;
  GstGpuStreamSchedStream *ss, *sf;
  GError *err = NULL;
  gint64 t0, waited;
  guint i;

  for (i = 0; i < 2; i++)
    memset (&sinks[i], 0, sizeof sinks[i]);
  slow = gst_gpustream_scheduler_new (&thread_proc, &seen_slow, &check_cb);
  set_params (slow, 2 * GST_SECOND, 0, TRUE);
  ss = gst_gpustream_scheduler_add_stream (slow, 1400, 10 * GST_SECOND,
      1000, &sinks[0], NULL, &err);
  fail_unless (ss != NULL);
  fast = device_sched (&seen_fast, 2 * GST_MSECOND, 0, 100000, 1, &sf);
  fail_unless (gst_gpustream_scheduler_start (slow, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  g_usleep (20000);
  t0 = g_get_monotonic_time ();
  fail_unless (gst_gpustream_scheduler_start (fast, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  /* within the slow scheduler's first 2 s cycle */
  push_through (sf, &sinks[1], 50);
  waited = g_get_monotonic_time () - t0;
  fail_unless (waited < G_TIME_SPAN_SECOND, "%" G_GINT64_FORMAT " us",
      waited);
  fail_unless (seen_fast != NULL);
  gst_gpustream_scheduler_stop (fast);

  /* alone again, the worker's cycle is 2 s: stopping does not wait for it */
  t0 = g_get_monotonic_time ();
  gst_gpustream_scheduler_stop (slow);
  waited = g_get_monotonic_time () - t0;
  fail_unless (waited < G_TIME_SPAN_SECOND, "%" G_GINT64_FORMAT " us",
      waited);

  gst_gpustream_scheduler_remove_stream (slow, ss);
  gst_gpustream_scheduler_remove_stream (fast, sf);
  gst_gpustream_scheduler_free (slow);
  gst_gpustream_scheduler_free (fast);
}

GST_END_TEST;

/* ---- different cycles on one device: what admission must count -------- */

/* A batch costs 1 us per byte, slept, so the cost holds on a loaded
 * machine: the device does 1 MB/s. */
#define SLEEP_NS_PER_BYTE 1000

static void
sleep_cpu (gpointer data, GstGpuStreamSchedItem * items, guint n)
{
  guint64 bytes = 0;
  guint i;

  for (i = 0; i < n; i++)
    if (items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
      bytes += items[i].size;
  if (bytes)
    g_usleep (bytes * SLEEP_NS_PER_BYTE / 1000);
}

static const GstGpuStreamProcessor sleep_proc = { "sleep", sleep_cpu, NULL };

typedef struct
{
  GstGpuStreamSchedStream *stream;
  guint64 rate;                 /* bytes/s of 1000-byte packets */
  gint64 until;                 /* monotonic us */
  GThread *thread;
} RateProducer;

/* pushes numbered packets at rate (absolute times) until until; a refused
 * push is tried again at the next packet's time, so numbers stay dense */
static gpointer
produce_at_rate (gpointer data)
{
  RateProducer *p = data;
  gint64 start = g_get_monotonic_time (), interval = 1000000000 / p->rate;
  guint64 seq = 0, k;

  for (k = 0;; k++) {
    gint64 due = start + (gint64) k * interval, now = g_get_monotonic_time ();

    if (due >= p->until)
      break;
    if (due > now)
      g_usleep (due - now);
    if (gst_gpustream_sched_stream_push (p->stream, GSIZE_TO_POINTER (seq),
            1000, GST_GPUSTREAM_SCHED_ITEM_PACKET))
      seq++;
  }
  return NULL;
}

/* stops sched and frees it with its one stream */
static void
sched_done (GstGpuStreamScheduler * sched, GstGpuStreamSchedStream * stream)
{
  gst_gpustream_scheduler_stop (sched);
  gst_gpustream_scheduler_remove_stream (sched, stream);
  gst_gpustream_scheduler_free (sched);
}

/* both streams at their rates for duration_us, each from a thread */
static void
produce_two (GstGpuStreamSchedStream * a, guint64 rate_a,
    GstGpuStreamSchedStream * b, guint64 rate_b, gint64 duration_us)
{
  RateProducer pa = { a, rate_a }, pb = { b, rate_b };

  pa.until = pb.until = g_get_monotonic_time () + duration_us;
  pa.thread = g_thread_new ("producer-a", produce_at_rate, &pa);
  pb.thread = g_thread_new ("producer-b", produce_at_rate, &pb);
  g_thread_join (pa.thread);
  g_thread_join (pb.thread);
}

/* fast (I = 10 ms, 200 kB/s, d = 100 ms) and slow (I = 200 ms, rate slow_v,
 * d = 1 s) on the CPU's worker for 1.2 s; the fast stream's misses, or
 * G_MAXUINT64 when slow's start was refused (error set) */
static guint64
mixed_cycles_run (guint64 slow_v, gboolean slow_admission, GError ** error)
{
  GstGpuStreamScheduler *fast, *slow;
  GstGpuStreamSchedStream *sf, *ss;
  GstGpuStreamSchedStreamStats st;
  guint64 misses = G_MAXUINT64;

  memset (&sinks[0], 0, sizeof sinks[0]);
  memset (&sinks[1], 0, sizeof sinks[1]);
  fast = gst_gpustream_scheduler_new (&sleep_proc, NULL, &check_cb);
  slow = gst_gpustream_scheduler_new (&sleep_proc, NULL, &check_cb);
  set_params (fast, 10 * GST_MSECOND, 1000000, TRUE);
  set_params (slow, 200 * GST_MSECOND, 1000000, slow_admission);
  sf = gst_gpustream_scheduler_add_stream (fast, 1000, 100 * GST_MSECOND,
      200000, &sinks[0], NULL, NULL);
  ss = gst_gpustream_scheduler_add_stream (slow, 1000, GST_SECOND, slow_v,
      &sinks[1], NULL, NULL);
  fail_unless (sf != NULL && ss != NULL);
  fail_unless (gst_gpustream_scheduler_start (fast, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));
  if (gst_gpustream_scheduler_start (slow, 1, GST_GPUSTREAM_BACKEND_CPU,
          NULL, error)) {
    produce_two (sf, 200000, ss, slow_v, 1200000);
    /* slow's last batch leaves within 3 x 200 ms */
    g_usleep (700000);
    gst_gpustream_sched_stream_get_stats (sf, &st);
    fail_unless (st.packets > 200, "%" G_GUINT64_FORMAT, st.packets);
    fail_unless_equals_int (sinks[0].bad, 0);
    fail_unless_equals_int (sinks[1].bad, 0);
    misses = st.misses;
    GST_INFO ("slow at %" G_GUINT64_FORMAT " B/s: fast p99 %.1f ms, max %.1f "
        "ms, %" G_GUINT64_FORMAT " misses", slow_v, st.latency_p99 / 1e6,
        st.latency_max / 1e6, misses);
  }
  sched_done (slow, ss);
  sched_done (fast, sf);
  return misses;
}

/* The deadline guarantee (3I + mu) across cycles. Slow at 750 kB/s: the rates (950 kB/s) fit the
 * 1 MB/s device, yet its batch, 150 kB every 200 ms, takes 150 ms, and a
 * device cycle it falls in keeps the fast stream's packets beyond their
 * 100 ms deadline. Admission counts bytes per device cycle and refuses it;
 * forced in (admission off) the fast stream misses. At 30 kB/s (6 kB a
 * batch: 2 + 6 of 10 kB a device cycle) it is admitted and nothing misses. */
GST_START_TEST (test_device_mixed_cycles)
{
  GError *err = NULL;
  guint64 misses;
  guint attempt;

  fail_unless_equals_uint64 (mixed_cycles_run (750000, TRUE, &err),
      G_MAXUINT64);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
          GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY));
  fail_unless (strstr (err->message, "one device cycle of 10 ms may carry "
          "1.52e+05 B (each scheduler's rate times its own cycle), beyond "
          "capacity 1e+06 B/s x 10 ms = 1e+04 B") != NULL, "%s",
      err->message);
  g_clear_error (&err);

  misses = mixed_cycles_run (750000, FALSE, NULL);
  fail_unless (misses > 0 && misses != G_MAXUINT64);

  /* the deadline leaves 70 ms above 3I + mu for a stall of the machine;
   * a run that misses is measured once more */
  for (attempt = 0; attempt < 2; attempt++) {
    misses = mixed_cycles_run (30000, TRUE, NULL);
    if (misses == 0)
      break;
  }
  fail_unless_equals_uint64 (misses, 0);
}

GST_END_TEST;

/* slow's forwarder: its first packet takes 1.2 s downstream */
static void
fwd_stalled (gpointer stream_data, gpointer data, guint16 flags)
{
  Sink *s = stream_data;

  if (s->next == 0)
    g_usleep (1200000);
  fwd_check (stream_data, data, flags);
}

static const GstGpuStreamSchedCallbacks stalled_cb = { fwd_stalled,
  drop_nothing
};

/* A scheduler of a 500 ms cycle whose forwarder is stuck downstream: the
 * worker waits for it at most FORWARDER_PATIENCE (100 ms), not its 500 ms
 * cycle, so the 2 ms scheduler beside it keeps its 300 ms deadline. */
GST_START_TEST (test_device_slow_forwarder)
{
  GThread *seen_fast = NULL, *seen_slow = NULL;
  GstGpuStreamScheduler *fast, *slow;
  GstGpuStreamSchedStream *sf, *ss;
  GstGpuStreamSchedStreamStats st;
  GError *err = NULL;

  memset (&sinks[0], 0, sizeof sinks[0]);
  memset (&sinks[1], 0, sizeof sinks[1]);
  fast = gst_gpustream_scheduler_new (&thread_proc, &seen_fast, &check_cb);
  slow = gst_gpustream_scheduler_new (&thread_proc, &seen_slow, &stalled_cb);
  set_params (fast, 2 * GST_MSECOND, 0, TRUE);
  set_params (slow, 500 * GST_MSECOND, 0, FALSE);
  sf = gst_gpustream_scheduler_add_stream (fast, 1000, 300 * GST_MSECOND,
      1000000, &sinks[0], NULL, &err);
  ss = gst_gpustream_scheduler_add_stream (slow, 1000, 10 * GST_SECOND,
      1000000, &sinks[1], NULL, &err);
  fail_unless (sf != NULL && ss != NULL);
  fail_unless (gst_gpustream_scheduler_start (fast, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  fail_unless (gst_gpustream_scheduler_start (slow, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  produce_two (sf, 100000, ss, 10000, 2000000);
  g_usleep (100000);

  fail_unless (seen_fast != NULL && seen_fast == seen_slow);
  gst_gpustream_sched_stream_get_stats (sf, &st);
  GST_INFO ("fast beside a stalled forwarder: p99 %.1f ms, max %.1f ms, %"
      G_GUINT64_FORMAT " misses", st.latency_p99 / 1e6, st.latency_max / 1e6,
      st.misses);
  fail_unless (st.packets > 150);
  fail_unless_equals_uint64 (st.misses, 0);
  /* slow's batches went on once its forwarder came back */
  fail_unless (sinks[1].next > 10);
  fail_unless_equals_int (sinks[0].bad, 0);
  fail_unless_equals_int (sinks[1].bad, 0);

  sched_done (slow, ss);
  sched_done (fast, sf);
}

GST_END_TEST;

/* ---- split processors: every batch started before any is waited for -- */

/* A batch "runs" on a thread of its own for SPLIT_SLEEP_US (like a copy and
 * kernel queued on a CUDA stream) and marks each packet; finish joins it. */
#define SPLIT_SLEEP_US 3000
#define SPLIT_MARK (G_GUINT64_CONSTANT (1) << 40)

typedef struct
{
  GMutex lock;
  guint lanes_busy;             /* bit per lane in flight */
  guint in_flight, max_in_flight;
  guint lane_clash;             /* a lane given while still in flight */
  guint64 batches;
} SplitLog;

typedef struct
{
  SplitLog *log;
  guint lane;
  GstGpuStreamSchedItem *items;
  guint n;
  GThread *thread;
} SplitJob;

static gpointer
split_run (gpointer data)
{
  SplitJob *job = data;
  guint i;

  g_usleep (SPLIT_SLEEP_US);
  for (i = 0; i < job->n; i++)
    job->items[i].data = GSIZE_TO_POINTER (GPOINTER_TO_SIZE
        (job->items[i].data) + SPLIT_MARK);
  return NULL;
}

static gpointer
split_submit (gpointer proc_data, GstObject * ctx, guint lane,
    GstGpuStreamSchedItem * items, guint n)
{
  SplitJob *job = g_new0 (SplitJob, 1);
  SplitLog *log = proc_data;

  job->log = log;
  job->lane = lane;
  job->items = items;
  job->n = n;
  g_mutex_lock (&log->lock);
  if (lane >= 32 || (log->lanes_busy & (1u << lane)))
    log->lane_clash++;
  else
    log->lanes_busy |= 1u << lane;
  log->in_flight++;
  log->max_in_flight = MAX (log->max_in_flight, log->in_flight);
  g_mutex_unlock (&log->lock);
  job->thread = g_thread_new ("split", split_run, job);
  return job;
}

static void
split_finish (gpointer proc_data, gpointer submitted)
{
  SplitJob *job = submitted;
  SplitLog *log = proc_data;

  g_thread_join (job->thread);
  g_mutex_lock (&log->lock);
  if (job->lane < 32)
    log->lanes_busy &= ~(1u << job->lane);
  log->in_flight--;
  log->batches++;
  g_mutex_unlock (&log->lock);
  g_free (job);
}

static const GstGpuStreamProcessor split_proc = { "split", NULL, NULL,
  split_submit, split_finish
};

/* data is a sequence number plus mark: the processor added it exactly
 * once, and the numbers come in order */
static void
fwd_check_marked (gpointer stream_data, gpointer data, guint16 flags,
    guint64 mark)
{
  guint64 v = GPOINTER_TO_SIZE (data);

  if (v < mark || v >= 2 * mark)
    g_atomic_int_inc (&((Sink *) stream_data)->bad);
  fwd_check (stream_data, GSIZE_TO_POINTER (v - mark), flags);
}

static void
fwd_split (gpointer stream_data, gpointer data, guint16 flags)
{
  fwd_check_marked (stream_data, data, flags, SPLIT_MARK);
}

static const GstGpuStreamSchedCallbacks split_cb = { fwd_split, drop_nothing };

GST_START_TEST (test_split_overlap)
{
  SplitLog log = { 0 };
  GstGpuStreamScheduler *sched[2];
  GstGpuStreamSchedStream *st[4];
  GstGpuStreamSchedulerStats stats;
  GError *err = NULL;
  guint64 seq[4] = { 0 };
  gint64 end;
  guint i, j;

  g_mutex_init (&log.lock);
  for (i = 0; i < 4; i++)
    memset (&sinks[i], 0, sizeof sinks[i]);
  /* two schedulers of two pipelines on the CPU's worker: four batches a
   * cycle, each taking 3 ms on its own thread; run one after the other
   * they would need 12 ms of the 10 ms cycle */
  for (i = 0; i < 2; i++) {
    sched[i] = gst_gpustream_scheduler_new (&split_proc, &log, &split_cb);
    set_params (sched[i], 10 * GST_MSECOND, 0, FALSE);
    for (j = 0; j < 2; j++) {
      st[2 * i + j] = gst_gpustream_scheduler_add_stream (sched[i], 1400,
          100 * GST_MSECOND, 1000000, &sinks[2 * i + j], NULL, &err);
      fail_unless (st[2 * i + j] != NULL);
    }
    fail_unless (gst_gpustream_scheduler_start (sched[i], 2,
            GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  }
  end = g_get_monotonic_time () + 400 * G_TIME_SPAN_MILLISECOND;
  while (g_get_monotonic_time () < end) {
    for (i = 0; i < 4; i++)
      for (j = 0; j < 4; j++)
        if (gst_gpustream_sched_stream_push (st[i], GSIZE_TO_POINTER (seq[i]),
                100, GST_GPUSTREAM_SCHED_ITEM_PACKET))
          seq[i]++;
    g_usleep (1000);
  }
  end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  for (i = 0; i < 4; i++)
    while (sinks[i].next < seq[i] && g_get_monotonic_time () < end)
      g_usleep (1000);

  for (i = 0; i < 4; i++) {
    fail_unless (seq[i] > 100);
    fail_unless_equals_uint64 (sinks[i].next, seq[i]);
    fail_unless_equals_int (sinks[i].bad, 0);
  }
  g_mutex_lock (&log.lock);
  /* all four batches of a cycle were in flight together, each on a lane of
   * its own, and every one was finished */
  fail_unless_equals_int (log.max_in_flight, 4);
  fail_unless_equals_int (log.lane_clash, 0);
  fail_unless_equals_int (log.in_flight, 0);
  /* 40 cycles of 10 ms; a loaded machine runs fewer on time, but at least
   * 10 of all four batches */
  fail_unless (log.batches >= 4 * 10, "%" G_GUINT64_FORMAT " batches",
      log.batches);
  g_mutex_unlock (&log.lock);
  for (i = 0; i < 2; i++) {
    gst_gpustream_scheduler_get_stats (sched[i], &stats);
    GST_INFO ("scheduler %u: worst T_S %.2f ms of a 10 ms cycle", i,
        stats.worst_batch / 1e6);
  }

  for (i = 0; i < 2; i++) {
    gst_gpustream_scheduler_stop (sched[i]);
    for (j = 0; j < 2; j++)
      gst_gpustream_scheduler_remove_stream (sched[i], st[2 * i + j]);
    gst_gpustream_scheduler_free (sched[i]);
  }
  g_mutex_clear (&log.lock);
}

GST_END_TEST;

/* ---- areas: the per-packet half on the collectors' threads -------------- */

#define AREA_MARK (G_GUINT64_CONSTANT (1) << 40)

typedef struct
{
  gint collected;               /* atomic: items collect put in */
  guint cap;
} TestArea;

typedef struct
{
  gint made, released, live;    /* atomic */
  gint wrong_count;             /* atomic: a batch not what its area saw */
  gint no_area;                 /* atomic: collect without an area */
  guint64 batches;
} AreaLog;

static gpointer
area_new (gpointer proc_data, GstObject * ctx, guint cap)
{
  AreaLog *log = proc_data;
  TestArea *a = g_new0 (TestArea, 1);

  a->cap = cap;
  g_atomic_int_inc (&log->made);
  g_atomic_int_inc (&log->live);
  return a;
}

static void
area_free (gpointer proc_data, gpointer area)
{
  AreaLog *log = proc_data;

  g_atomic_int_inc (&log->released);
  g_atomic_int_add (&log->live, -1);
  g_free (area);
}

/* several collector threads at once on one area */
static void
area_collect (gpointer proc_data, gpointer area, GstGpuStreamSchedItem * it)
{
  AreaLog *log = proc_data;
  TestArea *a = area;

  if (!a) {
    g_atomic_int_inc (&log->no_area);
    return;
  }
  g_atomic_int_inc (&a->collected);
  it->data = GSIZE_TO_POINTER (GPOINTER_TO_SIZE (it->data) + AREA_MARK);
  it->flags |= GST_GPUSTREAM_SCHED_ITEM_PROCESSOR;
}

static gpointer
area_submit_plain (gpointer proc_data, GstObject * ctx, guint lane,
    GstGpuStreamSchedItem * items, guint n)
{
  return NULL;
}

/* the area handed over is the one every item of the batch was collected
 * into, and nothing else was */
static gpointer
area_submit (gpointer proc_data, GstObject * ctx, guint lane, gpointer area,
    GstGpuStreamSchedItem * items, guint n)
{
  AreaLog *log = proc_data;
  TestArea *a = area;
  guint i, flagged = 0;

  for (i = 0; i < n; i++)
    flagged += (items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PROCESSOR) != 0;
  if (!a || flagged != n || (guint) g_atomic_int_get (&a->collected) != n ||
      n > a->cap)
    g_atomic_int_inc (&log->wrong_count);
  log->batches++;
  return area;
}

static void
area_finish (gpointer proc_data, gpointer submitted)
{
  if (submitted)
    area_free (proc_data, submitted);
}

static const GstGpuStreamProcessor area_proc = { "area", NULL, NULL,
  area_submit_plain, area_finish, area_new, area_free, area_collect,
  area_submit
};

static void
fwd_area (gpointer stream_data, gpointer data, guint16 flags)
{
  fwd_check_marked (stream_data, data, flags, AREA_MARK);
}

static const GstGpuStreamSchedCallbacks area_cb = { fwd_area, drop_nothing };

typedef struct
{
  GstGpuStreamSchedStream *stream;
  guint64 seq;
  gint64 end;
} AreaFeeder;

static gpointer
area_feed (gpointer data)
{
  AreaFeeder *f = data;

  while (g_get_monotonic_time () < f->end) {
    guint k;

    for (k = 0; k < 8; k++)
      if (gst_gpustream_sched_stream_push (f->stream,
              GSIZE_TO_POINTER (f->seq), 100, GST_GPUSTREAM_SCHED_ITEM_PACKET))
        f->seq++;
    g_usleep (200);
  }
  return NULL;
}

/* A processor with areas: four streams pushed by four threads into two
 * pipelines, so that collectors meet on one area; every batch is handed
 * over with the area its items were collected into, every item is
 * collected once and forwarded in order, and every area made is released
 * (by the processor after finish, or by the scheduler for the batches
 * left at stop). */
GST_START_TEST (test_collect_areas)
{
  AreaLog log = { 0 };
  GstGpuStreamScheduler *sched;
  AreaFeeder feed[4];
  GThread *threads[4];
  GError *err = NULL;
  gint64 end;
  guint i;

  sched = gst_gpustream_scheduler_new (&area_proc, &log, &area_cb);
  set_params (sched, 5 * GST_MSECOND, 0, FALSE);
  for (i = 0; i < 4; i++) {
    memset (&sinks[i], 0, sizeof sinks[i]);
    feed[i].stream = gst_gpustream_scheduler_add_stream (sched, 1400,
        100 * GST_MSECOND, 100000000, &sinks[i], NULL, &err);
    feed[i].seq = 0;
    fail_unless (feed[i].stream != NULL);
  }
  fail_unless (gst_gpustream_scheduler_start (sched, 2,
          GST_GPUSTREAM_BACKEND_CPU, NULL, &err));
  end = g_get_monotonic_time () + 300 * G_TIME_SPAN_MILLISECOND;
  for (i = 0; i < 4; i++) {
    feed[i].end = end;
    threads[i] = g_thread_new ("feed", area_feed, &feed[i]);
  }
  for (i = 0; i < 4; i++)
    g_thread_join (threads[i]);
  end = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  for (i = 0; i < 4; i++)
    while (sinks[i].next < feed[i].seq && g_get_monotonic_time () < end)
      g_usleep (1000);
  for (i = 0; i < 4; i++) {
    fail_unless (feed[i].seq > 100);
    fail_unless_equals_uint64 (sinks[i].next, feed[i].seq);
    fail_unless_equals_int (sinks[i].bad, 0);
  }
  gst_gpustream_scheduler_stop (sched);
  for (i = 0; i < 4; i++)
    gst_gpustream_scheduler_remove_stream (sched, feed[i].stream);
  gst_gpustream_scheduler_free (sched);

  GST_INFO ("%d areas, %" G_GUINT64_FORMAT " batches", log.made, log.batches);
  fail_unless (log.batches > 10);
  fail_unless_equals_int (log.wrong_count, 0);
  fail_unless_equals_int (log.no_area, 0);
  fail_unless_equals_int (log.live, 0);
  fail_unless_equals_int (log.released, log.made);
}

GST_END_TEST;


static Suite *
scheduler_suite (void)
{
  Suite *s = suite_create ("scheduler");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_admission);
  tcase_add_test (tc, test_device_worker);
  tcase_add_test (tc, test_device_cycle_changes);
  tcase_add_test (tc, test_device_mixed_cycles);
  tcase_add_test (tc, test_device_slow_forwarder);
  tcase_add_test (tc, test_split_overlap);
  tcase_add_test (tc, test_collect_areas);
  tcase_add_test (tc, test_swap_stress);
  tcase_add_test (tc, test_policing);
  tcase_add_test (tc, test_calibration);
  tcase_add_test (tc, test_calibration_trial);
  tcase_add_test (tc, test_declared_rate);
  tcase_add_test (tc, test_blocked_forwarder);
  tcase_add_test (tc, test_late_drops_newest_first);
  return s;
}

GST_CHECK_MAIN (scheduler);
