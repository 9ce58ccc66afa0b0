/* cudart.c: the CUDA runtime of the simulated device (gpusim.c), built as
 * a libcudart.so.<major> that the tests put first on the library path next
 * to its libcuda.so.1. The GPU test and bench programs use the runtime API
 * and <<<>>>; the toolkit's libcudart drives the driver through private
 * export tables that no driver of ours has, so their -cudart shared builds
 * run on this one instead. It implements what those programs call, and the
 * registration ABI that nvcc's host code calls for <<<>>> and __constant__
 * variables, on the public driver API alone: a launch maps the host stub to
 * its kernel's name and goes through cuModuleGetFunction and cuLaunchKernel,
 * so the simulator's checks and its asynchrony apply as they do to the
 * plugins. Never installed.
 *
 * A module of its own that loads libcuda.so.1 at run time, as the real
 * runtime does, rather than one library with the driver: a process has one
 * driver whoever else loads it (GstCuda dlopens libcuda.so.1 too), a
 * program without a driver on its path starts and is told
 * cudaErrorInsufficientDriver, and gpusim.c stays the driver alone.
 *
 * Not here: the symbol API (cudaMemcpyToSymbol & co: the driver has no
 * module globals), managed and mapped memory, textures, graphs, builds with
 * the per-thread default stream (the _ptds / _ptsz entry points), more than
 * one device. A program that calls any of them fails to load, on an
 * undefined symbol. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fatbinary_section.h>

#define EXPORT __attribute__ ((visibility ("default")))

/* ---- the driver, loaded at first use ---------------------------------------- */
/* gpusim.c's entry points under their ABI names (cuda.h's macros map the
 * API names onto these versions) */
#define DRIVER_ENTRIES(X) \
  X (cuInit, (unsigned int)) \
  X (cuDriverGetVersion, (int *)) \
  X (cuDeviceGetCount, (int *)) \
  X (cuDeviceGet, (CUdevice *, int)) \
  X (cuDeviceGetName, (char *, int, CUdevice)) \
  X (cuDeviceTotalMem_v2, (size_t *, CUdevice)) \
  X (cuDeviceGetAttribute, (int *, CUdevice_attribute, CUdevice)) \
  X (cuCtxCreate_v2, (CUcontext *, unsigned int, CUdevice)) \
  X (cuCtxPopCurrent_v2, (CUcontext *)) \
  X (cuCtxGetCurrent, (CUcontext *)) \
  X (cuCtxSetCurrent, (CUcontext)) \
  X (cuCtxSynchronize, (void)) \
  X (cuMemAlloc_v2, (CUdeviceptr *, size_t)) \
  X (cuMemFree_v2, (CUdeviceptr)) \
  X (cuMemAllocHost_v2, (void **, size_t)) \
  X (cuMemFreeHost, (void *)) \
  X (cuMemGetInfo_v2, (size_t *, size_t *)) \
  X (cuMemcpy2D_v2, (const CUDA_MEMCPY2D *)) \
  X (cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *, CUstream)) \
  X (cuStreamCreate, (CUstream *, unsigned int)) \
  X (cuStreamDestroy_v2, (CUstream)) \
  X (cuStreamSynchronize, (CUstream)) \
  X (cuStreamQuery, (CUstream)) \
  X (cuStreamWaitEvent, (CUstream, CUevent, unsigned int)) \
  X (cuEventCreate, (CUevent *, unsigned int)) \
  X (cuEventDestroy_v2, (CUevent)) \
  X (cuEventRecord, (CUevent, CUstream)) \
  X (cuEventQuery, (CUevent)) \
  X (cuEventSynchronize, (CUevent)) \
  X (cuEventElapsedTime_v2, (float *, CUevent, CUevent)) \
  X (cuModuleLoadData, (CUmodule *, const void *)) \
  X (cuModuleUnload, (CUmodule)) \
  X (cuModuleGetFunction, (CUfunction *, CUmodule, const char *)) \
  X (cuLaunchKernel, (CUfunction, unsigned int, unsigned int, unsigned int, \
          unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void **, \
          void **))

#define DRIVER_FIELD(name, args) CUresult (*name) args;
static struct {
  DRIVER_ENTRIES (DRIVER_FIELD)
} drv;

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static pthread_once_t context_once = PTHREAD_ONCE_INIT;
static cudaError_t driver_error, context_error;
static CUcontext context;       /* the device's one context, as the primary one */

