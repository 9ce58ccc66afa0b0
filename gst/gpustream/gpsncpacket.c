/* gpsncpacket.c: the coded packet of gpsncpacket.h.
 *
 * The CRC is the reflected CRC-32 of IEEE 802.3 as zlib, gzip and Ethernet
 * compute it (polynomial 0x04C11DB7, bit-reversed 0xEDB88320, initial value
 * and final xor 0xFFFFFFFF; "123456789" -> 0xCBF43926), through ISA-L's
 * crc32_gzip_refl, over the whole packet with the crc32 field taken as zero.
 * It is stored big-endian like every other field. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <isa-l/crc.h>
#include <gst/gst.h>

#include "gpsncpacket.h"
#include <rlnc/rlnc.h>

#define NC_CRC_OFFSET 20
#define NC_KNOWN_FLAGS (NC_FLAG_SEED | NC_FLAG_SOURCE | NC_FLAG_RECODED | \
    NC_FLAG_FRAMED)

const gchar *
nc_parse_result_to_string (NcParseResult r)
{
  switch (r) {
    case NC_PARSE_OK:
      return "ok";
    case NC_PARSE_TRUNCATED:
      return "truncated";
    case NC_PARSE_BAD_VERSION:
      return "bad version";
    case NC_PARSE_BAD_FIELD:
      return "bad field";
    case NC_PARSE_BAD_CRC:
      return "bad crc";
  }
  return "unknown";
}

static gboolean
has_vector (guint flags)
{
  return (flags & (NC_FLAG_SEED | NC_FLAG_SOURCE)) == 0;
}

gsize
nc_packet_size (const NcHeader * h)
{
  return NC_HEADER_SIZE + (has_vector (h->flags) ? (gsize) h->m : 0) +
      (gsize) h->block_size;
}

static guint32
packet_crc (const guint8 * data, gsize size)
{
  static const guint8 zeros[4] = { 0, 0, 0, 0 };
  guint32 crc;

  crc = crc32_gzip_refl (0, data, NC_CRC_OFFSET);
  crc = crc32_gzip_refl (crc, zeros, 4);
  return crc32_gzip_refl (crc, data + NC_HEADER_SIZE, size - NC_HEADER_SIZE);
}

NcParseResult
nc_packet_parse (const guint8 * data, gsize size, NcHeader * h,
    const guint8 ** coefs, const guint8 ** payload)
{
  NcHeader hdr;
  gsize expected;

  if (data == NULL || size < NC_HEADER_SIZE)
    return NC_PARSE_TRUNCATED;

  hdr.version = data[0];
  hdr.flags = data[1];
  hdr.m = GST_READ_UINT16_BE (data + 2);
  hdr.generation = GST_READ_UINT32_BE (data + 4);
  hdr.block_size = GST_READ_UINT32_BE (data + 8);
  hdr.data_length = GST_READ_UINT32_BE (data + 12);
  hdr.seed = GST_READ_UINT32_BE (data + 16);

  if (hdr.version != NC_PACKET_VERSION)
    return NC_PARSE_BAD_VERSION;

  /* Ranges first, so the size below can never overflow. */
  if (hdr.flags & ~NC_KNOWN_FLAGS)
    return NC_PARSE_BAD_FIELD;
  if ((hdr.flags & NC_FLAG_SEED) && (hdr.flags & NC_FLAG_SOURCE))
    return NC_PARSE_BAD_FIELD;
  /* a relay always sends the explicit vector of its mix */
  if ((hdr.flags & NC_FLAG_RECODED) && !has_vector (hdr.flags))
    return NC_PARSE_BAD_FIELD;
  if (hdr.m < 1 || hdr.m > NC_MAX_M)
    return NC_PARSE_BAD_FIELD;
  if (hdr.block_size < 1 || hdr.block_size > NC_MAX_K)
    return NC_PARSE_BAD_FIELD;
  if (hdr.data_length < 1 ||
      (guint64) hdr.data_length > (guint64) hdr.m * hdr.block_size)
    return NC_PARSE_BAD_FIELD;
  if ((hdr.flags & NC_FLAG_SOURCE) && hdr.seed >= hdr.m)
    return NC_PARSE_BAD_FIELD;
  if (has_vector (hdr.flags) && hdr.seed != 0)
    return NC_PARSE_BAD_FIELD;

  expected = nc_packet_size (&hdr);
  if (size < expected)
    return NC_PARSE_TRUNCATED;
  /* trailing bytes: the sender and we disagree on the layout */
  if (size > expected)
    return NC_PARSE_BAD_FIELD;

  if (packet_crc (data, size) != GST_READ_UINT32_BE (data + NC_CRC_OFFSET))
    return NC_PARSE_BAD_CRC;

  if (h)
    *h = hdr;
  if (coefs)
    *coefs = has_vector (hdr.flags) ? data + NC_HEADER_SIZE : NULL;
  if (payload)
    *payload = data + expected - hdr.block_size;
  return NC_PARSE_OK;
}

void
nc_packet_write (guint8 * out, const NcHeader * h, const guint8 * coefs,
    const guint8 * payload)
{
  gsize size = nc_packet_size (h);
  guint8 *p = out + NC_HEADER_SIZE;

  out[0] = NC_PACKET_VERSION;
  out[1] = h->flags;
  GST_WRITE_UINT16_BE (out + 2, h->m);
  GST_WRITE_UINT32_BE (out + 4, h->generation);
  GST_WRITE_UINT32_BE (out + 8, h->block_size);
  GST_WRITE_UINT32_BE (out + 12, h->data_length);
  GST_WRITE_UINT32_BE (out + 16, h->seed);
  GST_WRITE_UINT32_BE (out + NC_CRC_OFFSET, 0);

  if (has_vector (h->flags)) {
    /* the caller may have coded the vector or payload in place already */
    if (coefs && coefs != p)
      memmove (p, coefs, h->m);
    else if (!coefs)
      memset (p, 0, h->m);
    p += h->m;
  }
  if (payload && payload != p)
    memmove (p, payload, h->block_size);

  GST_WRITE_UINT32_BE (out + NC_CRC_OFFSET, packet_crc (out, size));
}

void
nc_packet_coefficients (const NcHeader * h, const guint8 * coefs, guint8 * out)
{
  if (h->flags & NC_FLAG_SOURCE) {
    memset (out, 0, h->m);
    if (h->seed < h->m)
      out[h->seed] = 1;
  } else if (h->flags & NC_FLAG_SEED) {
    rlnc_coefs_from_seed (h->seed, h->m, out);
  } else if (coefs) {
    memcpy (out, coefs, h->m);
  } else {
    memset (out, 0, h->m);
  }
}
