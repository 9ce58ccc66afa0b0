/* test_fountain.c: CPU tests of kernels/fountain: the header against its
 * bytes and under seeded mutation, the code, and the cross-stream decoder
 * on the experiment of Fig. 8 of Liu, Schulze, DeFanti, "CSTP: A parallel
 * data transfer protocol using cross-stream coding" (2011): 10 streams,
 * 7.5 % average loss in bursts, spread over the streams four ways.
 * Then 4 streams over paths of uneven, bursty loss: every frame within the
 * redundancy sent must decode. Exit 0 when every check passes, 1
 * otherwise; one line per check. `test_fountain --table [P [A]]` prints
 * recovery against overhead on Fig. 8's patterns instead, `--uneven
 * [FRAMES]` on the uneven paths (JSON lines). */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fountain/fountain.h"

#include "kernel_check.h"

/* xorshift64*: test data and loss draws only */
typedef struct { uint64_t s; } Rng;
static uint32_t
rnd (Rng *r)
{
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return (uint32_t) ((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}
static double
unit (Rng *r)
{
  return rnd (r) * (1.0 / 4294967296.0);
}

/* ---- header --------------------------------------------------------------- */

static void
test_header_bytes (void)
{
  /* S = 4, symbol 1000, frame 100000 bytes: 100 symbols, N = 25 */
  FountainHeader h = { .kind = FOUNTAIN_KIND_PIPE, .streams = 4, .stream = 2,
    .frame_id = 0x01020304, .n = 25, .symbol_size = 1000, .frame_len = 100000,
    .index_or_seed = 0xA0B0C0D0, .pipe_mask = 0x5 };
  static const uint8_t want[32] = { 'C', 'S', 'T', 'P', 1, 2, 4, 2,
    1, 2, 3, 4, 0, 25, 0x03, 0xE8, 0x00, 0x01, 0x86, 0xA0,
    0xA0, 0xB0, 0xC0, 0xD0, 0, 0, 0, 0, 0, 0, 0, 5 };
  uint8_t pkt[32 + 1000];
  memset (pkt + 32, 0x5A, 1000);
  check (fountain_header_write (&h, pkt, sizeof pkt) == FOUNTAIN_HEADER_SIZE
      && memcmp (pkt, want, 32) == 0, "header: written bytes, big-endian");
  FountainHeader g;
  const uint8_t *payload = NULL;
  check (fountain_header_parse (pkt, sizeof pkt, &g, &payload) == FOUNTAIN_OK
      && g.kind == h.kind && g.streams == h.streams && g.stream == h.stream
      && g.frame_id == h.frame_id && g.n == h.n
      && g.symbol_size == h.symbol_size && g.frame_len == h.frame_len
      && g.index_or_seed == h.index_or_seed && g.pipe_mask == h.pipe_mask
      && payload == pkt + 32,
      "header: parse gives the written fields back");
  check (fountain_subframe_symbols (100000, 4, 1000) == 25
      && fountain_subframe_symbols (100001, 4, 1000) == 26
      && fountain_subframe_symbols (0, 4, 1000) == 0
      && fountain_subframe_symbols (0xFFFFFFFFu, 1, 1) == 0,
      "header: sub-frame geometry");

  /* each rule on its own */
  struct { const char *what; FountainHeader h; int err; } bad[] = {
    { "kind 3", h, FOUNTAIN_ERR_KIND },
    { "S = 0", h, FOUNTAIN_ERR_STREAMS },
    { "S = 65", h, FOUNTAIN_ERR_STREAMS },
    { "stream = S", h, FOUNTAIN_ERR_STREAMS },
    { "N off by one", h, FOUNTAIN_ERR_GEOMETRY },
    { "symbol size 0", h, FOUNTAIN_ERR_GEOMETRY },
    { "source index = N", h, FOUNTAIN_ERR_INDEX },
    { "pipe of one stream", h, FOUNTAIN_ERR_PIPE },
    { "pipe without its own stream", h, FOUNTAIN_ERR_PIPE },
    { "pipe mask beyond S", h, FOUNTAIN_ERR_PIPE },
    { "repair with a mask", h, FOUNTAIN_ERR_PIPE },
  };
  bad[0].h.kind = 3;
  bad[1].h.streams = 0;
  bad[2].h.streams = 65;
  bad[3].h.stream = 4;
  bad[4].h.n = 26;
  bad[5].h.symbol_size = 0;
  bad[6].h.kind = FOUNTAIN_KIND_SOURCE, bad[6].h.index_or_seed = 25,
      bad[6].h.pipe_mask = 0;
  bad[7].h.pipe_mask = 0x4;
  bad[8].h.pipe_mask = 0x3;
  bad[9].h.pipe_mask = 0x14;
  bad[10].h.kind = FOUNTAIN_KIND_REPAIR;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t b[32];
    int w = fountain_header_write (&bad[i].h, b, sizeof b);
    /* the same header bytes forced onto the wire must not parse either */
    uint8_t raw[32 + 1000] = { 0 };
    memcpy (raw, pkt, 32);
    const FountainHeader *x = &bad[i].h;
    raw[5] = x->kind, raw[6] = x->streams, raw[7] = x->stream;
    raw[12] = (uint8_t) (x->n >> 8), raw[13] = (uint8_t) x->n;
    raw[14] = (uint8_t) (x->symbol_size >> 8), raw[15] = (uint8_t) x->symbol_size;
    for (int j = 0; j < 4; j++)
      raw[20 + j] = (uint8_t) (x->index_or_seed >> (24 - 8 * j));
    for (int j = 0; j < 8; j++)
      raw[24 + j] = (uint8_t) (x->pipe_mask >> (56 - 8 * j));
    int p = fountain_header_parse (raw, 32 + (x->symbol_size ? x->symbol_size
            : 1000), &g, &payload);
    check (w == bad[i].err && p == bad[i].err, "header: %s rejected (%s)",
        bad[i].what, fountain_error_string (p));
  }
  pkt[0] = 'X';
  check (fountain_header_parse (pkt, sizeof pkt, &g, &payload)
      == FOUNTAIN_ERR_MAGIC, "header: wrong magic rejected");
  pkt[0] = 'C';
  pkt[4] = 2;
  check (fountain_header_parse (pkt, sizeof pkt, &g, &payload)
      == FOUNTAIN_ERR_VERSION, "header: version 2 rejected");
  pkt[4] = 1;
  check (fountain_header_parse (pkt, sizeof pkt - 1, &g, &payload)
      == FOUNTAIN_ERR_LENGTH
      && fountain_header_parse (pkt, sizeof pkt, &g, &payload) == FOUNTAIN_OK,
      "header: payload one byte short rejected");
}

/* The parser on seeded mutations of valid packets, on every truncation and on
 * garbage, each in a heap block of exactly its length (a read past it is a
 * heap overflow for ASan / valgrind). What it accepts must satisfy every rule
 * and write back to the same bytes. */
static void
test_header_fuzz (void)
{
  Rng rng = { 0x9E3779B97F4A7C15ull };
  int accepted = 0, rejected = 0, bad_accept = 0, trunc_ok = 1;
  int seen[11] = { 0 };
  for (int iter = 0; iter < 40000; iter++) {
    FountainHeader h = { 0 };
    h.streams = (uint8_t) (1 + rnd (&rng) % 64);
    h.stream = (uint8_t) (rnd (&rng) % h.streams);
    h.symbol_size = (uint16_t) (1 + rnd (&rng) % 300);
    h.frame_len = 1 + rnd (&rng) % (h.streams * 40u * h.symbol_size);
    h.n = (uint16_t) fountain_subframe_symbols (h.frame_len, h.streams,
        h.symbol_size);
    h.frame_id = rnd (&rng);
    h.kind = (uint8_t) (h.streams > 1 ? rnd (&rng) % 3 : rnd (&rng) % 2);
    h.index_or_seed = h.kind == FOUNTAIN_KIND_SOURCE ? rnd (&rng) % h.n
        : rnd (&rng);
    if (h.kind == FOUNTAIN_KIND_PIPE)
      h.pipe_mask = 1ull << h.stream
          | 1ull << ((h.stream + 1 + rnd (&rng) % (h.streams - 1)) % h.streams);
    size_t len = 32 + h.symbol_size;
    uint8_t *pkt = malloc (len);
    memset (pkt, 0xA5, len);
    if (fountain_header_write (&h, pkt, len) != 32) {
      bad_accept++;
      free (pkt);
      continue;
    }
    if (iter % 8 == 0) {
      /* every truncation of this packet is rejected */
      for (size_t t = 0; t < len; t++) {
        uint8_t *cut = malloc (t ? t : 1);
        memcpy (cut, pkt, t);
        FountainHeader g;
        if (fountain_header_parse (cut, t, &g, NULL) == FOUNTAIN_OK)
          trunc_ok = 0;
        free (cut);
      }
    }
    /* 1..4 random byte changes in the header, sometimes a length change */
    int muts = 1 + (int) (rnd (&rng) % 4);
    for (int m = 0; m < muts; m++) {
      uint32_t pos = rnd (&rng) % 32;
      if (rnd (&rng) & 1)
        pkt[pos] ^= (uint8_t) (1u << (rnd (&rng) % 8));
      else
        pkt[pos] = (uint8_t) rnd (&rng);
    }
    size_t mlen = len;
    if (rnd (&rng) % 16 == 0)
      mlen = rnd (&rng) % (len + 8);
    uint8_t *m = malloc (mlen ? mlen : 1);
    memcpy (m, pkt, mlen < len ? mlen : len);
    if (mlen > len)
      memset (m + len, 0, mlen - len);
    FountainHeader g;
    const uint8_t *payload = NULL;
    int err = fountain_header_parse (m, mlen, &g, &payload);
    if (err == FOUNTAIN_OK) {
      accepted++;
      uint8_t back[32];
      int ok = g.streams >= 1 && g.streams <= 64 && g.stream < g.streams
          && g.n == fountain_subframe_symbols (g.frame_len, g.streams,
              g.symbol_size) && g.n > 0 && mlen == 32u + g.symbol_size
          && payload == m + 32
          && (g.kind != FOUNTAIN_KIND_SOURCE || g.index_or_seed < g.n)
          && (g.kind == FOUNTAIN_KIND_PIPE ? (g.pipe_mask >> g.stream & 1)
              && __builtin_popcountll (g.pipe_mask) >= 2
              && (g.streams == 64 || g.pipe_mask >> g.streams == 0)
              : g.pipe_mask == 0 && g.kind <= 1)
          && fountain_header_write (&g, back, sizeof back) == 32
          && memcmp (back, m, 32) == 0;
      if (!ok)
        bad_accept++;
    } else {
      rejected++;
      if (-err >= 1 && -err <= 9)
        seen[-err]++;
    }
    free (m);
    free (pkt);
  }
  /* garbage */
  for (int iter = 0; iter < 20000; iter++) {
    size_t len = rnd (&rng) % 200;
    uint8_t *g = malloc (len ? len : 1);
    for (size_t i = 0; i < len; i++)
      g[i] = (uint8_t) rnd (&rng);
    if (len >= 4 && iter % 2)
      memcpy (g, "CSTP", 4);    /* get past the magic half of the time */
    FountainHeader h;
    if (fountain_header_parse (g, len, &h, NULL) == FOUNTAIN_OK)
      bad_accept++;
    free (g);
  }
  check (bad_accept == 0, "fuzz: every accepted mutation obeys every rule and "
      "writes back byte for byte (%d accepted, %d rejected)", accepted,
      rejected);
  check (trunc_ok, "fuzz: every truncation of 5000 packets rejected");
  int all = 1;
  for (int e = 1; e <= 9; e++)
    all &= seen[e] > 0;
  check (all, "fuzz: mutations hit every error (short %d magic %d version %d "
      "kind %d streams %d geometry %d index %d pipe %d length %d)", seen[1],
      seen[2], seen[3], seen[4], seen[5], seen[6], seen[7], seen[8], seen[9]);
}

/* ---- code ------------------------------------------------------------------ */

static void
test_code (void)
{
  Rng rng = { 42 };
  enum { N = 40, K = 24, S = 3 };
  static uint8_t sub[S][N * K];
  for (int s = 0; s < S; s++)
    for (int i = 0; i < N * K; i++)
      sub[s][i] = (uint8_t) rnd (&rng);
  const uint8_t *subs[S] = { sub[0], sub[1], sub[2] };
  uint8_t pipe[K], a[K], b[K];
  fountain_encode_pipe (N, K, subs, 0x5, 77, pipe);
  fountain_encode_repair (N, K, sub[0], fountain_pipe_component_seed (77, 0), a);
  fountain_encode_repair (N, K, sub[2], fountain_pipe_component_seed (77, 2), b);
  int ok = 1;
  for (int i = 0; i < K; i++)
    ok &= pipe[i] == (a[i] ^ b[i]);
  check (ok, "code: a pipe packet is the sum of its streams' repairs");

  /* the SIMD batch (what senders use) makes the scalar reference's bytes */
  enum { B = 40 };
  static uint8_t batch[B][K];
  uint8_t *outs[B];
  uint32_t seeds[B];
  for (int j = 0; j < B; j++) {
    outs[j] = batch[j];
    seeds[j] = 7000u + (uint32_t) j * 977u;
  }
  fountain_encode_repairs (N, K, sub[1], B, seeds, outs);
  ok = 1;
  for (int j = 0; j < B; j++) {
    fountain_encode_repair (N, K, sub[1], seeds[j], a);
    ok &= memcmp (a, batch[j], K) == 0;
  }
  check (ok, "code: fountain_encode_repairs equals fountain_encode_repair "
      "for %d seeds", B);

  /* one stream: all N source symbols lost, N repairs: decodes exactly */
  FountainFrameDecoder *d = fountain_frame_decoder_new (1, N, K, N);
  FountainHeader h = { .kind = FOUNTAIN_KIND_REPAIR, .streams = 1, .n = N,
    .symbol_size = K, .frame_len = N * K, .frame_id = 9 };
  for (int r = 0; r < N - 1; r++) {
    h.index_or_seed = 1000 + (uint32_t) r;
    fountain_encode_repair (N, K, sub[0], h.index_or_seed, a);
    fountain_frame_decoder_add (d, &h, a);
  }
  int before = fountain_frame_decoder_decode (d, NULL);
  h.index_or_seed = 5000;
  fountain_encode_repair (N, K, sub[0], h.index_or_seed, a);
  int dup_ok = fountain_frame_decoder_add (d, &h, a) == FOUNTAIN_ADD_KEPT
      && fountain_frame_decoder_add (d, &h, a) == FOUNTAIN_ADD_DUPLICATE;
  int after = fountain_frame_decoder_decode (d, NULL);
  const uint8_t *out = fountain_frame_decoder_stream (d, 0);
  check (before == 0 && after == 1 && dup_ok && out
      && memcmp (out, sub[0], N * K) == 0,
      "code: N - 1 repairs do not decode, N do, byte for byte");
  h.frame_id = 10;
  check (fountain_frame_decoder_add (d, &h, a) == FOUNTAIN_ADD_FOREIGN,
      "code: a packet of another frame is refused");
  fountain_frame_decoder_free (d);
  check (fountain_frame_decoder_new (0, N, K, 4) == NULL
      && fountain_frame_decoder_new (65, N, K, 4) == NULL
      && fountain_frame_decoder_new (2, 0, K, 4) == NULL
      && fountain_frame_decoder_new (2, N, 0, 4) == NULL,
      "code: decoder refuses bad geometry");
}

/* ---- Fig. 8: 10 streams, 7.5 % average loss, Gilbert-Elliott bursts ------- */

enum { FIG_S = 10, FIG_N = 1024, FIG_K = 4, FIG_FRAMES = 10 };
#define FIG_LOSS 0.075
#define FIG_BURST 6.0           /* mean burst length, packets */

static const char *const pattern_names[4] = { "uniform", "linear",
  "polynomial", "random chop" };

/* Per-stream loss rates of a pattern, mean FIG_LOSS. */
static void
pattern_rates (int pattern, double *rate)
{
  double w[FIG_S], sum = 0;
  Rng rng = { 0xC0FFEEull };
  double cuts[FIG_S + 1];
  for (int i = 0; i < FIG_S; i++) {
    switch (pattern) {
      case 0: w[i] = 1; break;
      case 1: w[i] = 1 + i; break;
      case 2: w[i] = (1 + i) * (1 + i); break;
      default: w[i] = 0; break;
    }
  }
  if (pattern == 3) {
    /* the pie cut at 9 random points */
    cuts[0] = 0;
    cuts[FIG_S] = 1;
    for (int i = 1; i < FIG_S; i++)
      cuts[i] = unit (&rng);
    for (int i = 1; i < FIG_S; i++)
      for (int j = i + 1; j < FIG_S; j++)
        if (cuts[j] < cuts[i]) {
          double t = cuts[i];
          cuts[i] = cuts[j];
          cuts[j] = t;
        }
    for (int i = 0; i < FIG_S; i++)
      w[i] = cuts[i + 1] - cuts[i];
  }
  for (int i = 0; i < FIG_S; i++)
    sum += w[i];
  for (int i = 0; i < FIG_S; i++) {
    rate[i] = FIG_LOSS * FIG_S * w[i] / sum;
    if (rate[i] > 0.6)
      rate[i] = 0.6;
  }
}

/* Gilbert-Elliott channel: every packet lost in the bad state, none in the
 * good; bursts of mean FIG_BURST; stationary loss = rate. */
typedef struct {
  Rng rng;
  double p_gb, p_bg;
  int bad;
} GeChannel;

static void
ge_init (GeChannel *c, double rate, uint64_t seed)
{
  c->rng.s = seed;
  c->p_bg = 1.0 / FIG_BURST;
  c->p_gb = rate <= 0 ? 0 : rate * c->p_bg / (1 - rate);
  c->bad = unit (&c->rng) < rate;
}

static int
ge_lost (GeChannel *c)
{
  int lost = c->bad;
  c->bad = c->bad ? unit (&c->rng) >= c->p_bg : unit (&c->rng) < c->p_gb;
  return lost;
}

/* Packet i of stream s of frame f, header and payload, into pkt: a source
 * packet for i < N, then redundancy drawn from the stream-degree
 * distribution (pipe_width, all_share), made by the scalar reference. */
static void
make_packet (int S, int N, int K, uint32_t frame_len,
    const uint8_t *const *subs, int s, uint32_t f, int i, double pipe_width,
    double all_share, uint8_t *pkt)
{
  FountainHeader h = { .streams = (uint8_t) S, .stream = (uint8_t) s,
    .frame_id = f, .n = (uint16_t) N, .symbol_size = (uint16_t) K,
    .frame_len = frame_len };
  uint8_t *payload = pkt + FOUNTAIN_HEADER_SIZE;
  if (i < N) {
    h.kind = FOUNTAIN_KIND_SOURCE;
    h.index_or_seed = (uint32_t) i;
    memcpy (payload, subs[s] + (size_t) i * K, (size_t) K);
  } else {
    uint32_t r = (uint32_t) (i - N);
    uint64_t mask = fountain_stream_degree_draw_shared (pipe_width,
        all_share, S, s, f, r);
    h.index_or_seed = f * 0x10000u + (uint32_t) s * 0x1000u + r;
    if (mask == 1ull << s) {
      h.kind = FOUNTAIN_KIND_REPAIR;
      fountain_encode_repair (N, (size_t) K, subs[s], h.index_or_seed,
          payload);
    } else {
      h.kind = FOUNTAIN_KIND_PIPE;
      h.pipe_mask = mask;
      fountain_encode_pipe (N, (size_t) K, subs, mask, h.index_or_seed,
          payload);
    }
  }
  fountain_header_write (&h, pkt, FOUNTAIN_HEADER_SIZE + (size_t) K);
}

typedef struct {
  int frames_ok;                /* every stream decoded and equal */
  int streams_lost;             /* stream-frames not decoded */
  int repaired;                 /* stream-frames decoded through pipes */
  int joint;                    /* stream-frames solved with other streams */
  int wrong;                    /* decoded but different bytes */
  long sent, lost;
} FigResult;

/* FIG_FRAMES frames over the pattern's channels: N source packets and
 * `redundancy` repair/pipe packets per stream, drawn by pipe_width, through
 * header write -> lossy channel -> parse -> cross-stream decoder. */
static FigResult
run_fig8_shared (int pattern, int redundancy, double pipe_width,
    double all_share)
{
  FigResult res = { 0 };
  double rate[FIG_S];
  pattern_rates (pattern, rate);
  GeChannel ch[FIG_S];
  for (int s = 0; s < FIG_S; s++)
    ge_init (&ch[s], rate[s], 0x1234567ull * (uint64_t) (s + 1) + (uint64_t)
        pattern);
  Rng data = { 0xDA7Aull + (uint64_t) pattern };
  uint32_t frame_len = FIG_S * FIG_N * FIG_K - 17;      /* padding exercised */
  static uint8_t frame[FIG_S * FIG_N * FIG_K];
  const uint8_t *subs[FIG_S];
  for (int s = 0; s < FIG_S; s++)
    subs[s] = frame + (size_t) s * FIG_N * FIG_K;
  FountainFrameDecoder *d = fountain_frame_decoder_new (FIG_S, FIG_N, FIG_K,
      redundancy);
  uint8_t pkt[FOUNTAIN_HEADER_SIZE + FIG_K];
  for (int f = 0; f < FIG_FRAMES; f++) {
    for (uint32_t i = 0; i < frame_len; i++)
      frame[i] = (uint8_t) rnd (&data);
    memset (frame + frame_len, 0, sizeof frame - frame_len);
    fountain_frame_decoder_reset (d, (uint32_t) f);
    for (int s = 0; s < FIG_S; s++) {
      for (int i = 0; i < FIG_N + redundancy; i++) {
        make_packet (FIG_S, FIG_N, FIG_K, frame_len, subs, s, (uint32_t) f, i,
            pipe_width, all_share, pkt);
        res.sent++;
        if (ge_lost (&ch[s])) {
          res.lost++;
          continue;
        }
        FountainHeader g;
        const uint8_t *p;
        if (fountain_header_parse (pkt, sizeof pkt, &g, &p) == FOUNTAIN_OK)
          fountain_frame_decoder_add (d, &g, p);
      }
    }
    FountainDecodeStats st;
    int decoded = fountain_frame_decoder_decode (d, &st);
    res.streams_lost += FIG_S - decoded;
    res.repaired += st.streams_repaired;
    res.joint += st.streams_joint;
    int good = decoded == FIG_S;
    for (int s = 0; s < FIG_S; s++) {
      const uint8_t *out = fountain_frame_decoder_stream (d, s);
      if (out && memcmp (out, subs[s], (size_t) FIG_N * FIG_K) != 0) {
        res.wrong++;
        good = 0;
      }
    }
    res.frames_ok += good;
  }
  fountain_frame_decoder_free (d);
  return res;
}

static FigResult
run_fig8 (int pattern, int redundancy, double pipe_width)
{
  return run_fig8_shared (pattern, redundancy, pipe_width, 0.5);
}

/* At 16 % overhead, half of it pipe packets, every frame of every pattern
 * decodes; per-stream coding alone (p = 0, every redundancy packet a repair
 * of its own stream) at the same overhead and on the same losses does not. */
static void
test_fig8 (void)
{
  const int redundancy = FIG_N * 16 / 100;
  const double pipe_width = 0.5;
  int per_stream_fails = 0;
  for (int pat = 0; pat < 4; pat++) {
    FigResult cstp = run_fig8 (pat, redundancy, pipe_width);
    FigResult fec = run_fig8 (pat, redundancy, 0.0);
    check (cstp.frames_ok == FIG_FRAMES && cstp.wrong == 0 && fec.wrong == 0,
        "fig8 %s: p = %.2f decodes %d/%d frames byte for byte (loss %.2f %%; "
        "stream-frames through pipe extras %d, solved jointly %d); "
        "p = 0 %d/%d (%d stream-frames lost)",
        pattern_names[pat], pipe_width, cstp.frames_ok, FIG_FRAMES,
        100.0 * cstp.lost / cstp.sent, cstp.repaired, cstp.joint,
        fec.frames_ok, FIG_FRAMES, fec.streams_lost);
    per_stream_fails += fec.streams_lost > 0;
  }
  check (per_stream_fails > 0, "fig8: per-stream coding alone (p = 0) loses "
      "streams in %d of 4 patterns at the same overhead", per_stream_fails);
}

/* ---- uneven loss over 4 paths: the redundancy pooled over the frame ------ */

/* 4 streams of a 320x240 RGBA frame in 1368-byte symbols (cstpsink's
 * default packet-size): N = 57, 15 % overhead = 9 redundancy packets a
 * stream, 36 a frame. Paths: 1 % and 3 % independent loss, 8 % in bursts of
 * mean 4 and 16 % in bursts of mean 8 (Gilbert-Elliott, all lost in the bad
 * state). The code is not changed by symbol size, so 8-byte symbols. */
enum { UN_S = 4, UN_N = 57, UN_K = 8 };
static const double un_rate[UN_S] = { 0.01, 0.03, 0.08, 0.16 };
static const double un_burst[UN_S] = { 1, 1, 4, 8 };

typedef struct {
  int frames, ok, within, within_ok, beyond_ok, wrong;
  long sent, lost;
} UnevenResult;

static UnevenResult
run_uneven (int frames, int redundancy, double pipe_width, double all_share,
    uint64_t seed)
{
  UnevenResult res = { 0 };
  GeChannel ch[UN_S];
  for (int s = 0; s < UN_S; s++) {
    ge_init (&ch[s], un_rate[s], seed * 0x9E3779B9ull + (uint64_t) s + 1);
    ch[s].p_bg = 1.0 / un_burst[s];
    ch[s].p_gb = un_rate[s] * ch[s].p_bg / (1 - un_rate[s]);
  }
  Rng data = { 0xDA7Aull ^ seed };
  static uint8_t frame[UN_S * UN_N * UN_K];
  const uint8_t *subs[UN_S];
  for (int s = 0; s < UN_S; s++)
    subs[s] = frame + (size_t) s * UN_N * UN_K;
  FountainFrameDecoder *d = fountain_frame_decoder_new (UN_S, UN_N, UN_K,
      redundancy);
  uint8_t pkt[FOUNTAIN_HEADER_SIZE + UN_K];
  for (int f = 0; f < frames; f++) {
    for (size_t i = 0; i < sizeof frame; i++)
      frame[i] = (uint8_t) rnd (&data);
    fountain_frame_decoder_reset (d, (uint32_t) f);
    int received = 0;
    for (int s = 0; s < UN_S; s++)
      for (int i = 0; i < UN_N + redundancy; i++) {
        make_packet (UN_S, UN_N, UN_K, sizeof frame, subs, s, (uint32_t) f, i,
            pipe_width, all_share, pkt);
        res.sent++;
        if (ge_lost (&ch[s])) {
          res.lost++;
          continue;
        }
        received++;
        FountainHeader g;
        const uint8_t *p;
        if (fountain_header_parse (pkt, sizeof pkt, &g, &p) == FOUNTAIN_OK)
          fountain_frame_decoder_add (d, &g, p);
      }
    int decoded = fountain_frame_decoder_decode (d, NULL);
    int good = decoded == UN_S;
    for (int s = 0; s < UN_S; s++) {
      const uint8_t *out = fountain_frame_decoder_stream (d, s);
      if (out && memcmp (out, subs[s], (size_t) UN_N * UN_K) != 0) {
        res.wrong++;
        good = 0;
      }
    }
    int within = received >= UN_S * UN_N;
    res.frames++;
    res.ok += good;
    res.within += within;
    res.within_ok += within && good;
    res.beyond_ok += !within && good;
  }
  fountain_frame_decoder_free (d);
  return res;
}

/* The default code (every redundancy packet a pipe of all S streams) pools
 * the frame's redundancy: every frame of which at least S x N packets
 * arrived decodes, on uneven bursty loss; half pipes of mixed degree (the
 * former default) and per-stream coding lose frames that were within it. */
static void
test_uneven (void)
{
  const int red = (UN_N * 15 + 99) / 100;
  UnevenResult all = run_uneven (300, red, 1.0, 1.0, 1);
  UnevenResult mixed = run_uneven (300, red, 0.5, 0.5, 1);
  UnevenResult own = run_uneven (300, red, 0.0, 0.0, 1);
  check (all.wrong == 0 && all.within_ok == all.within && all.within > 250
      && all.within < all.frames,
      "uneven loss, 15 %% overhead, every pipe all 4 streams: %d of the %d "
      "frames within the redundancy decode byte for byte (%d of %d beyond "
      "it; loss %.2f %%)", all.within_ok, all.within,
      all.frames - all.within, all.frames, 100.0 * all.lost / all.sent);
  check (mixed.wrong == 0 && own.wrong == 0 && mixed.within_ok < mixed.within
      && own.within_ok < mixed.within_ok,
      "uneven loss: half pipes of mixed degree decode %d of those %d, "
      "per-stream coding %d", mixed.within_ok, mixed.within, own.within_ok);
}

/* One JSON line per (overhead, code): frames, those within the redundancy,
 * those decoded. Overheads 4 % to 30 % of N = 57, in whole packets. */
static void
print_uneven (int frames)
{
  static const struct { double p, a; const char *name; } codes[] = {
    { 0, 0, "own" }, { 0.5, 0.5, "mixed" }, { 1, 1, "all" } };
  for (int red = 2; red <= 17; red++)
    for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
      UnevenResult r = run_uneven (frames, red, codes[c].p, codes[c].a, 1);
      printf ("{\"bench\":\"cstp-uneven\",\"code\":\"%s\",\"pipe\":%.2f,"
          "\"all_share\":%.2f,\"streams\":%d,\"n\":%d,\"redundancy\":%d,"
          "\"frames\":%d,\"within\":%d,\"within_ok\":%d,\"whole\":%d,"
          "\"wrong\":%d,\"loss\":%.4f}\n", codes[c].name, codes[c].p,
          codes[c].a, UN_S, UN_N, red, r.frames, r.within, r.within_ok, r.ok,
          r.wrong, (double) r.lost / r.sent);
    }
}

