/* fountain.h: the cross-stream code of Shaofeng Liu, Jürgen P. Schulze,
 * Thomas A. DeFanti, "CSTP: A parallel data transfer protocol using
 * cross-stream coding" (2011), on a systematic GF(2^8) code.
 *
 * Pure C11, no GLib. A frame travels over S streams; stream s carries
 * sub-frame s, N source symbols of `symbol_size` bytes. Each stream sends
 * its N source packets as they are (systematic), repair packets (a seeded
 * GF(2^8) combination of its N symbols, kernels/rlnc's seed generator) and
 * pipe packets: the sum of one repair combination from each of 2 or S
 * streams, so that streams which decode can lend packets to those which do
 * not (the paper's PipeBuf / ExtraBuf exchange, section 5.2). The wire format
 * is docs/elements/cstp-code.md. */
#ifndef FOUNTAIN_H
#define FOUNTAIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FOUNTAIN_MAGIC 0x43535450u      /* "CSTP" */
#define FOUNTAIN_VERSION 1
#define FOUNTAIN_HEADER_SIZE 32
#define FOUNTAIN_MAX_STREAMS 64         /* the pipe's stream mask is 64 bits */
#define FOUNTAIN_MAX_N 16384            /* source symbols per sub-frame */
#define FOUNTAIN_MAX_SYMBOL 65535

typedef enum {
  FOUNTAIN_KIND_SOURCE = 0,     /* source symbol `index` of its stream */
  FOUNTAIN_KIND_REPAIR = 1,     /* combination of its stream's N symbols */
  FOUNTAIN_KIND_PIPE = 2        /* sum of repair combinations of 2..S streams */
} FountainKind;

/* One packet's header, host byte order. Every stream of a frame has the same
 * geometry: the frame's `frame_len` bytes are cut into S * N symbols of
 * symbol_size bytes (the last zero-padded), N = ceil (symbols / S), and
 * stream s carries symbols [s * N, (s + 1) * N). */
typedef struct {
  uint8_t kind;                 /* FountainKind */
  uint8_t streams;              /* S, 1..FOUNTAIN_MAX_STREAMS */
  uint8_t stream;               /* the stream this packet travels on, < S */
  uint32_t frame_id;
  uint16_t n;                   /* N: source symbols per sub-frame */
  uint16_t symbol_size;         /* payload bytes, 1..65535 */
  uint32_t frame_len;           /* bytes of the whole frame */
  uint32_t index_or_seed;       /* source: index < N; repair, pipe: seed */
  uint64_t pipe_mask;           /* pipe: streams covered (own one included) */
} FountainHeader;

typedef enum {
  FOUNTAIN_OK = 0,
  FOUNTAIN_ERR_SHORT = -1,      /* fewer bytes than a header */
  FOUNTAIN_ERR_MAGIC = -2,
  FOUNTAIN_ERR_VERSION = -3,
  FOUNTAIN_ERR_KIND = -4,
  FOUNTAIN_ERR_STREAMS = -5,    /* S = 0, S > 64, or stream >= S */
  FOUNTAIN_ERR_GEOMETRY = -6,   /* N, symbol size and frame length disagree */
  FOUNTAIN_ERR_INDEX = -7,      /* source index >= N */
  FOUNTAIN_ERR_PIPE = -8,       /* bad stream mask for the kind */
  FOUNTAIN_ERR_LENGTH = -9      /* payload is not symbol_size bytes */
} FountainError;

const char *fountain_error_string (int err);

/* N for a frame of frame_len bytes over S streams (0 when it is out of range:
 * frame_len 0, or N above FOUNTAIN_MAX_N). */
uint32_t fountain_subframe_symbols (uint32_t frame_len, int streams,
    uint16_t symbol_size);

/* Parses a datagram of len bytes: validates every header field and that the
 * payload is exactly symbol_size bytes. On FOUNTAIN_OK fills h and *payload
 * (pointing into buf); returns a FountainError otherwise. Reads no byte at or
 * past buf + len. */
int fountain_header_parse (const uint8_t *buf, size_t len, FountainHeader *h,
    const uint8_t **payload);
/* Writes the 32 header bytes; returns FOUNTAIN_HEADER_SIZE, or a
 * FountainError when h would not parse (or cap is too small). */
int fountain_header_write (const FountainHeader *h, uint8_t *buf, size_t cap);

