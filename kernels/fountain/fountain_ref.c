/* fountain_ref.c: scalar reference of the cross-stream code (fountain.h):
 * header parse/write, repair and pipe encoding, and the frame decoder of
 * Liu, Schulze, DeFanti's CSTP (2011), section 5.2. */
#include "fountain/fountain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gf256/gf256.h"
#include "fountain/fountain_simd.h"
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
gf_mul_tab (uint8_t a, uint8_t b)
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

/* ---- frame packets ------------------------------------------------------- */

static uint64_t
get_be64 (const uint8_t *p)
{
  return (uint64_t) get_be32 (p) << 32 | get_be32 (p + 4);
}

static void
put_be64 (uint8_t *p, uint64_t v)
{
  put_be32 (p, (uint32_t) (v >> 32));
  put_be32 (p + 4, (uint32_t) v);
}

static int
meta_validate (const FountainMeta *m)
{
  if (m->streams < 1 || m->streams > FOUNTAIN_MAX_STREAMS
      || m->stream >= m->streams)
    return FOUNTAIN_ERR_STREAMS;
  if (m->frame_len == 0)
    return FOUNTAIN_ERR_GEOMETRY;
  if (m->flags & ~FOUNTAIN_META_FLAGS)
    return FOUNTAIN_ERR_KIND;
  if (m->caps_len && (m->caps == NULL
          || memchr (m->caps, 0, m->caps_len) != NULL))
    return FOUNTAIN_ERR_LENGTH;
  return FOUNTAIN_OK;
}

int
fountain_meta_parse (const uint8_t *buf, size_t len, FountainMeta *m)
{
  if (buf == NULL || len < 4)
    return FOUNTAIN_ERR_SHORT;
  if (get_be32 (buf) != FOUNTAIN_META_MAGIC)
    return FOUNTAIN_ERR_MAGIC;
  if (len < FOUNTAIN_META_SIZE)
    return FOUNTAIN_ERR_SHORT;
  if (buf[4] != FOUNTAIN_VERSION)
    return FOUNTAIN_ERR_VERSION;
  FountainMeta t;
  t.streams = buf[5];
  t.stream = buf[6];
  t.flags = buf[7];
  t.frame_id = get_be32 (buf + 8);
  t.frame_len = get_be32 (buf + 12);
  t.pts = get_be64 (buf + 16);
  t.duration = get_be64 (buf + 24);
  t.caps_len = (uint16_t) (buf[32] << 8 | buf[33]);
  if (buf[34] != 0 || buf[35] != 0)
    return FOUNTAIN_ERR_KIND;
  if (len - FOUNTAIN_META_SIZE != t.caps_len)
    return FOUNTAIN_ERR_LENGTH;
  t.caps = (const char *) buf + FOUNTAIN_META_SIZE;
  int err = meta_validate (&t);
  if (err != FOUNTAIN_OK)
    return err;
  *m = t;
  return FOUNTAIN_OK;
}

int
fountain_meta_write (const FountainMeta *m, uint8_t *buf, size_t cap)
{
  int err = meta_validate (m);
  if (err != FOUNTAIN_OK)
    return err;
  if (cap < (size_t) FOUNTAIN_META_SIZE + m->caps_len)
    return FOUNTAIN_ERR_SHORT;
  put_be32 (buf, FOUNTAIN_META_MAGIC);
  buf[4] = FOUNTAIN_VERSION;
  buf[5] = m->streams;
  buf[6] = m->stream;
  buf[7] = m->flags;
  put_be32 (buf + 8, m->frame_id);
  put_be32 (buf + 12, m->frame_len);
  put_be64 (buf + 16, m->pts);
  put_be64 (buf + 24, m->duration);
  buf[32] = (uint8_t) (m->caps_len >> 8);
  buf[33] = (uint8_t) m->caps_len;
  buf[34] = buf[35] = 0;
  if (m->caps_len)
    memcpy (buf + FOUNTAIN_META_SIZE, m->caps, m->caps_len);
  return FOUNTAIN_META_SIZE + m->caps_len;
}

/* ---- the display wall's exchange ------------------------------------------ */

