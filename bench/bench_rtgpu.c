/* bench_rtgpu: the real-time scheduler of Kai Zhang, Jiayu Hu, Bei Hua, "A
 * holistic approach to build real-time stream processing system with GPU"
 * (2015) on the CPU backend
 * (`./run bench rtgpu`), the figures of the paper's Fig. 12 and 13 plus the
 * cost of the model.
 *
 * 1. Load and cycle sweep (Fig. 12: latency CDF vs I; Fig. 13: vs traffic).
 *    The scheduler API (gpsscheduler.h) with a stage that does real work:
 *    the library's srtp-protect processor (gpsprocessor.h, gpssrtp.c;
 *    AES_CM_128 + HMAC-SHA1-80) on every packet, one context per stream
 *    (SSRC), one protect batch per pipeline batch. For each cycle I the
 *    capacity B_I is calibrated CALIBRATIONS times by a trial run of the
 *    real worker (gst_gpustream_scheduler_calibrate_trial: the stage alone
 *    as first guess, then the worker with its collectors and forwarders at
 *    candidate loads, the highest load meeting every deadline less the
 *    margin); their spread is printed and the median is used;
 *    then S streams of RTP packets (12 + 7 x 188 bytes, the paper's MPEG-TS
 *    payload) offer 25 ... 200 % of B_I, each from its own thread paced by
 *    absolute times, with admission on (streams beyond B_I are refused, as
 *    in section 4.4) and off (every stream admitted). Latency is measured
 *    per packet from just before the collector's push to the forward
 *    callback; a miss is a latency above the deadline d.
 *    By default the stage runs the kernels' scalar reference
 *    (GSRTP_IMPL_SCALAR, about 60 k packets/s on one core): with the AES-NI
 *    / SHA-NI path (--impl auto, about 1 M packets/s) the packet generators
 *    on a 2-core machine saturate long before the stage does, and the
 *    figure would measure them instead of the scheduler.
 *    --impl gpu: the GPU backend, one protect launch per pipeline batch on
 *    CUDA device 0, each on its own CUDA stream (gpssrtp's submit / finish
 *    per lane: the pipelines' batches overlap), cycles of 2, 5 and 10 ms,
 *    each with a deadline of MAX (10 ms, 4I); the target on an H100 is >= 40
 *    Gbit/s with no misses among admitted streams. Exit 77 without a
 *    device.
 *
 * 2. Overhead of the model per packet, the same packets moved three ways,
 *    CPU time per packet of each thread (CLOCK_THREAD_CPUTIME_ID):
 *    - the scheduler API: gst_gpustream_sched_stream_push in the collector,
 *      the forward callback in the forwarder (processor: none), plus the
 *      worker's swap and hand-off;
 *    - rtgpuqueue processor=copy in a pipeline (pad push in, pad push out);
 *    - a plain GstQueue (pad push in, the queue thread's push out).
 *    Ratios are to the GstQueue of the same run.
 *
 * 3. The scheduler beside the kernel: per cycle, what the stage does alone
 *    (the kernel in a tight loop, the standalone calibration) and what the
 *    scheduler carries with admitted streams meeting every deadline (B_I,
 *    and the carried rate at 100 and 200 % offered load), as ratios.
 *
 * Usage: bench_rtgpu [--json FILE] [--duration SECONDS] [--impl scalar|auto|gpu]
 *                    [--rt-priority N] [--pipelines N] [--calibrations N]
 *                    [--cycle-ms I] [--no-keep-deadlines] [--hog N] [--quick]
 * Prints tables and one JSON object a line (also to --json FILE). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gst/gst.h>
#include <gst/gpustream/gpsscheduler.h>
#include <gst/gpustream/gpsprocessor.h>
#include <gst/gpustream/gpssrtp.h>
#include <srtp/srtp_kernels.h>

#define PKT_SIZE (12 + 7 * 188)
#define MAX_STREAMS 64
#define CPU_DEADLINE (50 * GST_MSECOND)
#define GPU_DEADLINE (10 * GST_MSECOND)
#define MU (100 * GST_USECOND)
#define CALIBRATIONS 5

static FILE *json;
static GsSrtpImpl impl = GSRTP_IMPL_SCALAR;
/* --impl gpu: the stage's batches go to this device */
static GstObject *cuda_ctx;
static GstClockTime deadline = CPU_DEADLINE;
/* collectors (streams) and pipelines of every run: --pipelines N sets both
 * (at least 8 streams, spread over the pipelines); --calibrations N how many
 * trial calibrations a cycle gets (at most CALIBRATIONS) */
static guint n_streams = 8, n_pipelines = 2, n_calibrations = CALIBRATIONS;

#define BACKEND (cuda_ctx ? GST_GPUSTREAM_BACKEND_GPU : GST_GPUSTREAM_BACKEND_CPU)
#define PROCESSOR (&srtp_info->processor)
#define IMPL_NAME (cuda_ctx ? "gpu" : impl == GSRTP_IMPL_SCALAR ? "scalar" : "auto")
static gint rt_priority = 10;
/* the policer's depth, in time of each stream's declared rate: a pacer
 * preempted for up to this long catches up unpoliced */
static GstClockTime police_burst = 50 * GST_MSECOND;
/* --no-keep-deadlines: the scheduler as the paper has it (no late drops,
 * no watch over its cycles), the anchor of the runs with it */
static gboolean keep_deadlines = TRUE;
/* --hog N: N threads at normal priority spinning beside every run */
static guint n_hogs;
static gint hogs_stop;

static gpointer
hog (gpointer data)
{
  volatile guint64 x = 0;

  while (!g_atomic_int_get (&hogs_stop))
    x++;
  return NULL;
}
static const guint8 key30[30] = {
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
  0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d
};

static guint64
thread_cpu (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (guint64) ts.tv_sec * GST_SECOND + ts.tv_nsec;
}

static int
cmp_u64 (const void *a, const void *b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;

  return x < y ? -1 : x > y;
}

/* ---- part 1: SRTP protect through the scheduler ------------------------- */

/* the stage: the library's srtp-protect, one instance per run (its SRTP
 * contexts, one per stream's SSRC); packets are GstBuffers whose DTS is
 * the time of their push (monotonic ns) */
static const GstGpuStreamProcessorInfo *srtp_info;

/* the stage's configuration, also rtgpuqueue's processor-config: key30,
 * AES-CM + HMAC-SHA1-80, the run's implementation */
static GstStructure *
srtp_config_new (void)
{
  GstBuffer *key = gst_buffer_new_memdup (key30, sizeof key30);
  GstStructure *config = gst_structure_new ("srtp-protect",
      "srtp-key", GST_TYPE_BUFFER, key,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "impl", G_TYPE_STRING, impl == GSRTP_IMPL_SCALAR ? "scalar" : "auto",
      NULL);

  gst_buffer_unref (key);
  return config;
}

static gpointer
srtp_stage_new (void)
{
  GstStructure *config = srtp_config_new ();
  GError *err = NULL;
  gpointer st;

  if (!srtp_info && !(srtp_info = gst_gpustream_processor_lookup
          ("srtp-protect", &err)))
    g_error ("%s", err->message);
  if (!(st = srtp_info->setup (config, NULL, &err)))
    g_error ("srtp-protect: %s", err->message);
  gst_structure_free (config);
  return st;
}

static GstBuffer *
pkt_new (guint32 stream, guint16 seq)
{
  GstBuffer *p = gst_buffer_new_allocate (NULL, PKT_SIZE, NULL);
  GstMapInfo m;

  gst_buffer_map (p, &m, GST_MAP_WRITE);
  memset (m.data + 12, 0x47, PKT_SIZE - 12);
  m.data[0] = 0x80;
  m.data[1] = 33;               /* MP2T */
  GST_WRITE_UINT16_BE (m.data + 2, seq);
  GST_WRITE_UINT32_BE (m.data + 4, (guint32) seq * 90);
  GST_WRITE_UINT32_BE (m.data + 8, 0x1000 + stream);
  gst_buffer_unmap (p, &m);
  return p;
}

/* called by the trial's collector threads together: every packet a new
 * (SSRC, sequence number), 65536 per SSRC, so that the stage protects each
 * one (a repeated one would be refused, cheaply) */
