/* The library's "dxt-encode" processor (gpsdxt.c, gpsprocessor.h), looked
 * up by name and configured from a GstStructure: frames of every input
 * format, texture and quality, in the default layout and in padded planes
 * described by a GstVideoMeta, go through a scheduler client on the CPU
 * backend and come back as the bytes of the kernels' reference
 * (dxt_encode_frame), with their timestamps and offsets; a frame shorter
 * than its format is dropped, counted and reported; a wrong configuration
 * is refused with an error that names the field. With a CUDA device, the
 * same frames through the GPU backend give the same bytes. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include "check/gpu_expected.h"
#include <gst/video/video.h>
#include <string.h>

#include "gpsdxt.h"
#include "gpsprocessor.h"
#include "gpsschedclient.h"

#define CYCLE (2 * GST_MSECOND)
#define N_FRAMES 5

/* ---- a client that collects what the processor made -------------------- */

static GMutex out_lock;
static GPtrArray *outs;         /* GstBuffer, in output order */

static GstFlowReturn
collect_output (gpointer stream_data, gpointer data, GstEvent * event)
{
  if (event) {
    gst_event_unref (event);
    return GST_FLOW_OK;
  }
  g_mutex_lock (&out_lock);
  g_ptr_array_add (outs, data);
  g_mutex_unlock (&out_lock);
  return GST_FLOW_OK;
}

static void
collect_drop (gpointer data)
{
  gst_buffer_unref (data);
}

static const GstGpuStreamSchedClientCallbacks collect_callbacks = {
  collect_output, collect_drop, NULL, NULL
};

/* ---- frames and their reference ------------------------------------------ */

typedef struct
{
  GstVideoFormat vformat;
  DxtFormat dxt_format;
  guint width, height;
  const gchar *texture;
  DxtCodec codec;
  const gchar *quality;
  DxtQuality q;
  guint batch_blocks;
  guint pad;                    /* > 0: each plane's stride padded, a meta */
} Case;

static const Case cases[] = {
  {GST_VIDEO_FORMAT_UYVY, DXT_FMT_UYVY, 37, 21, "dxt1", DXT_BC1, "fast",
      DXT_FAST, 0, 0},
  {GST_VIDEO_FORMAT_YUY2, DXT_FMT_YUY2, 64, 8, "dxt5", DXT_BC3, "high",
      DXT_HIGH, 16, 0},
  {GST_VIDEO_FORMAT_RGBA, DXT_FMT_RGBA, 20, 13, "ycocg-dxt5", DXT_YCOCG,
      "fast", DXT_FAST, 5, 0},
  {GST_VIDEO_FORMAT_BGRx, DXT_FMT_BGRX, 9, 9, "dxt1", DXT_BC1, "high",
      DXT_HIGH, 1, 8},
  {GST_VIDEO_FORMAT_I420, DXT_FMT_I420, 33, 17, "ycocg-dxt5", DXT_YCOCG,
      "high", DXT_HIGH, 9, 12},
  {GST_VIDEO_FORMAT_NV12, DXT_FMT_NV12, 18, 10, "dxt5", DXT_BC3, "fast",
      DXT_FAST, 0, 4},
  {GST_VIDEO_FORMAT_BGRA, DXT_FMT_BGRA, 4, 4, "dxt5", DXT_BC3, "fast",
      DXT_FAST, 23040, 0},
  {GST_VIDEO_FORMAT_RGBx, DXT_FMT_RGBX, 130, 6, "dxt1", DXT_BC1, "fast",
      DXT_FAST, 40, 0},
};

static GstStructure *
case_config (const Case * c)
{
  return gst_structure_new ("dxt-encode",
      "video-format", G_TYPE_STRING, gst_video_format_to_string (c->vformat),
      "width", G_TYPE_INT, (gint) c->width,
      "height", G_TYPE_INT, (gint) c->height,
      "texture", G_TYPE_STRING, c->texture,
      "quality", G_TYPE_STRING, c->quality,
      "batch-blocks", G_TYPE_UINT, c->batch_blocks,
      "threads", G_TYPE_UINT, 2, NULL);
}

/* Frame seed of c with pseudo-random pixels: the default layout, or with
 * pad, planes of padded strides (a GstVideoMeta says where). Its expected
 * block stream into *ref (dxt_frame_bytes bytes, g_free). */
