/* Every element through state changes NULL -> PLAYING -> NULL again and
 * again with data flowing, a flushing seek mid-stream, EOS with a unit
 * (generation, frame batch, SRTP batch) incomplete, and new caps mid-stream:
 * no hang (every wait is bounded), everything that should come out does,
 * and nothing is left behind. GStreamer 1.22's leaks tracer cannot check this:
 * it races with streaming threads and crashes even `fakesrc ! queue !
 * fakesink` in about half the runs (seen here), and GObject instance
 * counting is compiled out of Debian's GLib. So the test counts for itself,
 * with weak references on the pipeline, its bus, every element and every pad,
 * and on every buffer that enters or leaves the pipelines: all of them must
 * be finalized once the pipelines are gone. */
#include <string.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>

#define CYCLES 20

static gint buffers_seen;
static gint buffers_finalized;

static void
buffer_finalized (gpointer data, GstMiniObject * obj)
{
  g_atomic_int_inc (&buffers_finalized);
}

static void
watch_buffer (GstBuffer * buf)
{
  g_atomic_int_inc (&buffers_seen);
  gst_mini_object_weak_ref (GST_MINI_OBJECT (buf), buffer_finalized, NULL);
}

/* What passes the src pad of the element named "src" (in) and the sink pad
 * of the one named "sink" (out); every buffer is watched. With new_caps,
 * the capsfilter named "cf" gets them once renegotiate_after buffers went
 * in (from the streaming thread: the next buffer is made under them). */
typedef struct {
  GMutex lock;
  guint buffers_in, buffers_out;
  guint64 bytes_in, bytes_out;
  guint renegotiate_after;
  GstCaps *new_caps;
  GstElement *capsfilter;
} Flow;

static void
flow_count (Flow * f, GstPadProbeInfo * info, gboolean in)
{
  GstBufferList *list = NULL;
  GstBuffer *one = NULL;
  guint i, n;

  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    list = GST_PAD_PROBE_INFO_BUFFER_LIST (info);
    n = gst_buffer_list_length (list);
  } else {
    one = GST_PAD_PROBE_INFO_BUFFER (info);
    n = 1;
  }
  g_mutex_lock (&f->lock);
  for (i = 0; i < n; i++) {
    GstBuffer *b = list ? gst_buffer_list_get (list, i) : one;

    watch_buffer (b);
    if (in) {
      f->buffers_in++;
      f->bytes_in += gst_buffer_get_size (b);
    } else {
      f->buffers_out++;
      f->bytes_out += gst_buffer_get_size (b);
    }
  }
  g_mutex_unlock (&f->lock);
}

static GstPadProbeReturn
flow_in (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Flow *f = data;

  flow_count (f, info, TRUE);
  if (f->new_caps && f->buffers_in == f->renegotiate_after)
    g_object_set (f->capsfilter, "caps", f->new_caps, NULL);
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
flow_out (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  flow_count (data, info, FALSE);
  return GST_PAD_PROBE_OK;
}

static guint
flow_buffers_out (Flow * f)
{
  guint n;

  g_mutex_lock (&f->lock);
  n = f->buffers_out;
  g_mutex_unlock (&f->lock);
  return n;
}

static gint objects_seen;
/* the watched objects not yet finalized, each with its path in its
 * pipeline, so that a failure names what was left */
static GMutex alive_lock;
static GHashTable *alive;

static void
object_finalized (gpointer data, GObject * obj)
{
  g_mutex_lock (&alive_lock);
  g_hash_table_remove (alive, obj);
  g_mutex_unlock (&alive_lock);
}

static void
watch_object (GObject * obj)
{
  gchar *path = gst_object_get_path_string (GST_OBJECT (obj));

  g_mutex_lock (&alive_lock);
  if (alive == NULL)
    alive = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_hash_table_insert (alive, obj, g_strdup_printf ("%s (%s)", path,
          G_OBJECT_TYPE_NAME (obj)));
  g_mutex_unlock (&alive_lock);
  g_free (path);
  g_atomic_int_inc (&objects_seen);
  g_object_weak_ref (obj, object_finalized, NULL);
}

static void
watch_pad (const GValue * item, gpointer data)
{
  watch_object (g_value_get_object (item));
}

static void
watch_element (const GValue * item, gpointer data)
{
  GstElement *e = g_value_get_object (item);
  GstIterator *pads = gst_element_iterate_pads (e);

  watch_object (G_OBJECT (e));
  while (gst_iterator_foreach (pads, watch_pad, NULL) == GST_ITERATOR_RESYNC)
    gst_iterator_resync (pads);
  gst_iterator_free (pads);
}

/* Every element, pad and the bus of the pipeline, and the pipeline. */
static void
watch_pipeline (GstElement * p)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (p));
  GstBus *bus = gst_element_get_bus (p);

  while (gst_iterator_foreach (it, watch_element, NULL) == GST_ITERATOR_RESYNC)
    gst_iterator_resync (it);
  gst_iterator_free (it);
  watch_object (G_OBJECT (bus));
  gst_object_unref (bus);
  watch_object (G_OBJECT (p));
}