/* ---- encoding ------------------------------------------------------------ */

/* The seed of stream t's repair combination inside the pipe packet of
 * pipe_seed (a receiver regenerates it the same way). */
uint32_t fountain_pipe_component_seed (uint32_t pipe_seed, int t);

/* out (symbol_size bytes) = sum_i c_i * sub[i], c the N coefficients of seed;
 * sub is the sub-frame, n * symbol_size contiguous bytes. */
void fountain_encode_repair (int n, size_t symbol_size, const uint8_t *sub,
    uint32_t seed, uint8_t *out);
/* out = sum over the streams t of mask of fountain_encode_repair (subs[t],
 * fountain_pipe_component_seed (pipe_seed, t)). */
void fountain_encode_pipe (int n, size_t symbol_size,
    const uint8_t *const *subs, uint64_t mask, uint32_t pipe_seed,
    uint8_t *out);

/* The stream-degree distribution D_s(x) = p (0.5 x^S + 0.5 x^2) + (1-p) x:
 * the stream mask of redundancy packet r of `stream` in frame frame_id, a
 * deterministic draw (seeded by frame, stream and r). 1 << stream for a
 * repair packet; for a pipe packet, own stream plus one other (degree 2) or
 * all S (degree S). pipe_width in [0, 1]. */
uint64_t fountain_stream_degree_draw (double pipe_width, int streams,
    int stream, uint32_t frame_id, uint32_t r);
/* The same with the share of degree-S pipes as a parameter:
 * D_s(x) = p (a x^S + (1 - a) x^2) + (1-p) x; a = 0.5 is the above, a = 1
 * the paper's Table 1 (every pipe covers all S streams), a = 0 pairs only.
 * The same draws, so a = 0.5 gives fountain_stream_degree_draw's masks. */
uint64_t fountain_stream_degree_draw_shared (double pipe_width,
    double all_share, int streams, int stream, uint32_t frame_id, uint32_t r);

/* outs[j] = fountain_encode_repair (..., seeds[j], outs[j]) for every j <
 * count, in one pass over the sub-frame through ISA-L's SIMD GF(2^8)
 * product (fountain_isal.c): what a sender needs for a frame's repairs and
 * the pipe components of each stream. 0, or -1 when out of memory. */
int fountain_encode_repairs (int n, size_t symbol_size, const uint8_t *sub,
    int count, const uint32_t *seeds, uint8_t *const *outs);
/* out[j] = sum_i coefs[j * sources + i] * src[i] over len bytes, j < outputs
 * (ISA-L); the building block of the above and of the decoder. */
int fountain_gf_product (size_t len, int sources, int outputs,
    const uint8_t *coefs, const uint8_t *const *src, uint8_t *const *out);

/* ---- frame packets: each frame's length, timestamps and caps ------------- */

/* One per frame on every stream, before the frame's code packets, so that
 * the receiver can give each decoded frame its timestamps and caps (any
 * copy of the S will do). docs/elements/cstp-code.md, section 6. */
#define FOUNTAIN_META_MAGIC 0x4353544Du /* "CSTM" */
#define FOUNTAIN_META_SIZE 36           /* before the caps string */
#define FOUNTAIN_META_NONE UINT64_MAX   /* no timestamp / no duration */
#define FOUNTAIN_META_FLAG_DELTA 0x01   /* not a key frame */
#define FOUNTAIN_META_FLAG_HEADER 0x02  /* codec header */
#define FOUNTAIN_META_FLAGS 0x03

typedef struct {
  uint8_t streams;              /* S, 1..FOUNTAIN_MAX_STREAMS */
  uint8_t stream;               /* < S */
  uint8_t flags;                /* FOUNTAIN_META_FLAG_* */
  uint32_t frame_id;
  uint32_t frame_len;           /* at least 1 */
  uint64_t pts, duration;       /* nanoseconds, or FOUNTAIN_META_NONE */
  uint16_t caps_len;            /* bytes of caps (no terminating zero) */
  const char *caps;             /* parse: points into the datagram */
} FountainMeta;

/* Parses a frame packet of len bytes (FOUNTAIN_ERR_MAGIC when it is not
 * one, so a receiver tries fountain_header_parse next); FOUNTAIN_OK fills m.
 * Rejects: short, version, S / stream out of range, frame_len 0, unknown
 * flags, reserved bytes not 0, a caps string with a zero byte, and a length
 * other than FOUNTAIN_META_SIZE + caps_len (FOUNTAIN_ERR_LENGTH). Reads no
 * byte at or past buf + len. */
