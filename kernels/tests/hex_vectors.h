/* hex_vectors.h: test vectors written in hex (the RFCs' form) as bytes, for
 * the SRTP kernel tests. Each test program includes it once. */
#ifndef KERNELS_TESTS_HEX_VECTORS_H
#define KERNELS_TESTS_HEX_VECTORS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* "0a1b..." -> bytes; *n (if given) gets how many */
static void
hex (const char *s, uint8_t *out, size_t *n)
{
  size_t i = 0;
  while (s[0] && s[1]) {
    unsigned v;
    sscanf (s, "%2x", &v);
    out[i++] = (uint8_t) v;
    s += 2;
  }
  if (n)
    *n = i;
}

/* got starts with the bytes the hex string want spells */
static int
eqhex (const uint8_t *got, const char *want)
{
  uint8_t w[256];
  size_t n;
  hex (want, w, &n);
  return memcmp (got, w, n) == 0;
}

#endif /* KERNELS_TESTS_HEX_VECTORS_H */