static gpointer
cal_make (gpointer user_data, guint32 size)
{
  guint n = (guint) g_atomic_int_add ((gint *) user_data, 1);

  g_assert (size == PKT_SIZE);
  return pkt_new (0x100 + (n >> 16), (guint16) n);
}

typedef struct
{
  guint idx;
  guint64 rate;                 /* bytes/s, declared and sent */
  GstGpuStreamSchedStream *stream;
  GThread *thread;
  guint64 end;
  guint64 pushed, refused;      /* producer */
  guint64 *lat;                 /* forwarder */
  guint64 n_lat, cap_lat, misses;
  gboolean shed_at_end;         /* shed by the worker's watch at the end */
} BStream;

static void
bench_forward (gpointer stream_data, gpointer data, guint16 flags)
{
  BStream *s = stream_data;
  GstBuffer *p = data;
  guint64 lat;

  if (!p)
    return;                     /* warm-up marker */
  lat = gst_gpustream_sched_now () - GST_BUFFER_DTS (p);
  if (s->n_lat < s->cap_lat)
    s->lat[s->n_lat++] = lat;
  if (lat > deadline)
    s->misses++;
  gst_buffer_unref (p);
}

static void
bench_drop (gpointer data)
{
  if (data)
    gst_buffer_unref (data);
}

static const GstGpuStreamSchedCallbacks bench_callbacks = {
  bench_forward, bench_drop
};

static gpointer
produce (gpointer data)
{
  BStream *s = data;
  guint64 interval = GST_SECOND * PKT_SIZE / s->rate;
  guint64 start;
  guint64 seq;

  /* the collectors at the worker's priority too: one preempted by the
   * machine's other load inside malloc holds the allocator's lock that the
   * forwarder's free waits for (priority inversion), a stall of the
   * machine, not of the scheduler */
  if (rt_priority > 0) {
    struct sched_param sp = { 0 };

    sp.sched_priority = rt_priority;
    pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp);
  }
  start = gst_gpustream_sched_now ();

  for (seq = 0;; seq++) {
    guint64 due = start + seq * interval, now = gst_gpustream_sched_now ();
    GstBuffer *p;

    if (due >= s->end)
      break;
    /* sleep only when half a millisecond ahead: a thread per stream waking
     * for every packet would cost more CPU than the stage on 2 cores */
    if (due > now + 500 * GST_USECOND)
      g_usleep ((due - now) / 1000);
    p = pkt_new (s->idx, (guint16) seq);
    GST_BUFFER_DTS (p) = gst_gpustream_sched_now ();
    if (gst_gpustream_sched_stream_push (s->stream, p, PKT_SIZE,
            GST_GPUSTREAM_SCHED_ITEM_PACKET)) {
      s->pushed++;
    } else {
      s->refused++;
      gst_buffer_unref (p);
    }
  }
  return NULL;
}

typedef struct
{
  guint64 capacity[CALIBRATIONS];       /* B_I of each calibration */
  guint64 standalone[CALIBRATIONS];     /* the stage alone (first guess) */
  guint64 met[CALIBRATIONS];            /* the highest load met */
  gdouble margin;
  gdouble seconds;                      /* one calibration, on average */
} CalSet;

static guint64
median_of (const guint64 * v, guint n)
{
  guint64 s[CALIBRATIONS];

  memcpy (s, v, n * sizeof *s);
  qsort (s, n, sizeof *s, cmp_u64);
  return s[n / 2];
}

static guint64
min_of (const guint64 * v, guint n)
{
  guint64 m = v[0];
  guint i;

  for (i = 1; i < n; i++)
    m = MIN (m, v[i]);
  return m;
}

static guint64
max_of (const guint64 * v, guint n)
{
  guint64 m = v[0];
  guint i;

  for (i = 1; i < n; i++)
    m = MAX (m, v[i]);
  return m;
}

/* CALIBRATIONS trial calibrations of the worker at cycle, the streams as
 * in the runs (n_streams collectors, n_pipelines pipelines, the deadline);
 * returns the median B_I */
static guint64
calibrate (GstClockTime cycle, CalSet * set)
{
  GstGpuStreamTrialParams trial;
  gint seq = 0;
  guint r;
  gint64 t0 = g_get_monotonic_time ();

  gst_gpustream_trial_params_init (&trial);
  trial.n_pipelines = n_pipelines;
  trial.n_streams = n_streams;
  trial.deadline = deadline;
  trial.mu = MU;
  trial.rt_priority = rt_priority;
  for (r = 0; r < n_calibrations; r++) {
    GstGpuStreamCalibration cal = { 0 };
    GError *err = NULL;
    gpointer st = srtp_stage_new ();

    if (!gst_gpustream_scheduler_calibrate_trial (PROCESSOR, st, BACKEND,
            cuda_ctx, cal_make, bench_drop, &seq, cycle, PKT_SIZE, &trial,
            &cal, &err))
      g_error ("calibration: %s", err->message);
    srtp_info->teardown (st);
    set->capacity[r] = cal.capacity;
    set->standalone[r] = cal.standalone;
    set->met[r] = cal.trial_met;
    set->margin = cal.margin;
    gst_gpustream_calibration_clear (&cal);
  }
  set->seconds = (g_get_monotonic_time () - t0) / 1e6 / n_calibrations;
  return median_of (set->capacity, n_calibrations);
}

static void
cdf_json (GString * line, guint64 * lat, guint64 n)
{
  /* 0, 1, ..., 100 % and 99.9 %, in ms */
  static const gdouble q[] = { 0.999 };
  guint i;

  g_string_append (line, "[");
  for (i = 0; i <= 100; i++) {
    guint64 idx = n ? MIN (n - 1, (guint64) ((gdouble) i / 100 * (n - 1))) : 0;
    g_string_append_printf (line, "%s%.4f", i ? "," : "",
        n ? lat[idx] / 1e6 : 0.0);
  }
  g_string_append_printf (line, "],\"p99_9_ms\":%.4f",
      n ? lat[MIN (n - 1, (guint64) (q[0] * (n - 1)))] / 1e6 : 0.0);
}

/* One run: returns the rate carried (bytes/s); *misses_out: the misses of
 * the admitted streams. */
