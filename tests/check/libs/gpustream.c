/* Tests of libgstgpustream: the backend enum, the GstGpuStreamGpu helpers
 * through a dummy element, the coder pool (CPU path, checked byte for
 * byte against the scalar reference of kernels/rlnc), and the pinned
 * memory allocator and pool (with a CUDA device). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include "check/gpu_expected.h"
#include <string.h>

#include "gstgpustream.h"
#include "rlnc/rlnc.h"

/* ---- a dummy element embedding GstGpuStreamGpu ------------------------ */

#define GPS_TYPE_TEST_ELEMENT (gps_test_element_get_type ())
G_DECLARE_FINAL_TYPE (GpsTestElement, gps_test_element, GPS, TEST_ELEMENT,
    GstElement);

struct _GpsTestElement
{
  GstElement parent;
  GstGpuStreamGpu gpu;
};

enum
{
  PROP_0,
  PROP_BACKEND,
  PROP_DEVICE_ID,
};

G_DEFINE_TYPE (GpsTestElement, gps_test_element, GST_TYPE_ELEMENT);

static void
gps_test_element_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GpsTestElement *self = GPS_TEST_ELEMENT (object);

  if (!gst_gpustream_gpu_set_property (GST_ELEMENT (self), &self->gpu,
          prop_id, PROP_BACKEND, PROP_DEVICE_ID, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gps_test_element_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GpsTestElement *self = GPS_TEST_ELEMENT (object);

  if (!gst_gpustream_gpu_get_property (GST_ELEMENT (self), &self->gpu,
          prop_id, PROP_BACKEND, PROP_DEVICE_ID, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gps_test_element_set_context (GstElement * element, GstContext * context)
{
  GpsTestElement *self = GPS_TEST_ELEMENT (element);

  gst_gpustream_gpu_set_context (element, &self->gpu, context);
  GST_ELEMENT_CLASS (gps_test_element_parent_class)->set_context (element,
      context);
}

static gboolean
gps_test_element_query (GstElement * element, GstQuery * query)
{
  GpsTestElement *self = GPS_TEST_ELEMENT (element);

  if (gst_gpustream_gpu_handle_context_query (element, &self->gpu, query))
    return TRUE;
  return GST_ELEMENT_CLASS (gps_test_element_parent_class)->query (element,
      query);
}

static GstStateChangeReturn
gps_test_element_change_state (GstElement * element, GstStateChange t)
{
  GpsTestElement *self = GPS_TEST_ELEMENT (element);
  GstStateChangeReturn ret;

  if (t == GST_STATE_CHANGE_NULL_TO_READY &&
      !gst_gpustream_gpu_start (element, &self->gpu))
    return GST_STATE_CHANGE_FAILURE;

  ret = GST_ELEMENT_CLASS (gps_test_element_parent_class)->change_state
      (element, t);

  if (t == GST_STATE_CHANGE_READY_TO_NULL)
    gst_gpustream_gpu_stop (&self->gpu);
  return ret;
}

static void
gps_test_element_class_init (GpsTestElementClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = gps_test_element_set_property;
  gobject_class->get_property = gps_test_element_get_property;
  gst_gpustream_gpu_install_properties (gobject_class, PROP_BACKEND,
      PROP_DEVICE_ID);
  element_class->set_context =
      GST_DEBUG_FUNCPTR (gps_test_element_set_context);
  element_class->query = GST_DEBUG_FUNCPTR (gps_test_element_query);
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gps_test_element_change_state);
  gst_element_class_set_static_metadata (element_class, "gpustream test",
      "Testing", "Embeds GstGpuStreamGpu", "gst-gpustream");
}

static void
gps_test_element_init (GpsTestElement * self)
{
  gst_gpustream_gpu_init (&self->gpu);
}

/* ---- backend ---------------------------------------------------------- */

GST_START_TEST (test_backend_enum)
{
  static const struct
  {
    GstGpuStreamBackend v;
    const gchar *nick;
  } want[] = {
    {GST_GPUSTREAM_BACKEND_AUTO, "auto"},
    {GST_GPUSTREAM_BACKEND_CPU, "cpu"},
    {GST_GPUSTREAM_BACKEND_GPU, "gpu"},
    {GST_GPUSTREAM_BACKEND_HYBRID, "hybrid"},
  };
  GEnumClass *klass;
  guint i;

  fail_unless_equals_string (g_type_name (GST_TYPE_GPUSTREAM_BACKEND),
      "GstGpuStreamBackend");
  klass = g_type_class_ref (GST_TYPE_GPUSTREAM_BACKEND);
  fail_unless_equals_int (klass->n_values, G_N_ELEMENTS (want));
  for (i = 0; i < G_N_ELEMENTS (want); i++) {
    GEnumValue *ev = g_enum_get_value (klass, want[i].v);

    fail_unless (ev != NULL);
    fail_unless_equals_string (ev->value_nick, want[i].nick);
    fail_unless_equals_string (gst_gpustream_backend_nick (want[i].v),
        want[i].nick);
    fail_unless_equals_int (g_enum_get_value_by_nick (klass,
            want[i].nick)->value, want[i].v);
  }
  fail_unless_equals_int (GST_GPUSTREAM_BACKEND_AUTO, 0);
  fail_unless_equals_int (GST_GPUSTREAM_BACKEND_HYBRID, 3);
  g_type_class_unref (klass);
}

GST_END_TEST;

GST_START_TEST (test_gpu_detection)
{
  gboolean avail = gst_gpustream_gpu_available ();
  const gchar *why = gst_gpustream_gpu_unavailable_reason ();

  /* cached: the same answer twice */
  fail_unless_equals_int (avail, gst_gpustream_gpu_available ());
  fail_unless_equals_int (avail, why == NULL);
  if (!gst_gpustream_built_with_cuda ())
    fail_if (avail);
  if (gpu_expected ())
    fail_unless (avail, "no GPU on the simulated device: %s", why);
  if (why)
    GST_INFO ("no GPU here: %s", why);
}

GST_END_TEST;

/* A context for programs without an element: one with a device, else
 * NULL and an error that says why. */
GST_START_TEST (test_cuda_context_new)
{
  GError *err = NULL;
  GstObject *ctx = gst_gpustream_cuda_context_new (-1, &err);

  if (gst_gpustream_gpu_available ()) {
    fail_unless (ctx != NULL, "%s", err ? err->message : "");
    fail_unless (err == NULL);
    gst_object_unref (ctx);
  } else {
    fail_unless (ctx == NULL);
    fail_unless (err != NULL);
    fail_unless (g_str_has_prefix (err->message, "no GPU: "));
    fail_unless (strstr (err->message,
            gst_gpustream_gpu_unavailable_reason ()) != NULL);
    g_clear_error (&err);
  }
}

GST_END_TEST;

/* ---- GstGpuStreamGpu -------------------------------------------------- */

GST_START_TEST (test_gpu_properties)
{
  GstElement *e = g_object_new (GPS_TYPE_TEST_ELEMENT, NULL);
  GParamSpec *ps;
  gint backend, device_id;

  ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e), "backend");
  fail_unless (ps != NULL);
  fail_unless (G_IS_PARAM_SPEC_ENUM (ps));
  fail_unless (ps->value_type == GST_TYPE_GPUSTREAM_BACKEND);
  fail_unless ((ps->flags & (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY)) ==
      (G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY));
  fail_unless_equals_int (G_PARAM_SPEC_ENUM (ps)->default_value,
      GST_GPUSTREAM_BACKEND_AUTO);
  fail_unless (g_param_spec_get_blurb (ps) != NULL);

  ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e), "cuda-device-id");
  fail_unless (ps != NULL);
  fail_unless (G_IS_PARAM_SPEC_INT (ps));
  fail_unless_equals_int (G_PARAM_SPEC_INT (ps)->minimum, -1);
  fail_unless_equals_int (G_PARAM_SPEC_INT (ps)->maximum, G_MAXINT);
  fail_unless_equals_int (G_PARAM_SPEC_INT (ps)->default_value, -1);
  fail_unless (ps->flags & GST_PARAM_MUTABLE_READY);

  g_object_get (e, "backend", &backend, "cuda-device-id", &device_id, NULL);
  fail_unless_equals_int (backend, GST_GPUSTREAM_BACKEND_AUTO);
  fail_unless_equals_int (device_id, -1);

  gst_util_set_object_arg (G_OBJECT (e), "backend", "hybrid");
  g_object_set (e, "cuda-device-id", 3, NULL);
  g_object_get (e, "backend", &backend, "cuda-device-id", &device_id, NULL);
  fail_unless_equals_int (backend, GST_GPUSTREAM_BACKEND_HYBRID);
  fail_unless_equals_int (device_id, 3);
  fail_unless_equals_int (GPS_TEST_ELEMENT (e)->gpu.backend,
      GST_GPUSTREAM_BACKEND_HYBRID);

  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  g_object_get (e, "backend", &backend, NULL);
  fail_unless_equals_int (backend, GST_GPUSTREAM_BACKEND_CPU);

  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_gpu_backend_cpu)
{
  GstElement *e = g_object_new (GPS_TYPE_TEST_ELEMENT, NULL);
  GpsTestElement *t = GPS_TEST_ELEMENT (e);

  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (t->gpu.resolved, GST_GPUSTREAM_BACKEND_CPU);
  fail_unless (t->gpu.cuda_context == NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_gpu_backend_auto)
{
  GstElement *e = g_object_new (GPS_TYPE_TEST_ELEMENT, NULL);
  GpsTestElement *t = GPS_TEST_ELEMENT (e);

  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  if (gst_gpustream_gpu_available ()) {
    fail_unless_equals_int (t->gpu.resolved, GST_GPUSTREAM_BACKEND_GPU);
    fail_unless (t->gpu.cuda_context != NULL);
  } else {
    fail_unless_equals_int (t->gpu.resolved, GST_GPUSTREAM_BACKEND_CPU);
    fail_unless (t->gpu.cuda_context == NULL);
  }
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (t->gpu.cuda_context == NULL);
  gst_object_unref (e);
}

GST_END_TEST;

static void
check_gpu_backend_fails (const gchar * backend)
{
  GstElement *e;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *dbg = NULL, *want;

  if (gst_gpustream_gpu_available ()) {
    g_print ("SKIP: backend=%s failure test: a CUDA device is present\n",
        backend);
    return;
  }

  e = g_object_new (GPS_TYPE_TEST_ELEMENT, NULL);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  gst_util_set_object_arg (G_OBJECT (e), "backend", backend);

  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error message on the bus");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (e));
  gst_message_parse_error (msg, &err, &dbg);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_NOT_FOUND));
  want = g_strdup_printf ("backend=%s but no CUDA device: %s", backend,
      gst_gpustream_gpu_unavailable_reason ());
  fail_unless_equals_string (err->message, want);
  GST_INFO ("error: %s (%s)", err->message, dbg);

  g_free (want);
  g_free (dbg);
  g_error_free (err);
  gst_message_unref (msg);
  fail_unless (GPS_TEST_ELEMENT (e)->gpu.cuda_context == NULL);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_START_TEST (test_gpu_backend_gpu_fails)
{
  check_gpu_backend_fails ("gpu");
}

