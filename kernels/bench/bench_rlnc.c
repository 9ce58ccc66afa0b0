/* bench_rlnc.c: CPU throughput of the RLNC paths against ISA-L used
 * directly. Usage: bench_rlnc [--quick] [--json FILE]
 * Throughput: coded output bytes/s (encode), decoded source bytes/s
 * (decode), in MB/s (10^6). Each figure is the median of repeats, each
 * repeat time-bounded, so the whole grid stays well under a minute. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <isa-l/erasure_code.h>
#include "rlnc/rlnc.h"

#define REPEATS 5
#define REPEAT_S 0.04   /* 5 x 0.04 s = 0.2 s per figure */

static FILE *json;

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int
cmp_d (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

typedef void (*BenchFn) (void *ctx);

/* Median over REPEATS of (bytes per call * calls / time), in MB/s; each
 * repeat runs whole calls until REPEAT_S has passed (at least one). */
static double
measure (BenchFn fn, void *ctx, double bytes_per_call)
{
  double r[REPEATS];
  fn (ctx);   /* warm caches and tables */
  for (int i = 0; i < REPEATS; i++) {
    long calls = 0;
    double t0 = now (), t;
    do {
      fn (ctx);
      calls++;
      t = now ();
    } while (t - t0 < REPEAT_S);
    r[i] = bytes_per_call * calls / (t - t0) / 1e6;
  }
  qsort (r, REPEATS, sizeof *r, cmp_d);
  return r[REPEATS / 2];
}

static uint64_t rs = 88172645463325252ull;
static uint8_t
rnd8 (void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint8_t) (rs >> 24);
}

typedef struct {
  int m, n;
  size_t k;
  uint8_t *coefs;        /* n x m */
  uint8_t **src, **out;  /* m, n blocks */
  uint8_t *gftbls;
  RlncEncodeTables *tables;
  /* decode */
  uint8_t *pk_coefs;     /* m x m, an invertible random matrix */
  uint8_t **pk;          /* m coded payloads */
  uint8_t *dec_out;      /* m*k */
  RlncDecoder *dec;
  uint8_t *inv_in, *inv_out, *dtbls;
} Ctx;

static void
run_anchor (void *p)
{
  Ctx *c = p;
  ec_init_tables (c->m, c->n, c->coefs, c->gftbls);
  ec_encode_data ((int) c->k, c->m, c->n, c->gftbls, c->src, c->out);
}
static void
run_encode (void *p)
{
  Ctx *c = p;
  rlnc_encode (c->k, c->m, c->n, c->coefs, (const uint8_t *const *) c->src, c->out);
}
static void
run_encode_tables (void *p)
{
  Ctx *c = p;
  rlnc_encode_with_tables (c->tables, c->k, (const uint8_t *const *) c->src, c->out);
}
static void
run_ref_row (void *p)
{
  Ctx *c = p;
  rlnc_encode_ref (c->k, c->m, 1, c->coefs, (const uint8_t *const *) c->src, c->out);
}
static void
run_decode (void *p)
{
  Ctx *c = p;
  rlnc_decoder_reset (c->dec);
  for (int j = 0; j < c->m; j++)
    rlnc_decoder_add (c->dec, c->pk_coefs + (size_t) j * c->m, c->pk[j]);
  rlnc_decoder_solve (c->dec, c->dec_out);
}
/* ISA-L's own decode route: invert the received matrix, one product. */
static void
run_isal_decode (void *p)
{
  Ctx *c = p;
  uint8_t *o[RLNC_MAX_M];
  memcpy (c->inv_in, c->pk_coefs, (size_t) c->m * c->m);
  gf_invert_matrix (c->inv_in, c->inv_out, c->m);
  ec_init_tables (c->m, c->m, c->inv_out, c->dtbls);
  for (int i = 0; i < c->m; i++)
    o[i] = c->dec_out + (size_t) i * c->k;
  ec_encode_data ((int) c->k, c->m, c->m, c->dtbls, c->pk, o);
}

static void
emit (const char *op, int m, size_t k, double mbps, const char *anchor_name,
      double anchor)
{
  char line[512];
  if (anchor > 0)
    snprintf (line, sizeof line,
              "{\"bench\":\"rlnc\",\"op\":\"%s\",\"m\":%d,\"k\":%zu,\"mbps\":%.1f,"
              "\"anchor\":\"%s\",\"anchor_mbps\":%.1f,\"ratio\":%.3f,\"device\":\"cpu\",\"threads\":1}",
              op, m, k, mbps, anchor_name, anchor, mbps / anchor);
  else
    snprintf (line, sizeof line,
              "{\"bench\":\"rlnc\",\"op\":\"%s\",\"m\":%d,\"k\":%zu,\"mbps\":%.1f,"
              "\"device\":\"cpu\",\"threads\":1}", op, m, k, mbps);
  printf ("%s\n", line);
  if (json)
    fprintf (json, "%s\n", line);
}

