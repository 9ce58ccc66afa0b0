/* gpssrtp.c: what the SRTP elements share (gpssrtp.h): a batch of SRTP /
 * SRTCP protects or unprotects on the GPU or the CPU, the enums, caps and
 * key helpers. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "gpsprivate.h"
#include "gpssrtp.h"

#define GST_CAT_DEFAULT gps_cuda_debug

#define ALIGN16(x) (((x) + 15) & ~(gsize) 15)

#if GS_HAVE_CUDA
#include "srtp/srtp_cuda.h"
#include "srtp/srtp_hd.h"

/* Per context: one stream and one staging area (GpsStaging "srtp"), reused
 * by every batch; and one per lane of the scheduler ("srtp-lane-N"), so
 * that the batches of a cycle are in flight together. Layout, identical in
 * the pinned host buffer and on the device: [keys][descs][out][packets,
 * each at a 16-byte aligned offset] */
typedef GpsStaging SrtpStaging;

static SrtpStaging *
staging_get (GstCudaContext * ctx, guint lane)
{
  gchar name[32];

  if (lane == GST_GPUSTREAM_SRTP_LANE_NONE)
    return gps_cuda_staging_get (ctx, "srtp");
  g_snprintf (name, sizeof name, "srtp-lane-%u", lane);
  return gps_cuda_staging_get (ctx, name);
}

/* The descriptors and key array of one batch, and its layout in the
 * staging area: [keys][descs][out: one guint32 per packet][packets, each at
 * a 16-byte aligned offset]. The same for protect (out: lengths) and
 * unprotect (out: tag ok flags). */
typedef struct {
  GHashTable *seen;             /* GsSrtpCtx * -> index of its RTP keys */
  GArray *keys;                 /* GsSrtpKeys: 2c RTP, 2c + 1 RTCP */
  GsSrtpDesc *descs;
  gsize *slot;                  /* per packet: index into descs, or G_MAXSIZE */
  gsize nd;
  gsize keys_off, descs_off, out_off, data_off, total;
} SrtpBatch;

static void
batch_init (SrtpBatch * b, gsize n)
{
  gsize i;

  memset (b, 0, sizeof *b);
  b->seen = g_hash_table_new (NULL, NULL);
  b->keys = g_array_new (FALSE, FALSE, sizeof (GsSrtpKeys));
  b->descs = g_new0 (GsSrtpDesc, n);
  b->slot = g_new (gsize, n);
  for (i = 0; i < n; i++)
    b->slot[i] = G_MAXSIZE;
}

static void
batch_clear (SrtpBatch * b)
{
  /* the key array holds session keys: leave no copy behind */
  if (b->keys->len)
    memset (b->keys->data, 0, b->keys->len * sizeof (GsSrtpKeys));
  g_array_unref (b->keys);
  g_hash_table_unref (b->seen);
  g_free (b->descs);
  g_free (b->slot);
}

/* Takes the next descriptor (filled by the caller's prepare) for packet i:
 * sets its key index. */
static void
batch_add (SrtpBatch * b, const GsSrtpPacket * p, gsize i)
{
  GsSrtpCtx *ctx = p->ctx;
  gpointer v;
  guint k;

  if (g_hash_table_lookup_extended (b->seen, ctx, NULL, &v)) {
    k = GPOINTER_TO_UINT (v);
  } else {
    g_array_append_val (b->keys, ctx->rtp_keys);
    g_array_append_val (b->keys, ctx->rtcp_keys);
    k = b->keys->len - 2;
    g_hash_table_insert (b->seen, ctx, GUINT_TO_POINTER (k));
  }
  b->descs[b->nd].keys = k + (p->is_rtcp ? 1 : 0);
  b->slot[i] = b->nd++;
}

/* Packet i of the batch in the host staging buffer. */
static guint8 *
batch_packet (const SrtpStaging * st, const SrtpBatch * b, gsize i)
{
  return st->host + b->data_off + b->descs[b->slot[i]].offset;
}

/* Which protect kernel a batch takes (srtp_cuda.h says why and with which
 * figures): one warp per packet for small batches, one thread per packet
 * otherwise. GS_SRTP_GPU_KERNEL=thread|warp forces one, for benchmarks. */
static GpsKernel
protect_kernel_for (gsize nd, gboolean gcm)
{
  static gsize forced = 0;      /* 1 auto, 2 thread, 3 warp */

  if (g_once_init_enter (&forced)) {
    const gchar *v = g_getenv ("GS_SRTP_GPU_KERNEL");

    g_once_init_leave (&forced, !g_strcmp0 (v, "thread") ? 2 :
        !g_strcmp0 (v, "warp") ? 3 : 1);
  }
  if (forced != 1)
    return forced == 3 ? GPS_KERNEL_SRTP_PROTECT_WARP :
        GPS_KERNEL_SRTP_PROTECT;
  return nd <= (gcm ? SRTP_GPU_WARP_MAX_PACKETS_GCM :
      SRTP_GPU_WARP_MAX_PACKETS) ? GPS_KERNEL_SRTP_PROTECT_WARP :
      GPS_KERNEL_SRTP_PROTECT;
}

static GpsKernel
protect_kernel (const SrtpBatch * b)
{
  gboolean gcm = FALSE;
  gsize i;

  for (i = 0; i < b->keys->len && !gcm; i++)
    gcm = g_array_index (b->keys, GsSrtpKeys, i).cipher == GS_SRTP_C_AES_GCM;
  return protect_kernel_for (b->nd, gcm);
}

/* Queues one launch of func, the kernel `which` (a protect or unprotect
 * kernel), over count descriptors on stream; keys, descs, buf and out are
 * device pointers. */
static CUresult
srtp_launch (CUfunction func, GpsKernel which, CUdeviceptr k, CUdeviceptr d,
    guint32 count, CUdeviceptr buf, CUdeviceptr o, CUstream stream)
{
  void *args[] = { &k, &d, &count, &buf, &o };
  const guint64 threads = (which == GPS_KERNEL_SRTP_PROTECT_WARP ? 32 : 1) *
      (guint64) count;
  guint blocks = (guint) ((threads + SRTP_GPU_THREADS - 1) / SRTP_GPU_THREADS);

  return CuLaunchKernel (func, blocks, 1, 1, SRTP_GPU_THREADS, 1, 1, 0,
      stream, args, NULL);
}

/* Lays the batch out (room per packet: cap for protect, len for unprotect),
 * and queues on st's stream the copy in, the launch of `which` and the copy
 * of [out][packets] back; batch_wait waits for them, after which the
 * results are in st->host. The caller holds st->lock from here until it
 * has read the results. NULL on success, else the step that failed (*res:
 * its CUDA error, or CUDA_SUCCESS); batch_wait must follow either way. */
static const gchar *
batch_launch (GstCudaContext * ctx, SrtpStaging * st, SrtpBatch * b,
    GsSrtpPacket * pkts, gsize n, GpsKernel which, gboolean room_is_cap,
    CUresult * res)
{
  CUfunction func;
  const gchar *step = NULL;
  gsize i;

  *res = CUDA_SUCCESS;
  b->keys_off = 0;
  b->descs_off = ALIGN16 (b->keys_off + b->keys->len * sizeof (GsSrtpKeys));
  b->out_off = ALIGN16 (b->descs_off + b->nd * sizeof (GsSrtpDesc));
  b->data_off = ALIGN16 (b->out_off + b->nd * sizeof (guint32));
  b->total = b->data_off;
  for (i = 0; i < n; i++)
    if (b->slot[i] != G_MAXSIZE) {
      b->descs[b->slot[i]].offset = (guint32) (b->total - b->data_off);
      b->total = ALIGN16 (b->total + (room_is_cap ? pkts[i].cap : pkts[i].len));
      if (b->total - b->data_off > G_MAXUINT32)
        return "batch over 4 GiB";
    }

  if (!gps_cuda_get_kernel (ctx, which, &func))
    return "loading the kernel";
  if (!gst_cuda_context_push (ctx))
    return "pushing the CUDA context";
#define CHECK(call, what) \
  if ((*res = (call)) != CUDA_SUCCESS) { step = what; goto out; }
  CHECK (gps_cuda_staging_ensure (st, b->total, 1),
      "allocating the staging buffers");

  memcpy (st->host + b->keys_off, b->keys->data,
      b->keys->len * sizeof (GsSrtpKeys));
  memcpy (st->host + b->descs_off, b->descs, b->nd * sizeof (GsSrtpDesc));
  for (i = 0; i < n; i++)
    if (b->slot[i] != G_MAXSIZE)
      memcpy (batch_packet (st, b, i), pkts[i].data, pkts[i].len);

  CHECK (gps_cuda_copy_linear (st->host, NULL, 0, st->dev, b->total,
          st->stream[0]), "copying the batch to the device");
  CHECK (srtp_launch (func, which, st->dev + b->keys_off,
          st->dev + b->descs_off, (guint32) b->nd, st->dev + b->data_off,
          st->dev + b->out_off, st->stream[0]), "launching the kernel");
  /* back: the per-packet outputs and every packet area */
  CHECK (gps_cuda_copy_linear (NULL, st->host + b->out_off,
          st->dev + b->out_off, 0, b->total - b->out_off, st->stream[0]),
      "copying the batch back");
#undef CHECK

out:
  gst_cuda_context_pop (NULL);
  return step;
}

