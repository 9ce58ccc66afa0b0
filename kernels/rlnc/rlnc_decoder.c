/* rlnc_decoder.c: progressive Gauss-Jordan decoder (rlnc.h).
 *
 * Each kept packet is a row [coefficient vector | unit vector of its slot]
 * (2m bytes, padded to a multiple of 32 so ISA-L's gf_vect_mad/gf_vect_mul
 * take it whole). Rows are kept in reduced row echelon form: every pivot is 1
 * and is the only nonzero of its column among the rows. A new packet is
 * reduced against the rows (rank is then known: zero coefficient part means
 * dependent), normalised, and eliminated from the other rows. At full rank
 * the coefficient halves form a permuted identity and the right halves are
 * the inverse: source p = sum over slots of inv[p][s] * payload[s].
 * Payloads are only copied on arrival; the k-byte work is one product at the
 * end (rlnc_decoder_solve), which is what keeps decode near encode speed. */
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>
#include <isa-l/gf_vect_mul.h>
#include "common/cpu.h"
#include "rlnc/rlnc.h"
#include "gf256/gf256.h"
#include "rlnc/rlnc_rowops.h"

struct RlncDecoder {
  int m;
  size_t k;
  int rank;
  int width;               /* row bytes: 2m rounded up to 32 */
  uint8_t *rows;           /* m x width */
  int16_t *pivot_col;      /* row -> pivot column */
  int16_t *pivot_row;      /* column -> row, -1 when none */
  uint8_t *vec;            /* width: the packet being reduced */
  uint8_t *payload_mem;    /* m x k, slot order */
  uint8_t **payloads;      /* m pointers into payload_mem */
  uint8_t *inverse;        /* m x m, valid when inverse_ok */
  int inverse_ok;
  uint8_t *gftbls;         /* 32 x m x m, for solve */
  uint8_t *sub;            /* m x m: the non-unit rows of the inverse */
  int *rowsel, *colmap;    /* m each */
  uint8_t **ptrs;          /* 2m: sources and outputs of the product */
  uint8_t **rsel;          /* m+1: rows taking part in a row operation */
  uint8_t *rtbls;          /* 32 x (m+1): their multipliers' tables */
  uint8_t *vec2;           /* width: reduction output */
  uint8_t (*mtab)[32];     /* gf_vect_mul_init tables of every constant */
  const uint8_t **tsel;    /* m: mtab entries of rsel's multipliers (AVX2) */
  int avx2;                /* own row loops instead of ISA-L calls */
};

RlncDecoder *
rlnc_decoder_new (int m, size_t k)
{
  if (m < 1 || m > RLNC_MAX_M || k == 0)
    return NULL;
  RlncDecoder *d = calloc (1, sizeof *d);
  if (!d)
    return NULL;
  d->m = m;
  d->k = k;
  d->width = (2 * m + 31) & ~31;
  d->rows = malloc ((size_t) m * d->width);
  d->pivot_col = malloc (sizeof *d->pivot_col * m);
  d->pivot_row = malloc (sizeof *d->pivot_row * m);
  d->vec = malloc ((size_t) d->width);
  d->payload_mem = malloc ((size_t) m * k);
  d->payloads = malloc (sizeof *d->payloads * m);
  d->inverse = malloc ((size_t) m * m);
  d->gftbls = malloc ((size_t) 32 * m * m);
  d->mtab = malloc (sizeof *d->mtab * 256);
  d->sub = malloc ((size_t) m * m);
  d->rowsel = malloc (sizeof (int) * 2 * m);
  d->colmap = d->rowsel ? d->rowsel + m : NULL;
  d->ptrs = malloc (sizeof *d->ptrs * 2 * m);
  d->rsel = malloc (sizeof *d->rsel * (m + 1));
  d->rtbls = malloc ((size_t) 32 * (m + 1));
  d->vec2 = malloc ((size_t) d->width);
  d->tsel = malloc (sizeof *d->tsel * m);
  if (!d->tsel || !d->rsel || !d->rtbls || !d->vec2 || !d->sub || !d->rowsel || !d->ptrs || !d->rows || !d->pivot_col || !d->pivot_row || !d->vec || !d->payload_mem
      || !d->payloads || !d->inverse || !d->gftbls || !d->mtab) {
    rlnc_decoder_free (d);
    return NULL;
  }
  for (int c = 0; c < 256; c++)
    gf_vect_mul_init ((unsigned char) c, d->mtab[c]);
  for (int s = 0; s < m; s++)
    d->payloads[s] = d->payload_mem + (size_t) s * k;
#ifdef RLNC_HAVE_AVX2_ROWOPS
  d->avx2 = !!(gs_cpu_features () & GS_CPU_AVX2);
#endif
  rlnc_decoder_reset (d);
  return d;
}

