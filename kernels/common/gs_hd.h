/* gs_hd.h: one spelling for code that is compiled both by the host C compiler
 * and by nvcc, so a kernel's per-thread math is written once and the CPU tests
 * exercise the very same lines the GPU runs. */
#ifndef GS_HD_H
#define GS_HD_H

#ifdef __CUDACC__
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif

#endif /* GS_HD_H */
