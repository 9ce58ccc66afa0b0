/* gpsncpacket.h: the coded packet that ncencoder emits and ncdecoder reads, the
 * payload of one RTP packet with rtpncpay. Version 1, all fields big-endian:
 *
 *   0  u8   version        1
 *   1  u8   flags          NC_FLAG_*
 *   2  u16  m              blocks in this generation, 1..256: the stream's
 *                          generation size, or fewer for a partial generation
 *                          (ceil (data_length / k): only blocks with data)
 *   4  u32  generation     generation id, increments by one per generation
 *   8  u32  block_size     k, bytes per block, 1..65536
 *  12  u32  data_length    real bytes in the generation (<= m*k; the last,
 *                          padded generation of a max-latency flush is less)
 *  16  u32  seed           NC_FLAG_SEED: coefficient seed; NC_FLAG_SOURCE:
 *                          index of the source block; otherwise 0
 *  20  u32  crc32          CRC-32 (IEEE) of the whole packet with this field 0
 *  24  [m bytes]           coefficient vector, only when neither SEED nor SOURCE
 *  ..  [k bytes]           coded payload
 *
 * The whole layout, with the coefficient expansion and the framing of
 * NC_FLAG_FRAMED streams, is in docs/elements/nc-wire-format.md.
 *
 * The CRC makes a corrupted packet a dropped packet, not a corrupted
 * generation: one bad byte would otherwise poison every block it is mixed
 * into. */
#ifndef NC_PACKET_H
#define NC_PACKET_H

#include <glib.h>

G_BEGIN_DECLS

#define NC_PACKET_VERSION 1
#define NC_HEADER_SIZE 24
#define NC_MAX_M 256
#define NC_MAX_K 65536

typedef enum {
  NC_FLAG_SEED = 1 << 0,      /* coefficients regenerated from seed */
  NC_FLAG_SOURCE = 1 << 1,    /* uncoded source block number `seed` (systematic) */
  NC_FLAG_RECODED = 1 << 2,   /* mixed by a relay, explicit vector */
  NC_FLAG_FRAMED = 1 << 3,    /* the generation's data are records (gpsncframing.h) */
} NcFlags;

typedef struct {
  guint8 version;
  guint8 flags;
  guint16 m;
  guint32 generation;
  guint32 block_size;
  guint32 data_length;
  guint32 seed;
} NcHeader;

typedef enum {
  NC_PARSE_OK = 0,
  NC_PARSE_TRUNCATED,         /* shorter than its header says */
  NC_PARSE_BAD_VERSION,
  NC_PARSE_BAD_FIELD,         /* m, k, data_length, flags or seed out of range */
  NC_PARSE_BAD_CRC,
} NcParseResult;

const gchar *nc_parse_result_to_string (NcParseResult r);

/* Size of a packet with this header: 24 + (vector ? m : 0) + k. */
gsize nc_packet_size (const NcHeader * h);

/* Parses and validates a packet of `size` bytes (checks the CRC). On OK fills
 * h, points *coefs at the m-byte vector (NULL for SEED / SOURCE packets) and
 * *payload at the k bytes. Never reads past size. */
NcParseResult nc_packet_parse (const guint8 * data, gsize size, NcHeader * h,
    const guint8 ** coefs, const guint8 ** payload);

/* Writes header, vector (when coefs != NULL and no SEED / SOURCE flag) and
 * payload into out (nc_packet_size bytes) and fills in the CRC. */
void nc_packet_write (guint8 * out, const NcHeader * h, const guint8 * coefs,
    const guint8 * payload);

/* The coefficient vector of a parsed packet into out (m bytes): the explicit
 * vector, the seeded one, or the unit vector of a source block. */
void nc_packet_coefficients (const NcHeader * h, const guint8 * coefs,
    guint8 * out);

G_END_DECLS

#endif /* NC_PACKET_H */
