/* bench_fountain.c: single-thread speed of kernels/fountain: the repairs of
 * one stream's sub-frame of N symbols of 1280 bytes, and its decode at 5 %
 * and 10 % loss (all of it through repairs), for N in 512..4096. The
 * repairs through ISA-L (fountain_encode_repairs, what cstpsink uses) and
 * through the scalar reference (fountain_encode_repair; timed on 16 repairs
 * and scaled to the loss's count, since it is linear in them). Rates are the
 * sub-frame's bits over the time to make its repairs, or to decode it, the
 * best of REPEAT runs (the machine is shared; the best is the code's). One
 * JSON line per case on stdout (and into --json FILE).
 *
 * --recovery: the experiment of Fig. 7 of Liu, Schulze, DeFanti, "CSTP: A
 * parallel data transfer protocol using cross-stream coding" (2011) instead:
 * S = 4 streams of N = 1024 symbols, each sending N' packets (its N sources,
 * then N' - N redundancy packets drawn from D_s(x) = p x^S + (1 - p) x with
 * p = 5 %); every frame, each receiver's loss rate is drawn uniformly in
 * [0, 2 m] for an average m of 2, 3 or 4 %, its packets lost independently;
 * the share of frames decoded whole through the cross-stream decoder, for
 * N' from N to 1.15 N; and the same with p = 0 (no pipe packets: each
 * stream on its own). Symbols of 16 bytes (the outcome depends on which
 * packets arrive, not on their size). One JSON line per (m, N').
 *
 * --frame: whole-frame encode and decode under uneven loss (frame_speed).
 * Usage: bench_fountain [--quick] [--json FILE] [--recovery [FRAMES]]
 *        [--frame] */
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

