/* gpsscheduler.c: the GPU-centric model of Kai Zhang, Jiayu Hu, Bei Hua, "A
 * holistic approach to build real-time stream processing system with GPU"
 * (2015), sections 4 and 5.
 *
 * Buffer swapping, and why the collector path takes no lock
 * ---------------------------------------------------------
 * Each pipeline owns three batches (a, b, c of Table 2). collect_idx says
 * which one collectors fill. A collector:
 *
 *   1. loads collect_idx = i and announces itself: writers[i]++;
 *   2. re-checks collect_idx == i (the paper's opportunistic re-check); if
 *      the worker swapped in between, it withdraws (writers[i]--) and starts
 *      again on the new batch: nothing was written, so nothing is duplicated;
 *   3. reserves a slot with reserved[i]++ (several streams share a pipeline),
 *      writes the item, and leaves: writers[i]--.
 *
 * The worker stores the new collect_idx, then waits for writers[old] to
 * reach 0. All of these are sequentially consistent atomics, so either the
 * collector's re-check sees the new index (and retries), or the worker sees
 * the collector's announcement (and waits for its write): no item is lost.
 * The wait is a few instructions long unless a collector is preempted inside
 * step 3, in which case the worker yields. Per stream, one thread collects,
 * so slots, and batches, keep each stream's order.
 *
 * The worker never copies: it takes the collector's batch, gives the
 * collector the batch the forwarder released, processes, and hands the
 * processed batch to the forwarder (waiting for it to release the previous
 * one, Table 2 step 3). Only that hand-off, once per cycle and pipeline,
 * takes a mutex. A batch is grown only while nobody else can see it (when it
 * is the worker's spare), so collectors never see a reallocation.
 *
 * Timing: the worker waits until P_k = P_0 + k I, an absolute time of
 * CLOCK_MONOTONIC (a timed wait on its condition, so that a stop wakes it
 * at once): the launch times do not drift with the processing time. A
 * launch a whole cycle late or more is counted and the schedule re-aligned
 * to the grid of P_0.
 *
 * One worker per device
 * ---------------------
 * The worker belongs to the device, not to the scheduler: every scheduler
 * started on the same device (the same GstCudaContext, or the CPU) joins one
 * DeviceWorker, whose thread runs, at each P_k, the cycle of all of them in
 * three phases: swap every pipeline's batch out; start every batch (a
 * processor with submit / finish only queues its work, each batch on its
 * own lane: a CUDA stream, so the copies and kernels of the pipelines
 * overlap; others run the batch there and then); finish every started batch
 * and hand each to its forwarder. So one thread launches everything the
 * device does per cycle, as in the paper.
 *
 * The paper has one I per device. Schedulers asking for different cycles
 * share the worker all the same: its cycle (the device cycle) is the
 * shortest of theirs, and a scheduler of cycle I runs every floor(I / device
 * cycle) device cycles, so its own cycle is at most I and the bounds it
 * declared (3I + mu) still hold. Admission then counts bytes per device
 * cycle: any device cycle may carry every scheduler's batch at once, a
 * scheduler's batch holding up to rate x its own cycle, and all of it must
 * fit what the device does in one device cycle (capacity x device cycle).
 * With one cycle that is the paper's sum of rates <= B_I. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "gpsscheduler.h"

GST_DEBUG_CATEGORY_STATIC (gps_sched_debug);
#define GST_CAT_DEFAULT gps_sched_debug

#define INITIAL_BATCH 256
/* how long the worker waits for a forwarder before it leaves that
 * pipeline's batch pending (ns) */
#define FORWARDER_PATIENCE (100 * GST_MSECOND)
#define MAX_BATCH (1u << 20)
/* latency histogram: 8 linear sub-buckets per power of two (12.5 %) */
#define HIST_SUB 8
#define HIST_BUCKETS (HIST_SUB + 61 * HIST_SUB)
/* keep_deadlines: the worker's watch over its own cycles. A window is
 * WATCH_WINDOW of cycles on time (at least WATCH_MIN_CYCLES), or that much
 * time of cycles that overran (at least WATCH_SHORT_CYCLES). Overloaded:
 * half of its cycles or more ended after the next launch (a backlog grows;
 * a few overruns are the preemptions of a worker without SCHED_FIFO, which
 * its deadline's slack absorbs), a packet was dropped late, or one left
 * after half the tightest deadline, or (admission off, whose promise is
 * the p99 of 3 I + mu that the capped cycles keep) more than 1 % of its
 * packets left after 3 I + mu. Two windows overloaded in a row (one
 * is a stall, which the late drops cover): the capacity goes down by the
 * measured occupancy (to keep the window's p90 at OCC_TARGET), at least by
 * LOWER_MIN and at most by half; the window after a change is not judged.
 * Quiet: no overrun, nothing late, latency under a quarter of the deadline,
 * p90 under OCC_QUIET, with the streams sending: after QUIET_WINDOWS of
 * them the capacity goes up by a tenth of the parameter, towards it. */
#define WATCH_WINDOW (100 * GST_MSECOND)
#define WATCH_MIN_CYCLES 16
#define WATCH_SHORT_CYCLES 4
#define WATCH_MAX_CYCLES 2048
#define OCC_TARGET 0.75
#define OCC_QUIET 0.6
#define LOWER_MIN 0.8
#define QUIET_WINDOWS 20
/* the cost per packet keep_deadlines plans with: the second lowest of the
 * last COST_CYCLES cycles, not the last one: a cycle the worker was
 * preempted in costs several times more per packet, and planning the next
 * with it dropped packets that would have left in time */
#define COST_CYCLES 8

typedef struct _Pipeline Pipeline;

struct _GstGpuStreamSchedStream
{
  gint refcount;
  GstGpuStreamScheduler *sched;
  guint32 w;
  GstClockTime d;
  guint64 v;
  gpointer data;
  GDestroyNotify destroy;

  gint removed;                 /* atomic */
  gint epoch;                   /* atomic, flush epoch */
  Pipeline *pl;                 /* set while running, before any push */
  guint pl_index;

  /* policer: token bucket in bytes; touched by the collecting thread only */
  gdouble tb_tokens;
  gdouble tb_depth;
  guint64 tb_last;

  gint shed;                    /* atomic: shed by the worker's watch */
  guint64 seq;                  /* admission order (under sched lock) */
  /* cycle_mark_late, worker only: its packets in this cycle that may be
   * dropped, the earliest deadline among them, how many to drop */
  guint cyc_n, cyc_drop;
  guint64 cyc_min;

  /* stats: atomics, written by the collector (drops) and forwarder */
  guint64 packets, bytes, drops_policed, drops_overflow, misses, lat_max;
  guint64 drops_late, drops_shed, drops_capped;
  guint64 hist[HIST_BUCKETS];
};

typedef struct
{
  GstGpuStreamSchedItem *items;
  guint cap;
  gint reserved;                /* atomic: slots handed out */
  gint writers;                 /* atomic: collectors inside */
  gpointer area;                /* the processor's (area_new), for collect */
} Batch;

/* The worker of a device (see the top of the file). */
typedef struct
{
  GstObject *cuda_context;      /* NULL: the CPU (a ref otherwise) */
  GstClockTime cycle;           /* the device cycle: the shortest of scheds' */
  gint rt_priority;             /* of the scheduler that made it */
  gint realtime;                /* atomic: the thread got SCHED_FIFO */
  GThread *thread;
  GMutex lock;                  /* everything below, and the schedulers'
                                 * every, due_at and effective_cycle */
  GCond cond;                   /* in_cycle ended; stop; cycle changed */
  GPtrArray *scheds;            /* attached, in attach order */
  gboolean in_cycle;            /* the thread runs a cycle of them now */
  gboolean stop;
} DeviceWorker;

/* every DeviceWorker; lock order: workers_lock, then a scheduler's lock,
 * then a worker's lock */
static GMutex workers_lock;
static GList *workers;

struct _Pipeline
{
  GstGpuStreamScheduler *sched;
  guint index;
  Batch bufs[3];
  gint collect_idx;             /* atomic */
  gint spare;                   /* worker only */
  gint work_idx;                /* worker only */
  guint work_n;
  guint work_reserved;
  gboolean pending;             /* worker only: work_idx processed, waiting
                                 * for the forwarder to take it */
  gpointer submitted;           /* worker only: what submit returned */
  gboolean held;                /* worker only: its forwarder held a batch
                                 * (blocked downstream) since the last
                                 * launch */
  gpointer work_area;           /* worker only: work_idx's area, taken out
                                 * of it at the swap */
  guint64 rate;                 /* sum of v of its streams, under sched lock */

  /* forwarder hand-off */
  GThread *thread;
  GMutex lock;
  GCond cond;
  gint fwd_idx;
  guint fwd_n;
  gboolean fwd_done;
  gboolean stop;
};

struct _GstGpuStreamScheduler
{
  GstGpuStreamProcessor processor;
  gpointer proc_data;
  GstGpuStreamSchedCallbacks cb;

  GMutex lock;                  /* params, streams, admission, stats */
  GstGpuStreamSchedulerParams params;
  GList *streams;
  guint64 beta;
  /* atomic: a batching scheduler's rate for all its streams together
   * (gst_gpustream_scheduler_declare_rate); 0: none declared */
  guint64 declared;
  guint64 admitted, refused;
  guint64 gone_packets, gone_policed, gone_overflow, gone_misses;
  guint64 gone_late, gone_shed, gone_capped;
  guint64 cycles, launches, late;
  GstClockTime worst_batch, last_batch;

  /* keep_deadlines (under lock unless said) */
  GstGpuStreamSchedAdmissionFunc admission_func;
  gpointer admission_data;
  guint64 cap_eff;              /* atomic: the capacity admission uses */
  guint64 cycle_budget;         /* atomic: bytes a cycle takes (admission
                                 * off), 0: no cap */
  guint64 cycle_bytes;          /* atomic: taken in this cycle */
  guint64 lowered, raised, sheds, overruns;
  guint n_shed;
  gdouble occ_p50, occ_max;
  guint64 win_lat_max;          /* atomic: the forwarders' worst latency in
                                 * the window */
  guint64 win_late_mark;        /* drops_late of the streams at its start */
  guint64 win_over_mark, win_pkt_mark;  /* packets past 3 I + mu, and all,
                                         * forwarded before it */
  gdouble *win;                 /* the window's occupancies */
  guint win_n, win_len, win_overruns, quiet_windows, strikes;
  gboolean settling;            /* the window after a change: not judged */
  guint64 win_bytes, win_start; /* carried in the window, since when */

  /* between start and stop */
  gint running;                 /* atomic */
  gint stopping;                /* atomic */
  GstClockTime cycle;           /* snapshot of params.cycle at start */
  gint rt_priority;
  gboolean use_gpu;
  GstObject *cuda_context;
  Pipeline *pipelines;
  guint n_pipelines;
  DeviceWorker *device;         /* the worker running its cycles */
  guint every;                  /* runs every that many device cycles */
  guint64 due_at;               /* its next launch on its own grid (ns) */
  guint64 effective_cycle;      /* atomic: every x the device cycle */
  guint64 due_cycles;           /* worker only: its own cycles since start */
  gboolean due_late;            /* worker only: this launch is late */
  guint64 t_launch;             /* worker only: this cycle's launch */
  guint64 cycle_packets;        /* worker only: packets kept this cycle */
  guint64 cycle_kept_bytes;     /* worker only: their bytes */
  guint64 packet_cost;          /* worker only: ns per packet, of the last
                                 * COST_CYCLES (see cycle_finish) */
  guint64 costs[COST_CYCLES];   /* worker only: their ns per packet */
  guint n_costs;
  guint64 handoff_wait;         /* worker only: ns the last cycle waited for
                                 * its forwarders */
  GPtrArray *cyc_streams;       /* worker only: cycle_mark_late's streams */
};

static void
sched_debug_init (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gps_sched_debug, "gpustreamsched", 0,
        "gst-gpustream real-time scheduler");
    g_once_init_leave (&once, 1);
  }
}

G_DEFINE_QUARK (gst-gpustream-scheduler-error-quark,
    gst_gpustream_scheduler_error);

guint64
gst_gpustream_sched_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * GST_SECOND + ts.tv_nsec;
}

static inline void
atomic_add64 (guint64 * p, guint64 v)
{
  __atomic_fetch_add (p, v, __ATOMIC_RELAXED);
}

static inline guint64
atomic_get64 (guint64 * p)
{
  return __atomic_load_n (p, __ATOMIC_RELAXED);
}

/* ---- latency histogram -------------------------------------------------- */