GST_END_TEST;

GST_START_TEST (test_gpu_backend_hybrid_fails)
{
  check_gpu_backend_fails ("hybrid");
}

GST_END_TEST;

/* ---- the coder pool --------------------------------------------------- */

typedef struct
{
  gsize k;
  gint m, n;
  guint8 *coefs;
  guint8 **src, **out, **ref;
} Product;

static void
product_init (Product * p, GRand * rand, gsize k, gint m, gint n)
{
  gint i;
  gsize b;

  p->k = k;
  p->m = m;
  p->n = n;
  p->coefs = g_malloc (MAX (n * m, 1));
  for (i = 0; i < n * m; i++)
    p->coefs[i] = g_rand_int_range (rand, 0, 256);
  p->src = g_new0 (guint8 *, MAX (m, 1));
  for (i = 0; i < m; i++) {
    p->src[i] = g_malloc (MAX (k, 1));
    for (b = 0; b < k; b++)
      p->src[i][b] = g_rand_int_range (rand, 0, 256);
  }
  p->out = g_new0 (guint8 *, MAX (n, 1));
  p->ref = g_new0 (guint8 *, MAX (n, 1));
  for (i = 0; i < n; i++) {
    /* poisoned, so that a skipped product shows */
    p->out[i] = g_malloc (MAX (k, 1));
    memset (p->out[i], 0xa5, k);
    p->ref[i] = g_malloc0 (MAX (k, 1));
  }
  if (m > 0)
    rlnc_encode_ref (k, m, n, p->coefs, (const uint8_t * const *) p->src,
        p->ref);
}

