/* libgstgpustream-1.0: what every gst-gpustream element shares.
 *
 *  - the backend choice (auto / cpu / gpu / hybrid), resolved once at READY;
 *  - the GPU context: GStreamer's GstCudaContext, shared with our other
 *    elements and with nvcodec's through the "gst.cuda.context" GstContext;
 *  - kernel loading: the fatbin embedded at build time, loaded once per
 *    context with the driver API that gstreamer-cuda exposes;
 *  - the coder pool of Jin Zhao, Xinya Zhang, Xin Wang, "An Architecture
 *    Design of GPU-Accelerated VoD Streaming Servers with Network Coding"
 *    (2010), Fig. 3 and 4: one process-wide FCFS queue of
 *    GF(2^8) matrix products, CPU coder threads and one GPU coder per
 *    context, all self-scheduling from it.
 *
 * Built without CUDA (no nvcc) or run without a driver, the same API works
 * and everything runs on the CPU. */
#ifndef GST_GPUSTREAM_H
#define GST_GPUSTREAM_H

#include <gst/gst.h>
#include <stdint.h>

G_BEGIN_DECLS

/* ---- backend ---------------------------------------------------------- */

typedef enum {
  GST_GPUSTREAM_BACKEND_AUTO = 0,   /* GPU when a device is usable, else CPU */
  GST_GPUSTREAM_BACKEND_CPU = 1,
  GST_GPUSTREAM_BACKEND_GPU = 2,    /* error at READY when no device */
  GST_GPUSTREAM_BACKEND_HYBRID = 3  /* CPU and GPU coders share the work */
} GstGpuStreamBackend;

GType gst_gpustream_backend_get_type (void);
#define GST_TYPE_GPUSTREAM_BACKEND (gst_gpustream_backend_get_type ())

const gchar *gst_gpustream_backend_nick (GstGpuStreamBackend backend);

/* Rate limit for repeated warnings (dropped packets, a failing device): TRUE
 * at most once a second per *last (monotonic microseconds, 0 at first). */
gboolean gst_gpustream_warn_ok (gint64 * last);

/* ---- per-plugin init -------------------------------------------------- */

/* Call from every plugin_init: registers the debug category, marks the enum
 * as plugin API and adds the /dev/nvidia* dependency so the registry notices
 * a driver installed later. */
void gst_gpustream_plugin_init (GstPlugin * plugin);

/* TRUE when built with CUDA support (nvcc found at build time). */
gboolean gst_gpustream_built_with_cuda (void);
/* TRUE when the CUDA driver loads and at least one device is present. */
gboolean gst_gpustream_gpu_available (void);
/* Why gst_gpustream_gpu_available() is FALSE ("built without CUDA", "no CUDA
 * driver", "no CUDA device", ...), for error messages; NULL when it is TRUE. */
const gchar *gst_gpustream_gpu_unavailable_reason (void);
/* A GstCudaContext (as GstObject) for CUDA device device_id (-1: the
 * first), for programs that drive the library without an element (the
 * benchmarks); elements share theirs through gst_gpustream_gpu_start. NULL
 * with error set when no device is usable. Unref when done. */
GstObject *gst_gpustream_cuda_context_new (gint device_id, GError ** error);

/* ---- pinned host memory ------------------------------------------------ *
 * Frames that an element hands to the GPU are copied by the DMA engine
 * straight from page-locked ("pinned") host memory, while from ordinary
 * memory the driver (or the element) first copies them into a pinned buffer
 * of its own. A GPU element proposes a pool of this memory upstream (the
 * ALLOCATION query), so that the frames are written there in the first
 * place, and takes its output buffers from one, so that the copy back from
 * the device lands in the buffer it pushes. Any element may use it: the
 * memory maps like system memory. */

/* The memory type of the pinned allocator's GstMemory. */
#define GST_GPUSTREAM_PINNED_MEMORY_TYPE "GstGpuStreamPinnedMemory"

/* An allocator of memory pinned for cuda_context (a GstCudaContext; the
 * allocator keeps a reference): cuMemAllocHost, freed with cuMemFreeHost.
 * NULL when cuda_context is NULL or not a CUDA context (a CPU backend, a
 * build without CUDA). Unref when done. */
GstAllocator *gst_gpustream_pinned_allocator_new (GstObject * cuda_context);
/* TRUE when every memory of buf comes from a pinned allocator of
 * cuda_context (other contexts' pinned memory is not page-locked for it). */
gboolean gst_gpustream_buffer_is_pinned (GstBuffer * buf,
    GstObject * cuda_context);
/* A buffer pool of pinned memory of cuda_context, configured for caps,
 * buffers of size bytes, min / max buffers: a GstVideoBufferPool (with
 * GstVideoMeta, so a producer may use its own strides) when caps are
 * video/x-raw, else a GstBufferPool. NULL when there is no pinned allocator
 * for cuda_context (as above). Not active; unref when done. */
GstBufferPool *gst_gpustream_pinned_pool_new (GstObject * cuda_context,
    GstCaps * caps, gsize size, guint min, guint max);
/* Pinned bytes held in the process: the pinned allocators' memory and
 * every GPU element's staging areas. */
guint64 gst_gpustream_pinned_bytes (void);

/* A staging area (the pinned and device buffers a GPU path keeps between
 * frames or batches) unused for this long is freed by a background thread
 * of the library, so that a stalled or stopped pipeline does not keep
 * hundreds of MB pinned; the next use allocates it again. */
#define GST_GPUSTREAM_STAGING_IDLE (5 * GST_SECOND)
/* Frees now the staging areas unused for at least idle (0: all that are
 * not in use); what the background thread does every second with
 * GST_GPUSTREAM_STAGING_IDLE. Returns the bytes freed, pinned and device
 * (0 without CUDA). */
