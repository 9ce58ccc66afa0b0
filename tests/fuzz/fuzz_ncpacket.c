/* fuzz_ncpacket.c: the coded packet of ncencoder / ncdecoder as rtpncdepay
 * and ncdecoder read it from the network.
 *
 * The input is a sequence of chunks (fuzz.h), each one packet after a mode
 * byte: bit 0, the bytes are an RTP packet whose payload is the coded packet
 * (rtpncdepay's path: gst_rtp_buffer_map, the payload); bit 1, the CRC field
 * is recomputed first, so that mutated header fields reach every check
 * after the CRC and the decoder. Checks: nc_packet_parse never reads past
 * the packet; an accepted packet has exactly nc_packet_size bytes, its
 * coefficient vector and payload lie inside it, and written back it gives
 * the same bytes; accepted packets of one generation go into the
 * progressive decoder, and at full rank its source blocks are what a
 * plain Gaussian elimination of the same packets gives. */
#include <string.h>
#include <gst/gst.h>
#include <gst/rtp/gstrtpbuffer.h>

#include <gst/gpustream/gpsncpacket.h>
#include <rlnc/rlnc.h>

#include "fuzz.h"

/* a decode of at most this many bytes (m * k) is compared with the
 * reference; the scalar elimination of bigger ones is too slow per input */
#define MAX_DECODE (16 * 1024)
#define MAX_PACKETS 64

typedef struct {
  RlncDecoder *dec;
  NcHeader first;
  int n;                        /* packets kept for the reference */
  uint8_t *coefs;               /* n x m */
  uint8_t *payloads;            /* n x k */
} Generation;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  gst_init (NULL, NULL);
  return 0;
}

static void
generation_clear (Generation *g)
{
  if (g->dec)
    rlnc_decoder_free (g->dec);
  free (g->coefs);
  free (g->payloads);
  memset (g, 0, sizeof *g);
}

/* An accepted packet into the decoder of its generation. */
static void
decode (Generation *g, const NcHeader *h, const guint8 *coefs,
    const guint8 *payload)
{
  uint8_t vec[NC_MAX_M];
  size_t k = h->block_size;
  int m = h->m, rank_before;

  if ((size_t) m * k > MAX_DECODE)
    return;
  if (!g->dec || g->first.generation != h->generation || g->first.m != h->m
      || g->first.block_size != h->block_size) {
    generation_clear (g);
    g->dec = rlnc_decoder_new (m, k);
    g->first = *h;
    g->coefs = malloc ((size_t) MAX_PACKETS * m);
    g->payloads = malloc ((size_t) MAX_PACKETS * k);
  }
  if (rlnc_decoder_rank (g->dec) == m || g->n == MAX_PACKETS)
    return;
  nc_packet_coefficients (h, coefs, vec);
  rank_before = rlnc_decoder_rank (g->dec);
  rlnc_decoder_add (g->dec, vec, payload);
  /* The reference gets only the packets that raised the rank, as the
   * decoder keeps only those: a forged packet whose coefficients depend on
   * earlier ones but whose payload does not makes the system inconsistent,
   * and two eliminations that pick different rows then rightly disagree. */
  if (rlnc_decoder_rank (g->dec) == rank_before)
    return;
  memcpy (g->coefs + (size_t) g->n * m, vec, m);
  memcpy (g->payloads + (size_t) g->n * k, payload, k);
  g->n++;
  if (rlnc_decoder_rank (g->dec) == m) {
    uint8_t *got = malloc ((size_t) m * k), *want = malloc ((size_t) m * k);
    const uint8_t *rows[MAX_PACKETS];
    int i, rank;
    for (i = 0; i < g->n; i++)
      rows[i] = g->payloads + (size_t) i * k;
    rank = rlnc_decode_ref (k, m, g->n, g->coefs, rows, want);
    FUZZ_CHECK (rank == m, "decoder at full rank, reference at %d of %d",
        rank, m);
    FUZZ_CHECK (rlnc_decoder_solve (g->dec, got) == 0, "solve at full rank");
    FUZZ_CHECK (memcmp (got, want, (size_t) m * k) == 0,
        "decoded blocks differ from the reference (m %d, k %zu)", m, k);
    free (got);
    free (want);
  }
}

/* Rewrites the CRC field as a sender would fill it, when the header's
 * fields describe exactly `size` bytes (otherwise the parser rejects the
 * packet before it looks at the CRC, and the bytes stay as they are). */