/* Every rule but the datagram's length, shared by parse and write. */
static int
wall_validate (const FountainWallPacket *p)
{
  if (p->type != FOUNTAIN_WALL_STATUS && p->type != FOUNTAIN_WALL_PIPE)
    return FOUNTAIN_ERR_KIND;
  if (p->streams < 1 || p->streams > FOUNTAIN_MAX_STREAMS
      || p->from >= p->streams)
    return FOUNTAIN_ERR_STREAMS;
  if (p->type == FOUNTAIN_WALL_STATUS) {
    if (p->count < 1 || p->count > FOUNTAIN_WALL_MAX_STATES)
      return FOUNTAIN_ERR_LENGTH;
    for (int i = 0; i < p->count; i++)
      if (p->states[i] > FOUNTAIN_WALL_DROPPED)
        return FOUNTAIN_ERR_KIND;
    return FOUNTAIN_OK;
  }
  if (p->n == 0 || p->symbol_size == 0
      || fountain_subframe_symbols (p->frame_len, p->streams,
          p->symbol_size) != p->n)
    return FOUNTAIN_ERR_GEOMETRY;
  uint64_t all = p->streams == 64 ? ~0ull : (1ull << p->streams) - 1;
  if (p->mask == 0 || (p->mask & ~all) != 0)
    return FOUNTAIN_ERR_PIPE;
  return FOUNTAIN_OK;
}

int
fountain_wall_parse (const uint8_t *buf, size_t len, FountainWallPacket *p)
{
  if (buf == NULL || len < 4)
    return FOUNTAIN_ERR_SHORT;
  if (get_be32 (buf) != FOUNTAIN_WALL_MAGIC)
    return FOUNTAIN_ERR_MAGIC;
  if (len < FOUNTAIN_WALL_STATUS_SIZE)
    return FOUNTAIN_ERR_SHORT;
  if (buf[4] != FOUNTAIN_VERSION)
    return FOUNTAIN_ERR_VERSION;
  FountainWallPacket t;
  memset (&t, 0, sizeof t);
  t.type = buf[5];
  t.streams = buf[6];
  t.from = buf[7];
  t.frame_id = get_be32 (buf + 8);
  if (t.type == FOUNTAIN_WALL_STATUS) {
    if (buf[13] != 0 || buf[14] != 0 || buf[15] != 0)
      return FOUNTAIN_ERR_KIND;
    t.count = buf[12];
    if (len != (size_t) FOUNTAIN_WALL_STATUS_SIZE + t.count)
      return FOUNTAIN_ERR_LENGTH;
    t.states = buf + FOUNTAIN_WALL_STATUS_SIZE;
  } else if (t.type == FOUNTAIN_WALL_PIPE) {
    if (len < FOUNTAIN_WALL_PIPE_SIZE)
      return FOUNTAIN_ERR_SHORT;
    t.n = (uint16_t) (buf[12] << 8 | buf[13]);
    t.symbol_size = (uint16_t) (buf[14] << 8 | buf[15]);
    t.frame_len = get_be32 (buf + 16);
    t.seed = get_be32 (buf + 20);
    t.mask = get_be64 (buf + 24);
    if (len != (size_t) FOUNTAIN_WALL_PIPE_SIZE + t.symbol_size)
      return FOUNTAIN_ERR_LENGTH;
    t.payload = buf + FOUNTAIN_WALL_PIPE_SIZE;
  }
  int err = wall_validate (&t);
  if (err != FOUNTAIN_OK)
    return err;
  *p = t;
  return FOUNTAIN_OK;
}

int
fountain_wall_write (const FountainWallPacket *p, uint8_t *buf, size_t cap)
{
  int err = wall_validate (p);
  if (err != FOUNTAIN_OK)
    return err;
  size_t len = p->type == FOUNTAIN_WALL_STATUS
      ? (size_t) FOUNTAIN_WALL_STATUS_SIZE + p->count
      : (size_t) FOUNTAIN_WALL_PIPE_SIZE + p->symbol_size;
  if (cap < len)
    return FOUNTAIN_ERR_SHORT;
  put_be32 (buf, FOUNTAIN_WALL_MAGIC);
  buf[4] = FOUNTAIN_VERSION;
  buf[5] = p->type;
  buf[6] = p->streams;
  buf[7] = p->from;
  put_be32 (buf + 8, p->frame_id);
  if (p->type == FOUNTAIN_WALL_STATUS) {
    buf[12] = p->count;
    buf[13] = buf[14] = buf[15] = 0;
    memcpy (buf + FOUNTAIN_WALL_STATUS_SIZE, p->states, p->count);
  } else {
    buf[12] = (uint8_t) (p->n >> 8);
    buf[13] = (uint8_t) p->n;
    buf[14] = (uint8_t) (p->symbol_size >> 8);
    buf[15] = (uint8_t) p->symbol_size;
    put_be32 (buf + 16, p->frame_len);
    put_be32 (buf + 20, p->seed);
    put_be64 (buf + 24, p->mask);
    memcpy (buf + FOUNTAIN_WALL_PIPE_SIZE, p->payload, p->symbol_size);
  }
  return (int) len;
}

