/* dxtenc's buffers (plugins/dxt, gst/gpustream's pinned pools): the pool
 * it offers upstream in the ALLOCATION query, on the CPU (system memory,
 * min-buffers what the mode keeps in flight) and on the GPU (pinned memory
 * of its CUDA context); frames from that pool give the same bytes as frames
 * from anywhere else and as the kernels' dxt_encode_frame. On the GPU (only
 * where a CUDA device is found; skipped, and said so, elsewhere): frames in
 * flight on the lanes leave in order with their timestamps, the blocks come
 * in pinned buffers, and a stopped pipeline holds no pinned memory once its
 * buffers are gone. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <string.h>

#include <dxt/dxt.h>
#include "gstgpustream.h"
#include "element_backend.h"

#define PINNED_TYPE GST_GPUSTREAM_PINNED_MEMORY_TYPE

/* Smooth content with a noisy band, different per seed. */
static void
fill_frame (GstBuffer * buf, guint seed)
{
  GstMapInfo map;
  GRand *rand = g_rand_new_with_seed (seed);
  gsize i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (i = 0; i < map.size; i++)
    map.data[i] = ((i / 256) % 7 == 3) ? g_rand_int (rand) & 0xFF :
        (guint8) (((i / 64) * 13 + seed) & 0xFF);
  gst_buffer_unmap (buf, &map);
  g_rand_free (rand);
}

/* The kernels' bytes for the frame in buf. */
static guint8 *
reference (const GstVideoInfo * info, GstBuffer * buf, DxtFormat fmt,
    gsize * size)
{
  GstVideoFrame vf;
  DxtImage img;
  guint8 *out;
  guint p;

  memset (&img, 0, sizeof img);
  fail_unless (gst_video_frame_map (&vf, info, buf, GST_MAP_READ));
  for (p = 0; p < GST_VIDEO_FRAME_N_PLANES (&vf); p++) {
    img.plane[p] = GST_VIDEO_FRAME_PLANE_DATA (&vf, p);
    img.stride[p] = GST_VIDEO_FRAME_PLANE_STRIDE (&vf, p);
  }
  img.width = info->width;
  img.height = info->height;
  img.format = fmt;
  *size = dxt_frame_bytes (DXT_BC1, info->width, info->height);
  out = g_malloc (*size);
  fail_unless_equals_int (dxt_encode_frame (&img, DXT_BC1, DXT_FAST, out), 0);
  gst_video_frame_unmap (&vf);
  return out;
}

/* Asks the element behind h for buffers of caps: the first pool offered
 * (a ref; NULL when none) and its size and min-buffers. */
static GstBufferPool *
ask_pool (GstHarness * h, GstCaps * caps, guint * size, guint * min,
    gboolean * video_meta)
{
  GstQuery *q = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  guint max = 99;

  fail_unless (gst_pad_peer_query (h->srcpad, q));
  fail_unless (gst_query_get_n_allocation_pools (q) >= 1);
  gst_query_parse_nth_allocation_pool (q, 0, &pool, size, min, &max);
  fail_unless_equals_int (max, 0);
  *video_meta = gst_query_find_allocation_meta (q, GST_VIDEO_META_API_TYPE,
      NULL);
  gst_query_unref (q);
  return pool;
}

/* n frames through "dxtenc <opts>" at 30 fps, from the pool the element
 * offers (pooled) or from plain allocations; EOS, then every output pulled
 * and checked against the kernels' bytes, in order, with the input's
 * timestamps. Returns the outputs' memory: pinned (TRUE) or not. */
