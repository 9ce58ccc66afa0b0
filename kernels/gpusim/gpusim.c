/* gpusim.c: a simulated CUDA device, built as a libcuda.so.1 that tests and
 * benchmarks put first on the library path. GStreamer's CUDA library loads
 * the driver at run time, so GstCuda, our GPU layer and the elements run
 * unchanged on it, on a machine without a GPU. Never installed.
 *
 * What it keeps of a real device:
 * - device memory is memory of its own: a device pointer is an allocation
 *   made here, and every copy and every pointer a kernel reads is checked
 *   against those allocations, so a missing copy shows as wrong output and
 *   a host pointer passed as a device one as CUDA_ERROR_ILLEGAL_ADDRESS;
 * - each stream is a FIFO run in order by a thread of its own: a call
 *   returns before its work is done, so a missing synchronisation shows as
 *   a wrong result or a race; the legacy default stream orders itself with
 *   the context's other streams; events mark points in a stream;
 * - a launch runs the whole grid of one of our kernels on the CPU with the
 *   kernel's own __host__ __device__ per-thread code (kernels/), its
 *   arguments read from the launch's parameters as the kernel reads them; a
 *   kernel this file does not know fails cuModuleGetFunction;
 * - a timing model: an operation ends no sooner than latency + size / rate
 *   after it started (H100 figures of docs/benchmarks/gpu-h100.md), or takes
 *   no modelled time at all (GPUSIM_MODEL=zero: host work alone);
 * - faults on demand (gpusim.h).
 * What it does not: textures, graphics interop, peer access, managed
 * memory; those calls answer CUDA_ERROR_NOT_SUPPORTED. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpusim.h"
#include "srtp/srtp_cuda.h"
#include "rlnc/rlnc_cuda.h"
#include "dxt/dxt_cuda.h"
#include "dxt/dxt_block.h"

#define EXPORT __attribute__ ((visibility ("default")))

/* ---- the driver API's types, as the driver's ABI has them ---------------- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct SimContext *CUcontext;
typedef struct SimStream *CUstream;
typedef struct SimEvent *CUevent;
typedef struct SimModule *CUmodule;
typedef const struct SimKernel *CUfunction;

enum {
  CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719, CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
};

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4 };

typedef struct {
  size_t srcXInBytes, srcY;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_STREAM_LEGACY ((CUstream) 0x1)
#define CU_STREAM_PER_THREAD ((CUstream) 0x2)

/* ---- the timing model ------------------------------------------------------ */
/* H100 80GB (docs/benchmarks/gpu-h100.md): PCIe from pinned memory 52.9-54.0
 * GB/s up, 50.9-54.9 down; pageable memory goes through a driver bounce
 * buffer (not measured there: a third of pinned assumed). SRTP protect 322
 * Gbit/s of packets in the kernel; RLNC coded output 128 / 48 / 12.8 GB/s at
 * m = 16 / 64 / 256 (bound by m multiply-adds per byte); DXT1 fast 4K about
 * 2500 frames/s in the kernel (1326 end to end with its copies). */
typedef struct {
  const char *name;
  double copy_latency_s, launch_latency_s;
  double h2d_pinned, d2h_pinned, pageable, d2d;   /* bytes/s */
  double srtp_bytes;                              /* packet bytes/s */
  double rlnc_madds;                              /* coded bytes x m per s */
  double dxt_blocks, dxt_decode_blocks;           /* 4x4 blocks/s */
} SimModel;