static guint
hist_index (guint64 v)
{
  guint e;

  if (v < HIST_SUB)
    return v;
  e = 63 - __builtin_clzll (v);     /* >= 3 */
  return HIST_SUB + (e - 3) * HIST_SUB + ((v >> (e - 3)) & (HIST_SUB - 1));
}

static guint64
hist_upper (guint i)
{
  guint e, sub;

  if (i < HIST_SUB)
    return i;
  e = (i - HIST_SUB) / HIST_SUB + 3;
  sub = (i - HIST_SUB) % HIST_SUB;
  return (((guint64) HIST_SUB + sub + 1) << (e - 3)) - 1;
}

static guint64
hist_percentile (const guint64 * hist, guint64 total, gdouble p)
{
  guint64 want, acc = 0;
  guint i;

  if (total == 0)
    return 0;
  want = (guint64) ceil (p * total);
  if (want == 0)
    want = 1;
  for (i = 0; i < HIST_BUCKETS; i++) {
    acc += hist[i];
    if (acc >= want)
      return hist_upper (i);
  }
  return hist_upper (HIST_BUCKETS - 1);
}

/* ---- streams ------------------------------------------------------------ */

static void
stream_unref (GstGpuStreamSchedStream * s)
{
  if (!g_atomic_int_dec_and_test (&s->refcount))
    return;
  if (s->destroy)
    s->destroy (s->data);
  g_free (s);
}