static gdouble
run_load (GstClockTime cycle, guint64 capacity, guint load_pct,
    gboolean admission, gdouble duration, guint64 * misses_out)
{
  gpointer st;
  GstGpuStreamScheduler *sched;
  GstGpuStreamSchedulerParams params = { 0 };
  GstGpuStreamSchedulerStats ss;
  BStream streams[MAX_STREAMS];
  guint64 rate = capacity * load_pct / 100 / n_streams;
  guint64 all_n = 0, misses = 0, pushed = 0, refused = 0, overflow = 0;
  guint64 policed = 0, late = 0, shed = 0, capped = 0, *all;
  /* what the streams still carried at the end lost: delivered late or
   * dropped late (the promise is about them) */
  guint64 kept_lost = 0;
  guint kept = 0;
  GThread *hogs[16] = { NULL };
  guint i, j, admitted = 0;
  GError *err = NULL;
  GString *line;
  gdouble carried;

  st = srtp_stage_new ();
  sched = gst_gpustream_scheduler_new (PROCESSOR, st, &bench_callbacks);
  params.cycle = cycle;
  params.capacity = capacity;
  params.mu = MU;
  params.admission = admission;
  params.police_burst = police_burst;
  params.rt_priority = rt_priority;
  params.keep_deadlines = keep_deadlines;
  gst_gpustream_scheduler_set_params (sched, &params);

  memset (streams, 0, sizeof streams);
  for (i = 0; i < n_streams; i++) {
    BStream *s = &streams[i];

    s->idx = i;
    s->rate = rate;
    s->stream = gst_gpustream_scheduler_add_stream (sched, PKT_SIZE,
        deadline, rate, s, NULL, &err);
    if (!s->stream) {
      g_clear_error (&err);     /* refused: this stream never sends */
      continue;
    }
    admitted++;
    s->cap_lat = (guint64) (duration * rate / PKT_SIZE * 1.2) + 1000;
    s->lat = g_new (guint64, s->cap_lat);
  }
  if (!gst_gpustream_scheduler_start (sched, n_pipelines, BACKEND, cuda_ctx,
          &err))
    g_error ("start: %s", err->message);

  /* warm-up: markers (no data, not packets) grow every batch of both
   * pipelines to the run's size, so no packet meets a batch still at its
   * initial size */
  for (j = 0; j < 4; j++) {
    guint per = (guint) MIN (65536, 4 * rate * n_streams / PKT_SIZE *
        cycle / GST_SECOND + 64);
    for (i = 0; i < n_streams; i++) {
      guint m;
      if (!streams[i].stream)
        continue;
      for (m = 0; m < per; m++)
        gst_gpustream_sched_stream_push (streams[i].stream, NULL, 0, 0);
    }
    g_usleep (cycle / 1000 + 1000);
  }

  g_atomic_int_set (&hogs_stop, 0);
  for (i = 0; i < MIN (n_hogs, G_N_ELEMENTS (hogs)); i++)
    hogs[i] = g_thread_new ("hog", hog, NULL);
  for (i = 0; i < n_streams; i++) {
    if (!streams[i].stream)
      continue;
    streams[i].end = gst_gpustream_sched_now () +
        (guint64) (duration * GST_SECOND);
    streams[i].thread = g_thread_new ("producer", produce, &streams[i]);
  }
  for (i = 0; i < n_streams; i++)
    if (streams[i].thread)
      g_thread_join (streams[i].thread);
  /* admitted packets leave within 3I + mu; overloaded runs keep a backlog:
   * wait for it (bounded), it is part of the figure */
  for (j = 0; j < 200; j++) {
    guint64 fwd = 0, push = 0;
    for (i = 0; i < n_streams; i++) {
      fwd += __atomic_load_n (&streams[i].n_lat, __ATOMIC_RELAXED);
      push += streams[i].pushed;
    }
    if (fwd >= push && j > 0)
      break;
    g_usleep (3 * cycle / 1000 + 20000);
  }
  g_atomic_int_set (&hogs_stop, 1);
  for (i = 0; i < G_N_ELEMENTS (hogs); i++)
    if (hogs[i])
      g_thread_join (hogs[i]);
  gst_gpustream_scheduler_get_stats (sched, &ss);
  for (i = 0; i < n_streams; i++) {
    GstGpuStreamSchedStreamStats st_s;
    if (!streams[i].stream)
      continue;
    gst_gpustream_sched_stream_get_stats (streams[i].stream, &st_s);
    overflow += st_s.drops_overflow;
    policed += st_s.drops_policed;
    late += st_s.drops_late;
    shed += st_s.drops_shed;
    capped += st_s.drops_capped;
    streams[i].shed_at_end = st_s.shed;
    if (!st_s.shed)
      kept_lost += st_s.drops_late;
  }
  gst_gpustream_scheduler_stop (sched);

  all = g_new (guint64, 1);
  for (i = 0; i < n_streams; i++) {
    BStream *s = &streams[i];
    if (!s->stream)
      continue;
    all = g_renew (guint64, all, all_n + s->n_lat + 1);
    memcpy (all + all_n, s->lat, s->n_lat * sizeof (guint64));
    all_n += s->n_lat;
    misses += s->misses;
    if (!s->shed_at_end) {
      kept++;
      kept_lost += s->misses;
    }
    pushed += s->pushed;
    refused += s->refused;
    qsort (s->lat, s->n_lat, sizeof (guint64), cmp_u64);
  }
  qsort (all, all_n, sizeof (guint64), cmp_u64);
  carried = (gdouble) pushed * PKT_SIZE / duration;

  line = g_string_new (NULL);
  g_string_append_printf (line, "{\"bench\":\"rtgpu\",\"op\":\"load\","
      "\"stage\":\"srtp-protect aes-128-icm/hmac-sha1-80\",\"impl\":\"%s\","
      "\"device\":\"%s\",\"cycle_ms\":%.3f,\"capacity_Bps\":%" G_GUINT64_FORMAT
      ",\"load_pct\":%u,\"admission\":%s,\"deadline_ms\":%.1f,"
      "\"packet_bytes\":%u,\"duration_s\":%.2f,\"streams_offered\":%u,"
      "\"streams_admitted\":%u,\"rate_per_stream_Bps\":%" G_GUINT64_FORMAT
      ",\"carried_Bps\":%.0f,\"packets\":%" G_GUINT64_FORMAT ",\"misses\":%"
      G_GUINT64_FORMAT ",\"drops_policed\":%" G_GUINT64_FORMAT
      ",\"drops_overflow\":%" G_GUINT64_FORMAT ",\"cycles\":%" G_GUINT64_FORMAT
      ",\"late_launches\":%" G_GUINT64_FORMAT ",\"worst_batch_ms\":%.3f,"
      "\"rt_priority\":%d,\"police_burst_ms\":%.1f,\"keep_deadlines\":%s,"
      "\"hogs\":%u,"
      "\"drops_late\":%" G_GUINT64_FORMAT ",\"drops_shed\":%"
      G_GUINT64_FORMAT ",\"drops_capped\":%" G_GUINT64_FORMAT
      ",\"capacity_lowered\":%" G_GUINT64_FORMAT ",\"capacity_end_Bps\":%"
      G_GUINT64_FORMAT ",\"streams_shed\":%u,\"overruns\":%"
      G_GUINT64_FORMAT ",\"worker_realtime\":%s,\"streams_kept\":%u,"
      "\"kept_lost\":%" G_GUINT64_FORMAT ",",
      IMPL_NAME, cuda_ctx ? "gpu" : "cpu", cycle / 1e6, capacity,
      load_pct, admission ? "true" : "false", deadline / 1e6, PKT_SIZE,
      duration, n_streams, admitted, rate, carried, all_n, misses, policed,
      overflow, ss.cycles, ss.late_launches, ss.worst_batch / 1e6,
      rt_priority, police_burst / 1e6, keep_deadlines ? "true" : "false",
      n_hogs, late, shed,
      capped, ss.capacity_lowered, ss.capacity_effective, ss.streams_shed,
      ss.overruns, ss.realtime ? "true" : "false", kept, kept_lost);
  g_string_append_printf (line, "\"lat_p50_ms\":%.3f,\"lat_p99_ms\":%.3f,"
      "\"lat_max_ms\":%.3f,\"cdf_ms\":",
      all_n ? all[all_n / 2] / 1e6 : 0.0,
      all_n ? all[MIN (all_n - 1, all_n * 99 / 100)] / 1e6 : 0.0,
      all_n ? all[all_n - 1] / 1e6 : 0.0);
  cdf_json (line, all, all_n);
  g_string_append (line, ",\"per_stream\":[");
  for (i = 0, j = 0; i < n_streams; i++) {
    BStream *s = &streams[i];
    if (!s->stream)
      continue;
    g_string_append_printf (line, "%s{\"stream\":%u,\"packets\":%"
        G_GUINT64_FORMAT ",\"misses\":%" G_GUINT64_FORMAT ",\"cdf_ms\":",
        j++ ? "," : "", i, s->n_lat, s->misses);
    cdf_json (line, s->lat, s->n_lat);
    g_string_append (line, "}");
  }
  g_string_append (line, "]}");
  if (json) {
    fprintf (json, "%s\n", line->str);
    fflush (json);
  }
  g_string_free (line, TRUE);

  printf ("%6.1f %5u%% %5s %4u/%u %10.1f %9" G_GUINT64_FORMAT " %8.2f %8.2f "
      "%8.2f %8" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT
      " %7" G_GUINT64_FORMAT
      " %6" G_GUINT64_FORMAT " %4u/%-7" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT
      " %7.2f\n", cycle / 1e6, load_pct, admission ? "on" : "off", admitted,
      n_streams, carried / 1e6, all_n,
      all_n ? all[all_n / 2] / 1e6 : 0.0,
      all_n ? all[MIN (all_n - 1, all_n * 99 / 100)] / 1e6 : 0.0,
      all_n ? all[all_n - 1] / 1e6 : 0.0, misses, kept_lost, ss.late_launches,
      overflow + policed, late, ss.streams_shed, shed, capped,
      ss.worst_batch / 1e6);
  fflush (stdout);

  for (i = 0; i < n_streams; i++) {
    if (streams[i].stream)
      gst_gpustream_scheduler_remove_stream (sched, streams[i].stream);
    g_free (streams[i].lat);
  }
  gst_gpustream_scheduler_free (sched);
  srtp_info->teardown (st);
  g_free (all);
  *misses_out = misses;
  return carried;
}

