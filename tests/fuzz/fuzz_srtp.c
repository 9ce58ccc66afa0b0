/* fuzz_srtp.c: gpusrtpdec's receive path: SRTP and SRTCP packets from the
 * network through header parsing, MKI, index estimation (ROC), replay
 * window, tag check and decryption, as gpusrtpdec runs it: the batch entry
 * point of libgstgpustream (gst_gpustream_srtp_unprotect_batch, CPU
 * backend), against the scalar reference one packet at a time.
 *
 * Input: byte 0 picks the policy (the nine of kernels/tests/fuzz_srtp.c),
 * byte 1 the MKI (bit 0) and the replay window (16 << bits 1-2); then
 * chunks (fuzz.h), each an op byte and its bytes:
 *   op & 3 == 0  the bytes as they came off the wire
 *   op & 3 == 1  the bytes are an RTP / RTCP packet: protected with the
 *                same key (fuzz.h), then delivered as sent
 *   op & 3 == 2  protected, then byte u16(bytes 0-1) xor bytes[2] (the
 *                packet follows those 3 bytes)
 *   op & 3 == 3  protected, then cut to u16(bytes 0-1) bytes (the same)
 *   op & 4       RTCP, else RTP
 * Checks: the batch gives the scalar path's result and bytes for every
 * packet; a rejected packet is left byte for byte as it came; with
 * authentication no tampered or cut packet is ever accepted, and an
 * accepted protected packet comes out as the bytes that were protected
 * (without it, only that nothing crashes and the two paths agree). */
#include <string.h>
#include <gst/gst.h>

#include <gst/gpustream/gpssrtp.h>
#include <srtp/srtp_kernels.h>

#include "fuzz.h"

#define MAX_PACKETS 64
#define MAX_PACKET 2048
#define BATCH 16

static const GsSrtpPolicy policies[] = {
  GSRTP_AES_CM_128_HMAC_SHA1_80, GSRTP_AES_CM_128_HMAC_SHA1_32,
  GSRTP_AES_256_CM_HMAC_SHA1_80, GSRTP_AES_256_CM_HMAC_SHA1_32,
  GSRTP_AEAD_AES_128_GCM, GSRTP_AEAD_AES_256_GCM,
  { GSRTP_CIPHER_NULL, GSRTP_AUTH_HMAC_SHA1_80 },
  { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_NULL },
  { GSRTP_CIPHER_NULL, GSRTP_AUTH_NULL },
};
#define N_POLICIES (sizeof policies / sizeof *policies)

typedef struct {
  uint8_t *wire;                /* exactly len bytes, as received */
  size_t len;
  int rtcp;
  int tampered;                 /* changed or cut after protection */
  uint8_t *plain;               /* what was protected (NULL for raw bytes) */
  size_t plain_len;
} Packet;

static GsSrtpCtx tx, rx_scalar, rx_batch;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  gst_init (NULL, NULL);
  return 0;
}

static int
authenticated (GsSrtpPolicy p)
{
  return p.cipher == GSRTP_CIPHER_AES_128_GCM
      || p.cipher == GSRTP_CIPHER_AES_256_GCM || p.auth != GSRTP_AUTH_NULL;
}