static void
atomic_max64 (guint64 * p, guint64 v)
{
  guint64 old = atomic_get64 (p);

  while (v > old && !__atomic_compare_exchange_n (p, &old, v, FALSE,
          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static void
stream_setup_policer (GstGpuStreamSchedStream * s, GstClockTime cycle,
    GstClockTime burst)
{
  if (burst == 0)
    burst = cycle;
  /* one burst of the declared rate plus one packet: a source that keeps
   * its rate on average passes, a faster one is cut to v */
  s->tb_depth = (gdouble) s->v * burst / GST_SECOND + s->w;
  s->tb_tokens = s->tb_depth;
  s->tb_last = gst_gpustream_sched_now ();
}

static gboolean
batch_collect (Pipeline * pl, const GstGpuStreamSchedItem * item)
{
  const GstGpuStreamProcessor *proc = &pl->sched->processor;
  Batch *b;
  gint idx, slot;
  gboolean ok;

  for (;;) {
    idx = g_atomic_int_get (&pl->collect_idx);
    b = &pl->bufs[idx];
    g_atomic_int_inc (&b->writers);
    if (G_LIKELY (g_atomic_int_get (&pl->collect_idx) == idx))
      break;
    /* swapped between the load and the announcement: try the new batch */
    g_atomic_int_add (&b->writers, -1);
  }
  slot = g_atomic_int_add (&b->reserved, 1);
  ok = (guint) slot < b->cap;
  if (ok) {
    b->items[slot] = *item;
    /* still announced: the worker waits for this before it takes the batch */
    if (proc->collect)
      proc->collect (pl->sched->proc_data, b->area, &b->items[slot]);
  }
  g_atomic_int_add (&b->writers, -1);
  return ok;
}

gboolean
gst_gpustream_sched_stream_push (GstGpuStreamSchedStream * s, gpointer data,
    guint32 size, guint16 flags)
{
  GstGpuStreamScheduler *sched = s->sched;
  GstGpuStreamSchedItem item;
  Pipeline *pl;
  guint64 now;

  if (G_UNLIKELY (!g_atomic_int_get (&sched->running) ||
          g_atomic_int_get (&s->removed)))
    return FALSE;
  pl = g_atomic_pointer_get (&s->pl);
  if (G_UNLIKELY (pl == NULL))
    return FALSE;

  now = gst_gpustream_sched_now ();
  if (flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) {
    guint64 budget;

    if (G_UNLIKELY (g_atomic_int_get (&s->shed))) {
      atomic_add64 (&s->drops_shed, 1);
      return FALSE;
    }
    budget = __atomic_load_n (&sched->cycle_budget, __ATOMIC_RELAXED);
    if (budget && __atomic_add_fetch (&sched->cycle_bytes, size,
            __ATOMIC_RELAXED) > budget) {
      atomic_add64 (&s->drops_capped, 1);
      return FALSE;
    }
    s->tb_tokens += (gdouble) (now - s->tb_last) * s->v / GST_SECOND;
    if (s->tb_tokens > s->tb_depth)
      s->tb_tokens = s->tb_depth;
    s->tb_last = now;
    if (s->tb_tokens < size) {
      atomic_add64 (&s->drops_policed, 1);
      return FALSE;
    }
    s->tb_tokens -= size;
  }

  item.data = data;
  item.stream = s;
  item.arrival = now;
  item.size = size;
  item.flags = flags;
  item.epoch = (guint16) g_atomic_int_get (&s->epoch);
  g_atomic_int_inc (&s->refcount);
  if (G_UNLIKELY (!batch_collect (pl, &item))) {
    g_atomic_int_add (&s->refcount, -1);        /* never the last one */
    if (flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
      atomic_add64 (&s->drops_overflow, 1);
    return FALSE;
  }
  return TRUE;
}

void
gst_gpustream_sched_stream_flush (GstGpuStreamSchedStream * s)
{
  g_atomic_int_inc (&s->epoch);
}

gboolean
gst_gpustream_sched_item_is_flushed (const GstGpuStreamSchedItem * item)
{
  /* (a calibration's items have no stream) */
  if (item->flags & GST_GPUSTREAM_SCHED_ITEM_LATE)
    return TRUE;
  return item->stream && (g_atomic_int_get (&item->stream->removed) ||
      item->epoch != (guint16) g_atomic_int_get (&item->stream->epoch));
}

void
gst_gpustream_sched_stream_get_stats (GstGpuStreamSchedStream * s,
    GstGpuStreamSchedStreamStats * st)
{
  guint64 hist[HIST_BUCKETS], total = 0;
  guint i;

  for (i = 0; i < HIST_BUCKETS; i++) {
    hist[i] = atomic_get64 (&s->hist[i]);
    total += hist[i];
  }
  st->w = s->w;
  st->d = s->d;
  st->v = s->v;
  st->pipeline = s->pl_index;
  st->packets = atomic_get64 (&s->packets);
  st->bytes = atomic_get64 (&s->bytes);
  st->drops_policed = atomic_get64 (&s->drops_policed);
  st->drops_overflow = atomic_get64 (&s->drops_overflow);
  st->drops_late = atomic_get64 (&s->drops_late);
  st->drops_shed = atomic_get64 (&s->drops_shed);
  st->drops_capped = atomic_get64 (&s->drops_capped);
  st->shed = g_atomic_int_get (&s->shed) != 0;
  st->misses = atomic_get64 (&s->misses);
  st->latency_p50 = hist_percentile (hist, total, 0.50);
  st->latency_p99 = hist_percentile (hist, total, 0.99);
  st->latency_max = atomic_get64 (&s->lat_max);
}

/* ---- admission (section 4.4) -------------------------------------------- */

static GstClockTime
bound_3i_mu (const GstGpuStreamSchedulerParams * p)
{
  return 3 * p->cycle + p->mu;
}

static gboolean device_check_locked (GstGpuStreamScheduler * sched,
    guint64 extra, const gchar * what, GError ** error);

/* The rate sched counts for in the device's admission: the rate it
 * declared for all its streams together, else the sum of theirs (a
 * batching scheduler's streams each count GST_GPUSTREAM_SCHED_UNLIMITED_RATE
 * then: nothing fits beside it). */
static guint64
sched_rate (GstGpuStreamScheduler * sched)
{
  guint64 declared = __atomic_load_n (&sched->declared, __ATOMIC_RELAXED);

  return declared ? declared :
      __atomic_load_n (&sched->beta, __ATOMIC_RELAXED);
}

/* "1.2e+09 + 3e+08" for a stream joining, "1.2e+09" for the set alone (a
 * start, where nothing is added); g_free the result. */
static gchar *
rate_sum_text (guint64 admitted, guint64 extra)
{
  if (extra == 0)
    return g_strdup_printf ("%.3g", (gdouble) admitted);
  return g_strdup_printf ("%.3g + %.3g", (gdouble) admitted, (gdouble) extra);
}

/* The capacity admission uses: the parameter, or less while the worker's
 * watch holds it lower (keep_deadlines; cap_eff 0: not lowered). */
static guint64
sched_capacity (GstGpuStreamScheduler * sched)
{
  guint64 eff = __atomic_load_n (&sched->cap_eff, __ATOMIC_RELAXED);
  guint64 cap = sched->params.capacity;

  return eff && eff < cap ? eff : cap;
}

static GstClockTime
sched_theta_locked (GstGpuStreamScheduler * sched)
{
  GstClockTime theta = GST_CLOCK_TIME_NONE;
  GList *l;

  for (l = sched->streams; l; l = l->next) {
    GstGpuStreamSchedStream *s = l->data;
    theta = MIN (theta, s->d);
  }
  return theta;
}

/* The admission condition of Zhang et al. (beta + v <= B_I and
 * min(theta, d) > 3I + mu) for the admitted set plus <d, v>; v = 0 checks
 * the set alone. what prefixes the error. */
static gboolean
sched_check_locked (GstGpuStreamScheduler * sched, GstClockTime d, guint64 v,
    const gchar * what, GError ** error)
{
  const GstGpuStreamSchedulerParams *p = &sched->params;
  GstClockTime theta = MIN (sched_theta_locked (sched), d);
  GstClockTime bound = bound_3i_mu (p);

  /* the streams of a scheduler with a declared rate are inside it */
  if (__atomic_load_n (&sched->declared, __ATOMIC_RELAXED))
    v = 0;
  /* running, the device's worker may carry other schedulers' streams */
  if (sched->device) {
    if (!device_check_locked (sched, v, what, error))
      return FALSE;
  } else if (p->capacity > 0 && sched->beta + v > sched_capacity (sched)) {
    gchar *rate = rate_sum_text (sched->beta, v);

    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY,
        "%s: total rate %s B/s exceeds capacity %.3g B/s", what, rate,
        (gdouble) sched_capacity (sched));
    g_free (rate);
    return FALSE;
  }
  if (GST_CLOCK_TIME_IS_VALID (theta) && theta <= bound) {
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_DEADLINE,
        "%s: deadline %.6g ms is not above 3 x cycle %.6g ms + mu %.6g ms",
        what, theta / 1e6, p->cycle / 1e6, p->mu / 1e6);
    return FALSE;
  }
  return TRUE;
}

static Pipeline *
least_loaded_locked (GstGpuStreamScheduler * sched)
{
  Pipeline *best = NULL;
  guint i;

  for (i = 0; i < sched->n_pipelines; i++)
    if (!best || sched->pipelines[i].rate < best->rate)
      best = &sched->pipelines[i];
  return best;
}

static void
stream_assign_locked (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedStream * s)
{
  Pipeline *pl = least_loaded_locked (sched);

  pl->rate += s->v;
  s->pl_index = pl->index;
  stream_setup_policer (s, sched->cycle, sched->params.police_burst);
  g_atomic_pointer_set (&s->pl, pl);
}

GstGpuStreamSchedStream *
gst_gpustream_scheduler_add_stream (GstGpuStreamScheduler * sched, guint32 w,
    GstClockTime d, guint64 v, gpointer stream_data, GDestroyNotify destroy,
    GError ** error)
{
  GstGpuStreamSchedStream *s;
  GError *err = NULL;

  if (w == 0 || v == 0 || d == 0 || !GST_CLOCK_TIME_IS_VALID (d)) {
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_INVALID,
        "stream refused: max-packet-size, deadline and max-rate must all be "
        "set (got w=%u B, d=%" GST_TIME_FORMAT ", v=%" G_GUINT64_FORMAT
        " B/s)", w, GST_TIME_ARGS (d), v);
    g_mutex_lock (&sched->lock);
    sched->refused++;
    g_mutex_unlock (&sched->lock);
    return NULL;
  }

  g_mutex_lock (&sched->lock);
  if (!sched_check_locked (sched, d, v, "stream refused", &err)) {
    if (sched->params.admission) {
      sched->refused++;
      g_mutex_unlock (&sched->lock);
      GST_INFO ("%s", err->message);
      g_propagate_error (error, err);
      return NULL;
    }
    GST_WARNING ("admission off, admitting anyway: %s", err->message);
    g_clear_error (&err);
  }

  s = g_new0 (GstGpuStreamSchedStream, 1);
  s->refcount = 1;
  s->sched = sched;
  s->w = w;
  s->d = d;
  s->v = v;
  s->data = stream_data;
  s->destroy = destroy;
  __atomic_store_n (&sched->beta, sched->beta + v, __ATOMIC_RELAXED);
  sched->admitted++;
  s->seq = sched->admitted;
  sched->streams = g_list_append (sched->streams, s);
  if (sched->pipelines)
    stream_assign_locked (sched, s);
  GST_INFO ("stream admitted: w %u B, d %.3f ms, v %.3g B/s; beta %.3g B/s, "
      "theta %.3f ms", w, d / 1e6, (gdouble) v, (gdouble) sched->beta,
      sched_theta_locked (sched) / 1e6);
  g_mutex_unlock (&sched->lock);
  return s;
}

void
gst_gpustream_scheduler_remove_stream (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedStream * s)
{
  GstGpuStreamSchedStreamStats st;

  g_mutex_lock (&sched->lock);
  g_atomic_int_set (&s->removed, 1);
  sched->streams = g_list_remove (sched->streams, s);
  __atomic_store_n (&sched->beta, sched->beta - s->v, __ATOMIC_RELAXED);
  if (s->pl)
    s->pl->rate -= s->v;
  if (g_atomic_int_get (&s->shed))
    sched->n_shed--;
  gst_gpustream_sched_stream_get_stats (s, &st);
  sched->gone_packets += st.packets;
  sched->gone_policed += st.drops_policed;
  sched->gone_overflow += st.drops_overflow;
  sched->gone_misses += st.misses;
  sched->gone_late += st.drops_late;
  sched->gone_shed += st.drops_shed;
  sched->gone_capped += st.drops_capped;
  g_mutex_unlock (&sched->lock);
  stream_unref (s);
}

/* The paper's worker owns its core; on a shared machine SCHED_FIFO is the
 * nearest thing. Only when asked for, since it needs CAP_SYS_NICE. */
static gboolean
thread_set_realtime (gint priority, const gchar * what)
{
  struct sched_param sp = { 0 };
  gint res;

  if (priority <= 0)
    return FALSE;
  sp.sched_priority = priority;
  res = pthread_setschedparam (pthread_self (), SCHED_FIFO, &sp);
  if (res != 0)
    GST_WARNING ("%s: SCHED_FIFO %d refused (%s), running at normal "
        "priority", what, priority, g_strerror (res));
  return res == 0;
}

/* ---- the forwarder ------------------------------------------------------ */

static void
item_drop (GstGpuStreamScheduler * sched, GstGpuStreamSchedItem * it)
{
  if (sched->cb.drop_item)
    sched->cb.drop_item (it->stream->data, it);
  else if (sched->cb.drop)
    sched->cb.drop (it->data);
  stream_unref (it->stream);
}

static void
forward_item (GstGpuStreamScheduler * sched, GstGpuStreamSchedItem * it,
    gboolean stopping)
{
  GstGpuStreamSchedStream *s = it->stream;

  if (G_UNLIKELY (it->flags & GST_GPUSTREAM_SCHED_ITEM_LATE)) {
    atomic_add64 (&s->drops_late, 1);
    item_drop (sched, it);
    return;
  }
  if (stopping || g_atomic_int_get (&s->removed) ||
      it->epoch != (guint16) g_atomic_int_get (&s->epoch)) {
    item_drop (sched, it);
    return;
  }
  if (it->flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) {
    /* the packet is done when it leaves us: measured before the push, so a
     * downstream that blocks (a synchronising sink) shows up only in the
     * packets that wait behind it */
    guint64 lat = gst_gpustream_sched_now () - it->arrival;
    atomic_add64 (&s->hist[hist_index (lat)], 1);
    atomic_add64 (&s->packets, 1);
    atomic_add64 (&s->bytes, it->size);
    if (lat > s->d)
      atomic_add64 (&s->misses, 1);
    atomic_max64 (&s->lat_max, lat);
    atomic_max64 (&sched->win_lat_max, lat);
  }
  if (sched->cb.forward_item)
    sched->cb.forward_item (s->data, it);
  else
    sched->cb.forward (s->data, it->data, it->flags);
  stream_unref (s);
}

static gpointer
forwarder_main (gpointer user_data)
{
  Pipeline *pl = user_data;
  GstGpuStreamScheduler *sched = pl->sched;

  thread_set_realtime (sched->rt_priority, "forwarder");
  g_mutex_lock (&pl->lock);
  for (;;) {
    Batch *b;
    guint i, n;

    while (pl->fwd_done && !pl->stop)
      g_cond_wait (&pl->cond, &pl->lock);
    if (pl->fwd_done)
      break;
    b = &pl->bufs[pl->fwd_idx];
    n = pl->fwd_n;
    g_mutex_unlock (&pl->lock);

    for (i = 0; i < n; i++)
      forward_item (sched, &b->items[i],
          g_atomic_int_get (&sched->stopping));

    g_mutex_lock (&pl->lock);
    pl->fwd_done = TRUE;        /* Table 2, step 2: the batch is available */
    g_cond_broadcast (&pl->cond);
  }
  g_mutex_unlock (&pl->lock);
  return NULL;
}

/* ---- the worker --------------------------------------------------------- */

static void
pipeline_swap (Pipeline * pl)
{
  gint old = g_atomic_int_get (&pl->collect_idx);
  Batch *b = &pl->bufs[old];
  guint spins = 0;
  guint reserved;

  g_atomic_int_set (&pl->collect_idx, pl->spare);
  while (g_atomic_int_get (&b->writers) != 0)
    if (++spins > 64)
      g_thread_yield ();        /* a collector was preempted mid-write */
  reserved = (guint) g_atomic_int_get (&b->reserved);
  pl->work_area = g_steal_pointer (&b->area);
  pl->work_idx = old;
  pl->work_reserved = reserved;
  pl->work_n = MIN (reserved, b->cap);
}

/* An area the processor gave and nobody submitted goes back to it. */
static void
batch_area_release (Pipeline * pl, gpointer * area)
{
  GstGpuStreamScheduler *sched = pl->sched;
  gpointer a = g_steal_pointer (area);

  if (a)
    sched->processor.area_free (sched->proc_data, a);
}

/* The processor's area of a batch nobody else sees now (the spare, or one
 * at start), made anew for its capacity; worker (or start / stop) only. */
static void
batch_area_renew (Pipeline * pl, Batch * b)
{
  GstGpuStreamScheduler *sched = pl->sched;

  if (!sched->processor.collect)
    return;
  batch_area_release (pl, &b->area);
  b->area = sched->processor.area_new (sched->proc_data,
      sched->use_gpu ? sched->cuda_context : NULL, b->cap);
}

/* Hands the processed batch to the forwarder once it has released the
 * previous one (Table 2, step 3), waiting at most until deadline
 * (monotonic us). FALSE: the forwarder is still busy (blocked downstream,
 * e.g. a sink prerolling); the batch stays pending and the pipeline skips
 * cycles until it goes, while the other pipelines go on: one blocked sink
 * must not stop the worker. */
static gboolean
pipeline_handoff (Pipeline * pl, gint64 deadline)
{
  gint released;
  Batch *b;

  g_mutex_lock (&pl->lock);
  while (!pl->fwd_done)
    if (!g_cond_wait_until (&pl->cond, &pl->lock, deadline) && !pl->fwd_done) {
      g_mutex_unlock (&pl->lock);
      pl->pending = TRUE;
      pl->held = TRUE;
      return FALSE;
    }
  released = pl->fwd_idx;
  pl->fwd_idx = pl->work_idx;
  pl->fwd_n = pl->work_n;
  pl->fwd_done = FALSE;
  g_cond_broadcast (&pl->cond);
  g_mutex_unlock (&pl->lock);
  pl->pending = FALSE;

  /* the released batch is the next spare: nobody else sees it, so this is
   * the one place a batch may grow */
  b = &pl->bufs[released];
  if (pl->work_reserved * 2 > b->cap && b->cap < MAX_BATCH) {
    guint cap = b->cap;
    while (cap < pl->work_reserved * 2 && cap < MAX_BATCH)
      cap *= 2;
    b->items = g_renew (GstGpuStreamSchedItem, b->items, cap);
    b->cap = cap;
  }
  g_atomic_int_set (&b->reserved, 0);
  batch_area_renew (pl, b);
  pl->spare = released;
  return TRUE;
}

/* Phase 1 of sched's cycle: a batch still waiting for its forwarder goes
 * first, if it can (its pipeline collects on meanwhile: no spare batch to
 * swap in); every other pipeline's batch is swapped out. */
static void
cycle_swap (GstGpuStreamScheduler * sched)
{
  guint64 budget = 0;
  guint i;

  /* admission off, keep_deadlines: what one cycle carries at the capacity,
   * for the batches of the next cycle (whatever the streams declare) */
  if (sched->params.keep_deadlines && !sched->params.admission &&
      sched->params.capacity > 0)
    budget = MAX (1, (guint64) ((gdouble) sched_capacity (sched) *
            __atomic_load_n (&sched->effective_cycle, __ATOMIC_RELAXED) /
            GST_SECOND));
  __atomic_store_n (&sched->cycle_budget, budget, __ATOMIC_RELAXED);
  __atomic_store_n (&sched->cycle_bytes, 0, __ATOMIC_RELAXED);

  for (i = 0; i < sched->n_pipelines; i++)
    if (sched->pipelines[i].pending)
      pipeline_handoff (&sched->pipelines[i], g_get_monotonic_time ());
  for (i = 0; i < sched->n_pipelines; i++)
    if (!sched->pipelines[i].pending)
      pipeline_swap (&sched->pipelines[i]);
}

/* Whether cycle_mark_late may drop it: a packet of a stream whose deadline
 * the model can keep (above 3 I + mu; one admitted with admission off
 * within it is only counted as missed). */
static inline gboolean
item_droppable (const GstGpuStreamSchedItem * it, GstClockTime bound)
{
  return (it->flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) &&
      it->stream->d > bound;
}

static gint
cmp_newest_first (gconstpointer a, gconstpointer b)
{
  const GstGpuStreamSchedStream *sa = *(GstGpuStreamSchedStream * const *) a;
  const GstGpuStreamSchedStream *sb = *(GstGpuStreamSchedStream * const *) b;

  return sa->seq < sb->seq ? 1 : sa->seq > sb->seq ? -1 : 0;
}

/* keep_deadlines: the packets of this cycle's batches that cannot leave by
 * their deadline are marked late, to be dropped (the processor may skip
 * them): a worker that fell behind catches up at once instead of carrying
 * its delay into every next batch. Every packet of the cycle leaves at its
 * end, T: the launch plus, by the cost per packet of the last cycles (with
 * half again for safety), the packets kept. When a packet would leave after
 * half its slack (half-way from 3 I + mu to its deadline), the most
 * recently admitted streams pay first, as the shedding does: their packets
 * (oldest first) are dropped until T is within that of the older streams'
 * packets; what would still leave after its deadline is dropped, oldest
 * first. A stream is never dropped early for its own sake, only for the
 * streams admitted before it. */
static void
cycle_mark_late (GstGpuStreamScheduler * sched)
{
  guint64 kept = 0, bytes = 0, t;
  guint64 cost = sched->packet_cost + sched->packet_cost / 2;
  GstClockTime bound = 3 * sched->cycle + sched->params.mu, excuse;
  GPtrArray *order = sched->cyc_streams;
  gboolean at_risk = FALSE;
  guint i, j;

  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    GstGpuStreamSchedItem *items = pl->bufs[pl->work_idx].items;

    if (pl->pending)
      continue;
    kept += pl->work_n;
    for (j = 0; j < pl->work_n; j++)
      if (items[j].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
        bytes += items[j].size;
  }
  /* the time the last cycle waited for its forwarders (a synchronising
   * sink) is downstream's: a packet late by that much only is forwarded (a
   * miss, if it is one), not dropped */
  excuse = sched->handoff_wait;
  t = sched->t_launch + cost * kept;

  /* which streams have packets here, and whether any would be late; what
   * waited behind a blocked downstream (a sink prerolling, pl->held) is late
   * by downstream's doing, not the worker's: forwarded, never dropped */
  g_ptr_array_set_size (order, 0);
  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    GstGpuStreamSchedItem *items = pl->bufs[pl->work_idx].items;

    if (pl->pending || pl->held)
      continue;
    for (j = 0; j < pl->work_n; j++) {
      GstGpuStreamSchedStream *s = items[j].stream;
      guint64 due;

      if (!item_droppable (&items[j], bound))
        continue;
      /* what the plan guards is half-way between the model's bound and
       * the deadline: the slack above it is for a preemption in the middle
       * of the next batch, which would otherwise make the older streams
       * miss while the newer ones were carried */
      due = items[j].arrival + s->d - (s->d - bound) / 2 + excuse;
      if (s->cyc_n++ == 0) {
        s->cyc_min = due;
        s->cyc_drop = 0;
        g_ptr_array_add (order, s);
      }
      at_risk |= t > due;
    }
  }

  if (at_risk && cost > 0) {
    guint64 older_min = G_MAXUINT64;

    /* the newest streams' packets go until T is within the deadlines of
     * every older stream's: the plan walks from the newest, each stream
     * guarding the earliest deadline of those older than it */
    g_ptr_array_sort (order, cmp_newest_first);
    for (i = order->len; i-- > 0;) {
      GstGpuStreamSchedStream *s = order->pdata[i];
      guint64 own = s->cyc_min;

      /* (cyc_min reused: the earliest deadline of the streams older than
       * s, which the plan must bring T within) */
      s->cyc_min = older_min;
      older_min = MIN (older_min, own);
    }
    for (i = 0; i < order->len; i++) {
      GstGpuStreamSchedStream *s = order->pdata[i];
      guint64 k;

      if (t <= s->cyc_min)
        break;
      k = MIN ((guint64) s->cyc_n, (t - s->cyc_min + cost - 1) / cost);
      s->cyc_drop = (guint) k;
      t -= k * cost;
    }
  }

  /* the marking, in arrival order within each stream: the planned drops
   * first, then whatever is late still */
  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    GstGpuStreamSchedItem *items = pl->bufs[pl->work_idx].items;

    if (pl->pending)
      continue;
    if (pl->held) {
      pl->held = FALSE;
      continue;
    }
    if (!at_risk)
      continue;
    for (j = 0; j < pl->work_n; j++) {
      GstGpuStreamSchedItem *it = &items[j];

      if (!item_droppable (it, bound))
        continue;
      if (it->stream->cyc_drop > 0) {
        it->stream->cyc_drop--;
      } else if (t > it->arrival + it->stream->d + excuse) {
        t -= MIN (t, cost);
      } else
        continue;
      it->flags |= GST_GPUSTREAM_SCHED_ITEM_LATE;
      kept--;
      bytes -= it->size;
    }
  }
  for (i = 0; i < order->len; i++)
    ((GstGpuStreamSchedStream *) order->pdata[i])->cyc_n = 0;
  sched->cycle_packets = kept;
  sched->cycle_kept_bytes = bytes;
}

