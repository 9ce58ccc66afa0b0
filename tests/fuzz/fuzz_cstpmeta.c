/* fuzz_cstpmeta.c: the CSTP frame packet (kernels/fountain,
 * fountain_meta_parse): the packet cstpsink sends on every stream before a
 * frame's code packets, with the frame's length, timestamps, flags and caps
 * string, and that cstpsrc reads from the network before anything else.
 *
 * Input: chunks (fuzz.h), each one datagram, each parsed from a heap block
 * of exactly its size. Checks: the parser reads nothing past the datagram;
 * FOUNTAIN_ERR_MAGIC (on which cstpsrc tries the code packet header next)
 * comes exactly when the first four bytes are not the frame packet's magic;
 * a refused packet leaves the caller's struct as it was; an accepted one
 * obeys every rule (stream count and index, frame length, known flags only,
 * a caps string without a zero byte that fills the datagram to its end),
 * is written back to the same bytes, and is refused once its last byte is
 * cut off. */
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
  FountainMeta m, untouched, cut;
  int err, magic;

  memset (&m, 0xa5, sizeof m);
  untouched = m;
  err = fountain_meta_parse (dgram, len, &m);
  FUZZ_CHECK (fountain_error_string (err) != NULL, "error string of %d", err);
  magic = len >= 4 && ((uint32_t) dgram[0] << 24 | (uint32_t) dgram[1] << 16
      | (uint32_t) dgram[2] << 8 | dgram[3]) == FOUNTAIN_META_MAGIC;
  FUZZ_CHECK ((err == FOUNTAIN_ERR_MAGIC) == (len >= 4 && !magic),
      "error %d for a datagram of %zu bytes, magic %d", err, len, magic);
  if (err != FOUNTAIN_OK) {
    FUZZ_CHECK (memcmp (&m, &untouched, sizeof m) == 0,
        "a refused packet (%d) changed the caller's struct", err);
    return;
  }

  FUZZ_CHECK (magic && len == FOUNTAIN_META_SIZE + (size_t) m.caps_len,
      "accepted: %zu bytes, caps_len %u", len, m.caps_len);
  FUZZ_CHECK (m.streams >= 1 && m.streams <= FOUNTAIN_MAX_STREAMS
      && m.stream < m.streams, "accepted: stream %u of %u", m.stream,
      m.streams);
  FUZZ_CHECK (m.frame_len >= 1, "accepted: frame length 0");
  FUZZ_CHECK ((m.flags & ~FOUNTAIN_META_FLAGS) == 0, "accepted: flags 0x%x",
      m.flags);
  FUZZ_CHECK (m.caps == (const char *) dgram + FOUNTAIN_META_SIZE
      && memchr (m.caps, 0, m.caps_len) == NULL,
      "accepted: caps string not the rest of the datagram, or with a zero");

  {
    /* written back: the same bytes; one byte short of room: refused */
    uint8_t *again = malloc (len);
    FUZZ_CHECK (fountain_meta_write (&m, again, len) == (int) len
        && memcmp (again, dgram, len) == 0,
        "written back, the frame packet differs");
    FUZZ_CHECK (fountain_meta_write (&m, again, len - 1) < 0,
        "written into %zu bytes of %zu", len - 1, len);
    free (again);
  }
  {
    /* a datagram cut by its last byte is refused (the caps string's
     * length no longer matches, or the fixed part is short) */
    uint8_t *shorter = malloc (len - 1);
    memcpy (shorter, dgram, len - 1);
    err = fountain_meta_parse (shorter, len - 1, &cut);
    FUZZ_CHECK (err == FOUNTAIN_ERR_LENGTH || err == FOUNTAIN_ERR_SHORT,
        "a frame packet cut by a byte gave %d", err);
    free (shorter);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_each_datagram (data, size, check_datagram);
  return 0;
}