/* Waits for what batch_launch queued. After a failed launch it only drains
 * the stream (the staging buffers may still be read) and keeps that step. */
static const gchar *
batch_wait (GstCudaContext * ctx, SrtpStaging * st, const gchar * step,
    CUresult * res)
{
  CUresult r;

  if (!st->stream[0])
    return step;                /* nothing was ever queued */
  if (!gst_cuda_context_push (ctx))
    return step ? step : "pushing the CUDA context";
  r = CuStreamSynchronize (st->stream[0]);
  gst_cuda_context_pop (NULL);
  if (!step && r != CUDA_SUCCESS) {
    *res = r;
    step = "cuStreamSynchronize";
  }
  return step;
}

static const gchar *
batch_run (GstCudaContext * ctx, SrtpStaging * st, SrtpBatch * b,
    GsSrtpPacket * pkts, gsize n, GpsKernel which, gboolean room_is_cap,
    CUresult * res)
{
  return batch_wait (ctx, st, batch_launch (ctx, st, b, pkts, n, which,
          room_is_cap, res), res);
}

static void
warn_cpu (GstCudaContext * ctx, const gchar * kernel, gsize nd,
    const gchar * step, CUresult res)
{
  gchar *detail = g_strdup_printf ("%s failed%s%s", step,
      res != CUDA_SUCCESS ? ": " : "",
      res != CUDA_SUCCESS ? gps_cuda_strerror (res) : "");

  GST_WARNING_OBJECT (ctx, "%s: batch of %" G_GSIZE_FORMAT " packets on "
      "the CPU: %s", kernel, nd, detail);
  gps_gpu_fallback (kernel, detail);
  g_free (detail);
}

#endif /* GS_HAVE_CUDA */

/* A protect batch between its two halves (gst_gpustream_srtp_protect_submit
 * and _finish). ctx NULL: protected on the CPU already. */
struct _GstGpuStreamSrtpBatch
{
  GsSrtpPacket *pkts;
  gsize n;
#if GS_HAVE_CUDA
  GstCudaContext *ctx;
  SrtpStaging *st;              /* locked from submit to finish */
  SrtpBatch b;
  const gchar *step;
  CUresult res;
#endif
};

#if GS_HAVE_CUDA
/* The host half of every packet, in array order (this is where ROC and
 * SRTCP index move), then the copies and the launch are queued on the
 * lane's stream. */
static void
protect_gpu_submit (GstGpuStreamSrtpBatch * pb, guint lane)
{
  GsSrtpPacket *pkts = pb->pkts;
  SrtpBatch *b = &pb->b;
  gsize i;

  batch_init (b, pb->n);
  for (i = 0; i < pb->n; i++) {
    pkts[i].result = gsrtp_prepare_protect (pkts[i].ctx, pkts[i].data,
        pkts[i].len, pkts[i].cap, pkts[i].is_rtcp, &b->descs[b->nd]);
    if (pkts[i].result == GSRTP_OK)
      batch_add (b, &pkts[i], i);
  }
  if (b->nd == 0)
    return;
  pb->st = staging_get (pb->ctx, lane);
  g_mutex_lock (&pb->st->lock);
  pb->step = batch_launch (pb->ctx, pb->st, b, pkts, pb->n,
      protect_kernel (b), TRUE, &pb->res);
}

/* Waits for the lane, gives each packet its bytes. If a CUDA step failed,
 * the prepared packets are finished on the CPU by gsrtp_protect_desc (no
 * packet protected twice, no index advanced twice), so the caller has
 * nothing left to do either way. */
static void
protect_gpu_finish (GstGpuStreamSrtpBatch * pb, gboolean * used_gpu)
{
  GsSrtpPacket *pkts = pb->pkts;
  SrtpBatch *b = &pb->b;
  gsize i;

  if (pb->st) {
    SrtpStaging *st = pb->st;

    pb->step = batch_wait (pb->ctx, st, pb->step, &pb->res);
    if (!pb->step) {
      const guint32 *out_len = (const guint32 *) (st->host + b->out_off);

      for (i = 0; i < pb->n; i++) {
        if (b->slot[i] == G_MAXSIZE)
          continue;
        pkts[i].len = out_len[b->slot[i]];
        memcpy (pkts[i].data, batch_packet (st, b, i), pkts[i].len);
      }
      if (used_gpu)
        *used_gpu = TRUE;
    }
    g_mutex_unlock (&st->lock);
  }

  if (pb->step) {
    /* prepared already (the indices moved): finish each packet on the
     * CPU's batch primitives, with the keys the batch was launched with */
    const GsSrtpKeys *k = (const GsSrtpKeys *) b->keys->data;

    warn_cpu (pb->ctx, SRTP_GPU_KERNEL_NAME, b->nd, pb->step, pb->res);
    for (i = 0; i < pb->n; i++)
      if (b->slot[i] != G_MAXSIZE) {
        GsSrtpDesc *d = &b->descs[b->slot[i]];
        pkts[i].len = gsrtp_protect_desc (&k[d->keys], pkts[i].data, d);
      }
  }
  batch_clear (b);
}

/* (A) prepare every packet against the committed state, committing
 * nothing; (B) one launch checks the tags and decrypts copies; (C) in
 * packet order, prepare again against the state the packets before left:
 * where the estimate changed (a ROC step, or not parseable in (A)) the
 * packet is redone on the CPU from its untouched original; else the GPU's
 * verdict stands, and only an accepted packet is committed and its
 * decrypted copy taken. FALSE when a CUDA step failed or nothing was worth
 * a launch: nothing has been committed or touched then. */
static gboolean
unprotect_gpu (GstCudaContext * ctx, GsSrtpPacket * pkts, gsize n)
{
  SrtpStaging *st = staging_get (ctx, GST_GPUSTREAM_SRTP_LANE_NONE);
  SrtpBatch b;
  const gchar *step = NULL;
  CUresult res = CUDA_SUCCESS;
  const guint32 *ok;
  gsize i;

  batch_init (&b, n);
  for (i = 0; i < n; i++)
    if (gsrtp_prepare_unprotect_desc (pkts[i].ctx, pkts[i].data, pkts[i].len,
            pkts[i].is_rtcp, &b.descs[b.nd]) == GSRTP_OK)
      batch_add (&b, &pkts[i], i);
  if (b.nd == 0) {
    batch_clear (&b);
    return FALSE;
  }

  g_mutex_lock (&st->lock);
  step = batch_run (ctx, st, &b, pkts, n, GPS_KERNEL_SRTP_UNPROTECT, FALSE,
      &res);
  if (step) {
    g_mutex_unlock (&st->lock);
    warn_cpu (ctx, SRTP_GPU_UNPROTECT_KERNEL_NAME, b.nd, step, res);
    batch_clear (&b);
    return FALSE;
  }

  ok = (const guint32 *) (st->host + b.out_off);
  for (i = 0; i < n; i++) {
    GsSrtpPacket *q = &pkts[i];
    GsSrtpDesc now;
    const GsSrtpDesc *then;

    q->result = gsrtp_prepare_unprotect_desc (q->ctx, q->data, q->len,
        q->is_rtcp, &now);
    if (q->result != GSRTP_OK)
      continue;                 /* e.g. a replay of an earlier packet */
    then = b.slot[i] != G_MAXSIZE ? &b.descs[b.slot[i]] : NULL;
    if (!then || now.roc != then->roc) {
      /* a batch of one on the CPU: AES-NI or the constant-time path,
       * never the table AES; it sets result and, when accepted, len */
      gsrtp_unprotect_batch (q, 1, GSRTP_IMPL_AUTO);
      continue;
    }
    if (!ok[b.slot[i]]) {
      q->result = GSRTP_ERR_AUTH;
      continue;
    }
    gsrtp_commit_unprotect_desc (q->ctx, q->data, &now);
    memcpy (q->data, batch_packet (st, &b, i), now.len);
    q->len = now.len;
  }
  g_mutex_unlock (&st->lock);
  batch_clear (&b);
  return TRUE;
}
#endif /* GS_HAVE_CUDA */

#if GS_HAVE_CUDA
/* The context to run a batch on, or NULL for the CPU path. */
static GstCudaContext *
gpu_context (GstGpuStreamBackend backend, GstObject * cuda_context)
{
  if ((backend == GST_GPUSTREAM_BACKEND_GPU ||
          backend == GST_GPUSTREAM_BACKEND_HYBRID) && cuda_context &&
      GST_IS_CUDA_CONTEXT (cuda_context))
    return GST_CUDA_CONTEXT (cuda_context);
  return NULL;
}

static gsize
count_ok (const GsSrtpPacket * pkts, gsize n)
{
  gsize i, ok = 0;

  for (i = 0; i < n; i++)
    ok += pkts[i].result == GSRTP_OK;
  return ok;
}
#endif

GstGpuStreamSrtpBatch *
gst_gpustream_srtp_protect_submit (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context, guint lane)
{
  GstGpuStreamSrtpBatch *pb = g_new0 (GstGpuStreamSrtpBatch, 1);

  gps_debug_init ();
  pb->pkts = pkts;
  pb->n = n;
  if (n == 0)
    return pb;
#if GS_HAVE_CUDA
  pb->ctx = gpu_context (backend, cuda_context);
  if (pb->ctx) {
    protect_gpu_submit (pb, lane);
    return pb;
  }
#endif
  gsrtp_protect_batch (pkts, n, GSRTP_IMPL_AUTO);
  return pb;
}