/* Phase 2: each swapped batch is started (a split processor, on the next
 * lane) or run whole. */
static void
cycle_launch (GstGpuStreamScheduler * sched, guint * lane)
{
  GstObject *ctx = sched->use_gpu ? sched->cuda_context : NULL;
  guint i;

  sched->t_launch = gst_gpustream_sched_now ();
  if (sched->params.keep_deadlines)
    cycle_mark_late (sched);
  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    GstGpuStreamSchedItem *items = pl->bufs[pl->work_idx].items;

    pl->submitted = NULL;
    if (pl->pending)
      continue;
    if (pl->work_n == 0) {
      batch_area_release (pl, &pl->work_area);
      continue;
    }
    if (sched->processor.collect) {
      pl->submitted = sched->processor.submit_area (sched->proc_data, ctx,
          (*lane)++, g_steal_pointer (&pl->work_area), items, pl->work_n);
    } else if (sched->processor.submit)
      pl->submitted = sched->processor.submit (sched->proc_data, ctx,
          (*lane)++, items, pl->work_n);
    else if (sched->use_gpu)
      sched->processor.process_gpu (sched->proc_data, ctx, items, pl->work_n);
    else
      sched->processor.process_cpu (sched->proc_data, items, pl->work_n);
  }
}

/* Phase 3: the started batches are finished, in launch order; T_S of sched
 * is from its launch to its last batch done, and must stay below the device
 * cycle (base), when the next launch comes. Then each batch goes to its
 * forwarder. */
static void
cycle_finish (GstGpuStreamScheduler * sched, GstClockTime base)
{
  gboolean launched = FALSE;
  guint64 ts, t_handoff;
  guint i;

  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];

    if (pl->pending || pl->work_n == 0)
      continue;
    launched = TRUE;
    if (sched->processor.finish)
      sched->processor.finish (sched->proc_data, pl->submitted);
    pl->submitted = NULL;
  }
  ts = gst_gpustream_sched_now () - sched->t_launch;
  /* what a packet cost in this cycle, for the next one's late marks (a
   * cycle of few packets says little: its fixed costs dominate) */
  if (sched->cycle_packets >= 8) {
    guint64 lo = G_MAXUINT64, lo2 = G_MAXUINT64;
    guint k, n;

    sched->costs[sched->n_costs++ % COST_CYCLES] = ts / sched->cycle_packets;
    n = MIN (sched->n_costs, COST_CYCLES);
    for (k = 0; k < n; k++) {
      if (sched->costs[k] < lo) {
        lo2 = lo;
        lo = sched->costs[k];
      } else if (sched->costs[k] < lo2)
        lo2 = sched->costs[k];
    }
    sched->packet_cost = n >= 2 ? lo2 : lo;
  }
  /* a late forwarder is waited for, as in the paper: a machine that
   * stalls it for tens of ms delays every pipeline alike, and going on
   * without it measured worse (its pipeline then falls a cycle behind at
   * each hand-off). Only one still busy after FORWARDER_PATIENCE (or a
   * device cycle, if longer) is taken for blocked downstream (a sink
   * prerolling) and left pending. Not its own cycle: a long-cycle scheduler
   * must not hold up the short-cycle ones sharing the worker. */
  t_handoff = gst_gpustream_sched_now ();
  for (i = 0; i < sched->n_pipelines; i++)
    if (!sched->pipelines[i].pending)
      pipeline_handoff (&sched->pipelines[i], g_get_monotonic_time () +
          (gint64) MAX (base, FORWARDER_PATIENCE) / 1000);
  sched->handoff_wait = gst_gpustream_sched_now () - t_handoff;

  g_mutex_lock (&sched->lock);
  sched->cycles = sched->due_cycles;
  sched->launches += launched;
  sched->late += sched->due_late;
  sched->last_batch = ts;
  sched->worst_batch = MAX (sched->worst_batch, ts);
  g_mutex_unlock (&sched->lock);
  if (ts >= base)
    GST_LOG ("batch took %" G_GUINT64_FORMAT " ns >= device cycle %"
        G_GUINT64_FORMAT " ns (T_S < I violated)", ts, base);
}

/* Whether sched is due at the device cycle launched at t (a point of the
 * device's grid of cycle base): its own grid (due_at, every x base apart)
 * need not fall on the device's after the device cycle changed, so the
 * nearest device point counts. Its own cycles are counted on its grid; it
 * is late when it missed a whole one of them. The caller holds the
 * worker's lock. */
static gboolean
sched_due_locked (GstGpuStreamScheduler * sched, guint64 t, guint64 base)
{
  const guint64 own = (guint64) sched->every * base;
  guint64 periods;

  if (t + base / 2 < sched->due_at)
    return FALSE;
  periods = 1 + (t + base / 2 - sched->due_at) / own;
  sched->due_at += periods * own;
  sched->due_cycles += periods;
  sched->due_late = periods > 1;
  return TRUE;
}

/* g_cond_wait_until's time (monotonic us) for t (monotonic ns), rounded up
 * so the wait never ends before t */
static gint64
monotonic_us (guint64 t)
{
  return (gint64) ((t + 999) / 1000);
}

static gint
cmp_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

static guint64
sched_late_drops_locked (GstGpuStreamScheduler * sched)
{
  guint64 n = sched->gone_late;
  GList *l;

  for (l = sched->streams; l; l = l->next)
    n += atomic_get64 (&((GstGpuStreamSchedStream *) l->data)->drops_late);
  return n;
}

/* whether the worker running sched's cycles got SCHED_FIFO */
static gboolean
sched_realtime (GstGpuStreamScheduler * sched)
{
  return sched->device && g_atomic_int_get (&sched->device->realtime);
}

/* the packets the streams forwarded (*packets) and those of them that
 * left after 3 I + mu (*over: the histogram's buckets above the bound's) */
static void
sched_over_bound_locked (GstGpuStreamScheduler * sched, guint64 * over,
    guint64 * packets)
{
  guint first = hist_index (3 * sched->cycle + sched->params.mu) + 1, k;
  GList *l;

  *over = *packets = 0;
  for (l = sched->streams; l; l = l->next) {
    GstGpuStreamSchedStream *s = l->data;

    *packets += atomic_get64 (&s->packets);
    for (k = first; k < HIST_BUCKETS; k++)
      *over += atomic_get64 (&s->hist[k]);
  }
}

/* the declared rate of the streams not shed */
static guint64
sched_carried_locked (GstGpuStreamScheduler * sched)
{
  guint64 carried = 0;
  GList *l;

  for (l = sched->streams; l; l = l->next)
    if (!g_atomic_int_get (&((GstGpuStreamSchedStream *) l->data)->shed))
      carried += ((GstGpuStreamSchedStream *) l->data)->v;
  return carried;
}

/* Sheds the most recently admitted streams until the rest fits cap (or
 * brings back the oldest shed that fit, restore); returns the rate of the
 * streams not shed. The caller holds sched's lock. */
static guint64
sched_reshed_locked (GstGpuStreamScheduler * sched, guint64 cap,
    gboolean restore, GPtrArray * changed)
{
  guint64 carried = sched_carried_locked (sched);
  GList *l;

  if (restore) {
    for (l = sched->streams; l; l = l->next) {
      GstGpuStreamSchedStream *s = l->data;

      if (!g_atomic_int_get (&s->shed) || carried + s->v > cap)
        continue;
      g_atomic_int_set (&s->shed, 0);
      sched->n_shed--;
      carried += s->v;
      g_ptr_array_add (changed, s->data);
    }
    return carried;
  }
  for (l = g_list_last (sched->streams); l && carried > cap; l = l->prev) {
    GstGpuStreamSchedStream *s = l->data;

    if (g_atomic_int_get (&s->shed))
      continue;
    g_atomic_int_set (&s->shed, 1);
    sched->n_shed++;
    sched->sheds++;
    carried -= s->v;
    g_ptr_array_add (changed, s->data);
  }
  return carried;
}

/* keep_deadlines: sched's share of the device cycle that began at P_k and
 * ended occupancy x base later (see WATCH_WINDOW for what a window of them
 * decides). Worker thread, no lock held; the admission function is called
 * after the lock is released. */