static GstBuffer *
case_frame (const Case * c, guint seed, guint8 ** ref)
{
  GstVideoInfo info;
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 }, size = 0;
  gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
  guint n_planes, p;
  guint32 x = 0x9e3779b9u * (seed + 1);
  GstBuffer *buf;
  GstMapInfo map;
  DxtImage img;
  gsize i;

  fail_unless (gst_video_info_set_format (&info, c->vformat, c->width,
          c->height));
  n_planes = GST_VIDEO_INFO_N_PLANES (&info);
  for (p = 0; p < n_planes; p++) {
    guint rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (info.finfo, p,
        c->height);

    stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p) + c->pad;
    offset[p] = c->pad ? size : GST_VIDEO_INFO_PLANE_OFFSET (&info, p);
    size = offset[p] + (gsize) stride[p] * rows;
  }
  if (!c->pad)
    size = GST_VIDEO_INFO_SIZE (&info);
  buf = gst_buffer_new_allocate (NULL, size, NULL);
  if (c->pad)
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        c->vformat, c->width, c->height, n_planes, offset, stride);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (i = 0; i < map.size; i++) {
    x = x * 1664525u + 1013904223u;
    map.data[i] = x >> 24;
  }
  memset (&img, 0, sizeof img);
  for (p = 0; p < n_planes; p++) {
    img.plane[p] = map.data + offset[p];
    img.stride[p] = stride[p];
  }
  img.width = c->width;
  img.height = c->height;
  img.format = c->dxt_format;
  *ref = g_malloc (dxt_frame_bytes (c->codec, c->width, c->height));
  fail_unless_equals_int (dxt_encode_frame (&img, c->codec, c->q, *ref), 0);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = seed * GST_MSECOND;
  GST_BUFFER_OFFSET (buf) = 1000 + seed;
  return buf;
}

static guint64
stat_u64 (const GstGpuStreamProcessorInfo * info, gpointer inst,
    const gchar * name)
{
  GstStructure *s = gst_structure_new_empty ("stats");
  guint64 v = G_MAXUINT64;

  info->get_stats (inst, s);
  fail_unless (gst_structure_get_uint64 (s, name, &v), "no %s", name);
  gst_structure_free (s);
  return v;
}

/* dxt-encode configured for c, run by a scheduler client on backend */
typedef struct
{
  const GstGpuStreamProcessorInfo *info;
  gpointer inst;
  GstElement *owner;
  GstGpuStreamSchedClient *client;
  GstGpuStreamSchedClientStream *stream;
} Run;

static void
run_start (Run * r, const Case * c, GstElement * owner,
    GstGpuStreamBackend backend, GstObject * ctx)
{
  GstStructure *config = case_config (c);
  GError *err = NULL;

  r->info = gst_gpustream_processor_lookup ("dxt-encode", &err);
  fail_unless (r->info != NULL, "%s", err ? err->message : "?");
  fail_unless_equals_string (r->info->name, "dxt-encode");
  r->inst = r->info->setup (config, owner, &err);
  fail_unless (r->inst != NULL, "%s", err ? err->message : "?");
  gst_structure_free (config);
  r->owner = owner;
  outs = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  r->client = gst_gpustream_sched_client_new (owner, &r->info->processor,
      r->inst, &collect_callbacks, NULL);
  /* a declared rate: the owner's only warnings are the processor's */
  gst_gpustream_sched_client_set_rate (r->client, 1000000, "max-rate");
  fail_unless (gst_gpustream_sched_client_start (r->client, CYCLE, 1,
          backend, ctx));
  r->stream = gst_gpustream_sched_client_add_stream (r->client, 1 << 20,
      NULL, NULL, NULL);
  fail_unless (r->stream != NULL);
}

static void
run_end (Run * r)
{
  gst_gpustream_sched_client_stop (r->client);
  gst_gpustream_sched_client_remove_stream (r->client, r->stream);
  gst_gpustream_sched_client_free (r->client);
  r->info->teardown (r->inst);
  g_ptr_array_free (outs, TRUE);
  outs = NULL;
  gst_object_unref (r->owner);
}

/* Every frame of c through a client started on backend: the reference's
 * bytes, in order, with the frames' timestamps and offsets. */
