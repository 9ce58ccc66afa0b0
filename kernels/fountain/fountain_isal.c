/* fountain_isal.c: the GF(2^8) products of the cross-stream code through
 * ISA-L's SIMD kernels (the same field, polynomial 0x11D): many repair
 * combinations of one sub-frame in one pass over it, for the sender and for
 * the decoder's removal of the received symbols' share. */
#include "fountain/fountain.h"

#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>

#include "rlnc/rlnc_seed.h"

/* outputs per ec_encode_data call: bounds the 32-byte tables to
 * 32 * sources * ROWS_PER_PASS bytes (16 MiB at N = 16384) */
#define ROWS_PER_PASS 32

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
  int rows = outputs < ROWS_PER_PASS ? outputs : ROWS_PER_PASS;
  uint8_t *tbl = malloc ((size_t) 32 * sources * rows);
  if (tbl == NULL)
    return -1;
  for (int j0 = 0; j0 < outputs; j0 += ROWS_PER_PASS) {
    int m = outputs - j0 < ROWS_PER_PASS ? outputs - j0 : ROWS_PER_PASS;
    ec_init_tables (sources, m, (uint8_t *) coefs + (size_t) j0 * sources, tbl);
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
