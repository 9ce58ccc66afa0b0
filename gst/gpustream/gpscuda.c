/* gpscuda.c: loading the embedded kernels, once per GstCudaContext. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gpsprivate.h"

GstDebugCategory *gps_cuda_debug;
#define GST_CAT_DEFAULT gps_cuda_debug

#if GS_HAVE_CUDA
#include <string.h>

#include "rlnc/rlnc_cuda.h"
#include "srtp/srtp_cuda.h"
#include "dxt/dxt_cuda.h"

/* The embedded fatbins and the kernel taken from each; srtp_fatbin and
 * dxt_fatbin hold several each, loaded as one module per kernel (one function per module
 * keeps the cache simple; the modules are small). */
static const struct {
  const gchar *quark_name;
  const unsigned char *fatbin;
  const uint64_t *fatbin_size;
  const gchar *kernel;
} kernels[GPS_KERNEL_LAST] = {
  [GPS_KERNEL_RLNC_PRODUCT] = {"gst-gpustream-rlnc", rlnc_fatbin,
      &rlnc_fatbin_size, RLNC_GPU_KERNEL_NAME},
  [GPS_KERNEL_SRTP_PROTECT] = {"gst-gpustream-srtp", srtp_fatbin,
      &srtp_fatbin_size, SRTP_GPU_KERNEL_NAME},
  [GPS_KERNEL_SRTP_PROTECT_WARP] = {"gst-gpustream-srtp-warp", srtp_fatbin,
      &srtp_fatbin_size, SRTP_GPU_WARP_KERNEL_NAME},
  [GPS_KERNEL_SRTP_UNPROTECT] = {"gst-gpustream-srtp-unprotect", srtp_fatbin,
      &srtp_fatbin_size, SRTP_GPU_UNPROTECT_KERNEL_NAME},
  [GPS_KERNEL_DXT_ENCODE] = {"gst-gpustream-dxt-encode", dxt_fatbin,
      &dxt_fatbin_size, DXT_GPU_ENCODE_KERNEL},
  [GPS_KERNEL_DXT_DECODE] = {"gst-gpustream-dxt-decode", dxt_fatbin,
      &dxt_fatbin_size, DXT_GPU_DECODE_KERNEL},
};

typedef struct {
  GstCudaContext *ctx;          /* not a ref: the module lives on the context */
  GQuark quark;
  CUmodule module;
  CUfunction func;
} GpsCudaModule;

/* Serialises loading: two elements starting on one context load once. */
static GMutex module_lock;

static GQuark
module_quark (GpsKernel which)
{
  static GQuark q[GPS_KERNEL_LAST];

  g_mutex_lock (&module_lock);
  if (!q[which])
    q[which] = g_quark_from_static_string (kernels[which].quark_name);
  g_mutex_unlock (&module_lock);
  return q[which];
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
 * finalize), so the module is unloaded here rather than with the qdata. */
static void
context_disposed (gpointer data, GObject * where_the_object_was)
{
  g_object_set_qdata (where_the_object_was, GPOINTER_TO_UINT (data), NULL);
}

gboolean
gps_cuda_get_kernel (GstCudaContext * ctx, GpsKernel which, CUfunction * func)
{
  GQuark quark;
  GpsCudaModule *m;
  CUresult res;
  gboolean ok = FALSE;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (ctx), FALSE);
  g_return_val_if_fail (which < GPS_KERNEL_LAST, FALSE);

  quark = module_quark (which);
  g_mutex_lock (&module_lock);
  m = g_object_get_qdata (G_OBJECT (ctx), quark);
  if (m) {
    *func = m->func;
    g_mutex_unlock (&module_lock);
    return TRUE;
  }

  if (!gst_cuda_context_push (ctx)) {
    GST_ERROR_OBJECT (ctx, "could not push the CUDA context");
    goto out;
  }
  m = g_new0 (GpsCudaModule, 1);
  m->ctx = ctx;
  m->quark = quark;
  /* the fatbin holds native code for the built architectures and PTX for
   * newer ones, which the driver JITs here */
  res = CuModuleLoadData (&m->module, kernels[which].fatbin);
  if (res != CUDA_SUCCESS) {
    GST_ERROR_OBJECT (ctx, "cuModuleLoadData (%" G_GUINT64_FORMAT
        " bytes): %s", (guint64) * kernels[which].fatbin_size,
        gps_cuda_strerror (res));
    m->module = NULL;
  } else {
    res = CuModuleGetFunction (&m->func, m->module, kernels[which].kernel);
    if (res != CUDA_SUCCESS) {
      GST_ERROR_OBJECT (ctx, "cuModuleGetFunction (%s): %s",
          kernels[which].kernel, gps_cuda_strerror (res));
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
      kernels[which].kernel, (guint64) * kernels[which].fatbin_size);
  g_object_set_qdata_full (G_OBJECT (ctx), quark, m, module_free);
  g_object_weak_ref (G_OBJECT (ctx), context_disposed,
      GUINT_TO_POINTER (quark));
  *func = m->func;
  ok = TRUE;

out:
  g_mutex_unlock (&module_lock);
  return ok;
}

gboolean
gps_cuda_get_rlnc_kernel (GstCudaContext * ctx, CUfunction * func)
{
  return gps_cuda_get_kernel (ctx, GPS_KERNEL_RLNC_PRODUCT, func);
}

/* Some headroom so that a slowly growing batch does not reallocate each
 * time; 1.22's allocators take an unsigned. */
static gboolean
staging_size (gsize size, gsize * want)
{
  *want = MAX (size + size / 4, 1 << 20);
  if (*want > G_MAXUINT)
    *want = size;
  return *want <= G_MAXUINT;
}