static void
probe_pad (GstElement * p, const gchar * element, const gchar * pad,
    GstPadProbeCallback callback, Flow * f)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), element);
  GstPad *q;

  fail_unless (e != NULL, "no element named %s", element);
  q = gst_element_get_static_pad (e, pad);
  gst_pad_add_probe (q, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, callback, f, NULL);
  gst_object_unref (q);
  gst_object_unref (e);
}

/* The pipeline of description, watched, with f (zeroed) counting its flow. */
static GstElement *
launch (const gchar * description, Flow * f)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (description, &err);

  fail_unless (p != NULL && err == NULL, "could not build %s: %s",
      description, err ? err->message : "?");
  watch_pipeline (p);
  memset (f, 0, sizeof *f);
  g_mutex_init (&f->lock);
  probe_pad (p, "src", "src", flow_in, f);
  probe_pad (p, "sink", "sink", flow_out, f);
  return p;
}

static void
finish (GstElement * p, Flow * f)
{
  fail_unless (gst_element_set_state (p, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);
  gst_clear_caps (&f->new_caps);
  gst_clear_object (&f->capsfilter);
  g_mutex_clear (&f->lock);
}

/* EOS or an error within 30 s (a hang fails here) */
static GstMessage *
wait_end (GstElement * p, const gchar * description)
{
  GstMessage *msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p),
      30 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  fail_unless (msg != NULL, "neither EOS nor an error in 30 s: %s",
      description);
  return msg;
}

static void
expect_eos (GstElement * p, const gchar * description)
{
  GstMessage *msg = wait_end (p, description);

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;

    gst_message_parse_error (msg, &err, NULL);
    fail ("error in %s: %s", description, err->message);
  }
  gst_message_unref (msg);
}

static guint
objects_alive (void)
{
  guint n;

  g_mutex_lock (&alive_lock);
  n = alive ? g_hash_table_size (alive) : 0;
  g_mutex_unlock (&alive_lock);
  return n;
}

static gboolean
all_finalized (void)
{
  return objects_alive () == 0 && g_atomic_int_get (&buffers_finalized) ==
      g_atomic_int_get (&buffers_seen);
}

/* The first few watched objects still alive, one per line */
static gchar *
describe_alive (void)
{
  GString *s = g_string_new (NULL);
  GHashTableIter it;
  gpointer description;
  guint listed = 0;

  g_mutex_lock (&alive_lock);
  g_hash_table_iter_init (&it, alive);
  while (listed++ < 20 && g_hash_table_iter_next (&it, NULL, &description))
    g_string_append_printf (s, "\n  %s", (const gchar *) description);
  g_mutex_unlock (&alive_lock);
  return g_string_free (s, FALSE);
}

