/* gpsschedclient.h: an element's side of the real-time scheduler
 * (gpsscheduler.h), for elements that batch their work through it every
 * `cycle` (ncencoder, gpusrtpenc, dxtenc).
 *
 * The element hands the client its work items (buffers, generations,
 * frames: whatever its processor takes) and serialized events, stream by
 * stream; every cycle the device's worker runs the processor on the items
 * collected, and the client gives the processed items and the events back,
 * in the order they came, through one callback (output) on the scheduler's
 * forwarder thread. The client owns what every such element needs around
 * that:
 *
 * - back-pressure: a push waits (on a condition the forwarder signals, no
 *   polling) while the stream's in-flight limits are reached or the
 *   collector's batch is full, and gives up at a flush or a stop;
 * - flush: a flush drops every item of the stream still in flight, and no
 *   item pushed before the flush is output after it;
 * - EOS and serialized events: they travel with the items, so nothing
 *   overtakes anything; wait() drains a stream;
 * - the LATENCY answer: an item leaves within 3 cycles of its arrival (the
 *   bound of the GPU-centric model of Kai Zhang, Jiayu Hu, Bei Hua, "A
 *   holistic approach to build real-time stream processing system with
 *   GPU", 2015, when a batch takes less than a cycle);
 * - the stats every scheduled element reports: scheduled-batches,
 *   latency-p99-us, latency-max-us, latency-misses (items held longer than
 *   3 cycles), kept after stop until the next start.
 *
 * An element whose callers hold a lock that output takes (GstVideoEncoder's
 * stream lock, which finish_frame takes) gives unlock / relock: every wait
 * releases that lock. */
#ifndef GPS_SCHED_CLIENT_H
#define GPS_SCHED_CLIENT_H

#include <gst/gst.h>
#include "gpsscheduler.h"

G_BEGIN_DECLS

typedef struct _GstGpuStreamSchedClient GstGpuStreamSchedClient;
typedef struct _GstGpuStreamSchedClientStream GstGpuStreamSchedClientStream;

typedef struct {
  /* The forwarder thread, in push order per stream: exactly one of data (an
   * item, processed) and event (pushed with push_event) is set; takes it.
   * stream_data is the add_stream user data. The return of an item is what
   * the next push of that stream returns when it is not GST_FLOW_OK. Also
   * called in the caller's thread for an event pushed while the client is
   * not running (nothing is queued to keep order with). */
  GstFlowReturn (*output) (gpointer stream_data, gpointer data,
      GstEvent * event);
  /* frees an item that will never be output (flushed, stopped, removed) */
  void (*drop) (gpointer data);
  /* Optional, both or neither: release and retake a lock that the callers
   * of push, push_event, wait and flush_stop hold and that output takes. */
  void (*unlock) (gpointer user_data);
  void (*relock) (gpointer user_data);
} GstGpuStreamSchedClientCallbacks;

/* The client lives as long as the element. element (no reference) gets the
 * error messages; processor and proc_data run every cycle's batch, on items
 * that are the element's (flag GST_GPUSTREAM_SCHED_ITEM_PACKET; events
 * travel without it and must be skipped). */
GstGpuStreamSchedClient *gst_gpustream_sched_client_new (GstElement * element,
    const GstGpuStreamProcessor * processor, gpointer proc_data,
    const GstGpuStreamSchedClientCallbacks * callbacks, gpointer user_data);
void gst_gpustream_sched_client_free (GstGpuStreamSchedClient * client);

/* READY to PAUSED. cycle 0: not scheduled (TRUE, nothing started, the stats
 * read 0). Otherwise joins the device's worker with n_pipelines forwarder
 * threads (its streams are not policed nor refused one by one: the rate of
 * set_rate stands for them all); FALSE after posting an error on the
 * element (a cycle below GST_GPUSTREAM_SCHED_MIN_CYCLE, a declared rate
 * that does not fit, or the scheduler did not start). Resets the stats. */
gboolean gst_gpustream_sched_client_start (GstGpuStreamSchedClient * client,
    GstClockTime cycle, guint n_pipelines, GstGpuStreamBackend backend,
    GstObject * cuda_context);
/* The element's rate in bytes/s for all its streams together (0: none),
 * counted by the device's admission like an rtgpuqueue stream's max-rate
 * (gst_gpustream_scheduler_declare_rate); origin says where the figure
 * comes from ("max-rate", "caps: 1920x1080 at 30/1"), for the messages.
 * Stopped: start declares it, and a rate that does not fit beside the
 * device's admitted rate fails the start with an ERROR naming the figures
 * (the rate, the admitted sum, the capacity B_I, the cycle). Running:
 * checked at once; FALSE after posting that ERROR, the old rate kept.
 * Without a rate, the first stream of a run posts a WARNING saying so (the
 * element then counts as unlimited on its device). */