/* ---- the sending cluster's exchange --------------------------------------- */

/* Every rule but the datagram's length, shared by parse and write. */
static int
cluster_validate (const FountainClusterPacket *p)
{
  if (p->type < FOUNTAIN_CLUSTER_PART || p->type > FOUNTAIN_CLUSTER_RELEASE)
    return FOUNTAIN_ERR_KIND;
  if (p->streams < 1 || p->streams > FOUNTAIN_MAX_STREAMS
      || p->from >= p->streams)
    return FOUNTAIN_ERR_STREAMS;
  if (p->n == 0 || p->symbol_size == 0
      || fountain_subframe_symbols (p->frame_len, p->streams,
          p->symbol_size) != p->n)
    return FOUNTAIN_ERR_GEOMETRY;
  if (p->type == FOUNTAIN_CLUSTER_PART
      && (p->stream >= p->streams || p->stream == p->from))
    return FOUNTAIN_ERR_STREAMS;
  uint64_t all = p->streams == 64 ? ~0ull : (1ull << p->streams) - 1;
  if (p->type == FOUNTAIN_CLUSTER_RELEASE
      && (p->senders == 0 || (p->senders & ~all) != 0))
    return FOUNTAIN_ERR_PIPE;
  return FOUNTAIN_OK;
}

static size_t
cluster_size (const FountainClusterPacket *p)
{
  return p->type == FOUNTAIN_CLUSTER_PART
      ? (size_t) FOUNTAIN_CLUSTER_PART_SIZE + p->symbol_size
      : p->type == FOUNTAIN_CLUSTER_READY ? FOUNTAIN_CLUSTER_READY_SIZE
      : FOUNTAIN_CLUSTER_RELEASE_SIZE;
}

int
fountain_cluster_parse (const uint8_t *buf, size_t len,
    FountainClusterPacket *p)
{
  if (buf == NULL || len < 4)
    return FOUNTAIN_ERR_SHORT;
  if (get_be32 (buf) != FOUNTAIN_CLUSTER_MAGIC)
    return FOUNTAIN_ERR_MAGIC;
  if (len < FOUNTAIN_CLUSTER_READY_SIZE)
    return FOUNTAIN_ERR_SHORT;
  if (buf[4] != FOUNTAIN_VERSION)
    return FOUNTAIN_ERR_VERSION;
  FountainClusterPacket t;
  memset (&t, 0, sizeof t);
  t.type = buf[5];
  t.streams = buf[6];
  t.from = buf[7];
  t.frame_id = get_be32 (buf + 8);
  t.n = (uint16_t) (buf[12] << 8 | buf[13]);
  t.symbol_size = (uint16_t) (buf[14] << 8 | buf[15]);
  t.frame_len = get_be32 (buf + 16);
  if (t.type == FOUNTAIN_CLUSTER_PART) {
    if (len < FOUNTAIN_CLUSTER_PART_SIZE)
      return FOUNTAIN_ERR_SHORT;
    t.stream = buf[20];
    t.index = (uint16_t) (buf[22] << 8 | buf[23]);
    t.seed = get_be32 (buf + 24);
    if (buf[21] != 0 || get_be32 (buf + 28) != 0)
      return FOUNTAIN_ERR_KIND;
    t.payload = buf + FOUNTAIN_CLUSTER_PART_SIZE;
  } else if (t.type == FOUNTAIN_CLUSTER_READY) {
    if (get_be32 (buf + 20) != 0)
      return FOUNTAIN_ERR_KIND;
  } else if (t.type == FOUNTAIN_CLUSTER_RELEASE) {
    if (len < FOUNTAIN_CLUSTER_RELEASE_SIZE)
      return FOUNTAIN_ERR_SHORT;
    t.senders = get_be64 (buf + 20);
  } else {
    return FOUNTAIN_ERR_KIND;
  }
  if (len != cluster_size (&t))
    return FOUNTAIN_ERR_LENGTH;
  int err = cluster_validate (&t);
  if (err != FOUNTAIN_OK)
    return err;
  *p = t;
  return FOUNTAIN_OK;
}

