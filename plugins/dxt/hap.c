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
gs_hap_max_frame_size (size_t tex_size, unsigned chunks)
{
  size_t s = snappy_max_compressed_length (tex_size);

  if (chunks <= 1)
    return 8 + (s > tex_size ? s : tex_size);
  /* top header, instructions container, compressor and size tables (8-byte
   * headers at most), then each chunk's worst case: Snappy's bound of the
   * largest chunk, which is at most tex_size / chunks + 16 bytes */
  return 8 + 8 + 8 + chunks + 8 + 4 * (size_t) chunks +
      chunks * snappy_max_compressed_length (tex_size / chunks + 16);
}

/* One top-level section (0xA? or 0xB?): the whole texture, one chunk. */
static size_t
write_single (uint8_t *out, size_t out_cap, int tex_format, int snappy,
    const uint8_t *tex, size_t tex_size)
{
  size_t hl = tex_size <= 0xFFFFFF ? 4 : 8;

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

static void
wr32 (uint8_t *p, uint32_t v)
{
  p[0] = v & 0xFF;
  p[1] = (v >> 8) & 0xFF;
  p[2] = (v >> 16) & 0xFF;
  p[3] = (v >> 24) & 0xFF;
}

/* The chunked form (0xC?): a decode instructions container holding the
 * chunk compressor table (0x02) and the chunk size table (0x03), then the
 * chunks back to back, as FFmpeg's hap encoder and the HAP SDK write it.
 * Chunk i holds blocks [i * n / chunks, (i + 1) * n / chunks) of the n
 * blocks, so every chunk decodes on its own to whole blocks. */
static size_t
write_chunked (uint8_t *out, size_t out_cap, int tex_format, int snappy,
    unsigned chunks, size_t block_bytes, const uint8_t *tex, size_t tex_size)
{
  size_t n_blocks = tex_size / block_bytes;
  size_t comp_len = chunks, sizes_len = 4 * (size_t) chunks;
  size_t comp_hl = 4, sizes_hl = 4;
  size_t instr_len = comp_hl + comp_len + sizes_hl + sizes_len;
  size_t instr_hl = 4;
  size_t top_hl, pos, data_len = 0, i;
  uint8_t *comp, *sizes, *data;

  /* headers whose size may need 8 bytes are sized before anything is
   * written: the tables are small, the top section may not be */
  if (sizes_len > 0xFFFFFF) {
    sizes_hl = 8;
    comp_hl = comp_len > 0xFFFFFF ? 8 : 4;
    instr_len = comp_hl + comp_len + sizes_hl + sizes_len;
  }
  if (instr_len > 0xFFFFFF)
    instr_hl = 8;
  /* the top header is written last, once the data size is known: leave it
   * 8 bytes and move everything down 4 when 4 are enough */
  pos = 8;
  if (out_cap < pos + instr_hl + instr_len)
    return 0;
  pos += write_header (out + pos, 0x01, instr_len);
  pos += write_header (out + pos, 0x02, comp_len);
  comp = out + pos;
  pos += comp_len;
  pos += write_header (out + pos, 0x03, sizes_len);
  sizes = out + pos;
  pos += sizes_len;
  data = out + pos;

  for (i = 0; i < chunks; i++) {
    size_t b0 = i * n_blocks / chunks, b1 = (i + 1) * n_blocks / chunks;
    const uint8_t *src = tex + b0 * block_bytes;
    size_t len = (b1 - b0) * block_bytes, room = out_cap - pos - data_len;
    size_t clen = room;

    if (snappy && snappy_compress ((const char *) src, len,
            (char *) data + data_len, &clen) == SNAPPY_OK && clen < len) {
      comp[i] = 0x0B;
    } else {
      if (room < len)
        return 0;
      memcpy (data + data_len, src, len);
      comp[i] = 0x0A;
      clen = len;
    }
    wr32 (sizes + 4 * i, (uint32_t) clen);
    data_len += clen;
  }

  {
    size_t sec_len = (size_t) (data - (out + 8)) + data_len;

    if (sec_len > 0xFFFFFFFFu)
      return 0;
    top_hl = write_header (out, GS_HAP_COMP_COMPLEX | tex_format, sec_len);
    if (top_hl == 4)
      memmove (out + 4, out + 8, sec_len);
    return top_hl + sec_len;
  }
}

size_t
gs_hap_write_frame (uint8_t *out, size_t out_cap, int tex_format, int snappy,
    unsigned chunks, const uint8_t *tex, size_t tex_size)
{
  size_t block_bytes = tex_format == GS_HAP_TEX_DXT1 ? 8 : 16;

  if (!out || !tex || tex_size == 0 || tex_size > 0xFFFFFFFFu ||
      (tex_format != GS_HAP_TEX_DXT1 && tex_format != GS_HAP_TEX_DXT5 &&
          tex_format != GS_HAP_TEX_YCOCG) || tex_size % block_bytes)
    return 0;
  /* never more chunks than blocks: each chunk holds at least one */
  if (chunks > tex_size / block_bytes)
    chunks = (unsigned) (tex_size / block_bytes);
  if (chunks <= 1)
    return write_single (out, out_cap, tex_format, snappy, tex, tex_size);
  return write_chunked (out, out_cap, tex_format, snappy, chunks, block_bytes,
      tex, tex_size);
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
