/* fuzz_hap.c: dxtdec's input: HAP frames (plugins/dxt/hap.c: the section
 * headers, the decode instructions, the chunk tables, Snappy) and the DXT
 * blocks they hold, read as dxtdec reads them.
 *
 * Input: bytes 0 and 1 are the frame's width and height in 4x4 blocks
 * (1 + byte % 64: dxtdec takes them from the caps), the rest is one frame.
 * As dxtdec: gs_hap_peek, the texture format the frame names, gs_hap_decode
 * into a texture of exactly the size the caps call for, then the blocks to
 * RGBA. Checks: nothing is read outside the frame or written outside the
 * texture (each in a block of its exact size); a frame that decodes,
 * written again by gs_hap_write_frame (Snappy, several chunks), decodes to
 * the same texture. */
#include <string.h>

#include "hap.h"
#include "dxt/dxt.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GsHapInfo info;
  DxtCodec codec;
  uint32_t width, height;
  size_t need, cap, written;
  uint8_t *frame, *tex, *again, *rgba;
  int r;

  if (size < 2)
    return 0;
  width = 4 * (1 + data[0] % 64);
  height = 4 * (1 + data[1] % 64);
  data += 2;
  size -= 2;
  frame = malloc (size ? size : 1);
  memcpy (frame, data, size);

  r = gs_hap_peek (frame, size, &info);
  FUZZ_CHECK (gs_hap_result_str (r) != NULL, "result string");
  if (r != GS_HAP_OK) {
    free (frame);
    return 0;
  }
  FUZZ_CHECK (info.header_len + info.section_len <= size, "section of %zu + "
      "%zu bytes in a frame of %zu", info.header_len, info.section_len, size);
  codec = info.tex_format == GS_HAP_TEX_DXT1 ? DXT_BC1 :
      info.tex_format == GS_HAP_TEX_DXT5 ? DXT_BC3 : DXT_YCOCG;
  need = dxt_frame_bytes (codec, width, height);
  tex = malloc (need);
  r = gs_hap_decode (frame, size, tex, need);
  free (frame);
  if (r != GS_HAP_OK) {
    free (tex);
    return 0;
  }
  rgba = malloc ((size_t) width * height * 4);
  FUZZ_CHECK (dxt_decode_frame (codec, tex, width, height, rgba, width * 4)
      == 0, "blocks of a decoded frame do not decode");
  free (rgba);

  cap = gs_hap_max_frame_size (need, 4);
  again = malloc (cap);
  written = gs_hap_write_frame (again, cap, info.tex_format, 1, 4, tex, need);
  FUZZ_CHECK (written > 0, "cannot write back a %zu-byte texture", need);
  {
    uint8_t *tex2 = malloc (need);
    FUZZ_CHECK (gs_hap_decode (again, written, tex2, need) == GS_HAP_OK
        && memcmp (tex, tex2, need) == 0, "written back, the frame decodes "
        "to another texture");
    free (tex2);
  }
  free (again);
  free (tex);
  return 0;
}
