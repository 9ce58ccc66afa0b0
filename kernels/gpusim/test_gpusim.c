/* test_gpusim.c: the simulated device's own promises, through the driver
 * API as a program loads it (dlopen of libcuda.so.1, found first on
 * LD_LIBRARY_PATH): work queued on a stream is not done when the call
 * returns (a result read before its event completes is incomplete), the
 * legacy default stream orders itself after the other streams, device
 * memory is apart from host memory, an unknown kernel is refused, the
 * timing model's durations, and every fault on demand. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpusim.h"
#include "rlnc/rlnc.h"
#include "rlnc/rlnc_cuda.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUhandle;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_ILLEGAL_ADDRESS 700
#define CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES 701
#define CUDA_ERROR_LAUNCH_FAILED 719

static struct {
  CUresult (*Init) (unsigned);
  CUresult (*CtxCreate) (CUhandle *, unsigned, int);
  CUresult (*CtxDestroy) (CUhandle);
  CUresult (*MemAlloc) (CUdeviceptr *, size_t);
  CUresult (*MemFree) (CUdeviceptr);
  CUresult (*MemAllocHost) (void **, size_t);
  CUresult (*MemFreeHost) (void *);
  CUresult (*HtoDAsync) (CUdeviceptr, const void *, size_t, CUhandle);
  CUresult (*DtoHAsync) (void *, CUdeviceptr, size_t, CUhandle);
  CUresult (*HtoD) (CUdeviceptr, const void *, size_t);
  CUresult (*StreamCreate) (CUhandle *, unsigned);
  CUresult (*StreamDestroy) (CUhandle);
  CUresult (*StreamSynchronize) (CUhandle);
  CUresult (*StreamQuery) (CUhandle);
  CUresult (*EventCreate) (CUhandle *, unsigned);
  CUresult (*EventDestroy) (CUhandle);
  CUresult (*EventRecord) (CUhandle, CUhandle);
  CUresult (*EventQuery) (CUhandle);
  CUresult (*EventSynchronize) (CUhandle);
  CUresult (*EventElapsedTime) (float *, CUhandle, CUhandle);
  CUresult (*ModuleLoadData) (CUhandle *, const void *);
  CUresult (*ModuleUnload) (CUhandle);
  CUresult (*ModuleGetFunction) (CUhandle *, CUhandle, const char *);
  CUresult (*LaunchKernel) (CUhandle, unsigned, unsigned, unsigned, unsigned, unsigned,
      unsigned, unsigned, CUhandle, void **, void **);
  void (*fault_arm) (GpusimFault, uint32_t);
  void (*reset) (void);
  void (*hold) (int);
  void (*get_stats) (GpusimStats *);
} cu;

static int failures;

#define CHECK(cond, ...) \
  do { \
    if (cond) { printf ("ok - "); } else { printf ("FAIL - "); failures++; } \
    printf (__VA_ARGS__); printf ("\n"); \
  } while (0)
#define MUST(call) \
  do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { \
    printf ("FAIL - %s: %d\n", #call, r_); exit (1); } } while (0)

static void *
sym (void *lib, const char *name)
{
  void *p = dlsym (lib, name);
  if (!p) {
    printf ("FAIL - libcuda.so.1 has no %s: not the simulated device\n", name);
    exit (1);
  }
  return p;
}

static void
load (void)
{
  void *lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf ("FAIL - dlopen libcuda.so.1: %s\n", dlerror ());
    exit (1);
  }
  int (*is_sim) (void) = (int (*) (void)) dlsym (lib, "gpusim_is_simulated");
  if (!is_sim || !is_sim ()) {
    printf ("FAIL - the libcuda.so.1 found is not the simulated device\n");
    exit (1);
  }
#define S(f, n) *(void **) &cu.f = sym (lib, n)
  S (Init, "cuInit"); S (CtxCreate, "cuCtxCreate_v2"); S (CtxDestroy, "cuCtxDestroy_v2");
  S (MemAlloc, "cuMemAlloc_v2"); S (MemFree, "cuMemFree_v2");
  S (MemAllocHost, "cuMemAllocHost_v2"); S (MemFreeHost, "cuMemFreeHost");
  S (HtoDAsync, "cuMemcpyHtoDAsync_v2"); S (DtoHAsync, "cuMemcpyDtoHAsync_v2");
  S (HtoD, "cuMemcpyHtoD_v2");
  S (StreamCreate, "cuStreamCreate"); S (StreamDestroy, "cuStreamDestroy");
  S (StreamSynchronize, "cuStreamSynchronize"); S (StreamQuery, "cuStreamQuery");
  S (EventCreate, "cuEventCreate"); S (EventDestroy, "cuEventDestroy_v2");
  S (EventRecord, "cuEventRecord"); S (EventQuery, "cuEventQuery");
  S (EventSynchronize, "cuEventSynchronize");
  S (EventElapsedTime, "cuEventElapsedTime_v2");
  S (ModuleLoadData, "cuModuleLoadData"); S (ModuleUnload, "cuModuleUnload");
  S (ModuleGetFunction, "cuModuleGetFunction");
  S (LaunchKernel, "cuLaunchKernel");
  S (fault_arm, "gpusim_fault_arm"); S (reset, "gpusim_reset"); S (hold, "gpusim_hold");
  S (get_stats, "gpusim_get_stats");
#undef S
}

/* One RLNC product on the device: coefficients, sources and the job in,
 * the product out, all queued on one stream. */
