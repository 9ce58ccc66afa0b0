/* test_dxt.c: DXT kernels on the CPU. Block level (solid colours, gradients,
 * two-colour blocks, alpha edge cases, the opaque 4-colour-mode rule, error
 * bounds, YCoCg), frame level (every input format against RGBA / a
 * reference YUV converter, odd sizes and edge replication, slices), SIMD ==
 * scalar byte for byte, and quality on a real photograph against stb_dxt
 * and libsquish. One line per check, then "N passed, N failed". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dxt/dxt.h"
#include "dxt/dxt_block.h"
#include "test_dxt_common.c"

static int n_pass, n_fail;
static void
check (int ok, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  printf ("%s - ", ok ? "ok" : "FAIL");
  vprintf (fmt, ap);
  printf ("\n");
  va_end (ap);
  ok ? n_pass++ : n_fail++;
}

static uint32_t rs = 0x9e3779b9u;
static uint32_t rnd (void) { rs ^= rs << 13; rs ^= rs >> 17; rs ^= rs << 5; return rs; }

static const DxtCodec codecs[] = { DXT_BC1, DXT_BC3, DXT_YCOCG };
static const char *codec_name[] = { "bc1", "bc3", "ycocg" };
static const char *q_name[] = { "fast", "high" };

/* colour block (8 bytes) in 4-colour mode: colour0 > colour1 */
static int
four_colour (const uint8_t *b)
{
  return (b[0] | b[1] << 8) > (b[2] | b[3] << 8);
}
static const uint8_t *
colour_part (DxtCodec c, const uint8_t *blk) { return c == DXT_BC1 ? blk : blk + 8; }

/* max abs channel error and squared error of a block round trip */
static int
roundtrip (DxtCodec c, DxtQuality q, const uint8_t px[64], int *maxerr, int with_alpha, int *four)
{
  uint8_t blk[16], out[64];
  dxt_encode_block (c, q, px, blk);
  dxt_decode_block (c, blk, out);
  int se = 0, me = 0;
  for (int i = 0; i < 64; i++) {
    if ((i & 3) == 3 && !with_alpha)
      continue;
    int d = abs (px[i] - out[i]);
    me = d > me ? d : me;
    se += d * d;
  }
  *maxerr = me;
  if (four) *four = four_colour (colour_part (c, blk));
  return se;
}

static int e5 (int v) { return (v << 3) | (v >> 2); }
static int e6 (int v) { return (v << 2) | (v >> 4); }