static GstGpuStreamCoderJob *
product_submit (Product * p, GstGpuStreamBackend where)
{
  GstGpuStreamGfProduct gp = { p->k, p->m, p->n, p->coefs,
    (const guint8 * const *) p->src, (guint8 * const *) p->out
  };

  return gst_gpustream_coder_submit (&gp, where, NULL);
}

static gboolean
product_matches (const Product * p)
{
  gint i;

  for (i = 0; i < p->n; i++)
    if (memcmp (p->out[i], p->ref[i], p->k) != 0)
      return FALSE;
  return TRUE;
}

static void
product_clear (Product * p)
{
  gint i;

  for (i = 0; i < p->m; i++)
    g_free (p->src[i]);
  for (i = 0; i < p->n; i++) {
    g_free (p->out[i]);
    g_free (p->ref[i]);
  }
  g_free (p->src);
  g_free (p->out);
  g_free (p->ref);
  g_free (p->coefs);
}

GST_START_TEST (test_coder_one_job)
{
  GRand *rand = g_rand_new_with_seed (1);
  GstGpuStreamCoderStats before, after;
  GstGpuStreamCoderJob *job;
  Product p;

  gst_gpustream_coder_get_stats (&before);
  product_init (&p, rand, 1400, 16, 20);
  job = product_submit (&p, GST_GPUSTREAM_BACKEND_CPU);
  fail_unless (job != NULL);
  fail_unless (gst_gpustream_coder_job_wait (job));
  fail_unless (product_matches (&p));

  gst_gpustream_coder_get_stats (&after);
  fail_unless_equals_int (after.cpu_threads,
      gst_gpustream_coder_cpu_threads ());
  fail_unless (after.jobs_cpu == before.jobs_cpu + 1);
  fail_unless (after.jobs_gpu == before.jobs_gpu);

  product_clear (&p);
  g_rand_free (rand);
}

