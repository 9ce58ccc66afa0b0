/* gpssrtp.c: a batch of SRTP / SRTCP protects on the GPU or the CPU
 * (gpssrtp.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gpsprivate.h"
#include "gpssrtp.h"

#define GST_CAT_DEFAULT gps_cuda_debug

#if GS_HAVE_CUDA
#include "srtp/srtp_cuda.h"
#include "srtp/srtp_hd.h"

/* Per context: one stream and one staging area, reused by every batch.
 * Layout, identical in the pinned host buffer and on the device:
 *   [keys][descs][out_len][packets, each at a 16-byte aligned offset] */
typedef struct {
  GMutex lock;
  GstCudaContext *ctx;          /* not a ref: lives on the context */
  CUstream stream;
  guint8 *host;
  gsize host_size;
  CUdeviceptr dev;
  gsize dev_size;
} SrtpStaging;

static GQuark
staging_quark (void)
{
  static gsize q = 0;

  if (g_once_init_enter (&q))
    g_once_init_leave (&q, g_quark_from_static_string ("gst-gpustream-srtp-staging"));
  return (GQuark) q;
}

static void
staging_free (gpointer data)
{
  SrtpStaging *st = data;

  if ((st->stream || st->host || st->dev) && gst_cuda_context_push (st->ctx)) {
    if (st->stream)
      CuStreamDestroy (st->stream);
    if (st->host)
      CuMemFreeHost (st->host);
    if (st->dev)
      CuMemFree (st->dev);
    gst_cuda_context_pop (NULL);
  }
  g_mutex_clear (&st->lock);
  g_free (st);
}

static void
staging_context_disposed (gpointer data, GObject * where_the_object_was)
{
  g_object_set_qdata (where_the_object_was, staging_quark (), NULL);
}

static SrtpStaging *
staging_get (GstCudaContext * ctx)
{
  static GMutex create_lock;
  SrtpStaging *st;

  g_mutex_lock (&create_lock);
  st = g_object_get_qdata (G_OBJECT (ctx), staging_quark ());
  if (!st) {
    st = g_new0 (SrtpStaging, 1);
    g_mutex_init (&st->lock);
    st->ctx = ctx;
    g_object_set_qdata_full (G_OBJECT (ctx), staging_quark (), st,
        staging_free);
    g_object_weak_ref (G_OBJECT (ctx), staging_context_disposed, NULL);
  }
  g_mutex_unlock (&create_lock);
  return st;
}

/* Grows both buffers to size (contents not kept). ctx pushed. */
static CUresult
staging_ensure (SrtpStaging * st, gsize size)
{
  CUresult res;
  gsize want = MAX (size + size / 4, 1 << 20);

  if (want > G_MAXUINT)         /* 1.22's allocators take an unsigned */
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (size > st->host_size) {
    void *p = NULL;
    if (st->host)
      CuMemFreeHost (st->host);
    st->host = NULL;
    st->host_size = 0;
    res = CuMemAllocHost (&p, (guint) want);
    if (res != CUDA_SUCCESS)
      return res;
    st->host = p;
    st->host_size = want;
  }
  if (size > st->dev_size) {
    CUdeviceptr p = 0;
    if (st->dev)
      CuMemFree (st->dev);
    st->dev = 0;
    st->dev_size = 0;
    res = CuMemAlloc (&p, (guint) want);
    if (res != CUDA_SUCCESS)
      return res;
    st->dev = p;
    st->dev_size = want;
  }
  if (!st->stream)
    return CuStreamCreate (&st->stream, CU_STREAM_NON_BLOCKING);
  return CUDA_SUCCESS;
}

#define ALIGN16(x) (((x) + 15) & ~(gsize) 15)

/* Keys of a context in the batch: index 2c (RTP) and 2c + 1 (RTCP). */
static guint
keys_index (GHashTable * seen, GArray * keys, GsSrtpCtx * ctx)
{
  gpointer v;

  if (g_hash_table_lookup_extended (seen, ctx, NULL, &v))
    return GPOINTER_TO_UINT (v);
  g_array_append_val (keys, ctx->rtp_keys);
  g_array_append_val (keys, ctx->rtcp_keys);
  g_hash_table_insert (seen, ctx, GUINT_TO_POINTER (keys->len - 2));
  return keys->len - 2;
}

/* Host half of every packet, the layout, one copy in, one launch, one copy
 * out. FALSE only when a CUDA step failed; the prepared packets are then
 * finished on the CPU, so the caller has nothing left to do either way. */
