/* gpsschedclient.c: an element's side of the real-time scheduler (see
 * gpsschedclient.h).
 *
 * Every item and event pushed is counted in flight until the forwarder has
 * output or dropped it; each completion bumps a counter and signals one
 * condition, on which every wait of the client sleeps (a full batch, the
 * stream's limits, a drain, the end of an output under way at a flush).
 * The client mirrors each scheduler stream's flush epoch under its lock, so
 * that the forwarder's check "is this item from before the last flush?"
 * and the flush itself cannot interleave: after flush_stop returns, nothing
 * pushed before it is output. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gpsschedclient.h"

GST_DEBUG_CATEGORY_STATIC (gps_sched_client_debug);
#define GST_CAT_DEFAULT gps_sched_client_debug

struct _GstGpuStreamSchedClientStream
{
  gint refcount;                /* the element's handle, the scheduler's */
  GstGpuStreamSchedClient *client;
  GstGpuStreamSchedStream *stream;
  gpointer data;
  GDestroyNotify destroy;

  /* client lock */
  guint16 epoch;                /* = the scheduler stream's flush epoch */
  gboolean flushing;
  gboolean forwarding;          /* output under way */
  gboolean removed;
  guint in_flight;              /* items and events */
  guint64 bytes;                /* of the items in flight */
  guint max_items;
  guint64 max_bytes;
  GstFlowReturn ret;            /* first failure of output not yet returned */
};

struct _GstGpuStreamSchedClient
{
  GstElement *element;          /* no reference */
  GstGpuStreamScheduler *sched;
  GstGpuStreamSchedClientCallbacks cb;
  gpointer user_data;

  GMutex lock;
  GCond cond;                   /* an item completed; flush; unblock; stop */
  guint waiters;                /* threads in client_wait_locked */
  guint64 completions;
  gboolean running;
  gboolean unblocked;
  GstClockTime cycle;
  guint64 rate;                 /* declared, bytes/s; 0: none */
  gchar *rate_origin;           /* where the element took it from */
  gboolean warned_no_rate;      /* this run */
  GList *streams;               /* present, for the stats */
  /* the stats of the last run */
  gboolean scheduled_run;
  GstClockTime gone_p99, gone_max;
  guint64 gone_misses;
};

/* ---- the forwarder side ------------------------------------------------ */

static void
client_stream_unref (gpointer data)
{
  GstGpuStreamSchedClientStream *cs = data;

  if (!g_atomic_int_dec_and_test (&cs->refcount))
    return;
  if (cs->destroy)
    cs->destroy (cs->data);
  g_free (cs);
}