static gboolean
run_frames (const gchar * opts, const gchar * format, guint w, guint h,
    DxtFormat fmt, guint n, gboolean pooled, guint expect_min,
    const gchar * expect_mem)
{
  gchar *launch = g_strdup_printf ("dxtenc %s", opts);
  GstHarness *hr = gst_harness_new_parse (launch);
  GstVideoInfo info;
  GstCaps *caps;
  GstBufferPool *pool;
  GstBuffer **in = g_new0 (GstBuffer *, n);
  gboolean video_meta, out_pinned = TRUE;
  guint size = 0, min = 99, i;

  gst_video_info_set_format (&info, gst_video_format_from_string (format), w,
      h);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  caps = gst_video_info_to_caps (&info);
  gst_harness_set_src_caps (hr, gst_caps_ref (caps));

  pool = ask_pool (hr, caps, &size, &min, &video_meta);
  fail_unless (pool != NULL, "%s: no pool offered", opts);
  fail_unless_equals_int (size, info.size);
  fail_unless_equals_int (min, expect_min);
  fail_unless (video_meta);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));

  for (i = 0; i < n; i++) {
    GstMemory *mem;

    if (pooled) {
      fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &in[i],
              NULL), GST_FLOW_OK);
      mem = gst_buffer_peek_memory (in[i], 0);
      fail_unless (expect_mem ? gst_memory_is_type (mem, expect_mem) :
          mem->allocator == NULL || !strcmp (mem->allocator->mem_type,
              GST_ALLOCATOR_SYSMEM), "%s: pool memory %s", opts,
          mem->allocator ? mem->allocator->mem_type : "?");
    } else {
      in[i] = gst_buffer_new_allocate (NULL, info.size, NULL);
    }
    fill_frame (in[i], w + h + i);
    GST_BUFFER_PTS (in[i]) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (in[i]) = GST_SECOND / 30;
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in[i])),
        GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (hr, gst_event_new_eos ()));
  for (i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_pull (hr);
    GstMapInfo map;
    gsize ref_size;
    guint8 *ref = reference (&info, in[i], fmt, &ref_size);

    fail_unless (out != NULL);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_SECOND / 30);
    out_pinned &= gst_memory_is_type (gst_buffer_peek_memory (out, 0),
        PINNED_TYPE);
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    fail_unless_equals_int (map.size, ref_size);
    fail_unless (memcmp (map.data, ref, ref_size) == 0,
        "%s %s %ux%u frame %u (%s): not the kernels' bytes", opts, format,
        w, h, i, pooled ? "pool" : "plain");
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
    g_free (ref);
    gst_buffer_unref (in[i]);
  }
  fail_unless_equals_int (gst_harness_buffers_in_queue (hr), 0);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_caps_unref (caps);
  gst_harness_teardown (hr);
  g_free (in);
  g_free (launch);
  return out_pinned;
}

/* The CPU backend offers an ordinary system-memory video pool of frame-size
 * buffers; unscheduled it keeps no frame (min 0), scheduled as many as it
 * lets into the scheduler (8 at 30 fps and a 1 ms cycle). Frames from it
 * give the kernels' bytes, as plain ones do. */
GST_START_TEST (test_cpu_pool)
{
  fail_if (run_frames ("backend=cpu", "UYVY", 640, 360, DXT_FMT_UYVY, 4,
          TRUE, 0, NULL));
  fail_if (run_frames ("backend=cpu", "UYVY", 640, 360, DXT_FMT_UYVY, 4,
          FALSE, 0, NULL));
  run_frames ("backend=cpu", "I420", 130, 66, DXT_FMT_I420, 3, TRUE, 0, NULL);
  run_frames ("backend=cpu cycle=1000000", "RGBA", 64, 48, DXT_FMT_RGBA, 5,
      TRUE, 8, NULL);
}

GST_END_TEST;

/* Caps in CUDA memory get no pool from dxtenc (cudaupload brings its
 * own); the video meta is still accepted. */
GST_START_TEST (test_cuda_caps_no_pool)
{
  GstHarness *hr = gst_harness_new_parse ("dxtenc backend=cpu");
  GstCaps *caps = gst_caps_from_string ("video/x-raw(memory:CUDAMemory),"
      "format=RGBA,width=64,height=32,framerate=30/1");
  GstQuery *q;

  gst_harness_set_src_caps (hr, gst_caps_ref (caps));
  q = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (hr->srcpad, q));
  fail_unless_equals_int (gst_query_get_n_allocation_pools (q), 0);
  fail_unless (gst_query_find_allocation_meta (q, GST_VIDEO_META_API_TYPE,
          NULL));
  gst_query_unref (q);
  gst_caps_unref (caps);
  gst_harness_teardown (hr);
}

GST_END_TEST;

/* Without a CUDA context there is no pinned memory to offer. */
GST_START_TEST (test_no_context_no_pinned)
{
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGBA,width=8,"
      "height=8");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16, NULL);

  fail_unless (gst_gpustream_pinned_allocator_new (NULL) == NULL);
  fail_unless (gst_gpustream_pinned_pool_new (NULL, caps, 256, 0, 0) == NULL);
  fail_if (gst_gpustream_buffer_is_pinned (buf, NULL));
  gst_buffer_unref (buf);
  gst_caps_unref (caps);
}

GST_END_TEST;

/* The GPU backend offers pinned memory (min-buffers: the lanes in flight);
 * frames from it and from plain memory give the kernels' bytes, in order,
 * with their timestamps, in pinned output buffers; once the pipeline is
 * gone and the staging released, nothing stays pinned. */