/* ---- part 2: overhead per packet ----------------------------------------- */

#define OVH_BURST 200           /* packets per 1 ms tick: 200 k packets/s */
#define OVH_CYCLE GST_MSECOND

typedef struct
{
  guint64 first_idx, last_idx;  /* measured: offsets first_idx..last_idx */
  guint64 cpu_first, cpu_last;  /* consumer thread CPU at those packets */
  guint64 seen;
  /* the worker (scheduler API only) */
  guint64 wcpu_first, wcpu_last;
  gboolean wfirst;
} OvhCount;

static void
ovh_consume (OvhCount * c, GstBuffer * buf)
{
  guint64 off = GST_BUFFER_OFFSET (buf);

  if (off == c->first_idx)
    c->cpu_first = thread_cpu ();
  else if (off == c->last_idx)
    c->cpu_last = thread_cpu ();
  if (off >= c->first_idx && off <= c->last_idx)
    c->seen++;
  gst_buffer_unref (buf);
}

static void
ovh_forward (gpointer stream_data, gpointer data, guint16 flags)
{
  if (data)
    ovh_consume (stream_data, data);
}

static void
ovh_drop (gpointer data)
{
  if (data)
    gst_buffer_unref (data);
}

static const GstGpuStreamSchedCallbacks ovh_callbacks = {
  ovh_forward, ovh_drop
};

static void
ovh_process (gpointer user_data, GstGpuStreamSchedItem * items, guint n)
{
  OvhCount *c = user_data;
  guint64 t = thread_cpu ();

  /* no stage: the worker's own cost is the swap and the hand-off */
  if (!c->wfirst) {
    c->wfirst = TRUE;
    c->wcpu_first = t;
  }
  c->wcpu_last = t;
}

static const GstGpuStreamProcessor ovh_processor = {
  "none", ovh_process, NULL
};

typedef gboolean (*PushFunc) (gpointer target, GstBuffer * buf);

/* Pushes bufs[0..n) in bursts of OVH_BURST a millisecond; returns the
 * collector's CPU time for the pushes of [first, n). */
static guint64
ovh_feed (PushFunc push, gpointer target, GstBuffer ** bufs, guint n,
    guint first)
{
  guint64 start = gst_gpustream_sched_now (), cpu = 0;
  guint i = 0, tick = 0;

  while (i < n) {
    guint64 due = start + (guint64) tick * GST_MSECOND, now, t0;
    guint end = MIN (n, i + OVH_BURST);

    now = gst_gpustream_sched_now ();
    if (due > now)
      g_usleep ((due - now) / 1000);
    t0 = thread_cpu ();
    for (; i < end; i++)
      push (target, gst_buffer_ref (bufs[i]));
    if (end > first)
      cpu += thread_cpu () - t0;
    tick++;
  }
  return cpu;
}

static gboolean
push_sched (gpointer target, GstBuffer * buf)
{
  if (gst_gpustream_sched_stream_push (target, buf, PKT_SIZE,
          GST_GPUSTREAM_SCHED_ITEM_PACKET))
    return TRUE;
  gst_buffer_unref (buf);
  return FALSE;
}

static gboolean
push_pad (gpointer target, GstBuffer * buf)
{
  return gst_pad_push (target, buf) == GST_FLOW_OK;
}

static GstFlowReturn
ovh_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  ovh_consume (gst_pad_get_element_private (pad), buf);
  return GST_FLOW_OK;
}

static void
wait_seen (OvhCount * c, guint64 want)
{
  guint i;

  for (i = 0; i < 500 && __atomic_load_n (&c->seen, __ATOMIC_ACQUIRE) < want;
      i++)
    g_usleep (10000);
  g_usleep (20000);
}

typedef struct
{
  gdouble collector, consumer, worker;  /* ns per packet */
  guint64 lost;
} OvhResult;

static OvhResult
ovh_sched_api (GstBuffer ** bufs, guint n, guint warm)
{
  OvhCount c = { 0 };
  GstGpuStreamScheduler *sched = gst_gpustream_scheduler_new (&ovh_processor,
      &c, &ovh_callbacks);
  GstGpuStreamSchedulerParams params = { 0 };
  GstGpuStreamSchedStream *s;
  OvhResult r = { 0 };
  guint64 cpu;

  c.first_idx = warm;
  c.last_idx = n - 1;
  params.cycle = OVH_CYCLE;
  params.mu = MU;
  params.admission = TRUE;
  params.police_burst = GST_SECOND;
  gst_gpustream_scheduler_set_params (sched, &params);
  s = gst_gpustream_scheduler_add_stream (sched, PKT_SIZE, 100 * GST_MSECOND,
      G_GUINT64_CONSTANT (1000000000), &c, NULL, NULL);
  g_assert (s);
  g_assert (gst_gpustream_scheduler_start (sched, 1,
          GST_GPUSTREAM_BACKEND_CPU, NULL, NULL));
  cpu = ovh_feed (push_sched, s, bufs, n, warm);
  wait_seen (&c, n - warm);
  r.collector = (gdouble) cpu / (n - warm);
  r.consumer = (gdouble) (c.cpu_last - c.cpu_first) / (n - warm - 1);
  /* the worker over the whole run (warm-up included) */
  r.worker = (gdouble) (c.wcpu_last - c.wcpu_first) / n;
  r.lost = (n - warm) - c.seen;
  gst_gpustream_scheduler_stop (sched);
  gst_gpustream_scheduler_remove_stream (sched, s);
  gst_gpustream_scheduler_free (sched);
  return r;
}

/* An element between a source pad and a sink pad of ours (chain functions
 * given, priv their element-private data), PLAYING, with stream-start, the
 * caps (taken) and a time segment sent. harness_open returns FALSE when a
 * pad is missing, will not link or the element will not play;
 * harness_close takes it down either way. */
typedef struct
{
  GstPad *src, *sink, *esink, *esrc;
} Harness;