static void
client_free_item (GstGpuStreamSchedClient * client, gpointer data,
    guint16 flags)
{
  if (!data)
    return;                     /* a processor dropped it */
  if (flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
    client->cb.drop (data);
  else
    gst_event_unref (data);
}

static void
client_complete_locked (GstGpuStreamSchedClientStream * cs,
    const GstGpuStreamSchedItem * item)
{
  GstGpuStreamSchedClient *client = cs->client;

  cs->in_flight--;
  if (item->flags & GST_GPUSTREAM_SCHED_ITEM_PACKET)
    cs->bytes -= item->size;
  client->completions++;
  /* a wake-up is a system call: at a million packets a second, only when
   * someone waits */
  if (client->waiters > 0)
    g_cond_broadcast (&client->cond);
}

static void
client_forward_item (gpointer stream_data, GstGpuStreamSchedItem * item)
{
  GstGpuStreamSchedClientStream *cs = stream_data;
  GstGpuStreamSchedClient *client = cs->client;
  gboolean packet = (item->flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) != 0;
  GstFlowReturn ret = GST_FLOW_OK;

  g_mutex_lock (&client->lock);
  if (item->epoch != cs->epoch || cs->flushing) {
    g_mutex_unlock (&client->lock);
    client_free_item (client, item->data, item->flags);
    g_mutex_lock (&client->lock);
    client_complete_locked (cs, item);
    g_mutex_unlock (&client->lock);
    return;
  }
  cs->forwarding = TRUE;
  g_mutex_unlock (&client->lock);

  if (packet && item->data)
    ret = client->cb.output (cs->data, item->data, NULL);
  else if (!packet)
    ret = client->cb.output (cs->data, NULL, item->data);
  item->data = NULL;

  g_mutex_lock (&client->lock);
  cs->forwarding = FALSE;
  /* FLUSHING from an output that met a flush is not news to the next push */
  if (packet && ret != GST_FLOW_OK && cs->ret == GST_FLOW_OK &&
      !cs->flushing && item->epoch == cs->epoch)
    cs->ret = ret;
  client_complete_locked (cs, item);
  g_mutex_unlock (&client->lock);
}

static void
client_drop_item (gpointer stream_data, GstGpuStreamSchedItem * item)
{
  GstGpuStreamSchedClientStream *cs = stream_data;
  GstGpuStreamSchedClient *client = cs->client;

  client_free_item (client, item->data, item->flags);
  item->data = NULL;
  g_mutex_lock (&client->lock);
  client_complete_locked (cs, item);
  g_mutex_unlock (&client->lock);
}

static void
client_forward_unused (gpointer stream_data, gpointer data, guint16 flags)
{
  g_assert_not_reached ();
}

static const GstGpuStreamSchedCallbacks client_sched_callbacks = {
  client_forward_unused, NULL, client_forward_item, client_drop_item
};

/* ---- waiting ------------------------------------------------------------ */

/* Sleeps until the next completion (or flush, unblock, stop), with the
 * element's lock released: its holder is the caller, output takes it. The
 * element's lock is retaken without the client's (element, then client). */
static void
client_wait_locked (GstGpuStreamSchedClient * client)
{
  if (client->cb.unlock)
    client->cb.unlock (client->user_data);
  client->waiters++;
  g_cond_wait (&client->cond, &client->lock);
  client->waiters--;
  if (client->cb.relock) {
    g_mutex_unlock (&client->lock);
    client->cb.relock (client->user_data);
    g_mutex_lock (&client->lock);
  }
}

static gboolean
client_gives_up_locked (GstGpuStreamSchedClientStream * cs)
{
  GstGpuStreamSchedClient *client = cs->client;

  return cs->flushing || cs->removed || client->unblocked || !client->running;
}

static gboolean
client_limits_reached_locked (GstGpuStreamSchedClientStream * cs,
    guint32 size)
{
  if (cs->max_items && cs->in_flight >= cs->max_items)
    return TRUE;
  return cs->max_bytes && size > 0 && cs->bytes > 0 &&
      cs->bytes + size > cs->max_bytes;
}

static GstFlowReturn
client_take_ret_locked (GstGpuStreamSchedClientStream * cs)
{
  GstFlowReturn ret = cs->ret;

  cs->ret = GST_FLOW_OK;
  return ret;
}

/* ---- the streaming thread ----------------------------------------------- */

static gboolean
client_push_item (GstGpuStreamSchedClientStream * cs, gpointer data,
    guint32 size, guint16 flags, GstFlowReturn * ret)
{
  GstGpuStreamSchedClient *client = cs->client;
  gboolean packet = (flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) != 0;
  guint64 seen;
  gboolean ok;

  g_mutex_lock (&client->lock);
  for (;;) {
    if (client_gives_up_locked (cs)) {
      g_mutex_unlock (&client->lock);
      client_free_item (client, data, flags);
      return FALSE;
    }
    if (packet && client_limits_reached_locked (cs, size)) {
      client_wait_locked (client);
      continue;
    }
    seen = client->completions;
    cs->in_flight++;
    if (packet)
      cs->bytes += size;
    g_mutex_unlock (&client->lock);

    ok = gst_gpustream_sched_stream_push (cs->stream, data, size, flags);

    g_mutex_lock (&client->lock);
    if (ok)
      break;
    cs->in_flight--;
    if (packet)
      cs->bytes -= size;
    /* the batch is full: the items in it complete within a few cycles */
    if (client->completions == seen)
      client_wait_locked (client);
  }
  if (ret)
    *ret = client_take_ret_locked (cs);
  g_mutex_unlock (&client->lock);
  return TRUE;
}

GstFlowReturn
gst_gpustream_sched_client_push (GstGpuStreamSchedClientStream * cs,
    gpointer data, guint32 size)
{
  GstFlowReturn ret = GST_FLOW_OK;

  if (!client_push_item (cs, data, size, GST_GPUSTREAM_SCHED_ITEM_PACKET,
          &ret))
    return GST_FLOW_FLUSHING;
  return ret;
}

gboolean
gst_gpustream_sched_client_push_event (GstGpuStreamSchedClientStream * cs,
    GstEvent * event)
{
  GstGpuStreamSchedClient *client = cs->client;
  gboolean running;

  g_mutex_lock (&client->lock);
  running = client->running;
  g_mutex_unlock (&client->lock);
  /* not started (or stopped): nothing is queued to keep order with */
  if (!running)
    return client->cb.output (cs->data, NULL, event) == GST_FLOW_OK;
  return client_push_item (cs, event, 0, 0, NULL);
}

GstFlowReturn
gst_gpustream_sched_client_wait (GstGpuStreamSchedClientStream * cs,
    guint max_items)
{
  GstGpuStreamSchedClient *client = cs->client;
  GstFlowReturn ret = GST_FLOW_OK;

  g_mutex_lock (&client->lock);
  while (cs->in_flight > max_items) {
    if (client_gives_up_locked (cs)) {
      ret = GST_FLOW_FLUSHING;
      break;
    }
    client_wait_locked (client);
  }
  if (ret == GST_FLOW_OK)
    ret = cs->ret;              /* left for the next push to return */
  g_mutex_unlock (&client->lock);
  return ret;
}

void
gst_gpustream_sched_client_flush_start (GstGpuStreamSchedClientStream * cs)
{
  GstGpuStreamSchedClient *client = cs->client;

  g_mutex_lock (&client->lock);
  cs->flushing = TRUE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

void
gst_gpustream_sched_client_flush_start_all (GstGpuStreamSchedClient * client)
{
  GList *l;

  g_mutex_lock (&client->lock);
  for (l = client->streams; l; l = l->next)
    ((GstGpuStreamSchedClientStream *) l->data)->flushing = TRUE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

void
gst_gpustream_sched_client_flush_stop (GstGpuStreamSchedClientStream * cs)
{
  GstGpuStreamSchedClient *client = cs->client;

  g_mutex_lock (&client->lock);
  cs->flushing = TRUE;
  cs->epoch++;
  gst_gpustream_sched_stream_flush (cs->stream);
  /* an output of an older item may be under way: it ends before the flush
   * goes on (its push fails, downstream still flushes) */
  while (cs->forwarding)
    client_wait_locked (client);
  cs->flushing = FALSE;
  cs->ret = GST_FLOW_OK;
  g_mutex_unlock (&client->lock);
}

void
gst_gpustream_sched_client_stream_set_limits (GstGpuStreamSchedClientStream *
    cs, guint max_items, guint64 max_bytes)
{
  GstGpuStreamSchedClient *client = cs->client;

  g_mutex_lock (&client->lock);
  cs->max_items = max_items;
  cs->max_bytes = max_bytes;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

/* ---- the declared rate -------------------------------------------------- */

/* Once a run, when the first stream comes without a rate: today's
 * behaviour (the element counts as unlimited on its device) said aloud. */
static void
client_warn_no_rate (GstGpuStreamSchedClient * client)
{
  gboolean warn;

  g_mutex_lock (&client->lock);
  warn = client->rate == 0 && !client->warned_no_rate;
  client->warned_no_rate = TRUE;
  g_mutex_unlock (&client->lock);
  if (warn)
    GST_ELEMENT_WARNING (client->element, RESOURCE, SETTINGS,
        ("no rate declared: set max-rate (bytes per second)"),
        ("without a rate the device's admission counts this element as "
            "unlimited, so an rtgpuqueue with admission on and a capacity "
            "on the same device refuses its streams while this element "
            "runs"));
}

/* The ERROR of a refused rate: the scheduler's text has the figures. */
static void
client_post_refusal (GstGpuStreamSchedClient * client, guint64 rate,
    const gchar * origin, const GError * err)
{
  GST_ELEMENT_ERROR (client->element, RESOURCE, BUSY,
      ("rate %.3g B/s (%s) does not fit the device: %s", (gdouble) rate,
          origin ? origin : "max-rate", err->message),
      ("lower max-rate, raise the capacity of the rtgpuqueue on that device, "
          "or use another device"));
}

gboolean
gst_gpustream_sched_client_set_rate (GstGpuStreamSchedClient * client,
    guint64 rate, const gchar * origin)
{
  GError *err = NULL;
  gboolean running;

  g_mutex_lock (&client->lock);
  running = client->running;
  g_mutex_unlock (&client->lock);
  /* stopped, start declares it */
  if (running && !gst_gpustream_scheduler_declare_rate (client->sched, rate,
          &err)) {
    client_post_refusal (client, rate, origin, err);
    g_clear_error (&err);
    return FALSE;
  }
  g_mutex_lock (&client->lock);
  client->rate = rate;
  g_free (client->rate_origin);
  client->rate_origin = g_strdup (origin);
  g_mutex_unlock (&client->lock);
  return TRUE;
}

/* ---- streams ------------------------------------------------------------ */

GstGpuStreamSchedClientStream *
gst_gpustream_sched_client_add_stream (GstGpuStreamSchedClient * client,
    guint32 w, gpointer stream_data, GDestroyNotify destroy, GError ** error)
{
  GstGpuStreamSchedClientStream *cs;
  GstClockTime cycle;

  g_mutex_lock (&client->lock);
  cycle = client->running ? client->cycle : 0;
  g_mutex_unlock (&client->lock);
  if (cycle == 0) {
    g_set_error (error, GST_GPUSTREAM_SCHEDULER_ERROR,
        GST_GPUSTREAM_SCHEDULER_ERROR_INVALID,
        "stream refused: the scheduler client is not running");
    return NULL;
  }

  client_warn_no_rate (client);
  cs = g_new0 (GstGpuStreamSchedClientStream, 1);
  cs->refcount = 2;
  cs->client = client;
  cs->data = stream_data;
  cs->destroy = destroy;
  cs->ret = GST_FLOW_OK;
  /* the deadline is the bound the model guarantees: a miss is an item held
   * longer than 3 cycles */
  cs->stream = gst_gpustream_scheduler_add_stream (client->sched, w,
      GST_GPUSTREAM_SCHED_BATCHING_DEADLINE (cycle),
      GST_GPUSTREAM_SCHED_UNLIMITED_RATE, cs, client_stream_unref, error);
  if (!cs->stream) {
    cs->destroy = NULL;         /* the caller keeps stream_data */
    g_free (cs);
    return NULL;
  }
  g_mutex_lock (&client->lock);
  client->streams = g_list_prepend (client->streams, cs);
  g_mutex_unlock (&client->lock);
  return cs;
}

void
gst_gpustream_sched_client_remove_stream (GstGpuStreamSchedClient * client,
    GstGpuStreamSchedClientStream * cs)
{
  GstGpuStreamSchedStreamStats ss;

  gst_gpustream_sched_stream_get_stats (cs->stream, &ss);
  g_mutex_lock (&client->lock);
  cs->removed = TRUE;
  client->streams = g_list_remove (client->streams, cs);
  client->gone_p99 = MAX (client->gone_p99, ss.latency_p99);
  client->gone_max = MAX (client->gone_max, ss.latency_max);
  client->gone_misses += ss.misses;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
  /* its items in flight are dropped from here on */
  gst_gpustream_scheduler_remove_stream (client->sched, cs->stream);
  client_stream_unref (cs);
}

/* ---- the client --------------------------------------------------------- */

GstGpuStreamSchedClient *
gst_gpustream_sched_client_new (GstElement * element,
    const GstGpuStreamProcessor * processor, gpointer proc_data,
    const GstGpuStreamSchedClientCallbacks * callbacks, gpointer user_data)
{
  GstGpuStreamSchedClient *client;
  static gsize once = 0;

  g_return_val_if_fail (callbacks && callbacks->output && callbacks->drop,
      NULL);
  g_return_val_if_fail (!callbacks->unlock == !callbacks->relock, NULL);
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gps_sched_client_debug, "gpsschedclient", 0,
        "gst-gpustream scheduler client");
    g_once_init_leave (&once, 1);
  }

  client = g_new0 (GstGpuStreamSchedClient, 1);
  client->element = element;
  client->cb = *callbacks;
  client->user_data = user_data;
  g_mutex_init (&client->lock);
  g_cond_init (&client->cond);
  client->sched = gst_gpustream_scheduler_new (processor, proc_data,
      &client_sched_callbacks);
  return client;
}

void
gst_gpustream_sched_client_free (GstGpuStreamSchedClient * client)
{
  gst_gpustream_sched_client_stop (client);
  gst_gpustream_scheduler_free (client->sched);
  g_list_free (client->streams);
  g_free (client->rate_origin);
  g_mutex_clear (&client->lock);
  g_cond_clear (&client->cond);
  g_free (client);
}

gboolean
gst_gpustream_sched_client_start (GstGpuStreamSchedClient * client,
    GstClockTime cycle, guint n_pipelines, GstGpuStreamBackend backend,
    GstObject * cuda_context)
{
  GError *err = NULL;
  guint64 rate;
  g_autofree gchar *origin = NULL;

  g_mutex_lock (&client->lock);
  client->scheduled_run = cycle > 0;
  client->gone_p99 = client->gone_max = 0;
  client->gone_misses = 0;
  client->unblocked = FALSE;
  client->warned_no_rate = FALSE;
  rate = client->rate;
  origin = g_strdup (client->rate_origin);
  g_mutex_unlock (&client->lock);
  if (cycle == 0)
    return TRUE;

  if (cycle < GST_GPUSTREAM_SCHED_MIN_CYCLE) {
    GST_ELEMENT_ERROR (client->element, LIBRARY, SETTINGS,
        ("cycle %" G_GUINT64_FORMAT " ns is below the minimum of %"
            G_GUINT64_FORMAT " ns", (guint64) cycle,
            (guint64) GST_GPUSTREAM_SCHED_MIN_CYCLE),
        ("a cycle below %" G_GUINT64_FORMAT " ns leaves no room for the "
            "scheduler's own work; cycle = 0 processes each buffer as it "
            "comes", (guint64) GST_GPUSTREAM_SCHED_MIN_CYCLE));
    g_mutex_lock (&client->lock);
    client->scheduled_run = FALSE;
    g_mutex_unlock (&client->lock);
    return FALSE;
  }

  gst_gpustream_scheduler_set_batching (client->sched, cycle);
  /* not attached yet: only stored, start checks it */
  gst_gpustream_scheduler_declare_rate (client->sched, rate, NULL);
  if (!gst_gpustream_scheduler_start (client->sched, MAX (n_pipelines, 1),
          backend, cuda_context, &err)) {
    if (rate > 0 && g_error_matches (err, GST_GPUSTREAM_SCHEDULER_ERROR,
            GST_GPUSTREAM_SCHEDULER_ERROR_CAPACITY))
      client_post_refusal (client, rate, origin, err);
    else
      GST_ELEMENT_ERROR (client->element, RESOURCE, FAILED,
          ("could not start the batching scheduler: %s", err->message), (NULL));
    g_clear_error (&err);
    g_mutex_lock (&client->lock);
    client->scheduled_run = FALSE;
    g_mutex_unlock (&client->lock);
    return FALSE;
  }
  g_mutex_lock (&client->lock);
  client->running = TRUE;
  client->cycle = cycle;
  g_mutex_unlock (&client->lock);
  GST_INFO_OBJECT (client->element, "batching every %" GST_TIME_FORMAT
      " on %s, %u forwarder(s)", GST_TIME_ARGS (cycle),
      gst_gpustream_backend_nick (backend), MAX (n_pipelines, 1));
  return TRUE;
}

void
gst_gpustream_sched_client_unblock (GstGpuStreamSchedClient * client)
{
  g_mutex_lock (&client->lock);
  client->unblocked = TRUE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

void
gst_gpustream_sched_client_stop (GstGpuStreamSchedClient * client)
{
  gboolean running;

  g_mutex_lock (&client->lock);
  running = client->running;
  client->running = FALSE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
  /* without the client's lock: the forwarders finish their output, and
   * the items left are dropped through client_drop_item */
  if (running)
    gst_gpustream_scheduler_stop (client->sched);
}

gboolean
gst_gpustream_sched_client_is_running (GstGpuStreamSchedClient * client)
{
  gboolean running;

  g_mutex_lock (&client->lock);
  running = client->running;
  g_mutex_unlock (&client->lock);
  return running;
}

GstClockTime
gst_gpustream_sched_client_get_cycle (GstGpuStreamSchedClient * client)
{
  GstClockTime cycle;

  g_mutex_lock (&client->lock);
  cycle = client->running ? client->cycle : 0;
  g_mutex_unlock (&client->lock);
  return cycle;
}

GstClockTime
gst_gpustream_sched_client_get_latency (GstGpuStreamSchedClient * client)
{
  return 3 * gst_gpustream_sched_client_get_cycle (client);
}

gboolean
gst_gpustream_sched_client_query_latency (GstGpuStreamSchedClient * client,
    GstPad * pad, GstObject * parent, GstQuery * query, GstClockTime extra)
{
  GstClockTime min, max, add;
  gboolean live;

  add = extra + gst_gpustream_sched_client_get_latency (client);
  if (!gst_pad_query_default (pad, parent, query))
    return FALSE;
  gst_query_parse_latency (query, &live, &min, &max);
  gst_query_set_latency (query, live, min + add,
      GST_CLOCK_TIME_IS_VALID (max) ? max + add : max);
  return TRUE;
}

void
gst_gpustream_sched_client_get_stats (GstGpuStreamSchedClient * client,
    GstStructure * s)
{
  GstGpuStreamSchedulerStats ss = { 0 };
  guint64 batches = 0, misses = 0;
  GstClockTime p99 = 0, worst = 0;
  GList *l;

  g_mutex_lock (&client->lock);
  if (client->scheduled_run) {
    gst_gpustream_scheduler_get_stats (client->sched, &ss);
    batches = ss.launches;
    p99 = client->gone_p99;
    worst = client->gone_max;
    misses = client->gone_misses;
    for (l = client->streams; l; l = l->next) {
      GstGpuStreamSchedClientStream *cs = l->data;
      GstGpuStreamSchedStreamStats st;

      gst_gpustream_sched_stream_get_stats (cs->stream, &st);
      p99 = MAX (p99, st.latency_p99);
      worst = MAX (worst, st.latency_max);
      misses += st.misses;
    }
  }
  g_mutex_unlock (&client->lock);
  gst_structure_set (s, "scheduled-batches", G_TYPE_UINT64, batches,
      "latency-p99-us", G_TYPE_UINT64, (guint64) p99 / GST_USECOND,
      "latency-max-us", G_TYPE_UINT64, (guint64) worst / GST_USECOND,
      "latency-misses", G_TYPE_UINT64, misses, NULL);
}