GST_START_TEST (test_gpu_pinned_pool)
{
  static const struct
  {
    const gchar *format;
    DxtFormat fmt;
    guint w, h;
  } cases[] = {
    {"RGBA", DXT_FMT_RGBA, 1918, 1080}, {"UYVY", DXT_FMT_UYVY, 1920, 1080},
    {"I420", DXT_FMT_I420, 130, 66}, {"NV12", DXT_FMT_NV12, 70, 37},
  };
  guint c;

  if (!element_gpu_usable ("dxtenc")) {
    g_print ("no CUDA device: pinned pool test skipped\n");
    return;
  }
  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    fail_unless (run_frames ("backend=gpu", cases[c].format, cases[c].w,
            cases[c].h, cases[c].fmt, 7, TRUE, 3, PINNED_TYPE));
    fail_unless (run_frames ("backend=gpu batch-blocks=0", cases[c].format,
            cases[c].w, cases[c].h, cases[c].fmt, 5, FALSE, 3, PINNED_TYPE));
  }
  /* the scheduled path codes through the same processor */
  run_frames ("backend=gpu cycle=2000000", "UYVY", 640, 360, DXT_FMT_UYVY, 5,
      TRUE, 8, PINNED_TYPE);
  gst_gpustream_release_idle_staging (0);
  fail_unless_equals_uint64 (gst_gpustream_pinned_bytes (), 0);
}

GST_END_TEST;

/* Upstream asks for a pool on its own streaming thread, which runs on
 * while a state change stops dxtenc (upstream stops after it): queries
 * from another thread while the element goes PLAYING -> READY -> PLAYING
 * again and again. Each one is refused (flushing), answered as by a stopped
 * encoder (no pool), or offers the pool of its caps; none reads a stopped
 * element's state (a crash here, a use after free under the sanitizers). */
typedef struct
{
  GstPad *pad;
  GstCaps *caps;
  gint stop;
  gint answered, pools;
} AskLoop;

static gpointer
ask_loop (gpointer data)
{
  AskLoop *a = data;

  while (!g_atomic_int_get (&a->stop)) {
    GstQuery *q = gst_query_new_allocation (a->caps, TRUE);

    if (gst_pad_peer_query (a->pad, q)) {
      guint n = gst_query_get_n_allocation_pools (q);

      fail_unless (n <= 1);
      if (n == 1) {
        GstBufferPool *pool = NULL;
        guint size = 0, min = 99, max = 99;

        gst_query_parse_nth_allocation_pool (q, 0, &pool, &size, &min, &max);
        fail_unless (pool != NULL);
        fail_unless_equals_int (size, 64 * 32 * 4);
        fail_unless_equals_int (min, 0);
        gst_object_unref (pool);
        g_atomic_int_inc (&a->pools);
      }
      g_atomic_int_inc (&a->answered);
    }
    gst_query_unref (q);
  }
  return NULL;
}

GST_START_TEST (test_query_while_stopping)
{
  GstHarness *h = gst_harness_new_parse ("dxtenc backend=cpu");
  AskLoop a = { h->srcpad, gst_caps_from_string ("video/x-raw,format=RGBA,"
        "width=64,height=32,framerate=30/1"), 0, 0, 0 };
  GThread *asker = g_thread_new ("ask", ask_loop, &a);
  guint i;

  gint64 end = g_get_monotonic_time () + 20 * G_TIME_SPAN_SECOND;

  /* 500 cycles at least, and on until the asker has been answered a pool
   * (on a loaded machine its thread may not run during the first 500) */
  for (i = 0; i < 500 || (g_atomic_int_get (&a.pools) == 0 &&
          g_get_monotonic_time () < end); i++) {
    fail_unless (gst_element_set_state (h->element, GST_STATE_READY) ==
        GST_STATE_CHANGE_SUCCESS);
    fail_unless (gst_element_set_state (h->element, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_SUCCESS);
    if (i >= 500)
      g_usleep (1000);
  }
  g_atomic_int_set (&a.stop, 1);
  g_thread_join (asker);
  /* the element was running most of the time: pools were offered */
  fail_unless (a.pools > 0, "%d queries answered, no pool in %u cycles",
      a.answered, i);
  gst_caps_unref (a.caps);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
pools_suite (void)
{
  Suite *s = suite_create ("pools");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_cpu_pool);
  tcase_add_test (tc, test_cuda_caps_no_pool);
  tcase_add_test (tc, test_no_context_no_pinned);
  tcase_add_test (tc, test_gpu_pinned_pool);
  tcase_add_test (tc, test_query_while_stopping);
  return s;
}

GST_CHECK_MAIN (pools);
