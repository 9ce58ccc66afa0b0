/* test_dxt_common.h: helpers included by test_dxt.c and bench_dxt.c (not
 * compiled on its own): photo loading (stb_image), frame encoding with the
 * anchors (stb_dxt, libsquish) and PSNR. */
#ifndef TEST_DXT_COMMON_H
#define TEST_DXT_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dxt/dxt.h"

#ifdef HAVE_STB
#include <stb_dxt.h>
#include <stb_image.h>
#endif
#ifdef HAVE_SQUISH
void dxt_squish_block (const uint8_t *rgba64, uint8_t *out, int bc3, int cluster);
#endif

typedef enum { ANCHOR_STB_NORMAL, ANCHOR_STB_HIGH, ANCHOR_SQUISH_RANGE, ANCHOR_SQUISH_CLUSTER } Anchor;

/* RGB PSNR of two RGBA images of w x h (tight). */
static double
psnr_rgb (const uint8_t *a, const uint8_t *b, uint32_t w, uint32_t h)
{
  double se = 0;
  for (size_t i = 0; i < (size_t) w * h; i++)
    for (int c = 0; c < 3; c++) {
      double d = (double) a[4 * i + c] - b[4 * i + c];
      se += d * d;
    }
  double mse = se / ((double) w * h * 3);
  return mse == 0 ? 99.0 : 10 * log10 (255.0 * 255.0 / mse);
}

/* Gather block (bx, by) of a tight RGBA image with edge replication. */
static void
gather_block (const uint8_t *rgba, uint32_t w, uint32_t h, uint32_t bx, uint32_t by, uint8_t px[64])
{
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 4; i++) {
      uint32_t x = bx * 4 + i, y = by * 4 + j;
      x = x < w ? x : w - 1;
      y = y < h ? y : h - 1;
      memcpy (px + 16 * j + 4 * i, rgba + 4 * ((size_t) y * w + x), 4);
    }
}

/* Encode a tight RGBA image with an anchor; returns 0 if unavailable. */
static int
anchor_encode (Anchor an, DxtCodec codec, const uint8_t *rgba, uint32_t w, uint32_t h, uint8_t *out)
{
  uint32_t bb = dxt_block_bytes (codec);
  uint8_t px[64];
#ifndef HAVE_STB
  if (an == ANCHOR_STB_NORMAL || an == ANCHOR_STB_HIGH) return 0;
#endif
#ifndef HAVE_SQUISH
  if (an == ANCHOR_SQUISH_RANGE || an == ANCHOR_SQUISH_CLUSTER) return 0;
#endif
  for (uint32_t by = 0; by < dxt_blocks_y (h); by++)
    for (uint32_t bx = 0; bx < dxt_blocks_x (w); bx++) {
      gather_block (rgba, w, h, bx, by, px);
      uint8_t *o = out + ((size_t) by * dxt_blocks_x (w) + bx) * bb;
      switch (an) {
#ifdef HAVE_STB
        case ANCHOR_STB_NORMAL: stb_compress_dxt_block (o, px, codec == DXT_BC3, STB_DXT_NORMAL); break;
        case ANCHOR_STB_HIGH: stb_compress_dxt_block (o, px, codec == DXT_BC3, STB_DXT_HIGHQUAL); break;
#endif
#ifdef HAVE_SQUISH
        case ANCHOR_SQUISH_RANGE: dxt_squish_block (px, o, codec == DXT_BC3, 0); break;
        case ANCHOR_SQUISH_CLUSTER: dxt_squish_block (px, o, codec == DXT_BC3, 1); break;
#endif
        default: return 0;
      }
    }
  return 1;
}

static inline const char *
anchor_name (Anchor an)
{
  static const char *n[] = { "stb_dxt-normal", "stb_dxt-highqual", "squish-rangefit", "squish-clusterfit" };
  return n[an];
}

static uint8_t *
load_photo (uint32_t *w, uint32_t *h)
{
#ifdef HAVE_STB
  int iw, ih, n;
  uint8_t *p = stbi_load (DXT_TEST_DATA "/coffee.png", &iw, &ih, &n, 4);
  if (!p)
    return NULL;
  *w = (uint32_t) iw; *h = (uint32_t) ih;
  uint8_t *c = (uint8_t *) malloc ((size_t) iw * ih * 4);
  memcpy (c, p, (size_t) iw * ih * 4);
  stbi_image_free (p);
  return c;
#else
  (void) w; (void) h;
  return NULL;
#endif
}

#endif
