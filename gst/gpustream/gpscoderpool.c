/* gpscoderpool.c: the coder pool of Jin Zhao, Xinya Zhang, Xin Wang, "An
 * Architecture Design of GPU-Accelerated VoD Streaming Servers with Network
 * Coding" (2010), Fig. 3 and 4.
 *
 * One process-wide FCFS queue of GF(2^8) products. Workers self-schedule
 * from it: a fixed set of CPU coder threads, and one GPU coder thread per
 * GstCudaContext that takes every job it may run in one batch and runs the
 * batch in a single kernel launch. Submitters never run coding themselves,
 * so the number of threads depends on the machine, not on the number of
 * elements. A job is taken by the first idle worker allowed to run it:
 * CPU jobs by CPU coders, GPU jobs by the GPU coder of their context,
 * HYBRID jobs by either. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gpsprivate.h"
#include "rlnc/rlnc.h"
#include <string.h>

#if GS_HAVE_CUDA
#include "rlnc/rlnc_cuda.h"
#endif

GstDebugCategory *gps_coder_debug;
#define GST_CAT_DEFAULT gps_coder_debug

/* GPU batch limits: enough to amortise a launch, small enough that the
 * first job of a batch does not wait long for the last. */
#define GPU_BATCH_MAX_JOBS 64
#define GPU_BATCH_MAX_BYTES (64 * 1024 * 1024)
/* A GPU coder without work for this long exits and drops its context. */
#define GPU_IDLE_EXIT_US (10 * G_TIME_SPAN_SECOND)
/* Completion is signalled through a few shared slots instead of a mutex and
 * a condition per job: the waiter frees the job right after it wakes, and no
 * synchronisation object may live in memory that is about to be freed. */
#define N_DONE_SLOTS 64

struct _GstGpuStreamCoderJob {
  GList link;                   /* in pool.queue; data points to the job */
  GstGpuStreamGfProduct p;
  GstGpuStreamBackend where;    /* CPU, GPU or HYBRID */
  GstObject *ctx;               /* ref, for GPU and HYBRID */
  gint done;                    /* atomic; set under the job's done slot */
  gboolean ok;
};

typedef struct {
  GMutex lock;
  GCond cond;
} DoneSlot;

#if GS_HAVE_CUDA
typedef struct {
  GstCudaContext *ctx;          /* ref */
  GThread *thread;
  GCond cond;                   /* jobs for this coder queued; pool.lock */
  /* owned by the coder thread, used with ctx pushed */
  CUstream stream;
  guint8 *host;                 /* pinned staging, host_size bytes */
  gsize host_size;
  CUdeviceptr dev;              /* device_size bytes */
  gsize dev_size;
  guint failures;
} GpuCoder;
#endif

static struct {
  GMutex lock;                  /* queue, cpu_started, gpu_coders */
  GQueue queue;                 /* of GstGpuStreamCoderJob, FCFS */
  GCond cpu_cond;               /* CPU-runnable jobs queued */
  gboolean cpu_started;
  guint cpu_wanted;
  GHashTable *gpu_coders;       /* GstCudaContext* -> GpuCoder* */
  DoneSlot done[N_DONE_SLOTS];
  /* stats, atomic */
  gint cpu_threads;
  gint gpu_workers;
  guint64 jobs_cpu;
  guint64 jobs_gpu;
  guint64 gpu_batches;
} pool;

static inline void
stat_add (guint64 * counter, guint64 v)
{
  __atomic_fetch_add (counter, v, __ATOMIC_RELAXED);
}

static inline guint64
stat_get (guint64 * counter)
{
  return __atomic_load_n (counter, __ATOMIC_RELAXED);
}

guint
gst_gpustream_coder_cpu_threads (void)
{
  static gsize n = 0;

  if (g_once_init_enter (&n)) {
    const gchar *env = g_getenv ("GST_GPUSTREAM_CPU_CODERS");
    guint64 v = 0;
    gsize val;

    gps_debug_init ();
    if (env && *env) {
      gchar *end = NULL;
      v = g_ascii_strtoull (env, &end, 10);
      if (!end || *end != '\0' || v < 1 || v > 1024) {
        GST_WARNING ("ignoring GST_GPUSTREAM_CPU_CODERS=%s: want 1..1024",
            env);
        v = 0;
      }
    }
    val = v ? (gsize) v : (gsize) MAX (g_get_num_processors (), 1);
    g_once_init_leave (&n, val);
  }
  return (guint) n;
}