static void
fix_crc (guint8 *pkt, gsize size)
{
  NcHeader h;
  guint8 *tmp;
  int vec;

  h.version = pkt[0];
  h.flags = pkt[1];
  h.m = GST_READ_UINT16_BE (pkt + 2);
  h.generation = GST_READ_UINT32_BE (pkt + 4);
  h.block_size = GST_READ_UINT32_BE (pkt + 8);
  h.data_length = GST_READ_UINT32_BE (pkt + 12);
  h.seed = GST_READ_UINT32_BE (pkt + 16);
  if (h.block_size > NC_MAX_K || nc_packet_size (&h) != size)
    return;
  vec = (h.flags & (NC_FLAG_SEED | NC_FLAG_SOURCE)) == 0;
  tmp = malloc (size);
  nc_packet_write (tmp, &h, vec ? pkt + NC_HEADER_SIZE : NULL,
      pkt + NC_HEADER_SIZE + (vec ? h.m : 0));
  /* the writer writes version 1 whatever h says: only its CRC is taken */
  memcpy (pkt + 20, tmp + 20, 4);
  free (tmp);
}

static void
one_packet (Generation *g, const uint8_t *pkt, size_t len, uint8_t mode)
{
  GstBuffer *buf = NULL, *payload_buf = NULL;
  GstMapInfo map;
  const guint8 *data = pkt, *coefs = NULL, *payload = NULL;
  guint8 *copy = NULL;
  gsize size = len;
  NcHeader h;
  NcParseResult r;

  if (mode & 1) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    buf = gst_buffer_new_memdup (pkt, len);
    if (!gst_rtp_buffer_map (buf, GST_MAP_READ, &rtp)) {
      gst_buffer_unref (buf);
      return;                   /* rtpncdepay: not RTP, a counted drop */
    }
    payload_buf = gst_rtp_buffer_get_payload_buffer (&rtp);
    gst_rtp_buffer_unmap (&rtp);
    gst_buffer_unref (buf);
    if (!payload_buf)
      return;
    gst_buffer_map (payload_buf, &map, GST_MAP_READ);
    data = map.data;
    size = map.size;
    if (size == 0) {            /* rtpncdepay: no payload, a counted drop */
      gst_buffer_unmap (payload_buf, &map);
      gst_buffer_unref (payload_buf);
      return;
    }
  }
  /* its own block of exactly its size, so a read past it is caught */
  copy = malloc (size ? size : 1);
  if (size)
    memcpy (copy, data, size);
  if ((mode & 2) && size >= NC_HEADER_SIZE)
    fix_crc (copy, size);

  r = nc_packet_parse (copy, size, &h, &coefs, &payload);
  FUZZ_CHECK (nc_parse_result_to_string (r) != NULL, "result string");
  if (r == NC_PARSE_OK) {
    guint8 *again = malloc (size);
    FUZZ_CHECK (nc_packet_size (&h) == size, "accepted %zu bytes for a "
        "packet of %zu", (size_t) size, (size_t) nc_packet_size (&h));
    FUZZ_CHECK (payload >= copy && payload + h.block_size == copy + size,
        "payload outside the packet");
    FUZZ_CHECK (!coefs || (coefs == copy + NC_HEADER_SIZE
            && coefs + h.m <= payload), "vector outside the packet");
    FUZZ_CHECK (h.m >= 1 && h.m <= NC_MAX_M && h.block_size >= 1
        && h.block_size <= NC_MAX_K && h.data_length >= 1
        && h.data_length <= (guint64) h.m * h.block_size, "fields in range");
    nc_packet_write (again, &h, coefs, payload);
    FUZZ_CHECK (memcmp (again, copy, size) == 0, "written back, the packet "
        "differs");
    free (again);
    decode (g, &h, coefs, payload);
  }
  free (copy);
  if (payload_buf) {
    gst_buffer_unmap (payload_buf, &map);
    gst_buffer_unref (payload_buf);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  FuzzReader r = { data, size };
  Generation g = { 0 };
  const uint8_t *chunk;
  size_t len;

  while (fuzz_chunk (&r, &chunk, &len)) {
    if (len == 0)
      continue;
    one_packet (&g, chunk + 1, len - 1, chunk[0]);
  }
  generation_clear (&g);
  return 0;
}
