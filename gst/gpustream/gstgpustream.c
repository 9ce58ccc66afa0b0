/* gstgpustream.c: the backend enum, per-plugin init, GPU detection and the
 * GstGpuStreamGpu helpers every GPU-capable element embeds. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gpsprivate.h"

GstDebugCategory *gps_debug;
#define GST_CAT_DEFAULT gps_debug

void
gps_debug_init (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gps_debug, "gpustream", 0,
        "gst-gpustream shared layer (backend, CUDA context)");
    GST_DEBUG_CATEGORY_INIT (gps_coder_debug, "gpustreamcoder", 0,
        "gst-gpustream coder pool");
    GST_DEBUG_CATEGORY_INIT (gps_cuda_debug, "gpustreamcuda", 0,
        "gst-gpustream CUDA kernels");
    g_once_init_leave (&once, 1);
  }
}

/* ---- backend ---------------------------------------------------------- */

static const GEnumValue backend_values[] = {
  {GST_GPUSTREAM_BACKEND_AUTO,
      "GPU when a CUDA device is usable, else CPU", "auto"},
  {GST_GPUSTREAM_BACKEND_CPU, "CPU only", "cpu"},
  {GST_GPUSTREAM_BACKEND_GPU, "GPU only (error without a CUDA device)", "gpu"},
  {GST_GPUSTREAM_BACKEND_HYBRID,
      "CPU and GPU coders share the work (error without a CUDA device)",
      "hybrid"},
  {0, NULL, NULL}
};

GType
gst_gpustream_backend_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstGpuStreamBackend", backend_values);
    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

gboolean
gst_gpustream_warn_ok (gint64 * last)
{
  gint64 now = g_get_monotonic_time ();

  if (*last != 0 && now - *last < G_USEC_PER_SEC)
    return FALSE;
  *last = now;
  return TRUE;
}

const gchar *
gst_gpustream_backend_nick (GstGpuStreamBackend backend)
{
  guint i;

  for (i = 0; backend_values[i].value_nick; i++)
    if (backend_values[i].value == (gint) backend)
      return backend_values[i].value_nick;
  return "invalid";
}

/* ---- per-plugin init -------------------------------------------------- */

void
gst_gpustream_plugin_init (GstPlugin * plugin)
{
  static const gchar *paths[] = { "/dev", NULL };
  static const gchar *names[] = { "nvidia", NULL };

  gps_debug_init ();
  gst_type_mark_as_plugin_api (GST_TYPE_GPUSTREAM_BACKEND, 0);

  /* /dev/nvidia* appear when a driver is installed: rescan the plugin then,
   * so that elements registered in a CPU-only registry learn about the GPU */
  gst_plugin_add_dependency (plugin, NULL, paths, names,
      GST_PLUGIN_DEPENDENCY_FLAG_FILE_NAME_IS_PREFIX);
}

gboolean
gst_gpustream_built_with_cuda (void)
{
  return GS_HAVE_CUDA ? TRUE : FALSE;
}

/* ---- GPU detection ---------------------------------------------------- */

static gchar *gpu_unavailable_reason;   /* set once; NULL when a GPU is there */

#if GS_HAVE_CUDA
const gchar *
gps_cuda_strerror (CUresult res)
{
  const gchar *name = NULL, *text = NULL;
  static GHashTable *cache;     /* CUresult -> "NAME: text", built lazily */
  static GMutex lock;
  const gchar *ret;

  g_mutex_lock (&lock);
  if (!cache)
    cache = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  ret = g_hash_table_lookup (cache, GINT_TO_POINTER (res));
  if (!ret) {
    if (CuGetErrorName (res, &name) != CUDA_SUCCESS || !name)
      name = "CUDA_ERROR_UNKNOWN";
    if (CuGetErrorString (res, &text) != CUDA_SUCCESS || !text)
      text = "";
    ret = g_strdup_printf ("%s (%d): %s", name, (gint) res, text);
    g_hash_table_insert (cache, GINT_TO_POINTER (res), (gpointer) ret);
  }
  g_mutex_unlock (&lock);
  return ret;
}
#endif

static gpointer
detect_gpu (gpointer unused)
{
#if GS_HAVE_CUDA
  CUresult res;
  int count = 0;

  /* every Cu* wrapper asserts that the library was loaded: load first */
  if (!gst_cuda_load_library ()) {
    gpu_unavailable_reason = g_strdup ("no CUDA driver (libcuda.so.1 did not "
        "load)");
    goto done;
  }
  res = CuInit (0);
  if (res != CUDA_SUCCESS) {
    gpu_unavailable_reason = g_strdup_printf ("cuInit failed: %s",
        gps_cuda_strerror (res));
    goto done;
  }
  res = CuDeviceGetCount (&count);
  if (res != CUDA_SUCCESS) {
    gpu_unavailable_reason = g_strdup_printf ("cuDeviceGetCount failed: %s",
        gps_cuda_strerror (res));
    goto done;
  }
  if (count <= 0)
    gpu_unavailable_reason = g_strdup ("no CUDA device");

done:
  if (gpu_unavailable_reason)
    GST_INFO ("no GPU: %s", gpu_unavailable_reason);
  else
    GST_INFO ("%d CUDA device(s)", count);
#else
  gpu_unavailable_reason = g_strdup ("built without CUDA");
#endif
  return NULL;
}

