/* fountain_simd.h: kernels/fountain's own row operation over ISA-L, shared by
 * the decoder (fountain_ref.c) and fountain_isal.c; not part of the API. */
#ifndef FOUNTAIN_SIMD_H
#define FOUNTAIN_SIMD_H

#include <stddef.h>
#include <stdint.h>

/* dst += c * src over len bytes (ISA-L's gf_vect_mad from 64 bytes on, the
 * nibble tables below that, where ISA-L's vector code does not apply). */
void fountain_gf_madd (uint8_t *dst, const uint8_t *src, uint8_t c,
    size_t len);

#endif /* FOUNTAIN_SIMD_H */