typedef struct {
  uint32_t m, n, k;
  uint8_t *host;                /* pinned: coefs | src | out | job */
  CUdeviceptr dev;
  size_t coefs_off, src_off, out_off, job_off, size;
  uint8_t *want;
} Product;

static void
product_new (Product * p, uint32_t m, uint32_t n, uint32_t k, uint32_t seed)
{
  p->m = m;
  p->n = n;
  p->k = k;
  p->coefs_off = 0;
  p->src_off = ((size_t) n * m + 255) & ~(size_t) 255;
  p->out_off = p->src_off + (((size_t) m * k + 255) & ~(size_t) 255);
  p->job_off = p->out_off + (((size_t) n * k + 255) & ~(size_t) 255);
  p->size = p->job_off + sizeof (RlncGpuProduct);
  MUST (cu.MemAllocHost ((void **) &p->host, p->size));
  MUST (cu.MemAlloc (&p->dev, p->size));
  memset (p->host, 0, p->size);
  srand (seed);
  for (size_t i = 0; i < p->out_off; i++)
    p->host[i] = (uint8_t) rand ();
  RlncGpuProduct job = { p->dev + p->coefs_off, p->dev + p->src_off, p->dev + p->out_off,
    k, k, k, m, n };
  memcpy (p->host + p->job_off, &job, sizeof job);
  p->want = malloc ((size_t) n * k);
  const uint8_t *src[RLNC_MAX_M];
  uint8_t *out[RLNC_MAX_M];
  for (uint32_t i = 0; i < m; i++)
    src[i] = p->host + p->src_off + (size_t) i * k;
  for (uint32_t j = 0; j < n; j++)
    out[j] = p->want + (size_t) j * k;
  rlnc_encode_ref (k, (int) m, (int) n, p->host + p->coefs_off, src, out);
}

static void
product_queue (Product * p, CUhandle func, CUhandle stream)
{
  CUdeviceptr jobs = p->dev + p->job_off;
  uint32_t njobs = 1;
  void *args[] = { &jobs, &njobs };
  MUST (cu.HtoDAsync (p->dev, p->host, p->out_off, stream));
  MUST (cu.HtoDAsync (jobs, p->host + p->job_off, sizeof (RlncGpuProduct), stream));
  MUST (cu.LaunchKernel (func, rlnc_gpu_blocks_x (p->n, p->k), 1, 1, RLNC_GPU_THREADS, 1, 1,
          0, stream, args, NULL));
  MUST (cu.DtoHAsync (p->host + p->out_off, p->dev + p->out_off, (size_t) p->n * p->k,
          stream));
}

static int
product_right (const Product * p)
{
  return memcmp (p->host + p->out_off, p->want, (size_t) p->n * p->k) == 0;
}

