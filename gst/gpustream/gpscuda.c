/* gpscuda.c: loading the embedded kernels, once per GstCudaContext; the
 * copies and staging areas the GPU paths share, and their release when
 * idle; the pinned host memory allocator and its buffer pools. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <gst/video/video.h>
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

CUresult
gps_cuda_copy_2d (const void *src_host, CUdeviceptr src_dev, gsize src_pitch,
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
    CUresult res = gps_cuda_copy_2d (src_host ? (const guint8 *) src_host + done : NULL,
        src_host ? 0 : src_dev + done, w,
        dst_host ? (guint8 *) dst_host + done : NULL,
        dst_host ? 0 : dst_dev + done, w, w, 1, stream);

    if (res != CUDA_SUCCESS)
      return res;
    done += w;
  }
  return CUDA_SUCCESS;
}

/* ---- staging areas, and their release when idle ---- */

/* Every staging (for release_idle), and the pinned bytes they and the
 * pinned allocator hold. */
static GMutex stagings_lock;
static GList *stagings;
static guint64 pinned_bytes;    /* atomic */

static gpointer
idle_release_thread (gpointer unused)
{
  for (;;) {
    g_usleep (G_USEC_PER_SEC);
    gst_gpustream_release_idle_staging (GST_GPUSTREAM_STAGING_IDLE);
  }
  return NULL;
}

static void
staging_register (GpsStaging * st)
{
  static gsize thread_once = 0;

  /* one thread for the process, started with the first staging: a few
   * list walks a second, nothing else */
  if (g_once_init_enter (&thread_once)) {
    g_thread_unref (g_thread_new ("gpustream-idle", idle_release_thread,
            NULL));
    g_once_init_leave (&thread_once, 1);
  }
  g_mutex_lock (&stagings_lock);
  stagings = g_list_prepend (stagings, st);
  g_mutex_unlock (&stagings_lock);
}

/* The areas go (ctx pushed, nothing queued on them); the bytes freed. */
static guint64
staging_free_areas (GpsStaging * st)
{
  guint64 freed = st->host_size + st->dev_size;

  if (st->host) {
    CuMemFreeHost (st->host);
    __atomic_fetch_sub (&pinned_bytes, st->host_size, __ATOMIC_RELAXED);
  }
  if (st->dev)
    CuMemFree (st->dev);
  st->host = NULL;
  st->host_size = 0;
  st->dev = 0;
  st->dev_size = 0;
  return freed;
}

static void
staging_destroy (GpsStaging * st)
{
  gboolean any = st->host || st->dev;
  guint i;

  g_mutex_lock (&stagings_lock);
  stagings = g_list_remove (stagings, st);
  g_mutex_unlock (&stagings_lock);
  for (i = 0; i < GPS_STAGING_MAX_STREAMS; i++)
    any |= st->stream[i] != NULL;
  if (any && gst_cuda_context_push (st->ctx)) {
    for (i = 0; i < GPS_STAGING_MAX_STREAMS; i++)
      if (st->stream[i]) {
        CuStreamSynchronize (st->stream[i]);
        CuStreamDestroy (st->stream[i]);
      }
    staging_free_areas (st);
    gst_cuda_context_pop (NULL);
  }
  g_mutex_clear (&st->lock);
  if (st->owned)
    gst_object_unref (st->ctx);
  g_free (st);
}

static void
staging_free (gpointer data)
{
  staging_destroy (data);
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
    staging_register (st);
    g_object_set_qdata_full (G_OBJECT (ctx), q, st, staging_free);
    g_object_weak_ref (G_OBJECT (ctx), staging_context_disposed,
        GUINT_TO_POINTER (q));
  }
  g_mutex_unlock (&create_lock);
  return st;
}

GpsStaging *
gps_cuda_staging_new (GstCudaContext * ctx)
{
  GpsStaging *st = g_new0 (GpsStaging, 1);

  g_mutex_init (&st->lock);
  st->ctx = gst_object_ref (ctx);
  st->owned = TRUE;
  staging_register (st);
  return st;
}

void
gps_cuda_staging_free (GpsStaging * st)
{
  if (st) {
    g_return_if_fail (st->owned);
    staging_destroy (st);
  }
}