void
gst_gpustream_coder_get_stats (GstGpuStreamCoderStats * stats)
{
  g_return_if_fail (stats != NULL);

  stats->cpu_threads = (guint) g_atomic_int_get (&pool.cpu_threads);
  stats->gpu_workers = (guint) g_atomic_int_get (&pool.gpu_workers);
  stats->jobs_cpu = stat_get (&pool.jobs_cpu);
  stats->jobs_gpu = stat_get (&pool.jobs_gpu);
  stats->gpu_batches = stat_get (&pool.gpu_batches);
}

/* ---- jobs ------------------------------------------------------------- */

static DoneSlot *
done_slot (GstGpuStreamCoderJob * job)
{
  return &pool.done[(((guintptr) job) >> 6) % N_DONE_SLOTS];
}

/* The worker's last access to job: the waiter may free it right after. */
static void
job_complete (GstGpuStreamCoderJob * job, gboolean ok)
{
  DoneSlot *slot = done_slot (job);

  g_mutex_lock (&slot->lock);
  job->ok = ok;
  g_atomic_int_set (&job->done, 1);
  g_cond_broadcast (&slot->cond);
  g_mutex_unlock (&slot->lock);
}

static void
job_run_cpu (GstGpuStreamCoderJob * job)
{
  const GstGpuStreamGfProduct *p = &job->p;

  if (p->k == 0 || p->n <= 0)
    return;
  if (p->m <= 0) {
    /* an empty sum: zero blocks */
    gint j;
    for (j = 0; j < p->n; j++)
      memset (p->out[j], 0, p->k);
    return;
  }
  rlnc_encode (p->k, p->m, p->n, p->coefs, p->src, p->out);
}

gboolean
gst_gpustream_coder_job_wait (GstGpuStreamCoderJob * job)
{
  DoneSlot *slot;
  gboolean ok;

  g_return_val_if_fail (job != NULL, FALSE);

  slot = done_slot (job);
  g_mutex_lock (&slot->lock);
  while (!g_atomic_int_get (&job->done))
    g_cond_wait (&slot->cond, &slot->lock);
  g_mutex_unlock (&slot->lock);

  ok = job->ok;
  if (job->ctx)
    gst_object_unref (job->ctx);
  g_free (job);
  return ok;
}

gboolean
gst_gpustream_coder_job_is_done (GstGpuStreamCoderJob * job)
{
  g_return_val_if_fail (job != NULL, FALSE);
  return g_atomic_int_get (&job->done) != 0;
}

/* First job in FIFO order that a worker may run; pool.lock held. ctx NULL:
 * a CPU coder, else the GPU coder of ctx. */
static GstGpuStreamCoderJob *
queue_find (GList * from, GstObject * ctx)
{
  GList *l;

  for (l = from; l; l = l->next) {
    GstGpuStreamCoderJob *job = l->data;

    if (!ctx) {
      if (job->where != GST_GPUSTREAM_BACKEND_GPU)
        return job;
    } else if (job->ctx == ctx && job->where != GST_GPUSTREAM_BACKEND_CPU) {
      return job;
    }
  }
  return NULL;
}

/* ---- CPU coders ------------------------------------------------------- */

static gpointer
cpu_coder_main (gpointer unused)
{
  g_mutex_lock (&pool.lock);
  for (;;) {
    GstGpuStreamCoderJob *job = queue_find (pool.queue.head, NULL);

    if (!job) {
      g_cond_wait (&pool.cpu_cond, &pool.lock);
      continue;
    }
    g_queue_unlink (&pool.queue, &job->link);
    g_mutex_unlock (&pool.lock);

    job_run_cpu (job);
    stat_add (&pool.jobs_cpu, 1);
    job_complete (job, TRUE);

    g_mutex_lock (&pool.lock);
  }
  return NULL;
}

