/* bench_gpusim: the host CPU time per packet (or frame) of one element on
 * one path, measured by bench/bench_gpusim.py (`./run bench gpu-sim`) on
 * the simulated CUDA device (kernels/gpusim) and on the CPU backend, beside
 * a plain GstQueue moving the same packets.
 *
 * One measurement a process, so that each gets its own timing model
 * (GPUSIM_MODEL, set by the caller) and a clean set of threads: the element
 * between a source pad and a sink pad of ours (the harness of
 * bench_rtgpu.c), a warm-up, then a window of pushes paced in 1 ms ticks,
 * which ends when the sink has seen the window's output. Around the window:
 * the process CPU clock (every thread, those that exit included), each
 * thread's CPU time (/proc/self/task/TID/schedstat, by thread name), the
 * simulator's counters (gpusim_get_stats) and the element's stats.
 *
 * The simulator's stream threads run the kernels and the copies on the CPU,
 * work a real GPU does; they are created by pthread_create inside
 * libcuda.so.1 without a name of their own (they inherit their creator's).
 * This program defines pthread_create: a thread whose start routine lies in
 * libcuda.so.1 (dladdr) is recorded by its TID and named "gpusim-stream"
 * before it runs, every other one is created unchanged.
 *
 * Usage: bench_gpusim --element srtpenc|rtgpuqueue|ncencoder|dxtenc|cstpsink|queue|direct
 *   [--backend gpu|cpu] [--input buffers|lists|frames] [--processor srtp-protect|copy]
 *   [--pipelines N] [--cycle NS] [--rate ITEMS_PER_S] [--items N] [--warm N]
 *   [--size BYTES] [--m M] [--k K] [--width W] [--height H]
 * Prints one JSON object on a line starting with "RESULT ". */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <gst/gst.h>

#include "gpusim.h"

#define PKT_SIZE (12 + 7 * 188)
#define LIST_LEN 64
#define MAX_STREAMS 64
#define MAX_THREADS 512

/* ---- the simulator's stream threads, by their start routine --------------- */
static pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t sim_tids[MAX_THREADS];
static guint n_sim_tids;

typedef struct
{
  void *(*fn) (void *);
  void *arg;
} SimTramp;

static void *
sim_tramp (void *p)
{
  SimTramp t = *(SimTramp *) p;

  free (p);
  pthread_mutex_lock (&sim_lock);
  if (n_sim_tids < MAX_THREADS)
    sim_tids[n_sim_tids++] = (pid_t) syscall (SYS_gettid);
  pthread_mutex_unlock (&sim_lock);
  prctl (PR_SET_NAME, "gpusim-stream");
  return t.fn (t.arg);
}

typedef int (*PthreadCreate) (pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *);

int
pthread_create (pthread_t * th, const pthread_attr_t * attr,
    void *(*fn) (void *), void *arg)
{
  static PthreadCreate real;
  Dl_info info;

  if (!real)
    real = (PthreadCreate) dlsym (RTLD_NEXT, "pthread_create");
  if (dladdr ((void *) fn, &info) && info.dli_fname &&
      strstr (info.dli_fname, "libcuda.so")) {
    SimTramp *t = malloc (sizeof *t);

    if (t) {
      t->fn = fn;
      t->arg = arg;
      return real (th, attr, sim_tramp, t);
    }
  }
  return real (th, attr, fn, arg);
}

static gboolean
is_sim_tid (pid_t tid)
{
  gboolean found = FALSE;
  guint i;

  pthread_mutex_lock (&sim_lock);
  for (i = 0; i < n_sim_tids && !found; i++)
    found = sim_tids[i] == tid;
  pthread_mutex_unlock (&sim_lock);
  return found;
}

/* ---- clocks ----------------------------------------------------------------- */
static guint64
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * GST_SECOND + ts.tv_nsec;
}

static guint64
thread_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (guint64) ts.tv_sec * GST_SECOND + ts.tv_nsec;
}

static guint64
process_cpu_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (guint64) ts.tv_sec * GST_SECOND + ts.tv_nsec;
}

