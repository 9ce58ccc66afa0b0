/* GPU faults on the simulated device (kernels/gpusim): an allocation, a
 * copy or a launch that fails, and a device lost in the middle of a stream,
 * injected into every GPU element's path. Each run must end (no hang, no
 * crash) either with an error from the element itself that names the GPU,
 * or with the output of backend=cpu byte for byte and a warning from the
 * element saying that its work went to the CPU; nothing may be left
 * allocated on the device once the pipeline is gone (the sanitizer build
 * checks the host side's leaks). Runs only as elements-gpufaults on the
 * simulated device, which is the only place a fault can be asked for. */
#include <dlfcn.h>
#include <string.h>
#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/app/gstappsink.h>
#include <glib/gstdio.h>

#include "gpusim.h"

static void (*sim_arm) (GpusimFault, uint32_t);
static void (*sim_reset) (void);
static void (*sim_stats) (GpusimStats *);

static void
load_simulator (void)
{
  GstElement *e;
  void *lib;

  /* GstCuda opens the driver on first use: have it do so, then reach the
   * simulator's controls in the very library it loaded */
  e = gst_element_factory_make ("dxtenc", NULL);
  fail_unless (e != NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "gpu");
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
  lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  fail_unless (lib != NULL, "libcuda.so.1 is not loaded");
  sim_arm = (void (*)(GpusimFault, uint32_t)) dlsym (lib, "gpusim_fault_arm");
  sim_reset = (void (*)(void)) dlsym (lib, "gpusim_reset");
  sim_stats = (void (*)(GpusimStats *)) dlsym (lib, "gpusim_get_stats");
  fail_unless (sim_arm && sim_reset && sim_stats,
      "libcuda.so.1 is not the simulated device");
}

typedef struct {
  GByteArray *bytes;            /* every output buffer, in order */
  gchar *error;                 /* the first error: "source: message" */
  gboolean error_from_element;  /* posted by the element under test */
  gchar *warning;               /* the first warning of the element under test */
  gboolean eos;
} Run;

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer data)
{
  Run *r = data;
  GstSample *s = gst_app_sink_pull_sample (sink);
  GstMapInfo map;

  if (!s)
    return GST_FLOW_ERROR;
  gst_buffer_map (gst_sample_get_buffer (s), &map, GST_MAP_READ);
  g_byte_array_append (r->bytes, map.data, map.size);
  gst_buffer_unmap (gst_sample_get_buffer (s), &map);
  gst_sample_unref (s);
  return GST_FLOW_OK;
}

/* desc has one %s for the backend and an element named "under" */
static Run
run (const gchar * desc_fmt, const gchar * backend)
{
  gchar *desc = g_strdup_printf (desc_fmt, backend);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err), *sink;
  GstAppSinkCallbacks cb = { NULL, NULL, on_sample };
  Run r = { g_byte_array_new (), NULL, FALSE, NULL, FALSE };
  GstBus *bus;
  gint64 until = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;

  fail_unless (pipe != NULL && err == NULL, "%s: %s", desc, err ? err->message : "");
  sink = gst_bin_get_by_name (GST_BIN (pipe), "out");
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, &r, NULL);
  gst_object_unref (sink);
  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  while (!r.eos && !r.error) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 100 * GST_MSECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
    fail_if (g_get_monotonic_time () > until, "%s: hangs", desc);
    if (!m)
      continue;
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS) {
      r.eos = TRUE;
    } else {
      GError *e = NULL;
      gboolean from_under = !g_strcmp0 (GST_OBJECT_NAME (GST_MESSAGE_SRC (m)), "under");
      if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
        gst_message_parse_error (m, &e, NULL);
        r.error = g_strdup_printf ("%s: %s", GST_OBJECT_NAME (GST_MESSAGE_SRC (m)),
            e->message);
        r.error_from_element = from_under;
      } else {
        gst_message_parse_warning (m, &e, NULL);
        if (from_under && !r.warning)
          r.warning = g_strdup (e->message);
      }
      g_clear_error (&e);
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_free (desc);
  return r;
}