/* pool.lock held. */
static void
cpu_coders_start (void)
{
  guint i, n = gst_gpustream_coder_cpu_threads ();

  pool.cpu_started = TRUE;
  for (i = 0; i < n; i++) {
    gchar name[16];
    GError *err = NULL;
    GThread *t;

    g_snprintf (name, sizeof (name), "gpscpu%u", i);
    t = g_thread_try_new (name, cpu_coder_main, NULL, &err);
    if (!t) {
      GST_ERROR ("could not start CPU coder %u: %s", i, err->message);
      g_clear_error (&err);
      continue;
    }
    /* coders live for the process; nothing joins them */
    g_thread_unref (t);
    g_atomic_int_inc (&pool.cpu_threads);
  }
  GST_INFO ("started %d CPU coder threads",
      g_atomic_int_get (&pool.cpu_threads));
}

/* ---- the GPU coder ---------------------------------------------------- */

#if GS_HAVE_CUDA

#define ALIGN16(x) (((x) + 15) & ~(gsize) 15)

static void
run_batch_on_cpu (GstGpuStreamCoderJob ** jobs, guint njobs)
{
  guint i;

  for (i = 0; i < njobs; i++) {
    job_run_cpu (jobs[i]);
    stat_add (&pool.jobs_cpu, 1);
    job_complete (jobs[i], TRUE);
  }
}

/* Where each job's parts lie, as offsets valid both in the pinned staging
 * buffer and in the device buffer (one layout, so a descriptor is the
 * device base plus the offset):
 *   [descriptors][coefs of every job] [src of job 0][src of job 1]...
 *   [out of job 0][out of job 1]...
 * src and out rows are at a pitch of k rounded up to 16 bytes, as the
 * kernel wants (cuMemAlloc/cuMemAllocHost bases are 256-byte aligned and
 * every offset is a multiple of 16). Everything before the first out is
 * one host -> device copy, everything from it on one copy back. */
typedef struct {
  gsize pitch, coefs, src, out;
} JobLayout;

/* Runs the batch on the GPU; FALSE (nothing completed) on any CUDA error, so
 * that the caller can run it on the CPU. */