static void
check_case (const Case * c, GstGpuStreamBackend backend, GstObject * ctx)
{
  gsize tex_size = dxt_frame_bytes (c->codec, c->width, c->height);
  guint8 *refs[N_FRAMES];
  guint slice_rows, slices, i;
  Run r;

  run_start (&r, c, gst_bin_new (NULL), backend, ctx);
  for (i = 0; i < N_FRAMES; i++) {
    GstBuffer *frame = case_frame (c, i, &refs[i]);

    fail_unless_equals_int (gst_gpustream_sched_client_push (r.stream, frame,
            gst_buffer_get_size (frame)), GST_FLOW_OK);
  }
  fail_unless_equals_int (gst_gpustream_sched_client_wait (r.stream, 0),
      GST_FLOW_OK);

  fail_unless_equals_int (outs->len, N_FRAMES);
  for (i = 0; i < N_FRAMES; i++) {
    GstBuffer *out = g_ptr_array_index (outs, i);

    fail_unless_equals_int (gst_buffer_get_size (out), tex_size);
    fail_unless (gst_buffer_memcmp (out, 0, refs[i], tex_size) == 0,
        "%s %ux%u %s %s pad %u: frame %u differs from dxt_encode_frame",
        gst_video_format_to_string (c->vformat), c->width, c->height,
        c->texture, c->quality, c->pad, i);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_MSECOND);
    fail_unless_equals_uint64 (GST_BUFFER_OFFSET (out), 1000 + i);
    g_free (refs[i]);
  }
  slice_rows = c->batch_blocks ? MAX (1, c->batch_blocks /
      dxt_blocks_x (c->width)) : dxt_blocks_y (c->height);
  slices = (dxt_blocks_y (c->height) + slice_rows - 1) / slice_rows;
  fail_unless_equals_uint64 (stat_u64 (r.info, r.inst, "slices"),
      (guint64) N_FRAMES * slices);
  fail_unless_equals_uint64 (stat_u64 (r.info, r.inst, "dxt-drops"), 0);
  fail_unless_equals_uint64 (stat_u64 (r.info, r.inst, "gpu-frames") +
      stat_u64 (r.info, r.inst, "cpu-frames"), N_FRAMES);
  if (backend == GST_GPUSTREAM_BACKEND_CPU)
    fail_unless_equals_uint64 (stat_u64 (r.info, r.inst, "cpu-frames"),
        N_FRAMES);
  run_end (&r);
}

/* ---- tests --------------------------------------------------------------- */

GST_START_TEST (test_batch_matches_reference)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    check_case (&cases[i], GST_GPUSTREAM_BACKEND_CPU, NULL);
}

GST_END_TEST;

/* The GPU backend where a CUDA device is usable: the same bytes. */
GST_START_TEST (test_batch_gpu)
{
  GstObject *ctx;
  guint i;

  if (!gst_gpustream_gpu_available ()) {
    gpu_skip_allowed ("dxt-encode on the GPU");
    GST_INFO ("GPU backend not checked: %s",
        gst_gpustream_gpu_unavailable_reason ());
    return;
  }
  ctx = gst_gpustream_cuda_context_new (-1, NULL);
  fail_unless (ctx != NULL);
  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    check_case (&cases[i], GST_GPUSTREAM_BACKEND_GPU, ctx);
  gst_object_unref (ctx);
}

GST_END_TEST;

/* A frame shorter than its format: dropped (not output), counted, and one
 * warning on the owner's bus naming the processor; the next frame is
 * coded. */
GST_START_TEST (test_short_frame_dropped)
{
  const Case *c = &cases[0];
  GstElement *owner = gst_pipeline_new (NULL);
  GstBus *bus = gst_element_get_bus (owner);
  GstBuffer *good, *shorter;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  guint8 *ref, *unused;
  Run r;

  run_start (&r, c, owner, GST_GPUSTREAM_BACKEND_CPU, NULL);
  shorter = case_frame (c, 0, &unused);
  gst_buffer_resize (shorter, 0, gst_buffer_get_size (shorter) - 1);
  g_free (unused);
  good = case_frame (c, 1, &ref);
  gst_gpustream_sched_client_push (r.stream, shorter, 1);
  gst_gpustream_sched_client_push (r.stream, good, 1);
  fail_unless_equals_int (gst_gpustream_sched_client_wait (r.stream, 0),
      GST_FLOW_OK);

  fail_unless_equals_int (outs->len, 1);
  fail_unless (gst_buffer_memcmp (g_ptr_array_index (outs, 0), 0, ref,
          dxt_frame_bytes (c->codec, c->width, c->height)) == 0);
  fail_unless_equals_uint64 (GST_BUFFER_OFFSET (g_ptr_array_index (outs, 0)),
      1001);
  fail_unless_equals_uint64 (stat_u64 (r.info, r.inst, "dxt-drops"), 1);
  fail_unless_equals_uint64 (stat_u64 (r.info, r.inst, "cpu-frames"), 1);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning (msg, &err, &debug);
  fail_unless (strstr (err->message, "dxt-encode dropped a 37x21 UYVY "
          "frame") != NULL, "%s", err->message);
  fail_unless (strstr (err->message, "too small") != NULL, "%s",
      err->message);
  fail_unless (strstr (debug, "dxt-drops") != NULL, "%s", debug);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  g_free (ref);
  gst_object_unref (bus);
  run_end (&r);
}

