/* gpsscheduler.h: the real-time scheduler, the GPU-centric model of Kai
 * Zhang, Jiayu Hu, Bei Hua, "A holistic approach to build real-time stream
 * processing system with GPU" (2015), sections 4 and 5.
 *
 * Streams declare <w, d, v> (max packet size in bytes, deadline in ns, max
 * rate in bytes/s) and are admitted only while the paper's admission
 * condition holds, which guarantees that every admitted packet leaves
 * within 3 I + mu of its arrival (when a batch takes less than I):
 *
 *     beta + v <= B_I            (bytes/s; beta = sum of admitted v)
 *     min(theta, d) > 3 I + mu   (ns; theta = min of admitted d)
 *
 * Collectors (the callers of gst_gpustream_sched_stream_push, one streaming
 * thread per stream) batch packets into their pipeline's collector buffer
 * without taking a lock. One worker thread wakes at P_k = P_0 + k I
 * (absolute times on the monotonic clock: no drift), swaps each pipeline's
 * collector buffer for an empty one, runs the processor on every batch (or
 * starts every batch, on lanes of their own, before it waits for any) and
 * hands each processed buffer to the pipeline's forwarder thread, which calls
 * the forward callback item by item, in order. Three buffers per pipeline
 * rotate collector -> worker -> forwarder -> collector (Table 2): packets are
 * never copied between stages.
 *
 * The worker belongs to the device: schedulers started on the same device
 * (CUDA context, or the CPU) share one worker thread, which starts all
 * their batches at every P_k; with different cycles, the device's cycle is
 * the shortest and the others run every floor(I / it) of its cycles.
 * Admission counts all their streams against the capacity (gpsscheduler.c
 * says more). The CPU
 * backend runs the processor's CPU stage in the worker, so the whole model
 * runs, and is tested, without a GPU. */
#ifndef GPS_SCHEDULER_H
#define GPS_SCHEDULER_H

#include <gst/gst.h>
#include "gstgpustream.h"

G_BEGIN_DECLS

/* ---- items and processors --------------------------------------------- */

typedef struct _GstGpuStreamScheduler GstGpuStreamScheduler;
typedef struct _GstGpuStreamSchedStream GstGpuStreamSchedStream;

/* Set on items that are packets; other items (events, markers) pass through
 * in order but are neither processed, policed nor counted. */
#define GST_GPUSTREAM_SCHED_ITEM_PACKET (1u << 0)
/* Set by the scheduler (keep_deadlines) at launch on a packet that can no
 * longer leave by its deadline: it is dropped and counted, never forwarded,
 * and gst_gpustream_sched_item_is_flushed is TRUE for it, so that a
 * processor may skip its work (a worker behind catches up). */
#define GST_GPUSTREAM_SCHED_ITEM_LATE (1u << 14)
/* Left to the processor: the scheduler neither sets nor reads it (a
 * processor with collect marks the items it collected). */
#define GST_GPUSTREAM_SCHED_ITEM_PROCESSOR (1u << 15)

typedef struct {
  gpointer data;                    /* owned by the item until forwarded */
  GstGpuStreamSchedStream *stream;  /* holds a reference */
  guint64 arrival;                  /* monotonic ns, taken by the collector */
  guint32 size;                     /* bytes */
  guint16 flags;
  guint16 epoch;                    /* stream flush epoch at collection */
} GstGpuStreamSchedItem;

/* The processing stage of a pipeline: runs on a whole batch. It may replace
 * items[i].data (freeing the old data) but not reorder or remove items; it
 * must skip items without GST_GPUSTREAM_SCHED_ITEM_PACKET. */