/* xorshift64*: the loss draws of the recovery experiment */
static uint64_t
next_random (uint64_t * s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

static double
unit_random (uint64_t * s)
{
  return (next_random (s) >> 11) * (1.0 / 9007199254740992.0);
}

static void
recovery (int frames, FILE * json)
{
  enum { S = 4, N = 1024, K = 16 };
  static const double means[] = { 0.02, 0.03, 0.04 };
  static const int extra_pct10[] = { 0, 10, 20, 30, 40, 50, 60, 80, 100, 150 };
  static const double pipes[] = { 0.05, 0.0 };
  static uint8_t frame[S * N * K];
  const uint8_t *subs[S];
  uint8_t pkt[FOUNTAIN_HEADER_SIZE + K];
  uint64_t rng = 0x9e3779b97f4a7c15ull;

  for (int s = 0; s < S; s++)
    subs[s] = frame + (size_t) s * N * K;
  FountainFrameDecoder *d = fountain_frame_decoder_new (S, N, K, N);
  for (size_t c = 0; c < sizeof pipes / sizeof pipes[0]; c++)
    for (size_t a = 0; a < sizeof means / sizeof means[0]; a++)
      for (size_t b = 0; b < sizeof extra_pct10 / sizeof extra_pct10[0]; b++) {
        double p = pipes[c];
        int sent = N + (N * extra_pct10[b] + 500) / 1000;
        int whole = 0;
        for (int f = 0; f < frames; f++) {
          for (size_t i = 0; i < sizeof frame; i++)
            frame[i] = (uint8_t) next_random (&rng);
          fountain_frame_decoder_reset (d, (uint32_t) f);
          for (int s = 0; s < S; s++) {
            double rate = 2 * means[a] * unit_random (&rng);
            for (int i = 0; i < sent; i++) {
              if (unit_random (&rng) < rate)
                continue;         /* lost: no need to make it */
              FountainHeader h = {.streams = S,.stream = (uint8_t) s,
                .frame_id = (uint32_t) f,.n = N,.symbol_size = K,
                .frame_len = S * N * K
              };
              uint8_t *payload = pkt + FOUNTAIN_HEADER_SIZE;
              if (i < N) {
                h.kind = FOUNTAIN_KIND_SOURCE;
                h.index_or_seed = (uint32_t) i;
                memcpy (payload, subs[s] + (size_t) i * K, K);
              } else {
                uint32_t r = (uint32_t) (i - N);
                uint64_t mask = fountain_stream_degree_draw_shared (p, 1.0, S, s,
                    (uint32_t) f, r);
                h.index_or_seed = (uint32_t) f * 0x10000u + (uint32_t) s * 0x1000u
                    + r;
                if (mask == 1ull << s) {
                  h.kind = FOUNTAIN_KIND_REPAIR;
                  fountain_encode_repair (N, K, subs[s], h.index_or_seed, payload);
                } else {
                  h.kind = FOUNTAIN_KIND_PIPE;
                  h.pipe_mask = mask;
                  fountain_encode_pipe (N, K, subs, mask, h.index_or_seed,
                      payload);
                }
              }
              fountain_frame_decoder_add (d, &h, payload);
            }
          }
          int ok = fountain_frame_decoder_decode (d, NULL) == S;
          for (int s = 0; ok && s < S; s++)
            ok = memcmp (fountain_frame_decoder_stream (d, s), subs[s],
                (size_t) N * K) == 0;
          whole += ok;
        }
        char line[256];
        snprintf (line, sizeof line, "{\"bench\":\"fountain-recovery\","
            "\"code\":\"cstp\",\"streams\":%d,\"n\":%d,\"pipe\":%.2f,"
            "\"mean_loss\":%.2f,\"sent\":%d,\"frames\":%d,\"whole\":%d}",
            S, N, p, means[a], sent, frames, whole);
        puts (line);
        fflush (stdout);
        if (json)
          fprintf (json, "%s\n", line);
      }
  fountain_frame_decoder_free (d);
}

/* --frame: a whole frame of S = 4 streams of N = 1024 symbols of 1280
 * bytes with 15 % redundancy, over four paths of uneven loss (1 % and 3 %
 * independent, 8 % in bursts of mean 4, 16 % in bursts of mean 8), for the
 * three codes cstpsink offers: every stream on its own (pipe-width 0), half
 * the redundancy pipes of mixed degree (0.5, mixed), every redundancy
 * packet a pipe of all S streams (1, all). Encode = the frame's bits over
 * the time to make every stream's redundancy (each stream's repairs and
 * parts of pipes in one pass, the parts of a pipe added up: what cstpsink
 * does); decode = the frame's bits over the time to take in the packets
 * that arrived and decode. Mean over FRAME_RUNS frames; frames decoded. */
enum { FR_S = 4, FR_N = 1024, FR_K = 1280, FR_RUNS = 8 };

static int
ge_step (uint64_t * rng, int *bad, double rate, double burst)
{
  double p_bg = 1.0 / burst, p_gb = rate * p_bg / (1 - rate);
  int lost = *bad;
  *bad = *bad ? unit_random (rng) >= p_bg : unit_random (rng) < p_gb;
  return lost;
}

static void
frame_speed (FILE * json)
{
  static const double rate[FR_S] = { 0.01, 0.03, 0.08, 0.16 };
  static const double burst[FR_S] = { 1, 1, 4, 8 };
  static const struct { double p, a; const char *name; } codes[] = {
    { 0, 0, "own" }, { 0.5, 0.5, "mixed" }, { 1, 1, "all" } };
  const int red = (FR_N * 15 + 99) / 100;
  size_t sub_len = (size_t) FR_N * FR_K;
  uint8_t *frame = malloc (FR_S * sub_len);
  uint8_t *pay = malloc ((size_t) FR_S * red * FR_K);
  uint8_t *parts = malloc ((size_t) FR_S * FR_S * red * FR_K);
  uint32_t *seeds = malloc ((size_t) FR_S * red * sizeof *seeds);
  uint8_t **outs = malloc ((size_t) FR_S * red * sizeof *outs);
  int *dest = malloc ((size_t) FR_S * red * sizeof *dest);
  uint64_t *masks = malloc ((size_t) FR_S * red * sizeof *masks);
  const uint8_t *subs[FR_S];
  for (int s = 0; s < FR_S; s++)
    subs[s] = frame + (size_t) s * sub_len;
  FountainFrameDecoder *d = fountain_frame_decoder_new (FR_S, FR_N, FR_K, red);
  for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
    uint64_t rng = 0x5EEDull;
    int bad[FR_S] = { 0 };
    double t_enc = 0, t_dec = 0;
    int whole = 0;
    long lost_total = 0;
    for (int f = 0; f < FR_RUNS; f++) {
      for (size_t i = 0; i < FR_S * sub_len; i++)
        frame[i] = (uint8_t) next_random (&rng);
      for (int s = 0; s < FR_S; s++)
        for (int r = 0; r < red; r++)
          masks[s * red + r] = fountain_stream_degree_draw_shared (codes[c].p,
              codes[c].a, FR_S, s, (uint32_t) f, (uint32_t) r);
      double t0 = now ();
      memset (pay, 0, (size_t) FR_S * red * FR_K);
      for (int t = 0; t < FR_S; t++) {
        int count = 0;
        for (int s = 0; s < FR_S; s++)
          for (int r = 0; r < red; r++) {
            uint64_t m = masks[s * red + r];
            if (!(m >> t & 1))
              continue;
            uint32_t seed = (uint32_t) f * 0x10000u + (uint32_t) s * 0x1000u
                + (uint32_t) r;
            seeds[count] = m == 1ull << s ? seed
                : fountain_pipe_component_seed (seed, t);
            outs[count] = parts + (size_t) count * FR_K;
            dest[count++] = s * red + r;
          }
        fountain_encode_repairs (FR_N, FR_K, subs[t], count, seeds, outs);
        for (int j = 0; j < count; j++) {
          uint8_t *o = pay + (size_t) dest[j] * FR_K;
          for (int b = 0; b < FR_K; b++)
            o[b] ^= outs[j][b];
        }
      }
      t_enc += now () - t0;
      /* the losses first, so that only the decode is timed */
      static uint8_t lost[FR_S][FR_N + 1024];
      for (int s = 0; s < FR_S; s++)
        for (int i = 0; i < FR_N + red; i++)
          lost_total += lost[s][i] = (uint8_t) ge_step (&rng, &bad[s], rate[s],
              burst[s]);
      t0 = now ();
      fountain_frame_decoder_reset (d, (uint32_t) f);
      for (int s = 0; s < FR_S; s++)
        for (int i = 0; i < FR_N + red; i++) {
          if (lost[s][i])
            continue;
          FountainHeader h = {.streams = FR_S,.stream = (uint8_t) s,
            .frame_id = (uint32_t) f,.n = FR_N,.symbol_size = FR_K,
            .frame_len = FR_S * FR_N * FR_K };
          const uint8_t *payload;
          if (i < FR_N) {
            h.kind = FOUNTAIN_KIND_SOURCE;
            h.index_or_seed = (uint32_t) i;
            payload = subs[s] + (size_t) i * FR_K;
          } else {
            int r = i - FR_N;
            uint64_t m = masks[s * red + r];
            h.index_or_seed = (uint32_t) f * 0x10000u + (uint32_t) s * 0x1000u
                + (uint32_t) r;
            h.kind = m == 1ull << s ? FOUNTAIN_KIND_REPAIR : FOUNTAIN_KIND_PIPE;
            h.pipe_mask = h.kind == FOUNTAIN_KIND_PIPE ? m : 0;
            payload = pay + (size_t) (s * red + r) * FR_K;
          }
          fountain_frame_decoder_add (d, &h, payload);
        }
      int ok = fountain_frame_decoder_decode (d, NULL) == FR_S;
      t_dec += now () - t0;
      for (int s = 0; ok && s < FR_S; s++)
        ok = memcmp (fountain_frame_decoder_stream (d, s), subs[s],
            sub_len) == 0;
      whole += ok;
    }
    double bits = (double) FR_S * sub_len * 8 * FR_RUNS;
    char line[384];
    snprintf (line, sizeof line, "{\"bench\":\"fountain-frame\",\"code\":\"%s\","
        "\"pipe\":%.2f,\"all_share\":%.2f,\"streams\":%d,\"n\":%d,"
        "\"symbol\":%d,\"redundancy\":%d,\"loss\":%.4f,\"frames\":%d,"
        "\"whole\":%d,\"encode_gbps\":%.3f,\"decode_gbps\":%.3f}",
        codes[c].name, codes[c].p, codes[c].a, FR_S, FR_N, FR_K, red,
        (double) lost_total / (FR_RUNS * FR_S * (FR_N + red)), FR_RUNS, whole,
        bits / t_enc / 1e9, bits / t_dec / 1e9);
    puts (line);
    fflush (stdout);
    if (json)
      fprintf (json, "%s\n", line);
  }
  fountain_frame_decoder_free (d);
  free (frame);
  free (pay);
  free (parts);
  free (seeds);
  free (outs);
  free (dest);
  free (masks);
}