/* Every object and buffer the tests watched is gone. Not always at once:
 * a bin ends an asynchronous state change on a thread of GStreamer's own
 * pool (gst_element_call_async), which holds a reference to the pipeline
 * until it returns, so the pipeline of the last cycle can be finalized a
 * moment after the test let go of it. What is still there after 10 s is
 * left behind. */
static void
assert_all_finalized (void)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  gchar *left;

  fail_unless (objects_seen > 0);
  fail_unless (buffers_seen > 0);
  while (!all_finalized () && g_get_monotonic_time () < deadline)
    g_usleep (10000);
  left = describe_alive ();
  fail_unless (objects_alive () == 0, "%u of %d objects left:%s",
      objects_alive (), g_atomic_int_get (&objects_seen), left);
  g_free (left);
  fail_unless_equals_int (g_atomic_int_get (&buffers_finalized),
      g_atomic_int_get (&buffers_seen));
}

static void
cycle (const gchar * description)
{
  guint i;

  for (i = 0; i < CYCLES; i++) {
    Flow f;
    GstElement *p = launch (description, &f);
    GstMessage *msg;

    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    /* every other cycle is stopped mid-stream, the others run to EOS */
    if (i % 2 == 0) {
      msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (p), 30 * GST_SECOND,
          GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
      fail_unless (msg != NULL, "no EOS in %s", description);
      fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
          "error in %s", description);
      gst_message_unref (msg);
    } else {
      g_usleep (2000);
    }
    finish (p, &f);
  }
}

/* a 30-byte master key and salt (AES-128-CM with HMAC-SHA1-80, gpusrtpenc's
 * default) as GStreamer reads a buffer from a string */
#define KEY "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d"
#define SRTP_QUEUE "rtgpuqueue processor=srtp-protect backend=cpu " \
  "srtp-key=" KEY " cycle=2000000 default-max-rate=100000000 " \
  "police-burst=1000000000 "
#define VIDEO(n) "videotestsrc name=src num-buffers=" G_STRINGIFY (n) \
  " ! video/x-raw,format=RGBA,width=64,height=32,framerate=30/1 "
/* sources paced by the clock (identity sync), so that they are still
 * producing when a test acts on the stream, whatever the elements after
 * them hold */
#define VIDEO_SYNC(n) VIDEO (n) "! identity sync=true "
#define AUDIO_SYNC(n) "audiotestsrc num-buffers=" G_STRINGIFY (n) \
  " samplesperbuffer=441 ! identity sync=true "
#define SINK_SYNC " ! fakesink name=sink sync=true"

static gchar *
temp_mov (void)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp ("leaks-XXXXXX.mov", &path, NULL);

  fail_unless (fd >= 0);
  g_close (fd, NULL);
  return path;
}

/* Video frames in a QuickTime file, as qtdemux reads them */
static gint
mov_frames (const gchar * path)
{
  gchar *d = g_strdup_printf ("filesrc location=%s ! qtdemux ! "
      "fakesink name=sink", path);
  GstElement *p = gst_parse_launch (d, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  Flow f;
  GstMessage *msg;

  memset (&f, 0, sizeof f);
  g_mutex_init (&f.lock);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, flow_out, &f, NULL);
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = wait_end (p, d);
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS, "%s unreadable",
      path);
  gst_message_unref (msg);
  gst_object_unref (pad);
  gst_object_unref (sink);
  finish (p, &f);
  g_free (d);
  return (gint) f.buffers_out;
}

#define SRC "fakesrc name=src signal-handoffs=true num-buffers=40 " \
  "sizetype=fixed sizemax=5000 filltype=random "
#define SINK " ! fakesink name=sink signal-handoffs=true"