typedef struct {
  const gchar *name;
  void (*process_cpu) (gpointer proc_data, GstGpuStreamSchedItem * items,
      guint n_items);
  /* NULL when the stage has no GPU path: the worker then runs process_cpu. */
  void (*process_gpu) (gpointer proc_data, GstObject * cuda_context,
      GstGpuStreamSchedItem * items, guint n_items);
  /* Optional (both or neither): the batch in two halves, so that the worker
   * starts the batch of every pipeline on the device before it waits for
   * any (Zhang et al., section 5: N CUDA streams, the copies and kernel of one
   * pipeline overlapping those of the others). When set, they replace
   * process_cpu / process_gpu on both backends (cuda_context is NULL on the
   * CPU backend, and NULL when the scheduler runs on the CPU): every cycle
   * the worker calls submit for each non-empty batch, then finish for each,
   * in the same order. submit starts the work and returns what finish needs;
   * finish waits for it and leaves items as process_* would. lane is
   * distinct among the batches in flight together (0, 1, ... in submission
   * order, per cycle of the device's worker): a processor may keep one CUDA
   * stream and staging area per lane. */
  gpointer (*submit) (gpointer proc_data, GstObject * cuda_context,
      guint lane, GstGpuStreamSchedItem * items, guint n_items);
  void (*finish) (gpointer proc_data, gpointer submitted);
  /* Optional (all four or none, with submit / finish): the per-packet half
   * on the collectors' threads (Zhang et al., section 5: each collector
   * copies its packet into the batch as it arrives, and the worker touches
   * batches only). Every batch a collector fills has an area of the
   * processor's, made by area_new on the worker while no collector sees the
   * batch (cuda_context as for submit; cap: the batch's item slots); NULL
   * is an area too (the processor has none to give: collect then leaves
   * items alone). collect runs on the collector's thread for an item that
   * got a slot, before the worker can see the slot: it may replace
   * item->data as submit may, and set GST_GPUSTREAM_SCHED_ITEM_PROCESSOR.
   * Collectors of several streams call it at once on one area. The worker
   * then calls submit_area in place of submit, handing over the batch's
   * area (the processor's to release from then on, once finish is done with
   * it; the output buffers may hold it longer); area_free releases an area
   * (never NULL) that was never submitted. */
  gpointer (*area_new) (gpointer proc_data, GstObject * cuda_context,
      guint cap);
  void (*area_free) (gpointer proc_data, gpointer area);
  void (*collect) (gpointer proc_data, gpointer area,
      GstGpuStreamSchedItem * item);
  gpointer (*submit_area) (gpointer proc_data, GstObject * cuda_context,
      guint lane, gpointer area, GstGpuStreamSchedItem * items,
      guint n_items);
} GstGpuStreamProcessor;

typedef struct {
  /* called by the forwarder thread, in collection order per stream; takes
   * ownership of data. stream_data is the add_stream user data. */
  void (*forward) (gpointer stream_data, gpointer data, guint16 flags);
  /* frees data that will never be forwarded (stream gone, flushed, stop) */
  void (*drop) (gpointer data);
  /* Optional (both or neither), replacing forward and drop: the whole item
   * (its flags, size and flush epoch), for a caller that keeps its own
   * accounting per item (gpsschedclient.h). The item is the scheduler's:
   * take item->data, not the item. */
  void (*forward_item) (gpointer stream_data, GstGpuStreamSchedItem * item);
  void (*drop_item) (gpointer stream_data, GstGpuStreamSchedItem * item);
} GstGpuStreamSchedCallbacks;

/* ---- the scheduler ------------------------------------------------------ */

#define GST_GPUSTREAM_SCHEDULER_ERROR (gst_gpustream_scheduler_error_quark ())
GQuark gst_gpustream_scheduler_error_quark (void);

typedef enum {
  GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY,  /* beta + v > B_I */
  GST_GPUSTREAM_SCHEDULER_ERROR_DEADLINE,  /* min(theta, d) <= 3 I + mu */
  GST_GPUSTREAM_SCHEDULER_ERROR_INVALID,   /* w, d or v is 0 */
} GstGpuStreamSchedulerError;

typedef struct {
  GstClockTime cycle;               /* I, ns */
  guint64 capacity;                 /* B_I, bytes/s; 0 = no rate condition */
  GstClockTime mu;                  /* pre-processing time of a packet, ns */
  gboolean admission;               /* FALSE: admit everything (and count) */
  GstClockTime police_burst;        /* token bucket depth in time of v;
                                     * 0 = one cycle */
  gint rt_priority;                 /* > 0: worker and forwarders ask for
                                     * SCHED_FIFO at this priority (logged
                                     * and ignored when denied) */
  /* TRUE: load is shed rather than deadlines missed, on whatever the
   * machine leaves the worker (beyond the paper, which owns its cores):
   * - a packet that cannot leave by its deadline at launch is dropped
   *   (drops_late), so a worker behind catches up instead of making every
   *   next batch late too (streams whose d is above 3 I + mu only: the
   *   others, admitted with admission off, miss); the most recently
   *   admitted streams' packets go first, until the older streams' fit;
   * - with a capacity, the worker watches its cycles (from P_k to the end
   *   of the cycle's hand-offs, as a fraction of the device cycle), in
   *   windows of about 100 ms: after two windows in a row with half of
   *   their cycles overrun, a packet dropped late or one that left
   *   after half the tightest deadline, the capacity admission uses is
   *   lowered to what the measured cycles say would keep the 90th
   *   percentile at 0.75 of I; with admission on, the most recently
   *   admitted streams are shed (their packets dropped, drops_shed) until
   *   the rest fits, and new streams are refused against it; after 20
   *   quiet windows it is raised back in steps towards the capacity, the
   *   shed streams coming back oldest first;
   * - with admission off and a capacity, a cycle's batches take at most
   *   capacity x I bytes (the rest refused at the push: drops_capped), so
   *   that latency stays within 3 I + mu.
   * Each change of the capacity reaches the admission function. */
  gboolean keep_deadlines;
} GstGpuStreamSchedulerParams;