void
rlnc_decoder_free (RlncDecoder *d)
{
  if (!d)
    return;
  free (d->rows);
  free (d->pivot_col);
  free (d->pivot_row);
  free (d->vec);
  free (d->payload_mem);
  free (d->payloads);
  free (d->inverse);
  free (d->gftbls);
  free (d->mtab);
  free (d->sub);
  free (d->rowsel);
  free (d->ptrs);
  free (d->rsel);
  free (d->rtbls);
  free (d->vec2);
  free (d->tsel);
  free (d);
}

void
rlnc_decoder_reset (RlncDecoder *d)
{
  d->rank = 0;
  d->inverse_ok = 0;
  memset (d->rows, 0, (size_t) d->m * d->width);
  for (int i = 0; i < d->m; i++)
    d->pivot_row[i] = -1;
}

int rlnc_decoder_m (const RlncDecoder *d) { return d->m; }
size_t rlnc_decoder_k (const RlncDecoder *d) { return d->k; }
int rlnc_decoder_rank (const RlncDecoder *d) { return d->rank; }

/* Stores reduced, normalised row v (pivot q) as the next row and keeps the
 * payload: the tail common to both row-operation paths. */
static RlncAddResult
add_commit (RlncDecoder *d, const uint8_t *v, int w, int q, const uint8_t *payload)
{
  int s = d->rank;
  memcpy (d->rows + (size_t) s * d->width, v, (size_t) w);   /* rest is 0 */
  d->pivot_col[s] = (int16_t) q;
  d->pivot_row[q] = (int16_t) s;
  memcpy (d->payloads[s], payload, d->k);
  d->rank++;
  d->inverse_ok = 0;
  return RLNC_ADD_INNOVATIVE;
}

#ifdef RLNC_HAVE_AVX2_ROWOPS
/* Same steps as the ISA-L path of rlnc_decoder_add, with the row loops of
 * rlnc_rowops.h: no table copies, no per-call dispatch. */
static RlncAddResult
add_avx2 (RlncDecoder *d, uint8_t *v, int w, const uint8_t *payload)
{
  const int m = d->m;
  int ns = 0;
  for (int r = 0; r < d->rank; r++) {
    uint8_t c = v[d->pivot_col[r]];
    if (c) {
      d->rsel[ns] = d->rows + (size_t) r * d->width;
      d->tsel[ns++] = d->mtab[c];
    }
  }
  if (ns > 0)
    rlnc_dot_avx2 (v, w, ns, (const uint8_t *const *) d->rsel, d->tsel);
  int q = 0;
  while (q < m && !v[q])
    q++;
  if (q == m)
    return RLNC_ADD_DEPENDENT;
  if (v[q] != 1)
    rlnc_scale_avx2 (v, w, d->mtab[gf256_inv (v[q])]);
  ns = 0;
  for (int r = 0; r < d->rank; r++) {
    uint8_t *row = d->rows + (size_t) r * d->width;
    uint8_t c = row[q];
    if (c) {
      d->rsel[ns] = row;
      d->tsel[ns++] = d->mtab[c];
    }
  }
  if (ns > 0)
    rlnc_axpy_rows_avx2 (v, w, ns, d->rsel, d->tsel);
  return add_commit (d, v, w, q, payload);
}
#endif