gsize
gst_gpustream_srtp_protect_finish (GstGpuStreamSrtpBatch * pb,
    gboolean * used_gpu)
{
  gsize i, ok = 0;

  if (used_gpu)
    *used_gpu = FALSE;
#if GS_HAVE_CUDA
  if (pb->ctx && pb->n > 0)
    protect_gpu_finish (pb, used_gpu);
#endif
  for (i = 0; i < pb->n; i++)
    ok += pb->pkts[i].result == GSRTP_OK;
  g_free (pb);
  return ok;
}

gsize
gst_gpustream_srtp_protect_batch (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context,
    gboolean * used_gpu)
{
#if GS_HAVE_CUDA
  if (!gpu_context (backend, cuda_context))
#endif
  {
    /* the CPU path of submit + finish without the batch object: a
     * gpusrtpenc fed one buffer per packet calls this per packet */
    if (used_gpu)
      *used_gpu = FALSE;
    return gsrtp_protect_batch (pkts, n, GSRTP_IMPL_AUTO);
  }
  return gst_gpustream_srtp_protect_finish (gst_gpustream_srtp_protect_submit
      (pkts, n, backend, cuda_context, GST_GPUSTREAM_SRTP_LANE_NONE),
      used_gpu);
}

gsize
gst_gpustream_srtp_unprotect_batch (GsSrtpPacket * pkts, gsize n,
    GstGpuStreamBackend backend, GstObject * cuda_context,
    gboolean * used_gpu)
{
  gps_debug_init ();
  if (used_gpu)
    *used_gpu = FALSE;
  if (n == 0)
    return 0;
#if GS_HAVE_CUDA
  {
    GstCudaContext *ctx = gpu_context (backend, cuda_context);

    /* FALSE: nothing committed, the CPU path below does the whole batch */
    if (ctx && unprotect_gpu (ctx, pkts, n)) {
      if (used_gpu)
        *used_gpu = TRUE;
      return count_ok (pkts, n);
    }
  }
#endif
  return gsrtp_unprotect_batch (pkts, n, GSRTP_IMPL_AUTO);
}

/* ---- shared by the elements ---------------------------------------------- */

/* The enums under srtpenc's names. GType names are process-global and
 * gst-plugins-bad's srtp plugin registers GstSrtpCipherType / GstSrtpAuthType
 * without looking: whoever takes a name second gets no type. So we take
 * srtpenc's names only when its plugin is loaded or cannot be; otherwise
 * ours (GstGpuSrtp*) carry the same values and nicks, and a value of
 * srtpenc's type converts to ours (enum to enum) in g_object_set_property. */

static const GEnumValue cipher_values[] = {
  {GST_GPU_SRTP_CIPHER_NULL, "GST_SRTP_CIPHER_NULL", "null"},
  {GST_GPU_SRTP_CIPHER_AES_128_ICM, "GST_SRTP_CIPHER_AES_128_ICM",
      "aes-128-icm"},
  {GST_GPU_SRTP_CIPHER_AES_256_ICM, "GST_SRTP_CIPHER_AES_256_ICM",
      "aes-256-icm"},
  {GST_GPU_SRTP_CIPHER_AES_128_GCM, "GST_SRTP_CIPHER_AES_128_GCM",
      "aes-128-gcm"},
  {GST_GPU_SRTP_CIPHER_AES_256_GCM, "GST_SRTP_CIPHER_AES_256_GCM",
      "aes-256-gcm"},
  {0, NULL, NULL}
};

static const GEnumValue auth_values[] = {
  {GST_GPU_SRTP_AUTH_NULL, "GST_SRTP_AUTH_NULL", "null"},
  {GST_GPU_SRTP_AUTH_HMAC_SHA1_32, "GST_SRTP_AUTH_HMAC_SHA1_32",
      "hmac-sha1-32"},
  {GST_GPU_SRTP_AUTH_HMAC_SHA1_80, "GST_SRTP_AUTH_HMAC_SHA1_80",
      "hmac-sha1-80"},
  {0, NULL, NULL}
};

#define SRTPENC_CIPHER_TYPE_NAME "GstSrtpCipherType"
#define SRTPENC_AUTH_TYPE_NAME "GstSrtpAuthType"

/* type holds exactly values: the same numbers with the same nicks. */
static gboolean
enum_type_matches (GType type, const GEnumValue * values)
{
  GEnumClass *klass;
  gboolean same;
  guint i, n = 0;

  if (!G_TYPE_IS_ENUM (type))
    return FALSE;
  klass = g_type_class_ref (type);
  while (values[n].value_nick)
    n++;
  same = klass->n_values == n;
  for (i = 0; same && i < n; i++) {
    GEnumValue *v = g_enum_get_value (klass, values[i].value);
    same = v && g_strcmp0 (v->value_nick, values[i].value_nick) == 0;
  }
  g_type_class_unref (klass);
  return same;
}

/* srtpenc's type when its plugin registered it (and it has our values),
 * else ours under own_name. Runs inside plugin loading (class_init of our
 * elements), where loading srtpenc's plugin would deadlock: no loading
 * here. */
static GType
enum_type (const gchar * srtpenc_name, const gchar * own_name,
    const GEnumValue * values)
{
  GType t = g_type_from_name (srtpenc_name);

  if (t && enum_type_matches (t, values))
    return t;
  if (t)
    GST_WARNING ("%s has other values than srtpenc 1.22's, not using it",
        srtpenc_name);
  return g_enum_register_static (own_name, values);
}

GType
gst_gpu_srtp_cipher_type_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    GType t = enum_type (SRTPENC_CIPHER_TYPE_NAME, "GstGpuSrtpCipherType",
        cipher_values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_gpu_srtp_auth_type_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type)) {
    GType t = enum_type (SRTPENC_AUTH_TYPE_NAME, "GstGpuSrtpAuthType",
        auth_values);
    g_once_init_leave (&type, t);
  }
  return type;
}

void
gst_gpu_srtp_publish_srtpenc_types (void)
{
  static gsize done = 0;

  if (!g_once_init_enter (&done))
    return;
  if (!g_type_from_name (SRTPENC_CIPHER_TYPE_NAME) ||
      !g_type_from_name (SRTPENC_AUTH_TYPE_NAME)) {
    GstPluginFeature *f = gst_registry_find_feature (gst_registry_get (),
        "srtpenc", GST_TYPE_ELEMENT_FACTORY);

    if (f) {
      /* its plugin registers both types when it loads */
      GstPluginFeature *loaded = gst_plugin_feature_load (f);

      GST_INFO ("loaded srtpenc's plugin for its enum types: %s",
          loaded ? "ok" : "failed");
      if (loaded)
        gst_object_unref (loaded);
      gst_object_unref (f);
    }
  }
  /* no srtpenc that could take the names (none installed, or it failed to
   * load): ours take them, so that code written for srtpenc finds them */
  if (!g_type_from_name (SRTPENC_CIPHER_TYPE_NAME))
    g_enum_register_static (SRTPENC_CIPHER_TYPE_NAME, cipher_values);
  if (!g_type_from_name (SRTPENC_AUTH_TYPE_NAME))
    g_enum_register_static (SRTPENC_AUTH_TYPE_NAME, auth_values);
  g_once_init_leave (&done, 1);
}

void
gst_gpu_srtp_mark_plugin_api (void)
{
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_SRTP_CIPHER_TYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_SRTP_AUTH_TYPE, 0);
}

GsSrtpPolicy
gst_gpu_srtp_policy (GstGpuSrtpCipherType cipher, GstGpuSrtpAuthType auth)
{
  GsSrtpPolicy p;

  /* the enums share their values with the kernel's */
  p.cipher = (GsSrtpCipher) cipher;
  p.auth = (GsSrtpAuth) auth;
  /* GCM authenticates by itself; the auth setting does not apply */
  if (cipher == GST_GPU_SRTP_CIPHER_AES_128_GCM ||
      cipher == GST_GPU_SRTP_CIPHER_AES_256_GCM)
    p.auth = GSRTP_AUTH_NULL;
  return p;
}

static const gchar *
enum_nick (GType type, gint value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *v = g_enum_get_value (klass, value);
  const gchar *nick = v ? v->value_nick : NULL;

  g_type_class_unref (klass);
  return nick;
}

static gboolean
enum_from_nick (GType type, const gchar * nick, gint * value)
{
  GEnumClass *klass;
  GEnumValue *v;

  if (!nick)
    return FALSE;
  klass = g_type_class_ref (type);
  v = g_enum_get_value_by_nick (klass, nick);
  if (v)
    *value = v->value;
  g_type_class_unref (klass);
  return v != NULL;
}

const gchar *
gst_gpu_srtp_cipher_nick (GstGpuSrtpCipherType cipher)
{
  return enum_nick (GST_TYPE_GPU_SRTP_CIPHER_TYPE, cipher);
}

const gchar *
gst_gpu_srtp_auth_nick (GstGpuSrtpAuthType auth)
{
  return enum_nick (GST_TYPE_GPU_SRTP_AUTH_TYPE, auth);
}

gboolean
gst_gpu_srtp_cipher_from_nick (const gchar * nick,
    GstGpuSrtpCipherType * cipher)
{
  gint v;

  if (!enum_from_nick (GST_TYPE_GPU_SRTP_CIPHER_TYPE, nick, &v))
    return FALSE;
  *cipher = v;
  return TRUE;
}

