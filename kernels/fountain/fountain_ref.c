/* fountain_ref.c: scalar reference of the cross-stream code (fountain.h):
 * header parse/write, repair and pipe encoding, and the frame decoder of
 * Liu, Schulze, DeFanti's CSTP (2011), section 5.2. */
#include "fountain/fountain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gf256/gf256.h"
#include "rlnc/rlnc_seed.h"

/* ---- GF(2^8) row operations ---------------------------------------------- */

/* Log / antilog tables of gf256.h's field (generator 2): a product is two
 * lookups, where gf256_mul's table-free form costs eight steps per byte. */
static uint8_t gf_log[256];
static uint8_t gf_exp[512];
static pthread_once_t gf_once = PTHREAD_ONCE_INIT;

static void
gf_tables_init (void)
{
  uint8_t x = 1;
  for (int i = 0; i < 255; i++) {
    gf_exp[i] = gf_exp[i + 255] = x;
    gf_log[x] = (uint8_t) i;
    x = gf256_xtime (x);
  }
  gf_exp[510] = gf_exp[0];
  gf_exp[511] = gf_exp[1];
}

static inline uint8_t
gf_mul (uint8_t a, uint8_t b)
{
  return (a && b) ? gf_exp[gf_log[a] + gf_log[b]] : 0;
}

/* dst += c * src over len bytes. */
static void
gf_madd (uint8_t *dst, const uint8_t *src, uint8_t c, size_t len)
{
  if (c == 0)
    return;
  if (c == 1) {
    for (size_t i = 0; i < len; i++)
      dst[i] ^= src[i];
    return;
  }
  const uint8_t *e = gf_exp + gf_log[c];
  for (size_t i = 0; i < len; i++)
    if (src[i])
      dst[i] ^= e[gf_log[src[i]]];
}

static void
gf_scale (uint8_t *row, uint8_t c, size_t len)
{
  for (size_t i = 0; i < len; i++)
    row[i] = gf_mul (row[i], c);
}

/* ---- header -------------------------------------------------------------- */

const char *
fountain_error_string (int err)
{
  switch (err) {
    case FOUNTAIN_OK: return "ok";
    case FOUNTAIN_ERR_SHORT: return "shorter than a header";
    case FOUNTAIN_ERR_MAGIC: return "wrong magic";
    case FOUNTAIN_ERR_VERSION: return "unknown version";
    case FOUNTAIN_ERR_KIND: return "unknown packet kind";
    case FOUNTAIN_ERR_STREAMS: return "stream count or stream index out of range";
    case FOUNTAIN_ERR_GEOMETRY: return "sub-frame geometry inconsistent";
    case FOUNTAIN_ERR_INDEX: return "source index beyond the sub-frame";
    case FOUNTAIN_ERR_PIPE: return "bad pipe stream mask";
    case FOUNTAIN_ERR_LENGTH: return "payload length is not the symbol size";
    default: return "unknown error";
  }
}

uint32_t
fountain_subframe_symbols (uint32_t frame_len, int streams,
    uint16_t symbol_size)
{
  if (frame_len == 0 || symbol_size == 0 || streams < 1
      || streams > FOUNTAIN_MAX_STREAMS)
    return 0;
  uint64_t symbols = ((uint64_t) frame_len + symbol_size - 1) / symbol_size;
  uint64_t n = (symbols + (uint64_t) streams - 1) / (uint64_t) streams;
  return n > FOUNTAIN_MAX_N ? 0 : (uint32_t) n;
}

static uint32_t
get_be32 (const uint8_t *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
      | (uint32_t) p[2] << 8 | p[3];
}

static void
put_be32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

