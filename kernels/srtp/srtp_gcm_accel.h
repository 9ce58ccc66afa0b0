/* srtp_gcm_accel.h: AES-GCM for the batched SRTP path with AES-NI and
 * carry-less multiply (not API; used by srtp_batch.c).
 *
 * GHASH runs in the POLYVAL domain of RFC 8452 (byte-reversed blocks, key
 * H*x): a product then needs no bit shift, and its reduction is two
 * carry-less multiplies. Powers H^1..H^16 are precomputed (once per key set
 * and batch call) so that 8 or 16 blocks are multiplied independently and
 * reduced once (aggregated reduction). Encryption and GHASH share one pass
 * over the packet: the 128-bit code interleaves the AES rounds of 8 counter
 * blocks with the GHASH of the 8 blocks before them (stitched); the 256-bit
 * code GHASHes each 16-block group right after encrypting it and leaves the
 * overlap with the next group's AES to out-of-order execution.
 *
 * Two implementations behind gs_gcm_accel_level(): 128-bit AES-NI + PCLMUL
 * (+ AVX encoding), and 256-bit VAES + VPCLMULQDQ (two blocks per
 * instruction). Without AES-NI / PCLMUL the caller keeps its own path. */
#ifndef SRTP_GCM_ACCEL_H
#define SRTP_GCM_ACCEL_H

#include <stdint.h>
#include "srtp/srtp_hd.h"

/* Expanded key of one GsSrtpKeys, built by gs_gcm_accel_key_init. */
typedef struct {
  _Alignas (32) uint8_t rk[15][16];   /* AES round keys, in the byte order aesenc takes */
  /* Descending, so that consecutive blocks take consecutive entries: a
   * group of n blocks uses hpow[16 - n] .. hpow[15] */
  _Alignas (32) uint8_t hpow[16][16]; /* hpow[i] = H^(16-i), POLYVAL domain */
  _Alignas (32) uint8_t hkar[16][16]; /* lo ^ hi qword of hpow[i], in both halves (Karatsuba) */
  int rounds;
} GsGcmAccelKey;

/* 0: no AES-NI / PCLMUL / AVX (do not call the functions below);
 * 1: AES-NI + PCLMUL; 2: VAES + VPCLMULQDQ + AVX2 as well. */
unsigned gs_gcm_accel_level (void);

void gs_gcm_accel_key_init (GsGcmAccelKey *key, const GsSrtpKeys *k);

/* Encrypts buf in place (counter blocks iv || 2, 3, ...) and writes the tag
 * over aad and the ciphertext. aad must not overlap buf. */
void gs_gcm_accel_seal (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, uint8_t *buf, uint32_t len, uint8_t tag[16]);

/* The tag of aad and ciphertext ct, nothing decrypted (verify first). */
void gs_gcm_accel_tag (const GsGcmAccelKey *key, const uint8_t iv[12], const uint8_t *aad,
    uint32_t alen, const uint8_t *ct, uint32_t len, uint8_t tag[16]);

/* The counter-mode part alone (decrypt after the tag was verified). */
void gs_gcm_accel_ctr (const GsGcmAccelKey *key, const uint8_t iv[12], uint8_t *buf,
    uint32_t len);

#endif /* SRTP_GCM_ACCEL_H */
