/* bench_fountain.c: single-thread speed of kernels/fountain's scalar
 * reference: repair encoding and the decode of one stream's sub-frame of N
 * symbols of 1280 bytes at 5 % and 10 % loss (all of it through repairs).
 * Rates are the sub-frame's bits over the time to make its repairs, or
 * to decode it. One JSON line per case on stdout. Usage: bench_fountain [--quick] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fountain/fountain.h"

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main (int argc, char **argv)
{
  int quick = argc > 1 && strcmp (argv[1], "--quick") == 0;
  const size_t k = 1280;
  static const int ns[] = { 256, 512, 1024 };
  static const double losses[] = { 0.05, 0.10 };
  for (size_t a = 0; a < (quick ? 1 : sizeof ns / sizeof ns[0]); a++) {
    int n = ns[a];
    uint8_t *sub = malloc ((size_t) n * k);
    for (size_t i = 0; i < (size_t) n * k; i++)
      sub[i] = (uint8_t) (i * 2654435761u >> 13);
    for (size_t b = 0; b < sizeof losses / sizeof losses[0]; b++) {
      int lost = (int) (n * losses[b] + 0.5);
      uint8_t *rep = malloc ((size_t) lost * k);
      double t0 = now ();
      for (int r = 0; r < lost; r++)
        fountain_encode_repair (n, k, sub, 100u + (uint32_t) r, rep + (size_t) r * k);
      double t_enc = now () - t0;
      FountainFrameDecoder *d = fountain_frame_decoder_new (1, n, k, lost);
      FountainHeader h = { .streams = 1, .n = (uint16_t) n,
        .symbol_size = (uint16_t) k, .frame_len = (uint32_t) (n * k) };
      t0 = now ();
      for (int i = 0; i < n; i++) {
        if (i % (n / lost) == 0 && i / (n / lost) < lost)
          continue;             /* lost, spread over the sub-frame */
        h.kind = FOUNTAIN_KIND_SOURCE;
        h.index_or_seed = (uint32_t) i;
        fountain_frame_decoder_add (d, &h, sub + (size_t) i * k);
      }
      h.kind = FOUNTAIN_KIND_REPAIR;
      for (int r = 0; r < lost; r++) {
        h.index_or_seed = 100u + (uint32_t) r;
        fountain_frame_decoder_add (d, &h, rep + (size_t) r * k);
      }
      int ok = fountain_frame_decoder_decode (d, NULL) == 1
          && memcmp (fountain_frame_decoder_stream (d, 0), sub, (size_t) n * k) == 0;
      double t_dec = now () - t0;
      double bits = (double) n * k * 8;
      printf ("{\"bench\":\"fountain\",\"path\":\"scalar\",\"n\":%d,\"symbol\":%zu,"
          "\"loss\":%.2f,\"repairs\":%d,\"encode_gbps\":%.3f,"
          "\"decode_gbps\":%.3f,\"decoded\":%s}\n", n, k, losses[b], lost,
          bits / t_enc / 1e9,
          bits / t_dec / 1e9, ok ? "true" : "false");
      fountain_frame_decoder_free (d);
      free (rep);
      if (!ok)
        return 1;
    }
    free (sub);
  }
  return 0;
}