static void
test_solid (void)
{
  /* closed-form 565 quantiser == exhaustive nearest search */
  int qbad = 0;
  for (int bits = 5; bits <= 6; bits++)
    for (int v = 0; v < 256; v++) {
      int best = 0, bd = 1 << 20;
      for (int q = 0; q < (1 << bits); q++) {
        int e = bits == 5 ? e5 (q) : e6 (q), d = abs (e - v);
        if (d < bd) { bd = d; best = q; }
      }
      qbad += best != dxt_q_bits (v, bits);
    }
  check (qbad == 0, "dxt_q_bits = exhaustive nearest 5/6-bit value for all 0..255 (%d off)", qbad);
  for (int q = 0; q < 2; q++)
    for (int ci = 0; ci < 2; ci++) {
      DxtCodec c = codecs[ci];
      int bad = 0, not4 = 0;
      for (uint32_t w = 0; w < 65536; w++) {
        uint8_t px[64];
        int rgb[3];
        dxt_unpack565 (w, rgb);
        for (int i = 0; i < 16; i++) {
          px[4 * i] = rgb[0]; px[4 * i + 1] = rgb[1]; px[4 * i + 2] = rgb[2]; px[4 * i + 3] = 255;
        }
        int me, f;
        roundtrip (c, (DxtQuality) q, px, &me, 1, &f);
        bad += me != 0;
        not4 += !f;
      }
      check (bad == 0 && not4 == 0, "%s %s: all 65536 565-exact solid colours exact (%d wrong), 4-colour mode (%d not)",
             codec_name[ci], q_name[q], bad, not4);
    }
  for (int q = 0; q < 2; q++) {
    int worst = 0, not4 = 0;
    for (int n = 0; n < 20000; n++) {
      uint8_t px[64];
      uint32_t r = rnd ();
      for (int i = 0; i < 16; i++) {
        px[4 * i] = r; px[4 * i + 1] = r >> 8; px[4 * i + 2] = r >> 16; px[4 * i + 3] = 255;
      }
      int me, f;
      roundtrip (DXT_BC1, (DxtQuality) q, px, &me, 0, &f);
      worst = me > worst ? me : worst;
      not4 += !f;
    }
    /* the 1/3 point of two 5-bit values reaches every 8-bit value within 1 */
    check (worst <= 1 && not4 == 0, "bc1 %s: 20000 random solid colours, max channel error %d <= 1", q_name[q], worst);
  }
  /* every 8-bit grey and pure channel value */
  int worst = 0;
  for (int v = 0; v < 256; v++)
    for (int ch = 0; ch < 4; ch++) {
      uint8_t px[64];
      for (int i = 0; i < 16; i++) {
        px[4 * i] = ch == 3 || ch == 0 ? v : 0; px[4 * i + 1] = ch == 3 || ch == 1 ? v : 0;
        px[4 * i + 2] = ch == 3 || ch == 2 ? v : 0; px[4 * i + 3] = 255;
      }
      int me;
      roundtrip (DXT_BC1, DXT_HIGH, px, &me, 0, NULL);
      worst = me > worst ? me : worst;
    }
  check (worst <= 1, "bc1 high: all solid greys / pure channels within 1 (max %d)", worst);
}

static void
test_gradients_twocolour (void)
{
  for (int q = 0; q < 2; q++) {
    int worst4 = 0, worst7 = 0;
    for (int n = 0; n < 3000; n++) {
      /* linear gradient between two random colours along x, y (4 levels,
       * which the 4-entry palette holds) or the diagonal (7 levels) */
      uint8_t px[64], a[3], b[3];
      for (int c = 0; c < 3; c++) { a[c] = rnd (); b[c] = rnd (); }
      int dir = n % 3;
      for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
          int t = dir == 0 ? i * 2 : (dir == 1 ? j * 2 : i + j);   /* 0..6 */
          for (int c = 0; c < 3; c++) px[16 * j + 4 * i + c] = (a[c] * (6 - t) + b[c] * t + 3) / 6;
          px[16 * j + 4 * i + 3] = 255;
        }
      int me, f;
      roundtrip (DXT_BC1, (DxtQuality) q, px, &me, 0, &f);
      if (!f) me = 999;
      if (dir == 2) worst7 = me > worst7 ? me : worst7;
      else worst4 = me > worst4 ? me : worst4;
    }
    /* 4 levels: 565 endpoint quantisation only (+-4 red/blue, plus the
     * 1/3 rounding); 7 levels: the odd ones sit half way between palette
     * entries, up to 255/6 = 42.5 off */
    check (worst4 <= 8, "bc1 %s: 2000 4-level gradients, max channel error %d <= 8", q_name[q], worst4);
    check (worst7 <= 45, "bc1 %s: 1000 7-level diagonal gradients, max channel error %d <= 45", q_name[q], worst7);
  }
  for (int q = 0; q < 2; q++) {
    int bad = 0, not4 = 0;
    for (int n = 0; n < 5000; n++) {
      int c0[3], c1[3];
      dxt_unpack565 (rnd () & 0xffff, c0);
      dxt_unpack565 (rnd () & 0xffff, c1);
      uint8_t px[64];
      uint32_t mask = rnd ();
      for (int i = 0; i < 16; i++) {
        const int *c = (mask >> i) & 1 ? c1 : c0;
        px[4 * i] = c[0]; px[4 * i + 1] = c[1]; px[4 * i + 2] = c[2]; px[4 * i + 3] = 255;
      }
      int me, f;
      roundtrip (DXT_BC1, (DxtQuality) q, px, &me, 0, &f);
      bad += me != 0;
      not4 += !f;
    }
    check (bad == 0 && not4 == 0, "bc1 %s: 5000 two-colour blocks of 565-exact colours exact (%d not)", q_name[q], bad);
  }
}