typedef struct
{
  pid_t tid;
  gchar name[32];
  guint64 cpu;                  /* ns on a CPU (schedstat's first field) */
} ThreadSnap;

/* Every thread of the process now: its name and CPU time. */
static guint
snap_threads (ThreadSnap * out, guint max)
{
  DIR *d = opendir ("/proc/self/task");
  struct dirent *de;
  guint n = 0;

  if (!d)
    return 0;
  while ((de = readdir (d)) && n < max) {
    gchar path[64], buf[128];
    FILE *f;
    pid_t tid = (pid_t) atoi (de->d_name);

    if (tid <= 0)
      continue;
    out[n].tid = tid;
    out[n].name[0] = 0;
    out[n].cpu = 0;
    g_snprintf (path, sizeof path, "/proc/self/task/%d/comm", tid);
    if ((f = fopen (path, "r"))) {
      if (fgets (buf, sizeof buf, f)) {
        g_strchomp (buf);
        g_strlcpy (out[n].name, buf, sizeof out[n].name);
      }
      fclose (f);
    }
    g_snprintf (path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    if (!(f = fopen (path, "r")))
      continue;                 /* gone meanwhile */
    if (fscanf (f, "%" G_GUINT64_FORMAT, &out[n].cpu) == 1)
      n++;
    fclose (f);
  }
  closedir (d);
  return n;
}

/* ---- the simulator's counters ------------------------------------------------ */
static gboolean
sim_stats (GpusimStats * s)
{
  void *h = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void (*get) (GpusimStats *);
  int (*is_sim) (void);

  memset (s, 0, sizeof *s);
  if (!h)
    return FALSE;
  get = (void (*)(GpusimStats *)) dlsym (h, "gpusim_get_stats");
  is_sim = (int (*)(void)) dlsym (h, "gpusim_is_simulated");
  if (get && is_sim && is_sim ())
    get (s);
  dlclose (h);
  return get != NULL;
}

/* ---- the sink: counts what comes out ------------------------------------------ */
typedef struct
{
  GMutex lock;
  GCond cond;
  guint64 items;                /* buffers out, lock */
  guint64 bytes;
  guint64 target;               /* wake the waiter at this count */
} Sink;

static Sink sink;

static void
sink_add (guint n, guint64 bytes)
{
  g_mutex_lock (&sink.lock);
  sink.items += n;
  sink.bytes += bytes;
  if (sink.items >= sink.target)
    g_cond_signal (&sink.cond);
  g_mutex_unlock (&sink.lock);
}

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  guint64 size = gst_buffer_get_size (buf);

  gst_buffer_unref (buf);
  sink_add (1, size);
  return GST_FLOW_OK;
}

static GstFlowReturn
sink_chain_list (GstPad * pad, GstObject * parent, GstBufferList * list)
{
  guint n = gst_buffer_list_length (list);
  guint64 size = gst_buffer_list_calculate_size (list);

  gst_buffer_list_unref (list);
  sink_add (n, size);
  return GST_FLOW_OK;
}

static guint64
sink_count (void)
{
  guint64 n;

  g_mutex_lock (&sink.lock);
  n = sink.items;
  g_mutex_unlock (&sink.lock);
  return n;
}

/* Waits until the sink has seen target buffers, at most timeout ns. */
static gboolean
sink_wait (guint64 target, guint64 timeout)
{
  gint64 end = g_get_monotonic_time () + (gint64) (timeout / 1000);
  gboolean ok;

  g_mutex_lock (&sink.lock);
  sink.target = target;
  while (sink.items < target)
    if (!g_cond_wait_until (&sink.cond, &sink.lock, end))
      break;
  ok = sink.items >= target;
  sink.target = G_MAXUINT64;
  g_mutex_unlock (&sink.lock);
  return ok;
}

/* Waits until the sink has seen target buffers, or nothing came for quiet
 * ns (an element that holds the last ones until more comes). */