static void
run_clear (Run * r)
{
  g_byte_array_unref (r->bytes);
  g_free (r->error);
  g_free (r->warning);
}

static const struct {
  GpusimFault kind;
  const gchar *name;
} faults[] = {
  {GPUSIM_FAULT_ALLOC, "alloc"},
  {GPUSIM_FAULT_COPY, "copy"},
  {GPUSIM_FAULT_LAUNCH, "launch"},
  {GPUSIM_FAULT_LOST, "lost"},
};

/* Every fault at the first call of its kind and at a later one (in the
 * middle of the stream), against the element's CPU output. */
static void
check_faults (const gchar * what, const gchar * desc_fmt)
{
  Run want = run (desc_fmt, "cpu");
  guint f, nth;

  fail_unless (want.eos && want.bytes->len > 0, "%s on the CPU: %s", what, want.error);
  for (f = 0; f < G_N_ELEMENTS (faults); f++) {
    for (nth = 1; nth <= 5; nth += 4) {
      GpusimStats before, after;
      Run got;

      sim_reset ();
      sim_stats (&before);
      sim_arm (faults[f].kind, nth);
      got = run (desc_fmt, "gpu");
      sim_stats (&after);
      sim_reset ();
      if (after.faults == before.faults) {
        /* the path makes fewer calls of that kind than nth */
        GST_INFO ("%s: %s fault %u never fired", what, faults[f].name, nth);
        fail_unless (got.eos, "%s: %s", what, got.error);
      } else if (got.error) {
        fail_unless (got.error_from_element, "%s, %s fault %u: the error is not "
            "the element's own: %s", what, faults[f].name, nth, got.error);
        fail_unless (strstr (got.error, "GPU") || strstr (got.error, "CUDA"),
            "%s, %s fault %u: the error does not name the GPU: %s", what,
            faults[f].name, nth, got.error);
      } else {
        fail_unless (got.eos);
        fail_unless (got.bytes->len == want.bytes->len &&
            !memcmp (got.bytes->data, want.bytes->data, want.bytes->len),
            "%s, %s fault %u: the output differs from the CPU's (%u bytes, want %u)",
            what, faults[f].name, nth, got.bytes->len, want.bytes->len);
        fail_unless (got.warning != NULL, "%s, %s fault %u: the work went to the "
            "CPU without a warning", what, faults[f].name, nth);
        /* the CPU took the work over, or (no pinned memory) the GPU kept
         * it through pageable memory: either is said */
        fail_unless (strstr (got.warning, "CPU") != NULL ||
            strstr (got.warning, "pageable") != NULL, "%s: %s", what,
            got.warning);
      }
      g_print ("%s, %s fault at call %u: %s\n", what, faults[f].name, nth,
          after.faults == before.faults ? "not reached" : got.error ? got.error :
          got.warning);
      /* the device holds nothing of a pipeline that is gone, but what the
       * library keeps between pipelines (its idle staging, freed after 5 s) */
      fail_unless (after.allocs_live <= before.allocs_live + 16,
          "%s, %s fault %u: %" G_GUINT64_FORMAT " device allocations more", what,
          faults[f].name, nth, after.allocs_live - before.allocs_live);
      run_clear (&got);
    }
  }
  run_clear (&want);
}

#define KEY "012345678901234567890123456789012345678901234567890123456789"

GST_START_TEST (test_dxtenc)
{
  check_faults ("dxtenc", "videotestsrc num-buffers=8 pattern=smpte ! "
      "video/x-raw,format=UYVY,width=320,height=240 ! "
      "dxtenc name=under backend=%s format=dxt5 ! appsink name=out sync=false");
}

GST_END_TEST;