static void
test_alpha (void)
{
  for (int q = 0; q < 2; q++) {
    uint8_t px[64];
    int me, ok = 1;
    for (int v = 0; v < 256; v++) {
      for (int i = 0; i < 64; i++) px[i] = (i & 3) == 3 ? v : (uint8_t) (i * 7);
      roundtrip (DXT_BC3, (DxtQuality) q, px, &me, 1, NULL);
      uint8_t blk[16], out[64];
      dxt_encode_block (DXT_BC3, (DxtQuality) q, px, blk);
      dxt_decode_block (DXT_BC3, blk, out);
      for (int i = 0; i < 16; i++) ok &= out[4 * i + 3] == v;
    }
    check (ok, "bc3 %s: constant alpha 0..255 (all 0, all 255 included) exact", q_name[q]);
    int bad = 0;
    for (int n = 0; n < 5000; n++) {
      int a = rnd () & 255, b = rnd () & 255;
      if (n == 0) { a = 0; b = 255; }
      uint32_t mask = rnd ();
      for (int i = 0; i < 16; i++) {
        px[4 * i] = px[4 * i + 1] = px[4 * i + 2] = 128;
        px[4 * i + 3] = (mask >> i) & 1 ? a : b;
      }
      uint8_t blk[16], out[64];
      dxt_encode_block (DXT_BC3, (DxtQuality) q, px, blk);
      dxt_decode_block (DXT_BC3, blk, out);
      for (int i = 0; i < 16; i++) bad += out[4 * i + 3] != px[4 * i + 3];
    }
    check (bad == 0, "bc3 %s: two-valued alpha (0/255 included) exact (%d pixels off)", q_name[q], bad);
    int worst = 0;
    for (int n = 0; n < 2000; n++) {
      int a = rnd () & 255, b = rnd () & 255;
      for (int i = 0; i < 16; i++) {
        px[4 * i] = px[4 * i + 1] = px[4 * i + 2] = 200;
        px[4 * i + 3] = (a * (15 - i) + b * i + 7) / 15;
      }
      uint8_t blk[16], out[64];
      dxt_encode_block (DXT_BC3, (DxtQuality) q, px, blk);
      dxt_decode_block (DXT_BC3, blk, out);
      for (int i = 0; i < 16; i++) {
        int d = abs (out[4 * i + 3] - px[4 * i + 3]);
        worst = d > worst ? d : worst;
      }
    }
    /* 16 levels onto 8: at most half of a 255/7 step, plus rounding */
    check (worst <= 19, "bc3 %s: alpha gradients, max error %d <= 19", q_name[q], worst);
  }
}