static void
ensure_gpu_detected (void)
{
  static GOnce once = G_ONCE_INIT;

  gps_debug_init ();
  g_once (&once, detect_gpu, NULL);
}

gboolean
gst_gpustream_gpu_available (void)
{
  ensure_gpu_detected ();
  return gpu_unavailable_reason == NULL;
}

GstObject *
gst_gpustream_cuda_context_new (gint device_id, GError ** error)
{
#if GS_HAVE_CUDA
  GstCudaContext *ctx;
#endif

  if (!gst_gpustream_gpu_available ()) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT,
        "no GPU: %s", gst_gpustream_gpu_unavailable_reason ());
    return NULL;
  }
#if GS_HAVE_CUDA
  ctx = gst_cuda_context_new (MAX (device_id, 0));
  if (!ctx) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT,
        "no CUDA context for device %d", MAX (device_id, 0));
    return NULL;
  }
  return GST_OBJECT (ctx);
#else
  return NULL;                  /* not reached: no GPU without CUDA */
#endif
}

const gchar *
gst_gpustream_gpu_unavailable_reason (void)
{
  ensure_gpu_detected ();
  return gpu_unavailable_reason;
}

/* ---- GstGpuStreamGpu -------------------------------------------------- */

void
gst_gpustream_gpu_init (GstGpuStreamGpu * gpu)
{
  GstGpuStreamGpu init = GST_GPUSTREAM_GPU_INIT;

  g_return_if_fail (gpu != NULL);
  *gpu = init;
}

void
gst_gpustream_gpu_install_properties (GObjectClass * klass,
    guint prop_backend, guint prop_device_id)
{
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  g_object_class_install_property (klass, prop_backend,
      g_param_spec_enum ("backend", "Backend",
          "Where the coding runs: auto (the GPU when a CUDA device is usable, "
          "else the CPU), cpu, gpu (fails at READY without a CUDA device) or "
          "hybrid (CPU and GPU coders share one task queue)",
          GST_TYPE_GPUSTREAM_BACKEND, GST_GPUSTREAM_BACKEND_AUTO, flags));
  g_object_class_install_property (klass, prop_device_id,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to run on; -1 = auto (the context shared in the "
          "pipeline through gst.cuda.context, else the first device)",
          -1, G_MAXINT, -1, flags));
}

gboolean
gst_gpustream_gpu_set_property (GstElement * element, GstGpuStreamGpu * gpu,
    guint prop_id, guint prop_backend, guint prop_device_id,
    const GValue * value)
{
  if (prop_id == prop_backend) {
    GST_OBJECT_LOCK (element);
    gpu->backend = (GstGpuStreamBackend) g_value_get_enum (value);
    GST_OBJECT_UNLOCK (element);
    return TRUE;
  }
  if (prop_id == prop_device_id) {
    GST_OBJECT_LOCK (element);
    gpu->device_id = g_value_get_int (value);
    GST_OBJECT_UNLOCK (element);
    return TRUE;
  }
  return FALSE;
}

gboolean
gst_gpustream_gpu_get_property (GstElement * element, GstGpuStreamGpu * gpu,
    guint prop_id, guint prop_backend, guint prop_device_id, GValue * value)
{
  if (prop_id == prop_backend) {
    GST_OBJECT_LOCK (element);
    g_value_set_enum (value, gpu->backend);
    GST_OBJECT_UNLOCK (element);
    return TRUE;
  }
  if (prop_id == prop_device_id) {
    GST_OBJECT_LOCK (element);
    g_value_set_int (value, gpu->device_id);
    GST_OBJECT_UNLOCK (element);
    return TRUE;
  }
  return FALSE;
}

void
gst_gpustream_gpu_set_context (GstElement * element, GstGpuStreamGpu * gpu,
    GstContext * context)
{
#if GS_HAVE_CUDA
  gint device_id;

  /* without a driver there is nothing a CUDA context could be used for, and
   * the gstcuda helpers would call into an unloaded library */
  if (!gst_gpustream_gpu_available ())
    return;

  GST_OBJECT_LOCK (element);
  device_id = gpu->device_id;
  GST_OBJECT_UNLOCK (element);

  gst_cuda_handle_set_context (element, context, device_id,
      (GstCudaContext **) & gpu->cuda_context);
#endif
}

gboolean
gst_gpustream_gpu_handle_context_query (GstElement * element,
    GstGpuStreamGpu * gpu, GstQuery * query)
{
#if GS_HAVE_CUDA
  if (gpu->cuda_context && GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT)
    return gst_cuda_handle_context_query (element, query,
        GST_CUDA_CONTEXT (gpu->cuda_context));
#endif
  return FALSE;
}

