/* test_rlnc.c: CPU tests of kernels/gf256 and kernels/rlnc, including the
 * GPU kernel's per-thread code run on the CPU (rlnc_product.h). Exit 0 when
 * every check passes, 1 otherwise; one line per check. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>
#include "gf256/gf256.h"
#include "rlnc/rlnc.h"
#include "rlnc/rlnc_seed.h"
#include "rlnc/rlnc_product.h"
#include "rlnc/rlnc_cuda.h"

#include "kernel_check.h"

/* xorshift64*: test data only */
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint32_t
rnd (void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t) ((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}
static void
fill (uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t) rnd ();
}
static void
fill_nonzero (uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t) (1 + rnd () % 255);
}

/* A set of b blocks of k bytes, contiguous, with a pointer table. */
typedef struct {
  uint8_t *mem;
  uint8_t **p;
  int b;
  size_t k;
} Blocks;
static Blocks
blocks_new (int b, size_t k)
{
  Blocks x = { calloc ((size_t) b * k + 1, 1), malloc (sizeof (uint8_t *) * (b + 1)), b, k };
  for (int i = 0; i < b; i++)
    x.p[i] = x.mem + (size_t) i * k;
  return x;
}
static void
blocks_free (Blocks *x)
{
  free (x->mem);
  free (x->p);
}
#define CP(x) ((const uint8_t *const *) (x).p)

/* ---- gf256 -------------------------------------------------------------- */
static void
test_gf256 (void)
{
  /* log/exp of the generator 2, built with plain shifts (not gf256.h). */
  int exp_t[512], log_t[256];
  int x = 1;
  for (int i = 0; i < 255; i++) {
    exp_t[i] = exp_t[i + 255] = x;
    log_t[x] = i;
    x <<= 1;
    if (x & 0x100)
      x ^= 0x11D;
  }
  int bad_mul = 0, bad_comm = 0, bad_isal = 0, bad_id = 0;
  for (int a = 0; a < 256; a++)
    for (int b = 0; b < 256; b++) {
      int want = (a && b) ? exp_t[log_t[a] + log_t[b]] : 0;
      uint8_t got = gf256_mul ((uint8_t) a, (uint8_t) b);
      bad_mul += got != want;
      bad_comm += got != gf256_mul ((uint8_t) b, (uint8_t) a);
      bad_isal += got != gf_mul ((unsigned char) a, (unsigned char) b);
    }
  for (int a = 0; a < 256; a++)
    bad_id += gf256_mul ((uint8_t) a, 1) != a || gf256_mul ((uint8_t) a, 0) != 0;
  check (bad_mul == 0, "gf256_mul == log/exp table on all 65536 pairs (%d wrong)", bad_mul);
  check (bad_comm == 0, "gf256_mul commutative on all pairs");
  check (bad_isal == 0, "gf256_mul == ISA-L gf_mul on all pairs (polynomial 0x11D)");
  check (bad_id == 0, "gf256 identity 1 and absorbing 0");

  int bad_inv = gf256_inv (0) != 0;
  for (int a = 1; a < 256; a++)
    bad_inv += gf256_mul ((uint8_t) a, gf256_inv ((uint8_t) a)) != 1
               || gf256_inv ((uint8_t) a) != exp_t[(255 - log_t[a]) % 255];
  check (bad_inv == 0, "gf256_inv: a * inv(a) == 1 for all a != 0, inv(0) == 0");

  /* associativity and distributivity on all pairs with a sample of c */
  int bad_assoc = 0, bad_dist = 0;
  static const uint8_t cs[] = { 0, 1, 2, 3, 0x1D, 0x53, 0x80, 0x8E, 0xCA, 0xFF };
  for (size_t ci = 0; ci < sizeof cs; ci++) {
    uint8_t c = cs[ci];
    for (int a = 0; a < 256; a++)
      for (int b = 0; b < 256; b++) {
        bad_assoc += gf256_mul (gf256_mul ((uint8_t) a, (uint8_t) b), c)
                     != gf256_mul ((uint8_t) a, gf256_mul ((uint8_t) b, c));
        bad_dist += gf256_mul (c, (uint8_t) (a ^ b))
                    != (gf256_mul (c, (uint8_t) a) ^ gf256_mul (c, (uint8_t) b));
      }
  }
  check (bad_assoc == 0, "gf256 associative (all pairs x 10 c)");
  check (bad_dist == 0, "gf256 distributive over xor (all pairs x 10 c)");

  /* packed forms agree with the scalar product, byte by byte */
  int bad_pack = 0, bad_pow = 0;
  for (int c = 0; c < 256; c++)
    for (int t = 0; t < 64; t++) {
      uint32_t w = rnd (), p[8];
      uint32_t want = 0;
      for (int b = 0; b < 4; b++)
        want |= (uint32_t) gf256_mul ((uint8_t) (w >> (8 * b)), (uint8_t) c) << (8 * b);
      bad_pack += gf256_mul4 (w, (uint8_t) c) != want;
      gf256_powers4 (w, p);
      uint32_t acc0 = rnd ();
      bad_pow += gf256_madd4_powers (acc0, p, (uint8_t) c) != (acc0 ^ want);
    }
  check (bad_pack == 0, "gf256_mul4 == 4 x gf256_mul (256 c x 64 words)");
  check (bad_pow == 0, "gf256_powers4 + gf256_madd4_powers == acc ^ c*x");
}