static const SimModel model_h100 = {
  "h100", 8e-6, 5e-6, 53e9, 52e9, 17e9, 1000e9,
  40e9, 3.07e12, 1.3e9, 5e9,
};
static const SimModel model_zero = { "zero", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

/* ---- state ----------------------------------------------------------------- */
typedef struct {
  uintptr_t base;
  size_t size;
  int pinned;                   /* 0: device memory, 1: page-locked host */
} SimAlloc;

struct SimContext {
  int device;
  unsigned flags;
  struct SimStream *null_stream;  /* the legacy default stream, made on first use */
  struct SimStream **streams;     /* every stream of the context, for the legacy ordering */
  size_t nstreams, streams_cap;
};

typedef enum { OP_COPY, OP_LAUNCH, OP_EVENT, OP_WAIT } OpKind;

typedef struct SimOp {
  OpKind kind;
  struct SimOp *next;
  uint64_t seq;                   /* position in its stream */
  /* OP_COPY */
  CUDA_MEMCPY2D copy;
  /* OP_LAUNCH */
  const struct SimKernel *kernel;
  unsigned grid[3], block[3];
  unsigned char params[128];
  /* OP_EVENT */
  struct SimEvent *event;
  /* OP_WAIT: until that stream has completed `until` operations */
  struct SimStream *wait_stream;
  uint64_t until;
  double modelled_s;
  double submit_s;                /* when the host queued it */
  uint64_t threads_done;          /* grid threads that did work (stats) */
} SimOp;

struct SimStream {
  struct SimContext *ctx;
  unsigned flags;
  pthread_t thread;
  SimOp *head, *tail;
  uint64_t submitted, completed;
  CUresult error;                 /* the first failure in the stream */
  double model_end;               /* monotonic seconds: when the modelled device is done */
  int quit;
  struct SimStream *all_next;     /* every stream of the process, for gpusim_reset */
};

struct SimEvent {
  unsigned flags;
  struct SimStream *stream;       /* NULL: never recorded */
  uint64_t seq;                   /* complete once stream->completed >= seq */
  double time_s;                  /* modelled completion time */
  int has_time;
};

typedef CUresult (*SimKernelRun) (SimOp * op);

typedef struct SimKernel {
  const char *name;
  size_t nparams;
  size_t param_size[6];
  SimKernelRun run;
  double (*model) (const SimOp * op, const SimModel * m);
} SimKernel;

struct SimModule {
  const void *image;
};

/* One lock for everything: the simulator is for correctness, and a
 * device's operations are few next to the work each one does. The stream
 * threads run an operation's work outside it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int initialized;
static const SimModel *model = &model_h100;
static SimAlloc *allocs;
static size_t nallocs, allocs_cap;
static GpusimStats stats;
static struct SimStream *all_streams;
static uint32_t fault_countdown[GPUSIM_FAULT_LAST];
static CUresult sticky;               /* a lost device: every call fails */
static int held;                      /* gpusim_hold */

#define CTX_STACK 16
static __thread CUcontext ctx_stack[CTX_STACK];
static __thread int ctx_depth;

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Whether an armed fault of this kind fires now; lock held. */
static int
fault_fires (GpusimFault kind)
{
  if (fault_countdown[kind] == 0)
    return 0;
  if (--fault_countdown[kind] > 0)
    return 0;
  stats.faults++;
  return 1;
}

/* ---- allocations: a sorted array of ranges -------------------------------- */
static size_t
alloc_index (uintptr_t p)
{
  size_t lo = 0, hi = nallocs;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (allocs[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;                    /* first with base > p */
}

static const SimAlloc *
alloc_find (uintptr_t p, size_t len, int pinned)
{
  size_t i = alloc_index (p);
  if (i == 0)
    return NULL;
  const SimAlloc *a = &allocs[i - 1];
  if (a->pinned != pinned || p - a->base > a->size || len > a->size - (p - a->base))
    return NULL;
  return a;
}

static void *
alloc_add (size_t size, int pinned)
{
  /* 512-byte alignment as cudaMalloc gives; never zero-sized */
  void *p = NULL;
  if (posix_memalign (&p, 512, size ? size : 1) != 0)
    return NULL;
  if (nallocs == allocs_cap) {
    size_t cap = allocs_cap ? allocs_cap * 2 : 64;
    SimAlloc *n = realloc (allocs, cap * sizeof *n);
    if (!n) {
      free (p);
      return NULL;
    }
    allocs = n;
    allocs_cap = cap;
  }
  size_t i = alloc_index ((uintptr_t) p);
  memmove (&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof *allocs);
  allocs[i] = (SimAlloc) { (uintptr_t) p, size, pinned };
  nallocs++;
  stats.allocs_live++;
  return p;
}

static int
alloc_remove (uintptr_t p, int pinned)
{
  size_t i = alloc_index (p);
  if (i == 0 || allocs[i - 1].base != p || allocs[i - 1].pinned != pinned)
    return 0;
  memmove (&allocs[i - 1], &allocs[i], (nallocs - i) * sizeof *allocs);
  nallocs--;
  stats.allocs_live--;
  free ((void *) p);
  return 1;
}

/* Device memory a kernel reads or writes: inside one allocation. Called
 * from a stream thread, so it takes the lock itself. */
static int
dev_range_ok (uint64_t p, uint64_t len)
{
  pthread_mutex_lock (&lock);
  int ok = alloc_find ((uintptr_t) p, (size_t) len, 0) != NULL;
  pthread_mutex_unlock (&lock);
  return ok;
}

/* ---- the kernels ----------------------------------------------------------- */
static const GsAesTables sim_aes_tables = GS_AES_TABLES_INIT;

static uint64_t
grid_threads (const SimOp * op)
{
  return (uint64_t) op->grid[0] * op->grid[1] * op->grid[2] *
      op->block[0] * op->block[1] * op->block[2];
}

/* A launch's modelled time: its latency and its work at the kernel's rate
 * (none in the zero model, whose rates are 0) */
static double
launch_time (const SimModel * m, double work, double rate)
{
  return m->launch_latency_s + (rate > 0 ? work / rate : 0);
}

typedef struct {
  uint64_t keys, descs;
  uint32_t n;
  uint64_t buf, out;
} SrtpArgs;

static SrtpArgs
srtp_args (const SimOp * op)
{
  SrtpArgs a;
  memcpy (&a.keys, op->params, 8);
  memcpy (&a.descs, op->params + 8, 8);
  memcpy (&a.n, op->params + 16, 4);
  memcpy (&a.buf, op->params + 24, 8);
  memcpy (&a.out, op->params + 32, 8);
  return a;
}

/* One packet's inputs in device memory, as the kernel would touch them. */
static int
srtp_packet_ok (const SrtpArgs * a, uint32_t i, GsSrtpDesc * d)
{
  if (!dev_range_ok (a->descs + (uint64_t) i * sizeof *d, sizeof *d) ||
      !dev_range_ok (a->out + (uint64_t) i * 4, 4))
    return 0;
  memcpy (d, (const void *) (uintptr_t) (a->descs + (uint64_t) i * sizeof *d), sizeof *d);
  if (!dev_range_ok (a->keys + (uint64_t) d->keys * sizeof (GsSrtpKeys), sizeof (GsSrtpKeys)))
    return 0;
  /* the protected packet: the SRTCP index, the MKI and the tag follow the
   * unprotected bytes (d->len) */
  const GsSrtpKeys *k = (const GsSrtpKeys *) (uintptr_t) a->keys + d->keys;
  return dev_range_ok (a->buf + d->offset,
      (uint64_t) d->len + (d->is_rtcp ? 4 : 0) + k->mki_len + k->tag_len);
}

static CUresult
run_srtp (SimOp * op, int mode)       /* 0 protect, 1 warp protect, 2 unprotect */
{
  SrtpArgs a = srtp_args (op);
  uint64_t threads = grid_threads (op), packets = mode == 1 ? threads / 32 : threads;
  uint32_t n = a.n < packets ? a.n : (uint32_t) packets;

  for (uint32_t i = 0; i < n; i++) {
    GsSrtpDesc d;
    if (!srtp_packet_ok (&a, i, &d))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    const GsSrtpKeys *k = (const GsSrtpKeys *) (uintptr_t) a.keys + d.keys;
    uint8_t *pkt = (uint8_t *) (uintptr_t) a.buf + d.offset;
    uint32_t *out = (uint32_t *) (uintptr_t) a.out + i;
    if (mode == 0) {
      *out = gs_srtp_hd_protect (&sim_aes_tables, k, pkt, &d);
    } else if (mode == 1) {
      /* the warp's 32 lanes share the body, then lane 0 seals the tag */
      for (uint32_t lane = 0; lane < 32; lane++)
        gs_srtp_hd_seal_encrypt (&sim_aes_tables, k, pkt, &d, lane, 32);
      *out = gs_srtp_hd_place_mki (k, pkt, gs_srtp_hd_seal_auth (&sim_aes_tables, k, pkt, &d));
    } else {
      *out = (uint32_t) gs_srtp_hd_unprotect (&sim_aes_tables, k, pkt, &d);
    }
  }
  op->threads_done = n;
  return CUDA_SUCCESS;
}

static CUresult run_srtp_protect (SimOp * op) { return run_srtp (op, 0); }
static CUresult run_srtp_warp (SimOp * op) { return run_srtp (op, 1); }
static CUresult run_srtp_unprotect (SimOp * op) { return run_srtp (op, 2); }

static double
model_srtp (const SimOp * op, const SimModel * m)
{
  SrtpArgs a = srtp_args (op);
  double bytes = 0;
  /* the descriptors are in device memory: read their lengths if they are there */
  if (m->srtp_bytes > 0 && dev_range_ok (a.descs, (uint64_t) a.n * sizeof (GsSrtpDesc))) {
    const GsSrtpDesc *d = (const GsSrtpDesc *) (uintptr_t) a.descs;
    for (uint32_t i = 0; i < a.n; i++)
      bytes += d[i].len;
  }
  return launch_time (m, bytes, m->srtp_bytes);
}

static CUresult
run_rlnc (SimOp * op)
{
  uint64_t jobs_p;
  uint32_t njobs;
  memcpy (&jobs_p, op->params, 8);
  memcpy (&njobs, op->params + 8, 4);
  uint32_t nj = njobs < op->grid[1] ? njobs : op->grid[1];
  if (nj && !dev_range_ok (jobs_p, (uint64_t) nj * sizeof (RlncGpuProduct)))
    return CUDA_ERROR_ILLEGAL_ADDRESS;

  for (uint32_t j = 0; j < nj; j++) {
    const RlncGpuProduct job = ((const RlncGpuProduct *) (uintptr_t) jobs_p)[j];
    const uint32_t m = job.m, n = job.n;
    if (m == 0 || n == 0 || job.k == 0 || m > RLNC_MAX_M)
      continue;
    if (!dev_range_ok (job.coefs, (uint64_t) n * m) ||
        !dev_range_ok (job.src, (uint64_t) (m - 1) * job.src_pitch + job.k) ||
        !dev_range_ok (job.out, (uint64_t) (n - 1) * job.out_pitch + job.k))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    const uint8_t *coefs = (const uint8_t *) (uintptr_t) job.coefs;
    const uint8_t *src = (const uint8_t *) (uintptr_t) job.src;
    uint8_t *out = (uint8_t *) (uintptr_t) job.out;
    /* the kernel's layout is for RLNC_GPU_THREADS threads whatever the launch */
    const RlncProductLayout l = rlnc_product_layout (n, job.k, RLNC_GPU_THREADS);
    for (uint32_t bx = 0; bx < op->grid[0]; bx++) {
      for (uint64_t work = bx; work < l.nwork; work += op->grid[0]) {
        for (uint32_t tid = 0; tid < op->block[0]; tid++) {
          uint32_t tile_row, nrows;
          uint64_t w;
          if (!rlnc_product_thread_tile (&l, work, tid, n, &tile_row, &nrows, &w))
            continue;
          uint32_t acc[RLNC_PRODUCT_ROWS][4];
          /* the kernel stages these coefficient rows in shared memory */
          rlnc_product_step (coefs + (uint64_t) tile_row * m, m, nrows, src,
              job.src_pitch, job.k, w, acc);
          for (uint32_t r = 0; r < nrows; r++)
            rlnc_product_store16 (out + (uint64_t) (tile_row + r) * job.out_pitch,
                job.k, w, acc[r]);
          op->threads_done++;
        }
      }
    }
  }
  return CUDA_SUCCESS;
}

static double
model_rlnc (const SimOp * op, const SimModel * m)
{
  uint64_t jobs_p;
  uint32_t njobs;
  double madds = 0;
  memcpy (&jobs_p, op->params, 8);
  memcpy (&njobs, op->params + 8, 4);
  if (m->rlnc_madds > 0 && dev_range_ok (jobs_p, (uint64_t) njobs * sizeof (RlncGpuProduct))) {
    const RlncGpuProduct *j = (const RlncGpuProduct *) (uintptr_t) jobs_p;
    for (uint32_t i = 0; i < njobs; i++)
      madds += (double) j[i].n * j[i].k * j[i].m;
  }
  return launch_time (m, madds, m->rlnc_madds);
}

static int
dxt_image_ok (const DxtImage * img)
{
  int planes = img->format == DXT_FMT_I420 ? 3 : img->format == DXT_FMT_NV12 ? 2 : 1;
  for (int p = 0; p < planes; p++) {
    uint64_t rows = p == 0 ? img->height : (img->height + 1) / 2;
    if (!dev_range_ok ((uintptr_t) img->plane[p], rows ? (rows - 1) * img->stride[p] + 1 : 0))
      return 0;
  }
  return 1;
}

static CUresult
run_dxt_encode (SimOp * op)
{
  DxtGpuEncode job;
  memcpy (&job, op->params, sizeof job);
  const uint32_t bx_n = dxt_blocks_x (job.img.width);
  const uint64_t n = (uint64_t) bx_n * job.nrows, threads = grid_threads (op);
  const uint64_t todo = n < threads ? n : threads;
  const uint32_t bb = dxt_block_bytes ((DxtCodec) job.codec);
  if (todo && (!dxt_image_ok (&job.img) || !dev_range_ok (job.out, todo * bb)))
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (uint64_t t = 0; t < todo; t++) {
    const uint32_t by = job.row0 + (uint32_t) (t / bx_n), bx = (uint32_t) (t % bx_n);
    uint8_t px[64], blk[16];
    dxt_load_block (&job.img, bx, by, px);
    dxt_encode_block_hd (job.codec, job.quality, px, blk);
    memcpy ((uint8_t *) (uintptr_t) job.out + t * bb, blk, bb);
  }
  op->threads_done = todo;
  return CUDA_SUCCESS;
}

static double
model_dxt_encode (const SimOp * op, const SimModel * m)
{
  DxtGpuEncode job;
  memcpy (&job, op->params, sizeof job);
  double blocks = (double) dxt_blocks_x (job.img.width) * job.nrows;
  return launch_time (m, blocks, m->dxt_blocks);
}

static CUresult
run_dxt_decode (SimOp * op)
{
  DxtGpuDecode job;
  memcpy (&job, op->params, sizeof job);
  const uint32_t bx_n = dxt_blocks_x (job.width);
  const uint64_t n = (uint64_t) bx_n * dxt_blocks_y (job.height), threads = grid_threads (op);
  const uint64_t todo = n < threads ? n : threads;
  const uint32_t bb = dxt_block_bytes ((DxtCodec) job.codec);
  if (todo && (!dev_range_ok (job.blocks, todo * bb) ||
          !dev_range_ok (job.rgba, (uint64_t) (job.height - 1) * job.stride + job.width * 4)))
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  for (uint64_t t = 0; t < todo; t++) {
    const uint32_t by = (uint32_t) (t / bx_n), bx = (uint32_t) (t % bx_n);
    uint8_t px[64];
    dxt_decode_block_hd (job.codec, (const uint8_t *) (uintptr_t) job.blocks + t * bb, px);
    for (uint32_t j = 0; j < 4 && by * 4 + j < job.height; j++)
      for (uint32_t i = 0; i < 4 && bx * 4 + i < job.width; i++)
        memcpy ((uint8_t *) (uintptr_t) job.rgba + (uint64_t) (by * 4 + j) * job.stride
            + (bx * 4 + i) * 4, px + 16 * j + 4 * i, 4);
  }
  op->threads_done = todo;
  return CUDA_SUCCESS;
}

static double
model_dxt_decode (const SimOp * op, const SimModel * m)
{
  DxtGpuDecode job;
  memcpy (&job, op->params, sizeof job);
  double blocks = (double) dxt_blocks_x (job.width) * dxt_blocks_y (job.height);
  return launch_time (m, blocks, m->dxt_decode_blocks);
}

/* Every kernel of kernels/ (the .cu files), by the name the plugins look up, with the
 * sizes of its parameters in order (the launch copies them, as the driver
 * does). */
static const SimKernel sim_kernels[] = {
  {SRTP_GPU_KERNEL_NAME, 5, {8, 8, 4, 8, 8}, run_srtp_protect, model_srtp},
  {SRTP_GPU_WARP_KERNEL_NAME, 5, {8, 8, 4, 8, 8}, run_srtp_warp, model_srtp},
  {SRTP_GPU_UNPROTECT_KERNEL_NAME, 5, {8, 8, 4, 8, 8}, run_srtp_unprotect, model_srtp},
  {RLNC_GPU_KERNEL_NAME, 2, {8, 4}, run_rlnc, model_rlnc},
  {DXT_GPU_ENCODE_KERNEL, 1, {sizeof (DxtGpuEncode)}, run_dxt_encode, model_dxt_encode},
  {DXT_GPU_DECODE_KERNEL, 1, {sizeof (DxtGpuDecode)}, run_dxt_decode, model_dxt_decode},
};

/* ---- copies ---------------------------------------------------------------- */
/* Where one side of a copy is; lock held. Host memory that is not pinned is
 * anything the caller owns; device memory must be one of ours. */
static CUresult
copy_side (int type, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t pitch,
    size_t width, size_t height, int *pinned, int *is_dev)
{
  size_t span = height ? (height - 1) * pitch + width : 0;
  if (type == CU_MEMORYTYPE_UNIFIED)
    type = alloc_find ((uintptr_t) dev, 1, 0) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (type == CU_MEMORYTYPE_DEVICE) {
    *is_dev = 1;
    *pinned = 0;
    return span == 0 || alloc_find ((uintptr_t) (dev + x + y * pitch), span, 0) ?
        CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  if (type == CU_MEMORYTYPE_HOST) {
    *is_dev = 0;
    if (!host && span)
      return CUDA_ERROR_INVALID_VALUE;
    /* a device pointer used as a host one is the bug this catches */
    if (span && alloc_find ((uintptr_t) host + x + y * pitch, 1, 0))
      return CUDA_ERROR_INVALID_VALUE;
    *pinned = span == 0 || alloc_find ((uintptr_t) host + x + y * pitch, span, 1) != NULL;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_SUPPORTED;       /* arrays */
}

static void
copy_do (const CUDA_MEMCPY2D * c)
{
  const uint8_t *src = c->srcMemoryType == CU_MEMORYTYPE_DEVICE ||
      (c->srcMemoryType == CU_MEMORYTYPE_UNIFIED && c->srcDevice) ?
      (const uint8_t *) (uintptr_t) c->srcDevice : (const uint8_t *) c->srcHost;
  uint8_t *dst = c->dstMemoryType == CU_MEMORYTYPE_DEVICE ||
      (c->dstMemoryType == CU_MEMORYTYPE_UNIFIED && c->dstDevice) ?
      (uint8_t *) (uintptr_t) c->dstDevice : (uint8_t *) c->dstHost;
  src += c->srcXInBytes + c->srcY * c->srcPitch;
  dst += c->dstXInBytes + c->dstY * c->dstPitch;
  if (c->srcPitch == c->WidthInBytes && c->dstPitch == c->WidthInBytes) {
    memmove (dst, src, c->WidthInBytes * c->Height);
    return;
  }
  for (size_t r = 0; r < c->Height; r++)
    memmove (dst + r * c->dstPitch, src + r * c->srcPitch, c->WidthInBytes);
}

static double
model_copy (const CUDA_MEMCPY2D * c, int src_dev, int dst_dev, int host_pinned)
{
  double bytes = (double) c->WidthInBytes * c->Height, rate;
  if (src_dev && dst_dev)
    rate = model->d2d;
  else if (!host_pinned)
    rate = model->pageable;
  else
    rate = dst_dev ? model->h2d_pinned : model->d2h_pinned;
  return model->copy_latency_s + (rate > 0 ? bytes / rate : 0);
}

/* ---- streams --------------------------------------------------------------- */
static CUresult stream_run_op (struct SimStream *s, SimOp * op);

static void *
stream_thread (void *data)
{
  struct SimStream *s = data;

  pthread_mutex_lock (&lock);
  for (;;) {
    while ((!s->head || held) && !s->quit)
      pthread_cond_wait (&changed, &lock);
    if (!s->head)
      break;
    SimOp *op = s->head;
    if (op->kind == OP_WAIT) {
      while (op->wait_stream->completed < op->until && !s->quit)
        pthread_cond_wait (&changed, &lock);
    }
    CUresult err = CUDA_SUCCESS;
    if (sticky || s->error)
      err = sticky ? sticky : s->error;
    else if (fault_fires (GPUSIM_FAULT_LOST))
      err = sticky = CUDA_ERROR_LAUNCH_FAILED;
    double start = op->submit_s > s->model_end ? op->submit_s : s->model_end;
    pthread_mutex_unlock (&lock);

    /* the work itself, outside the lock: a kernel or a copy. The modelled
     * device starts it once it was queued and the stream's previous work
     * is done in modelled time, whatever the CPU took to emulate that:
     * events carry this clock, so elapsed times are the model's */
    if (op->kind == OP_LAUNCH)
      op->modelled_s = op->kernel->model (op, model);
    if (err == CUDA_SUCCESS)
      err = stream_run_op (s, op);
    double end = start + op->modelled_s;
    double left = end - now_s ();
    if (err == CUDA_SUCCESS && left > 2e-6) {
      struct timespec ts = { (time_t) left, (long) ((left - (time_t) left) * 1e9) };
      while (nanosleep (&ts, &ts) != 0 && errno == EINTR) {
      }
    }

    pthread_mutex_lock (&lock);
    s->model_end = end;
    stats.model_busy_s += op->modelled_s;
    if (err != CUDA_SUCCESS && !s->error)
      s->error = err;
    if (op->kind == OP_EVENT && op->event->stream == s && op->event->seq == op->seq) {
      op->event->time_s = end;
      op->event->has_time = 1;
    }
    s->head = op->next;
    if (!s->head)
      s->tail = NULL;
    s->completed = op->seq;
    free (op);
    pthread_cond_broadcast (&changed);
  }
  pthread_mutex_unlock (&lock);
  return NULL;
}

static CUresult
stream_run_op (struct SimStream *s, SimOp * op)
{
  switch (op->kind) {
    case OP_COPY:
      copy_do (&op->copy);
      return CUDA_SUCCESS;
    case OP_LAUNCH:{
      CUresult r = op->kernel->run (op);
      pthread_mutex_lock (&lock);
      stats.launches++;
      stats.threads += op->threads_done;
      pthread_mutex_unlock (&lock);
      return r;
    }
    default:
      return CUDA_SUCCESS;
  }
}

static struct SimStream *
stream_new (struct SimContext *ctx, unsigned flags)
{
  struct SimStream *s = calloc (1, sizeof *s);
  if (!s)
    return NULL;
  s->ctx = ctx;
  s->flags = flags;
  if (ctx->nstreams == ctx->streams_cap) {
    size_t cap = ctx->streams_cap ? ctx->streams_cap * 2 : 8;
    struct SimStream **n = realloc (ctx->streams, cap * sizeof *n);
    if (!n) {
      free (s);
      return NULL;
    }
    ctx->streams = n;
    ctx->streams_cap = cap;
  }
  if (pthread_create (&s->thread, NULL, stream_thread, s) != 0) {
    free (s);
    return NULL;
  }
  ctx->streams[ctx->nstreams++] = s;
  s->all_next = all_streams;
  all_streams = s;
  return s;
}

/* lock held: waits until everything queued on s so far is done */
static CUresult
stream_drain (struct SimStream *s)
{
  uint64_t target = s->submitted;
  while (s->completed < target)
    pthread_cond_wait (&changed, &lock);
  return s->error;
}

static void
stream_push (struct SimStream *s, SimOp * op)
{
  op->seq = ++s->submitted;
  op->submit_s = now_s ();
  if (s->tail)
    s->tail->next = op;
  else
    s->head = op;
  s->tail = op;
  pthread_cond_broadcast (&changed);
}

static CUcontext
current_ctx (void)
{
  return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

/* The stream an operation goes to, and the ordering the legacy default
 * stream implies: work on it waits for the context's blocking streams,
 * and work on those waits for it. Lock held. */
static CUresult
stream_for (CUstream hs, struct SimStream **out)
{
  CUcontext ctx = current_ctx ();
  if (!ctx)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (hs == NULL || hs == CU_STREAM_LEGACY || hs == CU_STREAM_PER_THREAD) {
    if (!ctx->null_stream && !(ctx->null_stream = stream_new (ctx, 0)))
      return CUDA_ERROR_OUT_OF_MEMORY;
    struct SimStream *ns = ctx->null_stream;
    for (size_t i = 0; i < ctx->nstreams; i++) {
      struct SimStream *o = ctx->streams[i];
      if (o == ns || (o->flags & CU_STREAM_NON_BLOCKING) || o->completed >= o->submitted)
        continue;
      SimOp *w = calloc (1, sizeof *w);
      if (!w)
        return CUDA_ERROR_OUT_OF_MEMORY;
      w->kind = OP_WAIT;
      w->wait_stream = o;
      w->until = o->submitted;
      stream_push (ns, w);
    }
    *out = ns;
    return CUDA_SUCCESS;
  }
  struct SimStream *s = hs;
  if (!(s->flags & CU_STREAM_NON_BLOCKING) && ctx->null_stream &&
      ctx->null_stream->completed < ctx->null_stream->submitted) {
    SimOp *w = calloc (1, sizeof *w);
    if (!w)
      return CUDA_ERROR_OUT_OF_MEMORY;
    w->kind = OP_WAIT;
    w->wait_stream = ctx->null_stream;
    w->until = ctx->null_stream->submitted;
    stream_push (s, w);
  }
  *out = s;
  return CUDA_SUCCESS;
}

static void
stream_free (struct SimStream *s)
{
  CUcontext ctx = s->ctx;
  stream_drain (s);
  s->quit = 1;
  pthread_cond_broadcast (&changed);
  pthread_mutex_unlock (&lock);
  pthread_join (s->thread, NULL);
  pthread_mutex_lock (&lock);
  for (size_t i = 0; i < ctx->nstreams; i++)
    if (ctx->streams[i] == s) {
      ctx->streams[i] = ctx->streams[--ctx->nstreams];
      break;
    }
  for (struct SimStream **p = &all_streams; *p; p = &(*p)->all_next)
    if (*p == s) {
      *p = s->all_next;
      break;
    }
  free (s);
}

/* ---- API entry: the common preamble ---------------------------------------- */
#define ENTER() \
  do { \
    pthread_mutex_lock (&lock); \
    if (!initialized) { pthread_mutex_unlock (&lock); return CUDA_ERROR_NOT_INITIALIZED; } \
    if (sticky) { CUresult _s = sticky; pthread_mutex_unlock (&lock); return _s; } \
  } while (0)
#define LEAVE(r) do { CUresult _r = (r); pthread_mutex_unlock (&lock); return _r; } while (0)

static void
parse_env (void)
{
  const char *m = getenv ("GPUSIM_MODEL");
  if (m && strcmp (m, "zero") == 0)
    model = &model_zero;
  const char *f = getenv ("GPUSIM_FAULTS");
  static const char *names[GPUSIM_FAULT_LAST] = { "alloc", "copy", "launch", "lost" };
  while (f && *f) {
    for (int k = 0; k < GPUSIM_FAULT_LAST; k++) {
      size_t l = strlen (names[k]);
      if (strncmp (f, names[k], l) == 0 && f[l] == '=')
        fault_countdown[k] = (uint32_t) strtoul (f + l + 1, NULL, 10);
    }
    f = strchr (f, ',');
    if (f)
      f++;
  }
}

EXPORT CUresult
cuInit (unsigned int flags)
{
  pthread_mutex_lock (&lock);
  if (!initialized) {
    parse_env ();
    initialized = 1;
    if (!getenv ("GPUSIM_QUIET"))
      fprintf (stderr, "gpusim: simulated device (the CUDA driver of gst-gpustream's tests, "
          "timing model %s): GPU kernels run on the CPU\n", model->name);
  }
  pthread_mutex_unlock (&lock);
  return CUDA_SUCCESS;
}

/* At exit, what ran on the simulated device: in every log that used it */
__attribute__ ((destructor))
static void
report_at_exit (void)
{
  if (!initialized || getenv ("GPUSIM_QUIET"))
    return;
  fprintf (stderr, "gpusim: simulated device: %" PRIu64 " kernel launches (%" PRIu64
      " threads), %" PRIu64 " copies (%" PRIu64 " bytes), %.6f s modelled, %"
      PRIu64 " faults injected, %" PRIu64 " allocations left\n", stats.launches,
      stats.threads, stats.copies, stats.copy_bytes, stats.model_busy_s, stats.faults,
      stats.allocs_live);
}

EXPORT CUresult
cuDriverGetVersion (int *v)
{
  if (!v)
    return CUDA_ERROR_INVALID_VALUE;
  *v = 13000;
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuDeviceGetCount (int *count)
{
  ENTER ();
  if (!count)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  *count = 1;
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuDeviceGet (CUdevice * dev, int ordinal)
{
  ENTER ();
  if (!dev)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (ordinal != 0)
    LEAVE (CUDA_ERROR_INVALID_DEVICE);
  *dev = 0;
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuDeviceGetName (char *name, int len, CUdevice dev)
{
  ENTER ();
  if (!name || len <= 0)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (dev != 0)
    LEAVE (CUDA_ERROR_INVALID_DEVICE);
  snprintf (name, (size_t) len, "gpusim (simulated device, %s model)", model->name);
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuDeviceTotalMem_v2 (size_t *bytes, CUdevice dev)
{
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  *bytes = (size_t) 80 << 30;
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuDeviceGetAttribute (int *value, int attrib, CUdevice dev)
{
  /* an H100 SXM's answers, for what GstCuda and our code ask */
  static const struct { int attr, value; } attrs[] = {
    {1, 1024}, {2, 1024}, {3, 1024}, {4, 64}, {5, 2147483647}, {6, 65535}, {7, 65535},
    {8, 49152}, {9, 65536}, {10, 32}, {11, 2147483647}, {12, 65536}, {13, 1980000},
    {14, 512}, {15, 1}, {16, 132}, {17, 0}, {18, 0}, {19, 1}, {20, 0}, {30, 512},
    {31, 1}, {32, 1}, {33, 1}, {34, 0}, {35, 0}, {36, 2619000}, {37, 5120},
    {38, 52428800}, {39, 2048}, {40, 3}, {41, 1}, {50, 0}, {51, 32}, {75, 9}, {76, 0},
    {78, 1}, {81, 233472}, {82, 65536}, {83, 1}, {97, 227 * 1024},
  };
  ENTER ();
  if (!value)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (dev != 0)
    LEAVE (CUDA_ERROR_INVALID_DEVICE);
  *value = 0;
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    if (attrs[i].attr == attrib)
      *value = attrs[i].value;
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuDeviceCanAccessPeer (int *can, CUdevice dev, CUdevice peer)
{
  if (!can)
    return CUDA_ERROR_INVALID_VALUE;
  *can = 0;
  return CUDA_SUCCESS;
}

/* ---- contexts ---------------------------------------------------------------- */
EXPORT CUresult
cuCtxCreate_v2 (CUcontext * pctx, unsigned int flags, CUdevice dev)
{
  ENTER ();
  if (!pctx)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (dev != 0)
    LEAVE (CUDA_ERROR_INVALID_DEVICE);
  if (ctx_depth >= CTX_STACK)
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  CUcontext c = calloc (1, sizeof *c);
  if (!c)
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  c->device = dev;
  c->flags = flags;
  ctx_stack[ctx_depth++] = c;
  *pctx = c;
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuCtxDestroy_v2 (CUcontext ctx)
{
  if (!ctx)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock (&lock);
  while (ctx->nstreams > 0)
    stream_free (ctx->streams[ctx->nstreams - 1]);
  free (ctx->streams);
  for (int i = 0; i < ctx_depth; i++)
    if (ctx_stack[i] == ctx) {
      memmove (&ctx_stack[i], &ctx_stack[i + 1], (ctx_depth - i - 1) * sizeof ctx);
      ctx_depth--;
      i--;
    }
  free (ctx);
  pthread_mutex_unlock (&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuCtxPushCurrent_v2 (CUcontext ctx)
{
  if (!ctx)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx_depth >= CTX_STACK)
    return CUDA_ERROR_OUT_OF_MEMORY;
  ctx_stack[ctx_depth++] = ctx;
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuCtxPopCurrent_v2 (CUcontext * pctx)
{
  if (ctx_depth == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  CUcontext c = ctx_stack[--ctx_depth];
  if (pctx)
    *pctx = c;
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuCtxGetCurrent (CUcontext * pctx)
{
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = current_ctx ();
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuCtxSetCurrent (CUcontext ctx)
{
  if (ctx_depth == 0) {
    if (ctx)
      ctx_stack[ctx_depth++] = ctx;
  } else if (ctx) {
    ctx_stack[ctx_depth - 1] = ctx;
  } else {
    ctx_depth--;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuCtxGetDevice (CUdevice * dev)
{
  if (!dev)
    return CUDA_ERROR_INVALID_VALUE;
  if (!current_ctx ())
    return CUDA_ERROR_INVALID_CONTEXT;
  *dev = current_ctx ()->device;
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuCtxSynchronize (void)
{
  ENTER ();
  CUcontext ctx = current_ctx ();
  if (!ctx)
    LEAVE (CUDA_ERROR_INVALID_CONTEXT);
  CUresult r = CUDA_SUCCESS;
  for (size_t i = 0; i < ctx->nstreams; i++) {
    CUresult e = stream_drain (ctx->streams[i]);
    if (e && !r)
      r = e;
  }
  LEAVE (sticky ? sticky : r);
}

EXPORT CUresult
cuCtxEnablePeerAccess (CUcontext peer, unsigned int flags)
{
  return CUDA_ERROR_NOT_SUPPORTED;
}

EXPORT CUresult
cuCtxDisablePeerAccess (CUcontext peer)
{
  return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- memory ------------------------------------------------------------------ */
static CUresult
mem_alloc (void **p, size_t size, int pinned)
{
  ENTER ();
  if (!p)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (!current_ctx ())
    LEAVE (CUDA_ERROR_INVALID_CONTEXT);
  if (fault_fires (GPUSIM_FAULT_ALLOC))
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  *p = alloc_add (size, pinned);
  LEAVE (*p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

EXPORT CUresult
cuMemAlloc_v2 (CUdeviceptr * dptr, size_t size)
{
  void *p = NULL;
  if (!dptr || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = mem_alloc (&p, size, 0);
  if (r == CUDA_SUCCESS)
    *dptr = (CUdeviceptr) (uintptr_t) p;
  return r;
}

EXPORT CUresult
cuMemAllocPitch_v2 (CUdeviceptr * dptr, size_t * pitch, size_t width, size_t height,
    unsigned int elem)
{
  if (!dptr || !pitch || width == 0 || height == 0)
    return CUDA_ERROR_INVALID_VALUE;
  *pitch = (width + 511) & ~(size_t) 511;
  return cuMemAlloc_v2 (dptr, *pitch * height);
}

EXPORT CUresult
cuMemFree_v2 (CUdeviceptr dptr)
{
  if (!dptr)
    return CUDA_SUCCESS;
  pthread_mutex_lock (&lock);
  /* memory still in use by queued work is freed once the device is idle,
   * as cuMemFree synchronises */
  CUcontext ctx = current_ctx ();
  if (ctx)
    for (size_t i = 0; i < ctx->nstreams; i++)
      stream_drain (ctx->streams[i]);
  int ok = alloc_remove ((uintptr_t) dptr, 0);
  pthread_mutex_unlock (&lock);
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult
cuMemAllocHost_v2 (void **p, size_t size)
{
  if (!p || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  return mem_alloc (p, size, 1);
}

EXPORT CUresult
cuMemFreeHost (void *p)
{
  pthread_mutex_lock (&lock);
  int ok = alloc_remove ((uintptr_t) p, 1);
  pthread_mutex_unlock (&lock);
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult
cuMemGetInfo_v2 (size_t *free_b, size_t *total)
{
  if (free_b)
    *free_b = (size_t) 79 << 30;
  if (total)
    *total = (size_t) 80 << 30;
  return CUDA_SUCCESS;
}

/* A 2D copy: checked and queued (async), or run in order with the context's
 * work (sync). Pageable host memory is copied at once, as the driver stages
 * it through a bounce buffer before the call returns. */
static CUresult
memcpy2d (const CUDA_MEMCPY2D * c, CUstream hs, int async)
{
  int sp = 0, sd = 0, dp = 0, dd = 0;
  ENTER ();
  if (!c)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (!current_ctx ())
    LEAVE (CUDA_ERROR_INVALID_CONTEXT);
  if (c->WidthInBytes > c->srcPitch && c->Height > 1 && c->srcMemoryType != 0)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (c->WidthInBytes > c->dstPitch && c->Height > 1)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  CUresult r = copy_side (c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes,
      c->srcY, c->srcPitch, c->WidthInBytes, c->Height, &sp, &sd);
  if (r == CUDA_SUCCESS)
    r = copy_side (c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY,
        c->dstPitch, c->WidthInBytes, c->Height, &dp, &dd);
  if (r != CUDA_SUCCESS)
    LEAVE (r);
  if (fault_fires (GPUSIM_FAULT_COPY)) {
    sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    LEAVE (sticky);
  }
  CUDA_MEMCPY2D n = *c;
  if (n.srcMemoryType == CU_MEMORYTYPE_UNIFIED)
    n.srcMemoryType = sd ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (n.dstMemoryType == CU_MEMORYTYPE_UNIFIED)
    n.dstMemoryType = dd ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (n.srcMemoryType == CU_MEMORYTYPE_HOST && !n.srcHost)
    n.srcHost = (const void *) (uintptr_t) n.srcDevice;
  if (n.dstMemoryType == CU_MEMORYTYPE_HOST && !n.dstHost)
    n.dstHost = (void *) (uintptr_t) n.dstDevice;
  if (n.srcMemoryType == CU_MEMORYTYPE_DEVICE)
    n.srcHost = NULL;
  if (n.dstMemoryType == CU_MEMORYTYPE_DEVICE)
    n.dstHost = NULL;
  stats.copies++;
  stats.copy_bytes += (uint64_t) c->WidthInBytes * c->Height;

  struct SimStream *s;
  r = stream_for (hs, &s);
  if (r != CUDA_SUCCESS)
    LEAVE (r);
  int host_pinned = (sd || sp) && (dd || dp);
  SimOp *op = calloc (1, sizeof *op);
  if (!op)
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  op->kind = OP_COPY;
  op->copy = n;
  op->modelled_s = model_copy (&n, sd, dd, host_pinned);
  stream_push (s, op);
  /* synchronous copies, and async ones that touch pageable host memory,
   * are done when the call returns */
  if (!async || !host_pinned)
    r = stream_drain (s);
  LEAVE (r);
}

EXPORT CUresult
cuMemcpy2D_v2 (const CUDA_MEMCPY2D * c)
{
  return memcpy2d (c, NULL, 0);
}

EXPORT CUresult
cuMemcpy2DAsync_v2 (const CUDA_MEMCPY2D * c, CUstream s)
{
  return memcpy2d (c, s, 1);
}

static CUresult
memcpy_linear (void *dst_host, CUdeviceptr dst_dev, const void *src_host,
    CUdeviceptr src_dev, size_t n, CUstream s, int async)
{
  CUDA_MEMCPY2D c = { 0 };
  c.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  c.srcHost = src_host;
  c.srcDevice = src_dev;
  c.srcPitch = n;
  c.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  c.dstHost = dst_host;
  c.dstDevice = dst_dev;
  c.dstPitch = n;
  c.WidthInBytes = n;
  c.Height = n ? 1 : 0;
  return memcpy2d (&c, s, async);
}

EXPORT CUresult
cuMemcpyHtoD_v2 (CUdeviceptr dst, const void *src, size_t n)
{
  return memcpy_linear (NULL, dst, src, 0, n, NULL, 0);
}

EXPORT CUresult
cuMemcpyDtoH_v2 (void *dst, CUdeviceptr src, size_t n)
{
  return memcpy_linear (dst, 0, NULL, src, n, NULL, 0);
}

EXPORT CUresult
cuMemcpyDtoD_v2 (CUdeviceptr dst, CUdeviceptr src, size_t n)
{
  return memcpy_linear (NULL, dst, NULL, src, n, NULL, 0);
}

EXPORT CUresult
cuMemcpyHtoDAsync_v2 (CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
  return memcpy_linear (NULL, dst, src, 0, n, s, 1);
}

EXPORT CUresult
cuMemcpyDtoHAsync_v2 (void *dst, CUdeviceptr src, size_t n, CUstream s)
{
  return memcpy_linear (dst, 0, NULL, src, n, s, 1);
}

/* ---- streams and events ------------------------------------------------------ */
EXPORT CUresult
cuStreamCreate (CUstream * ps, unsigned int flags)
{
  ENTER ();
  if (!ps)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  CUcontext ctx = current_ctx ();
  if (!ctx)
    LEAVE (CUDA_ERROR_INVALID_CONTEXT);
  *ps = stream_new (ctx, flags);
  LEAVE (*ps ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

EXPORT CUresult
cuStreamDestroy (CUstream s)
{
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
    return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock (&lock);
  stream_free (s);
  pthread_mutex_unlock (&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuStreamDestroy_v2 (CUstream s)
{
  return cuStreamDestroy (s);
}

EXPORT CUresult
cuStreamSynchronize (CUstream hs)
{
  struct SimStream *s;
  ENTER ();
  CUresult r = stream_for (hs, &s);
  if (r == CUDA_SUCCESS)
    r = stream_drain (s);
  LEAVE (sticky ? sticky : r);
}

EXPORT CUresult
cuStreamQuery (CUstream hs)
{
  struct SimStream *s;
  ENTER ();
  CUresult r = stream_for (hs, &s);
  if (r == CUDA_SUCCESS)
    r = s->error ? s->error : s->completed < s->submitted ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
  LEAVE (r);
}

EXPORT CUresult
cuEventCreate (CUevent * pe, unsigned int flags)
{
  if (!pe)
    return CUDA_ERROR_INVALID_VALUE;
  *pe = calloc (1, sizeof **pe);
  if (!*pe)
    return CUDA_ERROR_OUT_OF_MEMORY;
  (*pe)->flags = flags;
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuEventDestroy_v2 (CUevent e)
{
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock (&lock);
  /* a recorded event may still be completed by its stream: wait for it */
  if (e->stream)
    while (e->stream->completed < e->seq)
      pthread_cond_wait (&changed, &lock);
  free (e);
  pthread_mutex_unlock (&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuEventRecord (CUevent e, CUstream hs)
{
  struct SimStream *s;
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  ENTER ();
  CUresult r = stream_for (hs, &s);
  if (r != CUDA_SUCCESS)
    LEAVE (r);
  SimOp *op = calloc (1, sizeof *op);
  if (!op)
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  op->kind = OP_EVENT;
  op->event = e;
  e->stream = s;
  e->has_time = 0;
  stream_push (s, op);
  e->seq = op->seq;
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuEventQuery (CUevent e)
{
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  ENTER ();
  LEAVE (!e->stream || e->stream->completed >= e->seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
}

EXPORT CUresult
cuEventSynchronize (CUevent e)
{
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  ENTER ();
  if (e->stream)
    while (e->stream->completed < e->seq)
      pthread_cond_wait (&changed, &lock);
  LEAVE (sticky ? sticky : e->stream ? e->stream->error : CUDA_SUCCESS);
}

EXPORT CUresult
cuEventElapsedTime_v2 (float *ms, CUevent a, CUevent b)
{
  if (!ms || !a || !b)
    return CUDA_ERROR_INVALID_VALUE;
  ENTER ();
  if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
    LEAVE (CUDA_ERROR_INVALID_HANDLE);
  if (!a->stream || !b->stream)
    LEAVE (CUDA_ERROR_INVALID_HANDLE);
  if (!a->has_time || !b->has_time)
    LEAVE (CUDA_ERROR_NOT_READY);
  *ms = (float) ((b->time_s - a->time_s) * 1e3);
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuEventElapsedTime (float *ms, CUevent a, CUevent b)
{
  return cuEventElapsedTime_v2 (ms, a, b);
}

EXPORT CUresult
cuStreamWaitEvent (CUstream hs, CUevent e, unsigned int flags)
{
  struct SimStream *s;
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  ENTER ();
  CUresult r = stream_for (hs, &s);
  if (r != CUDA_SUCCESS)
    LEAVE (r);
  if (e->stream && e->stream != s && e->stream->completed < e->seq) {
    SimOp *op = calloc (1, sizeof *op);
    if (!op)
      LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
    op->kind = OP_WAIT;
    op->wait_stream = e->stream;
    op->until = e->seq;
    stream_push (s, op);
  }
  LEAVE (CUDA_SUCCESS);
}

/* ---- modules and launches -------------------------------------------------- */
/* An image we accept: a fatbin (its wrapper's or its own magic), an ELF
 * cubin or PTX text, as the driver does. */
static int
image_known (const void *image)
{
  uint32_t magic;
  memcpy (&magic, image, 4);
  return magic == 0xBA55ED50u || magic == 0x466243B1u || magic == 0x464C457Fu ||
      strncmp (image, "//", 2) == 0 || strncmp (image, ".version", 8) == 0;
}

EXPORT CUresult
cuModuleLoadData (CUmodule * pm, const void *image)
{
  ENTER ();
  if (!pm || !image)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (!current_ctx ())
    LEAVE (CUDA_ERROR_INVALID_CONTEXT);
  if (!image_known (image))
    LEAVE (CUDA_ERROR_INVALID_IMAGE);
  *pm = calloc (1, sizeof **pm);
  if (!*pm)
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  (*pm)->image = image;
  LEAVE (CUDA_SUCCESS);
}

EXPORT CUresult
cuModuleUnload (CUmodule m)
{
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  free (m);
  return CUDA_SUCCESS;
}

EXPORT CUresult
cuModuleGetFunction (CUfunction * pf, CUmodule m, const char *name)
{
  if (!pf || !m || !name)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof sim_kernels / sizeof sim_kernels[0]; i++)
    if (strcmp (sim_kernels[i].name, name) == 0) {
      *pf = &sim_kernels[i];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

static int
known_kernel (CUfunction f)
{
  return f >= &sim_kernels[0] && f < &sim_kernels[sizeof sim_kernels / sizeof sim_kernels[0]];
}

EXPORT CUresult
cuLaunchKernel (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
    unsigned by, unsigned bz, unsigned shmem, CUstream hs, void **params, void **extra)
{
  struct SimStream *s;
  ENTER ();
  if (!known_kernel (f))
    LEAVE (CUDA_ERROR_INVALID_HANDLE);
  if (!current_ctx ())
    LEAVE (CUDA_ERROR_INVALID_CONTEXT);
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
      (uint64_t) bx * by * bz > 1024 || gy > 65535 || gz > 65535)
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  if (fault_fires (GPUSIM_FAULT_LAUNCH))
    LEAVE (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  SimOp *op = calloc (1, sizeof *op);
  if (!op)
    LEAVE (CUDA_ERROR_OUT_OF_MEMORY);
  op->kind = OP_LAUNCH;
  op->kernel = f;
  op->grid[0] = gx; op->grid[1] = gy; op->grid[2] = gz;
  op->block[0] = bx; op->block[1] = by; op->block[2] = bz;
  /* the parameters are copied now, as the driver does: the caller may
   * reuse its argument storage as soon as the call returns */
  size_t off = 0;
  if (params) {
    for (size_t i = 0; i < f->nparams; i++) {
      size_t sz = f->param_size[i], al = sz >= 8 ? 8 : sz;
      off = (off + al - 1) & ~(al - 1);
      memcpy (op->params + off, params[i], sz);
      off += sz;
    }
  } else if (extra) {
    /* CU_LAUNCH_PARAM_BUFFER_POINTER (1), _SIZE (2), _END (0) */
    void *buf = NULL;
    size_t size = 0;
    for (size_t i = 0; extra[i] != (void *) 0; i += 2) {
      if (extra[i] == (void *) 1)
        buf = extra[i + 1];
      else if (extra[i] == (void *) 2)
        size = *(size_t *) extra[i + 1];
    }
    if (!buf || size > sizeof op->params) {
      free (op);
      LEAVE (CUDA_ERROR_INVALID_VALUE);
    }
    memcpy (op->params, buf, size);
  } else if (f->nparams) {
    free (op);
    LEAVE (CUDA_ERROR_INVALID_VALUE);
  }
  CUresult r = stream_for (hs, &s);
  if (r != CUDA_SUCCESS) {
    free (op);
    LEAVE (r);
  }
  stream_push (s, op);
  LEAVE (CUDA_SUCCESS);
}

/* ---- what we do not simulate ----------------------------------------------- */
#define NOT_SUPPORTED(name) EXPORT CUresult name (void) { return CUDA_ERROR_NOT_SUPPORTED; }
NOT_SUPPORTED (cuTexObjectCreate)
NOT_SUPPORTED (cuTexObjectDestroy)
NOT_SUPPORTED (cuGLGetDevices_v2)
NOT_SUPPORTED (cuGraphicsGLRegisterBuffer)
NOT_SUPPORTED (cuGraphicsGLRegisterImage)
NOT_SUPPORTED (cuGraphicsMapResources)
NOT_SUPPORTED (cuGraphicsResourceGetMappedPointer_v2)
NOT_SUPPORTED (cuGraphicsResourceSetMapFlags_v2)
NOT_SUPPORTED (cuGraphicsSubResourceGetMappedArray)
NOT_SUPPORTED (cuGraphicsUnmapResources)
NOT_SUPPORTED (cuGraphicsUnregisterResource)

/* ---- errors ---------------------------------------------------------------- */
static const struct { CUresult r; const char *name, *text; } errors[] = {
  {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
  {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
  {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
  {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
  {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
  {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
  {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
  {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
  {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
  {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
  {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
  {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
      "an illegal memory access was encountered"},
  {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
      "too many resources requested for launch"},
  {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
  {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
  {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult
error_text (CUresult r, const char **s, int name)
{
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].r == r) {
      *s = name ? errors[i].name : errors[i].text;
      return CUDA_SUCCESS;
    }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult
cuGetErrorName (CUresult r, const char **s)
{
  return error_text (r, s, 1);
}

EXPORT CUresult
cuGetErrorString (CUresult r, const char **s)
{
  return error_text (r, s, 0);
}

/* ---- gpusim.h --------------------------------------------------------------- */
EXPORT void
gpusim_fault_arm (GpusimFault kind, uint32_t nth)
{
  if (kind >= GPUSIM_FAULT_LAST)
    return;
  pthread_mutex_lock (&lock);
  fault_countdown[kind] = nth;
  pthread_mutex_unlock (&lock);
}

EXPORT void
gpusim_hold (int on)
{
  pthread_mutex_lock (&lock);
  /* a held device starts nothing, so the modelled device sees the work
   * queued meanwhile arrive when it is let go: however long the host took
   * between the queuing calls (a loaded machine, a sanitizer) is not
   * device time in the events' clock */
  if (held && !on) {
    double release = now_s ();
    for (struct SimStream *s = all_streams; s; s = s->all_next)
      for (SimOp *op = s->head; op; op = op->next)
        if (op->submit_s < release)
          op->submit_s = release;
  }
  held = on;
  pthread_cond_broadcast (&changed);
  pthread_mutex_unlock (&lock);
}

EXPORT void
gpusim_reset (void)
{
  pthread_mutex_lock (&lock);
  memset (fault_countdown, 0, sizeof fault_countdown);
  sticky = CUDA_SUCCESS;
  for (struct SimStream *s = all_streams; s; s = s->all_next)
    s->error = CUDA_SUCCESS;
  pthread_mutex_unlock (&lock);
}

EXPORT void
gpusim_get_stats (GpusimStats * out)
{
  pthread_mutex_lock (&lock);
  *out = stats;
  pthread_mutex_unlock (&lock);
}

EXPORT int
gpusim_is_simulated (void)
{
  return 1;
}