static void
sink_settle (guint64 target, guint64 quiet)
{
  guint64 last = sink_count ();
  guint i;

  for (i = 0; i < 100 && !sink_wait (target, quiet); i++) {
    guint64 now = sink_count ();

    if (now == last)
      break;
    last = now;
  }
}

/* ---- the settings ----------------------------------------------------------------- */
static const gchar *element = "queue", *backend = "gpu", *input = "buffers";
static const gchar *processor = "srtp-protect";
static guint pipelines = 1, m = 16, k = 1024, width = 1920, height = 1080;
static guint64 cycle = 10 * GST_MSECOND, items = 20000, warm = 4000;
static guint64 size = PKT_SIZE;
static gdouble rate = 20000;    /* items pushed per second; 0 = as fast as taken */

static const guint8 key30[30] = {
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
  0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d
};

/* ---- what is pushed ---------------------------------------------------------------- */
/* An RTP packet of its own (writable, as a payloader's), sequence numbers
 * per stream from 0: SRTP refuses a repeated one */
static GstBuffer *
rtp_new (guint stream, guint16 seq, gsize len)
{
  GstBuffer *p = gst_buffer_new_allocate (NULL, len, NULL);
  GstMapInfo mi;

  gst_buffer_map (p, &mi, GST_MAP_WRITE);
  memset (mi.data + 12, 0x47, len - 12);
  mi.data[0] = 0x80;
  mi.data[1] = 33;              /* MP2T */
  GST_WRITE_UINT16_BE (mi.data + 2, seq);
  GST_WRITE_UINT32_BE (mi.data + 4, (guint32) seq * 90);
  GST_WRITE_UINT32_BE (mi.data + 8, 0x1000 + stream);
  gst_buffer_unmap (p, &mi);
  return p;
}

typedef struct
{
  GstPad *src[MAX_STREAMS];     /* ours, one per stream */
  guint n_src;
  GstPad *sinkpads[MAX_STREAMS];        /* ours, one per element source pad */
  guint n_sink;
  GstElement *e;                /* NULL: direct */
  GstPad *ereq[MAX_STREAMS];    /* request pads to release */
  guint n_req;
  /* the items, made before the warm-up: packets or lists of their own;
   * frames come from the pool dxtenc proposes, or are one buffer shared */
  gpointer *objs;
  gboolean lists;
  guint64 n_objs;
  GstBufferPool *pool;
  GstBuffer *frame;
  guint out_per_item;           /* buffers out per item pushed */
} Run;

static GstPad *
our_sink_new (Run * r)
{
  GstPad *p = gst_pad_new (NULL, GST_PAD_SINK);

  gst_pad_set_chain_function (p, sink_chain);
  gst_pad_set_chain_list_function (p, sink_chain_list);
  gst_pad_set_active (p, TRUE);
  r->sinkpads[r->n_sink++] = p;
  return p;
}

static GstPad *
our_src_new (Run * r)
{
  GstPad *p = gst_pad_new (NULL, GST_PAD_SRC);

  gst_pad_set_active (p, TRUE);
  r->src[r->n_src++] = p;
  return p;
}

static void
link_or_die (GstPad * a, GstPad * b)
{
  if (!a || !b || gst_pad_link (a, b) != GST_PAD_LINK_OK)
    g_error ("cannot link %s to %s", a ? GST_PAD_NAME (a) : "(none)",
        b ? GST_PAD_NAME (b) : "(none)");
}

/* frames: copies of one buffer (its memory shared) or from dxtenc's pool,
 * made at push time; the elements only read them */
static gboolean
frame_items (void)
{
  return !strcmp (element, "dxtenc") || !strcmp (element, "cstpsink") ||
      !strcmp (input, "frames");
}

/* a sink (cstpsink) renders in the push: a frame is out when it returns */
static gboolean
is_sink_element (void)
{
  return !strcmp (element, "cstpsink");
}