int fountain_meta_parse (const uint8_t *buf, size_t len, FountainMeta *m);
/* Writes the packet (caps included); returns its length, or a FountainError
 * when m would not parse or cap is too small. */
int fountain_meta_write (const FountainMeta *m, uint8_t *buf, size_t cap);

/* ---- the display wall's exchange between receivers ------------------------ */

/* With one receiver per stream (a display wall), the receivers exchange the
 * state of every frame (a barrier: a frame leaves on all of them or on none)
 * and pipe packets reduced by the streams already decoded (the paper's
 * PipeBuf to ExtraBuf exchange, section 5.2) over UDP.
 * docs/elements/cstp-code.md, section 7. */
#define FOUNTAIN_WALL_MAGIC 0x43535457u /* "CSTW" */
#define FOUNTAIN_WALL_STATUS_SIZE 16    /* before the frame states */
#define FOUNTAIN_WALL_PIPE_SIZE 32      /* before the payload */
#define FOUNTAIN_WALL_MAX_STATES 64

typedef enum {
  FOUNTAIN_WALL_STATUS = 1,     /* the sender's state of a run of frames */
  FOUNTAIN_WALL_PIPE = 2        /* a pipe packet, partly reduced */
} FountainWallType;

typedef enum {
  FOUNTAIN_WALL_PENDING = 0,    /* not tried yet (or nothing of it here) */
  FOUNTAIN_WALL_SHORT = 1,      /* tried: its tile lacks symbols */
  FOUNTAIN_WALL_DECODED = 2,    /* its tile decoded: ready to leave */
  FOUNTAIN_WALL_DROPPED = 3     /* given up: nobody outputs the frame */
} FountainWallState;

typedef struct {
  uint8_t type;                 /* FountainWallType */
  uint8_t streams;              /* S, 1..FOUNTAIN_MAX_STREAMS */
  uint8_t from;                 /* the sending receiver's stream, < S */
  uint32_t frame_id;            /* status: the first frame; pipe: its frame */
  /* status */
  uint8_t count;                /* frames, 1..FOUNTAIN_WALL_MAX_STATES */
  const uint8_t *states;        /* count FountainWallState bytes */
  /* pipe: geometry as in the code packets */
  uint16_t n, symbol_size;
  uint32_t frame_len;
  uint32_t seed;                /* the pipe packet's seed */
  uint64_t mask;                /* streams whose part is still in payload */
  const uint8_t *payload;       /* symbol_size bytes */
} FountainWallPacket;

/* Parses an exchange datagram of len bytes (FOUNTAIN_ERR_MAGIC when it is
 * not one). Rejects: short, version, unknown type or state, reserved bytes
 * not 0, S / from out of range, count 0 or above the maximum, geometry as
 * for code packets, a mask that is empty or names a stream >= S, and a
 * length other than the type's (FOUNTAIN_ERR_LENGTH). On FOUNTAIN_OK fills
 * p (states and payload point into buf); reads no byte past buf + len. */
int fountain_wall_parse (const uint8_t *buf, size_t len,
    FountainWallPacket *p);
/* Writes the packet; returns its length, or a FountainError when p would
 * not parse or cap is too small. */
int fountain_wall_write (const FountainWallPacket *p, uint8_t *buf,
    size_t cap);

/* ---- the sending cluster's exchange -------------------------------------- */

/* With one sender per stream (cstpsink's `index` and `peers`: the sending
 * side of the paper's multi-host model), sender s has only sub-frame s, and
 * a pipe packet of stream s needs the parts of the other streams it adds.
 * The senders exchange those parts, and a synchroniser (sender 0, the
 * master) releases each frame once every sender has it: every sender sends
 * "ready" to the master, which answers "release" to all.
 * docs/elements/cstp-code.md, section 8. */
#define FOUNTAIN_CLUSTER_MAGIC 0x43535458u      /* "CSTX" */
#define FOUNTAIN_CLUSTER_PART_SIZE 32           /* before the payload */
#define FOUNTAIN_CLUSTER_READY_SIZE 24
#define FOUNTAIN_CLUSTER_RELEASE_SIZE 28

