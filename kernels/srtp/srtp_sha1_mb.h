/* srtp_sha1_mb.h: SHA-1 over many independent messages at once (not API;
 * used by srtp_batch.c for the HMACs of a chunk of packets).
 *
 * The AVX2 code runs 8 messages in the 8 32-bit lanes of a 256-bit register,
 * the AVX-512 code 16 in a 512-bit one, one 64-byte block of each per step. Lanes are refilled from the job list as
 * their messages end, so messages of different lengths keep the lanes busy;
 * a lane with nothing left hashes a zero block whose result is dropped. When
 * a single message is left it finishes on one stream (SHA-NI where the level
 * allows it, else the scalar SHA-1), which is faster than 8 lanes carrying 7
 * idle ones.
 *
 * Which SHA-1 the batch code uses is gs_sha1_level(): the AVX-512
 * multi-buffer code (16 lanes) where the CPU has it, else SHA-NI (one or two
 * messages interleaved), else the AVX2 multi-buffer code (8 lanes), else the
 * scalar GS_HD one. AVX-512 comes before SHA-NI because on the one CPU with
 * both that we measured (an Intel Xeon next to an H100) the batch ran 2x
 * faster on it (docs/benchmarks/srtp.md); AMD's Zen 4 has both too and is
 * not measured. The environment variable GS_SRTP_SHA1 = "avx512", "shani",
 * "avx2" or "scalar" caps the choice (the best one the CPU has at or below
 * it, in that order), so that the tests run every implementation. */
#ifndef SRTP_SHA1_MB_H
#define SRTP_SHA1_MB_H

#include <stddef.h>
#include <stdint.h>

/* One message: whole 64-byte blocks, in up to two segments (an HMAC's inner
 * hash reads the packet in place, then its padded tail from a copy). */
typedef struct {
  uint32_t st[5];          /* in: starting state (IV or HMAC midstate); out: after the blocks */
  const uint8_t *p[2];     /* segment data */
  uint32_t nb[2];          /* segment lengths in blocks (either may be 0) */
} GsSha1Job;

enum { GS_SHA1_SCALAR = 0, GS_SHA1_AVX2 = 1, GS_SHA1_SHANI = 2, GS_SHA1_AVX512 = 3 };

/* GS_SHA1_*: the best the CPU has, capped by GS_SRTP_SHA1 and by
 * gs_sha1_level_cap(). */
unsigned gs_sha1_level (void);

/* Caps gs_sha1_level() from the program (the bench compares the paths in one
 * run); GS_SHA1_AVX512 lifts it again. Not thread-safe: set it between calls. */
void gs_sha1_level_cap (unsigned cap);

/* Runs the jobs' blocks, in the order order[0..n) (job indices; NULL: array
 * order): 16 lanes of AVX-512 where the CPU has it and the level is
 * GS_SHA1_AVX512, else 8 lanes of AVX2 where the CPU has it, else the scalar
 * compression function. Jobs must not share state. */
void gs_sha1_mb (GsSha1Job *jobs, size_t n, const uint32_t *order);

/* Whether SHA-NI may run: the CPU has it and gs_sha1_level() is
 * GS_SHA1_SHANI or above (with AVX-512 chosen for full chunks, a single
 * message or a pair still runs fastest on SHA-NI). */
int gs_sha1_shani_ok (void);

/* One message's whole blocks on SHA-NI (x86 only; gs_sha1_shani_ok() first). */
void gs_sha1_shani (uint32_t st[5], const uint8_t *data, size_t nblocks);

#endif /* SRTP_SHA1_MB_H */