static gboolean
harness_open (Harness * h, GstElement * e, gboolean request,
    const gchar * sinkname, const gchar * srcname, GstPadChainFunction chain,
    GstPadChainListFunction chain_list, gpointer priv, GstCaps * caps)
{
  GstSegment seg;

  h->src = gst_pad_new ("src", GST_PAD_SRC);
  h->sink = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_element_private (h->sink, priv);
  gst_pad_set_chain_function (h->sink, chain);
  if (chain_list)
    gst_pad_set_chain_list_function (h->sink, chain_list);
  gst_pad_set_active (h->sink, TRUE);
  gst_pad_set_active (h->src, TRUE);
  h->esink = request ? gst_element_request_pad_simple (e, sinkname) :
      gst_element_get_static_pad (e, sinkname);
  h->esrc = gst_element_get_static_pad (e, srcname);
  if (!h->esink || !h->esrc ||
      gst_pad_link (h->src, h->esink) != GST_PAD_LINK_OK ||
      gst_pad_link (h->esrc, h->sink) != GST_PAD_LINK_OK ||
      gst_element_set_state (e, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    gst_caps_unref (caps);
    return FALSE;
  }
  gst_segment_init (&seg, GST_FORMAT_TIME);
  gst_pad_push_event (h->src, gst_event_new_stream_start ("bench"));
  gst_pad_push_event (h->src, gst_event_new_caps (caps));
  gst_pad_push_event (h->src, gst_event_new_segment (&seg));
  return TRUE;
}

static void
harness_close (Harness * h, GstElement * e, gboolean request)
{
  gst_element_set_state (e, GST_STATE_NULL);
  gst_pad_set_active (h->src, FALSE);
  gst_pad_set_active (h->sink, FALSE);
  if (h->esink) {
    if (request)
      gst_element_release_request_pad (e, h->esink);
    gst_object_unref (h->esink);
  }
  gst_clear_object (&h->esrc);
  gst_object_unref (h->src);
  gst_object_unref (h->sink);
}

/* element (rtgpuqueue or queue) between a source pad and a sink pad of
 * ours */
static OvhResult
ovh_element (GstElement * e, gboolean request, const gchar * sinkname,
    const gchar * srcname, GstBuffer ** bufs, guint n, guint warm)
{
  OvhCount c = { 0 };
  OvhResult r = { 0 };
  Harness h = { 0 };
  guint64 cpu;

  c.first_idx = warm;
  c.last_idx = n - 1;
  g_assert (harness_open (&h, e, request, sinkname, srcname, ovh_chain, NULL,
          &c, gst_caps_new_empty_simple ("application/x-rtp")));

  cpu = ovh_feed (push_pad, h.src, bufs, n, warm);
  wait_seen (&c, n - warm);
  r.collector = (gdouble) cpu / (n - warm);
  r.consumer = (gdouble) (c.cpu_last - c.cpu_first) / (n - warm - 1);
  r.worker = -1;
  r.lost = (n - warm) - c.seen;

  harness_close (&h, e, request);
  return r;
}

static void
emit_ovh (const gchar * path, OvhResult r, OvhResult anchor)
{
  GString *line = g_string_new (NULL);
  gdouble total = r.collector + r.consumer;
  gdouble atotal = anchor.collector + anchor.consumer;

  gchar worker[32] = "-";

  if (r.worker >= 0)
    g_snprintf (worker, sizeof worker, "%.0f", r.worker);
  printf ("%-34s %10.0f %10.0f %10s %10.0f %7.2f %6" G_GUINT64_FORMAT "\n",
      path, r.collector, r.consumer, worker, total, total / atotal, r.lost);
  g_string_append_printf (line, "{\"bench\":\"rtgpu\",\"op\":\"overhead\","
      "\"path\":\"%s\",\"device\":\"cpu\",\"packet_bytes\":%u,"
      "\"rate_pps\":%u,\"collector_ns\":%.1f,\"forward_ns\":%.1f,"
      "\"worker_ns\":%.1f,\"ns_per_packet\":%.1f,\"anchor\":\"GstQueue\","
      "\"anchor_ns_per_packet\":%.1f,\"ratio\":%.3f,\"lost\":%"
      G_GUINT64_FORMAT "}", path, PKT_SIZE, OVH_BURST * 1000, r.collector,
      r.consumer, r.worker, total, atotal, total / atotal, r.lost);
  if (json) {
    fprintf (json, "%s\n", line->str);
    fflush (json);
  }
  g_string_free (line, TRUE);
}

static OvhResult
ovh_min (OvhResult a, OvhResult b)
{
  /* the quietest repetition: noise only ever adds CPU time */
  return (a.collector + a.consumer <= b.collector + b.consumer) ? a : b;
}

static void
run_overhead (guint n, guint warm, guint reps)
{
  GstBuffer **bufs = g_new (GstBuffer *, n);
  OvhResult api = { G_MAXDOUBLE / 4, G_MAXDOUBLE / 4, 0, 0 };
  OvhResult elem = api, queue = api;
  guint i, r;

  for (i = 0; i < n; i++) {
    bufs[i] = gst_buffer_new_allocate (NULL, PKT_SIZE, NULL);
    GST_BUFFER_OFFSET (bufs[i]) = i;
  }
  for (r = 0; r < reps; r++) {
    GstElement *q = gst_element_factory_make ("rtgpuqueue", NULL);
    GstElement *gq = gst_element_factory_make ("queue", NULL);

    if (!q)
      g_error ("no rtgpuqueue: run through ./run bench rtgpu (plugin path)");
    g_object_set (q, "processor", 0 /* copy */ , "backend", 1 /* cpu */ ,
        "cycle", (guint64) OVH_CYCLE, "pipelines", 1,
        "default-max-packet-size", PKT_SIZE,
        "default-max-rate", G_GUINT64_CONSTANT (1000000000),
        "police-burst", (guint64) GST_SECOND, NULL);
    g_object_set (gq, "max-size-buffers", 0, "max-size-bytes", 0,
        "max-size-time", (guint64) 0, NULL);
    api = ovh_min (api, ovh_sched_api (bufs, n, warm));
    elem = ovh_min (elem, ovh_element (q, TRUE, "sink_%u", "src_0", bufs, n,
            warm));
    queue = ovh_min (queue, ovh_element (gq, FALSE, "sink", "src", bufs, n,
            warm));
    gst_object_unref (q);
    gst_object_unref (gq);
  }
  printf ("\nOverhead per packet, CPU time (ns) of each thread, %u packets "
      "of %u B at %u k packets/s, best of %u:\n", n - warm, PKT_SIZE,
      OVH_BURST, reps);
  printf ("%-34s %10s %10s %10s %10s %7s %6s\n", "path", "collector",
      "forward", "worker", "total", "x queue", "lost");
  emit_ovh ("scheduler API (push + forward)", api, queue);
  emit_ovh ("rtgpuqueue processor=copy", elem, queue);
  emit_ovh ("GstQueue (anchor)", queue, queue);
  for (i = 0; i < n; i++)
    gst_buffer_unref (bufs[i]);
  g_free (bufs);
}

/* The anchor of part 3: the stage alone, batches of KERNEL_BATCH packets
 * protected back to back on this thread (fresh packets made outside the
 * timing; CPU time of the thread on the CPU backend), the best of 3 passes
 * of about 0.3 s; bytes/s. */
#define KERNEL_BATCH 1024
static gdouble
kernel_rate (void)
{
  GstGpuStreamSchedItem *items = g_new0 (GstGpuStreamSchedItem, KERNEL_BATCH);
  gpointer st = srtp_stage_new ();
  gdouble best = 0;
  guint pass, i;
  gint seq = 0;

  for (pass = 0; pass < 3; pass++) {
    guint64 busy = 0, bytes = 0;

    while (busy < 300 * GST_MSECOND) {
      guint64 t0;

      for (i = 0; i < KERNEL_BATCH; i++) {
        items[i].data = cal_make (&seq, PKT_SIZE);
        items[i].size = PKT_SIZE;
        items[i].flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
      }
      /* CPU time of this thread: a preemption by the machine's other
       * load is not the kernel's */
      t0 = cuda_ctx ? gst_gpustream_sched_now () : thread_cpu ();
      if (PROCESSOR->submit)
        PROCESSOR->finish (st, PROCESSOR->submit (st, cuda_ctx, 0, items,
                KERNEL_BATCH));
      else
        PROCESSOR->process_cpu (st, items, KERNEL_BATCH);
      busy += (cuda_ctx ? gst_gpustream_sched_now () : thread_cpu ()) - t0;
      bytes += (guint64) KERNEL_BATCH * PKT_SIZE;
      for (i = 0; i < KERNEL_BATCH; i++)
        bench_drop (items[i].data);
    }
    best = MAX (best, (gdouble) bytes * GST_SECOND / busy);
  }
  srtp_info->teardown (st);
  g_free (items);
  return best;
}

/* Part 3: per cycle, the scheduler's figures beside the stage alone (the
 * kernel in a tight loop, kernel_rate) of the same run, as ratios. */
static void
emit_vs_kernel (const guint * cycles, guint n, const guint64 * caps,
    const gdouble * c100, const guint64 * m100, const gdouble * c200,
    const guint64 * m200)
{
  gdouble kernel = kernel_rate ();
  guint c;

  printf ("\nThe scheduler beside the kernel (SRTP protect alone, %u-packet "
      "batches back to back on one thread, best of 3), MB/s; B_I is the "
      "median of %u calibrations:\n", KERNEL_BATCH, n_calibrations);
  printf ("%6s %10s %10s %7s %12s %7s %7s %12s %7s %7s\n", "I ms", "kernel",
      "B_I", "x kern", "@100% MB/s", "x kern", "misses", "@200% MB/s",
      "x kern", "misses");
  for (c = 0; c < n; c++) {
    if (!caps[c])               /* a cycle not run (--cycle-ms) */
      continue;
    GString *line = g_string_new (NULL);

    printf ("%6u %10.1f %10.1f %7.2f %12.1f %7.2f %7" G_GUINT64_FORMAT
        " %12.1f %7.2f %7" G_GUINT64_FORMAT "\n", cycles[c], kernel / 1e6,
        caps[c] / 1e6, caps[c] / kernel, c100[c] / 1e6, c100[c] / kernel,
        m100[c], c200[c] / 1e6, c200[c] / kernel, m200[c]);
    g_string_append_printf (line, "{\"bench\":\"rtgpu\",\"op\":"
        "\"vs-kernel\",\"impl\":\"%s\",\"device\":\"%s\",\"cycle_ms\":%u,"
        "\"anchor\":\"srtp-protect alone (back-to-back batches)\","
        "\"anchor_Bps\":%.0f,\"capacity_Bps\":%" G_GUINT64_FORMAT
        ",\"capacity_ratio\":%.3f,\"carried_100_Bps\":%.0f,"
        "\"carried_100_ratio\":%.3f,\"misses_100\":%" G_GUINT64_FORMAT
        ",\"carried_200_Bps\":%.0f,\"carried_200_ratio\":%.3f,"
        "\"misses_200\":%" G_GUINT64_FORMAT "}", IMPL_NAME,
        cuda_ctx ? "gpu" : "cpu", cycles[c], kernel, caps[c],
        caps[c] / kernel, c100[c], c100[c] / kernel, m100[c], c200[c],
        c200[c] / kernel, m200[c]);
    if (json) {
      fprintf (json, "%s\n", line->str);
      fflush (json);
    }
    g_string_free (line, TRUE);
  }
}

/* ---- part 4: the elements beside the kernel ------------------------------
 * rtgpuqueue processor=srtp-protect and gpusrtpenc (cycle I, and cycle 0:
 * each buffer protected as it comes) carrying one stream of fresh
 * PKT_SIZE-byte RTP packets pushed by one thread as fast as the element
 * takes them (a new GstBuffer each, stamped with its push time), for
 * EL_SECONDS; their carried MB/s beside the stage alone (kernel_rate) with
 * the same SRTP implementation, as ratios. Both elements run SRTP's
 * default (fastest) implementation on the CPU, so the kernel does too. */
#define EL_SECONDS 1.0
#define EL_WARM (200 * GST_MSECOND)
#define EL_LAT_CAP (4u << 20)

typedef struct
{
  guint64 t_warm;               /* packets pushed before it: warm-up */
  guint64 seen, bytes, t_first, t_last, bound, late;    /* t_: out */
  guint64 *lat;
  guint n_lat;
} ElCount;

static GstFlowReturn
el_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  ElCount *c = gst_pad_get_element_private (pad);
  guint64 now = gst_gpustream_sched_now ();

  if (GST_BUFFER_DTS (buf) >= c->t_warm) {
    /* the rate out, from the first packet out: a backlog built while
     * pushing drains after the pushes end and is counted */
    if (!c->seen)
      c->t_first = now;
    c->seen++;
    c->bytes += PKT_SIZE;       /* plain bytes, as the kernel counts */
    c->t_last = now;
    if (now - GST_BUFFER_DTS (buf) > c->bound)
      c->late++;
    if (c->n_lat < EL_LAT_CAP)
      c->lat[c->n_lat++] = now - GST_BUFFER_DTS (buf);
  }
  gst_buffer_unref (buf);
  return GST_FLOW_OK;
}