/* Every rule but the payload length, shared by parse and write. */
static int
header_validate (const FountainHeader *h)
{
  if (h->kind > FOUNTAIN_KIND_PIPE)
    return FOUNTAIN_ERR_KIND;
  if (h->streams < 1 || h->streams > FOUNTAIN_MAX_STREAMS
      || h->stream >= h->streams)
    return FOUNTAIN_ERR_STREAMS;
  if (h->n == 0 || h->symbol_size == 0
      || fountain_subframe_symbols (h->frame_len, h->streams,
          h->symbol_size) != h->n)
    return FOUNTAIN_ERR_GEOMETRY;
  if (h->kind == FOUNTAIN_KIND_SOURCE && h->index_or_seed >= h->n)
    return FOUNTAIN_ERR_INDEX;
  if (h->kind == FOUNTAIN_KIND_PIPE) {
    uint64_t outside = h->streams == 64 ? 0 : h->pipe_mask >> h->streams;
    if (outside || !(h->pipe_mask >> h->stream & 1)
        || __builtin_popcountll (h->pipe_mask) < 2)
      return FOUNTAIN_ERR_PIPE;
  } else if (h->pipe_mask != 0) {
    return FOUNTAIN_ERR_PIPE;
  }
  return FOUNTAIN_OK;
}

int
fountain_header_parse (const uint8_t *buf, size_t len, FountainHeader *h,
    const uint8_t **payload)
{
  if (buf == NULL || len < FOUNTAIN_HEADER_SIZE)
    return FOUNTAIN_ERR_SHORT;
  if (get_be32 (buf) != FOUNTAIN_MAGIC)
    return FOUNTAIN_ERR_MAGIC;
  if (buf[4] != FOUNTAIN_VERSION)
    return FOUNTAIN_ERR_VERSION;
  FountainHeader t;
  t.kind = buf[5];
  t.streams = buf[6];
  t.stream = buf[7];
  t.frame_id = get_be32 (buf + 8);
  t.n = (uint16_t) (buf[12] << 8 | buf[13]);
  t.symbol_size = (uint16_t) (buf[14] << 8 | buf[15]);
  t.frame_len = get_be32 (buf + 16);
  t.index_or_seed = get_be32 (buf + 20);
  t.pipe_mask = (uint64_t) get_be32 (buf + 24) << 32 | get_be32 (buf + 28);
  int err = header_validate (&t);
  if (err != FOUNTAIN_OK)
    return err;
  if (len - FOUNTAIN_HEADER_SIZE != t.symbol_size)
    return FOUNTAIN_ERR_LENGTH;
  *h = t;
  if (payload)
    *payload = buf + FOUNTAIN_HEADER_SIZE;
  return FOUNTAIN_OK;
}

int
fountain_header_write (const FountainHeader *h, uint8_t *buf, size_t cap)
{
  if (cap < FOUNTAIN_HEADER_SIZE)
    return FOUNTAIN_ERR_SHORT;
  int err = header_validate (h);
  if (err != FOUNTAIN_OK)
    return err;
  put_be32 (buf, FOUNTAIN_MAGIC);
  buf[4] = FOUNTAIN_VERSION;
  buf[5] = h->kind;
  buf[6] = h->streams;
  buf[7] = h->stream;
  put_be32 (buf + 8, h->frame_id);
  buf[12] = (uint8_t) (h->n >> 8);
  buf[13] = (uint8_t) h->n;
  buf[14] = (uint8_t) (h->symbol_size >> 8);
  buf[15] = (uint8_t) h->symbol_size;
  put_be32 (buf + 16, h->frame_len);
  put_be32 (buf + 20, h->index_or_seed);
  put_be32 (buf + 24, (uint32_t) (h->pipe_mask >> 32));
  put_be32 (buf + 28, (uint32_t) h->pipe_mask);
  return FOUNTAIN_HEADER_SIZE;
}

/* ---- encoding ------------------------------------------------------------ */

uint32_t
fountain_pipe_component_seed (uint32_t pipe_seed, int t)
{
  return (uint32_t) rlnc_seed_mix64 (((uint64_t) pipe_seed << 8 | (uint8_t) t)
      ^ 0xC57Bu);
}

void
fountain_encode_repair (int n, size_t symbol_size, const uint8_t *sub,
    uint32_t seed, uint8_t *out)
{
  pthread_once (&gf_once, gf_tables_init);
  memset (out, 0, symbol_size);
  for (int i = 0; i < n; i++)
    gf_madd (out, sub + (size_t) i * symbol_size, rlnc_seed_coef (seed,
            (uint32_t) i), symbol_size);
}

