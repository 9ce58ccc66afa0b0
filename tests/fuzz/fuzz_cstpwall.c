/* fuzz_cstpwall.c: the display wall's exchange packet (kernels/fountain,
 * fountain_wall_parse): the frame states and reduced pipe packets that the
 * receivers of a wall (cstpsrc with `index` and `peers`) send each other,
 * read from the network before anything else.
 *
 * Input: chunks (fuzz.h), each one datagram, each parsed from a heap block
 * of exactly its size. Checks: the parser reads nothing past the datagram;
 * FOUNTAIN_ERR_MAGIC comes exactly when the first four bytes are not the
 * exchange magic; a refused packet leaves the caller's struct as it was; an
 * accepted one obeys every rule (type, stream count and sender, states
 * known, the geometry of code packets, a mask inside the streams, the
 * length of its type), is written back to the same bytes, and is refused
 * once its last byte is cut off. */
#include <string.h>

#include "fountain/fountain.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  return 0;
}

static void
check_datagram (const uint8_t *dgram, size_t len)
{
  FountainWallPacket p, untouched, cut;
  int err, magic;

  memset (&p, 0xa5, sizeof p);
  untouched = p;
  err = fountain_wall_parse (dgram, len, &p);
  FUZZ_CHECK (fountain_error_string (err) != NULL, "error string of %d", err);
  magic = len >= 4 && ((uint32_t) dgram[0] << 24 | (uint32_t) dgram[1] << 16
      | (uint32_t) dgram[2] << 8 | dgram[3]) == FOUNTAIN_WALL_MAGIC;
  FUZZ_CHECK ((err == FOUNTAIN_ERR_MAGIC) == (len >= 4 && !magic),
      "error %d for a datagram of %zu bytes, magic %d", err, len, magic);
  if (err != FOUNTAIN_OK) {
    FUZZ_CHECK (memcmp (&p, &untouched, sizeof p) == 0,
        "a refused packet (%d) changed the caller's struct", err);
    return;
  }

  FUZZ_CHECK (p.streams >= 1 && p.streams <= FOUNTAIN_MAX_STREAMS
      && p.from < p.streams, "accepted: from %u of %u", p.from, p.streams);
  if (p.type == FOUNTAIN_WALL_STATUS) {
    FUZZ_CHECK (p.count >= 1 && p.count <= FOUNTAIN_WALL_MAX_STATES
        && len == FOUNTAIN_WALL_STATUS_SIZE + (size_t) p.count
        && p.states == dgram + FOUNTAIN_WALL_STATUS_SIZE,
        "accepted status: %zu bytes, count %u", len, p.count);
    for (int i = 0; i < p.count; i++)
      FUZZ_CHECK (p.states[i] <= FOUNTAIN_WALL_DROPPED,
          "accepted status: state %u", p.states[i]);
  } else {
    uint64_t all = p.streams == 64 ? ~0ull : (1ull << p.streams) - 1;
    FUZZ_CHECK (p.type == FOUNTAIN_WALL_PIPE, "accepted type %u", p.type);
    FUZZ_CHECK (len == FOUNTAIN_WALL_PIPE_SIZE + (size_t) p.symbol_size
        && p.payload == dgram + FOUNTAIN_WALL_PIPE_SIZE,
        "accepted pipe: %zu bytes, symbol size %u", len, p.symbol_size);
    FUZZ_CHECK (p.n != 0 && fountain_subframe_symbols (p.frame_len,
            p.streams, p.symbol_size) == p.n, "accepted pipe: n %u", p.n);
    FUZZ_CHECK (p.mask != 0 && (p.mask & ~all) == 0,
        "accepted pipe: mask 0x%llx", (unsigned long long) p.mask);
  }

  {
    /* written back: the same bytes; one byte short of room: refused */
    uint8_t *again = malloc (len);
    FUZZ_CHECK (fountain_wall_write (&p, again, len) == (int) len
        && memcmp (again, dgram, len) == 0,
        "written back, the exchange packet differs");
    FUZZ_CHECK (fountain_wall_write (&p, again, len - 1) < 0,
        "written into %zu bytes of %zu", len - 1, len);
    free (again);
  }
  {
    /* cut by its last byte: refused */
    uint8_t *shorter = malloc (len - 1);
    memcpy (shorter, dgram, len - 1);
    err = fountain_wall_parse (shorter, len - 1, &cut);
    FUZZ_CHECK (err == FOUNTAIN_ERR_LENGTH || err == FOUNTAIN_ERR_SHORT,
        "an exchange packet cut by a byte gave %d", err);
    free (shorter);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_each_datagram (data, size, check_datagram);
  return 0;
}
