/* fuzz_srtp.c: the SRTP / SRTCP unprotect path takes bytes from the network.
 * Seeded random mutations of valid packets (bit flips, truncation, growth,
 * CSRC count, header extension length, version, the MKI, random bytes) for
 * every profile with and without an MKI, each packet in a heap block of its
 * exact size (so the AddressSanitizer build catches any read past it).
 * Checks: never a crash; the batched path gives the scalar path's result and
 * bytes for every packet; with authentication, nothing but an unmodified
 * packet is ever accepted, and a rejected packet is left as it came. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "srtp/srtp_kernels.h"

static int n_pass, n_fail;

static void
check (int ok, const char *what)
{
  if (ok) {
    n_pass++;
    printf ("ok - %s\n", what);
  } else {
    n_fail++;
    printf ("FAIL - %s\n", what);
  }
}

static uint32_t rs = 0x2545f491;
static uint32_t
rnd (void)
{
  rs ^= rs << 13;
  rs ^= rs >> 17;
  rs ^= rs << 5;
  return rs;
}

static const GsSrtpPolicy policies[] = {
  GSRTP_AES_CM_128_HMAC_SHA1_80, GSRTP_AES_CM_128_HMAC_SHA1_32,
  GSRTP_AES_256_CM_HMAC_SHA1_80, GSRTP_AES_256_CM_HMAC_SHA1_32,
  GSRTP_AEAD_AES_128_GCM, GSRTP_AEAD_AES_256_GCM,
  { GSRTP_CIPHER_NULL, GSRTP_AUTH_HMAC_SHA1_80 },
  { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_NULL },
  { GSRTP_CIPHER_NULL, GSRTP_AUTH_NULL },
};
#define N_POL (sizeof policies / sizeof *policies)

enum { N_VALID = 64, ITER = 3000, BATCH = 16 };

typedef struct {
  uint8_t plain[1600], prot[1700];
  size_t plain_len, prot_len;
  int rtcp;
} Valid;

/* One mutated copy of v in an exact-size heap block; *len_out its size. */
static uint8_t *
mutate (const Valid *v, size_t *len_out, int *untouched)
{
  size_t len = v->prot_len, i;
  uint8_t tmp[1800];
  int kind = (int) (rnd () % 10);
  uint8_t *out;
  memcpy (tmp, v->prot, len);
  *untouched = 0;
  switch (kind) {
    case 0:                    /* as sent (a replay after the first time) */
      *untouched = 1;
      break;
    case 1:                    /* 1 to 3 flipped bits anywhere */
      for (i = 0, kind = 1 + (int) (rnd () % 3); (int) i < kind; i++)
        tmp[rnd () % len] ^= (uint8_t) (1u << (rnd () % 8));
      break;
    case 2:                    /* truncated */
      len = rnd () % len;
      break;
    case 3:                    /* grown by random bytes */
      for (i = 0, kind = 1 + (int) (rnd () % 40); (int) i < kind; i++)
        tmp[len++] = (uint8_t) rnd ();
      break;
    case 4:                    /* CSRC count */
      tmp[0] = (uint8_t) ((tmp[0] & 0xf0) | (rnd () % 16));
      break;
    case 5:                    /* extension bit and a random extension length */
      tmp[0] |= 0x10;
      if (len > 16) {
        tmp[14] = (uint8_t) rnd ();
        tmp[15] = (uint8_t) rnd ();
      }
      break;
    case 6:                    /* version */
      tmp[0] = (uint8_t) ((tmp[0] & 0x3f) | ((rnd () % 4) << 6));
      break;
    case 7:                    /* the last bytes (tag, MKI, trailer) */
      tmp[len - 1 - rnd () % (len < 24 ? len : 24)] ^= 0x80;
      break;
    case 8:                    /* random bytes of a random length */
      len = rnd () % 200;
      for (i = 0; i < len; i++)
        tmp[i] = (uint8_t) rnd ();
      break;
    default:                   /* a short packet of header bytes */
      len = rnd () % 30;
      break;
  }
  out = malloc (len ? len : 1);
  memcpy (out, tmp, len);
  *len_out = len;
  return out;
}