GST_START_TEST (test_dxtdec)
{
  check_faults ("dxtdec", "videotestsrc num-buffers=8 pattern=smpte ! "
      "video/x-raw,format=RGBA,width=320,height=240 ! dxtenc backend=cpu ! "
      "dxtdec name=under backend=%s ! appsink name=out sync=false");
}

GST_END_TEST;

GST_START_TEST (test_gpusrtpenc)
{
  /* rtpvrawpay pushes lists: one GPU batch each */
  check_faults ("gpusrtpenc", "videotestsrc num-buffers=4 pattern=smpte ! "
      "video/x-raw,format=UYVY,width=320,height=240 ! "
      "rtpvrawpay ssrc=4660 seqnum-offset=1 timestamp-offset=1 ! "
      "gpusrtpenc name=under backend=%s key=" KEY " ! appsink name=out sync=false");
}

GST_END_TEST;

GST_START_TEST (test_gpusrtpdec)
{
  check_faults ("gpusrtpdec", "videotestsrc num-buffers=4 pattern=smpte ! "
      "video/x-raw,format=UYVY,width=320,height=240 ! "
      "rtpvrawpay ssrc=4660 seqnum-offset=1 timestamp-offset=1 ! "
      "srtpenc key=" KEY " ! gpusrtpdec name=under backend=%s ! "
      "appsink name=out sync=false");
}

GST_END_TEST;

GST_START_TEST (test_ncencoder)
{
  /* the coder pool's GPU coder; the CPU decoder gives the bytes back */
  gchar *path = g_build_filename (g_get_tmp_dir (), "gpufaults-nc.bin", NULL);
  guint8 *data = g_malloc (300000);
  gchar *desc;
  guint i;

  for (i = 0; i < 300000; i++)
    data[i] = (guint8) (i * 2654435761u >> 24);
  fail_unless (g_file_set_contents (path, (gchar *) data, 300000, NULL));
  desc = g_strdup_printf ("filesrc location=%s ! ncencoder name=under "
      "backend=%%s generation-size=16 block-size=1024 ! ncdecoder backend=cpu ! "
      "appsink name=out sync=false", path);
  check_faults ("ncencoder", desc);
  g_unlink (path);
  g_free (desc);
  g_free (path);
  g_free (data);
}

GST_END_TEST;

GST_START_TEST (test_rtgpuqueue_srtp)
{
  check_faults ("rtgpuqueue srtp-protect", "rtgpuqueue name=under "
      "processor=srtp-protect backend=%s srtp-key=" KEY " cycle=2000000 "
      "default-max-rate=100000000 police-burst=1000000000 "
      /* keep-deadlines off: a sanitizer-slowed worker would drop late
       * packets of the CPU run, which is the reference */
      "keep-deadlines=false "
      /* 4 x 28 packets: fewer than a first batch holds (256), so that a
       * worker slowed by the sanitizers drops none (drops-overflow) and
       * the CPU run's bytes are the reference */
      "videotestsrc num-buffers=4 pattern=smpte ! identity sync=true ! "
      "video/x-raw,format=UYVY,width=160,height=120 ! "
      "rtpvrawpay ssrc=4660 seqnum-offset=1 timestamp-offset=1 ! under.sink_0 "
      "under.src_0 ! appsink name=out sync=false");
}

GST_END_TEST;

static Suite *
gpufaults_suite (void)
{
  Suite *s = suite_create ("gpufaults");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  /* the controls are reached once per process: no fork per test */
  tcase_add_unchecked_fixture (tc, load_simulator, NULL);
  tcase_add_test (tc, test_dxtenc);
  tcase_add_test (tc, test_dxtdec);
  tcase_add_test (tc, test_gpusrtpenc);
  tcase_add_test (tc, test_gpusrtpdec);
  tcase_add_test (tc, test_ncencoder);
  tcase_add_test (tc, test_rtgpuqueue_srtp);
  return s;
}

GST_CHECK_MAIN (gpufaults);