CUresult
gps_cuda_staging_ensure_sizes (GpsStaging * st, gsize host_size,
    gsize dev_size, guint n_streams)
{
  gsize had = st->host_size;
  CUresult res;
  guint i;

  st->last_use = g_get_monotonic_time ();
  res = gps_cuda_ensure_host (&st->host, &st->host_size, host_size);
  if (st->host_size != had) {
    __atomic_fetch_sub (&pinned_bytes, had, __ATOMIC_RELAXED);
    __atomic_fetch_add (&pinned_bytes, st->host_size, __ATOMIC_RELAXED);
  }
  if (res != CUDA_SUCCESS || (res = gps_cuda_ensure_dev (&st->dev,
              &st->dev_size, dev_size)) != CUDA_SUCCESS)
    return res;
  for (i = 0; i < MIN (n_streams, GPS_STAGING_MAX_STREAMS); i++)
    if (!st->stream[i] && (res = CuStreamCreate (&st->stream[i],
                CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
      st->stream[i] = NULL;
      return res;
    }
  return CUDA_SUCCESS;
}

CUresult
gps_cuda_staging_ensure (GpsStaging * st, gsize size, guint n_streams)
{
  return gps_cuda_staging_ensure_sizes (st, size, size, n_streams);
}

/* ---- pinned host memory: the allocator ---- */

typedef struct {
  GstAllocator parent;
  GstCudaContext *ctx;
} GpsPinnedAllocator;

typedef struct {
  GstAllocatorClass parent_class;
} GpsPinnedAllocatorClass;

typedef struct {
  GstMemory mem;
  guint8 *data;                 /* maxsize bytes, aligned */
  gpointer block;               /* what cuMemAllocHost gave; NULL: shared */
  gsize block_size;
} GpsPinnedMemory;

static GType gps_pinned_allocator_get_type (void);
G_DEFINE_TYPE (GpsPinnedAllocator, gps_pinned_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *
pinned_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GpsPinnedAllocator *self = (GpsPinnedAllocator *) allocator;
  const gsize maxsize = size + params->prefix + params->padding;
  const gsize align = params->align | gst_memory_alignment;
  GpsPinnedMemory *mem;
  gsize block_size, aoff;
  void *block = NULL;
  CUresult res;

  /* cuMemAllocHost gives pages, aligned well beyond any video alignment;
   * the slack covers a larger one. 1.22's loader takes an unsigned size */
  block_size = maxsize + align;
  if (block_size < maxsize || block_size > G_MAXUINT)
    return NULL;
  if (!gst_cuda_context_push (self->ctx)) {
    GST_WARNING_OBJECT (self, "could not push the CUDA context");
    return NULL;
  }
  res = CuMemAllocHost (&block, (guint) block_size);
  gst_cuda_context_pop (NULL);
  if (res != CUDA_SUCCESS) {
    /* pinned memory only saves a copy: a buffer of ordinary memory keeps
     * the stream going (the GPU paths stage it), where NULL would fail the
     * upstream element that asked for it */
    gchar *detail = g_strdup_printf ("cuMemAllocHost (%" G_GSIZE_FORMAT
        " bytes) failed: %s", block_size, gps_cuda_strerror (res));

    GST_WARNING_OBJECT (self, "%s; system memory instead", detail);
    gps_gpu_fallback ("pinned memory", detail);
    g_free (detail);
    return gst_allocator_alloc (NULL, size, params);
  }
  __atomic_fetch_add (&pinned_bytes, block_size, __ATOMIC_RELAXED);

  mem = g_new0 (GpsPinnedMemory, 1);
  mem->block = block;
  mem->block_size = block_size;
  aoff = ((guintptr) block) & align;
  aoff = aoff ? align + 1 - aoff : 0;
  mem->data = (guint8 *) block + aoff;
  gst_memory_init (GST_MEMORY_CAST (mem), params->flags, allocator, NULL,
      maxsize, align, params->prefix, size);
  if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
    memset (mem->data, 0, params->prefix);
  if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
    memset (mem->data + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST (mem);
}

static void
pinned_free (GstAllocator * allocator, GstMemory * memory)
{
  GpsPinnedAllocator *self = (GpsPinnedAllocator *) allocator;
  GpsPinnedMemory *mem = (GpsPinnedMemory *) memory;

  if (mem->block) {
    if (gst_cuda_context_push (self->ctx)) {
      CUresult res = CuMemFreeHost (mem->block);

      if (res != CUDA_SUCCESS)
        GST_WARNING_OBJECT (self, "cuMemFreeHost: %s",
            gps_cuda_strerror (res));
      gst_cuda_context_pop (NULL);
    } else {
      GST_WARNING_OBJECT (self, "could not push the CUDA context to free "
          "%" G_GSIZE_FORMAT " pinned bytes", mem->block_size);
    }
    __atomic_fetch_sub (&pinned_bytes, mem->block_size, __ATOMIC_RELAXED);
  }
  g_free (mem);
}

static gpointer
pinned_map (GstMemory * memory, gsize maxsize, GstMapFlags flags)
{
  return ((GpsPinnedMemory *) memory)->data;
}

static void
pinned_unmap (GstMemory * memory)
{
}

/* A part of the same pinned block (gst_buffer_copy_region, subbuffers):
 * it keeps its parent, which owns the block. */
static GstMemory *
pinned_share (GstMemory * memory, gssize offset, gssize size)
{
  GpsPinnedMemory *mem = (GpsPinnedMemory *) memory, *sub;
  GstMemory *parent = memory->parent ? memory->parent : memory;

  if (size == -1)
    size = memory->size - offset;
  sub = g_new0 (GpsPinnedMemory, 1);
  sub->data = mem->data;
  gst_memory_init (GST_MEMORY_CAST (sub),
      GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
      memory->allocator, parent, memory->maxsize, memory->align,
      memory->offset + offset, size);
  return GST_MEMORY_CAST (sub);
}

static void
gps_pinned_allocator_dispose (GObject * object)
{
  GpsPinnedAllocator *self = (GpsPinnedAllocator *) object;

  gst_clear_object (&self->ctx);
  G_OBJECT_CLASS (gps_pinned_allocator_parent_class)->dispose (object);
}

static void
gps_pinned_allocator_class_init (GpsPinnedAllocatorClass * klass)
{
  GST_ALLOCATOR_CLASS (klass)->alloc = pinned_alloc;
  GST_ALLOCATOR_CLASS (klass)->free = pinned_free;
  G_OBJECT_CLASS (klass)->dispose = gps_pinned_allocator_dispose;
}

static void
gps_pinned_allocator_init (GpsPinnedAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (self);

  alloc->mem_type = GST_GPUSTREAM_PINNED_MEMORY_TYPE;
  alloc->mem_map = pinned_map;
  alloc->mem_unmap = pinned_unmap;
  alloc->mem_share = pinned_share;
}
#endif /* GS_HAVE_CUDA */

/* ---- pinned host memory: the public side (also without CUDA) ---- */

GstAllocator *
gst_gpustream_pinned_allocator_new (GstObject * cuda_context)
{
#if GS_HAVE_CUDA
  GpsPinnedAllocator *self;

  if (!cuda_context || !GST_IS_CUDA_CONTEXT (cuda_context))
    return NULL;
  gps_debug_init ();
  self = g_object_new (gps_pinned_allocator_get_type (), NULL);
  gst_object_ref_sink (self);
  self->ctx = gst_object_ref (GST_CUDA_CONTEXT (cuda_context));
  return GST_ALLOCATOR_CAST (self);
#else
  return NULL;
#endif
}

gboolean
gst_gpustream_buffer_is_pinned (GstBuffer * buf, GstObject * cuda_context)
{
#if GS_HAVE_CUDA
  guint i, n;

  if (!buf || !cuda_context || !(n = gst_buffer_n_memory (buf)))
    return FALSE;
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);

    if (!gst_memory_is_type (mem, GST_GPUSTREAM_PINNED_MEMORY_TYPE) ||
        ((GpsPinnedAllocator *) mem->allocator)->ctx !=
        (GstCudaContext *) cuda_context)
      return FALSE;
  }
  return TRUE;
#else
  return FALSE;
#endif
}

GstBufferPool *
gst_gpustream_pinned_pool_new (GstObject * cuda_context, GstCaps * caps,
    gsize size, guint min, guint max)
{
  GstAllocator *allocator;
  GstAllocationParams params;
  GstBufferPool *pool;
  GstStructure *config;
  GstStructure *s = caps ? gst_caps_get_structure (caps, 0) : NULL;
  gboolean video = s && gst_structure_has_name (s, "video/x-raw");

  if (size > G_MAXUINT ||
      !(allocator = gst_gpustream_pinned_allocator_new (cuda_context)))
    return NULL;
  pool = video ? gst_video_buffer_pool_new () : gst_buffer_pool_new ();
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, (guint) size, min, max);
  gst_allocation_params_init (&params);
  gst_buffer_pool_config_set_allocator (config, allocator, &params);
  if (video)
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_object_unref (allocator);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return NULL;
  }
  return pool;
}

guint64
gst_gpustream_pinned_bytes (void)
{
#if GS_HAVE_CUDA
  return __atomic_load_n (&pinned_bytes, __ATOMIC_RELAXED);
#else
  return 0;
#endif
}

guint64
gst_gpustream_release_idle_staging (GstClockTime idle)
{
#if GS_HAVE_CUDA
  const gint64 now = g_get_monotonic_time ();
  guint64 freed = 0;
  GList *l;

  g_mutex_lock (&stagings_lock);
  for (l = stagings; l; l = l->next) {
    GpsStaging *st = l->data;

    /* in use now, or work queued on the areas: not idle */
    if (!g_mutex_trylock (&st->lock))
      continue;
    if ((st->host || st->dev) && !st->in_flight &&
        now - st->last_use >= (gint64) (idle / GST_USECOND)) {
      if (gst_cuda_context_push (st->ctx)) {
        freed += staging_free_areas (st);
        gst_cuda_context_pop (NULL);
      }
    }
    g_mutex_unlock (&st->lock);
  }
  g_mutex_unlock (&stagings_lock);
  if (freed)
    GST_DEBUG ("released %" G_GUINT64_FORMAT " idle staging bytes", freed);
  return freed;
#else
  return 0;
#endif
}