int
fountain_cluster_write (const FountainClusterPacket *p, uint8_t *buf,
    size_t cap)
{
  int err = cluster_validate (p);
  if (err != FOUNTAIN_OK)
    return err;
  size_t len = cluster_size (p);
  if (cap < len)
    return FOUNTAIN_ERR_SHORT;
  memset (buf, 0, p->type == FOUNTAIN_CLUSTER_PART
      ? FOUNTAIN_CLUSTER_PART_SIZE : len);
  put_be32 (buf, FOUNTAIN_CLUSTER_MAGIC);
  buf[4] = FOUNTAIN_VERSION;
  buf[5] = p->type;
  buf[6] = p->streams;
  buf[7] = p->from;
  put_be32 (buf + 8, p->frame_id);
  buf[12] = (uint8_t) (p->n >> 8);
  buf[13] = (uint8_t) p->n;
  buf[14] = (uint8_t) (p->symbol_size >> 8);
  buf[15] = (uint8_t) p->symbol_size;
  put_be32 (buf + 16, p->frame_len);
  if (p->type == FOUNTAIN_CLUSTER_PART) {
    buf[20] = p->stream;
    buf[22] = (uint8_t) (p->index >> 8);
    buf[23] = (uint8_t) p->index;
    put_be32 (buf + 24, p->seed);
    memcpy (buf + FOUNTAIN_CLUSTER_PART_SIZE, p->payload, p->symbol_size);
  } else if (p->type == FOUNTAIN_CLUSTER_RELEASE) {
    put_be64 (buf + 20, p->senders);
  }
  return (int) len;
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
fountain_stream_degree_draw_shared (double pipe_width, double all_share,
    int streams, int stream, uint32_t frame_id, uint32_t r)
{
  uint64_t own = 1ull << stream;
  if (streams < 2 || draw_unit (frame_id, stream, r, 1) >= pipe_width)
    return own;
  if (streams > 2 && draw_unit (frame_id, stream, r, 2) < all_share)
    return streams == 64 ? ~0ull : (1ull << streams) - 1;
  /* degree 2: own stream and one of the S - 1 others, uniformly */
  int other = (int) (draw_unit (frame_id, stream, r, 3) * (streams - 1));
  if (other >= stream)
    other++;
  return own | 1ull << other;
}

uint64_t
fountain_stream_degree_draw (double pipe_width, int streams, int stream,
    uint32_t frame_id, uint32_t r)
{
  return fountain_stream_degree_draw_shared (pipe_width, 0.5, streams, stream,
      frame_id, r);
}

/* ---- cross-stream decoder ------------------------------------------------ */

typedef struct {
  uint8_t *data;                /* N * symbol_size: the sub-frame */
  uint8_t *have;                /* N flags: source symbol known */
  int known;
  int decoded;
  uint32_t *seeds;              /* repair rows: own repairs, then extras */
  uint8_t *payloads;            /* cap_rows * symbol_size */
  int rows, cap_rows;
  int extras;                   /* rows that came out of pipe packets */
  int joint;                    /* decoded together with other streams */
} StreamState;

typedef struct {
  uint64_t remaining;           /* covered streams not yet subtracted */
  uint32_t seed;
  uint8_t *payload;             /* symbol_size, kept across frames */
  int done;
} PipeState;

struct FountainFrameDecoder {
  int streams, n, max_redundancy, max_rows;
  size_t symbol_size;
  uint32_t frame_id;
  int have_frame;
  StreamState *s;
  PipeState *pipes;             /* the paper's PipeBuf */
  int n_pipes, max_pipes, cap_pipes;
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
  /* Memory follows the packets that came, not the geometry a header
   * announced: the sub-frames are reserved (pages are touched only where
   * symbols land), the repair rows and the pipe packets grow as they
   * arrive. A forged header of a huge frame costs little. */
  d->s = calloc ((size_t) streams, sizeof *d->s);
  int ok = d->s != NULL;
  for (int i = 0; ok && i < streams; i++) {
    StreamState *st = &d->s[i];
    st->data = malloc ((size_t) n * symbol_size);
    st->have = malloc ((size_t) n);
    ok = st->data && st->have;
  }
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
  for (int i = 0; d->pipes && i < d->cap_pipes; i++)
    free (d->pipes[i].payload);
  free (d->s);
  free (d->pipes);
  free (d);
}

void
fountain_frame_decoder_reset (FountainFrameDecoder *d, uint32_t frame_id)
{
  d->frame_id = frame_id;
  d->have_frame = 1;
  for (int i = 0; i < d->streams; i++) {
    StreamState *st = &d->s[i];
    /* data is not cleared: a stream is handed out only once decoded, when
     * every symbol of it was received or solved */
    memset (st->have, 0, (size_t) d->n);
    st->known = st->decoded = st->rows = st->extras = st->joint = 0;
  }
  d->n_pipes = 0;
}

/* Room for one more repair row of st (doubling, up to max_rows): 0, or -1
 * when memory ran out. */
static int
reserve_row (FountainFrameDecoder *d, StreamState *st)
{
  if (st->rows < st->cap_rows)
    return 0;
  int cap = st->cap_rows ? 2 * st->cap_rows : 16;
  if (cap > d->max_rows)
    cap = d->max_rows;
  uint32_t *seeds = realloc (st->seeds, (size_t) cap * sizeof *seeds);
  if (seeds == NULL)
    return -1;
  st->seeds = seeds;
  uint8_t *payloads = realloc (st->payloads, (size_t) cap * d->symbol_size);
  if (payloads == NULL)
    return -1;
  st->payloads = payloads;
  st->cap_rows = cap;
  return 0;
}

/* A slot for one more pipe packet, its payload allocated (both kept for
 * later frames); NULL when memory ran out. */
static PipeState *
reserve_pipe (FountainFrameDecoder *d)
{
  if (d->n_pipes == d->cap_pipes) {
    int cap = d->cap_pipes ? 2 * d->cap_pipes : 16;
    if (cap > d->max_pipes)
      cap = d->max_pipes;
    PipeState *pipes = realloc (d->pipes, (size_t) cap * sizeof *pipes);
    if (pipes == NULL)
      return NULL;
    memset (pipes + d->cap_pipes, 0,
        (size_t) (cap - d->cap_pipes) * sizeof *pipes);
    d->pipes = pipes;
    d->cap_pipes = cap;
  }
  PipeState *pp = &d->pipes[d->n_pipes];
  if (pp->payload == NULL && (pp->payload = malloc (d->symbol_size)) == NULL)
    return NULL;
  return pp;
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
      if (st->rows - st->extras >= d->max_redundancy || st->rows >= d->max_rows
          || reserve_row (d, st) != 0)
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
      PipeState *pp = reserve_pipe (d);
      if (pp == NULL)
        return FOUNTAIN_ADD_FULL;
      d->n_pipes++;
      pp->remaining = h->pipe_mask;
      pp->seed = h->index_or_seed;
      pp->done = 0;
      memcpy (pp->payload, payload, k);
      return FOUNTAIN_ADD_KEPT;
  }
}