static gboolean
run_batch_on_gpu (GpuCoder * c, GstGpuStreamCoderJob ** jobs, guint njobs,
    CUfunction func)
{
  JobLayout lay[GPU_BATCH_MAX_JOBS];
  RlncGpuProduct *desc;
  gsize off, out_base, total;
  guint blocks_x = 1;
  CUresult res = CUDA_SUCCESS;
  const gchar *what = "";
  guint i;
  gint r;
  guint32 njobs32 = njobs;
  CUdeviceptr desc_dev;
  void *args[2];

  /* layout */
  off = ALIGN16 (sizeof (RlncGpuProduct) * njobs);
  for (i = 0; i < njobs; i++) {
    const GstGpuStreamGfProduct *p = &jobs[i]->p;
    lay[i].pitch = ALIGN16 (MAX (p->k, 1));
    lay[i].coefs = off;
    off += ALIGN16 ((gsize) p->n * p->m);
    /* the grid must cover the product with the most work items (not the
     * most bytes: short rows pack several row tiles in a block) */
    blocks_x = MAX (blocks_x, rlnc_gpu_blocks_x ((guint32) p->n, p->k));
  }
  for (i = 0; i < njobs; i++) {
    lay[i].src = off;
    off += lay[i].pitch * jobs[i]->p.m;
  }
  out_base = off;
  for (i = 0; i < njobs; i++) {
    lay[i].out = off;
    off += lay[i].pitch * jobs[i]->p.n;
  }
  total = off;

  if (!gst_cuda_context_push (c->ctx)) {
    GST_WARNING_OBJECT (c->ctx, "could not push the CUDA context");
    return FALSE;
  }

#define CHECK(call, name) \
  G_STMT_START { res = (call); if (res != CUDA_SUCCESS) { what = name; \
      goto error; } } G_STMT_END

  CHECK (gps_cuda_ensure_host (&c->host, &c->host_size, total),
      "cuMemAllocHost");
  CHECK (gps_cuda_ensure_dev (&c->dev, &c->dev_size, total), "cuMemAlloc");

  /* stage descriptors, coefficients and sources in pinned memory */
  desc = (RlncGpuProduct *) c->host;
  for (i = 0; i < njobs; i++) {
    const GstGpuStreamGfProduct *p = &jobs[i]->p;

    desc[i].coefs = (uint64_t) (c->dev + lay[i].coefs);
    desc[i].src = (uint64_t) (c->dev + lay[i].src);
    desc[i].out = (uint64_t) (c->dev + lay[i].out);
    desc[i].k = p->k;
    desc[i].src_pitch = lay[i].pitch;
    desc[i].out_pitch = lay[i].pitch;
    desc[i].m = (uint32_t) p->m;
    desc[i].n = (uint32_t) p->n;
    memcpy (c->host + lay[i].coefs, p->coefs, (gsize) p->n * p->m);
    for (r = 0; r < p->m; r++)
      memcpy (c->host + lay[i].src + r * lay[i].pitch, p->src[r], p->k);
  }

  /* host -> device: descriptors, coefficients and every source in one
   * linear copy (the row padding goes along, unread), instead of one 2D copy
   * per job: a batch of 64 small jobs would otherwise cost 129 driver calls */
  CHECK (gps_cuda_copy_linear (c->host, NULL, 0, c->dev, out_base, c->stream),
      "cuMemcpy2DAsync (descriptors, coefficients, sources)");

  /* one launch for the whole batch: blockIdx.y picks the product */
  desc_dev = c->dev;
  args[0] = &desc_dev;
  args[1] = &njobs32;
  CHECK (CuLaunchKernel (func, blocks_x, njobs, 1,
          RLNC_GPU_THREADS, 1, 1, 0, c->stream, args, NULL),
      "cuLaunchKernel");

  /* device -> host: every output, again one linear copy */
  CHECK (gps_cuda_copy_linear (NULL, c->host + out_base, c->dev + out_base, 0,
          total - out_base, c->stream), "cuMemcpy2DAsync (outputs)");
  CHECK (CuStreamSynchronize (c->stream), "cuStreamSynchronize");
  gst_cuda_context_pop (NULL);
#undef CHECK

  stat_add (&pool.gpu_batches, 1);
  for (i = 0; i < njobs; i++) {
    const GstGpuStreamGfProduct *p = &jobs[i]->p;

    for (r = 0; r < p->n; r++)
      memcpy (p->out[r], c->host + lay[i].out + r * lay[i].pitch, p->k);
    stat_add (&pool.jobs_gpu, 1);
    job_complete (jobs[i], TRUE);
  }
  return TRUE;

error:
  /* queued copies may still read the staging buffer: drain before anyone
   * (the CPU fallback does not, but the next batch does) touches it */
  CuStreamSynchronize (c->stream);
  gst_cuda_context_pop (NULL);
  c->failures++;
  {
    gchar *detail = g_strdup_printf ("%s failed: %s", what, gps_cuda_strerror (res));
    gps_gpu_fallback ("the coder pool's GPU coder", detail);
    g_free (detail);
  }
  if (c->failures == 1 || c->failures % 1000 == 0)
    GST_WARNING_OBJECT (c->ctx, "%s failed (%u failure(s) so far): %s; "
        "running %u job(s) on the CPU", what, c->failures,
        gps_cuda_strerror (res), njobs);
  else
    GST_DEBUG_OBJECT (c->ctx, "%s failed: %s; %u job(s) on the CPU", what,
        gps_cuda_strerror (res), njobs);
  return FALSE;
}

static gboolean
gpu_coder_setup (GpuCoder * c)
{
  CUresult res;

  if (!gst_cuda_context_push (c->ctx))
    return FALSE;
  res = CuStreamCreate (&c->stream, CU_STREAM_NON_BLOCKING);
  gst_cuda_context_pop (NULL);
  if (res != CUDA_SUCCESS) {
    GST_WARNING_OBJECT (c->ctx, "cuStreamCreate: %s", gps_cuda_strerror (res));
    c->stream = NULL;
    return FALSE;
  }
  return TRUE;
}