GstGpuStreamScheduler *gst_gpustream_scheduler_new (const
    GstGpuStreamProcessor * processor, gpointer proc_data,
    const GstGpuStreamSchedCallbacks * callbacks);
void gst_gpustream_scheduler_free (GstGpuStreamScheduler * sched);

/* Parameters apply to admission at once and to timing at the next start. */
void gst_gpustream_scheduler_set_params (GstGpuStreamScheduler * sched,
    const GstGpuStreamSchedulerParams * params);
void gst_gpustream_scheduler_get_params (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedulerParams * params);

/* For elements that only batch through the scheduler (gpusrtpenc's
 * max-latency, ncencoder's and dxtenc's cycle): parameters for cycle with
 * admission off and no policing; their streams declare this rate and a
 * deadline of GST_GPUSTREAM_SCHED_BATCHING_DEADLINE (3 I + mu, the bound the admission condition guarantees). */
#define GST_GPUSTREAM_SCHED_UNLIMITED_RATE G_GUINT64_CONSTANT (1000000000000)
/* the shortest cycle they accept: below it the worker's own work (swaps,
 * hand-offs, waking up) eats the cycle */
#define GST_GPUSTREAM_SCHED_MIN_CYCLE (100 * GST_USECOND)
#define GST_GPUSTREAM_SCHED_BATCHING_DEADLINE(cycle) (3 * (cycle) + 1)
void gst_gpustream_scheduler_set_batching (GstGpuStreamScheduler * sched,
    GstClockTime cycle);
/* A batching scheduler's rate, bytes/s, for all its streams together (0:
 * none; its streams then count GST_GPUSTREAM_SCHED_UNLIMITED_RATE each, so
 * that no scheduler with a capacity admits anything beside it). The device's
 * admission counts it exactly like an admitted stream's v, whatever the
 * scheduler's own admission setting: at start, the start fails (error set,
 * naming the rate, the rate already admitted on the device, the capacity
 * and the cycle) when it does not fit beside the others on the device's
 * worker; while running, the new rate is checked at once and, refused,
 * FALSE is returned (error set) and the old rate stays. */
gboolean gst_gpustream_scheduler_declare_rate (GstGpuStreamScheduler * sched,
    guint64 rate, GError ** error);
guint64 gst_gpustream_scheduler_get_declared_rate (GstGpuStreamScheduler *
    sched);

/* Starts n_pipelines forwarders and joins the device's worker (starting it
 * if this is the first). backend CPU runs process_cpu;
 * GPU (or HYBRID) runs process_gpu with cuda_context when the processor has
 * one. Fails (error set) when admission is on and the admitted set is no
 * longer schedulable with the current parameters, or, with the streams of
 * the other schedulers on that worker, exceeds the capacity. */
gboolean gst_gpustream_scheduler_start (GstGpuStreamScheduler * sched,
    guint n_pipelines, GstGpuStreamBackend backend, GstObject * cuda_context,
    GError ** error);
/* Stops the threads; items still in flight are dropped. */
void gst_gpustream_scheduler_stop (GstGpuStreamScheduler * sched);
gboolean gst_gpustream_scheduler_is_running (GstGpuStreamScheduler * sched);

/* Admission (section 4.4). Returns NULL and sets error naming the limit when
 * refused. Any time, running or not. The stream keeps stream_data until it
 * is freed (after remove and once no item refers to it). */
GstGpuStreamSchedStream *gst_gpustream_scheduler_add_stream
    (GstGpuStreamScheduler * sched, guint32 w, GstClockTime d, guint64 v,
    gpointer stream_data, GDestroyNotify destroy, GError ** error);
/* The stream leaves: beta and theta are updated at once, its items still in
 * flight are dropped, not forwarded. */
void gst_gpustream_scheduler_remove_stream (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedStream * stream);

/* The collector path: no lock. Returns TRUE when the item is batched.
 * FALSE: not running, policed (over the declared rate) or batch full; the
 * caller keeps data. Call from one thread per stream at a time. */