CUresult
gps_cuda_ensure_host (guint8 ** host, gsize * host_size, gsize size)
{
  CUresult res;
  void *p = NULL;
  gsize want;

  if (size <= *host_size)
    return CUDA_SUCCESS;
  if (*host)
    CuMemFreeHost (*host);
  *host = NULL;
  *host_size = 0;
  if (!staging_size (size, &want))
    return CUDA_ERROR_OUT_OF_MEMORY;
  res = CuMemAllocHost (&p, (guint) want);
  if (res == CUDA_SUCCESS) {
    *host = p;
    *host_size = want;
  }
  return res;
}

CUresult
gps_cuda_ensure_dev (CUdeviceptr * dev, gsize * dev_size, gsize size)
{
  CUresult res;
  CUdeviceptr p = 0;
  gsize want;

  if (size <= *dev_size)
    return CUDA_SUCCESS;
  if (*dev)
    CuMemFree (*dev);
  *dev = 0;
  *dev_size = 0;
  if (!staging_size (size, &want))
    return CUDA_ERROR_OUT_OF_MEMORY;
  res = CuMemAlloc (&p, (guint) want);
  if (res == CUDA_SUCCESS) {
    *dev = p;
    *dev_size = want;
  }
  return res;
}

static CUresult
copy_2d (const void *src_host, CUdeviceptr src_dev, gsize src_pitch,
    void *dst_host, CUdeviceptr dst_dev, gsize dst_pitch, gsize width,
    gsize height, CUstream stream)
{
  CUDA_MEMCPY2D cp;

  memset (&cp, 0, sizeof (cp));
  if (src_host) {
    cp.srcMemoryType = CU_MEMORYTYPE_HOST;
    cp.srcHost = src_host;
  } else {
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.srcDevice = src_dev;
  }
  cp.srcPitch = src_pitch;
  if (dst_host) {
    cp.dstMemoryType = CU_MEMORYTYPE_HOST;
    cp.dstHost = dst_host;
  } else {
    cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.dstDevice = dst_dev;
  }
  cp.dstPitch = dst_pitch;
  cp.WidthInBytes = width;
  cp.Height = height;
  return CuMemcpy2DAsync (&cp, stream);
}

/* The 1.22 loader has no cuMemcpyHtoDAsync: rows of at most 1 GiB through
 * CuMemcpy2DAsync, each its own copy, so that no pitch nears
 * CU_DEVICE_ATTRIBUTE_MAX_PITCH (2^31 - 1). */
CUresult
gps_cuda_copy_linear (const void *src_host, void *dst_host,
    CUdeviceptr src_dev, CUdeviceptr dst_dev, gsize size, CUstream stream)
{
  const gsize max_row = (gsize) 1 << 30;
  gsize done = 0;

  while (done < size) {
    gsize w = MIN (size - done, max_row);
    CUresult res = copy_2d (src_host ? (const guint8 *) src_host + done : NULL,
        src_host ? 0 : src_dev + done, w,
        dst_host ? (guint8 *) dst_host + done : NULL,
        dst_host ? 0 : dst_dev + done, w, w, 1, stream);

    if (res != CUDA_SUCCESS)
      return res;
    done += w;
  }
  return CUDA_SUCCESS;
}

static void
staging_free (gpointer data)
{
  GpsStaging *st = data;
  gboolean any = st->host || st->dev;
  guint i;

  for (i = 0; i < GPS_STAGING_MAX_STREAMS; i++)
    any |= st->stream[i] != NULL;
  if (any && gst_cuda_context_push (st->ctx)) {
    for (i = 0; i < GPS_STAGING_MAX_STREAMS; i++)
      if (st->stream[i])
        CuStreamDestroy (st->stream[i]);
    if (st->host)
      CuMemFreeHost (st->host);
    if (st->dev)
      CuMemFree (st->dev);
    gst_cuda_context_pop (NULL);
  }
  g_mutex_clear (&st->lock);
  g_free (st);
}

/* Dispose time, while the CUcontext still lives. */
static void
staging_context_disposed (gpointer data, GObject * where_the_object_was)
{
  g_object_set_qdata (where_the_object_was, GPOINTER_TO_UINT (data), NULL);
}

GpsStaging *
gps_cuda_staging_get (GstCudaContext * ctx, const gchar * name)
{
  static GMutex create_lock;
  gchar *qname = g_strconcat ("gst-gpustream-staging-", name, NULL);
  GQuark q = g_quark_from_string (qname);
  GpsStaging *st;

  g_free (qname);
  g_mutex_lock (&create_lock);
  st = g_object_get_qdata (G_OBJECT (ctx), q);
  if (!st) {
    st = g_new0 (GpsStaging, 1);
    g_mutex_init (&st->lock);
    st->ctx = ctx;
    g_object_set_qdata_full (G_OBJECT (ctx), q, st, staging_free);
    g_object_weak_ref (G_OBJECT (ctx), staging_context_disposed,
        GUINT_TO_POINTER (q));
  }
  g_mutex_unlock (&create_lock);
  return st;
}

CUresult
gps_cuda_staging_ensure (GpsStaging * st, gsize size, guint n_streams)
{
  CUresult res;
  guint i;

  if ((res = gps_cuda_ensure_host (&st->host, &st->host_size, size)) !=
      CUDA_SUCCESS || (res = gps_cuda_ensure_dev (&st->dev, &st->dev_size,
              size)) != CUDA_SUCCESS)
    return res;
  for (i = 0; i < MIN (n_streams, GPS_STAGING_MAX_STREAMS); i++)
    if (!st->stream[i] && (res = CuStreamCreate (&st->stream[i],
                CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
      st->stream[i] = NULL;
      return res;
    }
  return CUDA_SUCCESS;
}
#endif /* GS_HAVE_CUDA */
