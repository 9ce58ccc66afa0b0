/* fuzz_cstpcluster.c: the sending cluster's exchange packet (kernels/
 * fountain, fountain_cluster_parse): the pipe parts, ready and release
 * messages that the senders of a cluster (cstpsink with `index` and
 * `peers`) send each other, read from the network before anything else.
 *
 * Input: chunks (fuzz.h), each one datagram, each parsed from a heap block
 * of exactly its size. Checks: the parser reads nothing past the datagram;
 * FOUNTAIN_ERR_MAGIC comes exactly when the first four bytes are not the
 * exchange magic; a refused packet leaves the caller's struct as it was; an
 * accepted one obeys every rule (type, stream count, sender and addressee,
 * the geometry of code packets, a senders mask inside the streams, the
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
  FountainClusterPacket p, untouched, cut;
  int err, magic;

  memset (&p, 0xa5, sizeof p);
  untouched = p;
  err = fountain_cluster_parse (dgram, len, &p);
  FUZZ_CHECK (fountain_error_string (err) != NULL, "error string of %d", err);
  magic = len >= 4 && ((uint32_t) dgram[0] << 24 | (uint32_t) dgram[1] << 16
      | (uint32_t) dgram[2] << 8 | dgram[3]) == FOUNTAIN_CLUSTER_MAGIC;
  FUZZ_CHECK ((err == FOUNTAIN_ERR_MAGIC) == (len >= 4 && !magic),
      "error %d for a datagram of %zu bytes, magic %d", err, len, magic);
  if (err != FOUNTAIN_OK) {
    FUZZ_CHECK (memcmp (&p, &untouched, sizeof p) == 0,
        "a refused packet (%d) changed the caller's struct", err);
    return;
  }

  FUZZ_CHECK (p.streams >= 1 && p.streams <= FOUNTAIN_MAX_STREAMS
      && p.from < p.streams, "accepted: from %u of %u", p.from, p.streams);
  FUZZ_CHECK (p.n != 0 && fountain_subframe_symbols (p.frame_len,
          p.streams, p.symbol_size) == p.n, "accepted: n %u", p.n);
  if (p.type == FOUNTAIN_CLUSTER_PART) {
    FUZZ_CHECK (len == FOUNTAIN_CLUSTER_PART_SIZE + (size_t) p.symbol_size
        && p.payload == dgram + FOUNTAIN_CLUSTER_PART_SIZE,
        "accepted part: %zu bytes, symbol size %u", len, p.symbol_size);
    FUZZ_CHECK (p.stream < p.streams && p.stream != p.from,
        "accepted part: stream %u from %u", p.stream, p.from);
  } else if (p.type == FOUNTAIN_CLUSTER_READY) {
    FUZZ_CHECK (len == FOUNTAIN_CLUSTER_READY_SIZE, "accepted ready: %zu "
        "bytes", len);
  } else {
    uint64_t all = p.streams == 64 ? ~0ull : (1ull << p.streams) - 1;
    FUZZ_CHECK (p.type == FOUNTAIN_CLUSTER_RELEASE, "accepted type %u",
        p.type);
    FUZZ_CHECK (len == FOUNTAIN_CLUSTER_RELEASE_SIZE && p.senders != 0
        && (p.senders & ~all) == 0, "accepted release: %zu bytes, senders "
        "0x%llx", len, (unsigned long long) p.senders);
  }

  {
    /* written back: the same bytes; one byte short of room: refused */
    uint8_t *again = malloc (len);
    FUZZ_CHECK (fountain_cluster_write (&p, again, len) == (int) len
        && memcmp (again, dgram, len) == 0,
        "written back, the exchange packet differs");
    FUZZ_CHECK (fountain_cluster_write (&p, again, len - 1) < 0,
        "written into %zu bytes of %zu", len - 1, len);
    free (again);
  }
  {
    /* cut by its last byte: refused */
    uint8_t *shorter = malloc (len - 1);
    memcpy (shorter, dgram, len - 1);
    err = fountain_cluster_parse (shorter, len - 1, &cut);
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