GST_END_TEST;

/* config (taken), refused: the error names field. */
static void
check_refused (GstStructure * config, const gchar * field)
{
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("dxt-encode", NULL);
  GError *err = NULL;

  fail_unless (info->setup (config, NULL, &err) == NULL);
  fail_unless (g_error_matches (err, GST_GPUSTREAM_PROCESSOR_ERROR,
          GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG));
  fail_unless (strstr (err->message, "dxt-encode") != NULL, "%s",
      err->message);
  fail_unless (strstr (err->message, field) != NULL, "%s: no %s",
      err->message, field);
  g_clear_error (&err);
  if (config)
    gst_structure_free (config);
}

GST_START_TEST (test_config_refused)
{
  GstStructure *s;

  check_refused (NULL, "video-format");
  s = case_config (&cases[0]);
  gst_structure_remove_field (s, "video-format");
  check_refused (s, "video-format");
  s = case_config (&cases[0]);
  gst_structure_set (s, "video-format", G_TYPE_STRING, "GRAY8", NULL);
  check_refused (s, "video-format");
  s = case_config (&cases[0]);
  gst_structure_remove_field (s, "width");
  check_refused (s, "width");
  s = case_config (&cases[0]);
  gst_structure_set (s, "height", G_TYPE_INT, -4, NULL);
  check_refused (s, "height");
  s = case_config (&cases[0]);
  gst_structure_set (s, "width", G_TYPE_INT, 0, NULL);
  check_refused (s, "width");
  s = case_config (&cases[0]);
  gst_structure_set (s, "texture", G_TYPE_STRING, "bc7", NULL);
  check_refused (s, "texture");
  s = case_config (&cases[0]);
  gst_structure_set (s, "quality", G_TYPE_STRING, "best", NULL);
  check_refused (s, "quality");
  s = case_config (&cases[0]);
  gst_structure_set (s, "batch-blocks", G_TYPE_STRING, "many", NULL);
  check_refused (s, "batch-blocks");
}

GST_END_TEST;

/* The defaults: texture dxt1, quality fast, the whole frame in slices of
 * 23040 blocks (one slice here). */
GST_START_TEST (test_config_defaults)
{
  Case c = cases[0];
  const GstGpuStreamProcessorInfo *info =
      gst_gpustream_processor_lookup ("dxt-encode", NULL);
  GstStructure *config = gst_structure_new ("dxt-encode",
      "video-format", G_TYPE_STRING, "UYVY",
      "width", G_TYPE_INT, (gint) c.width,
      "height", G_TYPE_INT, (gint) c.height, NULL);
  GstGpuStreamSchedItem item = { 0 };
  guint8 *ref;
  gpointer inst = info->setup (config, NULL, NULL);

  fail_unless (inst != NULL);
  gst_structure_free (config);
  c.codec = DXT_BC1;
  c.q = DXT_FAST;
  /* a batch of one without a scheduler, as an unscheduled element runs it */
  item.data = case_frame (&c, 3, &ref);
  item.flags = GST_GPUSTREAM_SCHED_ITEM_PACKET;
  info->processor.process_cpu (inst, &item, 1);
  fail_unless (item.data != NULL);
  fail_unless_equals_int (gst_buffer_get_size (item.data),
      dxt_frame_bytes (DXT_BC1, c.width, c.height));
  fail_unless (gst_buffer_memcmp (item.data, 0, ref,
          dxt_frame_bytes (DXT_BC1, c.width, c.height)) == 0);
  fail_unless_equals_uint64 (stat_u64 (info, inst, "slices"), 1);
  gst_buffer_unref (item.data);
  g_free (ref);
  info->teardown (inst);
}

GST_END_TEST;

static Suite *
gpsdxt_suite (void)
{
  Suite *s = suite_create ("gpsdxt");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_batch_matches_reference);
  tcase_add_test (tc, test_batch_gpu);
  tcase_add_test (tc, test_short_frame_dropped);
  tcase_add_test (tc, test_config_refused);
  tcase_add_test (tc, test_config_defaults);
  return s;
}

GST_CHECK_MAIN (gpsdxt);
