/* cpu.h: the x86 extensions this CPU (and its OS) offers, detected once for
 * the run-time dispatch of every kernel family (rlnc, srtp, dxt), so that
 * each family asks one place instead of running CPUID itself.
 *
 * The low five bits keep the values gsrtp_cpu_features() has always
 * reported (srtp_kernels.h). On other architectures: 0. */
#ifndef GS_CPU_H
#define GS_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  GS_CPU_AES = 1u << 0,        /* AES-NI */
  GS_CPU_PCLMUL = 1u << 1,     /* carry-less multiply */
  GS_CPU_SHA = 1u << 2,        /* SHA extensions (with SSE4.1, which our code needs) */
  GS_CPU_AVX2 = 1u << 3,
  GS_CPU_AVX512F = 1u << 4,    /* and the OS saves the ZMM state */
  GS_CPU_SSE41 = 1u << 5,
  GS_CPU_AVX = 1u << 6,
  GS_CPU_VAES = 1u << 7        /* VAES and VPCLMULQDQ (256-bit AES-GCM) */
};

/* GS_CPU_* bits; CPUID runs on the first call only (it can cost
 * microseconds under a hypervisor). Thread-safe. */
unsigned gs_cpu_features (void);

#ifdef __cplusplus
}
#endif

#endif /* GS_CPU_H */