static void
sched_watch_cycle (GstGpuStreamScheduler * sched, gdouble occupancy,
    GstClockTime base)
{
  GstGpuStreamSchedAdmissionChange ch = { 0 };
  GstGpuStreamSchedAdmissionFunc func;
  GPtrArray *changed;
  gdouble p90;
  guint64 before, after, carried, lat_max, late, capacity, measured;
  guint64 over, pkts, over_win, pkts_win;
  GstClockTime theta;
  gboolean overloaded, quiet, restore = FALSE;
  guint n;

  g_mutex_lock (&sched->lock);
  if (occupancy >= 1.0)
    sched->overruns++;
  capacity = sched->params.capacity;
  if (!sched->params.keep_deadlines || capacity == 0 || !sched->win) {
    g_mutex_unlock (&sched->lock);
    return;
  }
  if (sched->win_len == 0) {
    sched->win_len = CLAMP (WATCH_WINDOW / MAX (base, __atomic_load_n
            (&sched->effective_cycle, __ATOMIC_RELAXED)), WATCH_MIN_CYCLES,
        WATCH_MAX_CYCLES);
    sched->win_late_mark = sched_late_drops_locked (sched);
    sched_over_bound_locked (sched, &sched->win_over_mark,
        &sched->win_pkt_mark);
  }
  if (sched->win_n == 0) {
    sched->win_start = gst_gpustream_sched_now ();
    sched->win_bytes = 0;
  }
  sched->win_bytes += sched->cycle_kept_bytes;
  sched->win[sched->win_n++] = occupancy;
  sched->win_overruns += occupancy >= 1.0;
  /* win_len cycles, or the window's time of cycles that overran (a worker
   * far behind must not wait 50 long cycles to be judged) */
  if (sched->win_n < sched->win_len && (sched->win_n < WATCH_SHORT_CYCLES ||
          gst_gpustream_sched_now () - sched->win_start < WATCH_WINDOW)) {
    g_mutex_unlock (&sched->lock);
    return;
  }

  n = sched->win_n;
  qsort (sched->win, n, sizeof (gdouble), cmp_double);
  sched->occ_p50 = sched->win[n / 2];
  sched->occ_max = sched->win[n - 1];
  p90 = sched->win[MIN (n - 1, n * 9 / 10)];
  lat_max = __atomic_exchange_n (&sched->win_lat_max, 0, __ATOMIC_RELAXED);
  late = sched_late_drops_locked (sched);
  theta = sched_theta_locked (sched);
  sched_over_bound_locked (sched, &over, &pkts);
  /* (a stream gone since the window began takes its counts along) */
  over_win = over >= sched->win_over_mark ? over - sched->win_over_mark : 0;
  pkts_win = pkts >= sched->win_pkt_mark ? pkts - sched->win_pkt_mark : 0;
  overloaded = sched->win_overruns * 2 >= n || late > sched->win_late_mark ||
      (GST_CLOCK_TIME_IS_VALID (theta) && lat_max > theta / 2) ||
      (!sched->params.admission && over_win * 100 > pkts_win);
  /* a window says what more load would cost only if the streams carried
   * sent (about) their rates in it: quiet at the end of a stream, or while
   * the streams pause, is no reason to raise the capacity; raised, the
   * occupancy the window predicts for a tenth more must stay under target */
  measured = sched->win_bytes * GST_SECOND /
      MAX (gst_gpustream_sched_now () - sched->win_start, 1);
  carried = sched_carried_locked (sched);
  quiet = sched->win_overruns == 0 && late == sched->win_late_mark &&
      p90 < OCC_QUIET && (!GST_CLOCK_TIME_IS_VALID (theta) ||
      lat_max < theta / 4) && (carried == 0 || (measured * 2 >= carried &&
          p90 * (measured + capacity / 10) < OCC_TARGET * measured));
  ch.window_cycles = n;
  ch.window_overruns = sched->win_overruns;
  sched->win_n = 0;
  sched->win_overruns = 0;
  sched->win_late_mark = late;
  sched->win_over_mark = over;
  sched->win_pkt_mark = pkts;

  /* the window after a change still drains what the old load left (the
   * cycles overrun, the oldest packets are dropped late): judged, it would
   * lower the capacity a second time for the same overload */
  if (sched->settling) {
    sched->settling = FALSE;
    g_mutex_unlock (&sched->lock);
    return;
  }
  before = after = sched_capacity (sched);
  changed = g_ptr_array_new ();
  /* one window overloaded is a stall, which the late drops cover; two in a
   * row are a load the worker cannot carry */
  sched->strikes = overloaded ? sched->strikes + 1 : 0;
  if (overloaded && sched->strikes >= 2) {
    gdouble factor = CLAMP (OCC_TARGET / MAX (p90, 1e-3), 0.5, LOWER_MIN);

    sched->quiet_windows = 0;
    sched->strikes = 0;
    /* the streams carried, not the capacity, are what the cycles measured
     * (none carried: the overrun is not theirs, and nothing to shed) */
    if (carried > 0)
      after = MIN (before, (guint64) (MIN (before, carried) * factor));
  } else if (overloaded) {
    sched->quiet_windows = 0;
  } else if (quiet) {
    if (before < capacity && ++sched->quiet_windows >= QUIET_WINDOWS) {
      sched->quiet_windows = 0;
      after = MIN (capacity, before + capacity / 10);
      restore = TRUE;
    }
  } else
    sched->quiet_windows = 0;

  func = NULL;
  if (after != before) {
    sched->settling = TRUE;
    __atomic_store_n (&sched->cap_eff, after, __ATOMIC_RELAXED);
    if (after < before)
      sched->lowered++;
    else
      sched->raised++;
    /* admission off, the lower capacity only caps the cycles' bytes */
    if (sched->params.admission)
      carried = sched_reshed_locked (sched, after, restore, changed);
    func = sched->admission_func;
    ch.capacity_before = before;
    ch.capacity_after = after;
    ch.capacity = capacity;
    ch.beta = sched->beta;
    ch.carried = carried;
    ch.occupancy_p50 = sched->occ_p50;
    ch.occupancy_max = sched->occ_max;
    ch.realtime = sched_realtime (sched);
    if (restore) {
      ch.restored = changed->pdata;
      ch.n_restored = changed->len;
    } else {
      ch.shed = changed->pdata;
      ch.n_shed = changed->len;
    }
    GST_INFO ("%s: capacity %.3g -> %.3g B/s (window of %u cycles: %u "
        "overruns, occupancy p50 %.2f max %.2f), %u stream(s) %s",
        sched->processor.name, (gdouble) before, (gdouble) after, n,
        ch.window_overruns, sched->occ_p50, sched->occ_max, changed->len,
        restore ? "restored" : "shed");
  }
  g_mutex_unlock (&sched->lock);
  if (func)
    func (sched->admission_data, &ch);
  g_ptr_array_free (changed, TRUE);
}

/* At each P_k, the cycle of every scheduler due then, in three phases over
 * all of them, so that every batch of the device is started (submit) before
 * the worker waits for any (finish). The worker sleeps on its condition, so
 * a stop, or a shorter device cycle (a scheduler of a shorter cycle
 * joining), takes effect at once rather than a cycle later. A scheduler
 * that detaches waits for the end of the cycle it is in (device_detach). */
static gpointer
device_worker_main (gpointer user_data)
{
  DeviceWorker *w = user_data;
  GPtrArray *run = g_ptr_array_new ();
  guint64 base, prev, next, now = 0;
  gdouble occupancy;

  g_atomic_int_set (&w->realtime,
      thread_set_realtime (w->rt_priority, "worker"));
  g_mutex_lock (&w->lock);
  base = w->cycle;
  prev = gst_gpustream_sched_now ();
  next = prev + base;
  for (;;) {
    guint i, lane = 0;

    while (!w->stop) {
      if (w->cycle != base) {
        /* the device cycle changed: the grid goes on from the last launch */
        base = w->cycle;
        next = prev + base;
      }
      now = gst_gpustream_sched_now ();
      if (now >= next)
        break;
      g_cond_wait_until (&w->cond, &w->lock, monotonic_us (next));
    }
    if (w->stop)
      break;
    /* a whole cycle behind: launch now, on the grid (each scheduler that
     * missed a cycle of its own counts a late launch) */
    if (now >= next + base)
      next += (now - next) / base * base;
    g_ptr_array_set_size (run, 0);
    for (i = 0; i < w->scheds->len; i++)
      if (sched_due_locked (g_ptr_array_index (w->scheds, i), next, base))
        g_ptr_array_add (run, g_ptr_array_index (w->scheds, i));
    w->in_cycle = TRUE;
    g_mutex_unlock (&w->lock);

    for (i = 0; i < run->len; i++)
      cycle_swap (g_ptr_array_index (run, i));
    for (i = 0; i < run->len; i++)
      cycle_launch (g_ptr_array_index (run, i), &lane);
    for (i = 0; i < run->len; i++)
      cycle_finish (g_ptr_array_index (run, i), base);
    /* the whole device cycle, from P_k: waking late counts too */
    occupancy = (gdouble) (gst_gpustream_sched_now () - next) / base;
    for (i = 0; i < run->len; i++)
      sched_watch_cycle (g_ptr_array_index (run, i), occupancy, base);

    g_mutex_lock (&w->lock);
    w->in_cycle = FALSE;
    g_cond_broadcast (&w->cond);
    prev = next;
    next += base;
  }
  g_mutex_unlock (&w->lock);
  g_ptr_array_free (run, TRUE);
  return NULL;
}

/* A scheduler of cycle I on a worker of device cycle base runs every
 * floor(I / base) device cycles. */
static guint
every_of (GstClockTime cycle, GstClockTime base)
{
  return (guint) MAX (1, cycle / base);
}

/* Sets the device cycle to the shortest of the attached schedulers' and
 * each one's every. The caller holds the worker's lock. */
static void
device_rebase_locked (DeviceWorker * w)
{
  GstClockTime base = GST_CLOCK_TIME_NONE;
  guint i;

  for (i = 0; i < w->scheds->len; i++)
    base = MIN (base, ((GstGpuStreamScheduler *)
            g_ptr_array_index (w->scheds, i))->cycle);
  if (!GST_CLOCK_TIME_IS_VALID (base))
    return;
  w->cycle = base;
  for (i = 0; i < w->scheds->len; i++) {
    GstGpuStreamScheduler *o = g_ptr_array_index (w->scheds, i);
    guint every = every_of (o->cycle, base);

    /* said when it changes, but not for a newcomer running every cycle */
    if (every != o->every && (o->every != 0 || every > 1))
      GST_INFO ("cycle %.6g ms: every %u device cycles of %.6g ms",
          o->cycle / 1e6, every, base / 1e6);
    o->every = every;
    __atomic_store_n (&o->effective_cycle, (guint64) o->every * base,
        __ATOMIC_RELAXED);
  }
  g_cond_broadcast (&w->cond);
}

/* For a refusal: who else is on the worker, e.g. "; beside it: dxt-encode
 * (cycle 33.3 ms, rate not declared: an element that only batches)"; ""
 * when nobody. The caller holds the worker's lock; g_free the result. */
static gchar *
device_others_locked (DeviceWorker * w, GstGpuStreamScheduler * sched)
{
  GString *text = g_string_new (NULL);
  guint i, n = 0;

  for (i = 0; i < w->scheds->len; i++) {
    GstGpuStreamScheduler *o = g_ptr_array_index (w->scheds, i);
    guint64 beta = sched_rate (o);

    if (o == sched)
      continue;
    g_string_append_printf (text, "%s%s (cycle %.6g ms, ", n++ ? ", " :
        "; beside it: ", o->processor.name, o->cycle / 1e6);
    if (beta >= GST_GPUSTREAM_SCHED_UNLIMITED_RATE)
      g_string_append (text, "rate not declared: an element that only "
          "batches)");
    else
      g_string_append_printf (text, "%.3g B/s)", (gdouble) beta);
  }
  return g_string_free (text, FALSE);
}

/* Admission on the device's worker, for sched counting a rate of own plus
 * extra, at device cycle base: the bytes one device cycle may carry (every
 * scheduler's rate times its own effective cycle, all due at once) against
 * what the device does in one (the smallest capacity set, times base).
 * sched counts whether it is attached yet or not. The caller holds the
 * worker's lock; what prefixes the error. */
static gboolean
device_fits_locked (DeviceWorker * w, GstGpuStreamScheduler * sched,
    guint64 own_rate, guint64 extra, GstClockTime base, const gchar * what,
    GError ** error)
{
  guint64 cap = sched_capacity (sched);
  guint64 rate = own_rate;
  GstClockTime own = every_of (sched->cycle, base) * base;
  gdouble load = (gdouble) (rate + extra) * own, room;
  gboolean mixed = own != base;
  gchar *others;
  guint i;

  for (i = 0; i < w->scheds->len; i++) {
    GstGpuStreamScheduler *o = g_ptr_array_index (w->scheds, i);
    guint64 beta = sched_rate (o);
    GstClockTime eff = every_of (o->cycle, base) * base;

    if (o == sched)
      continue;
    rate += beta;
    load += (gdouble) beta *eff;
    mixed |= eff != base;
    if (o->params.capacity > 0)
      cap = cap > 0 ? MIN (cap, sched_capacity (o)) : sched_capacity (o);
  }
  room = (gdouble) cap * base;
  if (cap == 0 || load <= room)
    return TRUE;
  others = device_others_locked (w, sched);
  if (!mixed) {
    gchar *sum = rate_sum_text (rate, extra);

    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY,
        "%s: total rate %s B/s exceeds capacity %.3g B/s (B_I at cycle "
        "%.6g ms)%s", what, sum, (gdouble) cap, base / 1e6, others);
    g_free (sum);
  } else
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY,
        "%s: one device cycle of %.6g ms may carry %.3g B (each scheduler's "
        "rate times its own cycle), beyond capacity %.3g B/s x %.6g ms = "
        "%.3g B%s", what, base / 1e6, load / 1e9, (gdouble) cap, base / 1e6,
        room / 1e9, others);
  g_free (others);
  return FALSE;
}

/* device_fits_locked for a stream of rate extra joining sched while it
 * runs. The caller holds sched->lock (lock order: scheduler, then worker). */
static gboolean
device_check_locked (GstGpuStreamScheduler * sched, guint64 extra,
    const gchar * what, GError ** error)
{
  DeviceWorker *w = sched->device;
  gboolean fits;

  g_mutex_lock (&w->lock);
  fits = device_fits_locked (w, sched, sched_rate (sched), extra, w->cycle,
      what, error);
  g_mutex_unlock (&w->lock);
  return fits;
}