/* ---- seed --------------------------------------------------------------- */
static void
test_seed (void)
{
  uint8_t a[RLNC_MAX_M], b[RLNC_MAX_M];
  int bad_det = 0, zeros = 0, bad_idx = 0, same = 0;
  for (uint32_t s = 0; s < 2000; s++) {
    rlnc_coefs_from_seed (s, RLNC_MAX_M, a);
    rlnc_coefs_from_seed (s, RLNC_MAX_M, b);
    bad_det += memcmp (a, b, sizeof a) != 0;
    for (int i = 0; i < RLNC_MAX_M; i++) {
      zeros += a[i] == 0;
      bad_idx += a[i] != rlnc_seed_coef (s, (uint32_t) i);
    }
    rlnc_coefs_from_seed (s + 1, RLNC_MAX_M, b);
    same += memcmp (a, b, sizeof a) == 0;
  }
  /* a shorter vector is a prefix of a longer one */
  rlnc_coefs_from_seed (7, 5, b);
  rlnc_coefs_from_seed (7, RLNC_MAX_M, a);
  check (bad_det == 0, "seed: same seed gives the same vector (2000 seeds)");
  check (zeros == 0, "seed: every coefficient nonzero (512000 bytes)");
  check (bad_idx == 0, "seed: rlnc_coefs_from_seed == rlnc_seed_coef per index");
  check (same == 0 && memcmp (a, b, 5) == 0, "seed: seeds differ, prefix property");
  /* Known answer: the wire format depends on these bytes never changing. */
  static const uint8_t kat[8] = { 56, 1, 130, 163, 26, 90, 44, 196 };
  rlnc_coefs_from_seed (1, 8, a);
  printf ("# seed 1: %u %u %u %u %u %u %u %u\n", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  check (memcmp (a, kat, 8) == 0, "seed: known answer for seed 1");
}

/* ---- encode ------------------------------------------------------------- */
static void
test_encode (void)
{
  static const int ms[] = { 1, 2, 3, 16, 64, 255, 256 };
  static const size_t ks[] = { 1, 3, 17, 1023, 4097 };
  for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
      int m = ms[mi];
      size_t k = ks[ki];
      int n = m <= 16 ? m + 2 : 1 + (int) (rnd () % 4);
      Blocks src = blocks_new (m, k), a = blocks_new (n, k), b = blocks_new (n, k),
             c = blocks_new (n, k);
      uint8_t *coefs = malloc ((size_t) n * m);
      fill (src.mem, (size_t) m * k);
      fill (coefs, (size_t) n * m);
      rlnc_encode_ref (k, m, n, coefs, CP (src), a.p);
      rlnc_encode (k, m, n, coefs, CP (src), b.p);
      RlncEncodeTables *t = rlnc_encode_tables_new (m, n, coefs);
      rlnc_encode_with_tables (t, k, CP (src), c.p);
      rlnc_encode_tables_free (t);
      check (memcmp (a.mem, b.mem, (size_t) n * k) == 0
             && memcmp (a.mem, c.mem, (size_t) n * k) == 0,
             "encode == encode_ref == encode_with_tables m=%d n=%d k=%zu", m, n, k);
      blocks_free (&src);
      blocks_free (&a);
      blocks_free (&b);
      blocks_free (&c);
      free (coefs);
    }
}

