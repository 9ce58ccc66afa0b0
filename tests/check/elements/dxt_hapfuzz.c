/* The HAP reader (plugins/dxt/hap.c) under 100k random mutations and
 * truncations of valid frames: plain, Snappy, chunked (0xC? with decode
 * instructions, with and without an offset table) and the 8-byte header
 * form. Each case is copied into a buffer of exactly its length and decoded
 * into a texture buffer of exactly the expected size, so that the
 * -fsanitize=address build of this test (elements-dxt-hapfuzz-asan) catches
 * any read or write past either. The plain build checks only that nothing
 * crashes and that valid frames still decode. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <snappy-c.h>

#include "hap.h"

#define N_SEEDS 7               /* valid frames the mutations start from */
#define TEX_SIZE 2048           /* a 32x32 DXT5 / 64x32 DXT1 texture */
#define ITERATIONS 100000

static uint32_t rng = 12345;

static uint32_t
next (void)
{
  /* xorshift32: deterministic, no libc rand state */
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

static size_t
put_header (uint8_t *p, uint8_t type, size_t size, int long_form)
{
  if (!long_form) {
    p[0] = size;
    p[1] = size >> 8;
    p[2] = size >> 16;
    p[3] = type;
    return 4;
  }
  p[0] = p[1] = p[2] = 0;
  p[3] = type;
  p[4] = size;
  p[5] = size >> 8;
  p[6] = size >> 16;
  p[7] = size >> 24;
  return 8;
}

static void
put32 (uint8_t *p, uint32_t v)
{
  p[0] = v;
  p[1] = v >> 8;
  p[2] = v >> 16;
  p[3] = v >> 24;
}

/* A chunked frame: 3 chunks (Snappy, none, Snappy) with decode
 * instructions, written by hand from the spec. */
static size_t
make_complex (uint8_t *out, const uint8_t *tex, int with_offsets)
{
  uint8_t chunks[3][TEX_SIZE + 64];
  size_t clen[3], part = TEX_SIZE / 3, o = 0, instr = 0, pos, i;
  uint8_t comp[3] = { 0x0B, 0x0A, 0x0B };
  uint8_t ins[128];
  size_t in_len[3] = { part, part, TEX_SIZE - 2 * part };
  size_t total = 0;

  for (i = 0; i < 3; i++) {
    const uint8_t *src = tex + i * part;

    if (comp[i] == 0x0B) {
      clen[i] = sizeof (chunks[i]);
      snappy_compress ((const char *) src, in_len[i], (char *) chunks[i],
          &clen[i]);
    } else {
      memcpy (chunks[i], src, in_len[i]);
      clen[i] = in_len[i];
    }
  }
  instr += put_header (ins + instr, 0x02, 3, 0);
  memcpy (ins + instr, comp, 3);
  instr += 3;
  instr += put_header (ins + instr, 0x03, 12, 0);
  for (i = 0; i < 3; i++, instr += 4)
    put32 (ins + instr, clen[i]);
  if (with_offsets) {
    instr += put_header (ins + instr, 0x04, 12, 0);
    for (i = 0; i < 3; i++, instr += 4) {
      put32 (ins + instr, o);
      o += clen[i];
    }
  }
  for (i = 0; i < 3; i++)
    total += clen[i];
  pos = put_header (out, 0xCE, 4 + instr + total, 0);
  pos += put_header (out + pos, 0x01, instr, 0);
  memcpy (out + pos, ins, instr);
  pos += instr;
  for (i = 0; i < 3; i++) {
    memcpy (out + pos, chunks[i], clen[i]);
    pos += clen[i];
  }
  return pos;
}

int
main (void)
{
  static uint8_t frames[N_SEEDS][TEX_SIZE * 2 + 256];
  size_t flen[N_SEEDS];
  uint8_t tex[TEX_SIZE], check[TEX_SIZE];
  long n_ok = 0, n_err = 0, i;
  int f;

  for (i = 0; i < TEX_SIZE; i++)
    tex[i] = (i % 97 < 50) ? (uint8_t) (i / 7) : (uint8_t) next ();

  flen[0] = gs_hap_write_frame (frames[0], sizeof (frames[0]), GS_HAP_TEX_DXT1,
      0, 1, tex, TEX_SIZE);
  flen[1] = gs_hap_write_frame (frames[1], sizeof (frames[1]), GS_HAP_TEX_DXT5,
      1, 1, tex, TEX_SIZE);
  flen[2] = make_complex (frames[2], tex, 0);
  flen[3] = make_complex (frames[3], tex, 1);
  flen[4] = put_header (frames[4], 0xAF, TEX_SIZE, 1);
  memcpy (frames[4] + 8, tex, TEX_SIZE);
  flen[4] += TEX_SIZE;
  /* our own chunked writer, stored and Snappy chunks */
  flen[5] = gs_hap_write_frame (frames[5], sizeof (frames[5]),
      GS_HAP_TEX_YCOCG, 0, 5, tex, TEX_SIZE);
  flen[6] = gs_hap_write_frame (frames[6], sizeof (frames[6]),
      GS_HAP_TEX_DXT1, 1, 3, tex, TEX_SIZE);
  if (flen[5] == 0 || frames[5][3] != 0xCF || flen[6] == 0 ||
      frames[6][3] != 0xCB) {
    fprintf (stderr, "chunked frames not written as 0xC?\n");
    return 1;
  }
  if (frames[1][3] != 0xBE) {
    fprintf (stderr, "Snappy frame not compressed (type 0x%02x)\n",
        frames[1][3]);
    return 1;
  }

  /* the valid frames decode to the texture */
  for (f = 0; f < N_SEEDS; f++) {
    int r = gs_hap_decode (frames[f], flen[f], check, TEX_SIZE);

    if (r != GS_HAP_OK || memcmp (check, tex, TEX_SIZE) != 0) {
      fprintf (stderr, "valid frame %d: %s\n", f, gs_hap_result_str (r));
      return 1;
    }
  }

  for (i = 0; i < ITERATIONS; i++) {
    size_t len, k, nmut;
    uint8_t *buf, *out;
    size_t out_size;
    GsHapInfo info;

    f = next () % N_SEEDS;
    len = flen[f];
    switch (next () % 4) {
      case 0:                  /* truncation */
        len = next () % (len + 1);
        break;
      case 1:                  /* truncation of the header region */
        len = next () % 16;
        if (len > flen[f])
          len = flen[f];
        break;
      default:
        break;
    }
    buf = malloc (len ? len : 1);
    memcpy (buf, frames[f], len);
    nmut = next () % 6;
    for (k = 0; k < nmut && len; k++) {
      size_t at = (next () % 4 == 0) ? next () % (len < 48 ? len : 48) :
          next () % len;
      buf[at] = (next () % 3 == 0) ? 0xFF : (uint8_t) next ();
    }
    /* sometimes the caller expects another size */
    out_size = (next () % 8 == 0) ? next () % (TEX_SIZE + 64) + 1 : TEX_SIZE;
    out = malloc (out_size);
    (void) gs_hap_peek (buf, len, &info);
    if (gs_hap_decode (buf, len, out, out_size) == GS_HAP_OK)
      n_ok++;
    else
      n_err++;
    free (out);
    free (buf);
  }
  printf ("hapfuzz: %d iterations, %ld decoded, %ld rejected\n", ITERATIONS,
      n_ok, n_err);
  return n_err > 0 ? 0 : 1;
}