static void
test_random_bounds (void)
{
  for (int ci = 0; ci < 3; ci++)
    for (int q = 0; q < 2; q++) {
      double se = 0;
      int not4 = 0, worst = 0;
      for (int n = 0; n < 20000; n++) {
        uint8_t px[64];
        /* smooth-ish random blocks: a base colour plus small noise */
        uint32_t base = rnd ();
        for (int i = 0; i < 64; i++) {
          int v = (int) ((base >> (8 * (i & 3))) & 255) + (int) (rnd () % 33) - 16;
          px[i] = v < 0 ? 0 : v > 255 ? 255 : v;
        }
        if (codecs[ci] != DXT_BC3)
          for (int i = 0; i < 16; i++) px[4 * i + 3] = 255;
        int me, f;
        se += roundtrip (codecs[ci], (DxtQuality) q, px, &me, codecs[ci] == DXT_BC3, &f);
        not4 += !f;
        worst = me > worst ? me : worst;
      }
      double rmse = sqrt (se / (20000.0 * 16 * (codecs[ci] == DXT_BC3 ? 4 : 3)));
      /* noise of +-16 is sd 9.5; a 4-level fit keeps well under that */
      check (rmse < (codecs[ci] == DXT_YCOCG ? 9.0 : 8.0) && not4 == 0 && worst <= 48,
             "%s %s: 20000 noisy blocks, rmse %.2f, max error %d, all 4-colour",
             codec_name[ci], q_name[q], rmse, worst);
    }
  /* YCoCg round trip on pure greys is exact, colours within a few levels */
  int worst = 0;
  for (int v = 0; v < 256; v++) {
    uint8_t px[64];
    for (int i = 0; i < 16; i++) { px[4 * i] = px[4 * i + 1] = px[4 * i + 2] = v; px[4 * i + 3] = 255; }
    int me;
    roundtrip (DXT_YCOCG, DXT_HIGH, px, &me, 0, NULL);
    worst = me > worst ? me : worst;
  }
  check (worst == 0, "ycocg: solid greys round-trip exactly (max %d)", worst);
  worst = 0;
  for (int n = 0; n < 20000; n++) {
    uint8_t px[64];
    uint32_t r = rnd ();
    for (int i = 0; i < 16; i++) { px[4 * i] = r; px[4 * i + 1] = r >> 8; px[4 * i + 2] = r >> 16; px[4 * i + 3] = 255; }
    int me;
    roundtrip (DXT_YCOCG, DXT_HIGH, px, &me, 0, NULL);
    worst = me > worst ? me : worst;
  }
  check (worst <= 8, "ycocg: random solid colours within %d <= 8", worst);
}

/* ------------------------------------------------------------- frames */

static void
ref_yuv (int y, int u, int v, uint8_t *p)
{
  /* independent spelling of BT.601 limited range (dxt.h) */
  int c = y - 16, d = u - 128, e = v - 128;
  int r = (298 * c + 409 * e + 128) >> 8, g = (298 * c - 100 * d - 208 * e + 128) >> 8, b = (298 * c + 516 * d + 128) >> 8;
  p[0] = r < 0 ? 0 : r > 255 ? 255 : r;
  p[1] = g < 0 ? 0 : g > 255 ? 255 : g;
  p[2] = b < 0 ? 0 : b > 255 ? 255 : b;
  p[3] = 255;
}

/* Tight RGBA -> encoded via the frame API. */
static uint8_t *
enc_rgba (const uint8_t *rgba, uint32_t w, uint32_t h, DxtCodec c, DxtQuality q)
{
  DxtImage im = { { rgba, 0, 0 }, { 4 * w, 0, 0 }, w, h, DXT_FMT_RGBA };
  uint8_t *o = malloc (dxt_frame_bytes (c, w, h));
  dxt_encode_frame (&im, c, q, o);
  return o;
}