static void
xor_into (uint8_t *dst, const uint8_t *src, size_t len)
{
  for (size_t i = 0; i < len; i++)
    dst[i] ^= src[i];
}

/* Stream t's part of `count` rows of the system: row_of[j] gets the
 * coefficients of seeds[j] over t's missing symbols (at column base on),
 * and the share of t's known symbols is subtracted from its rhs, all rows
 * in one pass over the known symbols (fountain_gf_product). */
static int
add_stream_rows (FountainFrameDecoder *d, int t, int count,
    const uint32_t *seeds, const int *row_of, int base, int lost,
    uint8_t *matrix, uint8_t *rhs)
{
  StreamState *st = &d->s[t];
  int n = d->n, known = st->known;
  size_t k = d->symbol_size;
  if (count == 0)
    return 0;
  uint8_t *coefs = malloc ((size_t) n);
  uint8_t *kc = malloc ((size_t) count * (known ? known : 1));
  const uint8_t **src = malloc ((size_t) (known ? known : 1) * sizeof *src);
  uint8_t *share = malloc ((size_t) count * k);
  uint8_t **outs = malloc ((size_t) count * sizeof *outs);
  int ret = -1;
  if (!coefs || !kc || !src || !share || !outs)
    goto out;
  for (int i = 0, m = 0; i < n; i++)
    if (st->have[i])
      src[m++] = st->data + (size_t) i * k;
  for (int j = 0; j < count; j++) {
    rlnc_seed_coefs (seeds[j], n, coefs);
    uint8_t *row = matrix + (size_t) row_of[j] * lost;
    for (int i = 0, m = base, c = 0; i < n; i++) {
      if (st->have[i])
        kc[(size_t) j * known + c++] = coefs[i];
      else
        row[m++] = coefs[i];
    }
    outs[j] = share + (size_t) j * k;
  }
  if (known > 0) {
    if (fountain_gf_product (k, known, count, kc, src, outs) != 0)
      goto out;
    for (int j = 0; j < count; j++)
      xor_into (rhs + (size_t) row_of[j] * k, outs[j], k);
  }
  ret = 0;
out:
  free (coefs);
  free (kc);
  free (src);
  free (share);
  free (outs);
  return ret;
}

/* inv = a^-1 (n x n, a destroyed) by Gauss-Jordan with SIMD row operations;
 * 0 when a is singular. */
