/* dxt.h: DXT (S3TC) compression of raw video frames on the CPU, and the
 * types the CUDA kernels (dxt_cuda.h) share with it. Pure C11, libc only.
 *
 * Codecs (block stream layouts are the standard D3D/GL ones):
 *   DXT_BC1    8 bytes per 4x4 block, always the opaque 4-colour mode
 *              (colour0 > colour1 as 565 words), never 3-colour+transparent.
 *   DXT_BC3    16 bytes: 8-byte interpolated alpha block, then a BC1-style
 *              colour block in 4-colour mode.
 *   DXT_YCOCG  16 bytes, BC3 layout holding scaled YCoCg (HAP "HapY", id
 *              Software "Real-Time YCoCg-DXT Compression"): Co in the colour
 *              endpoints' red, Cg in green, the block's scale s-1 (s = 1, 2
 *              or 4) in the endpoints' 5-bit blue, Y in the alpha block.
 *              Decoding: Co = (R - 128) / s, Cg = (G - 128) / s,
 *              R = Y + Co - Cg, G = Y + Cg, B = Y - Co - Cg.
 *
 * Quality:
 *   DXT_FAST   bounding box with diagonal selection and inset (the
 *              real-time method) plus one least-squares refinement, kept
 *              only if it lowers the block error.
 *   DXT_HIGH   principal axis (integer power iteration), extremes along it,
 *              iterated least-squares endpoint refinement and a greedy
 *              +-1 search over the quantised 565 endpoints (quantisation
 *              aware, which plain cluster fit is not).
 *
 * All block arithmetic is integer (dxt_block.h, written once for host and
 * device), so CPU, SIMD and GPU paths produce identical bytes by
 * construction; no float rounding or FMA contraction can differ.
 *
 * Input formats: packed RGB family, 4:2:2 packed YUV (the paper's 32-byte
 * YUV422 block) and 4:2:0 planar/semi-planar. YUV is BT.601 limited range
 * ("studio swing", Y 16..235, C 16..240), converted with the integer
 * formula R = (298(Y-16) + 409(V-128) + 128) >> 8 etc. (see
 * dxt_yuv_to_rgb), chroma taken from the co-sited/left sample (no
 * interpolation). No separate conversion pass over the frame: the GPU
 * converts while it loads a block, the CPU a run of 64 blocks at a time
 * (4 KiB, SIMD where it can; same bytes). Frames of any size: blocks past
 * the right or bottom edge replicate the last column/row.
 *
 * Output: ceil(w/4) x ceil(h/4) blocks, row-major, dxt_block_bytes() each.
 */
#ifndef GS_DXT_H
#define GS_DXT_H

#include <stddef.h>
#include <stdint.h>
#include "common/gs_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DXT_BC1 = 0,
  DXT_BC3 = 1,
  DXT_YCOCG = 2,
} DxtCodec;

typedef enum {
  DXT_FAST = 0,
  DXT_HIGH = 1,
} DxtQuality;

typedef enum {
  DXT_FMT_RGBA = 0,   /* bytes R G B A */
  DXT_FMT_BGRA,       /* bytes B G R A */
  DXT_FMT_RGBX,       /* bytes R G B x, alpha taken as 255 */
  DXT_FMT_BGRX,       /* bytes B G R x */
  DXT_FMT_UYVY,       /* bytes U Y0 V Y1 per 2 pixels */
  DXT_FMT_YUY2,       /* bytes Y0 U Y1 V per 2 pixels */
  DXT_FMT_I420,       /* planes Y, U, V; chroma w/2 x h/2 (rounded up) */
  DXT_FMT_NV12,       /* planes Y, UV interleaved */
  DXT_FMT_COUNT
} DxtFormat;

/* One input frame. Pointers are host pointers for the CPU functions and
 * device pointers for the CUDA kernel; strides in bytes. Unused planes: 0. */
typedef struct {
  const uint8_t *plane[3];
  uint32_t stride[3];
  uint32_t width, height;
  int32_t format;     /* DxtFormat */
} DxtImage;