static void
product_free (Product * p)
{
  cu.MemFree (p->dev);
  cu.MemFreeHost (p->host);
  free (p->want);
}

int
main (void)
{
  CUhandle ctx, mod, func, s1, s2, e0, e1;
  /* any image of the right kind: the kernels are the simulator's own */
  static const uint32_t fatbin_magic[4] = { 0xBA55ED50u, 0x00100001u, 0, 0 };

  load ();
  MUST (cu.Init (0));
  MUST (cu.CtxCreate (&ctx, 0, 0));
  MUST (cu.ModuleLoadData (&mod, fatbin_magic));
  MUST (cu.ModuleGetFunction (&func, mod, RLNC_GPU_KERNEL_NAME));
  MUST (cu.StreamCreate (&s1, 0));
  MUST (cu.StreamCreate (&s2, 0));
  MUST (cu.EventCreate (&e0, 0));
  MUST (cu.EventCreate (&e1, 0));

  {
    CUhandle f;
    CHECK (cu.ModuleGetFunction (&f, mod, "no_such_kernel") == CUDA_ERROR_NOT_FOUND,
        "an unknown kernel is refused");
    CHECK (cu.ModuleLoadData (&f, "not an image") != CUDA_SUCCESS,
        "an image that is no fatbin, cubin or PTX is refused");
  }

  /* asynchrony: with the streams held, the queued work is visibly not done */
  {
    Product p;
    product_new (&p, 32, 48, 1500, 1);
    cu.hold (1);
    MUST (cu.EventRecord (e0, s1));
    product_queue (&p, func, s1);
    MUST (cu.EventRecord (e1, s1));
    CHECK (cu.EventQuery (e1) == CUDA_ERROR_NOT_READY,
        "an event after queued work is not complete when the calls return");
    CHECK (cu.StreamQuery (s1) == CUDA_ERROR_NOT_READY, "the stream is busy");
    CHECK (!product_right (&p), "the output read before the event completes is "
        "not the product");
    cu.hold (0);
    MUST (cu.EventSynchronize (e1));
    CHECK (cu.EventQuery (e1) == CUDA_SUCCESS, "the event completes");
    CHECK (product_right (&p), "after the event the output is the product, byte for "
        "byte with rlnc_encode_ref");
    product_free (&p);
  }

  /* the legacy default stream runs after what the other streams queued */
  {
    Product p;
    uint8_t *probe;
    MUST (cu.MemAllocHost ((void **) &probe, 16));
    product_new (&p, 16, 16, 4096, 2);
    cu.hold (1);
    product_queue (&p, func, s2);
    /* queued on the default stream while s2's work waits: it must run
     * after it, although its own copy is much shorter */
    MUST (cu.DtoHAsync (probe, p.dev + p.out_off, 16, NULL));
    cu.hold (0);
    MUST (cu.StreamSynchronize (NULL));
    CHECK (memcmp (probe, p.want, 16) == 0,
        "the default stream ran after the product queued on another stream");
    MUST (cu.StreamSynchronize (s2));
    product_free (&p);
    cu.MemFreeHost (probe);
  }

  /* device memory is apart: a kernel given host memory faults */
  {
    Product p;
    product_new (&p, 8, 8, 64, 3);
    RlncGpuProduct bad = { (uintptr_t) (p.host + p.coefs_off), p.dev + p.src_off,
      p.dev + p.out_off, 64, 64, 64, 8, 8 };
    memcpy (p.host + p.job_off, &bad, sizeof bad);
    product_queue (&p, func, s1);
    CHECK (cu.StreamSynchronize (s1) == CUDA_ERROR_ILLEGAL_ADDRESS,
        "a host pointer handed to a kernel is an illegal address");
    cu.reset ();
    CHECK (cu.HtoD ((CUdeviceptr) (uintptr_t) p.want, p.host, 16) == CUDA_ERROR_INVALID_VALUE,
        "a copy to host memory named as device memory is refused");
    product_free (&p);
  }

  /* the timing model: a 64 MiB copy from pinned memory takes its modelled
   * time (H100: 8 us + 64 MiB / 53 GB/s = 1.27 ms) */
  {
    const size_t big = 64u << 20;
    void *h;
    CUdeviceptr d;
    float ms = 0;
    MUST (cu.MemAllocHost (&h, big));
    MUST (cu.MemAlloc (&d, big));
    memset (h, 1, big);
    /* queued while held, so that a busy host between the calls does not
     * show as device time */
    cu.hold (1);
    MUST (cu.EventRecord (e0, s1));
    MUST (cu.HtoDAsync (d, h, big, s1));
    MUST (cu.EventRecord (e1, s1));
    cu.hold (0);
    MUST (cu.EventSynchronize (e1));
    MUST (cu.EventElapsedTime (&ms, e0, e1));
    const char *model = getenv ("GPUSIM_MODEL");
    if (model && !strcmp (model, "zero"))
      CHECK (ms < 1.0, "the zero model: a 64 MiB copy takes no modelled time (%.3f ms)",
          ms);
    else
      CHECK (ms > 1.26 && ms < 3.0, "the H100 model: a 64 MiB copy in %.3f ms of "
          "modelled time (8 us + 64 MiB / 53 GB/s = 1.27 ms), whatever the host's "
          "memcpy took", ms);
    cu.MemFree (d);
    cu.MemFreeHost (h);
  }

  /* faults on demand */
  {
    CUdeviceptr d;
    void *h;
    cu.fault_arm (GPUSIM_FAULT_ALLOC, 2);
    MUST (cu.MemAlloc (&d, 64));
    CHECK (cu.MemAllocHost (&h, 64) == CUDA_ERROR_OUT_OF_MEMORY,
        "the second allocation after arming fails");
    CHECK (cu.MemAllocHost (&h, 64) == CUDA_SUCCESS, "and the next one succeeds");
    cu.MemFreeHost (h);
    cu.MemFree (d);

    Product p;
    product_new (&p, 8, 8, 256, 4);
    cu.fault_arm (GPUSIM_FAULT_LAUNCH, 1);
    CUdeviceptr jobs = p.dev + p.job_off;
    uint32_t one = 1;
    void *args[] = { &jobs, &one };
    CHECK (cu.LaunchKernel (func, 1, 1, 1, RLNC_GPU_THREADS, 1, 1, 0, s1, args, NULL) ==
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "an armed launch fails");
    product_queue (&p, func, s1);
    MUST (cu.StreamSynchronize (s1));
    CHECK (product_right (&p), "the launch after it runs");

    cu.fault_arm (GPUSIM_FAULT_COPY, 1);
    CHECK (cu.HtoDAsync (p.dev, p.host, 64, s1) == CUDA_ERROR_ILLEGAL_ADDRESS,
        "an armed copy fails");
    CHECK (cu.StreamSynchronize (s1) == CUDA_ERROR_ILLEGAL_ADDRESS,
        "and the context stays broken, as after a real fault");
    cu.reset ();

    cu.fault_arm (GPUSIM_FAULT_LOST, 2);
    cu.hold (1);                /* the calls queue before the device goes */
    product_queue (&p, func, s1);
    cu.hold (0);
    CHECK (cu.StreamSynchronize (s1) == CUDA_ERROR_LAUNCH_FAILED,
        "a device lost in the middle of a stream fails its work");
    CHECK (cu.MemAlloc (&d, 64) == CUDA_ERROR_LAUNCH_FAILED, "and every call after it");
    cu.reset ();
    product_free (&p);
  }

  GpusimStats st;
  cu.get_stats (&st);
  CHECK (st.faults == 4, "every armed fault fired once (%llu)",
      (unsigned long long) st.faults);

  cu.EventDestroy (e0);
  cu.EventDestroy (e1);
  cu.StreamDestroy (s1);
  cu.StreamDestroy (s2);
  cu.ModuleUnload (mod);
  cu.CtxDestroy (ctx);
  cu.get_stats (&st);
  CHECK (st.allocs_live == 0, "nothing left allocated (%llu)",
      (unsigned long long) st.allocs_live);
  printf ("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