static int
invert (uint8_t *a, uint8_t *inv, int n)
{
  memset (inv, 0, (size_t) n * n);
  for (int i = 0; i < n; i++)
    inv[(size_t) i * n + i] = 1;
  for (int c = 0; c < n; c++) {
    int piv = c;
    while (piv < n && a[(size_t) piv * n + c] == 0)
      piv++;
    if (piv == n)
      return 0;
    if (piv != c)
      for (int j = 0; j < n; j++) {
        uint8_t x = a[(size_t) piv * n + j];
        a[(size_t) piv * n + j] = a[(size_t) c * n + j];
        a[(size_t) c * n + j] = x;
        x = inv[(size_t) piv * n + j];
        inv[(size_t) piv * n + j] = inv[(size_t) c * n + j];
        inv[(size_t) c * n + j] = x;
      }
    uint8_t *ar = a + (size_t) c * n, *ir = inv + (size_t) c * n;
    uint8_t s = gf256_inv (ar[c]);
    for (int j = 0; j < n; j++) {
      ar[j] = gf_mul_tab (ar[j], s);
      ir[j] = gf_mul_tab (ir[j], s);
    }
    for (int i = 0; i < n; i++) {
      uint8_t f = a[(size_t) i * n + c];
      if (i == c || f == 0)
        continue;
      fountain_gf_madd (a + (size_t) i * n, ar, f, (size_t) n);
      fountain_gf_madd (inv + (size_t) i * n, ir, f, (size_t) n);
    }
  }
  return 1;
}

enum { SOLVE_SHORT, SOLVE_CAPPED, SOLVE_DONE };

/* Solves the missing symbols of the streams of `set` together: every repair
 * row of those streams, and every pipe packet whose undecoded streams all
 * lie in the set, is an equation over them once the known symbols' share is
 * subtracted. For one stream that is the stream's own decode; for several it
 * is what the XOR-only peeling of the paper cannot do (a pipe of two short
 * streams helps both), and why this code is GF(2^8). The coefficients pick
 * `lost` independent rows and are inverted (lost^2 bytes of work per
 * column); the symbols then come out of one SIMD product of the inverse with
 * those rows' payloads. spare >= 0 takes at most lost + spare of each
 * stream's own rows and shortfall + spare of the pipes; -1 takes all.
 * SOLVE_DONE when every stream of the set decoded; SOLVE_CAPPED when the
 * rows taken were dependent but some were left out; else SOLVE_SHORT. */