RlncAddResult
rlnc_decoder_add (RlncDecoder *d, const uint8_t *coefs, const uint8_t *payload)
{
  const int m = d->m;
  if (d->rank == m)
    return RLNC_ADD_FULL;
  /* Slots past the rank are zero in every row: operate on the live width. */
  const int w = (m + d->rank + 1 + 31) & ~31;

  uint8_t *v = d->vec;
  memset (v, 0, (size_t) d->width);
  memcpy (v, coefs, (size_t) m);
  v[m + d->rank] = 1;   /* the slot this packet's payload will take */
#ifdef RLNC_HAVE_AVX2_ROWOPS
  if (d->avx2)
    return add_avx2 (d, v, w, payload);
#endif

  /* Reduce. In reduced echelon form row r is the only one with a nonzero
   * (1) in column pivot_col[r], so the multipliers are v's entries at the
   * pivots as they are now: the whole reduction is one dot product
   * v + sum c_r row_r, one ISA-L call instead of `rank` passes over v. */
  int ns = 0;
  d->rsel[ns] = v;
  memcpy (d->rtbls, d->mtab[1], 32);
  ns++;
  for (int r = 0; r < d->rank; r++) {
    uint8_t c = v[d->pivot_col[r]];
    if (c) {
      d->rsel[ns] = d->rows + (size_t) r * d->width;
      memcpy (d->rtbls + 32 * ns, d->mtab[c], 32);
      ns++;
    }
  }
  if (ns > 1) {
    uint8_t *o[1] = { d->vec2 };
    ec_encode_data (w, ns, 1, d->rtbls, d->rsel, o);
    d->vec = d->vec2;
    d->vec2 = v;
    v = d->vec;
  }
  int q = 0;
  while (q < m && !v[q])
    q++;
  if (q == m)
    return RLNC_ADD_DEPENDENT;

  if (v[q] != 1) {
    uint8_t inv = gf256_inv (v[q]);
    gf_vect_mul (w, d->mtab[inv], v, v);
  }
  /* Jordan step: clear column q in the other rows, all rows in one
   * multi-output multiply-add. */
  ns = 0;
  for (int r = 0; r < d->rank; r++) {
    uint8_t *row = d->rows + (size_t) r * d->width;
    uint8_t c = row[q];
    if (c) {
      d->rsel[ns] = row;
      memcpy (d->rtbls + 32 * ns, d->mtab[c], 32);
      ns++;
    }
  }
  if (ns > 0)
    ec_encode_data_update (w, 1, ns, 0, d->rtbls, v, d->rsel);
  return add_commit (d, v, w, q, payload);
}

const uint8_t *
rlnc_decoder_inverse (RlncDecoder *d)
{
  const int m = d->m;
  if (d->rank < m)
    return NULL;
  if (!d->inverse_ok) {
    for (int p = 0; p < m; p++)
      memcpy (d->inverse + (size_t) p * m,
              d->rows + (size_t) d->pivot_row[p] * d->width + m, (size_t) m);
    d->inverse_ok = 1;
  }
  return d->inverse;
}

const uint8_t *const *
rlnc_decoder_payloads (const RlncDecoder *d)
{
  return (const uint8_t *const *) d->payloads;
}

int
rlnc_decoder_solve (RlncDecoder *d, uint8_t *out)
{
  const int m = d->m;
  const size_t k = d->k;
  const uint8_t *inv = rlnc_decoder_inverse (d);
  if (!inv)
    return -1;

  /* Rows of the inverse that are unit vectors are sources that arrived
   * uncoded (or were reduced to one): copy. The rest is one product over
   * only the slots those rows use. */
  int nrows = 0, ncols = 0;
  int *rowsel = d->rowsel, *colmap = d->colmap;   /* colmap: slot -> column */
  uint8_t **srcp = d->ptrs, **outp = d->ptrs + m;
  for (int s = 0; s < m; s++)
    colmap[s] = -1;
  for (int p = 0; p < m; p++) {
    const uint8_t *row = inv + (size_t) p * m;
    int nz = 0, at = -1;
    for (int s = 0; s < m; s++)
      if (row[s]) {
        nz++;
        at = s;
      }
    if (nz == 1 && row[at] == 1) {
      memcpy (out + (size_t) p * k, d->payloads[at], k);
      continue;
    }
    rowsel[nrows++] = p;
    for (int s = 0; s < m; s++)
      if (row[s] && colmap[s] < 0)
        colmap[s] = 1;
  }
  if (nrows > 0) {
    for (int s = 0; s < m; s++)
      if (colmap[s] >= 0) {
        colmap[s] = ncols;
        srcp[ncols++] = d->payloads[s];
      }
    uint8_t *sub = d->sub;
    for (int r = 0; r < nrows; r++) {
      const uint8_t *row = inv + (size_t) rowsel[r] * m;
      for (int s = 0; s < m; s++)
        if (colmap[s] >= 0)
          sub[(size_t) r * ncols + colmap[s]] = row[s];
      outp[r] = out + (size_t) rowsel[r] * k;
    }
    ec_init_tables (ncols, nrows, sub, d->gftbls);
    const size_t step = (size_t) 1 << 30;
    for (size_t off = 0; off < k; off += step) {
      size_t len = k - off < step ? k - off : step;
      if (off) {
        for (int c = 0; c < ncols; c++)
          srcp[c] += step;
        for (int r = 0; r < nrows; r++)
          outp[r] += step;
      }
      ec_encode_data ((int) len, ncols, nrows, d->gftbls, srcp, outp);
    }
  }
  return 0;
}
