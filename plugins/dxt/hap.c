/* hap.c: HAP frame writer and a defensive reader (see hap.h). */
#include "hap.h"

#include <string.h>
#include <snappy-c.h>

/* Reads one section header at data[0..len): fills the type, the header and
 * section lengths; the section must fit in len. */
static int
read_section (const uint8_t *data, size_t len, uint8_t *type,
    size_t *header_len, size_t *section_len)
{
  size_t size;

  if (len < 4)
    return GS_HAP_ERR_TRUNCATED;
  size = (size_t) data[0] | ((size_t) data[1] << 8) | ((size_t) data[2] << 16);
  *type = data[3];
  *header_len = 4;
  if (size == 0) {
    /* all three zero: the size is the 4 bytes after the type */
    if (len < 8)
      return GS_HAP_ERR_TRUNCATED;
    size = (size_t) data[4] | ((size_t) data[5] << 8) |
        ((size_t) data[6] << 16) | ((size_t) data[7] << 24);
    *header_len = 8;
  }
  /* compare without adding, so a huge size cannot wrap */
  if (size > len - *header_len)
    return GS_HAP_ERR_TRUNCATED;
  *section_len = size;
  return GS_HAP_OK;
}

static size_t
write_header (uint8_t *out, uint8_t type, size_t size)
{
  if (size > 0 && size <= 0xFFFFFF) {
    out[0] = size & 0xFF;
    out[1] = (size >> 8) & 0xFF;
    out[2] = (size >> 16) & 0xFF;
    out[3] = type;
    return 4;
  }
  out[0] = out[1] = out[2] = 0;
  out[3] = type;
  out[4] = size & 0xFF;
  out[5] = (size >> 8) & 0xFF;
  out[6] = (size >> 16) & 0xFF;
  out[7] = (size >> 24) & 0xFF;
  return 8;
}

int
gs_hap_peek (const uint8_t *data, size_t len, GsHapInfo *info)
{
  int r;

  if (!data || !info)
    return GS_HAP_ERR_ARGS;
  r = read_section (data, len, &info->type, &info->header_len,
      &info->section_len);
  if (r != GS_HAP_OK)
    return r;
  info->tex_format = info->type & 0x0F;
  info->compressor = info->type & 0xF0;
  if (info->tex_format != GS_HAP_TEX_DXT1 &&
      info->tex_format != GS_HAP_TEX_DXT5 &&
      info->tex_format != GS_HAP_TEX_YCOCG)
    return GS_HAP_ERR_FORMAT;
  if (info->compressor != GS_HAP_COMP_NONE &&
      info->compressor != GS_HAP_COMP_SNAPPY &&
      info->compressor != GS_HAP_COMP_COMPLEX)
    return GS_HAP_ERR_FORMAT;
  return GS_HAP_OK;
}

/* One chunk of second-stage data into out[0..out_cap): returns the bytes
 * written through *written. */
static int
decode_chunk (uint8_t compressor, const uint8_t *in, size_t in_len,
    uint8_t *out, size_t out_cap, size_t *written)
{
  if (compressor == 0x0A) {
    if (in_len > out_cap)
      return GS_HAP_ERR_SIZE;
    memcpy (out, in, in_len);
    *written = in_len;
    return GS_HAP_OK;
  }
  if (compressor == 0x0B) {
    size_t ulen;

    if (snappy_uncompressed_length ((const char *) in, in_len, &ulen) !=
        SNAPPY_OK)
      return GS_HAP_ERR_SNAPPY;
    if (ulen > out_cap)
      return GS_HAP_ERR_SIZE;
    /* snappy checks every copy against the output length it is given */
    if (snappy_uncompress ((const char *) in, in_len, (char *) out, &ulen) !=
        SNAPPY_OK)
      return GS_HAP_ERR_SNAPPY;
    *written = ulen;
    return GS_HAP_OK;
  }
  return GS_HAP_ERR_FORMAT;
}

static uint32_t
rd32 (const uint8_t *p)
{
  return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
      ((uint32_t) p[3] << 24);
}