gboolean gst_gpustream_sched_stream_push (GstGpuStreamSchedStream * stream,
    gpointer data, guint32 size, guint16 flags);
/* Items collected before this call and not yet forwarded are dropped. */
void gst_gpustream_sched_stream_flush (GstGpuStreamSchedStream * stream);
/* TRUE when the item's stream was flushed (or removed) after the item was
 * collected: it will be dropped, so a processor may skip its work. */
gboolean gst_gpustream_sched_item_is_flushed (const GstGpuStreamSchedItem *
    item);

typedef struct {
  guint32 w;
  GstClockTime d;
  guint64 v;
  guint pipeline;
  guint64 packets;                  /* forwarded */
  guint64 bytes;
  guint64 drops_policed;            /* over the declared rate */
  guint64 drops_overflow;           /* collector buffer full */
  guint64 drops_late;               /* could not leave by d (keep_deadlines) */
  guint64 drops_shed;               /* while the stream was shed */
  guint64 drops_capped;             /* over a cycle's bytes, admission off */
  gboolean shed;                    /* shed now (keep_deadlines) */
  guint64 misses;                   /* latency > d */
  GstClockTime latency_p50;         /* upper bound of the histogram bucket */
  GstClockTime latency_p99;
  GstClockTime latency_max;         /* exact */
} GstGpuStreamSchedStreamStats;

void gst_gpustream_sched_stream_get_stats (GstGpuStreamSchedStream * stream,
    GstGpuStreamSchedStreamStats * stats);

typedef struct {
  guint64 beta;                     /* admitted rate, bytes/s */
  GstClockTime theta;               /* min admitted deadline, NONE if none */
  guint n_streams;
  guint64 streams_admitted;         /* since creation */
  guint64 streams_refused;
  guint64 cycles;                   /* its own cycles since start (grid) */
  GstClockTime effective_cycle;     /* its cycle on the device's worker:
                                     * I rounded down to a multiple of the
                                     * device cycle; 0 when stopped */
  guint64 launches;                 /* cycles that ran at least one batch */
  guint64 late_launches;            /* launched a whole cycle late or more */
  GstClockTime worst_batch;         /* worst T_S seen, ns */
  GstClockTime last_batch;
  /* of streams already removed (current streams: per-stream stats) */
  guint64 gone_packets, gone_drops_policed, gone_drops_overflow, gone_misses;
  guint64 gone_drops_late, gone_drops_shed, gone_drops_capped;
  /* the worker watching its cycles (keep_deadlines) */
  gboolean realtime;                /* the worker got SCHED_FIFO */
  guint64 capacity_effective;       /* what admission uses now, bytes/s */
  guint64 capacity_lowered;         /* times lowered, since start */
  guint64 capacity_raised;
  guint streams_shed;               /* now */
  guint64 sheds;                    /* streams shed, since start */
  guint64 overruns;                 /* cycles that ended after the next P_k */
  gdouble occupancy_p50;            /* of the last window of cycles: (end - */
  gdouble occupancy_max;            /* P_k) / device cycle */
} GstGpuStreamSchedulerStats;

void gst_gpustream_scheduler_get_stats (GstGpuStreamScheduler * sched,
    GstGpuStreamSchedulerStats * stats);

/* A change of the capacity admission uses (keep_deadlines), from the
 * worker's thread, no lock held: shed and restored name the streams (their
 * stream_data) shed or brought back by it, valid during the call. */
typedef struct {
  guint64 capacity_before;          /* bytes/s */
  guint64 capacity_after;
  guint64 capacity;                 /* the parameter, the ceiling */
  guint64 beta;                     /* admitted, shed streams included */
  guint64 carried;                  /* the streams not shed */
  gdouble occupancy_p50;            /* the window that decided it */
  gdouble occupancy_max;
  guint window_cycles;
  guint window_overruns;
  gboolean realtime;
  gpointer *shed;
  guint n_shed;
  gpointer *restored;
  guint n_restored;
} GstGpuStreamSchedAdmissionChange;

typedef void (*GstGpuStreamSchedAdmissionFunc) (gpointer user_data,
    const GstGpuStreamSchedAdmissionChange * change);
void gst_gpustream_scheduler_set_admission_func (GstGpuStreamScheduler *
    sched, GstGpuStreamSchedAdmissionFunc func, gpointer user_data);

/* Monotonic clock in ns (CLOCK_MONOTONIC), the scheduler's time base. */
guint64 gst_gpustream_sched_now (void);