GST_START_TEST (test_state_cycles_leave_nothing)
{
  cycle (SRC "! ncencoder generation-size=8 block-size=300 ! ncdecoder" SINK);
  cycle (SRC "! ncencoder generation-size=8 block-size=300 systematic=false "
      "coefficients=vector ! rtpncpay ! rtpncdepay ! ncencoder redundancy=2 "
      "! ncdecoder" SINK);
  /* losses with some generations still decoded: a stream of which nothing
   * decodes ends in an error, which is not what this checks */
  cycle (SRC "! ncencoder max-latency=1000000 generation-size=16 "
      "redundancy-percent=40 ! identity drop-probability=0.2 "
      "! ncdecoder max-generations-in-flight=2" SINK);
  /* through the real-time scheduler (cycle > 0): frames and generations
   * in flight in the worker and forwarder when a cycle stops mid-stream */
  cycle (SRC "! ncencoder generation-size=8 block-size=300 cycle=2000000 "
      "! ncdecoder" SINK);
  cycle ("fakesrc name=src signal-handoffs=true num-buffers=20 format=time "
      "sizetype=fixed sizemax=8192 filltype=random ! "
      "video/x-raw,format=RGBA,width=64,height=32,framerate=30/1 ! "
      "dxtenc format=dxt5 hap=true cycle=2000000" SINK);
  /* a framed NC stream (input with caps): records, caps records and the
   * decoder's reassembly, stopped mid-record every other cycle */
  cycle ("fakesrc name=src signal-handoffs=true num-buffers=20 format=time "
      "sizetype=fixed sizemax=8192 filltype=random ! "
      "video/x-raw,format=RGBA,width=64,height=32,framerate=30/1 ! "
      "ncencoder generation-size=8 block-size=700 ! ncdecoder" SINK);
  /* SRTP batches (cycle) in flight, both ways */
  cycle ("audiotestsrc num-buffers=40 ! rtpL16pay name=src ! "
      "gpusrtpenc key=" KEY " cycle=2000000 ! gpusrtpdec" SINK);
  cycle ("audiotestsrc num-buffers=40 ! rtpL16pay name=src ! " SRTP_QUEUE
      "! gpusrtpdec" SINK);
  cycle (VIDEO (20) "! dxtenc format=dxt1 hap=true ! dxtdec" SINK);
  {
    gchar *mov = temp_mov ();
    gchar *d = g_strdup_printf (VIDEO (20) "! dxtenc format=dxt5 hap=true "
        "! hapmovmux ! filesink name=sink location=%s", mov);

    cycle (d);
    g_free (d);
    g_unlink (mov);
    g_free (mov);
  }
  assert_all_finalized ();
}

GST_END_TEST;

/* A flushing seek back to the start once a few buffers are out (the sinks
 * sync, so the stream is still going): the elements drop what they hold,
 * data flows again, EOS comes. */
static void
seek_midstream (const gchar * description)
{
  Flow f;
  GstElement *p = launch (description, &f);
  guint before, waited = 0;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while (flow_buffers_out (&f) < 5 && waited++ < 3000)
    g_usleep (10000);
  fail_unless (flow_buffers_out (&f) >= 5, "nothing came out of %s",
      description);
  fail_unless (gst_element_seek_simple (p, GST_FORMAT_TIME,
          GST_SEEK_FLAG_FLUSH, 0), "flushing seek refused: %s", description);
  before = flow_buffers_out (&f);
  expect_eos (p, description);
  fail_unless (flow_buffers_out (&f) > before,
      "nothing came out after the seek: %s", description);
  finish (p, &f);
}

