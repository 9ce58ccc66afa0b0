/* fuzz.h: what the fuzz targets share.
 *
 * Every target is one LLVMFuzzerTestOneInput over the bytes of one input,
 * built two ways (tests/fuzz/meson.build): with libFuzzer in a build
 * configured for fuzzing (`./run fuzz`), and with replay.c's main in the
 * ordinary build, where it replays the committed corpus and regression
 * inputs once as a test. A broken property is an abort (FUZZ_CHECK), which
 * libFuzzer reports as a crash and keeps the input that caused it.
 *
 * Inputs that hold several packets cut them with FuzzReader: a big-endian
 * u16 length, then that many bytes (fewer at the end of the input). */
#ifndef GS_FUZZ_H
#define GS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...) do { if (!(cond)) { \
      fprintf (stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf (stderr, __VA_ARGS__); fputc ('\n', stderr); abort (); } } while (0)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

typedef struct {
  const uint8_t *p;
  size_t left;
} FuzzReader;

static inline int
fuzz_byte (FuzzReader *r, uint8_t *out)
{
  if (r->left == 0)
    return 0;
  *out = *r->p++;
  r->left--;
  return 1;
}

/* The next length-prefixed chunk; 0 at the end of the input. */
static inline int
fuzz_chunk (FuzzReader *r, const uint8_t **chunk, size_t *len)
{
  size_t n;
  if (r->left < 2)
    return 0;
  n = ((size_t) r->p[0] << 8) | r->p[1];
  r->p += 2;
  r->left -= 2;
  if (n > r->left)
    n = r->left;
  *chunk = r->p;
  *len = n;
  r->p += n;
  r->left -= n;
  return 1;
}

/* Hands each chunk of the input to check, copied into a heap block of
 * exactly its size, so that a read past the datagram is caught. */
static inline void
fuzz_each_datagram (const uint8_t *data, size_t size,
    void (*check) (const uint8_t *dgram, size_t len))
{
  FuzzReader r = { data, size };
  const uint8_t *chunk;
  size_t len;

  while (fuzz_chunk (&r, &chunk, &len)) {
    uint8_t *dgram = malloc (len ? len : 1);
    memcpy (dgram, chunk, len);
    check (dgram, len);
    free (dgram);
  }
}

/* The SRTP master key and salt of the srtp target and of its seed packets
 * (46 bytes: the longest, AES-256 key and salt; shorter ciphers take the
 * first bytes) and its MKI. */
static const uint8_t fuzz_srtp_key[46] = {
  0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f, 0xa3, 0x2c,
  0x06, 0xde, 0x41, 0x39, 0x0e, 0xc6, 0x75, 0xad, 0x49, 0x8a, 0xfe, 0xeb,
  0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6, 0xf0, 0x0d, 0x2b, 0x3c, 0x4d, 0x5e,
  0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8
};
static const uint8_t fuzz_srtp_mki[4] = { 0xde, 0xad, 0xbe, 0xef };

#endif /* GS_FUZZ_H */
