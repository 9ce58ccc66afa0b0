/* gpusim.h: the controls of the simulated CUDA device (tests/gpusim), a
 * libcuda.so.1 of our own that tests and benchmarks put first on the library
 * path. Programs that link nothing of it reach these through
 * dlsym (RTLD_DEFAULT, "gpusim_...") once libcuda.so.1 is loaded, or through
 * the environment:
 *
 *   GPUSIM_MODEL=h100|zero   the timing model (default h100, see gpusim.c)
 *   GPUSIM_FAULTS=kind=N,... arm faults at load: the Nth call of that kind
 *                            from then on fails (alloc, copy, launch), or the
 *                            device is lost at the Nth stream operation (lost)
 *   GPUSIM_QUIET=1           no "simulated device" line on stderr at cuInit
 */
#ifndef GPUSIM_H
#define GPUSIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GPUSIM_FAULT_ALLOC,     /* cuMemAlloc*, cuMemAllocHost: CUDA_ERROR_OUT_OF_MEMORY */
  GPUSIM_FAULT_COPY,      /* any memcpy: CUDA_ERROR_ILLEGAL_ADDRESS, sticky */
  GPUSIM_FAULT_LAUNCH,    /* cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
  GPUSIM_FAULT_LOST,      /* a stream operation fails and every call after it:
                           * CUDA_ERROR_LAUNCH_FAILED, as a device that fell off the bus */
  GPUSIM_FAULT_LAST
} GpusimFault;

/* The nth call of that kind from now on fails (1: the next one); 0 disarms. */
void gpusim_fault_arm (GpusimFault kind, uint32_t nth);
/* Clears every armed fault and the sticky error (a new device, as after a
 * reset), so that one test process can try several faults in turn. */
void gpusim_reset (void);

/* While held (1), no stream starts another operation: the calls still
 * return at once, so a test sees work that is queued and not yet done.
 * The modelled clock counts what was queued while held as queued at the
 * release, so event times hold the model's durations alone. */
void gpusim_hold (int held);

typedef struct {
  uint64_t launches;          /* kernels run */
  uint64_t threads;           /* grid threads that did work */
  uint64_t copies, copy_bytes;
  uint64_t allocs_live;       /* device and pinned allocations not freed */
  uint64_t faults;            /* armed faults that fired */
  double model_busy_s;        /* modelled device time of every operation */
} GpusimStats;

void gpusim_get_stats (GpusimStats * stats);
/* 1 while this library is the driver: lets a test say it ran on it. */
int gpusim_is_simulated (void);

#ifdef __cplusplus
}
#endif

#endif /* GPUSIM_H */