static void
fuzz_policy (GsSrtpPolicy pol, unsigned mki_len)
{
  static Valid valid[N_VALID];
  uint8_t key[46], mki[8];
  size_t kl = gsrtp_master_key_len (pol.cipher) + gsrtp_master_salt_len (pol.cipher);
  int authenticated = pol.cipher == GSRTP_CIPHER_AES_128_GCM
      || pol.cipher == GSRTP_CIPHER_AES_256_GCM || pol.auth != GSRTP_AUTH_NULL;
  GsSrtpCtx tx, rx_s, rx_b;
  int differ = 0, forged = 0, changed = 0, accepted = 0, it;
  char what[160];
  for (size_t i = 0; i < kl; i++)
    key[i] = (uint8_t) rnd ();
  for (size_t i = 0; i < sizeof mki; i++)
    mki[i] = (uint8_t) rnd ();
  gsrtp_ctx_init (&tx, pol, pol, key, kl, 0);
  gsrtp_ctx_init (&rx_s, pol, pol, key, kl, 1024);
  gsrtp_ctx_init (&rx_b, pol, pol, key, kl, 1024);
  gsrtp_ctx_set_mki (&tx, mki, mki_len);
  gsrtp_ctx_set_mki (&rx_s, mki, mki_len);
  gsrtp_ctx_set_mki (&rx_b, mki, mki_len);

  for (it = 0; it < ITER; it += BATCH) {
    uint8_t *bufs_s[BATCH], *bufs_b[BATCH];
    size_t lens[BATCH], in_len[BATCH];     /* scalar output, received */
    int untouched[BATCH], src[BATCH];
    GsSrtpResult res_s[BATCH];
    GsSrtpPacket pk[BATCH];
    int j;
    /* fresh valid packets now and then, sequence numbers moving on */
    if (it % (4 * BATCH) == 0) {
      for (j = 0; j < N_VALID; j++) {
        Valid *v = &valid[j];
        size_t hl = 12, pl = rnd () % 300, o;
        v->rtcp = rnd () % 5 == 0;
        if (v->rtcp) {
          v->plain_len = 8 + 4 * (rnd () % 40);
          v->plain[0] = 0x80;
          v->plain[1] = 200;
          for (o = 2; o < v->plain_len; o++)
            v->plain[o] = (uint8_t) rnd ();
          v->plain[4] = 0; v->plain[5] = 0; v->plain[6] = 0x12; v->plain[7] = 0x34;
        } else {
          static uint16_t seq = 65000;
          v->plain[0] = 0x80;
          v->plain[1] = 96;
          v->plain[2] = (uint8_t) (seq >> 8);
          v->plain[3] = (uint8_t) seq;
          seq++;
          for (o = 4; o < 8; o++)
            v->plain[o] = (uint8_t) rnd ();
          v->plain[8] = 0; v->plain[9] = 0; v->plain[10] = 0x12; v->plain[11] = 0x34;
          for (o = hl; o < hl + pl; o++)
            v->plain[o] = (uint8_t) rnd ();
          v->plain_len = hl + pl;
        }
        memcpy (v->prot, v->plain, v->plain_len);
        if ((v->rtcp ? gsrtp_rtcp_protect (&tx, v->prot, v->plain_len, sizeof v->prot, &v->prot_len)
                     : gsrtp_rtp_protect (&tx, v->prot, v->plain_len, sizeof v->prot, &v->prot_len))
            != GSRTP_OK)
          differ++;
      }
    }
    for (j = 0; j < BATCH; j++) {
      src[j] = (int) (rnd () % N_VALID);
      bufs_s[j] = mutate (&valid[src[j]], &lens[j], &untouched[j]);
      in_len[j] = lens[j];
      bufs_b[j] = malloc (lens[j] ? lens[j] : 1);
      memcpy (bufs_b[j], bufs_s[j], lens[j]);
    }
    /* scalar, one by one */
    for (j = 0; j < BATCH; j++) {
      const Valid *v = &valid[src[j]];
      uint8_t before[1800];
      size_t out = 0;
      memcpy (before, bufs_s[j], lens[j]);
      res_s[j] = v->rtcp ? gsrtp_rtcp_unprotect (&rx_s, bufs_s[j], lens[j], &out)
                         : gsrtp_rtp_unprotect (&rx_s, bufs_s[j], lens[j], &out);
      if (res_s[j] == GSRTP_OK) {
        accepted++;
        if (authenticated && (!untouched[j] || out != v->plain_len
                || memcmp (bufs_s[j], v->plain, out) != 0)) {
          /* a mutation that leaves every authenticated byte alone (e.g. a
           * grown packet whose tag still lines up) would be fine; count
           * only content that differs from what was sent */
          if (out != v->plain_len || memcmp (bufs_s[j], v->plain, out) != 0)
            forged++;
        }
        lens[j] = out;
      } else if (memcmp (before, bufs_s[j], lens[j]) != 0) {
        changed++;
      }
    }
    /* the same packets as one batch on a twin receiver */
    for (j = 0; j < BATCH; j++)
      pk[j] = (GsSrtpPacket) { &rx_b, bufs_b[j], (uint32_t) in_len[j], 0,
        (uint32_t) valid[src[j]].rtcp, GSRTP_OK };
    gsrtp_unprotect_batch (pk, BATCH, GSRTP_IMPL_ACCEL);
    for (j = 0; j < BATCH; j++) {
      if (pk[j].result != res_s[j])
        differ++;
      else if (res_s[j] == GSRTP_OK && (pk[j].len != lens[j] || memcmp (bufs_b[j], bufs_s[j], lens[j])))
        differ++;
      free (bufs_s[j]);
      free (bufs_b[j]);
    }
  }
  snprintf (what, sizeof what, "cipher %d auth %d, MKI %u: batched == scalar over %d "
      "mutated packets (%d differ)", (int) pol.cipher, (int) pol.auth, mki_len, ITER, differ);
  check (differ == 0, what);
  if (authenticated) {
    snprintf (what, sizeof what, "cipher %d auth %d, MKI %u: no altered packet accepted "
        "(%d forged of %d accepted)", (int) pol.cipher, (int) pol.auth, mki_len, forged, accepted);
    check (forged == 0 && accepted > 0, what);
  }
  snprintf (what, sizeof what, "cipher %d auth %d, MKI %u: rejected packets left as they "
      "came (%d changed)", (int) pol.cipher, (int) pol.auth, mki_len, changed);
  check (changed == 0, what);
  gsrtp_ctx_clear (&tx);
  gsrtp_ctx_clear (&rx_s);
  gsrtp_ctx_clear (&rx_b);
}

int
main (void)
{
  for (size_t i = 0; i < N_POL; i++) {
    fuzz_policy (policies[i], 0);
    fuzz_policy (policies[i], 1 + (unsigned) (i % 7));
  }
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