typedef enum {
  FOUNTAIN_CLUSTER_PART = 1,    /* one stream's part of another's pipe */
  FOUNTAIN_CLUSTER_READY = 2,   /* a sender has the frame: to the master */
  FOUNTAIN_CLUSTER_RELEASE = 3  /* the master: the frame may leave */
} FountainClusterType;

typedef struct {
  uint8_t type;                 /* FountainClusterType */
  uint8_t streams;              /* S, 1..FOUNTAIN_MAX_STREAMS */
  uint8_t from;                 /* the sending sender's stream, < S */
  uint32_t frame_id;
  /* the frame's geometry, as in its code packets (every type) */
  uint16_t n, symbol_size;
  uint32_t frame_len;
  /* part: the pipe packet it belongs to */
  uint8_t stream;               /* the pipe's stream (the addressee), < S,
                                 * not from */
  uint16_t index;               /* the pipe's redundancy packet number */
  uint32_t seed;                /* the pipe packet's seed */
  const uint8_t *payload;       /* symbol_size bytes: from's part */
  /* release: the senders whose part each pipe of the frame carries */
  uint64_t senders;             /* at least one bit, none at or above S */
} FountainClusterPacket;

/* Parses an exchange datagram of len bytes (FOUNTAIN_ERR_MAGIC when it is
 * not one). Rejects: short, version, unknown type, reserved bytes not 0, S
 * / from / stream out of range, a part addressed to its own sender, the
 * geometry of code packets, an empty senders mask or one naming a stream
 * >= S, and a length other than the type's (FOUNTAIN_ERR_LENGTH). On
 * FOUNTAIN_OK fills p (payload points into buf); reads no byte past buf +
 * len. */
int fountain_cluster_parse (const uint8_t *buf, size_t len,
    FountainClusterPacket *p);
/* Writes the packet; returns its length, or a FountainError when p would
 * not parse or cap is too small. */
int fountain_cluster_write (const FountainClusterPacket *p, uint8_t *buf,
    size_t cap);

/* ---- cross-stream decoding (paper section 5.2) --------------------------- */

typedef struct FountainFrameDecoder FountainFrameDecoder;

typedef enum {
  FOUNTAIN_ADD_KEPT = 0,
  FOUNTAIN_ADD_DUPLICATE = 1,   /* source symbol already known: dropped */
  FOUNTAIN_ADD_FOREIGN = 2,     /* other frame or other geometry: dropped */
  FOUNTAIN_ADD_FULL = 3         /* no room (or no memory) left for repair /
                                 * pipe: dropped */
} FountainAddResult;

typedef struct {
  int streams_decoded;          /* streams with every source symbol */
  int streams_local;            /* decoded from their own packets alone */
  int streams_repaired;         /* decoded only once pipe packets helped */
  int streams_joint;            /* decoded only by solving the short streams
                                 * together (their own repairs and the pipe
                                 * packets they share) */
  int extra_packets;            /* pipe packets turned into extra repairs */
  int rounds;                   /* passes until done or nothing moved */
} FountainDecodeStats;

/* A decoder for one frame; max_redundancy bounds the repair packets each
 * stream keeps and the pipe packets held (each). NULL on bad geometry. */
FountainFrameDecoder *fountain_frame_decoder_new (int streams, int n,
    size_t symbol_size, int max_redundancy);
void fountain_frame_decoder_free (FountainFrameDecoder *d);
/* Forgets everything; next packets may belong to frame frame_id. */
void fountain_frame_decoder_reset (FountainFrameDecoder *d, uint32_t frame_id);
/* h and payload as fountain_header_parse gave them. */
FountainAddResult fountain_frame_decoder_add (FountainFrameDecoder *d,
    const FountainHeader *h, const uint8_t *payload);
/* Decodes what it can: every stream from its own packets, then pipe packets
 * reduced by the decoded streams to extra repairs (PipeBuf -> ExtraBuf) for
 * the one stream left in each, until every stream decodes or a pass changes
 * nothing; then the streams still short are solved together, their own
 * repairs and the pipe packets left between them as one GF(2^8) system.
 * Returns the number of decoded streams. */
int fountain_frame_decoder_decode (FountainFrameDecoder *d,
    FountainDecodeStats *stats);
/* Stream s's N * symbol_size bytes once it decoded, else NULL. */
const uint8_t *fountain_frame_decoder_stream (const FountainFrameDecoder *d,
    int s);

#ifdef __cplusplus
}
#endif

#endif /* FOUNTAIN_H */