static GstCaps *
stream_caps (guint stream)
{
  if (!strcmp (element, "dxtenc"))
    return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "RGBA",
        "width", G_TYPE_INT, width, "height", G_TYPE_INT, height,
        "framerate", GST_TYPE_FRACTION, 60, 1, NULL);
  if (!strcmp (element, "ncencoder") || is_sink_element ())
    return gst_caps_new_empty_simple ("application/octet-stream");
  return gst_caps_new_simple ("application/x-rtp", "media", G_TYPE_STRING,
      "video", "clock-rate", G_TYPE_INT, 90000, "encoding-name", G_TYPE_STRING,
      "MP2T", "payload", G_TYPE_INT, 33, "ssrc", G_TYPE_UINT, 0x1000 + stream,
      NULL);
}

static void
start_streams (Run * r)
{
  GstSegment seg;
  guint i;

  gst_segment_init (&seg, GST_FORMAT_TIME);
  for (i = 0; i < r->n_src; i++) {
    gchar *id = g_strdup_printf ("bench-%u", i);

    gst_pad_push_event (r->src[i], gst_event_new_stream_start (id));
    gst_pad_push_event (r->src[i], gst_event_new_caps (stream_caps (i)));
    gst_pad_push_event (r->src[i], gst_event_new_segment (&seg));
    g_free (id);
  }
}

/* dxtenc: the pool it proposes (pinned memory on the GPU), as videotestsrc
 * takes it; none: frames of system memory */
static void
take_pool (Run * r)
{
  GstCaps *caps = stream_caps (0);
  GstQuery *q = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  guint psize = 0, min = 0, max = 0;

  if (gst_pad_peer_query (r->src[0], q) &&
      gst_query_get_n_allocation_pools (q) > 0)
    gst_query_parse_nth_allocation_pool (q, 0, &pool, &psize, &min, &max);
  if (pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);

    gst_buffer_pool_config_set_params (config, caps, psize, MAX (min, 4), max);
    if (gst_buffer_pool_set_config (pool, config) &&
        gst_buffer_pool_set_active (pool, TRUE))
      r->pool = pool;
    else
      gst_object_unref (pool);
  }
  gst_query_unref (q);
  gst_caps_unref (caps);
}

