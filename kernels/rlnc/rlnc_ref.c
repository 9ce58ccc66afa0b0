/* rlnc_ref.c: scalar references (table-free gf256_mul per byte). Slow on
 * purpose: they are the plain statement of eq. 2 and 3 that the SIMD and GPU
 * paths are checked against. */
#include <stdlib.h>
#include <string.h>
#include "rlnc/rlnc.h"
#include "rlnc/rlnc_seed.h"
#include "gf256/gf256.h"

void
rlnc_encode_ref (size_t k, int m, int n, const uint8_t *coefs,
                 const uint8_t *const *src, uint8_t *const *out)
{
  for (int j = 0; j < n; j++) {
    uint8_t *o = out[j];
    memset (o, 0, k);
    for (int i = 0; i < m; i++) {
      uint8_t c = coefs[(size_t) j * m + i];
      const uint8_t *s = src[i];
      for (size_t b = 0; b < k; b++)
        o[b] ^= gf256_mul (c, s[b]);
    }
  }
}

void
rlnc_coefs_from_seed (uint32_t seed, int m, uint8_t *coefs)
{
  rlnc_seed_coefs (seed, m, coefs);
}

/* Gauss-Jordan on copies of (coefs | payloads); row r < rank ends with its
 * pivot in column r when rank == m. */
int
rlnc_decode_ref (size_t k, int m, int n, const uint8_t *coefs,
                 const uint8_t *const *payloads, uint8_t *out)
{
  uint8_t *a = malloc ((size_t) n * m + 1);
  uint8_t *p = malloc ((size_t) n * k + 1);
  if (!a || !p) {
    free (a);
    free (p);
    return -1;
  }
  memcpy (a, coefs, (size_t) n * m);
  for (int r = 0; r < n; r++)
    memcpy (p + (size_t) r * k, payloads[r], k);

  int rank = 0;
  for (int col = 0; col < m && rank < n; col++) {
    int piv = -1;
    for (int r = rank; r < n; r++)
      if (a[(size_t) r * m + col]) {
        piv = r;
        break;
      }
    if (piv < 0)
      continue;
    if (piv != rank) {
      for (int i = 0; i < m; i++) {
        uint8_t t = a[(size_t) piv * m + i];
        a[(size_t) piv * m + i] = a[(size_t) rank * m + i];
        a[(size_t) rank * m + i] = t;
      }
      for (size_t b = 0; b < k; b++) {
        uint8_t t = p[(size_t) piv * k + b];
        p[(size_t) piv * k + b] = p[(size_t) rank * k + b];
        p[(size_t) rank * k + b] = t;
      }
    }
    uint8_t inv = gf256_inv (a[(size_t) rank * m + col]);
    for (int i = 0; i < m; i++)
      a[(size_t) rank * m + i] = gf256_mul (inv, a[(size_t) rank * m + i]);
    for (size_t b = 0; b < k; b++)
      p[(size_t) rank * k + b] = gf256_mul (inv, p[(size_t) rank * k + b]);
    for (int r = 0; r < n; r++) {
      uint8_t c = a[(size_t) r * m + col];
      if (r == rank || !c)
        continue;
      for (int i = 0; i < m; i++)
        a[(size_t) r * m + i] ^= gf256_mul (c, a[(size_t) rank * m + i]);
      for (size_t b = 0; b < k; b++)
        p[(size_t) r * k + b] ^= gf256_mul (c, p[(size_t) rank * k + b]);
    }
    rank++;
  }
  if (rank == m && out)
    memcpy (out, p, (size_t) m * k);
  free (a);
  free (p);
  return rank;
}