gboolean
gst_gpu_srtp_auth_from_nick (const gchar * nick, GstGpuSrtpAuthType * auth)
{
  gint v;

  if (!enum_from_nick (GST_TYPE_GPU_SRTP_AUTH_TYPE, nick, &v))
    return FALSE;
  *auth = v;
  return TRUE;
}

gsize
gst_gpu_srtp_key_length (GstGpuSrtpCipherType cipher)
{
  return gsrtp_master_key_len ((GsSrtpCipher) cipher) +
      gsrtp_master_salt_len ((GsSrtpCipher) cipher);
}

GstCaps *
gst_gpu_srtp_make_src_caps (const GstCaps * sink_caps, gboolean is_rtcp,
    GstBuffer * key, GstBuffer * mki, GstGpuSrtpCipherType rtp_cipher,
    GstGpuSrtpAuthType rtp_auth, GstGpuSrtpCipherType rtcp_cipher,
    GstGpuSrtpAuthType rtcp_auth)
{
  GstCaps *caps = sink_caps ? gst_caps_copy (sink_caps) :
      gst_caps_new_empty_simple ("application/x-rtp");
  GsSrtpPolicy rtp = gst_gpu_srtp_policy (rtp_cipher, rtp_auth);
  GsSrtpPolicy rtcp = gst_gpu_srtp_policy (rtcp_cipher, rtcp_auth);
  guint i;

  if (gst_caps_is_empty (caps))
    gst_caps_append_structure (caps, gst_structure_new_empty ("x"));
  for (i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_caps_get_structure (caps, i);

    gst_structure_set_name (s, is_rtcp ? "application/x-srtcp" :
        "application/x-srtp");
    gst_structure_set (s, "srtp-key", GST_TYPE_BUFFER, key,
        "srtp-cipher", G_TYPE_STRING, gst_gpu_srtp_cipher_nick (rtp_cipher),
        "srtp-auth", G_TYPE_STRING,
        gst_gpu_srtp_auth_nick ((GstGpuSrtpAuthType) rtp.auth),
        "srtcp-cipher", G_TYPE_STRING, gst_gpu_srtp_cipher_nick (rtcp_cipher),
        "srtcp-auth", G_TYPE_STRING,
        gst_gpu_srtp_auth_nick ((GstGpuSrtpAuthType) rtcp.auth), NULL);
    if (mki)
      gst_structure_set (s, "mki", GST_TYPE_BUFFER, mki, NULL);
  }
  return caps;
}

GstCaps *
gst_gpu_srtp_caps_for_log (const GstCaps * caps)
{
  GstCaps *copy;
  guint i;

  if (!caps)
    return NULL;
  copy = gst_caps_copy (caps);
  for (i = 0; i < gst_caps_get_size (copy); i++) {
    GstStructure *s = gst_caps_get_structure (copy, i);
    guint k;

    gst_structure_remove_fields (s, "srtp-key", "mki", NULL);
    for (k = 2; k <= GST_GPU_SRTP_MAX_KEYS; k++) {
      gchar key_field[16], mki_field[16];

      g_snprintf (key_field, sizeof key_field, "srtp-key%u", k);
      g_snprintf (mki_field, sizeof mki_field, "mki%u", k);
      gst_structure_remove_fields (s, key_field, mki_field, NULL);
    }
  }
  return copy;
}

gboolean
gst_gpu_srtp_random_bytes (guint8 * out, gsize len)
{
  gsize got = 0;

  while (got < len) {
    ssize_t r = getrandom (out + got, len - got, 0);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return FALSE;
    }
    got += (gsize) r;
  }
  return TRUE;
}

/* One master key (and its MKI, when mki_field is set) into slot i. */
static gboolean
key_info_take (const GstStructure * s, const gchar * key_field,
    const gchar * mki_field, GstGpuSrtpKeyInfo * info, guint i,
    const gchar ** why)
{
  const GValue *kv = gst_structure_get_value (s, key_field);
  GstBuffer *key = kv && GST_VALUE_HOLDS_BUFFER (kv) ?
      gst_value_get_buffer (kv) : NULL;
  gsize klen = key ? gst_buffer_get_size (key) : 0;

  if (!key) {
    *why = "no srtp-key";
    return FALSE;
  }
  if (klen != info->key_len) {
    *why = "srtp-key has the wrong length for srtp-cipher";
    return FALSE;
  }
  gst_buffer_extract (key, 0, info->key[i], klen);
  if (mki_field) {
    const GValue *mv = gst_structure_get_value (s, mki_field);
    GstBuffer *mki = mv && GST_VALUE_HOLDS_BUFFER (mv) ?
        gst_value_get_buffer (mv) : NULL;
    gsize mlen = mki ? gst_buffer_get_size (mki) : 0;

    if (i == 0)
      info->mki_len = mlen;
    if (mlen == 0 || mlen > GSRTP_MAX_MKI) {
      *why = "mki is empty or longer than 128 bytes";
      return FALSE;
    }
    if (mlen != info->mki_len) {
      *why = "the MKIs do not all have the same length";
      return FALSE;
    }
    gst_buffer_extract (mki, 0, info->mki[i], mlen);
  }
  return TRUE;
}

gboolean
gst_gpu_srtp_key_info_from_structure (const GstStructure * s,
    GstGpuSrtpKeyInfo * info, const gchar ** why)
{
  GstGpuSrtpCipherType rtp_c, rtcp_c;
  GstGpuSrtpAuthType rtp_a, rtcp_a;
  gboolean with_mki;
  guint i;

  memset (info, 0, sizeof *info);
  *why = NULL;
  if (!gst_gpu_srtp_cipher_from_nick (gst_structure_get_string (s,
              "srtp-cipher"), &rtp_c)
      || !gst_gpu_srtp_auth_from_nick (gst_structure_get_string (s,
              "srtp-auth"), &rtp_a)
      || !gst_gpu_srtp_cipher_from_nick (gst_structure_get_string (s,
              "srtcp-cipher"), &rtcp_c)
      || !gst_gpu_srtp_auth_from_nick (gst_structure_get_string (s,
              "srtcp-auth"), &rtcp_a)) {
    *why = "missing or unknown srtp-cipher / srtp-auth / srtcp-cipher / "
        "srtcp-auth";
    return FALSE;
  }
  info->key_len = gst_gpu_srtp_key_length (rtp_c);
  with_mki = gst_structure_has_field (s, "mki");
  if (!key_info_take (s, "srtp-key", with_mki ? "mki" : NULL, info, 0, why))
    goto fail;
  info->n_keys = 1;
  /* as srtpdec: srtp-key2 + mki2, srtp-key3 + mki3 ... while both are there */
  for (i = 1; with_mki && i < GST_GPU_SRTP_MAX_KEYS; i++) {
    gchar key_field[16], mki_field[16];

    g_snprintf (key_field, sizeof key_field, "srtp-key%u", i + 1);
    g_snprintf (mki_field, sizeof mki_field, "mki%u", i + 1);
    if (!gst_structure_has_field (s, key_field) ||
        !gst_structure_has_field (s, mki_field))
      break;
    if (!key_info_take (s, key_field, mki_field, info, i, why))
      goto fail;
    info->n_keys++;
  }
  info->rtp = gst_gpu_srtp_policy (rtp_c, rtp_a);
  info->rtcp = gst_gpu_srtp_policy (rtcp_c, rtcp_a);
  info->have_roc = gst_structure_get_uint (s, "roc", &info->roc);
  return TRUE;

fail:
  gst_gpu_srtp_key_info_clear (info);
  return FALSE;
}

void
gst_gpu_srtp_key_info_clear (GstGpuSrtpKeyInfo * info)
{
  /* volatile so the compiler keeps the wipe */
  volatile guint8 *p = (volatile guint8 *) info->key;
  gsize i;

  for (i = 0; i < sizeof info->key; i++)
    p[i] = 0;
  info->key_len = 0;
  info->n_keys = 0;
}

void
gst_gpu_srtp_stats_add_stream (GValue * streams, guint32 ssrc, guint32 roc,
    const gchar * firstfield, ...)
{
  GValue v = G_VALUE_INIT;
  GstStructure *s = gst_structure_new ("application/x-srtp-stream",
      "ssrc", G_TYPE_UINT, ssrc, "roc", G_TYPE_UINT, roc, NULL);

  if (firstfield) {
    va_list args;

    va_start (args, firstfield);
    gst_structure_set_valist (s, firstfield, args);
    va_end (args);
  }
  g_value_init (&v, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&v, s);
  gst_value_array_append_and_take_value (streams, &v);
}