/* Joins the worker of sched's device, or starts one. With admission on,
 * what every scheduler on that worker carries must fit (device_fits_locked)
 * at the device cycle it would then have. */
static gboolean
device_attach (GstGpuStreamScheduler * sched, GError ** error)
{
  GstObject *key = sched->use_gpu ? sched->cuda_context : NULL;
  DeviceWorker *w = NULL;
  GList *l;

  g_mutex_lock (&workers_lock);
  for (l = workers; l; l = l->next)
    if (((DeviceWorker *) l->data)->cuda_context == key)
      w = l->data;
  if (w) {
    GstClockTime base = MIN (w->cycle, sched->cycle);
    gboolean admission_on = FALSE;
    guint i;

    guint64 declared = __atomic_load_n (&sched->declared, __ATOMIC_RELAXED);

    g_mutex_lock (&w->lock);
    /* the error names the others and, when cycles differ, the device cycle;
     * a declared rate is counted (and refused) whatever the admission of
     * its own streams */
    if (declared && !device_fits_locked (w, sched, 0, declared, base,
            key ? "declared rate cannot join the GPU's worker" :
            "declared rate cannot join the CPU's worker", error)) {
      g_mutex_unlock (&w->lock);
      g_mutex_unlock (&workers_lock);
      return FALSE;
    }
    if (sched->params.admission && !device_fits_locked (w, sched,
            sched_rate (sched), 0, base, key ? "cannot join the GPU's worker" :
            "cannot join the CPU's worker", error)) {
      g_mutex_unlock (&w->lock);
      g_mutex_unlock (&workers_lock);
      return FALSE;
    }
    for (i = 0; i < w->scheds->len; i++)
      admission_on |= ((GstGpuStreamScheduler *)
          g_ptr_array_index (w->scheds, i))->params.admission;
    if (admission_on && !sched->params.admission && !declared)
      GST_WARNING ("a scheduler with admission off joins the %s's worker: "
          "the streams admitted there lose their guarantee if its load does "
          "not fit", key ? "GPU" : "CPU");
    sched->due_at = gst_gpustream_sched_now ();
    g_ptr_array_add (w->scheds, sched);
    device_rebase_locked (w);
    g_mutex_unlock (&w->lock);
  } else {
    w = g_new0 (DeviceWorker, 1);
    w->cuda_context = key ? gst_object_ref (key) : NULL;
    w->rt_priority = sched->rt_priority;
    g_mutex_init (&w->lock);
    g_cond_init (&w->cond);
    w->scheds = g_ptr_array_new ();
    sched->due_at = gst_gpustream_sched_now ();
    g_ptr_array_add (w->scheds, sched);
    device_rebase_locked (w);
    workers = g_list_prepend (workers, w);
    w->thread = g_thread_new ("gps-worker", device_worker_main, w);
  }
  sched->device = w;
  g_mutex_unlock (&workers_lock);
  return TRUE;
}

/* Leaves the worker once it is not running sched's cycle; the last one to
 * leave stops it, and otherwise the device cycle becomes the shortest of
 * those left. */
static void
device_detach (GstGpuStreamScheduler * sched)
{
  DeviceWorker *w = sched->device;
  gboolean last;

  g_mutex_lock (&workers_lock);
  g_mutex_lock (&w->lock);
  g_ptr_array_remove (w->scheds, sched);
  /* the cycle may have taken sched already: let it end */
  while (w->in_cycle)
    g_cond_wait (&w->cond, &w->lock);
  last = w->scheds->len == 0;
  if (last) {
    w->stop = TRUE;
    g_cond_broadcast (&w->cond);
    workers = g_list_remove (workers, w);
  } else {
    device_rebase_locked (w);
  }
  g_mutex_unlock (&w->lock);
  g_mutex_unlock (&workers_lock);
  sched->device = NULL;
  if (!last)
    return;
  g_thread_join (w->thread);
  g_ptr_array_free (w->scheds, TRUE);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  gst_clear_object (&w->cuda_context);
  g_free (w);
}

/* ---- the scheduler ------------------------------------------------------ */

/* Whether the processor runs anything on the GPU (process_gpu, or the split
 * halves, which take the CUDA context). */
static gboolean
proc_has_gpu (const GstGpuStreamProcessor * proc)
{
  return proc->process_gpu != NULL || proc->submit != NULL;
}

GstGpuStreamScheduler *
gst_gpustream_scheduler_new (const GstGpuStreamProcessor * processor,
    gpointer proc_data, const GstGpuStreamSchedCallbacks * callbacks)
{
  GstGpuStreamScheduler *sched;

  g_return_val_if_fail (processor && (processor->process_cpu ||
          processor->submit), NULL);
  g_return_val_if_fail (!processor->submit == !processor->finish, NULL);
  g_return_val_if_fail (callbacks && (callbacks->forward ||
          callbacks->forward_item), NULL);
  sched_debug_init ();

  sched = g_new0 (GstGpuStreamScheduler, 1);
  sched->processor = *processor;
  sched->proc_data = proc_data;
  sched->cb = *callbacks;
  g_mutex_init (&sched->lock);
  sched->params.cycle = 10 * GST_MSECOND;
  sched->params.capacity = 0;
  sched->params.mu = 100 * GST_USECOND;
  sched->params.admission = TRUE;
  sched->params.police_burst = 0;
  return sched;
}

void
gst_gpustream_scheduler_free (GstGpuStreamScheduler * sched)
{
  if (!sched)
    return;
  gst_gpustream_scheduler_stop (sched);
  while (sched->streams)
    gst_gpustream_scheduler_remove_stream (sched, sched->streams->data);
  g_mutex_clear (&sched->lock);
  g_free (sched->win);
  if (sched->cyc_streams)
    g_ptr_array_free (sched->cyc_streams, TRUE);
  g_free (sched);
}

void
gst_gpustream_scheduler_set_params (GstGpuStreamScheduler * sched,
    const GstGpuStreamSchedulerParams * params)
{
  g_mutex_lock (&sched->lock);
  sched->params = *params;
  g_mutex_unlock (&sched->lock);
}

void
gst_gpustream_scheduler_set_batching (GstGpuStreamScheduler * sched,
    GstClockTime cycle)
{
  GstGpuStreamSchedulerParams params;

  gst_gpustream_scheduler_get_params (sched, &params);
  params.cycle = cycle;
  params.capacity = 0;
  params.mu = 0;
  params.admission = FALSE;
  params.police_burst = 0;
  gst_gpustream_scheduler_set_params (sched, &params);
}

gboolean
gst_gpustream_scheduler_declare_rate (GstGpuStreamScheduler * sched,
    guint64 rate, GError ** error)
{
  gboolean fits = TRUE;

  g_mutex_lock (&sched->lock);
  if (sched->device && rate > 0) {
    DeviceWorker *w = sched->device;

    g_mutex_lock (&w->lock);
    fits = device_fits_locked (w, sched, 0, rate, w->cycle,
        w->cuda_context ? "declared rate refused on the GPU's worker" :
        "declared rate refused on the CPU's worker", error);
    g_mutex_unlock (&w->lock);
  }
  if (fits) {
    __atomic_store_n (&sched->declared, rate, __ATOMIC_RELAXED);
    GST_INFO ("%s declares %.3g B/s", sched->processor.name, (gdouble) rate);
  }
  g_mutex_unlock (&sched->lock);
  return fits;
}

guint64
gst_gpustream_scheduler_get_declared_rate (GstGpuStreamScheduler * sched)
{
  return __atomic_load_n (&sched->declared, __ATOMIC_RELAXED);
}

void
gst_gpustream_scheduler_get_params (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedulerParams * params)
{
  g_mutex_lock (&sched->lock);
  *params = sched->params;
  g_mutex_unlock (&sched->lock);
}

gboolean
gst_gpustream_scheduler_is_running (GstGpuStreamScheduler * sched)
{
  return g_atomic_int_get (&sched->running);
}

gboolean
gst_gpustream_scheduler_start (GstGpuStreamScheduler * sched,
    guint n_pipelines, GstGpuStreamBackend backend, GstObject * cuda_context,
    GError ** error)
{
  GList *l;
  guint i;

  g_return_val_if_fail (n_pipelines > 0, FALSE);
  if (g_atomic_int_get (&sched->running))
    return TRUE;

  g_mutex_lock (&sched->lock);
  if (sched->params.cycle == 0) {
    g_mutex_unlock (&sched->lock);
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_INVALID, "cycle must be > 0");
    return FALSE;
  }
  /* the cycle or capacity may have changed since the streams came in */
  if (sched->params.admission && sched->streams &&
      !sched_check_locked (sched, GST_CLOCK_TIME_NONE, 0,
          "the admitted streams no longer fit", error)) {
    g_mutex_unlock (&sched->lock);
    return FALSE;
  }
  sched->cycle = sched->params.cycle;
  sched->rt_priority = sched->params.rt_priority;
  sched->cycles = sched->launches = sched->late = 0;
  sched->lowered = sched->raised = sched->sheds = sched->overruns = 0;
  sched->occ_p50 = sched->occ_max = 0;
  __atomic_store_n (&sched->cap_eff, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&sched->win_lat_max, 0, __ATOMIC_RELAXED);
  sched->win_n = sched->win_len = sched->win_overruns = 0;
  sched->quiet_windows = sched->strikes = 0;
  sched->settling = FALSE;
  sched->packet_cost = sched->cycle_packets = sched->handoff_wait = 0;
  sched->n_costs = 0;
  if (!sched->win)
    sched->win = g_new (gdouble, WATCH_MAX_CYCLES);
  if (!sched->cyc_streams)
    sched->cyc_streams = g_ptr_array_new ();
  for (l = sched->streams; l; l = l->next)
    g_atomic_int_set (&((GstGpuStreamSchedStream *) l->data)->shed, 0);
  sched->n_shed = 0;
  sched->due_cycles = 0;
  sched->due_late = FALSE;
  sched->use_gpu = backend != GST_GPUSTREAM_BACKEND_CPU &&
      cuda_context != NULL && proc_has_gpu (&sched->processor);
  sched->cuda_context = cuda_context ? gst_object_ref (cuda_context) : NULL;
  sched->n_pipelines = n_pipelines;
  sched->pipelines = g_new0 (Pipeline, n_pipelines);
  g_atomic_int_set (&sched->stopping, 0);
  for (i = 0; i < n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    guint j;

    pl->sched = sched;
    pl->index = i;
    for (j = 0; j < 3; j++) {
      pl->bufs[j].cap = INITIAL_BATCH;
      pl->bufs[j].items = g_new (GstGpuStreamSchedItem, INITIAL_BATCH);
    }
    /* the collectors' batch and the spare; the forwarder's gets its area
     * when it comes back */
    batch_area_renew (pl, &pl->bufs[0]);
    batch_area_renew (pl, &pl->bufs[1]);
    /* Table 2, row 1 with the forwarder's batch already released */
    pl->collect_idx = 0;
    pl->spare = 1;
    pl->fwd_idx = 2;
    pl->fwd_done = TRUE;
    g_mutex_init (&pl->lock);
    g_cond_init (&pl->cond);
  }
  for (l = sched->streams; l; l = l->next)
    stream_assign_locked (sched, l->data);
  g_atomic_int_set (&sched->running, 1);
  g_mutex_unlock (&sched->lock);

  for (i = 0; i < n_pipelines; i++) {
    gchar *name = g_strdup_printf ("gps-fwd-%u", i);
    sched->pipelines[i].thread = g_thread_new (name, forwarder_main,
        &sched->pipelines[i]);
    g_free (name);
  }
  if (!device_attach (sched, error)) {
    gst_gpustream_scheduler_stop (sched);
    return FALSE;
  }
  GST_INFO ("started: %u pipelines, cycle %.3f ms, processor %s on %s, "
      "worker shared by %u scheduler(s)", n_pipelines, sched->cycle / 1e6,
      sched->processor.name, sched->use_gpu ? "GPU" : "CPU",
      sched->device->scheds->len);
  return TRUE;
}