/* ---- decode ------------------------------------------------------------- */
/* Feeds a decoder: `extra` more random packets than m, every fourth packet
 * followed by a dependent one (a combination of two earlier ones) and a
 * duplicate; nsys leading packets are systematic (source i uncoded, in a
 * shuffled order). Checks rank progression, results, solve, inverse,
 * decode_ref. */
static void
decode_case (int m, size_t k, int nsys, int extra, const char *what)
{
  int cap = 3 * (m + extra) + 8;
  Blocks src = blocks_new (m, k), pk = blocks_new (cap, k);
  uint8_t *coefs = calloc ((size_t) cap, (size_t) m);
  uint8_t *out = malloc ((size_t) m * k), *out2 = malloc ((size_t) m * k);
  int *perm = malloc (sizeof (int) * m);
  fill (src.mem, (size_t) m * k);
  for (int i = 0; i < m; i++)
    perm[i] = i;
  for (int i = m - 1; i > 0; i--) {
    int j = (int) (rnd () % (unsigned) (i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }

  RlncDecoder *d = rlnc_decoder_new (m, k);
  int np = 0, innov = 0, bad_dep = 0, bad_rank = 0, bad_full = 0, n_dep = 0;
  /* accepted packets, for decode_ref */
  int *acc = malloc (sizeof (int) * cap), nacc = 0;
  int total = m + extra;
  for (int t = 0; t < total && np < cap - 3; t++) {
    uint8_t *cv = coefs + (size_t) np * m;
    if (t < nsys && t < m)
      cv[perm[t]] = 1;
    else
      fill_nonzero (cv, (size_t) m);
    rlnc_encode_ref (k, m, 1, cv, CP (src), pk.p + np);
    int was_full = rlnc_decoder_rank (d) == m;
    RlncAddResult r = rlnc_decoder_add (d, cv, pk.p[np]);
    if (was_full)
      bad_full += r != RLNC_ADD_FULL;
    else if (r == RLNC_ADD_INNOVATIVE) {
      innov++;
      acc[nacc++] = np;
    }
    bad_rank += rlnc_decoder_rank (d) != innov;
    np++;
    if (t % 4 == 3 && nacc >= 2 && rlnc_decoder_rank (d) < m) {
      /* dependent: a*p_x + b*p_y of two accepted packets */
      uint8_t mix[2] = { (uint8_t) (1 + rnd () % 255), (uint8_t) (1 + rnd () % 255) };
      int x = acc[rnd () % nacc], y = acc[rnd () % nacc];
      const uint8_t *rows[2] = { coefs + (size_t) x * m, coefs + (size_t) y * m };
      uint8_t *dv = coefs + (size_t) np * m;
      uint8_t *dvp[1] = { dv };
      const uint8_t *pl[2] = { pk.p[x], pk.p[y] };
      rlnc_encode_ref ((size_t) m, 2, 1, mix, rows, dvp);
      rlnc_encode_ref (k, 2, 1, mix, pl, pk.p + np);
      int nz = 0;
      for (int i = 0; i < m; i++)
        nz |= dv[i];
      RlncAddResult r2 = rlnc_decoder_add (d, dv, pk.p[np]);
      bad_dep += nz && r2 != RLNC_ADD_DEPENDENT;
      n_dep++;
      /* duplicate of an accepted packet */
      r2 = rlnc_decoder_add (d, coefs + (size_t) x * m, pk.p[x]);
      bad_dep += r2 != RLNC_ADD_DEPENDENT;
      n_dep++;
      np++;
      bad_rank += rlnc_decoder_rank (d) != innov;
    }
  }
  check (bad_rank == 0 && bad_dep == 0 && bad_full == 0,
         "decoder %s m=%d k=%zu: rank progression, %d dependent/duplicate reported, FULL after rank m",
         what, m, k, n_dep);
  check (rlnc_decoder_rank (d) == m, "decoder %s m=%d: full rank (%d)", what, m,
         rlnc_decoder_rank (d));
  /* extra packets after full rank */
  check (rlnc_decoder_add (d, coefs, pk.p[0]) == RLNC_ADD_FULL,
         "decoder %s m=%d: RLNC_ADD_FULL at full rank", what, m);
  if (rlnc_decoder_rank (d) == m) {
    memset (out, 0, (size_t) m * k);
    check (rlnc_decoder_solve (d, out) == 0 && memcmp (out, src.mem, (size_t) m * k) == 0,
           "decoder %s m=%d k=%zu: solve == original", what, m, k);
    /* inverse x payloads with the scalar product */
    const uint8_t *inv = rlnc_decoder_inverse (d);
    Blocks o = blocks_new (m, k);
    rlnc_encode_ref (k, m, m, inv, rlnc_decoder_payloads (d), o.p);
    check (memcmp (o.mem, src.mem, (size_t) m * k) == 0,
           "decoder %s m=%d k=%zu: inverse x payloads (encode_ref) == original", what, m, k);
    blocks_free (&o);
    /* scalar reference on the accepted packets (kept small: it is slow) */
    if ((size_t) m * m * k <= 4u << 20) {
      uint8_t *cc = malloc ((size_t) nacc * m);
      const uint8_t **pp = malloc (sizeof *pp * nacc);
      for (int i = 0; i < nacc; i++) {
        memcpy (cc + (size_t) i * m, coefs + (size_t) acc[i] * m, (size_t) m);
        pp[i] = pk.p[acc[i]];
      }
      int rr = rlnc_decode_ref (k, m, nacc, cc, pp, out2);
      check (rr == m && memcmp (out2, src.mem, (size_t) m * k) == 0,
             "decode_ref %s m=%d k=%zu: rank %d, output == original", what, m, k, rr);
      free (cc);
      free (pp);
    }
  }
  /* reset and reuse */
  rlnc_decoder_reset (d);
  check (rlnc_decoder_rank (d) == 0 && rlnc_decoder_inverse (d) == NULL
         && rlnc_decoder_solve (d, out) == -1,
         "decoder %s m=%d: reset -> rank 0, no inverse, solve refuses", what, m);
  rlnc_decoder_free (d);
  free (acc);
  free (perm);
  free (coefs);
  free (out);
  free (out2);
  blocks_free (&src);
  blocks_free (&pk);
}

static void
test_decode (void)
{
  decode_case (1, 1, 0, 3, "coded");
  decode_case (1, 100, 1, 2, "systematic");
  decode_case (2, 17, 0, 4, "coded");
  decode_case (3, 33, 0, 4, "coded");
  decode_case (16, 1023, 0, 4, "coded");
  decode_case (16, 1023, 16, 4, "systematic-no-loss");
  decode_case (16, 513, 12, 6, "systematic-with-loss");
  decode_case (64, 100, 0, 6, "coded");
  decode_case (64, 4097, 48, 20, "systematic-with-loss");
  decode_case (255, 37, 0, 6, "coded");
  decode_case (256, 64, 0, 6, "coded");
  decode_case (256, 129, 200, 70, "systematic-with-loss");

  /* decode_ref reports the rank of a deficient system */
  {
    int m = 8;
    size_t k = 5;
    uint8_t c[3 * 8];
    Blocks p = blocks_new (3, k);
    fill_nonzero (c, sizeof c);
    memcpy (c + 16, c, 8);   /* third row repeats the first */
    fill (p.mem, 3 * k);
    check (rlnc_decode_ref (k, m, 3, c, CP (p), NULL) == 2,
           "decode_ref: rank 2 of a 3-row system with a repeated row");
    blocks_free (&p);
  }

  /* seeded packets decode */
  {
    int m = 32;
    size_t k = 300;
    Blocks src = blocks_new (m, k), pk = blocks_new (1, k);
    uint8_t cv[32], *out = malloc ((size_t) m * k);
    fill (src.mem, (size_t) m * k);
    RlncDecoder *d = rlnc_decoder_new (m, k);
    for (uint32_t s = 100; rlnc_decoder_rank (d) < m && s < 200; s++) {
      rlnc_coefs_from_seed (s, m, cv);
      rlnc_encode (k, m, 1, cv, CP (src), pk.p);
      rlnc_decoder_add (d, cv, pk.p[0]);
    }
    check (rlnc_decoder_solve (d, out) == 0 && memcmp (out, src.mem, (size_t) m * k) == 0,
           "seeded coefficient vectors decode (m=32)");
    rlnc_decoder_free (d);
    free (out);
    blocks_free (&src);
    blocks_free (&pk);
  }
}

/* ---- recode ------------------------------------------------------------- */
static void
test_recode (int m, size_t k)
{
  int n_in = m + 2, n_out = m + 3;
  Blocks src = blocks_new (m, k), in = blocks_new (n_in, k), out = blocks_new (n_out, k);
  uint8_t *ic = malloc ((size_t) n_in * m), *oc = malloc ((size_t) n_out * m),
          *mix = malloc ((size_t) n_out * n_in), *dec = malloc ((size_t) m * k);
  fill (src.mem, (size_t) m * k);
  fill_nonzero (ic, (size_t) n_in * m);
  fill_nonzero (mix, (size_t) n_out * n_in);
  rlnc_encode (k, m, n_in, ic, CP (src), in.p);
  rlnc_recode (k, m, n_in, ic, CP (in), n_out, mix, oc, out.p);
  /* coefficients: mix x in_coefs by the scalar product */
  Blocks icb = blocks_new (n_in, (size_t) m), ocb = blocks_new (n_out, (size_t) m);
  memcpy (icb.mem, ic, (size_t) n_in * m);
  rlnc_encode_ref ((size_t) m, n_in, n_out, mix, CP (icb), ocb.p);
  check (memcmp (ocb.mem, oc, (size_t) n_out * m) == 0,
         "recode m=%d: out_coefs == mix x in_coefs", m);
  /* every recoded packet is a coded packet of the sources */
  Blocks want = blocks_new (n_out, k);
  rlnc_encode_ref (k, m, n_out, oc, CP (src), want.p);
  check (memcmp (want.mem, out.mem, (size_t) n_out * k) == 0,
         "recode m=%d k=%zu: payloads == out_coefs x sources", m, k);
  RlncDecoder *d = rlnc_decoder_new (m, k);
  for (int j = 0; j < n_out; j++)
    rlnc_decoder_add (d, oc + (size_t) j * m, out.p[j]);
  check (rlnc_decoder_solve (d, dec) == 0 && memcmp (dec, src.mem, (size_t) m * k) == 0,
         "recode m=%d k=%zu: recoded packets decode to the original", m, k);
  rlnc_decoder_free (d);
  blocks_free (&src);
  blocks_free (&in);
  blocks_free (&out);
  blocks_free (&icb);
  blocks_free (&ocb);
  blocks_free (&want);
  free (ic);
  free (oc);
  free (mix);
  free (dec);
}

/* ---- GPU kernel, emulated ----------------------------------------------- */
/* Runs rlnc_product_batch's blocks and threads one after the other with the
 * very code of rlnc_product.h (stage coefficients, per-thread step, store)
 * and the kernel's constants (RLNC_GPU_THREADS, RLNC_GPU_STAGE_BYTES), on
 * pitched buffers whose padding must stay untouched. Also counts the
 * (row, 16-byte word) cells each thread stores: the tiling must write each
 * exactly once, and no block may stage more than the kernel's shared array. */
static void
emulate_product (uint32_t m, uint32_t n, uint64_t k, uint32_t blocks_x)
{
  uint64_t sp = ((k + 15) & ~(uint64_t) 15) + 16, op = ((k + 15) & ~(uint64_t) 15) + 32;
  uint64_t nwords = (k + 15) / 16;
  uint8_t *coefs = malloc ((size_t) n * m), *src = malloc (sp * m + 16),
          *out = malloc (op * n + 16), *stage = malloc (RLNC_GPU_STAGE_BYTES),
          *hits = calloc ((size_t) n * nwords, 1);
  int overstage = 0, multi = 0;
  fill (coefs, (size_t) n * m);
  fill (src, sp * m);
  memset (out, 0xA5, op * n);
  RlncProductLayout l = rlnc_product_layout (n, k, RLNC_GPU_THREADS);
  for (uint32_t bx = 0; bx < blocks_x; bx++)
    for (uint64_t work = bx; work < l.nwork; work += blocks_x) {
      uint32_t rows_here;
      uint32_t row0 = rlnc_product_block_rows (&l, work, n, &rows_here);
      if ((uint64_t) rows_here * m > RLNC_GPU_STAGE_BYTES) {
        overstage++;
        continue;
      }
      memcpy (stage, coefs + (size_t) row0 * m, (size_t) rows_here * m);
      for (uint32_t tid = 0; tid < RLNC_GPU_THREADS; tid++) {
        uint32_t tile_row, nrows;
        uint64_t w;
        if (!rlnc_product_thread_tile (&l, work, tid, n, &tile_row, &nrows, &w))
          continue;
        /* the kernel reads stage rows [tile_row - row0, + nrows) */
        if (tile_row < row0 || tile_row + nrows > row0 + rows_here) {
          overstage++;
          continue;
        }
        uint32_t acc[RLNC_PRODUCT_ROWS][4];
        rlnc_product_step (stage + (tile_row - row0) * m, m, nrows, src, sp, k, w, acc);
        for (uint32_t r = 0; r < nrows; r++) {
          rlnc_product_store16 (out + (tile_row + r) * op, k, w, acc[r]);
          if (hits[(size_t) (tile_row + r) * nwords + w]++)
            multi++;
        }
      }
    }
  Blocks want = blocks_new ((int) n, (size_t) k);
  const uint8_t **sptr = malloc (sizeof *sptr * m);
  for (uint32_t i = 0; i < m; i++)
    sptr[i] = src + i * sp;
  rlnc_encode_ref ((size_t) k, (int) m, (int) n, coefs, sptr, want.p);
  int bad = 0, pad = 0;
  for (uint32_t j = 0; j < n; j++) {
    bad += memcmp (out + j * op, want.p[j], (size_t) k) != 0;
    for (uint64_t b = k; b < op; b++)
      pad += out[j * op + b] != 0xA5;
  }
  check (bad == 0 && pad == 0 && overstage == 0 && multi == 0,
         "kernel emulation m=%u n=%u k=%llu grid.x=%u: == encode_ref (%d rows wrong, "
         "%d pad bytes touched, %d stage overruns, %d cells written twice)",
         m, n, (unsigned long long) k, blocks_x, bad, pad, overstage, multi);
  blocks_free (&want);
  free (sptr);
  free (coefs);
  free (src);
  free (out);
  free (stage);
  free (hits);
}

/* gridDim.x: one block per work item of the product (each thread makes
 * RLNC_PRODUCT_ROWS rows x 16 bytes), capped; never 0. */
static void
test_gpu_geometry (void)
{
  static const struct { uint32_t n; uint64_t k; unsigned want; } g[] = {
    { 64, 4096, 8 },        /* 8 row tiles x one 256-word span */
    { 256, 4096, 32 },
    { 64, 1024, 2 },        /* span 64: 4 tiles per block */
    { 512, 31, 8 },         /* span 32: 64 rows per block */
    { 5, 17, 1 },
    { 20, 70000, 54 },      /* 3 row tiles x 18 spans */
    { 1, 1, 1 },
    { 0, 4096, 1 },
    { 4096, 1 << 20, RLNC_GPU_BLOCKS_X },
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
    unsigned got = rlnc_gpu_blocks_x (g[i].n, g[i].k);
    if (got != g[i].want) {
      printf ("# blocks_x (n=%u, k=%llu) = %u, want %u\n", g[i].n,
              (unsigned long long) g[i].k, got, g[i].want);
      bad++;
    }
  }
  check (bad == 0, "GPU grid: rlnc_gpu_blocks_x == work items (capped)");
}

int
main (void)
{
  test_gf256 ();
  test_seed ();
  test_encode ();
  test_decode ();
  test_recode (1, 10);
  test_recode (8, 1001);
  test_recode (64, 257);
  emulate_product (1, 1, 1, 1);
  emulate_product (3, 5, 17, 3);
  emulate_product (16, 9, 1023, 2);
  test_gpu_geometry ();
  emulate_product (64, 64, 4096, rlnc_gpu_blocks_x (64, 4096));
  emulate_product (64, 64, 4096, 7);
  emulate_product (255, 13, 4097, 1024);
  emulate_product (256, 70, 100, 5);
  emulate_product (7, 512, 31, 1024);
  emulate_product (32, 20, 70000, 4);
  emulate_product (32, 20, 70000, rlnc_gpu_blocks_x (20, 70000));
  emulate_product (256, 512, 33, rlnc_gpu_blocks_x (512, 33));
  emulate_product (256, 512, 33, 3);
  emulate_product (256, 65, 4100, rlnc_gpu_blocks_x (65, 4100));
  emulate_product (100, 9, 513, 1);
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