static void
protect_gpu (GstCudaContext * ctx, GsSrtpPacket * pkts, gsize n,
    gboolean * used_gpu)
{
  SrtpStaging *st = staging_get (ctx);
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  GArray *keys = g_array_new (FALSE, FALSE, sizeof (GsSrtpKeys));
  GsSrtpDesc *descs = g_new0 (GsSrtpDesc, n);
  gsize *slot = g_new (gsize, n);   /* index into descs, or G_MAXSIZE */
  gsize i, nd = 0, keys_off, descs_off, len_off, data_off, total;
  CUfunction func;
  CUresult res = CUDA_SUCCESS;
  const gchar *step = NULL;
  gboolean pushed = FALSE;
  guint32 *out_len;

  /* the host half, in array order: this is where ROC and SRTCP index move */
  for (i = 0; i < n; i++) {
    GsSrtpDesc *d = &descs[nd];

    slot[i] = G_MAXSIZE;
    pkts[i].result = gsrtp_prepare_protect (pkts[i].ctx, pkts[i].data,
        pkts[i].len, pkts[i].cap, pkts[i].is_rtcp, d);
    if (pkts[i].result != GSRTP_OK)
      continue;
    d->keys = keys_index (seen, keys, pkts[i].ctx) + (pkts[i].is_rtcp ? 1 : 0);
    slot[i] = nd++;
  }

  keys_off = 0;
  descs_off = ALIGN16 (keys_off + keys->len * sizeof (GsSrtpKeys));
  len_off = ALIGN16 (descs_off + nd * sizeof (GsSrtpDesc));
  data_off = ALIGN16 (len_off + nd * sizeof (guint32));
  total = data_off;
  for (i = 0; i < n; i++)
    if (slot[i] != G_MAXSIZE) {
      descs[slot[i]].offset = (guint32) (total - data_off);
      total = ALIGN16 (total + pkts[i].cap);
    }

  g_mutex_lock (&st->lock);
  if (nd == 0)
    goto finish;
  if (total - data_off > G_MAXUINT32) {
    step = "batch over 4 GiB";
    goto finish;
  }
  if (!gps_cuda_get_kernel (ctx, GPS_KERNEL_SRTP_PROTECT, &func)) {
    step = "loading srtp_protect_batch";
    goto finish;
  }
  if (!gst_cuda_context_push (ctx)) {
    step = "pushing the CUDA context";
    goto finish;
  }
  pushed = TRUE;
#define CHECK(call, what) \
  if ((res = (call)) != CUDA_SUCCESS) { step = what; goto finish; }
  CHECK (staging_ensure (st, total), "allocating the staging buffers");

  memcpy (st->host + keys_off, keys->data, keys->len * sizeof (GsSrtpKeys));
  memcpy (st->host + descs_off, descs, nd * sizeof (GsSrtpDesc));
  for (i = 0; i < n; i++)
    if (slot[i] != G_MAXSIZE)
      memcpy (st->host + data_off + descs[slot[i]].offset, pkts[i].data,
          pkts[i].len);

  CHECK (gps_cuda_copy_linear (st->host, NULL, 0, st->dev, total, st->stream),
      "copying the batch to the device");
  {
    CUdeviceptr k = st->dev + keys_off, d = st->dev + descs_off;
    CUdeviceptr b = st->dev + data_off, l = st->dev + len_off;
    guint32 count = (guint32) nd;
    void *args[] = { &k, &d, &count, &b, &l };
    guint blocks = (guint) ((nd + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS);

    CHECK (CuLaunchKernel (func, blocks, 1, 1, SRTP_GPU_THREADS, 1, 1, 0,
            st->stream, args, NULL), "launching srtp_protect_batch");
  }
  /* back: the lengths and every packet area (the tags grew them) */
  CHECK (gps_cuda_copy_linear (NULL, st->host + len_off, st->dev + len_off, 0,
          total - len_off, st->stream), "copying the batch back");
  CHECK (CuStreamSynchronize (st->stream), "cuStreamSynchronize");
#undef CHECK

  out_len = (guint32 *) (st->host + len_off);
  for (i = 0; i < n; i++) {
    if (slot[i] == G_MAXSIZE)
      continue;
    pkts[i].len = out_len[slot[i]];
    memcpy (pkts[i].data, st->host + data_off + descs[slot[i]].offset,
        pkts[i].len);
  }
  if (used_gpu)
    *used_gpu = TRUE;

finish:
  if (pushed)
    gst_cuda_context_pop (NULL);
  g_mutex_unlock (&st->lock);
  if (step) {
    /* prepared already: finish with the same per-thread code on the CPU */
    const GsAesTables *t = gsrtp_aes_tables ();
    GsSrtpKeys *k = (GsSrtpKeys *) keys->data;

    GST_WARNING_OBJECT (ctx, "SRTP batch of %" G_GSIZE_FORMAT " packets on "
        "the CPU: %s failed%s%s", nd, step, res != CUDA_SUCCESS ? ": " : "",
        res != CUDA_SUCCESS ? gps_cuda_strerror (res) : "");
    for (i = 0; i < n; i++)
      if (slot[i] != G_MAXSIZE) {
        GsSrtpDesc *d = &descs[slot[i]];
        pkts[i].len = gs_srtp_hd_protect (t, &k[d->keys], pkts[i].data, d);
      }
    if (used_gpu)
      *used_gpu = FALSE;
  }
  g_free (slot);
  g_free (descs);
  g_array_unref (keys);
  g_hash_table_unref (seen);
}
#endif /* GS_HAVE_CUDA */

gsize
gst_gpustream_srtp_protect_batch (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context,
    gboolean * used_gpu)
{
  gps_debug_init ();
  if (used_gpu)
    *used_gpu = FALSE;
  if (n == 0)
    return 0;
#if GS_HAVE_CUDA
  if ((backend == GST_GPUSTREAM_BACKEND_GPU ||
          backend == GST_GPUSTREAM_BACKEND_HYBRID) && cuda_context &&
      GST_IS_CUDA_CONTEXT (cuda_context)) {
    gsize i, ok = 0;

    protect_gpu (GST_CUDA_CONTEXT (cuda_context), pkts, n, used_gpu);
    for (i = 0; i < n; i++)
      ok += pkts[i].result == GSRTP_OK;
    return ok;
  }
#endif
  return gsrtp_protect_batch (pkts, n, GSRTP_IMPL_AUTO);
}