/* GPU failures the library recovered from on the CPU (gps_gpu_fallback) */
static GMutex fallback_lock;
static guint64 fallback_count;
static gchar *fallback_reason;

gboolean
gst_gpustream_gpu_start (GstElement * element, GstGpuStreamGpu * gpu)
{
  GstGpuStreamBackend backend;
  gint device_id;
  const gchar *why;

  gps_debug_init ();

  GST_OBJECT_LOCK (element);
  backend = gpu->backend;
  device_id = gpu->device_id;
  GST_OBJECT_UNLOCK (element);

  if (backend == GST_GPUSTREAM_BACKEND_CPU)
    goto use_cpu;

  why = gst_gpustream_gpu_unavailable_reason ();
#if GS_HAVE_CUDA
  if (!why) {
    /* finds a context shared in the pipeline (or by the application), or
     * makes one and announces it, so nvcodec and our other elements use the
     * same device and context */
    if (!gst_cuda_ensure_element_context (element, device_id,
            (GstCudaContext **) & gpu->cuda_context))
      why = "could not get a CUDA context for the device";
  }
#endif
  if (why) {
    if (backend == GST_GPUSTREAM_BACKEND_AUTO) {
      GST_INFO_OBJECT (element, "backend auto -> cpu: %s", why);
      goto use_cpu;
    }
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND,
        ("backend=%s but no CUDA device: %s",
            gst_gpustream_backend_nick (backend), why),
        ("cuda-device-id=%d, built with CUDA: %s; use backend=auto or cpu "
            "to run on the CPU", device_id,
            gst_gpustream_built_with_cuda ()? "yes" : "no"));
    gst_clear_object (&gpu->cuda_context);
    return FALSE;
  }

  gpu->resolved = backend == GST_GPUSTREAM_BACKEND_HYBRID ?
      GST_GPUSTREAM_BACKEND_HYBRID : GST_GPUSTREAM_BACKEND_GPU;
  /* only what fails from now on is this element's to report */
  g_mutex_lock (&fallback_lock);
  gpu->fallbacks_seen = fallback_count;
  gpu->fallback_warned_at = 0;
  g_mutex_unlock (&fallback_lock);
  GST_INFO_OBJECT (element, "backend %s -> %s: CUDA context %" GST_PTR_FORMAT,
      gst_gpustream_backend_nick (backend),
      gst_gpustream_backend_nick (gpu->resolved), gpu->cuda_context);
  return TRUE;

use_cpu:
  if (backend == GST_GPUSTREAM_BACKEND_CPU)
    GST_INFO_OBJECT (element, "backend cpu -> cpu: requested");
  /* the CPU path holds no context: the header promises NULL */
  gst_clear_object (&gpu->cuda_context);
  gpu->resolved = GST_GPUSTREAM_BACKEND_CPU;
  return TRUE;
}

/* ---- GPU failures and their CPU fallbacks ------------------------------ */

void
gps_gpu_fallback (const gchar * what, const gchar * detail)
{
  g_mutex_lock (&fallback_lock);
  fallback_count++;
  g_free (fallback_reason);
  fallback_reason = g_strdup_printf ("%s: %s", what, detail);
  g_mutex_unlock (&fallback_lock);
}

guint64
gst_gpustream_gpu_fallbacks (gchar ** last_reason)
{
  guint64 n;

  g_mutex_lock (&fallback_lock);
  n = fallback_count;
  if (last_reason)
    *last_reason = g_strdup (fallback_reason);
  g_mutex_unlock (&fallback_lock);
  return n;
}

void
gst_gpustream_gpu_check_fallbacks (GstElement * element, GstGpuStreamGpu * gpu)
{
  gchar *reason;
  guint64 n, since;
  gint64 now;

  if (gpu->resolved == GST_GPUSTREAM_BACKEND_CPU)
    return;
  /* under the lock: an element's pads may call this from several threads */
  g_mutex_lock (&fallback_lock);
  n = fallback_count;
  now = g_get_monotonic_time ();
  if (n == gpu->fallbacks_seen || (gpu->fallback_warned_at != 0 &&
          now - gpu->fallback_warned_at < 10 * G_USEC_PER_SEC)) {
    g_mutex_unlock (&fallback_lock);
    return;
  }
  since = n - gpu->fallbacks_seen;
  reason = g_strdup (fallback_reason);
  gpu->fallbacks_seen = n;
  gpu->fallback_warned_at = now;
  g_mutex_unlock (&fallback_lock);

  GST_ELEMENT_WARNING (element, RESOURCE, FAILED,
      ("The GPU failed (%s); the work continues on the CPU, with the same "
          "output.", reason),
      ("%" G_GUINT64_FORMAT " GPU failure(s) in this process since the "
          "last warning, %" G_GUINT64_FORMAT " in all", since, n));
  g_free (reason);
}

void
gst_gpustream_gpu_stop (GstGpuStreamGpu * gpu)
{
  g_return_if_fail (gpu != NULL);
  gst_clear_object (&gpu->cuda_context);
  gpu->resolved = GST_GPUSTREAM_BACKEND_CPU;
}