static void
gpu_coder_free (GpuCoder * c)
{
  if ((c->stream || c->host || c->dev) && gst_cuda_context_push (c->ctx)) {
    if (c->stream)
      CuStreamDestroy (c->stream);
    if (c->host)
      CuMemFreeHost (c->host);
    if (c->dev)
      CuMemFree (c->dev);
    gst_cuda_context_pop (NULL);
  }
  g_cond_clear (&c->cond);
  gst_object_unref (c->ctx);
  g_free (c);
}

/* Takes every job this coder may run, FIFO, up to the batch limits.
 * pool.lock held. */
static guint
gpu_take_batch (GpuCoder * c, GstGpuStreamCoderJob ** jobs)
{
  GList *l = pool.queue.head;
  guint n = 0;
  gsize bytes = 0;

  while (n < GPU_BATCH_MAX_JOBS) {
    GstGpuStreamCoderJob *job = queue_find (l, GST_OBJECT (c->ctx));
    gsize sz;

    if (!job)
      break;
    sz = ALIGN16 (MAX (job->p.k, 1)) * (gsize) (job->p.m + job->p.n);
    if (n > 0 && bytes + sz > GPU_BATCH_MAX_BYTES)
      break;
    bytes += sz;
    l = job->link.next;
    g_queue_unlink (&pool.queue, &job->link);
    jobs[n++] = job;
  }
  return n;
}

static gpointer
gpu_coder_main (gpointer data)
{
  GpuCoder *c = data;
  GstGpuStreamCoderJob *jobs[GPU_BATCH_MAX_JOBS];
  CUfunction func = NULL;
  /* a context without a stream or without the kernel still serves its jobs,
   * on the CPU, so that submitters get correct output */
  gboolean usable = gpu_coder_setup (c) &&
      gps_cuda_get_rlnc_kernel (c->ctx, &func);

  if (!usable)
    GST_WARNING_OBJECT (c->ctx, "GPU coder cannot use the GPU (see above): "
        "its jobs run on the CPU");

  g_mutex_lock (&pool.lock);
  for (;;) {
    guint n = gpu_take_batch (c, jobs);

    if (n == 0) {
      gint64 deadline = g_get_monotonic_time () + GPU_IDLE_EXIT_US;

      if (g_cond_wait_until (&c->cond, &pool.lock, deadline))
        continue;
      if (queue_find (pool.queue.head, GST_OBJECT (c->ctx)))
        continue;
      /* idle: leave; a later submit for this context starts a new coder */
      g_hash_table_remove (pool.gpu_coders, c->ctx);
      g_atomic_int_add (&pool.gpu_workers, -1);
      break;
    }
    g_mutex_unlock (&pool.lock);

    if (!usable || !run_batch_on_gpu (c, jobs, n, func))
      run_batch_on_cpu (jobs, n);

    g_mutex_lock (&pool.lock);
  }
  g_mutex_unlock (&pool.lock);

  GST_INFO_OBJECT (c->ctx, "GPU coder idle, exiting");
  gpu_coder_free (c);
  return NULL;
}

/* The GPU coder of ctx, started if needed. pool.lock held. NULL when no
 * thread could be started. */
static GpuCoder *
gpu_coder_get (GstObject * ctx)
{
  GpuCoder *c;
  GError *err = NULL;
  GThread *t;

  if (!pool.gpu_coders)
    pool.gpu_coders = g_hash_table_new (NULL, NULL);
  c = g_hash_table_lookup (pool.gpu_coders, ctx);
  if (c)
    return c;

  c = g_new0 (GpuCoder, 1);
  c->ctx = gst_object_ref (GST_CUDA_CONTEXT (ctx));
  g_cond_init (&c->cond);
  /* in the table before the thread runs: it looks itself up under the lock */
  g_hash_table_insert (pool.gpu_coders, ctx, c);
  t = g_thread_try_new ("gpsgpu", gpu_coder_main, c, &err);
  if (!t) {
    GST_ERROR_OBJECT (ctx, "could not start the GPU coder: %s", err->message);
    g_clear_error (&err);
    g_hash_table_remove (pool.gpu_coders, ctx);
    g_cond_clear (&c->cond);
    gst_object_unref (c->ctx);
    g_free (c);
    return NULL;
  }
  g_thread_unref (t);
  g_atomic_int_inc (&pool.gpu_workers);
  GST_INFO_OBJECT (ctx, "started a GPU coder");
  return c;
}
#endif /* GS_HAVE_CUDA */

