/* gf256.h: GF(2^8) arithmetic with ISA-L's polynomial x^8+x^4+x^3+x^2+1
 * (0x11D), written once for host and device (GS_HD).
 *
 * Table-free on purpose: a GPU thread has no cheap place for a 64 KiB product
 * table, and a table in shared memory costs bank conflicts on data-dependent
 * indices. Everything here is shifts, ANDs and XORs, so the CPU tests run the
 * exact instructions the kernel runs. */
#ifndef GF256_H
#define GF256_H

#include <stdint.h>
#include "common/gs_hd.h"

#define GF256_POLY 0x11Du

/* a * x (the generator 2). */
GS_HD uint8_t
gf256_xtime (uint8_t a)
{
  return (uint8_t) ((a << 1) ^ ((a >> 7) * (GF256_POLY & 0xFFu)));
}

/* Russian-peasant product, branch-free so that it is constant time and
 * divergence-free on the GPU. */
GS_HD uint8_t
gf256_mul (uint8_t a, uint8_t b)
{
  uint8_t r = 0;
  for (int i = 0; i < 8; i++) {
    r ^= (uint8_t) (a & (uint8_t) (0u - ((b >> i) & 1u)));
    a = gf256_xtime (a);
  }
  return r;
}

/* a^254 = a^-1 for a != 0 (the multiplicative group has order 255);
 * gf256_inv (0) = 0. */
GS_HD uint8_t
gf256_inv (uint8_t a)
{
  uint8_t a2 = gf256_mul (a, a);           /* a^2 */
  uint8_t a3 = gf256_mul (a2, a);          /* a^3 */
  uint8_t a6 = gf256_mul (a3, a3);         /* a^6 */
  uint8_t a12 = gf256_mul (a6, a6);        /* a^12 */
  uint8_t a15 = gf256_mul (a12, a3);       /* a^15 */
  uint8_t a30 = gf256_mul (a15, a15);
  uint8_t a60 = gf256_mul (a30, a30);
  uint8_t a120 = gf256_mul (a60, a60);
  uint8_t a240 = gf256_mul (a120, a120);
  uint8_t a252 = gf256_mul (a240, a12);
  return gf256_mul (a252, a2);             /* a^254 */
}

GS_HD uint8_t
gf256_div (uint8_t a, uint8_t b)
{
  return gf256_mul (a, gf256_inv (b));
}

/* ---- packed: 4 field elements in the bytes of a uint32 ---------------- */

/* Doubles each byte independently: shift within the byte, and reduce the
 * bytes whose top bit fell out. (hi * 0x1D) cannot carry across bytes since
 * every byte of hi is 0 or 1. */
GS_HD uint32_t
gf256_xtime4 (uint32_t x)
{
  uint32_t hi = (x >> 7) & 0x01010101u;
  return ((x & 0x7F7F7F7Fu) << 1) ^ (hi * (GF256_POLY & 0xFFu));
}

/* c * x for 4 packed bytes. */
GS_HD uint32_t
gf256_mul4 (uint32_t x, uint8_t c)
{
  uint32_t r = 0;
  for (int i = 0; i < 8; i++) {
    r ^= x & (0u - ((uint32_t) (c >> i) & 1u));
    x = gf256_xtime4 (x);
  }
  return r;
}

/* The product split in two halves, for a thread that multiplies one source
 * word by many coefficients (a tile of output rows): the powers x*2^b are
 * computed once per source word, then each coefficient costs only 8
 * AND-XORs (one LOP3 each on the GPU). */
GS_HD void
gf256_powers4 (uint32_t x, uint32_t p[8])
{
  p[0] = x;
  for (int i = 1; i < 8; i++)
    p[i] = gf256_xtime4 (p[i - 1]);
}

GS_HD uint32_t
gf256_madd4_powers (uint32_t acc, const uint32_t p[8], uint8_t c)
{
#if defined(__CUDA_ARCH__) && !defined(GF256_MADD_MASK)
  /* c is the same in every thread of a warp: a uniform branch per bit
   * instead of a mask built per bit, 3-7 % faster on an H100
   * (bench/gpu/rlnc-variants.sh; GF256_MADD_MASK builds the mask form) */
#pragma unroll
  for (int i = 0; i < 8; i++)
    if (c & (1u << i))
      acc ^= p[i];
#else
  for (int i = 0; i < 8; i++)
    acc ^= p[i] & (0u - ((uint32_t) (c >> i) & 1u));
#endif
  return acc;
}

#endif /* GF256_H */
