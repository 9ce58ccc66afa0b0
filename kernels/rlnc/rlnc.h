/* rlnc.h: random linear network coding over GF(2^8), eq. 1-3 of Jin Zhao,
 * Xinya Zhang, Xin Wang, "An Architecture Design of GPU-Accelerated VoD
 * Streaming Servers with Network Coding" (2010).
 *
 * Pure C11, no GLib. A generation is m source blocks of k bytes. A coded block
 * is sum_i c_i * src_i with c a coefficient vector of m bytes. Three paths per
 * operation: a scalar reference (rlnc_*_ref), the CPU SIMD path through ISA-L
 * (rlnc_*), and CUDA kernels (rlnc_cuda.cu, launched by the layer above). */
#ifndef RLNC_H
#define RLNC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RLNC_MAX_M 256

/* out[j] = sum_{i<m} coefs[j*m + i] * src[i], for j < n; every block k bytes.
 * coefs is row-major n x m. */
void rlnc_encode_ref (size_t k, int m, int n, const uint8_t *coefs,
                      const uint8_t *const *src, uint8_t *const *out);
/* Same result through ISA-L (ec_init_tables + ec_encode_data). */
void rlnc_encode (size_t k, int m, int n, const uint8_t *coefs,
                  const uint8_t *const *src, uint8_t *const *out);

/* Prepared form for repeated use of one coefficient matrix (ISA-L's gftbls). */
typedef struct RlncEncodeTables RlncEncodeTables;
RlncEncodeTables *rlnc_encode_tables_new (int m, int n, const uint8_t *coefs);
void rlnc_encode_tables_free (RlncEncodeTables *t);
void rlnc_encode_with_tables (const RlncEncodeTables *t, size_t k,
                              const uint8_t *const *src, uint8_t *const *out);

/* The coefficient vector a receiver regenerates from a 32-bit seed: m bytes,
 * every byte nonzero. Deterministic across CPU and GPU (rlnc_seed.h holds the
 * shared __host__ __device__ generator). */
void rlnc_coefs_from_seed (uint32_t seed, int m, uint8_t *coefs);

/* Recode: combine n_in coded blocks of one generation (their coefficient
 * vectors in_coefs, n_in x m, and payloads in) into n_out new coded blocks with
 * the mixing matrix mix (n_out x n_in). Writes out_coefs (n_out x m) and out. */
void rlnc_recode (size_t k, int m, int n_in, const uint8_t *in_coefs,
                  const uint8_t *const *in, int n_out, const uint8_t *mix,
                  uint8_t *out_coefs, uint8_t *const *out);

/* Progressive decoder of one generation.
 * Gauss-Jordan elimination runs on the coefficient vectors as packets arrive
 * (so rank, and dependence of a packet, are known at once); payloads are kept
 * as received and turned into source blocks in one pass at full rank:
 * src = inverse * payloads, the same product as encoding (CPU SIMD or GPU). */
typedef struct RlncDecoder RlncDecoder;

typedef enum {
  RLNC_ADD_INNOVATIVE = 1,  /* rank went up */
  RLNC_ADD_DEPENDENT = 0,   /* linear combination of what we have: dropped */
  RLNC_ADD_FULL = 2         /* already at full rank: dropped (redundant) */
} RlncAddResult;

RlncDecoder *rlnc_decoder_new (int m, size_t k);
void rlnc_decoder_free (RlncDecoder *d);
void rlnc_decoder_reset (RlncDecoder *d);
int rlnc_decoder_m (const RlncDecoder *d);
size_t rlnc_decoder_k (const RlncDecoder *d);
int rlnc_decoder_rank (const RlncDecoder *d);
/* coefs: m bytes, payload: k bytes (copied). */
RlncAddResult rlnc_decoder_add (RlncDecoder *d, const uint8_t *coefs,
                                const uint8_t *payload);
/* At full rank: the m x m matrix that maps the kept payloads (in the order of
 * rlnc_decoder_payloads) to the source blocks. NULL before full rank. */
const uint8_t *rlnc_decoder_inverse (RlncDecoder *d);
const uint8_t *const *rlnc_decoder_payloads (const RlncDecoder *d);
/* At full rank: write the m source blocks, contiguous (m*k bytes), CPU SIMD.
 * Returns 0, or -1 when not at full rank. Source blocks that arrived
 * uncoded (unit coefficient vectors) are copied, not multiplied. */
int rlnc_decoder_solve (RlncDecoder *d, uint8_t *out);
/* Scalar reference of the whole decode, for tests: Gaussian elimination of
 * the n x m system (coefs, payloads); returns rank; when rank == m writes
 * the m source blocks contiguous into out. */
int rlnc_decode_ref (size_t k, int m, int n, const uint8_t *coefs,
                     const uint8_t *const *payloads, uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif /* RLNC_H */