guint64 gst_gpustream_release_idle_staging (GstClockTime idle);

/* ---- the GPU part of an element --------------------------------------- *
 * Embed one GstGpuStreamGpu in the instance of every GPU-capable element,
 * install its two properties with gst_gpustream_gpu_install_properties, and
 * forward set_context, the CONTEXT query and READY/NULL to it. */

typedef struct {
  /* settings (properties, under the object lock) */
  GstGpuStreamBackend backend;      /* requested */
  gint device_id;                   /* -1 = auto */
  /* state (between start and stop) */
  GstGpuStreamBackend resolved;     /* CPU, GPU or HYBRID after start */
  GstObject *cuda_context;          /* GstCudaContext *, or NULL on CPU */
  /* GPU failures reported (gst_gpustream_gpu_check_fallbacks) */
  guint64 fallbacks_seen;
  gint64 fallback_warned_at;
} GstGpuStreamGpu;

#define GST_GPUSTREAM_GPU_INIT { GST_GPUSTREAM_BACKEND_AUTO, -1, \
                                 GST_GPUSTREAM_BACKEND_CPU, NULL }

void gst_gpustream_gpu_init (GstGpuStreamGpu * gpu);
/* Installs "backend" and "cuda-device-id" with ids prop_backend and
 * prop_device_id. */
void gst_gpustream_gpu_install_properties (GObjectClass * klass,
    guint prop_backend, guint prop_device_id);
/* For set_property / get_property: TRUE when prop_id was one of ours. */
gboolean gst_gpustream_gpu_set_property (GstElement * element,
    GstGpuStreamGpu * gpu, guint prop_id, guint prop_backend,
    guint prop_device_id, const GValue * value);
gboolean gst_gpustream_gpu_get_property (GstElement * element,
    GstGpuStreamGpu * gpu, guint prop_id, guint prop_backend,
    guint prop_device_id, GValue * value);

/* From GstElement::set_context. */
void gst_gpustream_gpu_set_context (GstElement * element,
    GstGpuStreamGpu * gpu, GstContext * context);
/* From the CONTEXT query handler (pad or element); TRUE when answered. */
gboolean gst_gpustream_gpu_handle_context_query (GstElement * element,
    GstGpuStreamGpu * gpu, GstQuery * query);
/* At NULL->READY (or start): resolves the backend, finds or makes the
 * GstCudaContext through the GstContext dance, logs the decision. Returns
 * FALSE and posts an element error when backend=gpu|hybrid and no device is
 * usable. */
gboolean gst_gpustream_gpu_start (GstElement * element, GstGpuStreamGpu * gpu);
void gst_gpustream_gpu_stop (GstGpuStreamGpu * gpu);

/* GPU work that failed (an allocation, a copy or a launch refused, a device
 * lost) is done on the CPU instead by the library, with the same output.
 * How often that happened in this process, and the last reason (free it;
 * NULL when not wanted). */
guint64 gst_gpustream_gpu_fallbacks (gchar ** last_reason);
/* From an element's data path, after its GPU work (and at EOS): when the
 * GPU failed since the element started, posts a WARNING saying so, with
 * the reason and the count; at most one every 10 s while failures go on.
 * A no-op on the CPU backend. */
void gst_gpustream_gpu_check_fallbacks (GstElement * element,
    GstGpuStreamGpu * gpu);

/* ---- the coder pool (Zhao et al., Fig. 3 and 4) ------------------------ */

/* One GF(2^8) matrix product: out[j] = sum_i coefs[j*m+i] * src[i], j < n,
 * blocks of k bytes. Encode, decode (inverse x payloads) and recode are all
 * this. The pointed-to memory must stay valid until the job is waited for. */
typedef struct {
  gsize k;
  gint m;
  gint n;
  const guint8 *coefs;              /* n x m */
  const guint8 *const *src;         /* m blocks of k bytes */
  guint8 *const *out;               /* n blocks of k bytes */
} GstGpuStreamGfProduct;

typedef struct _GstGpuStreamCoderJob GstGpuStreamCoderJob;

/* Submits a product to the process-wide FCFS task queue. where: CPU (only CPU
 * coders take it), GPU (only the GPU coder of cuda_context), HYBRID (whichever
 * worker is idle first). cuda_context may be NULL for CPU. Never blocks. */
GstGpuStreamCoderJob *gst_gpustream_coder_submit (const GstGpuStreamGfProduct *
    product, GstGpuStreamBackend where, GstObject * cuda_context);
/* Blocks until the job is done and frees it. Returns TRUE on success (the GPU
 * coder falls back to the CPU and logs if a launch fails, so FALSE is rare). */
gboolean gst_gpustream_coder_job_wait (GstGpuStreamCoderJob * job);
/* Non-blocking check. */
gboolean gst_gpustream_coder_job_is_done (GstGpuStreamCoderJob * job);

typedef struct {
  guint cpu_threads;                /* CPU coder threads running */
  guint gpu_workers;                /* GPU coders running */
  guint64 jobs_cpu;                 /* products done by CPU coders */
  guint64 jobs_gpu;                 /* products done by GPU coders */
  guint64 gpu_batches;              /* kernel launches */
} GstGpuStreamCoderStats;

void gst_gpustream_coder_get_stats (GstGpuStreamCoderStats * stats);

/* Number of CPU coder threads: one per core by default, or the value of the
 * environment variable GST_GPUSTREAM_CPU_CODERS. Threads start on first use. */
guint gst_gpustream_coder_cpu_threads (void);

G_END_DECLS

#endif /* GST_GPUSTREAM_H */