/* what cudaGetLastError returns, per thread as the runtime keeps it */
static __thread cudaError_t last_error;

static cudaError_t
from_cu (CUresult r)
{
  switch (r) {
    case CUDA_SUCCESS:
      return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE:
      return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED:
      return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED:
      return cudaErrorCudartUnloading;
    case CUDA_ERROR_NO_DEVICE:
      return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE:
      return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_IMAGE:
      return cudaErrorInvalidKernelImage;
    case CUDA_ERROR_INVALID_CONTEXT:
      return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return cudaErrorNoKernelImageForDevice;
    case CUDA_ERROR_INVALID_HANDLE:
      return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND:
      return cudaErrorSymbolNotFound;
    case CUDA_ERROR_NOT_READY:
      return cudaErrorNotReady;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      return cudaErrorIllegalAddress;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return cudaErrorLaunchOutOfResources;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return cudaErrorLaunchTimeout;
    case CUDA_ERROR_LAUNCH_FAILED:
      return cudaErrorLaunchFailure;
    case CUDA_ERROR_NOT_PERMITTED:
      return cudaErrorNotPermitted;
    case CUDA_ERROR_NOT_SUPPORTED:
      return cudaErrorNotSupported;
    default:
      return cudaErrorUnknown;
  }
}

/* Every entry point returns through here: a failure is the thread's last
 * error; cudaErrorNotReady answers a query and is none. */
static cudaError_t
ret (cudaError_t e)
{
  if (e != cudaSuccess && e != cudaErrorNotReady)
    last_error = e;
  return e;
}

static void
driver_init (void)
{
  const char *missing = NULL;
  int version = 0, count = 0;
  CUresult r;
  void *h = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);

  if (!h) {
    driver_error = cudaErrorInsufficientDriver;
    return;
  }