void
gst_gpustream_scheduler_stop (GstGpuStreamScheduler * sched)
{
  GList *l;
  guint i;

  if (!g_atomic_int_get (&sched->running))
    return;
  g_atomic_int_set (&sched->stopping, 1);
  if (sched->device)
    device_detach (sched);
  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    g_mutex_lock (&pl->lock);
    pl->stop = TRUE;
    g_cond_broadcast (&pl->cond);
    g_mutex_unlock (&pl->lock);
    g_thread_join (pl->thread);
  }

  g_mutex_lock (&sched->lock);
  g_atomic_int_set (&sched->running, 0);
  for (l = sched->streams; l; l = l->next) {
    GstGpuStreamSchedStream *s = l->data;
    g_atomic_pointer_set (&s->pl, NULL);
  }
  g_mutex_unlock (&sched->lock);

  /* no collector runs now (the caller's contract): drop what was batched */
  for (i = 0; i < sched->n_pipelines; i++) {
    Pipeline *pl = &sched->pipelines[i];
    Batch *b = &pl->bufs[pl->collect_idx];
    guint j, n = MIN ((guint) b->reserved, b->cap);

    for (j = 0; j < n; j++)
      item_drop (sched, &b->items[j]);
    if (pl->pending) {
      /* processed, never handed to the forwarder */
      for (j = 0; j < pl->work_n; j++)
        item_drop (sched, &pl->bufs[pl->work_idx].items[j]);
    }
    for (j = 0; j < 3; j++) {
      batch_area_release (pl, &pl->bufs[j].area);
      g_free (pl->bufs[j].items);
    }
    batch_area_release (pl, &pl->work_area);
    g_mutex_clear (&pl->lock);
    g_cond_clear (&pl->cond);
  }
  g_clear_pointer (&sched->pipelines, g_free);
  sched->n_pipelines = 0;
  gst_clear_object (&sched->cuda_context);
}

void
gst_gpustream_scheduler_get_stats (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedulerStats * st)
{
  g_mutex_lock (&sched->lock);
  st->beta = sched->beta;
  st->theta = sched_theta_locked (sched);
  st->n_streams = g_list_length (sched->streams);
  st->streams_admitted = sched->admitted;
  st->streams_refused = sched->refused;
  st->cycles = sched->cycles;
  st->effective_cycle = g_atomic_int_get (&sched->running) ?
      __atomic_load_n (&sched->effective_cycle, __ATOMIC_RELAXED) : 0;
  st->launches = sched->launches;
  st->late_launches = sched->late;
  st->worst_batch = sched->worst_batch;
  st->last_batch = sched->last_batch;
  st->gone_packets = sched->gone_packets;
  st->gone_drops_policed = sched->gone_policed;
  st->gone_drops_overflow = sched->gone_overflow;
  st->gone_misses = sched->gone_misses;
  st->gone_drops_late = sched->gone_late;
  st->gone_drops_shed = sched->gone_shed;
  st->gone_drops_capped = sched->gone_capped;
  st->realtime = sched_realtime (sched);
  st->capacity_effective = sched_capacity (sched);
  st->capacity_lowered = sched->lowered;
  st->capacity_raised = sched->raised;
  st->streams_shed = sched->n_shed;
  st->sheds = sched->sheds;
  st->overruns = sched->overruns;
  st->occupancy_p50 = sched->occ_p50;
  st->occupancy_max = sched->occ_max;
  g_mutex_unlock (&sched->lock);
}

void
gst_gpustream_scheduler_set_admission_func (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedAdmissionFunc func, gpointer user_data)
{
  g_mutex_lock (&sched->lock);
  sched->admission_func = func;
  sched->admission_data = user_data;
  g_mutex_unlock (&sched->lock);
}

/* ---- calibration -------------------------------------------------------- */

#define CAL_REPEAT 7
#define CAL_MAX_PACKETS (1u << 16)

/* worst time of CAL_REPEAT batches of n packets of size bytes */
static guint64
cal_worst (const GstGpuStreamProcessor * proc, gpointer proc_data,
    gboolean gpu, GstObject * ctx, GstGpuStreamMakePacket make,
    GDestroyNotify drop, gpointer user_data, guint n, guint32 size)
{
  GstGpuStreamSchedItem *items = g_new0 (GstGpuStreamSchedItem, n);
  guint64 worst = 0;
  gint r;
  guint i;

  /* round -1 is not timed: a first batch of a size grows staging areas,
   * and a first GPU launch loads the module (2 ms on an H100, more than a
   * 1 ms cycle), costs the worker pays once, not every cycle */
  for (r = -1; r < CAL_REPEAT; r++) {
    guint64 t0;

    for (i = 0; i < n; i++) {
      items[i].data = make (user_data, size);
      items[i].size = size;
      items[i].flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
    }
    t0 = gst_gpustream_sched_now ();
    if (proc->submit)
      proc->finish (proc_data, proc->submit (proc_data, gpu ? ctx : NULL, 0,
              items, n));
    else if (gpu)
      proc->process_gpu (proc_data, ctx, items, n);
    else
      proc->process_cpu (proc_data, items, n);
    if (r >= 0)
      worst = MAX (worst, gst_gpustream_sched_now () - t0);
    for (i = 0; i < n; i++)
      drop (items[i].data);
  }
  g_free (items);
  return worst;
}

gboolean
gst_gpustream_scheduler_calibrate (const GstGpuStreamProcessor * proc,
    gpointer proc_data, GstGpuStreamBackend backend, GstObject * ctx,
    GstGpuStreamMakePacket make, GDestroyNotify drop, gpointer user_data,
    GstClockTime cycle, guint32 w, gdouble margin,
    GstGpuStreamCalibration * out, GError ** error)
{
  gboolean gpu = backend != GST_GPUSTREAM_BACKEND_CPU && ctx &&
      proc_has_gpu (proc);
  guint64 limit = (guint64) (cycle * (1.0 - margin));
  guint lo = 0, hi = 0, n;
  guint64 t, t_lo = 0;

  sched_debug_init ();
  g_return_val_if_fail (w > 0 && cycle > 0, FALSE);

  /* double the packets per batch until the worst T_S reaches the limit */
  for (n = 1; n <= CAL_MAX_PACKETS; n *= 2) {
    t = cal_worst (proc, proc_data, gpu, ctx, make, drop, user_data, n, w);
    /* one packet over the limit may be the machine's (a preemption on a
     * loaded host), not the processor's: measured twice more before it
     * is said (above one packet, a slow measure only lowers the figure) */
    for (guint again = 0; n == 1 && t >= limit && again < 2; again++)
      t = MIN (t, cal_worst (proc, proc_data, gpu, ctx, make, drop,
              user_data, n, w));
    GST_DEBUG ("calibrate %s: %u x %u B: worst %" G_GUINT64_FORMAT " ns",
        proc->name, n, w, t);
    if (t >= limit) {
      hi = n;
      break;
    }
    lo = n;
    t_lo = t;
  }
  if (lo == 0) {
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY,
        "calibration: one packet of %u B takes %" G_GUINT64_FORMAT
        " ns, not below (1 - %.2f) x cycle %" G_GUINT64_FORMAT " ns",
        w, t, margin, (guint64) cycle);
    return FALSE;
  }
  /* then bisect between the last load under and the first over */
  while (hi && hi - lo > MAX (1u, lo / 32)) {
    guint mid = lo + (hi - lo) / 2;
    t = cal_worst (proc, proc_data, gpu, ctx, make, drop, user_data, mid, w);
    if (t < limit) {
      lo = mid;
      t_lo = t;
    } else {
      hi = mid;
    }
  }

  out->processor = g_strdup (proc->name);
  out->cycle = cycle;
  out->packet_size = w;
  out->margin = margin;
  out->capacity = gst_util_uint64_scale ((guint64) lo * w, GST_SECOND, cycle);
  out->worst_batch = t_lo;
  GST_INFO ("calibrated %s on %s: I %.3f ms, B_I %.4g B/s (worst T_S %.3f ms "
      "at %u x %u B%s)", proc->name, gpu ? "GPU" : "CPU", cycle / 1e6,
      (gdouble) out->capacity, t_lo / 1e6, lo, w,
      hi ? "" : ", the largest load tried");
  return TRUE;
}

/* ---- calibration by trial run ------------------------------------------ */

/* The standalone figure above times the processor alone, in a tight loop
 * on warm caches; the real worker also swaps and hands off batches, shares
 * the machine with the collectors and forwarders, and is preempted. So, as
 * Zhang et al. do, B_I is measured on the real worker: synthetic streams
 * (one collector thread each, paced by absolute times) offer a load for a
 * trial window, and the load passes when every packet of it left within
 * the streams' deadline and none was lost for a full batch. The highest
 * load that passes, less the margin, is B_I. */

#define TRIAL_WARMUP (200 * GST_MSECOND)
#define TRIAL_MAX_DOUBLINGS 10

typedef struct
{
  GstGpuStreamSchedStream *stream;
  GThread *thread;
  guint64 rate;                 /* bytes/s */
  guint32 size;
  guint64 end;                  /* monotonic ns */
  GstGpuStreamMakePacket make;
  GDestroyNotify drop;
  gpointer user_data;
  gint rt_priority;
  guint64 pushed;               /* atomic */
} TrialStream;

/* forwarded or never forwarded (batched when the trial stops), a trial
 * packet is freed by the caller's drop */
static void
trial_release_item (gpointer stream_data, GstGpuStreamSchedItem * item)
{
  TrialStream *ts = stream_data;

  if (item->data)
    ts->drop (item->data);
}

static gpointer
trial_collect (gpointer user_data)
{
  TrialStream *ts = user_data;
  guint64 interval = gst_util_uint64_scale (ts->size, GST_SECOND, ts->rate);
  guint64 start, k;

  /* with the worker's priority: a collector preempted by the machine's
   * other load inside malloc holds the allocator's lock that the
   * forwarder's free waits for, which would stall the worker (priority
   * inversion) and measure the machine, not the worker */
  thread_set_realtime (ts->rt_priority, "trial collector");
  start = gst_gpustream_sched_now ();
  for (k = 0;; k++) {
    guint64 due = start + k * interval, now = gst_gpustream_sched_now ();
    gpointer p;

    if (due >= ts->end)
      break;
    /* sleep only when half a millisecond ahead: waking for every packet
     * would cost more than the work on a small machine */
    if (due > now + 500 * GST_USECOND)
      g_usleep ((due - now) / 1000);
    p = ts->make (ts->user_data, ts->size);
    if (gst_gpustream_sched_stream_push (ts->stream, p, ts->size,
            GST_GPUSTREAM_SCHED_ITEM_PACKET))
      atomic_add64 (&ts->pushed, 1);
    else
      ts->drop (p);
  }
  return NULL;
}

typedef struct
{
  guint64 pushed, packets, misses, overflow;
} TrialCount;

static void
trial_count (TrialStream * ts, guint n, TrialCount * c)
{
  guint i;

  memset (c, 0, sizeof *c);
  for (i = 0; i < n; i++) {
    GstGpuStreamSchedStreamStats st;

    gst_gpustream_sched_stream_get_stats (ts[i].stream, &st);
    c->pushed += atomic_get64 (&ts[i].pushed);
    c->packets += st.packets;
    c->misses += st.misses;
    c->overflow += st.drops_overflow;
  }
}

/* One trial: the worker under load bytes/s for the window. TRUE when it
 * met every deadline, lost nothing to a full batch and kept up: it
 * forwarded (nearly) what was collected in the window, so no backlog grew
 * (one that would pass the deadline only after the window), and the
 * collectors did offer (nearly) the load. */