/* ---- calibration (beyond the paper) ----------------------------------- */

typedef struct {
  gchar *processor;                 /* name */
  GstClockTime cycle;               /* I */
  guint32 packet_size;              /* w used for the batches */
  gdouble margin;                   /* worst T_S kept below (1 - margin) I */
  guint64 capacity;                 /* B_I, bytes/s */
  GstClockTime worst_batch;         /* worst T_S at that load */
  /* by trial run only (0 otherwise): */
  guint64 standalone;               /* the processor alone: the first guess */
  guint64 trial_met;                /* the highest load the worker met */
} GstGpuStreamCalibration;

/* Makes a packet of size bytes for the processor (freed with drop). */
typedef gpointer (*GstGpuStreamMakePacket) (gpointer user_data, guint32 size);

/* Measures the worst batch time T_S of processor over growing loads (each
 * load repeated, worst kept) and sets out->capacity to the largest load per
 * second whose worst T_S < (1 - margin) I. Runs in the caller's thread. */
gboolean gst_gpustream_scheduler_calibrate (const GstGpuStreamProcessor *
    processor, gpointer proc_data, GstGpuStreamBackend backend,
    GstObject * cuda_context, GstGpuStreamMakePacket make_packet,
    GDestroyNotify drop, gpointer user_data, GstClockTime cycle,
    guint32 packet_size, gdouble margin, GstGpuStreamCalibration * out,
    GError ** error);
/* B_I by trial run of the real worker, as Zhang et al. measure it: the
 * standalone figure above (worst T_S under 80 % of I) is the first guess;
 * the worker then runs processor on n_streams synthetic streams (collector
 * threads calling make_packet, which must be thread-safe, and drop) at
 * candidate loads, each for a trial window after a warm-up of 200 ms: up
 * from the guess by doubling while met, then bisecting `steps` times
 * between the highest load met and the lowest missed. A load is met when,
 * in one of two trials, no packet of the window left later than the
 * deadline, none was lost to a full batch, the worker forwarded what was
 * collected (no backlog grew) and the collectors offered the load;
 * out->capacity is the highest load met times (1 - margin). The result is cached per device, processor, cycle and
 * packet size for the process (gst_gpustream_calibration_lookup). The
 * trial joins the device's worker: what runs there shares it. Runs in the
 * caller's thread, for (steps + 1 + the doublings + the loads missed) x
 * (window + 0.2 s) plus the first guess. */
#define GST_GPUSTREAM_TRIAL_MARGIN 0.3
typedef struct {
  guint n_pipelines;                /* the worker's pipelines (2) */
  guint n_streams;                  /* synthetic streams (4) */
  GstClockTime deadline;            /* d of the streams (0: 3 I + mu) */
  GstClockTime mu;                  /* (100 us) */
  GstClockTime window;              /* one trial's length (1 s) */
  gdouble margin;                   /* (GST_GPUSTREAM_TRIAL_MARGIN) */
  guint steps;                      /* bisection steps after the guess (5) */
  gint rt_priority;                 /* worker, forwarders and the
                                     * synthetic collectors (0) */
} GstGpuStreamTrialParams;

/* the defaults, in brackets above */
void gst_gpustream_trial_params_init (GstGpuStreamTrialParams * trial);
/* trial NULL: the defaults. */
gboolean gst_gpustream_scheduler_calibrate_trial (const GstGpuStreamProcessor
    * processor, gpointer proc_data, GstGpuStreamBackend backend,
    GstObject * cuda_context, GstGpuStreamMakePacket make_packet,
    GDestroyNotify drop, gpointer user_data, GstClockTime cycle,
    guint32 packet_size, const GstGpuStreamTrialParams * trial,
    GstGpuStreamCalibration * out, GError ** error);
/* The last trial calibration of this process for the device (cuda_context,
 * NULL: the CPU), processor, cycle and packet size; FALSE when none. Clear
 * out with gst_gpustream_calibration_clear. */
gboolean gst_gpustream_calibration_lookup (GstObject * cuda_context,
    const gchar * processor, GstClockTime cycle, guint32 packet_size,
    GstGpuStreamCalibration * out);

/* A GKeyFile, group "calibration". */
gboolean gst_gpustream_calibration_save (const GstGpuStreamCalibration * cal,
    const gchar * path, GError ** error);
gboolean gst_gpustream_calibration_load (GstGpuStreamCalibration * cal,
    const gchar * path, GError ** error);
void gst_gpustream_calibration_clear (GstGpuStreamCalibration * cal);

G_END_DECLS

#endif /* GPS_SCHEDULER_H */