GST_START_TEST (test_flushing_seek)
{
  seek_midstream (VIDEO_SYNC (30) "! ncencoder generation-size=8 "
      "block-size=700 ! rtpncpay ! rtpncdepay ! ncdecoder" SINK_SYNC);
  /* through the real-time scheduler: generations in the worker */
  seek_midstream (VIDEO_SYNC (30) "! ncencoder generation-size=8 "
      "block-size=700 cycle=2000000 ! ncdecoder" SINK_SYNC);
  seek_midstream (AUDIO_SYNC (100) "! rtpL16pay name=src ! gpusrtpenc key="
      KEY " cycle=2000000 ! gpusrtpdec" SINK_SYNC);
  seek_midstream (AUDIO_SYNC (100) "! rtpL16pay name=src ! " SRTP_QUEUE
      "! gpusrtpdec" SINK_SYNC);
  seek_midstream (VIDEO_SYNC (30) "! dxtenc format=dxt5 hap=true "
      "cycle=2000000 ! dxtdec" SINK_SYNC);

  /* hapmovmux writes a file front to back: it refuses the seek, and the
   * file gets every frame */
  {
    gchar *mov = temp_mov ();
    gchar *d = g_strdup_printf (VIDEO (30) "! dxtenc format=dxt5 hap=true "
        "! hapmovmux ! filesink name=sink location=%s", mov);
    Flow f;
    GstElement *p = launch (d, &f);

    fail_unless (gst_element_set_state (p, GST_STATE_PAUSED) !=
        GST_STATE_CHANGE_FAILURE);
    fail_unless (gst_element_get_state (p, NULL, NULL, 30 * GST_SECOND) ==
        GST_STATE_CHANGE_SUCCESS);
    fail_if (gst_element_seek_simple (p, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH,
            0), "hapmovmux took a seek");
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    expect_eos (p, d);
    finish (p, &f);
    fail_unless_equals_int (mov_frames (mov), 30);
    g_unlink (mov);
    g_free (mov);
    g_free (d);
  }
  assert_all_finalized ();
}

GST_END_TEST;

/* EOS while a unit is incomplete: 13 blocks for generations of 8, 7 frames
 * for a batch of 2 ms, RTP packets mid-batch. Everything that went in comes
 * out, and EOS does. */
static void
eos_midunit (const gchar * description, gboolean same_bytes)
{
  Flow f;
  GstElement *p = launch (description, &f);

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  expect_eos (p, description);
  if (same_bytes) {
    fail_unless (f.bytes_in > 0);
    fail_unless (f.bytes_out == f.bytes_in, "%" G_GUINT64_FORMAT " bytes in, %"
        G_GUINT64_FORMAT " out: %s", f.bytes_in, f.bytes_out, description);
  }
  finish (p, &f);
}

GST_START_TEST (test_eos_mid_unit)
{
  eos_midunit ("fakesrc name=src num-buffers=13 sizetype=fixed sizemax=1000 "
      "filltype=random ! ncencoder generation-size=8 block-size=1000 ! "
      "ncdecoder ! fakesink name=sink", TRUE);
  eos_midunit ("fakesrc name=src num-buffers=13 sizetype=fixed sizemax=1000 "
      "filltype=random ! ncencoder generation-size=8 block-size=1000 "
      "cycle=2000000 ! rtpncpay ! rtpncdepay ! ncdecoder ! fakesink name=sink",
      TRUE);
  eos_midunit ("audiotestsrc num-buffers=23 ! rtpL16pay name=src ! "
      "gpusrtpenc key=" KEY " cycle=2000000 ! gpusrtpdec ! fakesink name=sink",
      TRUE);
  eos_midunit ("audiotestsrc num-buffers=23 ! rtpL16pay name=src ! "
      SRTP_QUEUE "! gpusrtpdec ! fakesink name=sink", TRUE);
  eos_midunit (VIDEO (7) "! dxtenc format=dxt5 hap=true cycle=2000000 ! "
      "dxtdec ! fakesink name=sink", TRUE);
  {
    gchar *mov = temp_mov ();
    gchar *d = g_strdup_printf (VIDEO (7) "! dxtenc format=dxt1 hap=true "
        "cycle=2000000 ! hapmovmux ! filesink name=sink location=%s", mov);

    eos_midunit (d, FALSE);
    fail_unless_equals_int (mov_frames (mov), 7);
    g_unlink (mov);
    g_free (mov);
    g_free (d);
  }
  assert_all_finalized ();
}

GST_END_TEST;

/* New caps on the capsfilter "cf" after 5 buffers: the stream goes on
 * under them to the end (the caps the sink has last carry field = value),
 * every byte through. */