static void
test_formats (const uint8_t *photo, uint32_t pw, uint32_t ph)
{
  const uint32_t sizes[][2] = { { 1, 1 }, { 5, 3 }, { 1918, 1080 }, { 37, 22 } };
  for (int si = 0; si < 4; si++) {
    uint32_t w = sizes[si][0], h = sizes[si][1];
    /* content: the photo tiled (mirrored) where there is one, else noise */
    uint8_t *rgba = malloc ((size_t) w * h * 4), *rgbx = malloc ((size_t) w * h * 4);
    for (uint32_t y = 0; y < h; y++)
      for (uint32_t x = 0; x < w; x++) {
        uint8_t *p = rgba + 4 * ((size_t) y * w + x);
        if (photo) {
          uint32_t sx = x % (2 * pw), sy = y % (2 * ph);
          sx = sx < pw ? sx : 2 * pw - 1 - sx;
          sy = sy < ph ? sy : 2 * ph - 1 - sy;
          memcpy (p, photo + 4 * ((size_t) sy * pw + sx), 3);
        } else {
          p[0] = rnd (); p[1] = rnd (); p[2] = rnd ();
        }
        p[3] = (uint8_t) (x * 7 + y * 3);
      }
    memcpy (rgbx, rgba, (size_t) w * h * 4);
    for (size_t i = 0; i < (size_t) w * h; i++) rgbx[4 * i + 3] = 255;
    /* padded stride with garbage beyond the row end */
    uint32_t stride = 4 * w + 12;
    uint8_t *buf = malloc ((size_t) stride * h);
    for (int ci = 0; ci < 3; ci++)
      for (int q = 0; q < 2; q++) {
        DxtCodec c = codecs[ci];
        if (si == 2 && q == 1 && c != DXT_BC1)
          continue;   /* keep the run short: high BC1 covers the big frame */
        size_t fb = dxt_frame_bytes (c, w, h);
        uint8_t *ref = enc_rgba (rgba, w, h, c, (DxtQuality) q);
        uint8_t *refx = enc_rgba (rgbx, w, h, c, (DxtQuality) q);
        uint8_t *o = malloc (fb);
        const DxtFormat fmts[] = { DXT_FMT_RGBA, DXT_FMT_BGRA, DXT_FMT_RGBX, DXT_FMT_BGRX };
        const char *fn[] = { "RGBA", "BGRA", "RGBx", "BGRx" };
        int ok = 1;
        for (int f = 0; f < 4; f++) {
          int bgr = f & 1, x = f >= 2;
          memset (buf, 0xa5, (size_t) stride * h);
          for (uint32_t y = 0; y < h; y++)
            for (uint32_t xx = 0; xx < w; xx++) {
              const uint8_t *s = rgba + 4 * ((size_t) y * w + xx);
              uint8_t *d = buf + (size_t) y * stride + 4 * xx;
              d[0] = s[bgr ? 2 : 0]; d[1] = s[1]; d[2] = s[bgr ? 0 : 2];
              d[3] = x ? (uint8_t) (xx * 13) : s[3];   /* x: ignored padding */
            }
          DxtImage im = { { buf, 0, 0 }, { stride, 0, 0 }, w, h, fmts[f] };
          dxt_encode_frame (&im, c, (DxtQuality) q, o);
          int same = memcmp (o, x ? refx : ref, fb) == 0;
          if (!same) printf ("  # %s differs\n", fn[f]);
          ok &= same;
        }
        check (ok, "%ux%u %s %s: RGBA/BGRA/RGBx/BGRx give the RGBA blocks", w, h, codec_name[ci], q_name[q]);
        /* edge replication: same blocks as an explicitly padded image */
        uint32_t pw4 = dxt_blocks_x (w) * 4, ph4 = dxt_blocks_y (h) * 4;
        uint8_t *pad = malloc ((size_t) pw4 * ph4 * 4);
        for (uint32_t y = 0; y < ph4; y++)
          for (uint32_t xx = 0; xx < pw4; xx++)
            memcpy (pad + 4 * ((size_t) y * pw4 + xx),
                    rgba + 4 * ((size_t) (y < h ? y : h - 1) * w + (xx < w ? xx : w - 1)), 4);
        uint8_t *pe = enc_rgba (pad, pw4, ph4, c, (DxtQuality) q);
        check (memcmp (pe, ref, fb) == 0, "%ux%u %s %s: edge replication = padded %ux%u", w, h, codec_name[ci], q_name[q], pw4, ph4);
        /* slices of 1, 3 and 7 block rows rebuild the frame */
        int sl_ok = 1;
        const uint32_t batches[] = { 1, 3, 7 };
        for (int b = 0; b < 3; b++) {
          memset (o, 0, fb);
          DxtImage im = { { rgba, 0, 0 }, { 4 * w, 0, 0 }, w, h, DXT_FMT_RGBA };
          for (uint32_t r = 0; r < dxt_blocks_y (h); r += batches[b]) {
            uint32_t n = dxt_blocks_y (h) - r < batches[b] ? dxt_blocks_y (h) - r : batches[b];
            sl_ok &= dxt_encode_slice (&im, c, (DxtQuality) q, r, n, o + r * dxt_row_bytes (c, w)) == 0;
          }
          sl_ok &= memcmp (o, ref, fb) == 0;
        }
        check (sl_ok, "%ux%u %s %s: slices of 1/3/7 block rows = frame", w, h, codec_name[ci], q_name[q]);
        /* frame decode of odd sizes */
        uint8_t *dec = malloc ((size_t) (4 * w + 4) * h);
        int dr = dxt_decode_frame (c, ref, w, h, dec, 4 * w + 4);
        double ps = 0;
        if (dr == 0) {
          for (uint32_t y = 0; y < h; y++) memmove (dec + (size_t) y * 4 * w, dec + (size_t) y * (4 * w + 4), 4 * w);
          ps = psnr_rgb (rgba, dec, w, h);
        }
        check (dr == 0 && (photo == NULL || ps > 28 || w * h < 64), "%ux%u %s %s: frame decode, PSNR %.2f dB",
               w, h, codec_name[ci], q_name[q], ps);
        free (dec); free (pad); free (pe); free (ref); free (refx); free (o);
      }
    /* YUV formats against the reference converter: random planes */
    uint32_t cw = (w + 1) / 2, chh = (h + 1) / 2;
    uint8_t *Y = malloc ((size_t) w * h), *U = malloc ((size_t) cw * chh), *V = malloc ((size_t) cw * chh);
    uint8_t *U2 = malloc ((size_t) cw * h), *V2 = malloc ((size_t) cw * h);
    for (size_t i = 0; i < (size_t) w * h; i++) Y[i] = photo ? rgba[4 * i + 1] : rnd ();
    for (size_t i = 0; i < (size_t) cw * chh; i++) { U[i] = rnd (); V[i] = rnd (); }
    for (size_t i = 0; i < (size_t) cw * h; i++) { U2[i] = 64 + rnd () % 128; V2[i] = 64 + rnd () % 128; }
    uint8_t *conv = malloc ((size_t) w * h * 4);
    uint32_t pstride = 2 * 2 * cw + 8;
    uint8_t *packed = malloc ((size_t) pstride * h), *nv = malloc ((size_t) 2 * cw * chh);
    for (size_t i = 0; i < (size_t) cw * chh; i++) { nv[2 * i] = U[i]; nv[2 * i + 1] = V[i]; }
    for (int f = DXT_FMT_UYVY; f <= DXT_FMT_NV12; f++) {
      int p422 = f == DXT_FMT_UYVY || f == DXT_FMT_YUY2;
      for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
          int u = p422 ? U2[y * cw + x / 2] : U[(y / 2) * cw + x / 2];
          int v = p422 ? V2[y * cw + x / 2] : V[(y / 2) * cw + x / 2];
          ref_yuv (Y[(size_t) y * w + x], u, v, conv + 4 * ((size_t) y * w + x));
        }
      DxtImage im;
      memset (&im, 0, sizeof im);
      im.width = w; im.height = h; im.format = f;
      if (p422) {
        for (uint32_t y = 0; y < h; y++)
          for (uint32_t x2 = 0; x2 < cw; x2++) {
            uint8_t *d = packed + (size_t) y * pstride + 4 * x2;
            uint8_t y0 = Y[(size_t) y * w + 2 * x2], y1 = 2 * x2 + 1 < w ? Y[(size_t) y * w + 2 * x2 + 1] : 0;
            if (f == DXT_FMT_UYVY) { d[0] = U2[y * cw + x2]; d[1] = y0; d[2] = V2[y * cw + x2]; d[3] = y1; }
            else { d[0] = y0; d[1] = U2[y * cw + x2]; d[2] = y1; d[3] = V2[y * cw + x2]; }
          }
        im.plane[0] = packed; im.stride[0] = pstride;
      } else {
        im.plane[0] = Y; im.stride[0] = w;
        im.plane[1] = f == DXT_FMT_I420 ? U : nv; im.stride[1] = f == DXT_FMT_I420 ? cw : 2 * cw;
        im.plane[2] = f == DXT_FMT_I420 ? V : NULL; im.stride[2] = cw;
      }
      const char *fn[] = { "UYVY", "YUY2", "I420", "NV12" };
      int ok = 1;
      for (int ci = 0; ci < 3; ci++) {
        DxtCodec c = codecs[ci];
        size_t fb = dxt_frame_bytes (c, w, h);
        uint8_t *ref = enc_rgba (conv, w, h, c, DXT_FAST), *o = malloc (fb);
        ok &= dxt_encode_frame (&im, c, DXT_FAST, o) == 0 && memcmp (o, ref, fb) == 0;
        free (ref); free (o);
      }
      check (ok, "%ux%u %s: bc1/bc3/ycocg blocks = reference BT.601 converter then RGBA", w, h, fn[f - DXT_FMT_UYVY]);
    }
    free (Y); free (U); free (V); free (U2); free (V2); free (conv); free (packed); free (nv);
    free (rgba); free (rgbx); free (buf);
  }
  DxtImage bad = { { NULL, 0, 0 }, { 0, 0, 0 }, 4, 4, DXT_FMT_RGBA };
  uint8_t o[16];
  check (dxt_encode_frame (&bad, DXT_BC1, DXT_FAST, o) == -1, "missing plane refused");
}