static gboolean
trial_once (const GstGpuStreamProcessor * proc, gpointer proc_data,
    GstGpuStreamBackend backend, GstObject * ctx, GstGpuStreamMakePacket make,
    GDestroyNotify drop, gpointer user_data, GstClockTime cycle, guint32 w,
    const GstGpuStreamTrialParams * tp, guint64 load, GError ** error)
{
  static const GstGpuStreamSchedCallbacks cb = { NULL, NULL,
    trial_release_item, trial_release_item
  };
  GstGpuStreamScheduler *sched;
  GstGpuStreamSchedulerParams params = { 0 };
  TrialStream *ts;
  TrialCount c0, c1;
  guint i, n = tp->n_streams;
  guint64 expected;
  gboolean ok = FALSE;

  sched = gst_gpustream_scheduler_new (proc, proc_data, &cb);
  params.cycle = cycle;
  params.mu = tp->mu;
  params.admission = FALSE;
  /* a collector stalled by the machine and catching up is policed, not
   * counted against the worker */
  params.police_burst = 50 * GST_MSECOND;
  params.rt_priority = tp->rt_priority;
  gst_gpustream_scheduler_set_params (sched, &params);
  ts = g_new0 (TrialStream, n);
  for (i = 0; i < n; i++) {
    ts[i].rate = MAX (load / n, 1);
    ts[i].size = w;
    ts[i].make = make;
    ts[i].drop = drop;
    ts[i].user_data = user_data;
    ts[i].rt_priority = tp->rt_priority;
    ts[i].stream = gst_gpustream_scheduler_add_stream (sched, w, tp->deadline,
        ts[i].rate, &ts[i], NULL, NULL);
    g_assert (ts[i].stream);
  }
  if (!gst_gpustream_scheduler_start (sched, tp->n_pipelines, backend, ctx,
          error))
    goto done;
  for (i = 0; i < n; i++) {
    ts[i].end = gst_gpustream_sched_now () + TRIAL_WARMUP + tp->window +
        tp->deadline;
    ts[i].thread = g_thread_new ("gps-trial", trial_collect, &ts[i]);
  }
  /* the first cycles grow the batches to the load: not counted */
  g_usleep (TRIAL_WARMUP / 1000);
  trial_count (ts, n, &c0);
  g_usleep (tp->window / 1000);
  trial_count (ts, n, &c1);
  for (i = 0; i < n; i++)
    g_thread_join (ts[i].thread);
  gst_gpustream_scheduler_stop (sched);

  expected = gst_util_uint64_scale (load, tp->window, GST_SECOND) / w;
  ok = c1.misses == c0.misses && c1.overflow == c0.overflow &&
      (c1.packets - c0.packets) * 100 >= (c1.pushed - c0.pushed) * 98 &&
      (c1.pushed - c0.pushed) * 100 >= expected * 97;
  GST_DEBUG ("trial %s, I %.3f ms, %.4g B/s: %" G_GUINT64_FORMAT " packets "
      "offered of %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " forwarded, %"
      G_GUINT64_FORMAT " misses, %" G_GUINT64_FORMAT " overflow: %s",
      proc->name, cycle / 1e6, (gdouble) load, c1.pushed - c0.pushed,
      expected, c1.packets - c0.packets, c1.misses - c0.misses,
      c1.overflow - c0.overflow, ok ? "met" : "missed");
done:
  for (i = 0; i < n; i++)
    gst_gpustream_scheduler_remove_stream (sched, ts[i].stream);
  gst_gpustream_scheduler_free (sched);
  g_free (ts);
  return ok;
}

/* A load is missed only when a second trial misses it too: one stall of a
 * shared machine (another program, the trial's own collectors preempted)
 * must not pull B_I down for good; the margin is what covers such stalls
 * in service. */
static gboolean
trial_run (const GstGpuStreamProcessor * proc, gpointer proc_data,
    GstGpuStreamBackend backend, GstObject * ctx, GstGpuStreamMakePacket make,
    GDestroyNotify drop, gpointer user_data, GstClockTime cycle, guint32 w,
    const GstGpuStreamTrialParams * tp, guint64 load, GError ** error)
{
  guint attempt;

  for (attempt = 0; attempt < 2; attempt++) {
    if (trial_once (proc, proc_data, backend, ctx, make, drop, user_data,
            cycle, w, tp, load, error))
      return TRUE;
    if (error && *error)
      break;
  }
  return FALSE;
}

/* the cache: one calibration per device, processor, cycle and packet size */
static GMutex cal_cache_lock;
static GHashTable *cal_cache;

/* "cpu", or "cuda:N" for the CUDA context of device N */
static gchar *
cal_device_name (GstObject * ctx)
{
  guint id = 0;

  if (!ctx)
    return g_strdup ("cpu");
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (ctx),
          "cuda-device-id"))
    g_object_get (ctx, "cuda-device-id", &id, NULL);
  return g_strdup_printf ("cuda:%u", id);
}

static gchar *
cal_cache_key (GstObject * ctx, const gchar * processor, GstClockTime cycle,
    guint32 w)
{
  gchar *dev = cal_device_name (ctx);
  gchar *key = g_strdup_printf ("%s|%s|%" G_GUINT64_FORMAT "|%u", dev,
      processor, (guint64) cycle, w);

  g_free (dev);
  return key;
}

gboolean
gst_gpustream_calibration_lookup (GstObject * cuda_context,
    const gchar * processor, GstClockTime cycle, guint32 packet_size,
    GstGpuStreamCalibration * out)
{
  gchar *key = cal_cache_key (cuda_context, processor, cycle, packet_size);
  GstGpuStreamCalibration *cal;

  g_mutex_lock (&cal_cache_lock);
  cal = cal_cache ? g_hash_table_lookup (cal_cache, key) : NULL;
  if (cal) {
    *out = *cal;
    out->processor = g_strdup (cal->processor);
  }
  g_mutex_unlock (&cal_cache_lock);
  g_free (key);
  return cal != NULL;
}

static void
cal_free (gpointer data)
{
  gst_gpustream_calibration_clear (data);
  g_free (data);
}

static void
cal_cache_store (GstObject * ctx, const GstGpuStreamCalibration * cal)
{
  GstGpuStreamCalibration *copy = g_new (GstGpuStreamCalibration, 1);

  *copy = *cal;
  copy->processor = g_strdup (cal->processor);
  g_mutex_lock (&cal_cache_lock);
  if (!cal_cache)
    cal_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        cal_free);
  g_hash_table_replace (cal_cache, cal_cache_key (ctx, cal->processor,
          cal->cycle, cal->packet_size), copy);
  g_mutex_unlock (&cal_cache_lock);
}

void
gst_gpustream_trial_params_init (GstGpuStreamTrialParams * tp)
{
  memset (tp, 0, sizeof *tp);
  tp->n_pipelines = 2;
  tp->n_streams = 4;
  tp->mu = 100 * GST_USECOND;
  tp->window = GST_SECOND;
  tp->margin = GST_GPUSTREAM_TRIAL_MARGIN;
  tp->steps = 5;
}

gboolean
gst_gpustream_scheduler_calibrate_trial (const GstGpuStreamProcessor * proc,
    gpointer proc_data, GstGpuStreamBackend backend, GstObject * ctx,
    GstGpuStreamMakePacket make, GDestroyNotify drop, gpointer user_data,
    GstClockTime cycle, guint32 w, const GstGpuStreamTrialParams * trial,
    GstGpuStreamCalibration * out, GError ** error)
{
  GstGpuStreamTrialParams tp;
  GstGpuStreamCalibration first = { 0 };
  guint64 lo = 0, hi, met = 0;
  GstObject *dev = backend != GST_GPUSTREAM_BACKEND_CPU && ctx &&
      proc_has_gpu (proc) ? ctx : NULL;
  guint i;

  sched_debug_init ();
  g_return_val_if_fail (w > 0 && cycle > 0, FALSE);
  if (trial)
    tp = *trial;
  else
    gst_gpustream_trial_params_init (&tp);
  tp.n_pipelines = MAX (tp.n_pipelines, 1);
  tp.n_streams = MAX (tp.n_streams, 1);
  if (tp.deadline == 0)
    tp.deadline = 3 * cycle + tp.mu;
  if (tp.window == 0)
    tp.window = GST_SECOND;

  /* the first guess: the processor alone at T_S under 80 % of I */
  if (!gst_gpustream_scheduler_calibrate (proc, proc_data, backend, ctx,
          make, drop, user_data, cycle, w, 0.2, &first, error))
    return FALSE;
  /* a stall of the tight loop (a loaded machine) makes a low first guess:
   * while the worker meets the load, the search doubles it (up to 2^10 x)
   * before it bisects */
  hi = first.capacity;
  for (i = 0; i <= TRIAL_MAX_DOUBLINGS; i++) {
    if (!trial_run (proc, proc_data, backend, ctx, make, drop, user_data,
            cycle, w, &tp, hi, error))
      break;
    lo = met = hi;
    hi *= 2;
  }
  if (i > TRIAL_MAX_DOUBLINGS)
    hi = 0;                     /* met at every load tried: enough */
  /* bisect between a load met (0: nothing offered) and one missed */
  for (i = 0; hi && i < tp.steps && !(error && *error); i++) {
    guint64 mid = lo + (hi - lo) / 2;

    if (trial_run (proc, proc_data, backend, ctx, make, drop, user_data,
            cycle, w, &tp, mid, error))
      lo = met = mid;
    else
      hi = mid;
  }
  if (error && *error) {
    gst_gpustream_calibration_clear (&first);
    return FALSE;
  }
  if (met == 0) {
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY,
        "calibration: the worker missed deadlines of %.6g ms at every load "
        "tried, down to %.3g B/s (cycle %.6g ms; the processor alone: %.3g "
        "B/s)", tp.deadline / 1e6, (gdouble) hi, cycle / 1e6,
        (gdouble) first.capacity);
    gst_gpustream_calibration_clear (&first);
    return FALSE;
  }
  out->processor = g_strdup (proc->name);
  out->cycle = cycle;
  out->packet_size = w;
  out->margin = tp.margin;
  out->capacity = (guint64) (met * (1.0 - tp.margin));
  out->worst_batch = first.worst_batch;
  out->standalone = first.capacity;
  out->trial_met = met;
  GST_INFO ("calibrated %s by trial: I %.3f ms, B_I %.4g B/s (met every "
      "deadline of %.3f ms at %.4g B/s, less %.0f %%; the processor alone "
      "%.4g B/s)", proc->name, cycle / 1e6, (gdouble) out->capacity,
      tp.deadline / 1e6, (gdouble) met, tp.margin * 100,
      (gdouble) first.capacity);
  gst_gpustream_calibration_clear (&first);
  cal_cache_store (dev, out);
  return TRUE;
}

#define CAL_GROUP "calibration"

gboolean
gst_gpustream_calibration_save (const GstGpuStreamCalibration * cal,
    const gchar * path, GError ** error)
{
  GKeyFile *kf = g_key_file_new ();
  gboolean ret;

  g_key_file_set_string (kf, CAL_GROUP, "processor",
      cal->processor ? cal->processor : "");
  g_key_file_set_uint64 (kf, CAL_GROUP, "cycle-ns", cal->cycle);
  g_key_file_set_uint64 (kf, CAL_GROUP, "packet-size", cal->packet_size);
  g_key_file_set_double (kf, CAL_GROUP, "margin", cal->margin);
  g_key_file_set_uint64 (kf, CAL_GROUP, "capacity-bytes-per-second",
      cal->capacity);
  g_key_file_set_uint64 (kf, CAL_GROUP, "worst-batch-ns", cal->worst_batch);
  if (cal->trial_met) {
    g_key_file_set_uint64 (kf, CAL_GROUP, "standalone-bytes-per-second",
        cal->standalone);
    g_key_file_set_uint64 (kf, CAL_GROUP, "trial-met-bytes-per-second",
        cal->trial_met);
  }
  ret = g_key_file_save_to_file (kf, path, error);
  g_key_file_free (kf);
  return ret;
}

gboolean
gst_gpustream_calibration_load (GstGpuStreamCalibration * cal,
    const gchar * path, GError ** error)
{
  GKeyFile *kf = g_key_file_new ();
  GError *err = NULL;
  gboolean ret = FALSE;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    goto done;
  cal->processor = g_key_file_get_string (kf, CAL_GROUP, "processor", &err);
  if (!err)
    cal->cycle = g_key_file_get_uint64 (kf, CAL_GROUP, "cycle-ns", &err);
  if (!err)
    cal->packet_size = g_key_file_get_uint64 (kf, CAL_GROUP, "packet-size",
        &err);
  if (!err)
    cal->margin = g_key_file_get_double (kf, CAL_GROUP, "margin", &err);
  if (!err)
    cal->capacity = g_key_file_get_uint64 (kf, CAL_GROUP,
        "capacity-bytes-per-second", &err);
  if (!err)
    cal->worst_batch = g_key_file_get_uint64 (kf, CAL_GROUP,
        "worst-batch-ns", &err);
  if (!err && g_key_file_has_key (kf, CAL_GROUP, "trial-met-bytes-per-second",
          NULL)) {
    cal->standalone = g_key_file_get_uint64 (kf, CAL_GROUP,
        "standalone-bytes-per-second", NULL);
    cal->trial_met = g_key_file_get_uint64 (kf, CAL_GROUP,
        "trial-met-bytes-per-second", NULL);
  }
  if (err || cal->cycle == 0) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "%s: not a calibration file (%s)", path,
        err ? err->message : "cycle-ns is 0");
    g_clear_error (&err);
    g_clear_pointer (&cal->processor, g_free);
    goto done;
  }
  ret = TRUE;
done:
  g_key_file_free (kf);
  return ret;
}

void
gst_gpustream_calibration_clear (GstGpuStreamCalibration * cal)
{
  g_clear_pointer (&cal->processor, g_free);
}