/* ---- "srtp-protect": the scheduler processor (gpsprocessor.h) -----------
 * Every packet of a batch protected with one policy and one master key, one
 * SRTP context per SSRC (the first packet of an SSRC creates it, ROC 0). A
 * packet whose second byte is 192..223 is RTCP (the RFC 5761 rule) and is
 * protected as SRTCP with the same policy; everything else must be RTP.
 * Each packet is copied once, into a buffer with room for the tag (and the
 * SRTCP trailer), and the whole batch is started as one protect batch: one
 * launch on the lane's CUDA stream on the GPU, else protected at submit by
 * the CPU batch code. Packets it cannot protect (not RTP, bad header, index
 * exhausted) become NULL items, counted (srtp-drops) and reported by a
 * warning at most once a second.
 *
 * Configuration, the fields of SRTP caps:
 *   srtp-key     GstBuffer: master key || salt, of the cipher's length
 *                (required)
 *   srtp-cipher  a cipher nick (aes-128-icm, ...) or GstGpuSrtpCipherType;
 *                default aes-128-icm
 *   srtp-auth    an auth nick (hmac-sha1-80, ...) or GstGpuSrtpAuthType;
 *                default hmac-sha1-80
 *   impl         "auto" (default) or "scalar": the CPU code of a batch the
 *                GPU does not run; "scalar" is the per-packet reference, for
 *                measurements that must not depend on the CPU's extensions
 * Stats: srtp-streams (contexts made), srtp-drops, srtp-gpu-batches,
 * srtp-collected (packets their collectors copied into a GPU batch's area),
 * srtp-area-full (packets protected on the CPU by their collector, their
 * batch's area being full). */

#define SRTP_PROTECT_MAX_KEY 64

struct _SrtpAreaPool;
static void area_pool_close (struct _SrtpAreaPool *pool);

typedef struct
{
  GstElement *owner;            /* no reference */
  GstGpuSrtpCipherType cipher;
  GstGpuSrtpAuthType auth;
  GsSrtpPolicy policy;          /* RTP and RTCP */
  guint8 key[SRTP_PROTECT_MAX_KEY];
  gsize key_len;
  GsSrtpImpl impl;
  /* lock: the contexts, their keys and last_warn, for the collectors of
   * every stream (which prepare each packet as it arrives: its SRTP index
   * moves there) and the worker */
  GMutex lock;
  GHashTable *ctx;              /* SSRC -> SrtpProtectCtx */
  GArray *keys;                 /* GsSrtpKeys: context i's RTP keys at 2i,
                                 * its RTCP keys at 2i + 1 */
  gint streams;                 /* atomic: contexts made */
  guint64 drops;                /* atomic */
  guint64 gpu_batches;          /* atomic */
  guint64 collected;            /* atomic: copied into a batch area */
  guint64 area_full;            /* atomic: protected at collect, no room */
  gint64 last_warn;
  gsize rtp_oh, rtcp_oh;
  struct _SrtpAreaPool *pool;   /* the batch areas (GPU only) */
  guint max_len;                /* atomic: the longest packet collected */
} SrtpProtect;

typedef struct
{
  GsSrtpCtx c;                  /* first: a GsSrtpCtx * of the table is one */
  guint32 keys;                 /* c's RTP keys in SrtpProtect.keys */
} SrtpProtectCtx;

static void
srtp_protect_ctx_free (gpointer data)
{
  gsrtp_ctx_clear (data);       /* wipes the session keys */
  g_free (data);
}

static void
wipe (gpointer p, gsize n)
{
  /* volatile so the compiler keeps the wipe */
  volatile guint8 *v = p;
  gsize i;

  for (i = 0; i < n; i++)
    v[i] = 0;
}

/* field of config as a value of enum_type: a nick, an enum or an integer */
static gboolean
srtp_config_enum (const GstStructure * config, const gchar * field,
    GType enum_type, gint * out, GError ** error)
{
  const GValue *v = config ? gst_structure_get_value (config, field) : NULL;
  GEnumValue *ev = NULL;

  if (!v)
    return TRUE;
  if (G_VALUE_HOLDS_STRING (v) && g_value_get_string (v)) {
    GEnumClass *klass = g_type_class_ref (enum_type);

    ev = g_enum_get_value_by_nick (klass, g_value_get_string (v));
    if (ev)
      *out = ev->value;
    g_type_class_unref (klass);
    if (ev)
      return TRUE;
  } else if (G_VALUE_HOLDS_ENUM (v)) {
    *out = g_value_get_enum (v);
    return TRUE;
  } else if (G_VALUE_HOLDS_INT (v)) {
    *out = g_value_get_int (v);
    return TRUE;
  }
  g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
      GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
      "srtp-protect: %s is not a known value", field);
  return FALSE;
}

static void srtp_protect_teardown (gpointer data);

static gpointer
srtp_protect_setup (const GstStructure * config, GstElement * owner,
    GError ** error)
{
  SrtpProtect *sp = g_new0 (SrtpProtect, 1);
  gint cipher = GST_GPU_SRTP_CIPHER_AES_128_ICM;
  gint auth = GST_GPU_SRTP_AUTH_HMAC_SHA1_80;
  const GValue *key = config ? gst_structure_get_value (config, "srtp-key") :
      NULL;
  const gchar *impl = config ? gst_structure_get_string (config, "impl") :
      NULL;
  gsize want, have;

  sp->owner = owner;
  if (!srtp_config_enum (config, "srtp-cipher",
          GST_TYPE_GPU_SRTP_CIPHER_TYPE, &cipher, error) ||
      !srtp_config_enum (config, "srtp-auth", GST_TYPE_GPU_SRTP_AUTH_TYPE,
          &auth, error))
    goto refused;
  if (cipher < GST_GPU_SRTP_CIPHER_NULL ||
      cipher > GST_GPU_SRTP_CIPHER_AES_256_GCM || auth < GST_GPU_SRTP_AUTH_NULL
      || auth > GST_GPU_SRTP_AUTH_HMAC_SHA1_80) {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "srtp-protect: srtp-cipher %d / srtp-auth %d out of range", cipher,
        auth);
    goto refused;
  }
  sp->cipher = cipher;
  sp->auth = auth;
  sp->policy = gst_gpu_srtp_policy (sp->cipher, sp->auth);
  want = gst_gpu_srtp_key_length (sp->cipher);
  if (!key || !GST_VALUE_HOLDS_BUFFER (key) || !gst_value_get_buffer (key)) {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "processor=srtp-protect needs \"srtp-key\" (a buffer: the master "
        "key || salt, %" G_GSIZE_FORMAT " bytes for srtp-cipher=%s)", want,
        gst_gpu_srtp_cipher_nick (sp->cipher));
    goto refused;
  }
  have = gst_buffer_get_size (gst_value_get_buffer (key));
  if (have != want) {           /* the sizes only, never the bytes */
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "srtp-key is %" G_GSIZE_FORMAT " bytes, srtp-cipher=%s needs %"
        G_GSIZE_FORMAT " (master key || salt)", have,
        gst_gpu_srtp_cipher_nick (sp->cipher), want);
    goto refused;
  }
  gst_buffer_extract (gst_value_get_buffer (key), 0, sp->key, have);
  sp->key_len = have;
  if (!impl || g_str_equal (impl, "auto")) {
    sp->impl = GSRTP_IMPL_AUTO;
  } else if (g_str_equal (impl, "scalar")) {
    /* kept as the reference the tests and bench_rtgpu compare against */
    gps_debug_init ();
    GST_WARNING_OBJECT (owner, "srtp-protect: impl=scalar protects with "
        "the table AES reference, which is not constant time: for tests and "
        "benchmarks only");
    sp->impl = GSRTP_IMPL_SCALAR;
  } else {
    g_set_error (error, GST_GPUSTREAM_PROCESSOR_ERROR,
        GST_GPUSTREAM_PROCESSOR_ERROR_CONFIG,
        "srtp-protect: impl \"%s\" is neither auto nor scalar", impl);
    goto refused;
  }
  sp->ctx = g_hash_table_new_full (NULL, NULL, NULL, srtp_protect_ctx_free);
  sp->keys = g_array_new (FALSE, FALSE, sizeof (GsSrtpKeys));
  sp->rtp_oh = gsrtp_rtp_overhead (sp->policy);
  sp->rtcp_oh = gsrtp_rtcp_overhead (sp->policy);
  g_mutex_init (&sp->lock);
  return sp;

refused:
  srtp_protect_teardown (sp);
  return NULL;
}

static void
srtp_protect_teardown (gpointer data)
{
  SrtpProtect *sp = data;

  g_clear_pointer (&sp->ctx, g_hash_table_destroy);
  if (sp->keys) {
    /* the session keys: no copy left behind */
    wipe (sp->keys->data, sp->keys->len * sizeof (GsSrtpKeys));
    g_array_unref (sp->keys);
    g_mutex_clear (&sp->lock);
  }
  wipe (sp->key, sizeof sp->key);
  area_pool_close (sp->pool);
  g_free (sp);
}

/* sp->lock held */
static SrtpProtectCtx *
srtp_protect_ctx (SrtpProtect * sp, guint32 ssrc)
{
  SrtpProtectCtx *pc = g_hash_table_lookup (sp->ctx, GUINT_TO_POINTER (ssrc));
  GsSrtpResult r;

  if (pc)
    return pc;
  pc = g_new0 (SrtpProtectCtx, 1);
  r = gsrtp_ctx_init (&pc->c, sp->policy, sp->policy, sp->key, sp->key_len,
      0);
  if (r != GSRTP_OK) {
    GST_WARNING_OBJECT (sp->owner, "SRTP context for SSRC 0x%08x: %s", ssrc,
        gsrtp_result_name (r));
    g_free (pc);
    return NULL;
  }
  GST_DEBUG_OBJECT (sp->owner, "new SRTP context for SSRC 0x%08x", ssrc);
  pc->keys = sp->keys->len;
  g_array_append_val (sp->keys, pc->c.rtp_keys);
  g_array_append_val (sp->keys, pc->c.rtcp_keys);
  g_hash_table_insert (sp->ctx, GUINT_TO_POINTER (ssrc), pc);
  g_atomic_int_inc (&sp->streams);
  return pc;
}