static GstFlowReturn
el_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  guint i, n = gst_buffer_list_length (list);

  for (i = 0; i < n; i++)
    el_chain (pad, parent, gst_buffer_ref (gst_buffer_list_get (list, i)));
  gst_buffer_list_unref (list);
  return GST_FLOW_OK;
}

typedef struct
{
  gdouble Bps;                  /* carried after the warm-up */
  guint64 pushed, seen, late;
  gdouble p50_ms, p99_ms, max_ms, bound_ms;
  gboolean ok;
} ElResult;

/* rate: bytes/s offered in 1 ms ticks; 0: as fast as the element takes
 * them. late: packets out later than bound after their push */
static ElResult
el_run (GstElement * e, const gchar * sinkname, const gchar * srcname,
    guint64 rate, guint64 bound)
{
  ElCount c = { 0 };
  ElResult r = { 0 };
  Harness h = { 0 };
  guint64 start, end, seen = 0, pushed_warm = 0, pushed = 0;
  guint16 seq = 0;
  guint i;

  c.lat = g_new (guint64, EL_LAT_CAP);
  c.bound = bound;
  if (!harness_open (&h, e, TRUE, sinkname, srcname, el_chain, el_chain_list,
          &c, gst_caps_new_simple ("application/x-rtp", "ssrc", G_TYPE_UINT,
              0x1000, NULL)))
    goto out;

  start = gst_gpustream_sched_now ();
  c.t_warm = start + EL_WARM;
  end = start + (guint64) (EL_SECONDS * GST_SECOND);
  for (;;) {
    GstBuffer *p;
    guint64 now = gst_gpustream_sched_now ();

    if (now >= end)
      break;
    if (rate && pushed * PKT_SIZE >= (now - start) * (gdouble) rate / GST_SECOND) {
      /* ahead of the rate: to the next 1 ms tick */
      g_usleep (1000 - ((now - start) / 1000) % 1000);
      continue;
    }
    p = pkt_new (0, seq++);
    GST_BUFFER_DTS (p) = now;
    if (now >= c.t_warm)
      pushed_warm++;
    pushed++;
    if (gst_pad_push (h.src, p) != GST_FLOW_OK)
      goto out;
  }
  /* until nothing more comes out (what is still queued drains) */
  for (i = 0; i < 100; i++) {
    g_usleep (20000);
    if (__atomic_load_n (&c.seen, __ATOMIC_ACQUIRE) == seen && i > 2)
      break;
    seen = __atomic_load_n (&c.seen, __ATOMIC_ACQUIRE);
  }
  r.pushed = pushed_warm;
  r.seen = c.seen;
  r.late = c.late;
  r.bound_ms = bound / 1e6;
  if (c.seen > 1 && c.t_last > c.t_first) {
    qsort (c.lat, c.n_lat, sizeof *c.lat, cmp_u64);
    r.Bps = (gdouble) c.bytes * GST_SECOND / (c.t_last - c.t_first);
    r.p50_ms = c.lat[c.n_lat / 2] / 1e6;
    r.p99_ms = c.lat[(c.n_lat * 99) / 100] / 1e6;
    r.max_ms = c.lat[c.n_lat - 1] / 1e6;
    r.ok = TRUE;
  }
out:
  harness_close (&h, e, TRUE);
  g_free (c.lat);
  return r;
}

static void
emit_element (const gchar * name, guint cycle_ms, guint64 rate, ElResult r,
    gdouble kernel)
{
  GString *line = g_string_new (NULL);
  gchar cyc[16] = "-", offered[16] = "max";

  if (cycle_ms)
    g_snprintf (cyc, sizeof cyc, "%u", cycle_ms);
  if (rate)
    g_snprintf (offered, sizeof offered, "%.1f", rate / 1e6);
  if (!r.ok) {
    printf ("%-34s %5s %8s %10s\n", name, cyc, offered, "failed");
    g_string_free (line, TRUE);
    return;
  }
  printf ("%-34s %5s %8s %10.1f %7.2f %8" G_GUINT64_FORMAT " %8.2f %8.2f "
      "%8.2f %8" G_GUINT64_FORMAT "\n", name, cyc, offered, r.Bps / 1e6,
      r.Bps / kernel, r.pushed - MIN (r.pushed, r.seen), r.p50_ms, r.p99_ms,
      r.max_ms, r.late);
  g_string_append_printf (line, "{\"bench\":\"rtgpu\",\"op\":\"element\","
      "\"element\":\"%s\",\"device\":\"%s\",\"cycle_ms\":%u,"
      "\"packet_bytes\":%u,\"offered_Bps\":%" G_GUINT64_FORMAT
      ",\"carried_Bps\":%.0f,\"anchor\":\"srtp-protect alone (%s)\","
      "\"anchor_Bps\":%.0f,"
      "\"ratio\":%.3f,\"pushed\":%" G_GUINT64_FORMAT ",\"out\":%"
      G_GUINT64_FORMAT ",\"lat_p50_ms\":%.3f,\"lat_p99_ms\":%.3f,"
      "\"lat_max_ms\":%.3f,\"bound_ms\":%.3f,\"late\":%" G_GUINT64_FORMAT
      "}", name, cuda_ctx ? "gpu" : "cpu", cycle_ms, PKT_SIZE, rate, r.Bps,
      IMPL_NAME, kernel, r.Bps / kernel, r.pushed, r.seen, r.p50_ms,
      r.p99_ms, r.max_ms, r.bound_ms, r.late);
  if (json) {
    fprintf (json, "%s\n", line->str);
    fflush (json);
  }
  g_string_free (line, TRUE);
}