GST_END_TEST;

GST_START_TEST (test_coder_trivial_jobs)
{
  GRand *rand = g_rand_new_with_seed (2);
  GstGpuStreamCoderJob *job;
  Product p;
  gint i;

  /* n = 0: nothing to do, done at once */
  product_init (&p, rand, 100, 4, 0);
  job = product_submit (&p, GST_GPUSTREAM_BACKEND_CPU);
  fail_unless (gst_gpustream_coder_job_is_done (job));
  fail_unless (gst_gpustream_coder_job_wait (job));
  product_clear (&p);

  /* m = 0: the empty sum, zero blocks */
  product_init (&p, rand, 100, 0, 3);
  job = product_submit (&p, GST_GPUSTREAM_BACKEND_CPU);
  fail_unless (gst_gpustream_coder_job_wait (job));
  for (i = 0; i < p.n; i++)
    fail_unless (p.out[i][0] == 0 && p.out[i][99] == 0);
  fail_unless (product_matches (&p));
  product_clear (&p);

  /* k = 1, m = n = 1 */
  product_init (&p, rand, 1, 1, 1);
  job = product_submit (&p, GST_GPUSTREAM_BACKEND_CPU);
  fail_unless (gst_gpustream_coder_job_wait (job));
  fail_unless (product_matches (&p));
  product_clear (&p);

  g_rand_free (rand);
}

GST_END_TEST;

#define N_SUBMITTERS 200
#define JOBS_PER_SUBMITTER 20

typedef struct
{
  guint32 seed;
  GstGpuStreamBackend where;
  gint bad;
} Submitter;

