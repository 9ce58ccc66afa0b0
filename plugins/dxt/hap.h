/* hap.h: HAP frames (github.com/Vidvox/hap, documentation/HapVideo.md)
 * around a DXT block stream. Pure C, libc + libsnappy (snappy-c.h), no GLib,
 * so the fuzz test links it without GStreamer.
 *
 * A frame is one top-level section: a 4-byte header (3-byte little-endian
 * size, 1 type byte) or, when the size does not fit in 24 bits, 3 zero bytes,
 * the type byte and a 4-byte size. Type = second-stage compressor (high
 * nibble: 0xA none, 0xB Snappy, 0xC decode instructions) | texture format
 * (low nibble: 0xB DXT1 "Hap1", 0xE DXT5 "Hap5", 0xF scaled YCoCg DXT5
 * "HapY"). We write 0xA? or 0xB? (one chunk) or, with several chunks, the
 * 0xC? form: a decode instructions container 0x01 holding the chunk
 * compressor 0x02 and size 0x03 tables, then the chunks, each Snappy or
 * stored, so that a player decompresses them in parallel. We read all of
 * these, and the optional offset table 0x04 other encoders write. Every
 * length read from the frame is checked against the bytes that remain
 * before it is used. */
#ifndef GS_HAP_H
#define GS_HAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_HAP_TEX_DXT1 0x0B
#define GS_HAP_TEX_DXT5 0x0E
#define GS_HAP_TEX_YCOCG 0x0F

#define GS_HAP_COMP_NONE 0xA0
#define GS_HAP_COMP_SNAPPY 0xB0
#define GS_HAP_COMP_COMPLEX 0xC0

typedef enum {
  GS_HAP_OK = 0,
  GS_HAP_ERR_TRUNCATED = -1,    /* a header or section runs past the data */
  GS_HAP_ERR_FORMAT = -2,       /* unknown / unsupported section type */
  GS_HAP_ERR_SIZE = -3,         /* decoded size is not the expected one */
  GS_HAP_ERR_SNAPPY = -4,       /* Snappy data invalid */
  GS_HAP_ERR_ARGS = -5,
} GsHapResult;

typedef struct {
  uint8_t type;                 /* the top-level type byte */
  uint8_t tex_format;           /* GS_HAP_TEX_* (low nibble) */
  uint8_t compressor;           /* GS_HAP_COMP_* (high nibble) */
  size_t header_len;            /* 4 or 8 */
  size_t section_len;           /* bytes after the header */
} GsHapInfo;

/* Reads the top-level header. OK only when the whole section lies within
 * len and the type is one we decode (DXT1/DXT5/YCoCg, A/B/C). */
int gs_hap_peek (const uint8_t *data, size_t len, GsHapInfo *info);

/* Decodes the frame's texture into tex, which must come out exactly
 * tex_size bytes (ERR_SIZE otherwise). Never reads outside data[0..len) nor
 * writes outside tex[0..tex_size). */
int gs_hap_decode (const uint8_t *data, size_t len, uint8_t *tex,
                   size_t tex_size);

/* Upper bound of a frame holding tex_size texture bytes in chunks chunks. */
size_t gs_hap_max_frame_size (size_t tex_size, unsigned chunks);

/* Writes one frame (tex_format GS_HAP_TEX_*) of tex_size bytes (whole
 * blocks). chunks <= 1: one section; more: the chunked 0xC? form, the
 * texture cut at block boundaries into chunks parts of (nearly) equal size
 * (at most one chunk a block). snappy: compress each chunk with Snappy, but
 * store it uncompressed when Snappy would not shrink it, as the HAP
 * reference encoder does. Returns the frame size, 0 on error (bad
 * arguments, out_cap too small). */
size_t gs_hap_write_frame (uint8_t *out, size_t out_cap, int tex_format,
                           int snappy, unsigned chunks, const uint8_t *tex,
                           size_t tex_size);

const char *gs_hap_result_str (int r);

#ifdef __cplusplus
}
#endif

#endif /* GS_HAP_H */