static int
solve_rows (FountainFrameDecoder *d, uint64_t set, int spare)
{
  int n = d->n;
  size_t k = d->symbol_size;
  int base[FOUNTAIN_MAX_STREAMS] = { 0 };
  int use[FOUNTAIN_MAX_STREAMS] = { 0 };
  int lost = 0, rows = 0, shortfall = 0, pipes = 0, capped = 0;
  for (int t = 0; t < d->streams; t++) {
    if (!(set >> t & 1))
      continue;
    int lost_t = n - d->s[t].known;
    base[t] = lost;
    lost += lost_t;
    use[t] = d->s[t].rows;
    if (spare >= 0 && use[t] > lost_t + spare) {
      use[t] = lost_t + spare;
      capped = 1;
    }
    shortfall += d->s[t].rows < lost_t ? lost_t - d->s[t].rows : 0;
    rows += use[t];
  }
  if (lost == 0)
    goto done;
  int max_pipes = spare >= 0 ? shortfall + spare : d->n_pipes;
  for (int p = 0; p < d->n_pipes; p++)
    if (!d->pipes[p].done && (d->pipes[p].remaining & ~set) == 0) {
      if (pipes < max_pipes)
        pipes++;
      else
        capped = 1;
    }
  rows += pipes;
  if (rows < lost)
    return SOLVE_SHORT;
  uint8_t *matrix = calloc ((size_t) rows, (size_t) lost);
  uint8_t *work = malloc ((size_t) rows * lost);
  uint8_t *inv = malloc ((size_t) lost * lost);
  uint8_t *rhs = malloc ((size_t) rows * k);
  int *col_stream = malloc ((size_t) lost * sizeof *col_stream);
  int *col_index = malloc ((size_t) lost * sizeof *col_index);
  int *perm = malloc ((size_t) rows * sizeof *perm);
  int *row_of = malloc ((size_t) rows * sizeof *row_of);
  uint32_t *seeds = malloc ((size_t) rows * sizeof *seeds);
  int *pipe_row = malloc ((size_t) (d->n_pipes ? d->n_pipes : 1)
      * sizeof *pipe_row);
  const uint8_t **src = malloc ((size_t) lost * sizeof *src);
  uint8_t **outs = malloc ((size_t) lost * sizeof *outs);
  int ok = matrix && work && inv && rhs && col_stream && col_index && perm
      && row_of && seeds && pipe_row && src && outs;
  /* rows: each stream's own repairs and extras, then the pipes */
  int r = 0;
  for (int t = 0; ok && t < d->streams; t++) {
    if (!(set >> t & 1))
      continue;
    StreamState *st = &d->s[t];
    for (int i = 0, c = base[t]; i < n; i++)
      if (!st->have[i]) {
        col_stream[c] = t;
        col_index[c++] = i;
      }
    for (int j = 0; j < use[t]; j++, r++)
      memcpy (rhs + (size_t) r * k, st->payloads + (size_t) j * k, k);
  }
  for (int p = 0, taken = 0; ok && p < d->n_pipes; p++) {
    PipeState *pp = &d->pipes[p];
    pipe_row[p] = -1;
    if (pp->done || (pp->remaining & ~set) != 0 || taken == pipes)
      continue;
    memcpy (rhs + (size_t) r * k, pp->payload, k);
    pipe_row[p] = r++;
    taken++;
  }
  for (int t = 0, r0 = 0; ok && t < d->streams; t++) {
    if (!(set >> t & 1))
      continue;
    StreamState *st = &d->s[t];
    int count = 0;
    for (int j = 0; j < use[t]; j++, count++) {
      row_of[count] = r0 + j;
      seeds[count] = st->seeds[j];
    }
    r0 += use[t];
    for (int p = 0; p < d->n_pipes; p++)
      if (pipe_row[p] >= 0 && (d->pipes[p].remaining >> t & 1)) {
        row_of[count] = pipe_row[p];
        seeds[count++] = fountain_pipe_component_seed (d->pipes[p].seed, t);
      }
    ok = add_stream_rows (d, t, count, seeds, row_of, base[t], lost, matrix,
        rhs) == 0;
  }
  /* pick `lost` independent rows: forward elimination on a copy */
  if (ok) {
    memcpy (work, matrix, (size_t) rows * lost);
    for (int i = 0; i < rows; i++)
      perm[i] = i;
  }
  for (int c = 0; ok && c < lost; c++) {
    int piv = -1;
    for (int i = c; i < rows; i++)
      if (work[(size_t) i * lost + c]) {
        piv = i;
        break;
      }
    if (piv < 0) {
      ok = 0;                   /* rank below the losses: wait for more */
      break;
    }
    if (piv != c) {
      for (int j = 0; j < lost; j++) {
        uint8_t x = work[(size_t) piv * lost + j];
        work[(size_t) piv * lost + j] = work[(size_t) c * lost + j];
        work[(size_t) c * lost + j] = x;
      }
      int x = perm[piv];
      perm[piv] = perm[c];
      perm[c] = x;
    }
    uint8_t *prow = work + (size_t) c * lost;
    uint8_t pinv = gf256_inv (prow[c]);
    for (int i = c + 1; i < rows; i++) {
      uint8_t *row = work + (size_t) i * lost;
      if (row[c])
        fountain_gf_madd (row + c, prow + c, gf_mul_tab (row[c], pinv),
            (size_t) (lost - c));
    }
  }
  if (ok) {
    /* those rows' coefficients, inverted, times their payloads */
    for (int c = 0; c < lost; c++) {
      memcpy (work + (size_t) c * lost, matrix + (size_t) perm[c] * lost,
          (size_t) lost);
      src[c] = rhs + (size_t) perm[c] * k;
      outs[c] = d->s[col_stream[c]].data + (size_t) col_index[c] * k;
    }
    ok = invert (work, inv, lost)
        && fountain_gf_product (k, lost, lost, inv, src, outs) == 0;
  }
  if (ok)
    for (int c = 0; c < lost; c++)
      d->s[col_stream[c]].have[col_index[c]] = 1;
  free (matrix);
  free (work);
  free (inv);
  free (rhs);
  free (col_stream);
  free (col_index);
  free (perm);
  free (row_of);
  free (seeds);
  free (pipe_row);
  free (src);
  free (outs);
  if (!ok)
    return capped ? SOLVE_CAPPED : SOLVE_SHORT;
done:
  for (int t = 0; t < d->streams; t++)
    if (set >> t & 1) {
      d->s[t].known = n;
      d->s[t].decoded = 1;
    }
  return SOLVE_DONE;
}

/* solve_rows first with one row to spare per stream (and per set, of the
 * pipes), since every row taken costs a pass over the known symbols and
 * most frames receive more redundancy than they lost; with every row only
 * when those were dependent (about 1 in 65,000 over GF(2^8)). */
static int
solve_streams (FountainFrameDecoder *d, uint64_t set)
{
  int r = solve_rows (d, set, 1);
  if (r == SOLVE_CAPPED)
    r = solve_rows (d, set, -1);
  return r == SOLVE_DONE;
}

