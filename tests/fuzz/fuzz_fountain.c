/* fuzz_fountain.c: the receive side of the CSTP cross-stream code
 * (kernels/fountain): the 32-byte packet header parser and the frame
 * decoder's state (source symbols, repair rows, pipe packets, the joint
 * solve) under datagrams from the network.
 *
 * Input: byte 0 sets the decoder's max_redundancy (1 + byte % 8); then
 * chunks (fuzz.h), each one datagram. The first packet that parses sets
 * the decoder's geometry (streams, N, symbol size; at most 1 MiB of
 * frame); a packet of another frame decodes the frame so far and starts
 * the next, as a receiver moving on does. Checks: the parser reads nothing
 * past the datagram, an accepted header obeys every rule and is written
 * back to the same 32 bytes; the decoder's count of decoded streams is the
 * number of streams it hands out and its statistics add up to it; a
 * decoded stream keeps every source symbol that arrived as it arrived. */
#include <string.h>

#include "fountain/fountain.h"
#include "fuzz.h"

#define MAX_FRAME (1u << 20)
#define MAX_SOURCE 4096         /* source packets remembered per frame */

typedef struct {
  int stream;
  uint32_t index;
  const uint8_t *payload;
} Source;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  return 0;
}

static void
decode_frame (FountainFrameDecoder *d, int streams, int n, size_t k,
    const Source *src, int n_src)
{
  FountainDecodeStats st;
  int decoded, handed = 0, s, i;

  memset (&st, 0, sizeof st);
  decoded = fountain_frame_decoder_decode (d, &st);
  for (s = 0; s < streams; s++)
    handed += fountain_frame_decoder_stream (d, s) != NULL;
  FUZZ_CHECK (decoded >= 0 && decoded <= streams && decoded == handed,
      "%d decoded, %d streams handed out of %d", decoded, handed, streams);
  FUZZ_CHECK (st.streams_decoded == decoded, "stats say %d decoded, %d",
      st.streams_decoded, decoded);
  FUZZ_CHECK (st.streams_local + st.streams_repaired + st.streams_joint
      == decoded, "local %d + repaired %d + joint %d != %d decoded",
      st.streams_local, st.streams_repaired, st.streams_joint, decoded);
  for (i = 0; i < n_src; i++) {
    const uint8_t *data = fountain_frame_decoder_stream (d, src[i].stream);
    FUZZ_CHECK ((int) src[i].index < n, "source index %u kept", src[i].index);
    if (data)
      FUZZ_CHECK (memcmp (data + (size_t) src[i].index * k, src[i].payload,
              k) == 0, "stream %d: source symbol %u decoded to other bytes",
          src[i].stream, src[i].index);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  FuzzReader r = { data, size };
  FountainFrameDecoder *d = NULL;
  static Source src[MAX_SOURCE];
  int n_src = 0, streams = 0, n = 0, max_red;
  size_t k = 0;
  uint8_t b0 = 0;
  const uint8_t *chunk;
  size_t len;

  fuzz_byte (&r, &b0);
  max_red = 1 + b0 % 8;
  while (fuzz_chunk (&r, &chunk, &len)) {
    FountainHeader h;
    const uint8_t *payload = NULL;
    uint8_t again[FOUNTAIN_HEADER_SIZE];
    FountainAddResult added;
    /* its own block of exactly its size, so a read past it is caught */
    uint8_t *dgram = malloc (len ? len : 1);
    int err;

    memcpy (dgram, chunk, len);
    err = fountain_header_parse (dgram, len, &h, &payload);
    FUZZ_CHECK (fountain_error_string (err) != NULL, "error string");
    free (dgram);
    if (err != FOUNTAIN_OK)
      continue;
    payload = chunk + FOUNTAIN_HEADER_SIZE;
    FUZZ_CHECK (h.streams >= 1 && h.streams <= FOUNTAIN_MAX_STREAMS
        && h.stream < h.streams && h.n >= 1 && h.n <= FOUNTAIN_MAX_N
        && h.symbol_size >= 1 && h.kind <= FOUNTAIN_KIND_PIPE
        && len == FOUNTAIN_HEADER_SIZE + (size_t) h.symbol_size,
        "accepted header breaks a rule");
    FUZZ_CHECK (h.kind != FOUNTAIN_KIND_SOURCE || h.index_or_seed < h.n,
        "source index %u of %u", h.index_or_seed, h.n);
    FUZZ_CHECK (fountain_header_write (&h, again, sizeof again)
        == FOUNTAIN_HEADER_SIZE && memcmp (again, chunk,
            FOUNTAIN_HEADER_SIZE) == 0, "written back, the header differs");

    if (!d) {
      if ((size_t) h.streams * h.n * h.symbol_size > MAX_FRAME)
        continue;
      d = fountain_frame_decoder_new (h.streams, h.n, h.symbol_size, max_red);
      FUZZ_CHECK (d != NULL, "no decoder for a geometry the parser took");
      streams = h.streams;
      n = h.n;
      k = h.symbol_size;
    }
    added = fountain_frame_decoder_add (d, &h, payload);
    if (added == FOUNTAIN_ADD_FOREIGN && h.streams == streams && h.n == n
        && h.symbol_size == k) {
      /* the next frame: finish this one, start over */
      decode_frame (d, streams, n, k, src, n_src);
      fountain_frame_decoder_reset (d, h.frame_id);
      n_src = 0;
      added = fountain_frame_decoder_add (d, &h, payload);
      FUZZ_CHECK (added == FOUNTAIN_ADD_KEPT, "first packet of a frame not "
          "kept (%d)", (int) added);
    }
    if (added == FOUNTAIN_ADD_KEPT && h.kind == FOUNTAIN_KIND_SOURCE
        && n_src < MAX_SOURCE)
      src[n_src++] = (Source) { h.stream, h.index_or_seed, payload };
  }
  if (d) {
    decode_frame (d, streams, n, k, src, n_src);
    fountain_frame_decoder_free (d);
  }
  return 0;
}