static void
test_simd (const uint8_t *photo, uint32_t pw, uint32_t ph)
{
  const DxtCpuPath paths[] = { DXT_CPU_SSE41, DXT_CPU_AVX2 };
  for (int pi = 0; pi < 2; pi++) {
    DxtCpuPath got = dxt_set_cpu_path (paths[pi]);
    if (got != paths[pi]) {
      check (1, "simd %s: not supported by this CPU (skipped)", dxt_cpu_path_name (paths[pi]));
      continue;
    }
    long diff = 0, n = 0;
    for (int kind = 0; kind < 4; kind++)
      for (int it = 0; it < 3000; it++) {
        uint8_t px[64], a[16], b[16];
        for (int i = 0; i < 64; i++) {
          uint32_t r = rnd ();
          px[i] = kind == 0 ? r : kind == 1 ? (uint8_t) (100 + (r & 7))       /* noise / near flat */
                : kind == 2 ? ((r & 1) ? 255 : 0) : (uint8_t) (i * 4 + (r & 3)); /* two levels / ramp */
        }
        if (kind == 1 && it % 4 == 0)
          for (int i = 4; i < 64; i++) px[i] = px[i & 3];   /* solid */
        for (int ci = 0; ci < 3; ci++)
          for (int q = 0; q < 2; q++) {
            uint8_t g[16];
            dxt_set_cpu_path (DXT_CPU_SCALAR);
            dxt_encode_block (codecs[ci], (DxtQuality) q, px, a);
            dxt_set_cpu_path (paths[pi]);
            dxt_encode_block (codecs[ci], (DxtQuality) q, px, b);
            /* the GS_HD entry point the CUDA kernel calls */
            dxt_encode_block_hd (codecs[ci], q, px, g);
            diff += memcmp (a, b, dxt_block_bytes (codecs[ci])) != 0;
            diff += memcmp (a, g, dxt_block_bytes (codecs[ci])) != 0;
            n++;
          }
      }
    check (diff == 0, "simd %s == scalar == dxt_encode_block_hd (GPU code) on %ld random/flat/binary/ramp blocks, all codecs, fast+high (%ld differ)",
           dxt_cpu_path_name (paths[pi]), n, diff);
    if (photo) {
      int ok = 1;
      for (int ci = 0; ci < 3; ci++)
        for (int q = 0; q < 2; q++) {
          dxt_set_cpu_path (DXT_CPU_SCALAR);
          uint8_t *a = enc_rgba (photo, pw, ph, codecs[ci], (DxtQuality) q);
          dxt_set_cpu_path (paths[pi]);
          uint8_t *b = enc_rgba (photo, pw, ph, codecs[ci], (DxtQuality) q);
          ok &= memcmp (a, b, dxt_frame_bytes (codecs[ci], pw, ph)) == 0;
          free (a); free (b);
        }
      check (ok, "simd %s == scalar on the photo (all codecs, fast+high)", dxt_cpu_path_name (paths[pi]));
    }
  }
  dxt_set_cpu_path (DXT_CPU_AUTO);
}