static GstElement *
element_new (void)
{
  GstElement *e;

  if (!strcmp (element, "direct"))
    return NULL;
  e = gst_element_factory_make (!strcmp (element, "srtpenc") ? "gpusrtpenc" :
      element, NULL);
  if (!e)
    g_error ("no element %s: the build's plugins are not on the GStreamer "
        "path (./run bench gpu-sim sets it)", element);
  if (strcmp (element, "queue"))
    gst_util_set_object_arg (G_OBJECT (e), "backend", backend);
  if (!strcmp (element, "queue")) {
    g_object_set (e, "max-size-buffers", 0, "max-size-bytes", 0,
        "max-size-time", (guint64) 0, NULL);
  } else if (!strcmp (element, "srtpenc")) {
    GstBuffer *key = gst_buffer_new_memdup (key30, sizeof key30);

    g_object_set (e, "key", key, NULL);
    gst_buffer_unref (key);
  } else if (!strcmp (element, "rtgpuqueue")) {
    gst_util_set_object_arg (G_OBJECT (e), "processor", processor);
    if (!strcmp (processor, "srtp-protect")) {
      GstBuffer *key = gst_buffer_new_memdup (key30, sizeof key30);
      GstStructure *config = gst_structure_new ("srtp-protect",
          "srtp-key", GST_TYPE_BUFFER, key,
          "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
          "srtp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);

      g_object_set (e, "processor-config", config, NULL);
      gst_structure_free (config);
      gst_buffer_unref (key);
    }
    /* no rate condition, and no policing drop at the paced rate: the
     * figure is the cost of what is carried */
    g_object_set (e, "cycle", cycle, "pipelines", pipelines,
        "default-max-packet-size", (guint) size,
        "default-max-rate", G_GUINT64_CONSTANT (1000000000),
        "police-burst", (guint64) GST_SECOND, NULL);
  } else if (!strcmp (element, "ncencoder")) {
    g_object_set (e, "generation-size", m, "block-size", k,
        "systematic", FALSE, "redundancy", 0, NULL);
    gst_util_set_object_arg (G_OBJECT (e), "framing", "bytes");
  } else if (!strcmp (element, "dxtenc")) {
    gst_util_set_object_arg (G_OBJECT (e), "format", "dxt1");
  } else if (!strcmp (element, "cstpsink")) {
    /* loopback ports nobody listens on: the sends are the element's
     * work, a receiver would be another process's */
    g_object_set (e, "streams", 4, "host", "127.0.0.1", "port",
        40000 + (gint) (getpid () % 20000), "sync", FALSE, "async", FALSE,
        NULL);
  }
  return e;
}

static void
run_open (Run * r)
{
  guint i, streams = !strcmp (element, "rtgpuqueue") ? pipelines : 1;

  r->e = element_new ();
  for (i = 0; i < streams; i++) {
    GstPad *src = our_src_new (r), *esink, *esrc;
    gchar *sname, *rname;

    if (!r->e) {
      link_or_die (src, our_sink_new (r));
      continue;
    }
    if (!strcmp (element, "srtpenc")) {
      sname = g_strdup_printf ("rtp_sink_%u", i);
      rname = g_strdup_printf ("rtp_src_%u", i);
    } else if (!strcmp (element, "rtgpuqueue")) {
      sname = g_strdup_printf ("sink_%u", i);
      rname = g_strdup_printf ("src_%u", i);
    } else {
      sname = g_strdup ("sink");
      rname = g_strdup ("src");
    }
    esink = gst_element_get_static_pad (r->e, sname);
    if (!esink) {
      esink = gst_element_request_pad_simple (r->e, sname);
      if (esink)
        r->ereq[r->n_req++] = gst_object_ref (esink);
    }
    link_or_die (src, esink);
    gst_object_unref (esink);
    if (is_sink_element ()) {
      g_free (sname);
      g_free (rname);
      continue;
    }
    esrc = gst_element_get_static_pad (r->e, rname);
    link_or_die (esrc, our_sink_new (r));
    gst_object_unref (esrc);
    g_free (sname);
    g_free (rname);
  }
  if (r->e && gst_element_set_state (r->e, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    g_error ("%s backend=%s will not play", element, backend);
  start_streams (r);
  if (!strcmp (element, "dxtenc"))
    take_pool (r);
}

/* Makes the items of the warm-up and the window (and a few spare, for the
 * end of the window), before either. */
static void
make_items (Run * r, guint64 n)
{
  guint64 i;
  guint16 seq[MAX_STREAMS] = { 0 };

  r->n_objs = n;
  r->out_per_item = 1;
  if (frame_items ()) {
    if (!r->pool && !r->frame) {
      r->frame = gst_buffer_new_allocate (NULL, size, NULL);
      gst_buffer_memset (r->frame, 0, 0x5a, size);
    }
    return;
  }
  r->objs = g_new0 (gpointer, n);
  r->lists = !strcmp (input, "lists");
  if (r->lists)
    r->out_per_item = LIST_LEN;
  if (!strcmp (element, "ncencoder")) {
    /* one generation's bytes a buffer (framing=bytes): m coded packets out */
    r->out_per_item = m;
    for (i = 0; i < n; i++) {
      GstBuffer *b = gst_buffer_new_allocate (NULL, (gsize) m * k, NULL);

      gst_buffer_memset (b, 0, (guint8) i, (gsize) m * k);
      r->objs[i] = b;
    }
    return;
  }
  for (i = 0; i < n; i++) {
    guint s = (guint) (i % r->n_src);

    if (r->lists) {
      GstBufferList *l = gst_buffer_list_new_sized (LIST_LEN);
      guint j;

      for (j = 0; j < LIST_LEN; j++)
        gst_buffer_list_add (l, rtp_new (s, seq[s]++, size));
      r->objs[i] = l;
    } else {
      r->objs[i] = rtp_new (s, seq[s]++, size);
    }
  }
}

static gboolean
push_item (Run * r, guint64 i)
{
  GstPad *src = r->src[i % r->n_src];
  GstFlowReturn ret;

  if (frame_items ()) {
    GstBuffer *b = NULL;

    if (r->pool) {
      if (gst_buffer_pool_acquire_buffer (r->pool, &b, NULL) != GST_FLOW_OK)
        return FALSE;
    } else {
      b = gst_buffer_copy (r->frame);   /* shares the memory, its own metadata */
    }
    GST_BUFFER_PTS (b) = i * GST_SECOND / 60;
    GST_BUFFER_DURATION (b) = GST_SECOND / 60;
    ret = gst_pad_push (src, b);
    if (ret == GST_FLOW_OK && is_sink_element ())
      sink_add (1, 0);
  } else if (r->lists) {
    ret = gst_pad_push_list (src, r->objs[i]);
  } else {
    ret = gst_pad_push (src, r->objs[i]);
  }
  if (r->objs)
    r->objs[i] = NULL;
  return ret == GST_FLOW_OK;
}

/* the pushing thread's CPU time in its sleeps between ticks: the source's
 * pacing, which is no element's (a wake-up costs tens of us on a VM) */
static guint64 pacing_cpu, pacing_wakes;

/* Pushes items [from, to) at the rate, in ticks of at least 1 ms (a slow
 * rate wakes once an item); returns the count pushed. */
static guint64
push_paced (Run * r, guint64 from, guint64 to)
{
  guint64 start = mono_ns (), wake = start, i = from, c0;

  while (i < to) {
    guint64 due = (guint64) ((mono_ns () - start) * rate / GST_SECOND) + 1;

    for (; i < to && (rate <= 0 || i - from < due); i++)
      if (!push_item (r, i))
        return i - from;
    if (rate > 0 && i < to) {
      /* the next item's time, a tick after the last wake at the soonest */
      guint64 next = start + (guint64) ((i - from) * GST_SECOND / rate);
      struct timespec ts;

      wake = MAX (next, wake + GST_MSECOND);
      ts.tv_sec = wake / GST_SECOND;
      ts.tv_nsec = wake % GST_SECOND;
      c0 = thread_cpu_ns ();
      clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
      pacing_cpu += thread_cpu_ns () - c0;
      pacing_wakes++;
    }
  }
  return i - from;
}

static void
run_close (Run * r)
{
  guint64 i;
  guint j;

  if (r->e)
    gst_element_set_state (r->e, GST_STATE_NULL);
  for (j = 0; j < r->n_req; j++) {
    gst_element_release_request_pad (r->e, r->ereq[j]);
    gst_object_unref (r->ereq[j]);
  }
  for (i = 0; r->objs && i < r->n_objs; i++)
    if (r->objs[i])
      gst_mini_object_unref (r->objs[i]);
  g_free (r->objs);
  if (r->pool) {
    gst_buffer_pool_set_active (r->pool, FALSE);
    gst_object_unref (r->pool);
  }
  gst_clear_buffer (&r->frame);
  for (j = 0; j < r->n_src; j++)
    gst_object_unref (r->src[j]);
  for (j = 0; j < r->n_sink; j++)
    gst_object_unref (r->sinkpads[j]);
  gst_clear_object (&r->e);
}

/* ---- JSON -------------------------------------------------------------------------- */
static void
json_str (GString * s, const gchar * v)
{
  g_string_append_c (s, '"');
  for (; v && *v; v++) {
    if (*v == '"' || *v == '\\')
      g_string_append_printf (s, "\\%c", *v);
    else if ((guchar) * v < 0x20)
      g_string_append_printf (s, "\\u%04x", *v);
    else
      g_string_append_c (s, *v);
  }
  g_string_append_c (s, '"');
}

int
main (int argc, char **argv)
{
  static ThreadSnap before[MAX_THREADS], after[MAX_THREADS];
  guint nb, na, i, j;
  guint64 cpu0, cpu1, main0, main1, t0, t1, t_push, pacing, wakes, pushed, out0, out1, tail = 0, spare;
  GpusimStats s0, s1;
  gboolean have_sim, done;
  Run r = { 0 };
  GString *js;
  pid_t main_tid = (pid_t) syscall (SYS_gettid);
  gchar *estats = NULL;

  gst_init (&argc, &argv);
  for (i = 1; i < (guint) argc; i++) {
    const gchar *a = argv[i], *v = i + 1 < (guint) argc ? argv[i + 1] : NULL;

    if (!v)
      g_error ("%s: a value is missing", a);
    i++;
    if (!strcmp (a, "--element"))
      element = v;
    else if (!strcmp (a, "--backend"))
      backend = v;
    else if (!strcmp (a, "--input"))
      input = v;
    else if (!strcmp (a, "--processor"))
      processor = v;
    else if (!strcmp (a, "--pipelines"))
      pipelines = CLAMP (atoi (v), 1, MAX_STREAMS);
    else if (!strcmp (a, "--cycle"))
      cycle = g_ascii_strtoull (v, NULL, 10);
    else if (!strcmp (a, "--rate"))
      rate = g_ascii_strtod (v, NULL);
    else if (!strcmp (a, "--items"))
      items = g_ascii_strtoull (v, NULL, 10);
    else if (!strcmp (a, "--warm"))
      warm = g_ascii_strtoull (v, NULL, 10);
    else if (!strcmp (a, "--size"))
      size = g_ascii_strtoull (v, NULL, 10);
    else if (!strcmp (a, "--m"))
      m = atoi (v);
    else if (!strcmp (a, "--k"))
      k = atoi (v);
    else if (!strcmp (a, "--width"))
      width = atoi (v);
    else if (!strcmp (a, "--height"))
      height = atoi (v);
    else
      g_error ("unknown option %s", a);
  }
  if (!strcmp (element, "rtgpuqueue") || !strcmp (element, "srtpenc"))
    size = PKT_SIZE;
  else if (!strcmp (element, "dxtenc"))
    size = (guint64) width * height * 4;        /* RGBA */

  run_open (&r);
  /* spare items: an element that holds some in flight until more comes
   * (ncencoder) gives the window's last ones out for them */
  spare = 16;
  make_items (&r, warm + items + spare);

  /* warm-up: every lane, pool and context made; then quiet */
  if (push_paced (&r, 0, warm) != warm)
    g_error ("%s: the warm-up's pushes failed", element);
  sink_settle (warm * r.out_per_item, 300 * GST_MSECOND);
  g_usleep (100000);

  out0 = sink_count ();
  have_sim = sim_stats (&s0);
  nb = snap_threads (before, MAX_THREADS);
  cpu0 = process_cpu_ns ();
  /* this thread's own clock: its snapshots of the others lie outside */
  main0 = thread_cpu_ns ();
  t0 = mono_ns ();
  pacing_cpu = pacing_wakes = 0;

  pushed = push_paced (&r, warm, warm + items);
  t_push = mono_ns ();
  done = sink_wait (out0 + items * r.out_per_item, 500 * GST_MSECOND);
  /* ncencoder gives out a generation once more input comes: the spare
   * items let the window's last ones out (their pushes are in the
   * window, their output is not counted) */
  while (!done && !strcmp (element, "ncencoder") && tail < spare &&
      pushed == items) {
    if (push_paced (&r, warm + items + tail, warm + items + tail + 1) != 1)
      break;
    tail++;
    done = sink_wait (out0 + items * r.out_per_item, 200 * GST_MSECOND);
  }

  t1 = mono_ns ();
  main1 = thread_cpu_ns ();
  cpu1 = process_cpu_ns ();
  pacing = pacing_cpu;
  wakes = pacing_wakes;
  na = snap_threads (after, MAX_THREADS);
  sim_stats (&s1);
  out1 = sink_count ();

  if (r.e && g_object_class_find_property (G_OBJECT_GET_CLASS (r.e), "stats")) {
    GstStructure *st = NULL;

    g_object_get (r.e, "stats", &st, NULL);
    if (st) {
      estats = gst_structure_to_string (st);
      gst_structure_free (st);
    }
  }

  js = g_string_new ("RESULT {");
  g_string_append (js, "\"element\":");
  json_str (js, element);
  g_string_append (js, ",\"backend\":");
  json_str (js, backend);
  g_string_append (js, ",\"input\":");
  json_str (js, input);
  g_string_append (js, ",\"processor\":");
  json_str (js, processor);
  g_string_append (js, ",\"model\":");
  json_str (js, g_getenv ("GPUSIM_MODEL") ? g_getenv ("GPUSIM_MODEL") : "h100");
  g_string_append_printf (js, ",\"pipelines\":%u,\"cycle_ns\":%" G_GUINT64_FORMAT
      ",\"rate_items_per_s\":%.1f,\"items\":%" G_GUINT64_FORMAT ",\"pushed\":%"
      G_GUINT64_FORMAT ",\"tail\":%" G_GUINT64_FORMAT ",\"warm\":%"
      G_GUINT64_FORMAT ",\"out_per_item\":%u,\"out\":%" G_GUINT64_FORMAT
      ",\"complete\":%s,\"size\":%" G_GUINT64_FORMAT ",\"m\":%u,\"k\":%u,"
      "\"width\":%u,\"height\":%u,\"pool\":%s,\"wall_ns\":%" G_GUINT64_FORMAT
      ",\"push_ns\":%" G_GUINT64_FORMAT
      ",\"process_cpu_ns\":%" G_GUINT64_FORMAT ",\"pacing_cpu_ns\":%"
      G_GUINT64_FORMAT ",\"pacing_wakes\":%" G_GUINT64_FORMAT
      ",\"threads\":[",
      pipelines, cycle, rate, items, pushed, tail, warm, r.out_per_item,
      out1 - out0, done ? "true" : "false", size, m, k, width, height,
      r.pool ? "true" : "false", t1 - t0, t_push - t0, cpu1 - cpu0, pacing, wakes);
  for (i = 0; i < na; i++) {
    guint64 c0 = 0;

    for (j = 0; j < nb; j++)
      if (before[j].tid == after[i].tid)
        c0 = before[j].cpu;
    if (after[i].tid == main_tid) {
      c0 = 1;
      after[i].cpu = main1 - main0 + 1;
    }
    g_string_append_printf (js, "%s{\"tid\":%d,\"name\":", i ? "," : "",
        after[i].tid);
    json_str (js, after[i].name);
    g_string_append_printf (js, ",\"cpu_ns\":%" G_GUINT64_FORMAT ",\"gpusim\":%s,"
        "\"main\":%s,\"new\":%s}", after[i].cpu - MIN (c0, after[i].cpu),
        is_sim_tid (after[i].tid) ? "true" : "false",
        after[i].tid == main_tid ? "true" : "false",
        c0 == 0 ? "true" : "false");
  }
  g_string_append (js, "]");
  if (have_sim)
    g_string_append_printf (js, ",\"gpusim\":{\"launches\":%" G_GUINT64_FORMAT
        ",\"threads\":%" G_GUINT64_FORMAT ",\"copies\":%" G_GUINT64_FORMAT
        ",\"copy_bytes\":%" G_GUINT64_FORMAT ",\"model_busy_s\":%.9f,"
        "\"stream_threads\":%u}", s1.launches - s0.launches,
        s1.threads - s0.threads, s1.copies - s0.copies,
        s1.copy_bytes - s0.copy_bytes, s1.model_busy_s - s0.model_busy_s,
        n_sim_tids);
  g_string_append (js, ",\"element_stats\":");
  json_str (js, estats);
  g_string_append (js, "}");
  printf ("%s\n", js->str);
  fflush (stdout);
  if (!done)
    fprintf (stderr, "%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
        " out in the window; stats: %s\n", element, out1 - out0,
        items * r.out_per_item, estats ? estats : "-");
  g_string_free (js, TRUE);
  g_free (estats);

  run_close (&r);
  return 0;
}
