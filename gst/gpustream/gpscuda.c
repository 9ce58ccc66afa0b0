/* gpscuda.c: loading the embedded kernels, once per GstCudaContext. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gpsprivate.h"

GstDebugCategory *gps_cuda_debug;
#define GST_CAT_DEFAULT gps_cuda_debug

#if GS_HAVE_CUDA
#include "rlnc/rlnc_cuda.h"

typedef struct {
  GstCudaContext *ctx;          /* not a ref: the module lives on the context */
  CUmodule module;
  CUfunction rlnc_product_batch;
} GpsCudaModule;

/* Serialises loading: two elements starting on one context load once. */
static GMutex module_lock;

static GQuark
module_quark (void)
{
  static gsize q = 0;

  if (g_once_init_enter (&q))
    g_once_init_leave (&q, g_quark_from_static_string ("gst-gpustream-rlnc"));
  return (GQuark) q;
}

static void
module_free (gpointer data)
{
  GpsCudaModule *m = data;

  if (m->module) {
    if (gst_cuda_context_push (m->ctx)) {
      CUresult res = CuModuleUnload (m->module);
      if (res != CUDA_SUCCESS)
        GST_WARNING ("cuModuleUnload: %s", gps_cuda_strerror (res));
      gst_cuda_context_pop (NULL);
    } else {
      GST_WARNING ("could not push the CUDA context to unload the module");
    }
  }
  g_free (m);
}

/* Dispose time: the CUcontext is still alive (GstCudaContext destroys it in
 * finalize, after qdata would be cleared), so unload here. */
static void
context_disposed (gpointer data, GObject * where_the_object_was)
{
  g_object_set_qdata (where_the_object_was, module_quark (), NULL);
}

gboolean
gps_cuda_get_rlnc_kernel (GstCudaContext * ctx, CUfunction * func)
{
  GpsCudaModule *m;
  CUresult res;
  gboolean ok = FALSE;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (ctx), FALSE);

  g_mutex_lock (&module_lock);
  m = g_object_get_qdata (G_OBJECT (ctx), module_quark ());
  if (m) {
    *func = m->rlnc_product_batch;
    g_mutex_unlock (&module_lock);
    return TRUE;
  }

  if (!gst_cuda_context_push (ctx)) {
    GST_ERROR_OBJECT (ctx, "could not push the CUDA context");
    goto out;
  }
  m = g_new0 (GpsCudaModule, 1);
  m->ctx = ctx;
  /* the fatbin holds native code for the built architectures and PTX for
   * newer ones, which the driver JITs here */
  res = CuModuleLoadData (&m->module, rlnc_fatbin);
  if (res != CUDA_SUCCESS) {
    GST_ERROR_OBJECT (ctx, "cuModuleLoadData (%" G_GUINT64_FORMAT
        " bytes): %s", (guint64) rlnc_fatbin_size, gps_cuda_strerror (res));
    m->module = NULL;
  } else {
    res = CuModuleGetFunction (&m->rlnc_product_batch, m->module,
        RLNC_GPU_KERNEL_NAME);
    if (res != CUDA_SUCCESS) {
      GST_ERROR_OBJECT (ctx, "cuModuleGetFunction (%s): %s",
          RLNC_GPU_KERNEL_NAME, gps_cuda_strerror (res));
      CuModuleUnload (m->module);
      m->module = NULL;
    }
  }
  gst_cuda_context_pop (NULL);

  if (!m->module) {
    /* not cached: a later call may try again (e.g. after a driver reset) */
    g_free (m);
    goto out;
  }

  GST_INFO_OBJECT (ctx, "loaded %s (%" G_GUINT64_FORMAT " bytes of fatbin)",
      RLNC_GPU_KERNEL_NAME, (guint64) rlnc_fatbin_size);
  g_object_set_qdata_full (G_OBJECT (ctx), module_quark (), m, module_free);
  g_object_weak_ref (G_OBJECT (ctx), context_disposed, NULL);
  *func = m->rlnc_product_batch;
  ok = TRUE;

out:
  g_mutex_unlock (&module_lock);
  return ok;
}
#endif /* GS_HAVE_CUDA */