static void
bench_one (int m, size_t k)
{
  Ctx c = { .m = m, .n = m, .k = k };
  c.coefs = malloc ((size_t) m * m);
  c.src = malloc (sizeof *c.src * m);
  c.out = malloc (sizeof *c.out * m);
  c.pk = malloc (sizeof *c.pk * m);
  for (int i = 0; i < m; i++) {
    c.src[i] = malloc (k);
    c.out[i] = malloc (k);
    c.pk[i] = malloc (k);
    for (size_t b = 0; b < k; b++)
      c.src[i][b] = rnd8 ();
  }
  for (int i = 0; i < m * m; i++)
    c.coefs[i] = (uint8_t) (1 + rnd8 () % 255);
  c.gftbls = malloc ((size_t) 32 * m * m);
  c.dtbls = malloc ((size_t) 32 * m * m);
  c.tables = rlnc_encode_tables_new (m, m, c.coefs);
  c.dec_out = malloc ((size_t) m * k);
  c.inv_in = malloc ((size_t) m * m);
  c.inv_out = malloc ((size_t) m * m);
  c.dec = rlnc_decoder_new (m, k);
  /* a full-rank set of m coded packets (redraw the rare singular one) */
  c.pk_coefs = malloc ((size_t) m * m);
  for (;;) {
    for (int i = 0; i < m * m; i++)
      c.pk_coefs[i] = (uint8_t) (1 + rnd8 () % 255);
    memcpy (c.inv_in, c.pk_coefs, (size_t) m * m);
    if (gf_invert_matrix (c.inv_in, c.inv_out, m) == 0)
      break;
  }
  rlnc_encode (k, m, m, c.pk_coefs, (const uint8_t *const *) c.src, c.pk);

  double bytes = (double) m * k;
  double anchor = measure (run_anchor, &c, bytes);
  double enc = measure (run_encode, &c, bytes);
  double enct = measure (run_encode_tables, &c, bytes);
  double ref = measure (run_ref_row, &c, (double) k);   /* one row: it is slow */
  double dec = measure (run_decode, &c, bytes);
  double idec = measure (run_isal_decode, &c, bytes);
  run_decode (&c);
  int ok = memcmp (c.dec_out, c.src[0], k) == 0;
  for (int i = 1; i < m && ok; i++)
    ok = memcmp (c.dec_out + (size_t) i * k, c.src[i], k) == 0;

  printf (
           "# m=%3d k=%5zu | isal %8.1f | encode %8.1f (%.3f) tables %8.1f (%.3f) | ref %6.1f (x%.0f) | "
           "decode %8.1f (%.3f of encode) | isal-decode %8.1f (decode/isal %.3f)%s\n",
           m, k, anchor, enc, enc / anchor, enct, enct / anchor, ref, enc / ref,
           dec, dec / enc, idec, dec / idec, ok ? "" : "  DECODE WRONG");
  emit ("encode-isal-anchor", m, k, anchor, "", 0);
  emit ("encode", m, k, enc, "encode-isal-anchor", anchor);
  emit ("encode-tables", m, k, enct, "encode-isal-anchor", anchor);
  emit ("encode-ref", m, k, ref, "encode", enc);
  emit ("decode", m, k, dec, "encode", enc);
  emit ("decode-isal", m, k, idec, "", 0);
  emit ("decode-vs-isal-decode", m, k, dec, "decode-isal", idec);

  for (int i = 0; i < m; i++) {
    free (c.src[i]);
    free (c.out[i]);
    free (c.pk[i]);
  }
  free (c.src); free (c.out); free (c.pk); free (c.coefs); free (c.gftbls);
  free (c.dtbls); free (c.dec_out); free (c.inv_in); free (c.inv_out);
  free (c.pk_coefs);
  rlnc_encode_tables_free (c.tables);
  rlnc_decoder_free (c.dec);
}

int
main (int argc, char **argv)
{
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "--quick"))
      quick = 1;
    else if (!strcmp (argv[i], "--json") && i + 1 < argc) {
      json = fopen (argv[++i], "w");
      if (!json) {
        perror (argv[i]);
        return 1;
      }
    } else {
      fprintf (stderr, "usage: %s [--quick] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  printf ("# rlnc CPU bench, one thread, MB/s (10^6 B/s); n = m coded blocks; "
          "ratios in parentheses\n");
  static const int ms[] = { 16, 64, 128, 256 };
  static const size_t ks[] = { 1024, 4096, 16384 };
  if (quick)
    bench_one (64, 4096);
  else
    for (size_t a = 0; a < 4; a++)
      for (size_t b = 0; b < 3; b++)
        bench_one (ms[a], ks[b]);
  if (json)
    fclose (json);
  return 0;
}