#define DRIVER_LOAD(name, args) \
  if (!(drv.name = (CUresult (*) args) dlsym (h, #name)) && !missing) \
    missing = #name;
  DRIVER_ENTRIES (DRIVER_LOAD)
#undef DRIVER_LOAD
  if (missing) {
    /* not a driver this runtime can run on: say which entry it lacks */
    fprintf (stderr, "gpusim cudart: libcuda.so.1 has no %s\n", missing);
    driver_error = cudaErrorInsufficientDriver;
    return;
  }
  if (drv.cuDriverGetVersion (&version) != CUDA_SUCCESS || version < CUDART_VERSION) {
    driver_error = cudaErrorInsufficientDriver;
    return;
  }
  r = drv.cuInit (0);
  if (r == CUDA_SUCCESS)
    r = drv.cuDeviceGetCount (&count);
  driver_error = r != CUDA_SUCCESS ? from_cu (r) : count == 0 ? cudaErrorNoDevice : cudaSuccess;
}

static cudaError_t
driver_ready (void)
{
  pthread_once (&driver_once, driver_init);
  return driver_error;
}

/* The context is made once and left off the making thread's stack: each
 * thread gets it made current on its first call, unless it has a current
 * context of its own, which the runtime then uses (as with the primary
 * context of a real device). */
static void
context_init (void)
{
  CUdevice dev;
  CUcontext prev;
  CUresult r = drv.cuDeviceGet (&dev, 0);

  if (r == CUDA_SUCCESS)
    r = drv.cuCtxCreate_v2 (&context, 0, dev);
  if (r == CUDA_SUCCESS)
    r = drv.cuCtxPopCurrent_v2 (&prev);
  context_error = from_cu (r);
}

static cudaError_t
context_current (void)
{
  CUcontext cur = NULL;
  cudaError_t e = driver_ready ();

  if (e != cudaSuccess)
    return e;
  pthread_once (&context_once, context_init);
  if (context_error != cudaSuccess)
    return context_error;
  if (drv.cuCtxGetCurrent (&cur) == CUDA_SUCCESS && cur)
    return cudaSuccess;
  return from_cu (drv.cuCtxSetCurrent (context));
}

/* ---- registration: what nvcc's host code tells us before main ------------ */
typedef struct RtFatbin {
  const void *image;
  CUmodule module;              /* loaded at the first launch of one of its kernels */
  cudaError_t load_error;
  struct RtFatbin *next;
} RtFatbin;

typedef struct RtKernel {
  RtFatbin *fatbin;
  const void *host_fun;         /* the host stub <<<>>> and cudaLaunchKernel name it by */
  const char *name;             /* the device function's name in the module */
  CUfunction function;
  int resolved;
  cudaError_t error;
  struct RtKernel *next;
} RtKernel;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static RtFatbin *fatbins;
static RtKernel *kernels;

EXPORT void **
__cudaRegisterFatBinary (void *fat_cubin)
{
  const __fatBinC_Wrapper_t *w = fat_cubin;
  RtFatbin *f = calloc (1, sizeof *f);

  if (!f)
    return NULL;                /* its kernels stay unknown: their launches fail */
  /* the driver takes the fatbin inside nvcc's wrapper */
  f->image = w && w->magic == FATBINC_MAGIC ? (const void *) w->data : fat_cubin;
  pthread_mutex_lock (&reg_lock);
  f->next = fatbins;
  fatbins = f;
  pthread_mutex_unlock (&reg_lock);
  return (void **) f;
}

/* Modules load lazily, at the first launch that needs one, as the
 * runtime's lazy loading does: nothing to do when registration ends. */
EXPORT void
__cudaRegisterFatBinaryEnd (void **handle)
{
}

EXPORT void
__cudaUnregisterFatBinary (void **handle)
{
  RtFatbin *f = (RtFatbin *) handle, **pf;
  RtKernel **pk;

  if (!f)
    return;
  pthread_mutex_lock (&reg_lock);
  for (pk = &kernels; *pk;) {
    if ((*pk)->fatbin == f) {
      RtKernel *k = *pk;
      *pk = k->next;
      free (k);
    } else {
      pk = &(*pk)->next;
    }
  }
  for (pf = &fatbins; *pf; pf = &(*pf)->next)
    if (*pf == f) {
      *pf = f->next;
      break;
    }
  pthread_mutex_unlock (&reg_lock);
  if (f->module)
    drv.cuModuleUnload (f->module);
  free (f);
}

EXPORT void
__cudaRegisterFunction (void **handle, const char *host_fun, char *device_fun,
    const char *device_name, int thread_limit, uint3 * tid, uint3 * bid, dim3 * bdim,
    dim3 * gdim, int *wsize)
{
  RtKernel *k;

  if (!handle || !host_fun || !device_fun || !(k = calloc (1, sizeof *k)))
    return;
  k->fatbin = (RtFatbin *) handle;
  k->host_fun = host_fun;
  k->name = device_fun;
  pthread_mutex_lock (&reg_lock);
  k->next = kernels;
  kernels = k;
  pthread_mutex_unlock (&reg_lock);
}

/* A __device__ or __constant__ variable. The simulated kernels keep their
 * own copy of what ours hold (the AES tables), and nothing here reads or
 * writes one (no symbol API), so there is nothing to keep. */
EXPORT void
__cudaRegisterVar (void **handle, char *host_var, char *device_address,
    const char *device_name, int ext, size_t size, int constant, int global)
{
}

/* lock held */
static RtKernel *
kernel_by_host (const void *host_fun)
{
  for (RtKernel * k = kernels; k; k = k->next)
    if (k->host_fun == host_fun)
      return k;
  return NULL;
}

/* The kernel's driver function, resolved once; the current context is set. */
static cudaError_t
kernel_resolve (RtKernel * k, CUfunction * f)
{
  cudaError_t e;

  pthread_mutex_lock (&reg_lock);
  if (!k->resolved) {
    RtFatbin *fb = k->fatbin;
    if (!fb->module && fb->load_error == cudaSuccess) {
      CUresult r = drv.cuModuleLoadData (&fb->module, fb->image);
      if (r != CUDA_SUCCESS) {
        fb->module = NULL;
        fb->load_error = from_cu (r);
      }
    }
    if (fb->load_error != cudaSuccess) {
      k->error = fb->load_error;
    } else {
      CUresult r = drv.cuModuleGetFunction (&k->function, fb->module, k->name);
      k->error = r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidDeviceFunction;
      if (r == CUDA_ERROR_NOT_FOUND)
        fprintf (stderr, "gpusim cudart: the simulated device does not run kernel %s\n",
            k->name);
    }
    k->resolved = 1;
  }
  *f = k->function;
  e = k->error;
  pthread_mutex_unlock (&reg_lock);
  return e;
}

/* ---- launches ---------------------------------------------------------------- */
/* <<<grid, block, shmem, stream>>> pushes its configuration, the kernel's
 * host stub pops it; a stack, as a launch's arguments may launch too */
#define CONFIG_DEPTH 16
typedef struct {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
} LaunchConfig;

static __thread LaunchConfig configs[CONFIG_DEPTH];
static __thread int nconfigs;

EXPORT unsigned
__cudaPushCallConfiguration (dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream)
{
  if (nconfigs == CONFIG_DEPTH) {
    ret (cudaErrorInvalidConfiguration);
    return 1;                   /* the launch is skipped */
  }
  configs[nconfigs++] = (LaunchConfig) { grid, block, shmem, stream };
  return 0;
}

EXPORT cudaError_t
__cudaPopCallConfiguration (dim3 * grid, dim3 * block, size_t *shmem, void *stream)
{
  if (nconfigs == 0)
    return ret (cudaErrorMissingConfiguration);
  nconfigs--;
  *grid = configs[nconfigs].grid;
  *block = configs[nconfigs].block;
  *shmem = configs[nconfigs].shmem;
  *(cudaStream_t *) stream = configs[nconfigs].stream;
  return cudaSuccess;
}

/* The stub's handle for its kernel (once per stub): our record of it, the
 * module only loaded at launch. */
EXPORT cudaError_t
__cudaGetKernel (cudaKernel_t * kernel, const void *host_fun)
{
  RtKernel *k;

  if (!kernel)
    return ret (cudaErrorInvalidValue);
  pthread_mutex_lock (&reg_lock);
  k = kernel_by_host (host_fun);
  pthread_mutex_unlock (&reg_lock);
  *kernel = (cudaKernel_t) k;
  return k ? cudaSuccess : ret (cudaErrorInvalidDeviceFunction);
}

static cudaError_t
launch (RtKernel * k, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream)
{
  CUfunction f;
  CUresult r;
  cudaError_t e = context_current ();

  if (e == cudaSuccess)
    e = kernel_resolve (k, &f);
  if (e != cudaSuccess)
    return e;
  r = drv.cuLaunchKernel (f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
      (unsigned int) shmem, stream, args, NULL);
  /* the driver's invalid value is the runtime's bad launch configuration */
  return r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidConfiguration : from_cu (r);
}

EXPORT cudaError_t
__cudaLaunchKernel (cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
    cudaStream_t stream)
{
  RtKernel *k;

  /* only a handle of ours: a failed __cudaGetKernel leaves the stub NULL */
  pthread_mutex_lock (&reg_lock);
  for (k = kernels; k && k != (RtKernel *) kernel; k = k->next) {
  }
  pthread_mutex_unlock (&reg_lock);
  if (!k)
    return ret (cudaErrorInvalidDeviceFunction);
  return ret (launch (k, grid, block, args, shmem, stream));
}

EXPORT cudaError_t
cudaLaunchKernel (const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
    cudaStream_t stream)
{
  RtKernel *k;

  pthread_mutex_lock (&reg_lock);
  k = kernel_by_host (func);
  pthread_mutex_unlock (&reg_lock);
  if (!k)
    return ret (cudaErrorInvalidDeviceFunction);
  return ret (launch (k, grid, block, args, shmem, stream));
}

/* ---- devices ----------------------------------------------------------------- */
EXPORT cudaError_t
cudaGetDeviceCount (int *count)
{
  cudaError_t e;

  if (!count)
    return ret (cudaErrorInvalidValue);
  *count = 0;
  e = driver_ready ();
  if (e == cudaSuccess)
    e = from_cu (drv.cuDeviceGetCount (count));
  return ret (e);
}

static cudaError_t
device_handle (int ordinal, CUdevice * dev)
{
  cudaError_t e = driver_ready ();
  return e != cudaSuccess ? e : from_cu (drv.cuDeviceGet (dev, ordinal));
}

EXPORT cudaError_t
cudaSetDevice (int device)
{
  CUdevice dev;
  /* one device: the context is made at the first call that needs it */
  return ret (device_handle (device, &dev));
}

EXPORT cudaError_t
cudaGetDevice (int *device)
{
  if (!device)
    return ret (cudaErrorInvalidValue);
  *device = 0;
  return ret (driver_ready ());
}

EXPORT cudaError_t
cudaDeviceGetAttribute (int *value, enum cudaDeviceAttr attr, int device)
{
  CUdevice dev;
  cudaError_t e;

  if (!value)
    return ret (cudaErrorInvalidValue);
  e = device_handle (device, &dev);
  /* cudaDevAttr* are the driver's CU_DEVICE_ATTRIBUTE_* values */
  if (e == cudaSuccess)
    e = from_cu (drv.cuDeviceGetAttribute (value, (CUdevice_attribute) attr, dev));
  return ret (e);
}

/* cudaDeviceProp from the driver's attributes; the texture and surface
 * limits stay 0, as the simulated device has none */
#define PROP(field, attr) \
  { offsetof (struct cudaDeviceProp, field), \
    sizeof (((struct cudaDeviceProp *) 0)->field), CU_DEVICE_ATTRIBUTE_##attr }
static const struct {
  size_t offset, size;
  CUdevice_attribute attr;
} prop_attrs[] = {
  PROP (sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK),
  PROP (regsPerBlock, MAX_REGISTERS_PER_BLOCK),
  PROP (warpSize, WARP_SIZE),
  PROP (memPitch, MAX_PITCH),
  PROP (maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
  PROP (maxThreadsDim[0], MAX_BLOCK_DIM_X),
  PROP (maxThreadsDim[1], MAX_BLOCK_DIM_Y),
  PROP (maxThreadsDim[2], MAX_BLOCK_DIM_Z),
  PROP (maxGridSize[0], MAX_GRID_DIM_X),
  PROP (maxGridSize[1], MAX_GRID_DIM_Y),
  PROP (maxGridSize[2], MAX_GRID_DIM_Z),
  PROP (totalConstMem, TOTAL_CONSTANT_MEMORY),
  PROP (major, COMPUTE_CAPABILITY_MAJOR),
  PROP (minor, COMPUTE_CAPABILITY_MINOR),
  PROP (textureAlignment, TEXTURE_ALIGNMENT),
  PROP (texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT),
  PROP (multiProcessorCount, MULTIPROCESSOR_COUNT),
  PROP (integrated, INTEGRATED),
  PROP (canMapHostMemory, CAN_MAP_HOST_MEMORY),
  PROP (surfaceAlignment, SURFACE_ALIGNMENT),
  PROP (concurrentKernels, CONCURRENT_KERNELS),
  PROP (ECCEnabled, ECC_ENABLED),
  PROP (pciBusID, PCI_BUS_ID),
  PROP (pciDeviceID, PCI_DEVICE_ID),
  PROP (pciDomainID, PCI_DOMAIN_ID),
  PROP (tccDriver, TCC_DRIVER),
  PROP (asyncEngineCount, ASYNC_ENGINE_COUNT),
  PROP (unifiedAddressing, UNIFIED_ADDRESSING),
  PROP (memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH),
  PROP (l2CacheSize, L2_CACHE_SIZE),
  PROP (persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE),
  PROP (maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR),
  PROP (streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED),
  PROP (globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED),
  PROP (localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED),
  PROP (sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
  PROP (regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR),
  PROP (managedMemory, MANAGED_MEMORY),
  PROP (isMultiGpuBoard, MULTI_GPU_BOARD),
  PROP (multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID),
  PROP (hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED),
  PROP (pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS),
  PROP (concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS),
  PROP (computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED),
  PROP (canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
  PROP (cooperativeLaunch, COOPERATIVE_LAUNCH),
  PROP (sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
  PROP (pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
  PROP (directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
  PROP (maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR),
  PROP (accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE),
  PROP (reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK),
  PROP (hostRegisterSupported, HOST_REGISTER_SUPPORTED),
  PROP (sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED),
  PROP (hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED),
  PROP (timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
  PROP (memoryPoolsSupported, MEMORY_POOLS_SUPPORTED),
  PROP (gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED),
  PROP (gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
  PROP (gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING),
  PROP (memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES),
  PROP (deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
  PROP (ipcEventSupported, IPC_EVENT_SUPPORTED),
  PROP (clusterLaunch, CLUSTER_LAUNCH),
  PROP (unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS),
  PROP (deviceNumaConfig, NUMA_CONFIG),
  PROP (deviceNumaId, NUMA_ID),
  PROP (mpsEnabled, MPS_ENABLED),
  PROP (hostNumaId, HOST_NUMA_ID),
};
#undef PROP

EXPORT cudaError_t
cudaGetDeviceProperties (struct cudaDeviceProp *prop, int device)
{
  CUdevice dev;
  CUresult r;
  cudaError_t e;

  if (!prop)
    return ret (cudaErrorInvalidValue);
  e = device_handle (device, &dev);
  if (e != cudaSuccess)
    return ret (e);
  memset (prop, 0, sizeof *prop);
  /* the driver's name says the device is simulated */
  r = drv.cuDeviceGetName (prop->name, sizeof prop->name, dev);
  if (r == CUDA_SUCCESS)
    r = drv.cuDeviceTotalMem_v2 (&prop->totalGlobalMem, dev);
  for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof prop_attrs / sizeof prop_attrs[0]; i++) {
    int v = 0;
    r = drv.cuDeviceGetAttribute (&v, prop_attrs[i].attr, dev);
    if (prop_attrs[i].size == sizeof (size_t)) {
      size_t s = (size_t) v;
      memcpy ((char *) prop + prop_attrs[i].offset, &s, sizeof s);
    } else {
      memcpy ((char *) prop + prop_attrs[i].offset, &v, sizeof v);
    }
  }
  return ret (from_cu (r));
}

EXPORT cudaError_t
cudaDeviceSynchronize (void)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuCtxSynchronize ()));
}

EXPORT cudaError_t
cudaDriverGetVersion (int *version)
{
  if (!version)
    return ret (cudaErrorInvalidValue);
  *version = 0;                 /* no driver: 0, and no error */
  driver_ready ();
  if (drv.cuDriverGetVersion)
    drv.cuDriverGetVersion (version);
  return cudaSuccess;
}

EXPORT cudaError_t
cudaRuntimeGetVersion (int *version)
{
  if (!version)
    return ret (cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

/* ---- memory ------------------------------------------------------------------ */
EXPORT cudaError_t
cudaMalloc (void **p, size_t size)
{
  CUdeviceptr d = 0;
  cudaError_t e;

  if (!p)
    return ret (cudaErrorInvalidValue);
  *p = NULL;
  e = context_current ();
  if (e != cudaSuccess || size == 0)    /* 0 bytes: NULL, as the runtime answers */
    return ret (e);
  e = from_cu (drv.cuMemAlloc_v2 (&d, size));
  if (e == cudaSuccess)
    *p = (void *) (uintptr_t) d;
  return ret (e);
}

/* cudaFree (NULL) is the usual way to make the context: it does so here too */
EXPORT cudaError_t
cudaFree (void *p)
{
  cudaError_t e = context_current ();
  if (e != cudaSuccess || !p)
    return ret (e);
  return ret (from_cu (drv.cuMemFree_v2 ((CUdeviceptr) (uintptr_t) p)));
}

EXPORT cudaError_t
cudaHostAlloc (void **p, size_t size, unsigned int flags)
{
  cudaError_t e;

  if (!p)
    return ret (cudaErrorInvalidValue);
  *p = NULL;
  if (flags & ~(unsigned) (cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
    return ret (cudaErrorInvalidValue);
  /* the simulated kernels read device memory only */
  if (flags & cudaHostAllocMapped)
    return ret (cudaErrorNotSupported);
  e = context_current ();
  if (e != cudaSuccess || size == 0)
    return ret (e);
  return ret (from_cu (drv.cuMemAllocHost_v2 (p, size)));
}

EXPORT cudaError_t
cudaMallocHost (void **p, size_t size)
{
  return cudaHostAlloc (p, size, cudaHostAllocDefault);
}

EXPORT cudaError_t
cudaFreeHost (void *p)
{
  cudaError_t e = context_current ();
  if (e != cudaSuccess || !p)
    return ret (e);
  return ret (from_cu (drv.cuMemFreeHost (p)));
}

EXPORT cudaError_t
cudaMemGetInfo (size_t *free_bytes, size_t *total)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuMemGetInfo_v2 (free_bytes, total)));
}

/* One side of a copy as the driver has it. The kind is trusted, as the
 * runtime trusts it, so a pointer on the wrong side is the simulator's
 * error to report; unified (cudaMemcpyDefault) lets the driver tell. */
static void
copy_side (CUmemorytype type, const void *p, CUmemorytype * t, const void **host,
    CUdeviceptr * dev)
{
  *t = type;
  if (type != CU_MEMORYTYPE_DEVICE)
    *host = p;
  if (type != CU_MEMORYTYPE_HOST)
    *dev = (CUdeviceptr) (uintptr_t) p;
}

static cudaError_t
copy_2d (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
    size_t height, enum cudaMemcpyKind kind, cudaStream_t stream, int async)
{
  static const struct { CUmemorytype src, dst; } kinds[] = {
    [cudaMemcpyHostToHost] = {CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST},
    [cudaMemcpyHostToDevice] = {CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE},
    [cudaMemcpyDeviceToHost] = {CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST},
    [cudaMemcpyDeviceToDevice] = {CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE},
    [cudaMemcpyDefault] = {CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED},
  };
  CUDA_MEMCPY2D c;
  const void *dst_host = NULL;
  cudaError_t e;

  if ((unsigned) kind >= sizeof kinds / sizeof kinds[0])
    return cudaErrorInvalidMemcpyDirection;
  if (height > 0 && (width > dpitch || width > spitch))
    return cudaErrorInvalidPitchValue;
  e = context_current ();
  if (e != cudaSuccess || width == 0 || height == 0)
    return e;
  memset (&c, 0, sizeof c);
  copy_side (kinds[kind].src, src, &c.srcMemoryType, &c.srcHost, &c.srcDevice);
  copy_side (kinds[kind].dst, dst, &c.dstMemoryType, &dst_host, &c.dstDevice);
  c.dstHost = (void *) dst_host;
  c.srcPitch = spitch;
  c.dstPitch = dpitch;
  c.WidthInBytes = width;
  c.Height = height;
  return from_cu (async ? drv.cuMemcpy2DAsync_v2 (&c, stream) : drv.cuMemcpy2D_v2 (&c));
}

EXPORT cudaError_t
cudaMemcpy (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
  return ret (copy_2d (dst, count, src, count, count, 1, kind, NULL, 0));
}

EXPORT cudaError_t
cudaMemcpyAsync (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
    cudaStream_t stream)
{
  return ret (copy_2d (dst, count, src, count, count, 1, kind, stream, 1));
}

EXPORT cudaError_t
cudaMemcpy2D (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
    size_t height, enum cudaMemcpyKind kind)
{
  return ret (copy_2d (dst, dpitch, src, spitch, width, height, kind, NULL, 0));
}

EXPORT cudaError_t
cudaMemcpy2DAsync (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
    size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
  return ret (copy_2d (dst, dpitch, src, spitch, width, height, kind, stream, 1));
}

/* The driver has no memset: device memory is filled by copies from a
 * pageable buffer of the value, which the driver has copied when the call
 * returns (it stages pageable memory, async or not), so the buffer goes
 * at once and the fill is in order in its stream. */
#define FILL_CHUNK ((size_t) 1 << 20)

static cudaError_t
fill (void *dst, int value, size_t count, cudaStream_t stream, int async)
{
  size_t chunk = count < FILL_CHUNK ? count : FILL_CHUNK;
  cudaError_t e = context_current ();
  unsigned char *buf;

  if (e != cudaSuccess || count == 0)
    return e;
  if (!(buf = malloc (chunk)))
    return cudaErrorMemoryAllocation;
  memset (buf, value, chunk);
  for (size_t off = 0; off < count && e == cudaSuccess; off += chunk) {
    size_t n = count - off < chunk ? count - off : chunk;
    e = copy_2d ((char *) dst + off, n, buf, n, n, 1, cudaMemcpyHostToDevice, stream, async);
  }
  free (buf);
  return e;
}

EXPORT cudaError_t
cudaMemset (void *dst, int value, size_t count)
{
  return ret (fill (dst, value, count, NULL, 0));
}

EXPORT cudaError_t
cudaMemsetAsync (void *dst, int value, size_t count, cudaStream_t stream)
{
  return ret (fill (dst, value, count, stream, 1));
}

/* ---- streams and events: the driver's, handle for handle -------------------- */
EXPORT cudaError_t
cudaStreamCreateWithFlags (cudaStream_t * stream, unsigned int flags)
{
  cudaError_t e;

  if (!stream || (flags & ~(unsigned) cudaStreamNonBlocking))
    return ret (cudaErrorInvalidValue);
  e = context_current ();
  /* cudaStreamNonBlocking is CU_STREAM_NON_BLOCKING */
  return ret (e != cudaSuccess ? e : from_cu (drv.cuStreamCreate (stream, flags)));
}

EXPORT cudaError_t
cudaStreamCreate (cudaStream_t * stream)
{
  return cudaStreamCreateWithFlags (stream, cudaStreamDefault);
}

EXPORT cudaError_t
cudaStreamDestroy (cudaStream_t stream)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuStreamDestroy_v2 (stream)));
}

EXPORT cudaError_t
cudaStreamSynchronize (cudaStream_t stream)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuStreamSynchronize (stream)));
}

EXPORT cudaError_t
cudaStreamQuery (cudaStream_t stream)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuStreamQuery (stream)));
}

