/* rlnc_isal.c: the CPU SIMD path of the RLNC product through ISA-L.
 * Our n x m coefficient matrix is exactly ISA-L's "rows x k" encode matrix:
 * ec_init_tables (m, n, coefs, gftbls) expands each coefficient into the
 * 32-byte nibble tables that ec_encode_data's PSHUFB kernels use. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>
#include "rlnc/rlnc.h"

struct RlncEncodeTables {
  int m, n;
  uint8_t *gftbls;   /* 32 * m * n */
};

/* ec_encode_data takes an int length: blocks over 1 GiB go in pieces. */
static void
encode_chunks (size_t k, int m, int n, uint8_t *gftbls,
               const uint8_t *const *src, uint8_t *const *out)
{
  const size_t step = (size_t) 1 << 30;
  if (k <= step) {
    ec_encode_data ((int) k, m, n, gftbls, (uint8_t **) src, (uint8_t **) out);
    return;
  }
  uint8_t **s = malloc (sizeof *s * ((size_t) m + n));
  if (!s)
    return;
  uint8_t **o = s + m;
  for (size_t off = 0; off < k; off += step) {
    size_t len = k - off < step ? k - off : step;
    for (int i = 0; i < m; i++)
      s[i] = (uint8_t *) src[i] + off;
    for (int j = 0; j < n; j++)
      o[j] = out[j] + off;
    ec_encode_data ((int) len, m, n, gftbls, s, o);
  }
  free (s);
}

void
rlnc_encode (size_t k, int m, int n, const uint8_t *coefs,
             const uint8_t *const *src, uint8_t *const *out)
{
  if (m <= 0 || n <= 0 || k == 0)
    return;
  /* Small matrices (m*n <= 512) avoid a malloc; 16 KiB keeps the stack use
   * safe for small-stack streaming threads. */
  uint8_t stackbuf[32 * 512];
  size_t need = (size_t) 32 * m * n;
  uint8_t *g = need <= sizeof stackbuf ? stackbuf : malloc (need);
  if (!g)
    return;
  ec_init_tables (m, n, (uint8_t *) coefs, g);
  encode_chunks (k, m, n, g, src, out);
  if (g != stackbuf)
    free (g);
}

RlncEncodeTables *
rlnc_encode_tables_new (int m, int n, const uint8_t *coefs)
{
  if (m <= 0 || n <= 0)
    return NULL;
  RlncEncodeTables *t = malloc (sizeof *t);
  if (!t)
    return NULL;
  t->m = m;
  t->n = n;
  t->gftbls = malloc ((size_t) 32 * m * n);
  if (!t->gftbls) {
    free (t);
    return NULL;
  }
  ec_init_tables (m, n, (uint8_t *) coefs, t->gftbls);
  return t;
}

void
rlnc_encode_tables_free (RlncEncodeTables *t)
{
  if (!t)
    return;
  free (t->gftbls);
  free (t);
}

void
rlnc_encode_with_tables (const RlncEncodeTables *t, size_t k,
                         const uint8_t *const *src, uint8_t *const *out)
{
  if (!t || k == 0)
    return;
  encode_chunks (k, t->m, t->n, t->gftbls, src, out);
}

void
rlnc_recode (size_t k, int m, int n_in, const uint8_t *in_coefs,
             const uint8_t *const *in, int n_out, const uint8_t *mix,
             uint8_t *out_coefs, uint8_t *const *out)
{
  if (n_in <= 0 || n_out <= 0)
    return;
  /* The new coefficient vectors are mix x in_coefs: the same product on
   * m-byte rows, so the receiver sees ordinary coded packets. */
  const uint8_t **ic = malloc (sizeof *ic * (size_t) n_in);
  uint8_t **oc = malloc (sizeof *oc * (size_t) n_out);
  if (!ic || !oc) {
    free (ic);
    free (oc);
    return;
  }
  for (int l = 0; l < n_in; l++)
    ic[l] = in_coefs + (size_t) l * m;
  for (int j = 0; j < n_out; j++)
    oc[j] = out_coefs + (size_t) j * m;
  rlnc_encode ((size_t) m, n_in, n_out, mix, ic, oc);
  rlnc_encode (k, n_in, n_out, mix, in, out);
  free (ic);
  free (oc);
}