static gpointer
submitter_main (gpointer data)
{
  Submitter *s = data;
  GRand *rand = g_rand_new_with_seed (s->seed);
  Product p[JOBS_PER_SUBMITTER];
  GstGpuStreamCoderJob *jobs[JOBS_PER_SUBMITTER];
  gint i;

  /* everything in flight at once, waited for in order: jobs may complete
   * out of order, the results must not care */
  for (i = 0; i < JOBS_PER_SUBMITTER; i++) {
    product_init (&p[i], rand, g_rand_int_range (rand, 1, 1500),
        g_rand_int_range (rand, 1, 33), g_rand_int_range (rand, 1, 9));
    jobs[i] = product_submit (&p[i], s->where);
  }
  for (i = 0; i < JOBS_PER_SUBMITTER; i++) {
    if (!gst_gpustream_coder_job_wait (jobs[i]) || !product_matches (&p[i]))
      s->bad++;
    product_clear (&p[i]);
  }
  g_rand_free (rand);
  return NULL;
}

static void
run_submitters (GstGpuStreamBackend where)
{
  Submitter s[N_SUBMITTERS];
  GThread *threads[N_SUBMITTERS];
  GstGpuStreamCoderStats before, after;
  gint i;

  gst_gpustream_coder_get_stats (&before);
  for (i = 0; i < N_SUBMITTERS; i++) {
    s[i].seed = 1000 + i;
    s[i].where = where;
    s[i].bad = 0;
    threads[i] = g_thread_new ("submitter", submitter_main, &s[i]);
  }
  for (i = 0; i < N_SUBMITTERS; i++) {
    g_thread_join (threads[i]);
    fail_unless_equals_int (s[i].bad, 0);
  }
  gst_gpustream_coder_get_stats (&after);

  /* threads belong to the pool, not to submitters */
  fail_unless_equals_int (after.cpu_threads,
      gst_gpustream_coder_cpu_threads ());
  fail_unless (after.jobs_cpu - before.jobs_cpu ==
      N_SUBMITTERS * JOBS_PER_SUBMITTER);
  /* no GPU context was given: nothing may run on a GPU */
  fail_unless (after.jobs_gpu == before.jobs_gpu);
}

GST_START_TEST (test_coder_many_submitters)
{
  run_submitters (GST_GPUSTREAM_BACKEND_CPU);
}

GST_END_TEST;

GST_START_TEST (test_coder_hybrid_without_gpu)
{
  run_submitters (GST_GPUSTREAM_BACKEND_HYBRID);
}

GST_END_TEST;

GST_START_TEST (test_coder_cpu_threads_env)
{
  const gchar *env = g_getenv ("GST_GPUSTREAM_CPU_CODERS");
  GstGpuStreamCoderStats stats;
  guint want;
  GRand *rand = g_rand_new_with_seed (3);
  Product p;

  if (env)
    want = (guint) g_ascii_strtoull (env, NULL, 10);
  else
    want = g_get_num_processors ();
  fail_unless_equals_int (gst_gpustream_coder_cpu_threads (), want);

  product_init (&p, rand, 64, 2, 2);
  fail_unless (gst_gpustream_coder_job_wait (product_submit (&p,
              GST_GPUSTREAM_BACKEND_CPU)));
  fail_unless (product_matches (&p));
  gst_gpustream_coder_get_stats (&stats);
  fail_unless_equals_int (stats.cpu_threads, want);
  fail_unless_equals_int (stats.gpu_workers, 0);
  product_clear (&p);
  g_rand_free (rand);
}

GST_END_TEST;

/* Only where a CUDA device is usable: GPU and HYBRID jobs on the context of
 * a started element, byte for byte against the reference. */