/* PipeBuf -> ExtraBuf, one decoded stream at a time: its component of every
 * chosen pipe that still covers it, made in one pass and subtracted. A pipe
 * whose streams all decoded is done without work. With `all` 0, only as
 * many pipes are reduced as the undecoded streams lack rows (plus two to
 * spare), counting those that need no reduction: with every pipe covering
 * all streams, a frame that lost little would otherwise recompute every
 * pipe of it. Returns how many pipes that still need work were left. */
static int
subtract_decoded (FountainFrameDecoder *d, int all)
{
  size_t k = d->symbol_size;
  int max = d->n_pipes, left = 0;
  if (max == 0)
    return 0;
  uint64_t decoded = 0;
  int need = 2;
  for (int t = 0; t < d->streams; t++) {
    StreamState *st = &d->s[t];
    if (st->decoded)
      decoded |= 1ull << t;
    else if (st->rows < d->n - st->known)
      need += d->n - st->known - st->rows;
  }
  uint8_t *chosen = calloc ((size_t) max, 1);
  for (int p = 0; chosen && p < d->n_pipes; p++) {
    PipeState *pp = &d->pipes[p];
    if (pp->done)
      continue;
    if ((pp->remaining & ~decoded) == 0)
      pp->done = 1;             /* nothing left in it for anyone */
    else if ((pp->remaining & decoded) == 0)
      need--;                   /* usable as it is */
  }
  for (int p = 0; chosen && p < d->n_pipes; p++) {
    PipeState *pp = &d->pipes[p];
    if (pp->done || (pp->remaining & decoded) == 0)
      continue;
    if (all || need > 0) {
      chosen[p] = 1;
      need--;
    } else {
      left++;
    }
  }
  uint32_t *seeds = malloc ((size_t) max * sizeof *seeds);
  int *which = malloc ((size_t) max * sizeof *which);
  uint8_t *parts = malloc ((size_t) max * k);
  uint8_t **outs = malloc ((size_t) max * sizeof *outs);
  if (!chosen || !seeds || !which || !parts || !outs)
    goto out;
  for (int t = 0; t < d->streams; t++) {
    if (!d->s[t].decoded)
      continue;
    int count = 0;
    for (int p = 0; p < d->n_pipes; p++) {
      PipeState *pp = &d->pipes[p];
      if (!chosen[p] || !(pp->remaining >> t & 1))
        continue;
      seeds[count] = fountain_pipe_component_seed (pp->seed, t);
      outs[count] = parts + (size_t) count * k;
      which[count++] = p;
    }
    if (count == 0 || fountain_encode_repairs (d->n, k, d->s[t].data, count,
            seeds, outs) != 0)
      continue;
    for (int j = 0; j < count; j++) {
      PipeState *pp = &d->pipes[which[j]];
      xor_into (pp->payload, outs[j], k);
      pp->remaining &= ~(1ull << t);
    }
  }
out:
  free (chosen);
  free (seeds);
  free (which);
  free (parts);
  free (outs);
  return left;
}

int
fountain_frame_decoder_decode (FountainFrameDecoder *d,
    FountainDecodeStats *stats)
{
  FountainDecodeStats z = { 0 };
  size_t k = d->symbol_size;
  int moved = 1, all_pipes = 0, left = 0;
  while (moved) {
    moved = 0;
    z.rounds++;
    for (int i = 0; i < d->streams; i++)
      if (!d->s[i].decoded && solve_streams (d, 1ull << i))
        moved = 1;
    /* PipeBuf -> ExtraBuf: a pipe left with one undecoded stream is an
     * extra repair row for it */
    left = subtract_decoded (d, all_pipes);
    for (int p = 0; p < d->n_pipes; p++) {
      PipeState *pp = &d->pipes[p];
      if (pp->done)
        continue;
      if (pp->remaining == 0) {
        pp->done = 1;
      } else if (__builtin_popcountll (pp->remaining) == 1) {
        int t = __builtin_ctzll (pp->remaining);
        StreamState *st = &d->s[t];
        pp->done = 1;
        if (st->rows < d->max_rows && reserve_row (d, st) == 0) {
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
    if (!moved && left > 0 && !all_pipes) {
      /* the pipes reduced so far were not enough: take the others too */
      all_pipes = moved = 1;
      continue;
    }
    if (!moved) {
      /* nothing moves: the short streams, solved together with the pipe
       * packets that only they still share */
      uint64_t shortset = 0;
      for (int i = 0; i < d->streams; i++)
        if (!d->s[i].decoded)
          shortset |= 1ull << i;
      if (__builtin_popcountll (shortset) >= 2 && solve_streams (d, shortset))
        for (int i = 0; i < d->streams; i++)
          d->s[i].joint |= (int) (shortset >> i & 1);
    }
  }
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