static void
renegotiate (const gchar * description, const gchar * new_caps,
    const gchar * field, gint value, gboolean same_bytes)
{
  Flow f;
  GstElement *p = launch (description, &f);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  GstCaps *caps;
  gint got = 0;

  f.capsfilter = gst_bin_get_by_name (GST_BIN (p), "cf");
  f.new_caps = gst_caps_from_string (new_caps);
  f.renegotiate_after = 5;
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  expect_eos (p, description);
  caps = gst_pad_get_current_caps (pad);
  fail_unless (caps != NULL);
  gst_structure_get_int (gst_caps_get_structure (caps, 0), field, &got);
  fail_unless_equals_int (got, value);
  if (same_bytes)
    fail_unless (f.bytes_out == f.bytes_in, "%" G_GUINT64_FORMAT " bytes in, %"
        G_GUINT64_FORMAT " out: %s", f.bytes_in, f.bytes_out, description);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (sink);
  finish (p, &f);
}

#define VIDEO_CF(n) "videotestsrc name=src num-buffers=" G_STRINGIFY (n) \
  " ! capsfilter name=cf caps=video/x-raw,format=RGBA,width=64,height=32," \
  "framerate=30/1 "
#define AUDIO_CF(n) "audiotestsrc num-buffers=" G_STRINGIFY (n) \
  " ! capsfilter name=cf caps=audio/x-raw,rate=8000 ! rtpL16pay name=src "

GST_START_TEST (test_caps_renegotiation)
{
  const gchar *taller = "video/x-raw,format=RGBA,width=32,height=64,"
      "framerate=30/1";

  renegotiate (VIDEO_CF (20) "! dxtenc format=dxt5 hap=true ! dxtdec ! "
      "fakesink name=sink", taller, "height", 64, TRUE);
  /* a framed NC stream carries the new caps in a caps record */
  renegotiate (VIDEO_CF (20) "! ncencoder generation-size=8 block-size=700 ! "
      "rtpncpay ! rtpncdepay ! ncdecoder ! fakesink name=sink", taller,
      "height", 64, TRUE);
  renegotiate (AUDIO_CF (40) "! gpusrtpenc key=" KEY " ! gpusrtpdec ! "
      "fakesink name=sink", "audio/x-raw,rate=16000", "clock-rate", 16000,
      TRUE);
  renegotiate (AUDIO_CF (40) "! " SRTP_QUEUE "! gpusrtpdec ! "
      "fakesink name=sink", "audio/x-raw,rate=16000", "clock-rate", 16000,
      TRUE);

  /* a QuickTime track has one size: hapmovmux says so in an error */
  {
    gchar *mov = temp_mov ();
    gchar *d = g_strdup_printf (VIDEO_CF (20) "! dxtenc format=dxt5 hap=true "
        "! hapmovmux name=mux ! filesink name=sink location=%s", mov);
    Flow f;
    GstElement *p = launch (d, &f);
    GstMessage *msg;
    GError *err = NULL;

    f.capsfilter = gst_bin_get_by_name (GST_BIN (p), "cf");
    f.new_caps = gst_caps_from_string (taller);
    f.renegotiate_after = 5;
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    msg = wait_end (p, d);
    fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
        "hapmovmux took a new size mid-stream");
    gst_message_parse_error (msg, &err, NULL);
    fail_unless (g_strcmp0 (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), "mux") == 0);
    fail_unless (g_error_matches (err, GST_CORE_ERROR,
            GST_CORE_ERROR_NEGOTIATION), "%s", err->message);
    g_error_free (err);
    gst_message_unref (msg);
    finish (p, &f);
    g_unlink (mov);
    g_free (mov);
    g_free (d);
  }
  assert_all_finalized ();
}

GST_END_TEST;

static Suite *
leaks_suite (void)
{
  Suite *s = suite_create ("leaks");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_state_cycles_leave_nothing);
  tcase_add_test (tc, test_flushing_seek);
  tcase_add_test (tc, test_eos_mid_unit);
  tcase_add_test (tc, test_caps_renegotiation);
  return s;
}

GST_CHECK_MAIN (leaks);
