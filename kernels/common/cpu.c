/* cpu.c: gs_cpu_features(); see cpu.h. */
#include <stdatomic.h>
#include "common/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned
detect (void)
{
  unsigned f = 0, a, b, c, d;
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("aes"))
    f |= GS_CPU_AES;
  if (__builtin_cpu_supports ("pclmul"))
    f |= GS_CPU_PCLMUL;
  if (__builtin_cpu_supports ("sse4.1"))
    f |= GS_CPU_SSE41;
  if (__builtin_cpu_supports ("avx"))
    f |= GS_CPU_AVX;
  /* "avx2" and "avx512f" also say the OS saves the wider registers */
  if (__builtin_cpu_supports ("avx2"))
    f |= GS_CPU_AVX2;
  if (__builtin_cpu_supports ("avx512f"))
    f |= GS_CPU_AVX512F;
  /* read from CPUID.(7,0) directly: not every compiler's
   * __builtin_cpu_supports knows these. SHA: EBX bit 29; VAES and
   * VPCLMULQDQ: ECX bits 9 and 10. */
  if (__get_cpuid_count (7, 0, &a, &b, &c, &d)) {
    if ((b & (1u << 29)) && (f & GS_CPU_SSE41))
      f |= GS_CPU_SHA;
    if ((c & (1u << 9)) && (c & (1u << 10)))
      f |= GS_CPU_VAES;
  }
  return f;
}
#else
static unsigned
detect (void)
{
  return 0;
}
#endif

unsigned
gs_cpu_features (void)
{
  /* bit 31 marks "detected"; a race only detects twice, with one result */
  static atomic_uint cached;
  unsigned f = atomic_load_explicit (&cached, memory_order_relaxed);
  if (!(f & (1u << 31))) {
    f = detect () | (1u << 31);
    atomic_store_explicit (&cached, f, memory_order_relaxed);
  }
  return f & ~(1u << 31);
}