static void
run_gpu_jobs (const gchar * backend, GstGpuStreamBackend where)
{
  GstElement *e;
  GstObject *ctx;
  GstGpuStreamCoderStats before, after;
  GstGpuStreamCoderJob *jobs[300];
  Product p[300];
  GRand *rand;
  guint i;

  if (!gst_gpustream_gpu_available ()) {
    gpu_skip_allowed ("the GPU coder");
    g_print ("SKIP: %s coder test: no CUDA device (%s)\n", backend,
        gst_gpustream_gpu_unavailable_reason ());
    return;
  }

  e = g_object_new (GPS_TYPE_TEST_ELEMENT, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", backend);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  ctx = GPS_TEST_ELEMENT (e)->gpu.cuda_context;
  fail_unless (ctx != NULL);

  rand = g_rand_new_with_seed (4);
  gst_gpustream_coder_get_stats (&before);
  for (i = 0; i < G_N_ELEMENTS (p); i++) {
    GstGpuStreamGfProduct gp;

    product_init (&p[i], rand, g_rand_int_range (rand, 1, 9000),
        g_rand_int_range (rand, 1, 65), g_rand_int_range (rand, 1, 33));
    gp.k = p[i].k;
    gp.m = p[i].m;
    gp.n = p[i].n;
    gp.coefs = p[i].coefs;
    gp.src = (const guint8 * const *) p[i].src;
    gp.out = (guint8 * const *) p[i].out;
    jobs[i] = gst_gpustream_coder_submit (&gp, where, ctx);
  }
  for (i = 0; i < G_N_ELEMENTS (p); i++) {
    fail_unless (gst_gpustream_coder_job_wait (jobs[i]));
    fail_unless (product_matches (&p[i]), "product %u differs", i);
    product_clear (&p[i]);
  }
  gst_gpustream_coder_get_stats (&after);
  g_print ("%s: %" G_GUINT64_FORMAT " jobs on the GPU in %" G_GUINT64_FORMAT
      " launches, %" G_GUINT64_FORMAT " on the CPU\n", backend,
      after.jobs_gpu - before.jobs_gpu, after.gpu_batches - before.gpu_batches,
      after.jobs_cpu - before.jobs_cpu);
  fail_unless (after.gpu_workers >= 1);
  fail_unless (after.jobs_gpu + after.jobs_cpu - before.jobs_gpu -
      before.jobs_cpu == G_N_ELEMENTS (p));
  if (where == GST_GPUSTREAM_BACKEND_GPU) {
    /* CPU here would mean the GPU path failed and fell back */
    fail_unless (after.jobs_gpu - before.jobs_gpu == G_N_ELEMENTS (p));
    fail_unless (after.gpu_batches > before.gpu_batches);
  }

  g_rand_free (rand);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
}

GST_START_TEST (test_coder_gpu)
{
  run_gpu_jobs ("gpu", GST_GPUSTREAM_BACKEND_GPU);
}

GST_END_TEST;

GST_START_TEST (test_coder_hybrid_gpu)
{
  run_gpu_jobs ("hybrid", GST_GPUSTREAM_BACKEND_HYBRID);
}

GST_END_TEST;

/* The pinned allocator: aligned, prefixed and padded memory of the right
 * type whose bytes are counted while it lives; a share reads the same
 * bytes; a pool of it gives pinned buffers (of that context only). Without
 * a device (or CUDA) there is no allocator and nothing pinned. */
GST_START_TEST (test_pinned_memory)
{
  GstAllocationParams params;
  GstAllocator *alloc;
  GstBufferPool *pool;
  GstBuffer *buf, *plain;
  GstMemory *mem, *sub;
  GstMapInfo map;
  GstObject *ctx;
  GstCaps *caps;
  guint64 before;
  guint i;

  if (!gst_gpustream_gpu_available ()) {
    fail_unless (gst_gpustream_pinned_allocator_new (NULL) == NULL);
    fail_unless_equals_uint64 (gst_gpustream_pinned_bytes (), 0);
    fail_unless_equals_uint64 (gst_gpustream_release_idle_staging (0), 0);
    gpu_skip_allowed ("pinned memory");
    g_print ("no CUDA device: pinned memory test skipped\n");
    return;
  }
  ctx = gst_gpustream_cuda_context_new (-1, NULL);
  fail_unless (ctx != NULL);
  alloc = gst_gpustream_pinned_allocator_new (ctx);
  fail_unless (alloc != NULL);
  before = gst_gpustream_pinned_bytes ();

  gst_allocation_params_init (&params);
  params.align = 255;
  params.prefix = 16;
  params.padding = 8;
  params.flags = GST_MEMORY_FLAG_ZERO_PREFIXED | GST_MEMORY_FLAG_ZERO_PADDED;
  mem = gst_allocator_alloc (alloc, 1000, &params);
  fail_unless (mem != NULL);
  fail_unless (gst_memory_is_type (mem, GST_GPUSTREAM_PINNED_MEMORY_TYPE));
  fail_unless (gst_gpustream_pinned_bytes () >= before + 1024);
  fail_unless (gst_memory_map (mem, &map, GST_MAP_READWRITE));
  fail_unless_equals_int (map.size, 1000);
  fail_unless_equals_int (((guintptr) (map.data - 16)) & 255, 0);
  for (i = 0; i < 16; i++)
    fail_unless_equals_int (map.data[(gssize) i - 16], 0);
  for (i = 0; i < 8; i++)
    fail_unless_equals_int (map.data[1000 + i], 0);
  for (i = 0; i < 1000; i++)
    map.data[i] = (guint8) (i * 7 + 1);
  gst_memory_unmap (mem, &map);

  sub = gst_memory_share (mem, 100, 50);
  fail_unless (gst_memory_is_type (sub, GST_GPUSTREAM_PINNED_MEMORY_TYPE));
  fail_unless (gst_memory_map (sub, &map, GST_MAP_READ));
  fail_unless_equals_int (map.size, 50);
  for (i = 0; i < 50; i++)
    fail_unless_equals_int (map.data[i], (guint8) ((i + 100) * 7 + 1));
  gst_memory_unmap (sub, &map);
  gst_memory_unref (mem);
  /* the share keeps the block */
  fail_unless (gst_gpustream_pinned_bytes () >= before + 1024);
  gst_memory_unref (sub);
  fail_unless_equals_uint64 (gst_gpustream_pinned_bytes (), before);

  caps = gst_caps_new_empty_simple ("application/x-test");
  pool = gst_gpustream_pinned_pool_new (ctx, caps, 4096, 2, 0);
  fail_unless (pool != NULL);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  fail_unless (gst_gpustream_pinned_bytes () >= before + 2 * 4096);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_buffer_get_size (buf), 4096);
  fail_unless (gst_gpustream_buffer_is_pinned (buf, ctx));
  fail_if (gst_gpustream_buffer_is_pinned (buf, NULL));
  plain = gst_buffer_new_allocate (NULL, 4096, NULL);
  fail_if (gst_gpustream_buffer_is_pinned (plain, ctx));
  /* pinned, then not: not all of it is pinned */
  gst_buffer_append_memory (buf, gst_buffer_get_memory (plain, 0));
  fail_if (gst_gpustream_buffer_is_pinned (buf, ctx));
  gst_buffer_unref (plain);
  gst_buffer_unref (buf);
  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_caps_unref (caps);
  fail_unless_equals_uint64 (gst_gpustream_pinned_bytes (), before);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;

static Suite *
gpustream_suite (void)
{
  Suite *s = suite_create ("gpustream");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  if (g_getenv ("GST_GPUSTREAM_CPU_CODERS")) {
    /* the second executable: only what the variable changes */
    tcase_add_test (tc, test_coder_cpu_threads_env);
    tcase_add_test (tc, test_coder_many_submitters);
    return s;
  }
  tcase_add_test (tc, test_backend_enum);
  tcase_add_test (tc, test_gpu_detection);
  tcase_add_test (tc, test_cuda_context_new);
  tcase_add_test (tc, test_gpu_properties);
  tcase_add_test (tc, test_gpu_backend_cpu);
  tcase_add_test (tc, test_gpu_backend_auto);
  tcase_add_test (tc, test_gpu_backend_gpu_fails);
  tcase_add_test (tc, test_gpu_backend_hybrid_fails);
  tcase_add_test (tc, test_coder_one_job);
  tcase_add_test (tc, test_coder_trivial_jobs);
  tcase_add_test (tc, test_coder_many_submitters);
  tcase_add_test (tc, test_coder_hybrid_without_gpu);
  tcase_add_test (tc, test_coder_cpu_threads_env);
  tcase_add_test (tc, test_coder_gpu);
  tcase_add_test (tc, test_coder_hybrid_gpu);
  tcase_add_test (tc, test_pinned_memory);
  return s;
}

GST_CHECK_MAIN (gpustream);