/* rtgpuqueue: admission on, capacity = B_I, the stream declared at that
 * rate, the stage in the run's implementation; gpusrtpenc (which always
 * runs the fastest one): max-rate = B_I when it is given */
static GstElement *
el_make (const gchar * factory, guint64 cycle, guint64 capacity)
{
  GstElement *e = gst_element_factory_make (factory, NULL);

  if (!e) {
    printf ("%-34s (no such element here: the plugins are not on the "
        "GStreamer path)\n", factory);
    return NULL;
  }
  gst_util_set_object_arg (G_OBJECT (e), "backend", cuda_ctx ? "gpu" : "cpu");
  if (!strcmp (factory, "rtgpuqueue")) {
    GstStructure *config = srtp_config_new ();

    gst_util_set_object_arg (G_OBJECT (e), "processor", "srtp-protect");
    g_object_set (e, "processor-config", config, "cycle", cycle,
        "pipelines", 1, "admission", TRUE, "capacity", capacity,
        "default-max-packet-size", PKT_SIZE,
        "default-deadline", MAX (deadline, 4 * cycle),
        "default-max-rate", capacity,
        "police-burst", (guint64) (50 * GST_MSECOND), NULL);
    gst_structure_free (config);
  } else {
    GstBuffer *key = gst_buffer_new_memdup (key30, sizeof key30);

    g_object_set (e, "key", key, "cycle", cycle, NULL);
    if (capacity)               /* declared, counted by the admission */
      g_object_set (e, "max-rate", capacity, NULL);
    gst_buffer_unref (key);
  }
  return e;
}

/* caps: the run's B_I per cycle (0: that cycle not run). Both elements
 * run SRTP in its fastest implementation on the CPU, so a run of the
 * scalar stage first calibrates B_I again (once a cycle) for that one */
static void
run_elements (const guint * cycles, const guint64 * caps, guint n)
{
  GsSrtpImpl run_impl = impl;
  guint run_calibrations = n_calibrations;
  gdouble kernel, kernel_after;
  guint c;

  impl = cuda_ctx ? impl : GSRTP_IMPL_AUTO;
  /* measured again after the elements' runs and printed beside: the
   * machine's other load moves one measurement by up to 1.7x, and the
   * reader sees how far it moved during the table */
  kernel = kernel_rate ();
  printf ("\nThe elements beside the kernel: SRTP protect (aes-128-icm/"
      "hmac-sha1-80, %s) of one stream of %u-byte packets pushed by one "
      "thread, %.1f s each (the first %.1f s left out): offered at B_I (the "
      "stream's declared rate; rtgpuqueue's capacity, admission on), and "
      "gpusrtpenc also as fast as it takes them. Kernel: srtp-protect "
      "alone, %u-packet batches back to back, %.1f MB/s. MB/s; late: out "
      "later than 3 x I + 0.1 ms after the push:\n", IMPL_NAME, PKT_SIZE,
      EL_SECONDS, EL_WARM / 1e9, KERNEL_BATCH, kernel / 1e6);
  for (c = 0; c < n; c++) {
    GstClockTime cycle = cycles[c] * GST_MSECOND, bound = 3 * cycle + MU;
    guint64 cap = caps[c];
    GstElement *e;

    if (!caps[c])
      continue;
    if (impl != run_impl) {
      CalSet set = { 0 };

      n_calibrations = 1;
      cap = calibrate (cycle, &set);
      n_calibrations = run_calibrations;
      printf ("I = %u ms: B_I %.1f MB/s (one trial calibration with this "
          "implementation)\n", cycles[c], cap / 1e6);
    }
    printf ("%-34s %5s %8s %10s %7s %8s %8s %8s %8s %8s\n", "element",
        "I ms", "offered", "MB/s", "x kern", "lost", "p50 ms", "p99 ms",
        "max ms", "late");
    if ((e = el_make ("rtgpuqueue", cycle, cap))) {
      emit_element ("rtgpuqueue processor=srtp-protect", cycles[c], cap,
          el_run (e, "sink_%u", "src_0", cap, bound), kernel);
      gst_object_unref (e);
    }
    if ((e = el_make ("gpusrtpenc", cycle, cap))) {
      emit_element ("gpusrtpenc cycle=I", cycles[c], cap,
          el_run (e, "rtp_sink_%u", "rtp_src_0", cap, bound), kernel);
      gst_object_unref (e);
    }
    if ((e = el_make ("gpusrtpenc", cycle, 0))) {
      emit_element ("gpusrtpenc cycle=I", cycles[c], 0,
          el_run (e, "rtp_sink_%u", "rtp_src_0", 0, bound), kernel);
      gst_object_unref (e);
    }
  }
  {
    GstElement *e = el_make ("gpusrtpenc", 0, 0);

    if (e) {
      emit_element ("gpusrtpenc cycle=0 (as it comes)", 0, 0,
          el_run (e, "rtp_sink_%u", "rtp_src_0", 0, G_MAXUINT64), kernel);
      gst_object_unref (e);
    }
  }
  kernel_after = kernel_rate ();
  printf ("The kernel again after the elements: %.1f MB/s (%.2f of the "
      "figure the ratios use)\n", kernel_after / 1e6, kernel_after / kernel);
  impl = run_impl;
}