int
main (int argc, char **argv)
{
  int quick = 0, recovery_frames = 0, frame_mode = 0;
  FILE *json = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp (argv[i], "--json") == 0 && i + 1 < argc)
      json = fopen (argv[++i], "w");
    else if (strcmp (argv[i], "--frame") == 0)
      frame_mode = 1;
    else if (strcmp (argv[i], "--recovery") == 0)
      recovery_frames = i + 1 < argc && argv[i + 1][0] != '-' ?
          atoi (argv[++i]) : 200;
  }
  if (frame_mode) {
    frame_speed (json);
    if (json)
      fclose (json);
    return 0;
  }
  if (recovery_frames > 0) {
    recovery (recovery_frames, json);
    if (json)
      fclose (json);
    return 0;
  }
  const size_t k = 1280;
  static const int ns[] = { 512, 1024, 2048, 4096 };
  static const double losses[] = { 0.05, 0.10 };
  enum { SCALAR_REPAIRS = 16, REPEAT = 3 };
  for (size_t a = 0; a < (quick ? 1 : sizeof ns / sizeof ns[0]); a++) {
    int n = ns[a];
    uint8_t *sub = malloc ((size_t) n * k);
    for (size_t i = 0; i < (size_t) n * k; i++)
      sub[i] = (uint8_t) (i * 2654435761u >> 13);
    for (size_t b = 0; b < sizeof losses / sizeof losses[0]; b++) {
      int lost = (int) (n * losses[b] + 0.5);
      uint8_t *rep = malloc ((size_t) lost * k);
      uint8_t **outs = malloc ((size_t) lost * sizeof *outs);
      uint32_t *seeds = malloc ((size_t) lost * sizeof *seeds);
      for (int r = 0; r < lost; r++) {
        outs[r] = rep + (size_t) r * k;
        seeds[r] = 100u + (uint32_t) r;
      }
      double t0, t_enc = 1e30, t_scalar = 1e30, t_dec = 1e30;
      for (int rep_i = 0; rep_i < REPEAT; rep_i++) {
        t0 = now ();
        fountain_encode_repairs (n, k, sub, lost, seeds, outs);
        double t = now () - t0;
        t_enc = t < t_enc ? t : t_enc;
      }
      /* the scalar reference must make the same bytes */
      uint8_t *check = malloc (k);
      int same = 1;
      int scalar = lost < SCALAR_REPAIRS ? lost : SCALAR_REPAIRS;
      for (int rep_i = 0; rep_i < REPEAT; rep_i++) {
        t0 = now ();
        for (int r = 0; r < scalar; r++) {
          fountain_encode_repair (n, k, sub, seeds[r], check);
          same &= memcmp (check, outs[r], k) == 0;
        }
        double t = (now () - t0) * lost / scalar;
        t_scalar = t < t_scalar ? t : t_scalar;
      }
      free (check);
      int ok = 1;
      /* one decoder for every run, reset each time, as cstpsrc keeps one
       * per pending frame for the frames of the same geometry */
      FountainFrameDecoder *d = fountain_frame_decoder_new (1, n, k, lost);
      for (int rep_i = 0; rep_i < REPEAT; rep_i++) {
        FountainHeader h = { .streams = 1, .n = (uint16_t) n,
          .symbol_size = (uint16_t) k, .frame_len = (uint32_t) (n * k),
          .frame_id = (uint32_t) rep_i };
        t0 = now ();
        fountain_frame_decoder_reset (d, (uint32_t) rep_i);
        for (int i = 0; i < n; i++) {
          if (i % (n / lost) == 0 && i / (n / lost) < lost)
            continue;           /* lost, spread over the sub-frame */
          h.kind = FOUNTAIN_KIND_SOURCE;
          h.index_or_seed = (uint32_t) i;
          fountain_frame_decoder_add (d, &h, sub + (size_t) i * k);
        }
        h.kind = FOUNTAIN_KIND_REPAIR;
        for (int r = 0; r < lost; r++) {
          h.index_or_seed = seeds[r];
          fountain_frame_decoder_add (d, &h, outs[r]);
        }
        ok &= fountain_frame_decoder_decode (d, NULL) == 1;
        double t = now () - t0;
        t_dec = t < t_dec ? t : t_dec;
        ok &= memcmp (fountain_frame_decoder_stream (d, 0), sub,
            (size_t) n * k) == 0;
      }
      fountain_frame_decoder_free (d);
      double bits = (double) n * k * 8;
      char line[512];
      snprintf (line, sizeof line, "{\"bench\":\"fountain\",\"path\":\"isal\","
          "\"n\":%d,\"symbol\":%zu,\"loss\":%.2f,\"repairs\":%d,"
          "\"encode_gbps\":%.3f,\"decode_gbps\":%.3f,"
          "\"scalar_encode_gbps\":%.3f,\"decoded\":%s,\"scalar_same\":%s}",
          n, k, losses[b], lost, bits / t_enc / 1e9, bits / t_dec / 1e9,
          bits / t_scalar / 1e9, ok ? "true" : "false",
          same ? "true" : "false");
      puts (line);
      if (json)
        fprintf (json, "%s\n", line);
      free (rep);
      free (outs);
      free (seeds);
      if (!ok || !same)
        return 1;
    }
    free (sub);
  }
  if (json)
    fclose (json);
  return 0;
}