/* What srtp-protect makes of a packet's first bytes: FALSE when it is
 * neither RTP nor RTCP. */
static gboolean
srtp_protect_classify (const guint8 * hdr, gsize got, gboolean * is_rtcp,
    guint32 * ssrc)
{
  /* RFC 5761: RTCP packet types 192..223 in the second byte */
  *is_rtcp = got >= 2 && hdr[1] >= 192 && hdr[1] <= 223;
  if (got < (*is_rtcp ? 8u : 12u) || (hdr[0] >> 6) != 2)
    return FALSE;
  *ssrc = GST_READ_UINT32_BE (hdr + (*is_rtcp ? 4 : 8));
  return TRUE;
}

/* The packet is not forwarded: its data becomes NULL (the item itself
 * stays: a processor may not remove items). */
static void
srtp_protect_drop (SrtpProtect * sp, GstGpuStreamSchedItem * it,
    const gchar * why)
{
  gboolean warn;

  gst_buffer_unref (it->data);
  it->data = NULL;
  __atomic_fetch_add (&sp->drops, 1, __ATOMIC_RELAXED);
  g_mutex_lock (&sp->lock);
  warn = sp->owner && gst_gpustream_warn_ok (&sp->last_warn);
  g_mutex_unlock (&sp->lock);
  if (warn) {
    GST_ELEMENT_WARNING (sp->owner, STREAM, ENCODE,
        ("srtp-protect dropped a packet: %s", why),
        ("%" G_GUINT64_FORMAT " dropped so far (stats: srtp-drops); at most "
            "one warning a second", __atomic_load_n (&sp->drops,
                __ATOMIC_RELAXED)));
  }
}

/* a batch between its two halves */
typedef struct
{
  GstGpuStreamSchedItem *items;
  GsSrtpPacket *pkts;
  GstMapInfo *maps;
  GstBuffer **outs;
  guint *idx;                   /* pkts[i] is items[idx[i]] */
  guint k;
  GstGpuStreamSrtpBatch *batch;
  /* the batch's area (submit_area): its packets protected in place */
  struct _SrtpArea *area;
  guint area_n;                 /* descriptors in it */
#if GS_HAVE_CUDA
  GstCudaContext *actx;
  SrtpStaging *st;              /* locked from submit to finish */
  const gchar *step;            /* the CUDA step that failed, if one did */
  CUresult res;
#endif
} SrtpProtectBatch;

static gpointer
srtp_protect_submit (gpointer proc_data, GstObject * cuda_context,
    guint lane, GstGpuStreamSchedItem * items, guint n)
{
  SrtpProtect *sp = proc_data;
  SrtpProtectBatch *b = g_new0 (SrtpProtectBatch, 1);
  guint i, k = 0;

  b->items = items;
  b->pkts = g_new (GsSrtpPacket, MAX (n, 1));
  b->maps = g_new (GstMapInfo, MAX (n, 1));
  b->outs = g_new (GstBuffer *, MAX (n, 1));
  b->idx = g_new (guint, MAX (n, 1));
  for (i = 0; i < n; i++) {
    GstBuffer *in = items[i].data;
    guint8 hdr[12];
    gsize len, got, oh;
    gboolean is_rtcp;
    guint32 ssrc;
    SrtpProtectCtx *ctx;

    /* (collected: protected already, in the batch's area or at collect) */
    if (!(items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) || !in ||
        (items[i].flags & GST_GPUSTREAM_SCHED_ITEM_PROCESSOR))
      continue;
    /* late or flushed: dropped after the batch, not worth protecting */
    if (items[i].stream && gst_gpustream_sched_item_is_flushed (&items[i]))
      continue;
    len = gst_buffer_get_size (in);
    got = gst_buffer_extract (in, 0, hdr, sizeof hdr);
    if (!srtp_protect_classify (hdr, got, &is_rtcp, &ssrc)) {
      srtp_protect_drop (sp, &items[i], "not an RTP or RTCP packet");
      continue;
    }
    g_mutex_lock (&sp->lock);
    ctx = srtp_protect_ctx (sp, ssrc);
    g_mutex_unlock (&sp->lock);
    if (!ctx) {
      srtp_protect_drop (sp, &items[i], "no SRTP context");
      continue;
    }
    oh = is_rtcp ? sp->rtcp_oh : sp->rtp_oh;
    b->outs[k] = gst_buffer_new_allocate (NULL, len + oh, NULL);
    gst_buffer_copy_into (b->outs[k], in, GST_BUFFER_COPY_METADATA, 0, -1);
    gst_buffer_map (b->outs[k], &b->maps[k], GST_MAP_READWRITE);
    gst_buffer_extract (in, 0, b->maps[k].data, len);
    b->pkts[k].ctx = &ctx->c;
    b->pkts[k].data = b->maps[k].data;
    b->pkts[k].len = (uint32_t) len;
    b->pkts[k].cap = (uint32_t) (len + oh);
    b->pkts[k].is_rtcp = is_rtcp;
    b->pkts[k].result = GSRTP_OK;
    b->idx[k++] = i;
  }
  b->k = k;
  /* the batch API on the GPU (or AUTO on the CPU), else the CPU code asked
   * for: the same bytes either way */
  g_mutex_lock (&sp->lock);     /* the indices move */
  if (cuda_context || sp->impl == GSRTP_IMPL_AUTO)
    b->batch = gst_gpustream_srtp_protect_submit (b->pkts, k,
        cuda_context ? GST_GPUSTREAM_BACKEND_GPU : GST_GPUSTREAM_BACKEND_CPU,
        cuda_context, lane);
  else if (k > 0)
    gsrtp_protect_batch (b->pkts, k, sp->impl);
  g_mutex_unlock (&sp->lock);
  return b;
}

/* ---- srtp-protect's batch areas (Zhang et al., section 5) ----------------
 * On the GPU each batch the collectors fill has an area: host memory
 * (pinned when the driver gives it) laid out as the kernel reads it,
 * [keys][descs: cap][out: cap lengths][packets, each at a 16-byte aligned
 * offset], and as much again for the protected packets. The collector of
 * each packet prepares it (its SRTP index moves there, in arrival order)
 * and copies it in as it arrives; its output buffer wraps its place in the
 * second half. The worker copies the area to the lane's device memory,
 * launches once and copies the protected packets back into the second
 * half, and the forwarder pushes them from there: per packet, the worker
 * does nothing. The packets as they came stay in the first half, so that
 * a batch whose copy back failed half-way is protected again from them on
 * the CPU. An area goes back to the pool when its batch and the last
 * buffer in it are done. A packet that finds its area full (a burst beyond
 * what the batch was sized for) is protected on the CPU by its collector
 * at once, so that indices still move in arrival order. */

/* the room a packet's place starts with before a longer one was seen: an
 * Ethernet MTU */
#define AREA_MIN_ROOM 1500
#define AREA_MAX_BYTES ((gsize) 256 << 20)
/* released areas kept for reuse, per instance */
#define AREA_POOL_KEEP 32

typedef struct _SrtpAreaPool SrtpAreaPool;

typedef struct _SrtpArea
{
  gint refcount;                /* the batch's, and one per output buffer */
  SrtpAreaPool *pool;           /* a reference */
  guint8 *host;
  gboolean pinned;
  guint k_cap, d_cap;            /* room for keys, for descriptors */
  /* [keys][descs][out][the packets as they came][the packets protected:
   * what the output buffers wrap, at the same offsets], data_cap bytes
   * each */
  gsize descs_off, out_off, data_off, res_off, data_cap;
  /* under the instance's lock while collectors fill it; the worker's after
   * the swap */
  guint n;
  gsize used;
  gboolean full;
  gint left;                    /* atomic: packets collect left as they came */
} SrtpArea;

struct _SrtpAreaPool
{
  gint refcount;                /* the instance's, and one per area */
#if GS_HAVE_CUDA
  GstCudaContext *ctx;
#endif
  GMutex lock;
  GSList *free;                 /* released areas */
  guint n_free;
  gboolean closed;              /* the instance is gone: free, not keep */
};

static void
area_pool_unref (SrtpAreaPool * pool)
{
  if (!g_atomic_int_dec_and_test (&pool->refcount))
    return;
#if GS_HAVE_CUDA
  gst_object_unref (pool->ctx);
#endif
  g_mutex_clear (&pool->lock);
  g_free (pool);
}

static void
area_free_memory (SrtpArea * a)
{
#if GS_HAVE_CUDA
  if (a->pinned) {
    if (gst_cuda_context_push (a->pool->ctx)) {
      CuMemFreeHost (a->host);
      gst_cuda_context_pop (NULL);
    }
  } else
#endif
    g_free (a->host);
  area_pool_unref (a->pool);
  g_free (a);
}

static void
area_release (gpointer data)
{
  SrtpArea *a = data;
  SrtpAreaPool *pool = a->pool;

  if (!g_atomic_int_dec_and_test (&a->refcount))
    return;
  /* the session keys the batch was launched with: no copy left behind */
  wipe (a->host, a->descs_off);
  g_mutex_lock (&pool->lock);
  if (!pool->closed && pool->n_free < AREA_POOL_KEEP) {
    pool->free = g_slist_prepend (pool->free, a);
    pool->n_free++;
    a = NULL;
  }
  g_mutex_unlock (&pool->lock);
  if (a)
    area_free_memory (a);
}

