/* rlnc_seed.h: seed -> coefficient vector, identical on CPU and GPU.
 *
 * Counter-based (byte i depends only on seed and i), so a GPU thread can
 * regenerate any coefficient without running through the ones before it.
 * The mix is splitmix64's finaliser; each 64-bit output gives 8 bytes. */
#ifndef RLNC_SEED_H
#define RLNC_SEED_H

#include <stdint.h>
#include "common/gs_hd.h"

GS_HD uint64_t
rlnc_seed_mix64 (uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Coefficient i of the vector of seed: always in 1..255. Mapping a byte b to
 * 1 + (b * 255 >> 8) keeps it nonzero without rejection (rejection would make
 * byte i depend on the bytes before it); the bias is one value in 256. */
GS_HD uint8_t
rlnc_seed_coef (uint32_t seed, uint32_t i)
{
  uint64_t z = rlnc_seed_mix64 (((uint64_t) seed << 32 | (i >> 3))
                                + 0x9E3779B97F4A7C15ull);
  uint32_t b = (uint32_t) (z >> ((i & 7u) * 8u)) & 0xFFu;
  return (uint8_t) (1u + ((b * 255u) >> 8));
}

GS_HD void
rlnc_seed_coefs (uint32_t seed, int m, uint8_t *coefs)
{
  for (int i = 0; i < m; i++)
    coefs[i] = rlnc_seed_coef (seed, (uint32_t) i);
}

#endif /* RLNC_SEED_H */
