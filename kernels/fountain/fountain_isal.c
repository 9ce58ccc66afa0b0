/* fountain_isal.c: the GF(2^8) products of the cross-stream code through
 * ISA-L's SIMD kernels (the same field, polynomial 0x11D): many repair
 * combinations of one sub-frame in one pass over it, for the sender and for
 * the decoder's removal of the received symbols' share. */
#include "fountain/fountain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>

#include "fountain/fountain_simd.h"
#include "rlnc/rlnc_seed.h"

/* outputs per ec_encode_data call: bounds the 32-byte tables to
 * 32 * sources * ROWS_PER_PASS bytes (16 MiB at N = 16384) */
#define ROWS_PER_PASS 32

/* gf_vect_mul_init's 32 bytes for every coefficient, made once: ISA-L's
 * ec_init_tables computes them afresh for every entry of the matrix, which
 * costs more than the product itself on short symbols */
static uint8_t mul_tables[256][32];
static pthread_once_t mul_once = PTHREAD_ONCE_INIT;

static void
mul_tables_init (void)
{
  for (int c = 0; c < 256; c++)
    gf_vect_mul_init ((unsigned char) c, mul_tables[c]);
}

/* ec_init_tables' layout: row by row, 32 bytes per coefficient */
static void
init_tables (int sources, int rows, const uint8_t *coefs, uint8_t *tbl)
{
  for (size_t e = 0; e < (size_t) sources * rows; e++)
    memcpy (tbl + 32 * e, mul_tables[coefs[e]], 32);
}

void
fountain_gf_madd (uint8_t *dst, const uint8_t *src, uint8_t c, size_t len)
{
  if (c == 0)
    return;
  pthread_once (&mul_once, mul_tables_init);
  const uint8_t *t = mul_tables[c];
  if (len >= 64) {
    gf_vect_mad ((int) len, 1, 0, (uint8_t *) t, (uint8_t *) src, dst);
    return;
  }
  for (size_t b = 0; b < len; b++)
    dst[b] ^= t[src[b] & 15] ^ t[16 + (src[b] >> 4)];
}

int
fountain_gf_product (size_t len, int sources, int outputs,
    const uint8_t *coefs, const uint8_t *const *src, uint8_t *const *out)
{
  if (outputs <= 0)
    return 0;
  if (sources <= 0) {
    for (int j = 0; j < outputs; j++)
      memset (out[j], 0, len);
    return 0;
  }
  pthread_once (&mul_once, mul_tables_init);
  if (len < 32) {
    /* below ISA-L's vector width it falls back to a per-byte gf_mul; the
     * nibble tables do the same product in two lookups */
    for (int j = 0; j < outputs; j++) {
      memset (out[j], 0, len);
      for (int i = 0; i < sources; i++) {
        const uint8_t *t = mul_tables[coefs[(size_t) j * sources + i]];
        const uint8_t *x = src[i];
        for (size_t b = 0; b < len; b++)
          out[j][b] ^= t[x[b] & 15] ^ t[16 + (x[b] >> 4)];
      }
    }
    return 0;
  }
  int rows = outputs < ROWS_PER_PASS ? outputs : ROWS_PER_PASS;
  uint8_t *tbl = malloc ((size_t) 32 * sources * rows);
  if (tbl == NULL)
    return -1;
  for (int j0 = 0; j0 < outputs; j0 += ROWS_PER_PASS) {
    int m = outputs - j0 < ROWS_PER_PASS ? outputs - j0 : ROWS_PER_PASS;
    init_tables (sources, m, coefs + (size_t) j0 * sources, tbl);
    ec_encode_data ((int) len, sources, m, tbl, (uint8_t **) src,
        (uint8_t **) out + j0);
  }
  free (tbl);
  return 0;
}

int
fountain_encode_repairs (int n, size_t symbol_size, const uint8_t *sub,
    int count, const uint32_t *seeds, uint8_t *const *outs)
{
  if (count <= 0)
    return 0;
  uint8_t *coefs = malloc ((size_t) count * n);
  const uint8_t **src = malloc ((size_t) n * sizeof *src);
  int ret = -1;
  if (coefs && src) {
    for (int j = 0; j < count; j++)
      rlnc_seed_coefs (seeds[j], n, coefs + (size_t) j * n);
    for (int i = 0; i < n; i++)
      src[i] = sub + (size_t) i * symbol_size;
    ret = fountain_gf_product (symbol_size, n, count, coefs, src, outs);
  }
  free (coefs);
  free (src);
  return ret;
}