/* the instance goes: areas still in output buffers are freed when those are */
static void
area_pool_close (SrtpAreaPool * pool)
{
  GSList *free;

  if (!pool)
    return;
  g_mutex_lock (&pool->lock);
  pool->closed = TRUE;
  free = g_steal_pointer (&pool->free);
  pool->n_free = 0;
  g_mutex_unlock (&pool->lock);
  g_slist_free_full (free, (GDestroyNotify) area_free_memory);
  area_pool_unref (pool);
}

static gpointer
srtp_protect_area_new (gpointer proc_data, GstObject * cuda_context, guint cap)
{
#if GS_HAVE_CUDA
  SrtpProtect *sp = proc_data;
  SrtpAreaPool *pool;
  SrtpArea *a = NULL;
  GSList *l, *small = NULL;
  gsize room, data_cap;

  if (!cuda_context || cap == 0)
    return NULL;                /* the CPU: the worker's batches as ever */
  if (!sp->pool) {
    /* the worker (or the start) only: one thread at a time */
    sp->pool = g_new0 (SrtpAreaPool, 1);
    sp->pool->refcount = 1;
    sp->pool->ctx = gst_object_ref (GST_CUDA_CONTEXT (cuda_context));
    g_mutex_init (&sp->pool->lock);
  }
  pool = sp->pool;
  room = ALIGN16 (MAX (AREA_MIN_ROOM, g_atomic_int_get (&sp->max_len)) +
      MAX (sp->rtp_oh, sp->rtcp_oh));
  data_cap = MIN ((gsize) cap * room, AREA_MAX_BYTES);

  g_mutex_lock (&pool->lock);
  for (l = pool->free; l && !a; l = l->next) {
    SrtpArea *f = l->data;

    if (f->d_cap >= cap && f->data_cap >= data_cap)
      a = f;
  }
  if (a) {
    pool->free = g_slist_remove (pool->free, a);
    pool->n_free--;
  } else if (pool->free) {
    /* none large enough: the smaller ones will not be again */
    small = g_steal_pointer (&pool->free);
    pool->n_free = 0;
  }
  g_mutex_unlock (&pool->lock);
  g_slist_free_full (small, (GDestroyNotify) area_free_memory);

  if (!a) {
    gsize size;
    void *p = NULL;

    a = g_new0 (SrtpArea, 1);
    a->pool = pool;
    g_atomic_int_inc (&pool->refcount);
    a->d_cap = cap;
    /* the contexts there are, and room for a few more */
    a->k_cap = 2 * ((guint) g_atomic_int_get (&sp->streams) + 4);
    a->descs_off = ALIGN16 ((gsize) a->k_cap * sizeof (GsSrtpKeys));
    a->out_off = ALIGN16 (a->descs_off + (gsize) cap * sizeof (GsSrtpDesc));
    a->data_off = ALIGN16 (a->out_off + (gsize) cap * sizeof (guint32));
    a->data_cap = data_cap;
    a->res_off = a->data_off + data_cap;
    size = a->res_off + data_cap;
    if (gst_cuda_context_push (pool->ctx)) {
      CUresult r = CuMemAllocHost (&p, size);

      gst_cuda_context_pop (NULL);
      a->pinned = r == CUDA_SUCCESS;
      /* (another error is a broken context: the launch fails, and the
       * batch's CPU fallback is what is said) */
      if (r == CUDA_ERROR_OUT_OF_MEMORY && sp->owner) {
        gboolean warn;

        g_mutex_lock (&sp->lock);
        warn = gst_gpustream_warn_ok (&sp->last_warn);
        g_mutex_unlock (&sp->lock);
        if (warn)
          GST_ELEMENT_WARNING (sp->owner, RESOURCE, NO_SPACE_LEFT,
              ("The GPU driver gave no pinned host memory for a batch of "
                  "srtp-protect (cuMemAllocHost: %s): its copies go through "
                  "pageable memory, slower, with the same output",
                  gps_cuda_strerror (r)), (NULL));
      }
    }
    /* pageable memory works too, its copies staged by the driver */
    a->host = a->pinned ? p : g_malloc (size);
    GST_DEBUG_OBJECT (sp->owner, "new batch area: %u packets, %" G_GSIZE_FORMAT
        " bytes%s", cap, size, a->pinned ? " pinned" : "");
  }
  a->refcount = 1;
  a->n = 0;
  a->used = 0;
  a->full = FALSE;
  a->left = 0;
  return a;
#else
  return NULL;
#endif
}

static void
srtp_protect_area_free (gpointer proc_data, gpointer area)
{
  if (area)
    area_release (area);
}

/* A packet the area has no room for, protected now on the CPU (sp->lock
 * held: its index moves in arrival order); NULL and *r set if it fails. */
static GstBuffer *
protect_now (SrtpProtect * sp, SrtpProtectCtx * pc, GstBuffer * in,
    const GstMapInfo * map, gboolean is_rtcp, gsize oh, GsSrtpResult * r)
{
  GstBuffer *out = gst_buffer_new_allocate (NULL, map->size + oh, NULL);
  GstMapInfo om;
  GsSrtpPacket p;

  gst_buffer_copy_into (out, in, GST_BUFFER_COPY_METADATA, 0, -1);
  gst_buffer_map (out, &om, GST_MAP_WRITE);
  memcpy (om.data, map->data, map->size);
  p.ctx = &pc->c;
  p.data = om.data;
  p.len = (uint32_t) map->size;
  p.cap = (uint32_t) (map->size + oh);
  p.is_rtcp = is_rtcp;
  p.result = GSRTP_OK;
  gsrtp_protect_batch (&p, 1, sp->impl);
  gst_buffer_unmap (out, &om);
  *r = p.result;
  if (p.result != GSRTP_OK) {
    gst_buffer_unref (out);
    return NULL;
  }
  gst_buffer_set_size (out, p.len);
  return out;
}

/* On the collector's thread, as the packet arrives (see above). */
static void
srtp_protect_collect (gpointer proc_data, gpointer area,
    GstGpuStreamSchedItem * it)
{
  SrtpProtect *sp = proc_data;
  SrtpArea *a = area;
  GstBuffer *in = it->data, *out = NULL;
  GstMapInfo map;
  gboolean is_rtcp, in_area = FALSE;
  guint32 ssrc;
  SrtpProtectCtx *pc;
  GsSrtpDesc d;
  GsSrtpResult r = GSRTP_OK;
  gsize oh, room, off = 0;
  guint slot = 0;

  if (!a || !(it->flags & GST_GPUSTREAM_SCHED_ITEM_PACKET) || !in)
    return;
  if (!gst_buffer_map (in, &map, GST_MAP_READ)) {
    g_atomic_int_inc (&a->left);        /* to the worker's submit */
    return;
  }
  it->flags |= GST_GPUSTREAM_SCHED_ITEM_PROCESSOR;
  if (!srtp_protect_classify (map.data, map.size, &is_rtcp, &ssrc)) {
    gst_buffer_unmap (in, &map);
    srtp_protect_drop (sp, it, "not an RTP or RTCP packet");
    return;
  }
  oh = is_rtcp ? sp->rtcp_oh : sp->rtp_oh;
  room = ALIGN16 (map.size + oh);

  g_mutex_lock (&sp->lock);
  if (map.size > sp->max_len)
    g_atomic_int_set (&sp->max_len, (guint) MIN (map.size, G_MAXINT));
  pc = srtp_protect_ctx (sp, ssrc);
  if (pc && !a->full && a->n < a->d_cap && a->used + room <= a->data_cap) {
    memset (&d, 0, sizeof d);
    r = gsrtp_prepare_protect (&pc->c, map.data, map.size, map.size + oh,
        is_rtcp, &d);
    if (r == GSRTP_OK) {
      in_area = TRUE;
      __atomic_fetch_add (&sp->collected, 1, __ATOMIC_RELAXED);
      slot = a->n++;
      off = a->used;
      a->used += room;
    }
  } else if (pc) {
    a->full = TRUE;
    out = protect_now (sp, pc, in, &map, is_rtcp, oh, &r);
    if (out)
      __atomic_fetch_add (&sp->area_full, 1, __ATOMIC_RELAXED);
  }
  g_mutex_unlock (&sp->lock);

  if (in_area) {
    memcpy (a->host + a->data_off + off, map.data, map.size);
    d.offset = (guint32) off;
    d.keys = pc->keys + (is_rtcp ? 1 : 0);
    ((GsSrtpDesc *) (a->host + a->descs_off))[slot] = d;
    g_atomic_int_inc (&a->refcount);
    out = gst_buffer_new ();
    gst_buffer_append_memory (out, gst_memory_new_wrapped (0,
            a->host + a->res_off + off, room, 0, map.size + oh, a,
            area_release));
    gst_buffer_copy_into (out, in, GST_BUFFER_COPY_METADATA, 0, -1);
  }
  gst_buffer_unmap (in, &map);
  if (!out) {
    srtp_protect_drop (sp, it, pc ? gsrtp_result_name (r) : "no SRTP context");
    return;
  }
  gst_buffer_unref (in);
  it->data = out;
}