/* 0xC? sections: a decode instructions container, then the chunked data. */
static int
decode_complex (const uint8_t *sec, size_t sec_len, uint8_t *tex,
    size_t tex_size)
{
  const uint8_t *comp = NULL, *sizes = NULL, *offsets = NULL;
  size_t n_comp = 0, n_sizes = 0, n_offsets = 0;
  uint8_t type;
  size_t hl, cl, pos, data_len, n, i, out_pos = 0, sum = 0;
  const uint8_t *data;
  int r;

  r = read_section (sec, sec_len, &type, &hl, &cl);
  if (r != GS_HAP_OK)
    return r;
  if (type != 0x01)
    return GS_HAP_ERR_FORMAT;
  data = sec + hl + cl;
  data_len = sec_len - hl - cl;

  for (pos = 0; pos < cl;) {
    const uint8_t *p = sec + hl + pos;
    size_t shl, sl;
    uint8_t st;

    r = read_section (p, cl - pos, &st, &shl, &sl);
    if (r != GS_HAP_OK)
      return r;
    switch (st) {
      case 0x02:
        comp = p + shl;
        n_comp = sl;
        break;
      case 0x03:
        if (sl % 4)
          return GS_HAP_ERR_FORMAT;
        sizes = p + shl;
        n_sizes = sl / 4;
        break;
      case 0x04:
        if (sl % 4)
          return GS_HAP_ERR_FORMAT;
        offsets = p + shl;
        n_offsets = sl / 4;
        break;
      default:
        break;                  /* unknown instructions are skipped */
    }
    pos += shl + sl;
  }
  if (!comp || !sizes || n_comp != n_sizes || n_comp == 0 ||
      (offsets && n_offsets != n_comp))
    return GS_HAP_ERR_FORMAT;

  n = n_comp;
  for (i = 0; i < n; i++) {
    size_t off = offsets ? rd32 (offsets + 4 * i) : sum;
    size_t sz = rd32 (sizes + 4 * i);
    size_t w = 0;

    if (off > data_len || sz > data_len - off)
      return GS_HAP_ERR_TRUNCATED;
    r = decode_chunk (comp[i], data + off, sz, tex + out_pos,
        tex_size - out_pos, &w);
    if (r != GS_HAP_OK)
      return r;
    out_pos += w;
    sum += sz;
  }
  return out_pos == tex_size ? GS_HAP_OK : GS_HAP_ERR_SIZE;
}

int
gs_hap_decode (const uint8_t *data, size_t len, uint8_t *tex, size_t tex_size)
{
  GsHapInfo info;
  const uint8_t *sec;
  size_t w = 0;
  int r;

  if (!tex)
    return GS_HAP_ERR_ARGS;
  r = gs_hap_peek (data, len, &info);
  if (r != GS_HAP_OK)
    return r;
  sec = data + info.header_len;
  switch (info.compressor) {
    case GS_HAP_COMP_NONE:
    case GS_HAP_COMP_SNAPPY:
      r = decode_chunk (info.compressor >> 4, sec, info.section_len, tex,
          tex_size, &w);
      if (r != GS_HAP_OK)
        return r;
      return w == tex_size ? GS_HAP_OK : GS_HAP_ERR_SIZE;
    default:
      return decode_complex (sec, info.section_len, tex, tex_size);
  }
}

size_t
gs_hap_max_frame_size (size_t tex_size)
{
  size_t s = snappy_max_compressed_length (tex_size);

  return 8 + (s > tex_size ? s : tex_size);
}

size_t
gs_hap_write_frame (uint8_t *out, size_t out_cap, int tex_format, int snappy,
    const uint8_t *tex, size_t tex_size)
{
  size_t hl = tex_size <= 0xFFFFFF ? 4 : 8;

  if (!out || !tex || tex_size == 0 || tex_size > 0xFFFFFFFFu ||
      (tex_format != GS_HAP_TEX_DXT1 && tex_format != GS_HAP_TEX_DXT5 &&
          tex_format != GS_HAP_TEX_YCOCG))
    return 0;
  if (snappy && out_cap > 8) {
    size_t clen = out_cap - 8;

    if (snappy_compress ((const char *) tex, tex_size, (char *) out + 8,
            &clen) == SNAPPY_OK && clen < tex_size) {
      size_t h = write_header (out, GS_HAP_COMP_SNAPPY | tex_format, clen);

      if (h == 4)
        memmove (out + 4, out + 8, clen);
      return h + clen;
    }
  }
  if (out_cap < hl + tex_size)
    return 0;
  hl = write_header (out, GS_HAP_COMP_NONE | tex_format, tex_size);
  memcpy (out + hl, tex, tex_size);
  return hl + tex_size;
}

const char *
gs_hap_result_str (int r)
{
  switch (r) {
    case GS_HAP_OK:
      return "ok";
    case GS_HAP_ERR_TRUNCATED:
      return "truncated section";
    case GS_HAP_ERR_FORMAT:
      return "unsupported or malformed section type";
    case GS_HAP_ERR_SIZE:
      return "texture size does not match the frame size";
    case GS_HAP_ERR_SNAPPY:
      return "invalid Snappy data";
    default:
      return "bad arguments";
  }
}
