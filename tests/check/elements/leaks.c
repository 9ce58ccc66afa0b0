/* State changes NULL -> PLAYING -> NULL, again and again, with data flowing,
 * must leave nothing behind. GStreamer 1.22's leaks tracer cannot check this:
 * it races with streaming threads and crashes even `fakesrc ! queue !
 * fakesink` in about half the runs (seen here), and GObject instance
 * counting is compiled out of Debian's GLib. So the test counts for itself,
 * with weak references on the pipeline, its bus, every element and every pad,
 * and on every buffer that enters or leaves the pipelines: all of them must
 * be finalized once the pipelines are gone. */
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
on_handoff (GstElement * element, GstBuffer * buf, GstPad * pad, gpointer data)
{
  g_atomic_int_inc (&buffers_seen);
  gst_mini_object_weak_ref (GST_MINI_OBJECT (buf), buffer_finalized, NULL);
}

static gint objects_seen;
static gint objects_finalized;

static void
object_finalized (gpointer data, GObject * obj)
{
  g_atomic_int_inc (&objects_finalized);
}

static void
watch_object (GObject * obj)
{
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
cycle (const gchar * description)
{
  guint i;

  for (i = 0; i < CYCLES; i++) {
    GstElement *p = gst_parse_launch (description, NULL), *e;
    GstMessage *msg;

    fail_unless (p != NULL, "could not build %s", description);
    watch_pipeline (p);
    e = gst_bin_get_by_name (GST_BIN (p), "src");
    g_signal_connect (e, "handoff", G_CALLBACK (on_handoff), NULL);
    gst_object_unref (e);
    e = gst_bin_get_by_name (GST_BIN (p), "sink");
    g_signal_connect (e, "handoff", G_CALLBACK (on_handoff), NULL);
    gst_object_unref (e);

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
    fail_unless (gst_element_set_state (p, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    gst_object_unref (p);
  }
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

  fail_unless (objects_seen > 0);
  fail_unless_equals_int (g_atomic_int_get (&objects_finalized),
      g_atomic_int_get (&objects_seen));
  fail_unless (buffers_seen > 0);
  fail_unless_equals_int (g_atomic_int_get (&buffers_finalized),
      g_atomic_int_get (&buffers_seen));
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
  return s;
}

GST_CHECK_MAIN (leaks);