#if GS_HAVE_CUDA
/* The worker's whole share of an area, queued on the lane's stream: one
 * copy of the area's keys, descriptors and packets to the lane's device
 * memory, one launch, one copy of the protected packets back into the
 * area's second half. (The keys go in the area while there is room for
 * them: contexts made after it was, past its room, go by a copy of their
 * own.) */
static void
area_launch (SrtpProtect * sp, GstCudaContext * ctx, guint lane,
    SrtpProtectBatch * b)
{
  SrtpArea *a = b->area;
  SrtpStaging *st;
  const gchar *step = NULL;
  CUresult r = CUDA_SUCCESS;
  CUdeviceptr dk, da;
  gsize nkeys, keys_size, ka, from;
  gboolean gcm = FALSE, keys_in_area;
  GpsKernel which;
  CUfunction func = NULL;

  b->actx = ctx;
  st = b->st = staging_get (ctx, lane);
  g_mutex_lock (&st->lock);
  g_mutex_lock (&sp->lock);
  nkeys = sp->keys->len;        /* every key this batch refers to */
  g_mutex_unlock (&sp->lock);
  keys_size = nkeys * sizeof (GsSrtpKeys);
  keys_in_area = nkeys <= a->k_cap;
  ka = keys_in_area ? 0 : ALIGN16 (keys_size);
  if (!gst_cuda_context_push (ctx)) {
    b->step = "pushing the CUDA context";
    return;
  }
#define STEP(call, what) \
  if (!step && (r = (call)) != CUDA_SUCCESS) step = what
  STEP (gps_cuda_staging_ensure_sizes (st, keys_in_area ? 0 : keys_size,
          ka + a->data_off + a->used, 1), "allocating the staging buffers");
  if (!step) {
    g_mutex_lock (&sp->lock);
    memcpy (keys_in_area ? a->host : st->host, sp->keys->data, keys_size);
    gcm = g_array_index (sp->keys, GsSrtpKeys, 0).cipher == GS_SRTP_C_AES_GCM;
    g_mutex_unlock (&sp->lock);
  }
  da = st->dev + ka;
  dk = keys_in_area ? da : st->dev;
  if (!keys_in_area)
    STEP (gps_cuda_copy_linear (st->host, NULL, 0, dk, keys_size,
            st->stream[0]), "copying the keys to the device");
  /* the unused descriptor and length slots go along: a few bytes each cost
   * less than a copy's latency */
  from = keys_in_area ? 0 : a->descs_off;
  STEP (gps_cuda_copy_linear (a->host + from, NULL, 0, da + from,
          a->data_off + a->used - from, st->stream[0]),
      "copying the batch to the device");
  which = protect_kernel_for (b->area_n, gcm);
  if (!step && !gps_cuda_get_kernel (ctx, which, &func))
    step = "loading the kernel";
  STEP (srtp_launch (func, which, dk, da + a->descs_off, b->area_n,
          da + a->data_off, da + a->out_off, st->stream[0]),
      "launching the kernel");
  STEP (gps_cuda_copy_linear (NULL, a->host + a->res_off, da + a->data_off,
          0, a->used, st->stream[0]), "copying the batch back");
#undef STEP
  gst_cuda_context_pop (NULL);
  b->step = step;
  b->res = r;
}
#endif

/* Waits for the lane; if a CUDA step failed, every packet of the area
 * (prepared already: its index moved) is protected on the CPU from its
 * bytes as they came, with the keys it was prepared for. The area's
 * buffers are then final. */
static void
area_finish (SrtpProtect * sp, SrtpProtectBatch * b)
{
#if GS_HAVE_CUDA
  SrtpArea *a = b->area;
  const GsSrtpDesc *d = (const GsSrtpDesc *) (a->host + a->descs_off);
  guint i;

  if (b->st) {
    b->step = batch_wait (b->actx, b->st, b->step, &b->res);
    if (!b->step) {
      /* the lengths are the policy's (the output buffers were made with
       * them at collect): the kernel's own are not read back */
      __atomic_fetch_add (&sp->gpu_batches, 1, __ATOMIC_RELAXED);
    } else {
      warn_cpu (b->actx, SRTP_GPU_KERNEL_NAME, b->area_n, b->step, b->res);
      g_mutex_lock (&sp->lock);
      for (i = 0; i < b->area_n; i++) {
        guint8 *pkt = a->host + a->res_off + d[i].offset;

        memcpy (pkt, a->host + a->data_off + d[i].offset, d[i].len);
        gsrtp_protect_desc (&g_array_index (sp->keys, GsSrtpKeys, d[i].keys),
            pkt, &d[i]);
      }
      g_mutex_unlock (&sp->lock);
    }
    g_mutex_unlock (&b->st->lock);
  }
#endif
  area_release (g_steal_pointer (&b->area));
}

static gpointer
srtp_protect_submit_area (gpointer proc_data, GstObject * cuda_context,
    guint lane, gpointer area, GstGpuStreamSchedItem * items, guint n)
{
  SrtpProtect *sp = proc_data;
  SrtpArea *a = area;
  SrtpProtectBatch *b;

  /* without an area (the CPU) every item goes the copying way; with one,
   * only what collect left (a buffer it could not map), on the CPU */
  if (!a)
    return srtp_protect_submit (sp, cuda_context, lane, items, n);
  b = g_atomic_int_get (&a->left) > 0 ?
      srtp_protect_submit (sp, NULL, lane, items, n) :
      g_new0 (SrtpProtectBatch, 1);
  b->area = a;
  b->area_n = a->n;
#if GS_HAVE_CUDA
  if (b->area_n > 0)
    area_launch (sp, GST_CUDA_CONTEXT (cuda_context), lane, b);
#endif
  return b;
}

/* The protected packets replace the originals; failed ones are dropped. */
static void
srtp_protect_finish (gpointer proc_data, gpointer submitted)
{
  SrtpProtect *sp = proc_data;
  SrtpProtectBatch *b = submitted;
  gboolean used_gpu = FALSE;
  guint i;

  if (b->area)
    area_finish (sp, b);
  if (b->batch)
    gst_gpustream_srtp_protect_finish (b->batch, &used_gpu);
  if (used_gpu)
    __atomic_fetch_add (&sp->gpu_batches, 1, __ATOMIC_RELAXED);
  for (i = 0; i < b->k; i++) {
    GstGpuStreamSchedItem *it = &b->items[b->idx[i]];

    gst_buffer_unmap (b->outs[i], &b->maps[i]);
    if (b->pkts[i].result != GSRTP_OK) {
      gst_buffer_unref (b->outs[i]);
      srtp_protect_drop (sp, it, gsrtp_result_name (b->pkts[i].result));
      continue;
    }
    gst_buffer_set_size (b->outs[i], b->pkts[i].len);
    gst_buffer_unref (it->data);
    it->data = b->outs[i];
  }
  g_free (b->pkts);
  g_free (b->maps);
  g_free (b->outs);
  g_free (b->idx);
  g_free (b);
}

static void
srtp_protect_get_stats (gpointer proc_data, GstStructure * stats)
{
  SrtpProtect *sp = proc_data;

  gst_structure_set (stats,
      "srtp-streams", G_TYPE_UINT, (guint) g_atomic_int_get (&sp->streams),
      "srtp-drops", G_TYPE_UINT64,
      __atomic_load_n (&sp->drops, __ATOMIC_RELAXED),
      "srtp-gpu-batches", G_TYPE_UINT64,
      __atomic_load_n (&sp->gpu_batches, __ATOMIC_RELAXED),
      "srtp-collected", G_TYPE_UINT64,
      __atomic_load_n (&sp->collected, __ATOMIC_RELAXED),
      "srtp-area-full", G_TYPE_UINT64,
      __atomic_load_n (&sp->area_full, __ATOMIC_RELAXED), NULL);
}

/* application/x-srtp (x-srtcp for RTCP caps) with the fields srtpdec keys
 * from, as gpusrtpenc makes them */
static GstCaps *
srtp_protect_transform_caps (gpointer proc_data, const GstCaps * sink_caps)
{
  SrtpProtect *sp = proc_data;
  GstBuffer *key = gst_buffer_new_memdup (sp->key, sp->key_len);
  gboolean is_rtcp = gst_caps_get_size (sink_caps) > 0 &&
      gst_structure_has_name (gst_caps_get_structure (sink_caps, 0),
      "application/x-rtcp");
  GstCaps *caps = gst_gpu_srtp_make_src_caps (sink_caps, is_rtcp, key, NULL,
      sp->cipher, sp->auth, sp->cipher, sp->auth);

  gst_buffer_unref (key);
  return caps;
}

static const GstGpuStreamProcessorInfo srtp_protect_info = {
  "srtp-protect",
  "SRTP / SRTCP protect (RFC 3711, 6188, 7714), one context per SSRC",
  {"srtp-protect", NULL, NULL, srtp_protect_submit, srtp_protect_finish,
      srtp_protect_area_new, srtp_protect_area_free, srtp_protect_collect,
      srtp_protect_submit_area},
  srtp_protect_setup, srtp_protect_teardown, srtp_protect_get_stats,
  srtp_protect_transform_caps
};

const GstGpuStreamProcessorInfo *
gps_srtp_protect_processor_info (void)
{
  return &srtp_protect_info;
}