EXPORT cudaError_t
cudaStreamWaitEvent (cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuStreamWaitEvent (stream, event, flags)));
}

EXPORT cudaError_t
cudaEventCreateWithFlags (cudaEvent_t * event, unsigned int flags)
{
  cudaError_t e;

  /* the cudaEvent* flags are the driver's CU_EVENT_* */
  if (!event || (flags & ~(unsigned) (cudaEventBlockingSync | cudaEventDisableTiming |
              cudaEventInterprocess)))
    return ret (cudaErrorInvalidValue);
  e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuEventCreate (event, flags)));
}

EXPORT cudaError_t
cudaEventCreate (cudaEvent_t * event)
{
  return cudaEventCreateWithFlags (event, cudaEventDefault);
}

EXPORT cudaError_t
cudaEventDestroy (cudaEvent_t event)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuEventDestroy_v2 (event)));
}

EXPORT cudaError_t
cudaEventRecord (cudaEvent_t event, cudaStream_t stream)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuEventRecord (event, stream)));
}

EXPORT cudaError_t
cudaEventQuery (cudaEvent_t event)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuEventQuery (event)));
}

EXPORT cudaError_t
cudaEventSynchronize (cudaEvent_t event)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuEventSynchronize (event)));
}

EXPORT cudaError_t
cudaEventElapsedTime (float *ms, cudaEvent_t start, cudaEvent_t end)
{
  cudaError_t e = context_current ();
  return ret (e != cudaSuccess ? e : from_cu (drv.cuEventElapsedTime_v2 (ms, start, end)));
}