void
fountain_encode_pipe (int n, size_t symbol_size, const uint8_t *const *subs,
    uint64_t mask, uint32_t pipe_seed, uint8_t *out)
{
  uint8_t *part = malloc (symbol_size);
  if (part == NULL)
    abort ();
  memset (out, 0, symbol_size);
  for (int t = 0; t < FOUNTAIN_MAX_STREAMS; t++) {
    if (!(mask >> t & 1))
      continue;
    fountain_encode_repair (n, symbol_size, subs[t],
        fountain_pipe_component_seed (pipe_seed, t), part);
    for (size_t b = 0; b < symbol_size; b++)
      out[b] ^= part[b];
  }
  free (part);
}

/* Uniform in [0, 1) from (frame, stream, r, salt), 53 bits. */
static double
draw_unit (uint32_t frame_id, int stream, uint32_t r, uint32_t salt)
{
  uint64_t z = rlnc_seed_mix64 ((uint64_t) frame_id << 32 ^ (uint64_t) stream
      << 24 ^ (uint64_t) r ^ (uint64_t) salt << 56);
  return (double) (z >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t
fountain_stream_degree_draw (double pipe_width, int streams, int stream,
    uint32_t frame_id, uint32_t r)
{
  uint64_t own = 1ull << stream;
  if (streams < 2 || draw_unit (frame_id, stream, r, 1) >= pipe_width)
    return own;
  if (streams > 2 && draw_unit (frame_id, stream, r, 2) < 0.5)
    return streams == 64 ? ~0ull : (1ull << streams) - 1;
  /* degree 2: own stream and one of the S - 1 others, uniformly */
  int other = (int) (draw_unit (frame_id, stream, r, 3) * (streams - 1));
  if (other >= stream)
    other++;
  return own | 1ull << other;
}

/* ---- cross-stream decoder ------------------------------------------------ */

typedef struct {
  uint8_t *data;                /* N * symbol_size: the sub-frame */
  uint8_t *have;                /* N flags: source symbol known */
  int known;
  int decoded;
  uint32_t *seeds;              /* repair rows: own repairs, then extras */
  uint8_t *payloads;            /* max_rows * symbol_size */
  int rows;
  int extras;                   /* rows that came out of pipe packets */
  int joint;                    /* decoded together with other streams */
} StreamState;

typedef struct {
  uint64_t remaining;           /* covered streams not yet subtracted */
  uint32_t seed;
  uint8_t *payload;
  int done;
} PipeState;

struct FountainFrameDecoder {
  int streams, n, max_redundancy, max_rows;
  size_t symbol_size;
  uint32_t frame_id;
  int have_frame;
  StreamState *s;
  PipeState *pipes;             /* the paper's PipeBuf */
  int n_pipes, max_pipes;
  /* scratch of the solver */
  uint8_t *coefs_full;          /* N */
  uint8_t *part;                /* symbol_size */
};

FountainFrameDecoder *
fountain_frame_decoder_new (int streams, int n, size_t symbol_size,
    int max_redundancy)
{
  if (streams < 1 || streams > FOUNTAIN_MAX_STREAMS || n < 1
      || n > FOUNTAIN_MAX_N || symbol_size < 1
      || symbol_size > FOUNTAIN_MAX_SYMBOL || max_redundancy < 1)
    return NULL;
  pthread_once (&gf_once, gf_tables_init);
  FountainFrameDecoder *d = calloc (1, sizeof *d);
  if (d == NULL)
    return NULL;
  d->streams = streams;
  d->n = n;
  d->symbol_size = symbol_size;
  d->max_redundancy = max_redundancy;
  /* own repairs, plus one extra per pipe packet of the frame at most */
  d->max_rows = max_redundancy * (streams + 1);
  d->max_pipes = max_redundancy * streams;
  d->s = calloc ((size_t) streams, sizeof *d->s);
  d->pipes = calloc ((size_t) d->max_pipes, sizeof *d->pipes);
  d->coefs_full = malloc ((size_t) n);
  d->part = malloc (symbol_size);
  int ok = d->s && d->pipes && d->coefs_full && d->part;
  for (int i = 0; ok && i < streams; i++) {
    StreamState *st = &d->s[i];
    st->data = malloc ((size_t) n * symbol_size);
    st->have = malloc ((size_t) n);
    st->seeds = malloc ((size_t) d->max_rows * sizeof *st->seeds);
    st->payloads = malloc ((size_t) d->max_rows * symbol_size);
    ok = st->data && st->have && st->seeds && st->payloads;
  }
  for (int i = 0; ok && i < d->max_pipes; i++)
    ok = (d->pipes[i].payload = malloc (symbol_size)) != NULL;
  if (!ok) {
    fountain_frame_decoder_free (d);
    return NULL;
  }
  fountain_frame_decoder_reset (d, 0);
  d->have_frame = 0;
  return d;
}

void
fountain_frame_decoder_free (FountainFrameDecoder *d)
{
  if (d == NULL)
    return;
  for (int i = 0; d->s && i < d->streams; i++) {
    free (d->s[i].data);
    free (d->s[i].have);
    free (d->s[i].seeds);
    free (d->s[i].payloads);
  }
  for (int i = 0; d->pipes && i < d->max_pipes; i++)
    free (d->pipes[i].payload);
  free (d->s);
  free (d->pipes);
  free (d->coefs_full);
  free (d->part);
  free (d);
}

void
fountain_frame_decoder_reset (FountainFrameDecoder *d, uint32_t frame_id)
{
  d->frame_id = frame_id;
  d->have_frame = 1;
  for (int i = 0; i < d->streams; i++) {
    StreamState *st = &d->s[i];
    memset (st->have, 0, (size_t) d->n);
    memset (st->data, 0, (size_t) d->n * d->symbol_size);
    st->known = st->decoded = st->rows = st->extras = st->joint = 0;
  }
  d->n_pipes = 0;
}

FountainAddResult
fountain_frame_decoder_add (FountainFrameDecoder *d, const FountainHeader *h,
    const uint8_t *payload)
{
  if (!d->have_frame)
    fountain_frame_decoder_reset (d, h->frame_id);
  if (h->frame_id != d->frame_id || h->streams != d->streams || h->n != d->n
      || h->symbol_size != d->symbol_size)
    return FOUNTAIN_ADD_FOREIGN;
  StreamState *st = &d->s[h->stream];
  size_t k = d->symbol_size;
  switch (h->kind) {
    case FOUNTAIN_KIND_SOURCE:
      if (st->have[h->index_or_seed])
        return FOUNTAIN_ADD_DUPLICATE;
      memcpy (st->data + (size_t) h->index_or_seed * k, payload, k);
      st->have[h->index_or_seed] = 1;
      st->known++;
      return FOUNTAIN_ADD_KEPT;
    case FOUNTAIN_KIND_REPAIR:
      for (int r = 0; r < st->rows; r++)
        if (st->seeds[r] == h->index_or_seed)
          return FOUNTAIN_ADD_DUPLICATE;
      /* own repairs may use max_redundancy rows; the rest wait for extras */
      if (st->rows - st->extras >= d->max_redundancy || st->rows >= d->max_rows)
        return FOUNTAIN_ADD_FULL;
      st->seeds[st->rows] = h->index_or_seed;
      memcpy (st->payloads + (size_t) st->rows * k, payload, k);
      st->rows++;
      return FOUNTAIN_ADD_KEPT;
    default:
      for (int p = 0; p < d->n_pipes; p++)
        if (d->pipes[p].seed == h->index_or_seed)
          return FOUNTAIN_ADD_DUPLICATE;
      if (d->n_pipes >= d->max_pipes)
        return FOUNTAIN_ADD_FULL;
      PipeState *pp = &d->pipes[d->n_pipes++];
      pp->remaining = h->pipe_mask;
      pp->seed = h->index_or_seed;
      pp->done = 0;
      memcpy (pp->payload, payload, k);
      return FOUNTAIN_ADD_KEPT;
  }
}

/* Row r of the system: the coefficients of `seed` over stream t's missing
 * symbols (placed at column base[t] on), and the known symbols' share
 * subtracted from rhs. */
static void
add_component (FountainFrameDecoder *d, int t, uint32_t seed,
    const int *base, uint8_t *row, uint8_t *rhs)
{
  StreamState *st = &d->s[t];
  size_t k = d->symbol_size;
  rlnc_seed_coefs (seed, d->n, d->coefs_full);
  for (int i = 0, m = base[t]; i < d->n; i++) {
    if (st->have[i])
      gf_madd (rhs, st->data + (size_t) i * k, d->coefs_full[i], k);
    else
      row[m++] = d->coefs_full[i];
  }
}

/* Solves the missing symbols of the streams of `set` together: every repair
 * row of those streams, and every pipe packet whose undecoded streams all
 * lie in the set, is an equation over them once the known symbols' share is
 * subtracted; Gauss-Jordan elimination over GF(2^8). For one stream that is
 * the stream's own decode; for several it is what the XOR-only peeling of
 * the paper cannot do (a pipe of two short streams helps both), and why
 * this code is GF(2^8). Returns 1 when every stream of the set decoded. */
static int
solve_streams (FountainFrameDecoder *d, uint64_t set)
{
  int n = d->n;
  size_t k = d->symbol_size;
  int base[FOUNTAIN_MAX_STREAMS] = { 0 };
  int lost = 0, rows = 0;
  for (int t = 0; t < d->streams; t++) {
    if (!(set >> t & 1))
      continue;
    base[t] = lost;
    lost += n - d->s[t].known;
    rows += d->s[t].rows;
  }
  if (lost == 0)
    goto done;
  for (int p = 0; p < d->n_pipes; p++)
    if (!d->pipes[p].done && (d->pipes[p].remaining & ~set) == 0)
      rows++;
  if (rows < lost)
    return 0;
  uint8_t *matrix = calloc ((size_t) rows, (size_t) lost);
  uint8_t *rhs = malloc ((size_t) rows * k);
  int *col_stream = malloc ((size_t) lost * sizeof *col_stream);
  int *col_index = malloc ((size_t) lost * sizeof *col_index);
  if (!matrix || !rhs || !col_stream || !col_index) {
    free (matrix);
    free (rhs);
    free (col_stream);
    free (col_index);
    return 0;
  }
  int r = 0;
  for (int t = 0; t < d->streams; t++) {
    if (!(set >> t & 1))
      continue;
    StreamState *st = &d->s[t];
    for (int i = 0, c = base[t]; i < n; i++)
      if (!st->have[i]) {
        col_stream[c] = t;
        col_index[c++] = i;
      }
    for (int j = 0; j < st->rows; j++, r++) {
      memcpy (rhs + (size_t) r * k, st->payloads + (size_t) j * k, k);
      add_component (d, t, st->seeds[j], base, matrix + (size_t) r * lost,
          rhs + (size_t) r * k);
    }
  }
  for (int p = 0; p < d->n_pipes; p++) {
    PipeState *pp = &d->pipes[p];
    if (pp->done || (pp->remaining & ~set) != 0)
      continue;
    memcpy (rhs + (size_t) r * k, pp->payload, k);
    for (int t = 0; t < d->streams; t++)
      if (pp->remaining >> t & 1)
        add_component (d, t, fountain_pipe_component_seed (pp->seed, t), base,
            matrix + (size_t) r * lost, rhs + (size_t) r * k);
    r++;
  }
  int ok = 1;
  for (int c = 0; c < lost && ok; c++) {
    int piv = -1;
    for (int i = c; i < rows; i++)
      if (matrix[(size_t) i * lost + c]) {
        piv = i;
        break;
      }
    if (piv < 0) {
      ok = 0;                   /* rank below the losses: wait for more */
      break;
    }
    if (piv != c) {
      for (int j = 0; j < lost; j++) {
        uint8_t t = matrix[(size_t) piv * lost + j];
        matrix[(size_t) piv * lost + j] = matrix[(size_t) c * lost + j];
        matrix[(size_t) c * lost + j] = t;
      }
      memcpy (d->part, rhs + (size_t) piv * k, k);
      memcpy (rhs + (size_t) piv * k, rhs + (size_t) c * k, k);
      memcpy (rhs + (size_t) c * k, d->part, k);
    }
    uint8_t *prow = matrix + (size_t) c * lost;
    uint8_t inv = gf256_inv (prow[c]);
    gf_scale (prow + c, inv, (size_t) (lost - c));
    gf_scale (rhs + (size_t) c * k, inv, k);
    for (int i = 0; i < rows; i++) {
      uint8_t *row = matrix + (size_t) i * lost;
      uint8_t f = row[c];
      if (i == c || f == 0)
        continue;
      gf_madd (row + c, prow + c, f, (size_t) (lost - c));
      gf_madd (rhs + (size_t) i * k, rhs + (size_t) c * k, f, k);
    }
  }
  if (ok)
    for (int c = 0; c < lost; c++) {
      StreamState *st = &d->s[col_stream[c]];
      memcpy (st->data + (size_t) col_index[c] * k, rhs + (size_t) c * k, k);
      st->have[col_index[c]] = 1;
    }
  free (matrix);
  free (rhs);
  free (col_stream);
  free (col_index);
  if (!ok)
    return 0;
done:
  for (int t = 0; t < d->streams; t++)
    if (set >> t & 1) {
      d->s[t].known = n;
      d->s[t].decoded = 1;
    }
  return 1;
}

int
fountain_frame_decoder_decode (FountainFrameDecoder *d,
    FountainDecodeStats *stats)
{
  FountainDecodeStats z = { 0 };
  size_t k = d->symbol_size;
  int moved = 1;
  while (moved) {
    moved = 0;
    z.rounds++;
    for (int i = 0; i < d->streams; i++)
      if (!d->s[i].decoded && solve_streams (d, 1ull << i))
        moved = 1;
    /* PipeBuf -> ExtraBuf: subtract every decoded stream's component; a pipe
     * left with one undecoded stream is an extra repair row for it */
    for (int p = 0; p < d->n_pipes; p++) {
      PipeState *pp = &d->pipes[p];
      if (pp->done)
        continue;
      for (int t = 0; t < d->streams; t++) {
        if (!(pp->remaining >> t & 1) || !d->s[t].decoded)
          continue;
        fountain_encode_repair (d->n, k, d->s[t].data,
            fountain_pipe_component_seed (pp->seed, t), d->part);
        for (size_t b = 0; b < k; b++)
          pp->payload[b] ^= d->part[b];
        pp->remaining &= ~(1ull << t);
      }
      if (pp->remaining == 0) {
        pp->done = 1;
      } else if (__builtin_popcountll (pp->remaining) == 1) {
        int t = __builtin_ctzll (pp->remaining);
        StreamState *st = &d->s[t];
        pp->done = 1;
        if (st->rows < d->max_rows) {
          st->seeds[st->rows] = fountain_pipe_component_seed (pp->seed, t);
          memcpy (st->payloads + (size_t) st->rows * k, pp->payload, k);
          st->rows++;
          st->extras++;
          z.extra_packets++;
          moved = 1;
        }
      }
    }
    int all = 1;
    for (int i = 0; i < d->streams; i++)
      all &= d->s[i].decoded;
    if (all)
      break;
  }
  /* nothing moves: the short streams, solved together with the pipe packets
   * that only they still share */
  uint64_t shortset = 0;
  for (int i = 0; i < d->streams; i++)
    if (!d->s[i].decoded)
      shortset |= 1ull << i;
  if (__builtin_popcountll (shortset) >= 2 && solve_streams (d, shortset))
    for (int i = 0; i < d->streams; i++)
      d->s[i].joint |= (int) (shortset >> i & 1);
  for (int i = 0; i < d->streams; i++) {
    if (!d->s[i].decoded)
      continue;
    z.streams_decoded++;
    if (d->s[i].joint)
      z.streams_joint++;
    else if (d->s[i].extras)
      z.streams_repaired++;
    else
      z.streams_local++;
  }
  if (stats)
    *stats = z;
  return z.streams_decoded;
}

const uint8_t *
fountain_frame_decoder_stream (const FountainFrameDecoder *d, int s)
{
  if (s < 0 || s >= d->streams || !d->s[s].decoded)
    return NULL;
  return d->s[s].data;
}