static double
psnr_of (const uint8_t *rgba, uint32_t w, uint32_t h, DxtCodec c, const uint8_t *blocks)
{
  uint8_t *d = malloc ((size_t) w * h * 4);
  dxt_decode_frame (c, blocks, w, h, d, 4 * w);
  double p = psnr_rgb (rgba, d, w, h);
  free (d);
  return p;
}

static void
test_quality (const uint8_t *photo, uint32_t w, uint32_t h)
{
  if (!photo) {
    check (1, "quality: no stb_image / photo (skipped)");
    return;
  }
  size_t fb = dxt_frame_bytes (DXT_BC3, w, h);
  uint8_t *o = malloc (fb);
  for (int ci = 0; ci < 2; ci++) {
    DxtCodec c = codecs[ci];
    double ours[2], anc[4];
    for (int q = 0; q < 2; q++) {
      uint8_t *e = enc_rgba (photo, w, h, c, (DxtQuality) q);
      ours[q] = psnr_of (photo, w, h, c, e);
      free (e);
    }
    for (int a = 0; a < 4; a++)
      anc[a] = anchor_encode ((Anchor) a, c, photo, w, h, o) ? psnr_of (photo, w, h, c, o) : -1;
    printf ("# %s PSNR (RGB, dB): fast %.3f  high %.3f | stb normal %.3f  stb highqual %.3f | squish range %.3f  cluster %.3f\n",
            codec_name[ci], ours[0], ours[1], anc[0], anc[1], anc[2], anc[3]);
    if (anc[0] >= 0) {
      check (ours[0] >= anc[0], "%s fast %.3f dB >= stb_dxt normal %.3f dB", codec_name[ci], ours[0], anc[0]);
      check (ours[1] >= anc[1], "%s high %.3f dB >= stb_dxt highqual %.3f dB", codec_name[ci], ours[1], anc[1]);
    }
    if (anc[3] >= 0)
      check (ours[1] >= anc[3] - 0.2, "%s high %.3f dB within 0.2 dB of squish cluster fit %.3f dB",
             codec_name[ci], ours[1], anc[3]);
  }
  for (int q = 0; q < 2; q++) {
    uint8_t *e = enc_rgba (photo, w, h, DXT_YCOCG, (DxtQuality) q);
    double p = psnr_of (photo, w, h, DXT_YCOCG, e), pb;
    uint8_t *e1 = enc_rgba (photo, w, h, DXT_BC1, (DxtQuality) q);
    pb = psnr_of (photo, w, h, DXT_BC1, e1);
    /* YCoCg-DXT5 spends twice the bits of BC1: it must beat it */
    check (p > pb, "ycocg %s %.3f dB > bc1 %s %.3f dB", q_name[q], p, q_name[q], pb);
    free (e); free (e1);
  }
  free (o);
}

int
main (void)
{
  uint32_t pw = 0, ph = 0;
  uint8_t *photo = load_photo (&pw, &ph);
  check (photo != NULL || 1, "photo %s (%ux%u)", photo ? "coffee.png loaded" : "not available", pw, ph);
  printf ("# cpu path: %s\n", dxt_cpu_path_name (dxt_get_cpu_path ()));
  test_solid ();
  test_gradients_twocolour ();
  test_alpha ();
  test_random_bounds ();
  test_formats (photo, pw, ph);
  test_simd (photo, pw, ph);
  test_quality (photo, pw, ph);
  free (photo);
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