int
main (int argc, char **argv)
{
  static const guint loads[] = { 25, 50, 100, 150, 200 };
  static const guint cpu_cycles_ms[] = { 2, 5, 10 };
  /* GPU: the cycles of the CPU runs, each with a deadline of
   * MAX (10 ms, 4 I) (admission needs 3I + mu below it) */
  static const guint gpu_cycles_ms[] = { 2, 5, 10 };
  const guint *cycles = cpu_cycles_ms;
  guint n_cycles = G_N_ELEMENTS (cpu_cycles_ms);
  gdouble duration = 3.0;
  gboolean quick = FALSE, use_gpu = FALSE;
  guint only_cycle_ms = 0;      /* --cycle-ms: that cycle alone */
  guint only_load = 0;          /* --load: that offered load alone (%) */
  guint i, c, l, a, r;
  CalSet sets[3] = { 0 };
  guint64 caps[3] = { 0 }, misses100[3] = { 0 }, misses200[3] = { 0 };
  gdouble carried100[3] = { 0 }, carried200[3] = { 0 };

  gst_init (&argc, &argv);
  for (i = 1; i < (guint) argc; i++) {
    if (!strcmp (argv[i], "--json") && i + 1 < (guint) argc) {
      json = fopen (argv[++i], "w");
      if (!json) {
        perror (argv[i]);
        return 1;
      }
    } else if (!strcmp (argv[i], "--duration") && i + 1 < (guint) argc) {
      duration = g_ascii_strtod (argv[++i], NULL);
    } else if (!strcmp (argv[i], "--impl") && i + 1 < (guint) argc) {
      const gchar *v = argv[++i];

      use_gpu = !strcmp (v, "gpu");
      impl = !strcmp (v, "scalar") ? GSRTP_IMPL_SCALAR : GSRTP_IMPL_AUTO;
    } else if (!strcmp (argv[i], "--rt-priority") && i + 1 < (guint) argc) {
      rt_priority = atoi (argv[++i]);
    } else if (!strcmp (argv[i], "--pipelines") && i + 1 < (guint) argc) {
      gint v = atoi (argv[++i]);   /* CLAMP evaluates its argument twice */

      n_pipelines = CLAMP (v, 1, MAX_STREAMS);
      n_streams = MAX (8, n_pipelines);
    } else if (!strcmp (argv[i], "--cycle-ms") && i + 1 < (guint) argc) {
      only_cycle_ms = atoi (argv[++i]);
    } else if (!strcmp (argv[i], "--load") && i + 1 < (guint) argc) {
      only_load = atoi (argv[++i]);
    } else if (!strcmp (argv[i], "--calibrations") && i + 1 < (guint) argc) {
      gint v = atoi (argv[++i]);

      n_calibrations = CLAMP (v, 1, CALIBRATIONS);
    } else if (!strcmp (argv[i], "--no-keep-deadlines")) {
      keep_deadlines = FALSE;
    } else if (!strcmp (argv[i], "--police-burst-ms") && i + 1 < (guint) argc) {
      police_burst = (GstClockTime) (g_ascii_strtod (argv[++i], NULL) *
          GST_MSECOND);
    } else if (!strcmp (argv[i], "--hog") && i + 1 < (guint) argc) {
      n_hogs = (guint) atoi (argv[++i]);
    } else if (!strcmp (argv[i], "--quick")) {
      quick = TRUE;
      duration = 1.0;
    } else {
      fprintf (stderr, "usage: %s [--json FILE] [--duration S] "
          "[--impl scalar|auto|gpu] [--rt-priority N] [--pipelines N] "
          "[--calibrations N] [--cycle-ms I] [--load PCT] [--no-keep-deadlines] "
          "[--police-burst-ms MS] [--hog N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (use_gpu) {
    GError *err = NULL;

    if (!(cuda_ctx = gst_gpustream_cuda_context_new (0, &err))) {
      printf ("SKIP: --impl gpu: %s\n", err->message);
      g_clear_error (&err);
      return 77;
    }
    deadline = GPU_DEADLINE;
    cycles = gpu_cycles_ms;
    n_cycles = G_N_ELEMENTS (gpu_cycles_ms);
  }
  /* the paper's worker owns a core; SCHED_FIFO is the nearest thing on a
   * shared machine. Where it is denied the figures say so (rt_priority 0) */
  if (rt_priority > 0) {
    struct sched_param sp = { 0 }, old = { 0 };
    int policy;

    pthread_getschedparam (pthread_self (), &policy, &old);
    sp.sched_priority = rt_priority;
    if (pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp) != 0)
      rt_priority = 0;
    else
      pthread_setschedparam (pthread_self (), policy, &old);
  }

  printf ("rtgpu: %u streams of %u-byte RTP packets, SRTP protect "
      "(aes-128-icm/hmac-sha1-80, %s) in the worker, %u pipelines, "
      "deadline %s, policer depth %.0f ms of each stream's rate (0: one "
      "cycle), %.1f s a run, worker and forwarders %s, %s, %u CPU hog(s) "
      "beside each run\n",
      n_streams, PKT_SIZE, cuda_ctx ? "one GPU launch per pipeline batch" :
      impl == GSRTP_IMPL_SCALAR ? "scalar reference" : "AES-NI/SHA-NI path",
      n_pipelines, cuda_ctx ? "MAX (10 ms, 4I)" : "50 ms", police_burst / 1e6,
      duration,
      rt_priority > 0 ?
      "SCHED_FIFO" : "at normal priority (SCHED_FIFO denied or not asked)",
      keep_deadlines ? "keep-deadlines (late drops, admission follows the "
      "worker's cycles)" : "without keep-deadlines (the paper's scheduler)",
      n_hogs);
  for (c = 0; c < n_cycles; c++) {
    GstClockTime cycle = cycles[c] * GST_MSECOND;
    CalSet *set = &sets[c];
    guint64 cap;

    if (only_cycle_ms && cycles[c] != only_cycle_ms)
      continue;

    if (cuda_ctx)
      deadline = MAX (GPU_DEADLINE, 4 * cycle);
    cap = calibrate (cycle, set);
    GString *line = g_string_new (NULL);

    caps[c] = cap;
    g_string_append_printf (line, "{\"bench\":\"rtgpu\",\"op\":\"calibrate\","
        "\"method\":\"trial\",\"impl\":\"%s\",\"device\":\"%s\","
        "\"cycle_ms\":%u,\"packet_bytes\":%u,\"deadline_ms\":%.1f,"
        "\"margin\":%.2f,\"capacity_Bps\":%" G_GUINT64_FORMAT
        ",\"capacity_pps\":%" G_GUINT64_FORMAT ",\"capacity_min_Bps\":%"
        G_GUINT64_FORMAT ",\"capacity_max_Bps\":%" G_GUINT64_FORMAT
        ",\"calibrations\":%u,\"seconds_each\":%.1f,\"runs\":[",
        IMPL_NAME, cuda_ctx ? "gpu" : "cpu", cycles[c], PKT_SIZE,
        deadline / 1e6, set->margin, cap, cap / PKT_SIZE,
        min_of (set->capacity, n_calibrations),
        max_of (set->capacity, n_calibrations), n_calibrations, set->seconds);
    for (r = 0; r < n_calibrations; r++)
      g_string_append_printf (line, "%s{\"capacity_Bps\":%" G_GUINT64_FORMAT
          ",\"met_Bps\":%" G_GUINT64_FORMAT ",\"standalone_Bps\":%"
          G_GUINT64_FORMAT "}", r ? "," : "", set->capacity[r], set->met[r],
          set->standalone[r]);
    g_string_append (line, "]}");
    printf ("\ncalibrated I = %u ms by trial run, %u times (%.1f s each): "
        "B_I min %.1f / median %.1f / max %.1f MB/s (spread %.1f %% of the "
        "median); the stage alone (first guess) median %.1f MB/s; margin "
        "%.0f %%\n", cycles[c], n_calibrations, set->seconds,
        min_of (set->capacity, n_calibrations) / 1e6, cap / 1e6,
        max_of (set->capacity, n_calibrations) / 1e6,
        100.0 * (max_of (set->capacity, n_calibrations) -
            min_of (set->capacity, n_calibrations)) / MAX (cap, 1),
        median_of (set->standalone, n_calibrations) / 1e6, set->margin * 100);
    if (json) {
      fprintf (json, "%s\n", line->str);
      fflush (json);
    }
    g_string_free (line, TRUE);
    printf ("misses: packets of admitted streams out after d; keptL: of the "
        "streams still carried at the end (not shed), packets out after d or "
        "dropped late; lateL: launches after their P_k; policed: policer and "
        "overflow drops; late: dropped late; shed: streams shed at the end / "
        "packets dropped while shed; capped: over a cycle's budget (admission "
        "off)\n");
    printf ("%6s %6s %5s %6s %10s %9s %8s %8s %8s %8s %6s %6s %7s %6s %12s "
        "%7s %7s\n", "I ms", "load", "adm", "strms", "MB/s", "packets",
        "p50 ms", "p99 ms", "max ms", "misses", "keptL", "lateL", "policed",
        "late",
        "shed strm/pk", "capped", "T_S ms");
    for (l = 0; l < G_N_ELEMENTS (loads); l++) {
      if ((quick && loads[l] < 100) || (only_load && loads[l] != only_load))
        continue;
      for (a = 0; a < 2; a++) {
        guint64 misses;
        gdouble carried = run_load (cycle, cap, loads[l], a == 0, duration,
            &misses);

        if (a == 0 && loads[l] == 100) {
          carried100[c] = carried;
          misses100[c] = misses;
        } else if (a == 0 && loads[l] == 200) {
          carried200[c] = carried;
          misses200[c] = misses;
        }
      }
    }
  }
  emit_vs_kernel (cycles, n_cycles, caps, carried100, misses100, carried200,
      misses200);
  run_elements (cycles, caps, n_cycles);
  /* the model's own cost: the same on either backend */
  if (!cuda_ctx)
    run_overhead (quick ? 60000 : 220000, 20000, quick ? 1 : 3);
  gst_clear_object (&cuda_ctx);
  if (json)
    fclose (json);
  return 0;
}