/* ---- errors ------------------------------------------------------------------ */
EXPORT cudaError_t
cudaGetLastError (void)
{
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

EXPORT cudaError_t
cudaPeekAtLastError (void)
{
  return last_error;
}

/* the runtime's own texts, for what this one can answer */
#define ERR(code, text) {code, #code, text}
static const struct {
  cudaError_t code;
  const char *name, *text;
} errors[] = {
  ERR (cudaSuccess, "no error"),
  ERR (cudaErrorInvalidValue, "invalid argument"),
  ERR (cudaErrorMemoryAllocation, "out of memory"),
  ERR (cudaErrorInitializationError, "initialization error"),
  ERR (cudaErrorCudartUnloading, "driver shutting down"),
  ERR (cudaErrorInvalidConfiguration, "invalid configuration argument"),
  ERR (cudaErrorInvalidPitchValue, "invalid pitch argument"),
  ERR (cudaErrorInvalidSymbol, "invalid device symbol"),
  ERR (cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"),
  ERR (cudaErrorInsufficientDriver,
      "CUDA driver version is insufficient for CUDA runtime version"),
  ERR (cudaErrorMissingConfiguration, "__global__ function call is not configured"),
  ERR (cudaErrorInvalidDeviceFunction, "invalid device function"),
  ERR (cudaErrorNoDevice, "no CUDA-capable device is detected"),
  ERR (cudaErrorInvalidDevice, "invalid device ordinal"),
  ERR (cudaErrorInvalidKernelImage, "device kernel image is invalid"),
  ERR (cudaErrorDeviceUninitialized, "invalid device context"),
  ERR (cudaErrorNoKernelImageForDevice,
      "no kernel image is available for execution on the device"),
  ERR (cudaErrorInvalidResourceHandle, "invalid resource handle"),
  ERR (cudaErrorSymbolNotFound, "named symbol not found"),
  ERR (cudaErrorNotReady, "device not ready"),
  ERR (cudaErrorIllegalAddress, "an illegal memory access was encountered"),
  ERR (cudaErrorLaunchOutOfResources, "too many resources requested for launch"),
  ERR (cudaErrorLaunchTimeout, "the launch timed out and was terminated"),
  ERR (cudaErrorLaunchFailure, "unspecified launch failure"),
  ERR (cudaErrorNotPermitted, "operation not permitted"),
  ERR (cudaErrorNotSupported, "operation not supported"),
  ERR (cudaErrorUnknown, "unknown error"),
};
#undef ERR

EXPORT const char *
cudaGetErrorString (cudaError_t e)
{
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == e)
      return errors[i].text;
  return "unrecognized error code";
}

EXPORT const char *
cudaGetErrorName (cudaError_t e)
{
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == e)
      return errors[i].name;
  return "unrecognized error code";
}
