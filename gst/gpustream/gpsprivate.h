/* gpsprivate.h: what the files of libgstgpustream share, not installed. */
#ifndef GPS_PRIVATE_H
#define GPS_PRIVATE_H

#include "config.h"
#include "gstgpustream.h"
#include "gpsprocessor.h"

#if GS_HAVE_CUDA
#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudautils.h>
#endif

G_BEGIN_DECLS

/* One category per file; all registered together by gps_debug_init, which
 * every entry point calls (the library is used by tests without a plugin). */
G_GNUC_INTERNAL extern GstDebugCategory *gps_debug;
G_GNUC_INTERNAL extern GstDebugCategory *gps_coder_debug;
G_GNUC_INTERNAL extern GstDebugCategory *gps_cuda_debug;

G_GNUC_INTERNAL void gps_debug_init (void);

/* The library's own scheduler processors (gpsprocessor.h), registered
 * before the first lookup: "srtp-protect" (gpssrtp.c), "dxt-encode"
 * (gpsdxt.c), "nc-encode" (gpsnc.c). */
G_GNUC_INTERNAL const GstGpuStreamProcessorInfo
    * gps_srtp_protect_processor_info (void);
G_GNUC_INTERNAL const GstGpuStreamProcessorInfo
    * gps_dxt_encode_processor_info (void);
G_GNUC_INTERNAL const GstGpuStreamProcessorInfo
    * gps_nc_encode_processor_info (void);

/* GPU work of `what` failed (detail: the step and the CUDA error) and is
 * being done on the CPU instead: counted for gst_gpustream_gpu_fallbacks. */
G_GNUC_INTERNAL void gps_gpu_fallback (const gchar * what, const gchar * detail);

#if GS_HAVE_CUDA
/* "name: description" of a CUresult, for logs. Static storage. */
G_GNUC_INTERNAL const gchar *gps_cuda_strerror (CUresult res);

typedef enum {
  GPS_KERNEL_RLNC_PRODUCT,      /* rlnc_product_batch (rlnc/rlnc_cuda.h) */
  GPS_KERNEL_SRTP_PROTECT,      /* srtp_protect_batch (srtp/srtp_cuda.h) */
  GPS_KERNEL_SRTP_PROTECT_WARP, /* srtp_protect_batch_warp (srtp/srtp_cuda.h) */
  GPS_KERNEL_SRTP_UNPROTECT,    /* srtp_unprotect_batch (srtp/srtp_cuda.h) */
  GPS_KERNEL_DXT_ENCODE,        /* dxt_encode_slice_kernel (dxt/dxt_cuda.h) */
  GPS_KERNEL_DXT_DECODE,        /* dxt_decode_kernel (dxt/dxt_cuda.h) */
  GPS_KERNEL_LAST
} GpsKernel;

/* The kernel `which` of ctx, loading its embedded fatbin on first use.
 * Thread-safe; the module lives as long as ctx. */
G_GNUC_INTERNAL gboolean gps_cuda_get_kernel (GstCudaContext * ctx,
    GpsKernel which, CUfunction * func);
G_GNUC_INTERNAL gboolean gps_cuda_get_rlnc_kernel (GstCudaContext * ctx,
    CUfunction * func);

/* Grow a pinned host / a device buffer to at least size bytes, with
 * headroom; the contents are not kept. ctx pushed. */
G_GNUC_INTERNAL CUresult gps_cuda_ensure_host (guint8 ** host,
    gsize * host_size, gsize size);
G_GNUC_INTERNAL CUresult gps_cuda_ensure_dev (CUdeviceptr * dev,
    gsize * dev_size, gsize size);

/* A contiguous copy host -> device (src_host, dst_dev) or device -> host
 * (src_dev, dst_host), queued on stream. ctx pushed. */
G_GNUC_INTERNAL CUresult gps_cuda_copy_linear (const void *src_host,
    void *dst_host, CUdeviceptr src_dev, CUdeviceptr dst_dev, gsize size,
    CUstream stream);

/* A 2D copy of height rows of width bytes between host and device memory
 * (either way, or device to device), queued on stream. ctx pushed. */
G_GNUC_INTERNAL CUresult gps_cuda_copy_2d (const void *src_host,
    CUdeviceptr src_dev, gsize src_pitch, void *dst_host, CUdeviceptr dst_dev,
    gsize dst_pitch, gsize width, gsize height, CUstream stream);

/* A user's kept CUDA state on one context: streams and one pinned host +
 * one device area, reused by every batch (allocation and stream creation
 * cost more than a batch's work). Either lives on the context and is freed
 * with it (gps_cuda_staging_get), or belongs to one user
 * (gps_cuda_staging_new / _free). Users serialise on lock. Every staging is
 * listed for gst_gpustream_release_idle_staging, which frees the two areas
 * (not the streams) of those unused for a while: it skips one whose lock is
 * taken or that has work in flight. */
#define GPS_STAGING_MAX_STREAMS 8
typedef struct {
  GMutex lock;
  GstCudaContext *ctx;          /* a ref only when owned */
  gboolean owned;
  CUstream stream[GPS_STAGING_MAX_STREAMS];
  guint8 *host;
  gsize host_size;
  CUdeviceptr dev;
  gsize dev_size;
  /* under lock: work queued that a later call waits for (the areas are
   * in use between the two), and when the areas were last asked for */
  gboolean in_flight;
  gint64 last_use;
} GpsStaging;

/* A staging of ctx for one user (a ref on ctx), nothing allocated yet. */
G_GNUC_INTERNAL GpsStaging *gps_cuda_staging_new (GstCudaContext * ctx);
/* Frees an owned staging: its streams synchronised and destroyed, its
 * areas freed. No work may be queued by anyone else. */
G_GNUC_INTERNAL void gps_cuda_staging_free (GpsStaging * st);
/* As gps_cuda_staging_ensure, the pinned host area of host_size bytes and
 * the device area of dev_size (either may be 0: left as it is). */
G_GNUC_INTERNAL CUresult gps_cuda_staging_ensure_sizes (GpsStaging * st,
    gsize host_size, gsize dev_size, guint n_streams);

/* The staging `name` (one per user: "srtp", "dxt") of ctx, made on first
 * use. Thread-safe. */
G_GNUC_INTERNAL GpsStaging *gps_cuda_staging_get (GstCudaContext * ctx,
    const gchar * name);
/* Both areas of at least size bytes and n_streams streams. ctx pushed. */
G_GNUC_INTERNAL CUresult gps_cuda_staging_ensure (GpsStaging * st, gsize size,
    guint n_streams);
#endif

G_END_DECLS

#endif /* GPS_PRIVATE_H */