gboolean gst_gpustream_sched_client_set_rate (GstGpuStreamSchedClient *
    client, guint64 rate, const gchar * origin);
/* Going down, before the pads deactivate: every push and wait gives up
 * (GST_FLOW_FLUSHING) until the next start, so no streaming thread stays
 * blocked in the client. */
void gst_gpustream_sched_client_unblock (GstGpuStreamSchedClient * client);
/* PAUSED to READY, the pads inactive: the items in flight are dropped. */
void gst_gpustream_sched_client_stop (GstGpuStreamSchedClient * client);
/* started with a cycle > 0, not yet stopped */
gboolean gst_gpustream_sched_client_is_running (GstGpuStreamSchedClient *
    client);
/* the cycle of the running client, 0 when not running */
GstClockTime gst_gpustream_sched_client_get_cycle (GstGpuStreamSchedClient *
    client);

/* A stream: its items and events leave in order. w: the largest item in
 * bytes. Any time, running or not; the stream keeps stream_data until it
 * is freed (destroy, after remove and once no item refers to it). */
GstGpuStreamSchedClientStream *gst_gpustream_sched_client_add_stream
    (GstGpuStreamSchedClient * client, guint32 w, gpointer stream_data,
    GDestroyNotify destroy, GError ** error);
/* The stream leaves: its items in flight are dropped; its latency stays in
 * the stats. */
void gst_gpustream_sched_client_remove_stream (GstGpuStreamSchedClient *
    client, GstGpuStreamSchedClientStream * stream);
/* Back-pressure beyond a full batch: a push waits while max_items items
 * (0: no limit) or, for an item of size > 0, more than max_bytes bytes (0:
 * no limit; one item alone always passes) are in flight. */
void gst_gpustream_sched_client_stream_set_limits
    (GstGpuStreamSchedClientStream * stream, guint max_items,
    guint64 max_bytes);

/* The streaming thread: hands data (an item of size bytes) to the
 * scheduler; takes it. Waits while the limits or a full batch say so.
 * GST_FLOW_FLUSHING (data dropped) when the stream flushes or the client
 * is not running; otherwise the first non-OK return of output since the
 * last push, or GST_FLOW_OK. */
GstFlowReturn gst_gpustream_sched_client_push (GstGpuStreamSchedClientStream
    * stream, gpointer data, guint32 size);
/* A serialized event, output after every item pushed before it (directly,
 * when not running). Takes it. FALSE when it was dropped (flushing) or
 * output refused it. */
gboolean gst_gpustream_sched_client_push_event (GstGpuStreamSchedClientStream
    * stream, GstEvent * event);
/* Waits until at most max_items items of the stream are in flight (0: all
 * output or dropped: what EOS and a caps change need). GST_FLOW_FLUSHING
 * when the stream flushes meanwhile, else the first non-OK return of
 * output not yet returned by a push (which the next push still returns),
 * or GST_FLOW_OK. */
GstFlowReturn gst_gpustream_sched_client_wait (GstGpuStreamSchedClientStream
    * stream, guint max_items);
/* FLUSH_START (any thread): waiting pushes give up, nothing more is
 * output. FLUSH_STOP (the streaming thread): what was in flight is
 * dropped, an output under way ends first; pushes are accepted again. */
void gst_gpustream_sched_client_flush_start (GstGpuStreamSchedClientStream *
    stream);
void gst_gpustream_sched_client_flush_stop (GstGpuStreamSchedClientStream *
    stream);
/* FLUSH_START of every stream of the client: for an element that cannot
 * hold its stream pointer safely in the thread that sees FLUSH_START. */
void gst_gpustream_sched_client_flush_start_all (GstGpuStreamSchedClient *
    client);

/* What the element's LATENCY answer adds while running: 3 cycles. */
GstClockTime gst_gpustream_sched_client_get_latency (GstGpuStreamSchedClient *
    client);
/* Answers a LATENCY query on a source pad: upstream's, plus extra (what
 * the element itself holds), plus get_latency. */
gboolean gst_gpustream_sched_client_query_latency (GstGpuStreamSchedClient *
    client, GstPad * pad, GstObject * parent, GstQuery * query,
    GstClockTime extra);
/* Sets scheduled-batches, latency-p99-us, latency-max-us and
 * latency-misses (over all streams, present and removed) in s: those of
 * the last run, 0 when it was not scheduled. */
void gst_gpustream_sched_client_get_stats (GstGpuStreamSchedClient * client,
    GstStructure * s);

G_END_DECLS

#endif /* GPS_SCHED_CLIENT_H */