/* One chunk into a packet; 0 when it makes none (protect refused it). */
static int
make_packet (Packet *pk, const uint8_t *c, size_t len)
{
  uint8_t op = c[0], buf[MAX_PACKET + 64];
  size_t pos = 0, out = 0;
  uint8_t x = 0;
  GsSrtpResult r;

  memset (pk, 0, sizeof *pk);
  pk->rtcp = (op & 4) != 0;
  c++;
  len--;
  if ((op & 3) >= 2) {
    if (len < 3)
      return 0;
    pos = ((size_t) c[0] << 8) | c[1];
    x = c[2];
    c += 3;
    len -= 3;
  }
  if (len > MAX_PACKET)
    len = MAX_PACKET;
  if ((op & 3) == 0) {
    pk->wire = malloc (len ? len : 1);
    memcpy (pk->wire, c, len);
    pk->len = len;
    return 1;
  }
  memcpy (buf, c, len);
  r = pk->rtcp ? gsrtp_rtcp_protect (&tx, buf, len, sizeof buf, &out)
      : gsrtp_rtp_protect (&tx, buf, len, sizeof buf, &out);
  if (r != GSRTP_OK)
    return 0;
  pk->plain = malloc (len ? len : 1);
  memcpy (pk->plain, c, len);
  pk->plain_len = len;
  if ((op & 3) == 2 && pos < out && x != 0) {
    buf[pos] ^= x;
    pk->tampered = 1;
  } else if ((op & 3) == 3 && pos < out) {
    out = pos;
    pk->tampered = 1;
  }
  pk->wire = malloc (out ? out : 1);
  memcpy (pk->wire, buf, out);
  pk->len = out;
  return 1;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  FuzzReader rd = { data, size };
  Packet pk[MAX_PACKETS];
  GsSrtpPacket batch[MAX_PACKETS];
  GsSrtpResult res[MAX_PACKETS];
  uint8_t *scalar[MAX_PACKETS];
  size_t scalar_len[MAX_PACKETS];
  uint8_t b0 = 0, b1 = 0;
  GsSrtpPolicy pol;
  size_t key_len;
  uint32_t window;
  const uint8_t *chunk;
  size_t len, n = 0, i;

  fuzz_byte (&rd, &b0);
  fuzz_byte (&rd, &b1);
  pol = policies[b0 % N_POLICIES];
  key_len = gsrtp_master_key_len (pol.cipher) +
      gsrtp_master_salt_len (pol.cipher);
  window = 16u << ((b1 >> 1) & 3);
  FUZZ_CHECK (gsrtp_ctx_init (&tx, pol, pol, fuzz_srtp_key, key_len, 0)
      == GSRTP_OK, "sender context");
  gsrtp_ctx_init (&rx_scalar, pol, pol, fuzz_srtp_key, key_len, window);
  gsrtp_ctx_init (&rx_batch, pol, pol, fuzz_srtp_key, key_len, window);
  if (b1 & 1) {
    gsrtp_ctx_set_mki (&tx, fuzz_srtp_mki, sizeof fuzz_srtp_mki);
    gsrtp_ctx_set_mki (&rx_scalar, fuzz_srtp_mki, sizeof fuzz_srtp_mki);
    gsrtp_ctx_set_mki (&rx_batch, fuzz_srtp_mki, sizeof fuzz_srtp_mki);
  }

  while (n < MAX_PACKETS && fuzz_chunk (&rd, &chunk, &len))
    if (len > 0 && make_packet (&pk[n], chunk, len))
      n++;

  /* the scalar reference, one by one */
  for (i = 0; i < n; i++) {
    size_t out = 0;
    scalar[i] = malloc (pk[i].len ? pk[i].len : 1);
    memcpy (scalar[i], pk[i].wire, pk[i].len);
    res[i] = pk[i].rtcp ? gsrtp_rtcp_unprotect (&rx_scalar, scalar[i],
        pk[i].len, &out) : gsrtp_rtp_unprotect (&rx_scalar, scalar[i],
        pk[i].len, &out);
    if (res[i] == GSRTP_OK) {
      scalar_len[i] = out;
      FUZZ_CHECK (out <= pk[i].len, "unprotect grew a packet");
      FUZZ_CHECK (!authenticated (pol) || !pk[i].tampered,
          "packet %zu: tampered, accepted (%s)", i,
          pk[i].rtcp ? "SRTCP" : "SRTP");
      /* without authentication anything decrypts, and an earlier forged
       * packet may have moved the ROC the receiver guesses */
      FUZZ_CHECK (!authenticated (pol) || !pk[i].plain
          || (out == pk[i].plain_len
              && memcmp (scalar[i], pk[i].plain, out) == 0)
          || pk[i].tampered, "packet %zu: accepted, but not the bytes that "
          "were protected", i);
    } else {
      scalar_len[i] = pk[i].len;
      FUZZ_CHECK (memcmp (scalar[i], pk[i].wire, pk[i].len) == 0,
          "packet %zu: rejected (%s) but changed", i,
          gsrtp_result_name (res[i]));
    }
  }

  if (getenv ("FUZZ_VERBOSE")) {
    /* what happened to each packet: for looking at a seed or a crash */
    for (i = 0; i < n; i++)
      fprintf (stderr, "%s packet %zu (%zu bytes%s): %s\n", pk[i].rtcp ?
          "SRTCP" : "SRTP", i, pk[i].len, pk[i].tampered ? ", tampered" : "",
          gsrtp_result_name (res[i]));
  }

  /* gpusrtpdec's path: batches of up to BATCH, in order, on a twin */
  for (i = 0; i < n; i++) {
    batch[i].ctx = &rx_batch;
    batch[i].data = malloc (pk[i].len ? pk[i].len : 1);
    memcpy (batch[i].data, pk[i].wire, pk[i].len);
    batch[i].len = (uint32_t) pk[i].len;
    batch[i].cap = (uint32_t) pk[i].len;
    batch[i].is_rtcp = (uint32_t) pk[i].rtcp;
    batch[i].result = GSRTP_OK;
  }
  for (i = 0; i < n; i += BATCH)
    gst_gpustream_srtp_unprotect_batch (batch + i, MIN (BATCH, n - i),
        GST_GPUSTREAM_BACKEND_CPU, NULL, NULL);
  for (i = 0; i < n; i++) {
    FUZZ_CHECK (batch[i].result == res[i], "packet %zu: batch %s, scalar %s",
        i, gsrtp_result_name (batch[i].result), gsrtp_result_name (res[i]));
    FUZZ_CHECK (batch[i].len == scalar_len[i] && memcmp (batch[i].data,
            scalar[i], scalar_len[i]) == 0, "packet %zu: batch and scalar "
        "bytes differ", i);
    free (batch[i].data);
    free (scalar[i]);
    free (pk[i].wire);
    free (pk[i].plain);
  }
  gsrtp_ctx_clear (&tx);
  gsrtp_ctx_clear (&rx_scalar);
  gsrtp_ctx_clear (&rx_batch);
  return 0;
}