/* ---- submit ----------------------------------------------------------- */

GstGpuStreamCoderJob *
gst_gpustream_coder_submit (const GstGpuStreamGfProduct * product,
    GstGpuStreamBackend where, GstObject * cuda_context)
{
  GstGpuStreamCoderJob *job;
  gboolean wake_cpu = FALSE;

  g_return_val_if_fail (product != NULL, NULL);
  g_return_val_if_fail (product->n <= 0 || product->out != NULL, NULL);
  g_return_val_if_fail (product->n <= 0 || product->m <= 0 ||
      (product->coefs != NULL && product->src != NULL), NULL);

  gps_debug_init ();

  job = g_new0 (GstGpuStreamCoderJob, 1);
  job->link.data = job;
  job->p = *product;

  if (where == GST_GPUSTREAM_BACKEND_AUTO)
    where = cuda_context ? GST_GPUSTREAM_BACKEND_HYBRID :
        GST_GPUSTREAM_BACKEND_CPU;
#if GS_HAVE_CUDA
  if (where != GST_GPUSTREAM_BACKEND_CPU) {
    if (cuda_context && GST_IS_CUDA_CONTEXT (cuda_context)) {
      job->ctx = gst_object_ref (cuda_context);
    } else if (where == GST_GPUSTREAM_BACKEND_GPU) {
      /* no GPU coder could ever take it: run it rather than hang */
      GST_WARNING ("GPU job without a CUDA context: running it on the CPU");
    }
  }
#else
  if (where == GST_GPUSTREAM_BACKEND_GPU)
    GST_WARNING ("GPU job in a build without CUDA: running it on the CPU");
#endif
  job->where = job->ctx ? where : GST_GPUSTREAM_BACKEND_CPU;

  /* the GPU kernel does only 1..RLNC_MAX_M sources */
  if (product->m > RLNC_MAX_M && job->where != GST_GPUSTREAM_BACKEND_CPU) {
    GST_DEBUG ("m=%d > %d: running on the CPU", product->m, RLNC_MAX_M);
    job->where = GST_GPUSTREAM_BACKEND_CPU;
  }

  /* nothing to compute (no output, or the empty sum): done now, no worker
   * involved */
  if (product->n <= 0 || product->k == 0 || product->m <= 0) {
    job_run_cpu (job);
    job->ok = TRUE;
    job->done = 1;
    return job;
  }

  g_mutex_lock (&pool.lock);
  if (job->where != GST_GPUSTREAM_BACKEND_GPU) {
    if (!pool.cpu_started)
      cpu_coders_start ();
    wake_cpu = g_atomic_int_get (&pool.cpu_threads) > 0;
    if (!wake_cpu && job->where == GST_GPUSTREAM_BACKEND_CPU) {
      /* no coder thread could be started: run it here rather than never */
      g_mutex_unlock (&pool.lock);
      job_run_cpu (job);
      stat_add (&pool.jobs_cpu, 1);
      job->ok = TRUE;
      job->done = 1;
      return job;
    }
  }
#if GS_HAVE_CUDA
  if (job->ctx && job->where != GST_GPUSTREAM_BACKEND_CPU) {
    GpuCoder *c = gpu_coder_get (job->ctx);

    if (c) {
      g_cond_signal (&c->cond);
    } else if (!wake_cpu) {
      g_mutex_unlock (&pool.lock);
      job_run_cpu (job);
      stat_add (&pool.jobs_cpu, 1);
      job->ok = TRUE;
      job->done = 1;
      return job;
    } else {
      /* a HYBRID or GPU job that no GPU coder will take: CPU it */
      job->where = GST_GPUSTREAM_BACKEND_CPU;
    }
  }
#endif
  g_queue_push_tail_link (&pool.queue, &job->link);
  if (wake_cpu)
    g_cond_signal (&pool.cpu_cond);
  g_mutex_unlock (&pool.lock);

  GST_LOG ("queued %s job %p: k=%" G_GSIZE_FORMAT " m=%d n=%d",
      gst_gpustream_backend_nick (job->where), job, product->k, product->m,
      product->n);
  return job;
}