/* Recovery against overhead, both ways, for docs/elements/cstp-code.md. */
/* Resident memory of this process in bytes (Linux), 0 when unknown. */
static size_t
resident_bytes (void)
{
  FILE *f = fopen ("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f == NULL)
    return 0;
  if (fscanf (f, "%lu %lu", &size, &resident) != 2)
    resident = 0;
  fclose (f);
  return (size_t) resident * 4096;
}

/* A receiver's memory must follow what it received, not what headers
 * announced: eight decoders of 256 MiB frames over 64 streams (one per
 * frame a receiver keeps pending), each given a source, a repair and a
 * pipe packet per stream, stay far below one frame. */
static void
test_memory_follows_packets (void)
{
  enum { S = 64, N = 4096, K = 1024, FRAMES = 8 };
  uint32_t frame_len = (uint32_t) S * N * K;
  /* what the decoder touches, not glibc's debugging fill of every byte
   * malloc hands out (meson test sets MALLOC_PERTURB_) */
  mallopt (M_PERTURB, 0);
  size_t before = resident_bytes ();
  FountainFrameDecoder *d[FRAMES];
  uint8_t pkt[FOUNTAIN_HEADER_SIZE + K];
  memset (pkt, 0, sizeof pkt);
  int kept = 0, made = 0;
  for (int f = 0; f < FRAMES; f++) {
    d[f] = fountain_frame_decoder_new (S, N, K, N + 16);
    if (d[f] == NULL)
      continue;
    made++;
    for (int s = 0; s < S; s++)
      for (int kind = 0; kind < 3; kind++) {
        FountainHeader h = { .kind = (uint8_t) kind, .streams = S,
          .stream = (uint8_t) s, .frame_id = (uint32_t) f, .n = N,
          .symbol_size = K, .frame_len = frame_len,
          .index_or_seed = kind == FOUNTAIN_KIND_SOURCE ? 7u : 1000u + s,
          .pipe_mask = kind == FOUNTAIN_KIND_PIPE ? 3ull << (s & ~1) : 0 };
        kept += fountain_frame_decoder_add (d[f], &h, pkt) ==
            FOUNTAIN_ADD_KEPT;
      }
  }
  size_t grown = resident_bytes () - before;
  for (int f = 0; f < FRAMES; f++)
    fountain_frame_decoder_free (d[f]);
  check (made == FRAMES && kept == FRAMES * S * 3,
      "memory: decoders of %d announced 256 MiB frames keep their %d packets",
      made, kept);
  check (before > 0 && grown < (size_t) 64 << 20,
      "memory: they hold %.1f MiB resident (%d MiB announced)",
      grown / 1048576.0, FRAMES * 256);
}

static void
print_table (double p, double a)
{
  printf ("redundancy/N  overhead  pattern      p=0 frames  p=%.2f frames\n", p);
  for (int pct = 10; pct <= 22; pct += 2)
    for (int pat = 0; pat < 4; pat++) {
      int red = FIG_N * pct / 100;
      FigResult fec = run_fig8 (pat, red, 0.0);
      FigResult cstp = run_fig8_shared (pat, red, p, a);
      printf ("%3d/%d       %5.1f %%   %-11s  %3d/%d       %3d/%d\n", red, FIG_N,
          100.0 * red / FIG_N, pattern_names[pat], fec.frames_ok, FIG_FRAMES,
          cstp.frames_ok, FIG_FRAMES);
    }
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--table") == 0) {
    print_table (argc > 2 ? atof (argv[2]) : 0.5,
        argc > 3 ? atof (argv[3]) : 0.5);
    return 0;
  }
  if (argc > 1 && strcmp (argv[1], "--uneven") == 0) {
    print_uneven (argc > 2 ? atoi (argv[2]) : 600);
    return 0;
  }
  test_header_bytes ();
  test_header_fuzz ();
  test_code ();
  test_memory_follows_packets ();
  test_fig8 ();
  test_uneven ();
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