GS_HD uint32_t dxt_blocks_x (uint32_t width) { return (width + 3) / 4; }
GS_HD uint32_t dxt_blocks_y (uint32_t height) { return (height + 3) / 4; }
GS_HD uint32_t dxt_block_bytes (DxtCodec c) { return c == DXT_BC1 ? 8 : 16; }
/* Bytes of one row of blocks, and of a whole frame. */
GS_HD size_t dxt_row_bytes (DxtCodec c, uint32_t width)
{ return (size_t) dxt_blocks_x (width) * dxt_block_bytes (c); }
GS_HD size_t dxt_frame_bytes (DxtCodec c, uint32_t width, uint32_t height)
{ return dxt_row_bytes (c, width) * dxt_blocks_y (height); }

/* Encode block rows [row0, row0 + nrows) of img. out receives the slice
 * only: nrows * dxt_row_bytes() bytes (the caller points it at
 * frame_out + row0 * dxt_row_bytes() to fill a whole-frame buffer).
 * Returns 0, or -1 on bad arguments (unknown format/codec, rows past the
 * frame, missing plane). */
int dxt_encode_slice (const DxtImage *img, DxtCodec codec, DxtQuality q,
                      uint32_t row0, uint32_t nrows, uint8_t *out);
/* The whole frame: dxt_frame_bytes() bytes. */
int dxt_encode_frame (const DxtImage *img, DxtCodec codec, DxtQuality q,
                      uint8_t *out);

/* The whole frame on up to `threads` threads (0: one per online CPU), the
 * calling one included: slices of slice_rows block rows (0: the rows split
 * evenly among the threads) handed out one at a time, each through
 * dxt_encode_slice, so the bytes are dxt_encode_frame's. No more threads
 * than slices; one slice or one thread runs in the caller alone. Returns 0,
 * or -1 as dxt_encode_slice does (or when a thread cannot be started: the
 * caller's thread then does its share). */
int dxt_encode_frame_threads (const DxtImage *img, DxtCodec codec, DxtQuality q,
                              uint32_t slice_rows, unsigned threads, uint8_t *out);
/* Online CPUs, at least 1. */
unsigned dxt_cpu_count (void);

/* Decode a block stream of a width x height frame to RGBA8 (stride in
 * bytes). YCoCg is converted back to RGB. S3TC leaves the rounding open; we
 * round exactly as libavcodec's hap decoder (so HAP players and we agree to
 * the pixel): 565 expansion t = v * 255 + (max + 1) / 2, (t + t / (max + 1))
 * / (max + 1) for max = 31, 63; colour entries (2a + b) / 3 and 3-colour
 * (a + b) / 2, alpha (k0 a0 + k1 a1) / 7 or / 5, all truncated; YCoCg
 * s = (B >> 3) + 1, Co = (R - 128) / s and Cg = (G - 128) / s truncated
 * toward zero, results clamped to 0..255 (see dxt_block.h). */
int dxt_decode_frame (DxtCodec codec, const uint8_t *blocks,
                      uint32_t width, uint32_t height,
                      uint8_t *rgba, uint32_t stride);

/* Single blocks: 16 pixels RGBA8, row-major. */
void dxt_encode_block (DxtCodec codec, DxtQuality q, const uint8_t rgba[64],
                       uint8_t *out);
void dxt_decode_block (DxtCodec codec, const uint8_t *in, uint8_t rgba[64]);

/* CPU code path for the SIMD-accelerated encoders (fast BC1 colour, also
 * used for the colour half of fast BC3). Every path gives the same bytes. */
typedef enum {
  DXT_CPU_AUTO = -1,
  DXT_CPU_SCALAR = 0,
  DXT_CPU_SSE41 = 1,
  DXT_CPU_AVX2 = 2,
} DxtCpuPath;

/* Select a path (AUTO: best the CPU supports; a path the CPU lacks falls
 * back to the best it has). Returns the path now in use. Process-wide: meant
 * for tests and benchmarks, call it before encoding threads start. */
DxtCpuPath dxt_set_cpu_path (DxtCpuPath p);
DxtCpuPath dxt_get_cpu_path (void);
const char *dxt_cpu_path_name (DxtCpuPath p);

#ifdef __cplusplus
}
#endif

#endif /* GS_DXT_H */
