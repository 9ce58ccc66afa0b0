/* test_srtp_portable.c: the constant-time path of a CPU without AES-NI and
 * PCLMUL (srtp_portable.c: OpenSSL's AES, the masked GHASH multiply), forced
 * with gsrtp_set_force_portable on whatever CPU runs the test, against the
 * RFC 3711 (B.2, B.3) and RFC 7714 (16.1.1) test vectors and, on random
 * packets of every profile, against the accelerated path and the reference.
 * The meson test runs it with OpenSSL's AES-NI masked (OPENSSL_ia32cap), so
 * that OpenSSL's constant-time AES is the one checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_internal.h"
#include "kernel_check.h"
#include "hex_vectors.h"


static uint32_t rng = 0x2545f491u;

static uint32_t
rnd32 (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

static void
test_rfc3711 (void)
{
  uint32_t rk[60];
  uint8_t key[16], iv[16], ks[48], mk[16], ms[14], o[20];
  const GsAesTables *t = gsrtp_aes_tables ();
  uint32_t rk_ref[60];
  int nr;

  /* B.2: AES-CM keystream */
  hex ("2b7e151628aed2a6abf7158809cf4f3c", key, NULL);
  hex ("f0f1f2f3f4f5f6f7f8f9fafbfcfd0000", iv, NULL);
  nr = gsrtp_aes_expand_ct (key, 16, rk);
  check (nr == gs_aes_expand (t, key, 16, rk_ref) && memcmp (rk, rk_ref, 44 * 4) == 0,
      "constant-time AES-128 key expansion == reference");
  memset (ks, 0, sizeof ks);
  gsrtp_aes_ctr_portable (rk, nr, iv, ks, sizeof ks);
  check (eqhex (ks, "e03ead0935c95e80e166b16dd92b4eb4d23513162b02d0f72a43a2fe4a5f97ab"
                    "41e95b3bb0a2e8dd477901e4fca894c0"), "RFC 3711 B.2 AES-CM keystream (portable)");
  /* B.3: key derivation (always through srtp_portable.c) */
  hex ("e1f97a0d3e018be0d64fa32c06de4139", mk, NULL);
  hex ("0ec675ad498afeebb6960b3aabe6", ms, NULL);
  gsrtp_kdf (mk, 16, ms, 0, o, 16);
  check (eqhex (o, "c61e7a93744f39ee10734afe3ff7a087"), "RFC 3711 B.3 KDF cipher key");
  gsrtp_kdf (mk, 16, ms, 2, o, 14);
  check (eqhex (o, "30cbbc08863d8c85d49db34a9ae1"), "RFC 3711 B.3 KDF cipher salt");
  gsrtp_kdf (mk, 16, ms, 1, o, 20);
  check (eqhex (o, "cebe321f6ff7716b6fd4ab49af256a156d38baa4"), "RFC 3711 B.3 KDF auth key");

  /* AES-256 expansion, and the counter's low word wrapping as the
   * reference wraps it (without a carry into the word above) */
  {
    uint8_t k32[32], a[80], b[80];
    uint32_t r1[60], r2[60];
    for (int i = 0; i < 32; i++)
      k32[i] = (uint8_t) rnd32 ();
    nr = gsrtp_aes_expand_ct (k32, 32, r1);
    check (nr == 14 && gs_aes_expand (t, k32, 32, r2) == 14 && memcmp (r1, r2, 60 * 4) == 0,
        "constant-time AES-256 key expansion == reference");
    memset (iv, 0xab, 12);
    gs_st32 (iv + 12, 0xfffffffeu);
    memset (a, 0x5a, sizeof a);
    memcpy (b, a, sizeof b);
    gsrtp_aes_ctr_portable (r1, nr, iv, a, sizeof a);
    gs_aes_ctr_xor (t, r2, nr, iv, b, sizeof b);
    check (memcmp (a, b, sizeof a) == 0, "portable CTR == reference across a 32-bit counter wrap");
  }
}

/* RFC 7714 16.1.1: AEAD_AES_128_GCM, the session key and salt given
 * directly, SSRC 0x5501a0b2, ROC 0, sequence number 0xf17b */
static void
test_rfc7714 (int portable)
{
  static const char *plain = "8040f17b8041f8d35501a0b2"
      "47616c6c696120657374206f6d6e697320646976697361"
      "20696e207061727465732074726573";
  static const char *protected = "8040f17b8041f8d35501a0b2"
      "f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b36de3adf8833"
      "899d7f27beb16a9152cf765ee4390cce";
  GsSrtpPolicy gcm = { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL };
  GsSrtpCtx tx, rx, fresh;
  uint8_t master[28] = { 0 }, key[16], pkt[128], orig[128];
  size_t n;
  GsSrtpPacket p;

  gsrtp_set_force_portable (portable);
  check (gsrtp_force_portable () == portable, "portable path %s", portable ? "forced" : "off");
  check (gsrtp_ctx_init (&tx, gcm, gcm, master, sizeof master, 0) == GSRTP_OK, "GCM context");
  hex ("000102030405060708090a0b0c0d0e0f", key, NULL);
  tx.rtp_keys.rounds = (uint8_t) gsrtp_aes_expand_ct (key, 16, tx.rtp_keys.rk);
  memset (tx.rtp_keys.salt, 0, sizeof tx.rtp_keys.salt);
  hex ("517569642070726f2071756f", tx.rtp_keys.salt, NULL);
  memset (tx.rtp_keys.gcm_h, 0, 16);
  gs_aes_encrypt_block (gsrtp_aes_tables (), tx.rtp_keys.rk, tx.rtp_keys.rounds,
      tx.rtp_keys.gcm_h, tx.rtp_keys.gcm_h);
  memcpy (&fresh, &tx, sizeof fresh);
  memcpy (&rx, &fresh, sizeof rx);

  hex (plain, pkt, &n);
  memcpy (orig, pkt, n);
  p = (GsSrtpPacket) { &tx, pkt, (uint32_t) n, sizeof pkt, 0, 0 };
  gsrtp_protect_batch (&p, 1, GSRTP_IMPL_AUTO);
  check (p.result == GSRTP_OK && p.len == n + 16 && eqhex (pkt, protected),
      "RFC 7714 16.1.1 protect (%s)", portable ? "portable" : "accelerated");
  p = (GsSrtpPacket) { &rx, pkt, p.len, sizeof pkt, 0, 0 };
  gsrtp_unprotect_batch (&p, 1, GSRTP_IMPL_AUTO);
  check (p.result == GSRTP_OK && p.len == n && memcmp (pkt, orig, n) == 0,
      "RFC 7714 16.1.1 unprotect (%s)", portable ? "portable" : "accelerated");
  /* a flipped tag bit is refused and the packet left as it was */
  memcpy (&rx, &fresh, sizeof rx);
  hex (protected, pkt, &n);
  pkt[n - 1] ^= 0x01;
  p = (GsSrtpPacket) { &rx, pkt, (uint32_t) n, sizeof pkt, 0, 0 };
  gsrtp_unprotect_batch (&p, 1, GSRTP_IMPL_AUTO);
  pkt[n - 1] ^= 0x01;
  check (p.result == GSRTP_ERR_AUTH && eqhex (pkt, protected),
      "RFC 7714 16.1.1 with a flipped tag bit: auth-fail, packet untouched (%s)",
      portable ? "portable" : "accelerated");
  gsrtp_ctx_clear (&tx);
  gsrtp_ctx_clear (&rx);
  gsrtp_ctx_clear (&fresh);
  gsrtp_set_force_portable (0);
}

#define NCTX 6
#define NPKT 600

/* Random packets of every profile, the same stream three ways: portable,
 * accelerated, and the reference (GSRTP_IMPL_SCALAR); then unprotected on
 * the portable path. */
static void
test_random (void)
{
  static const GsSrtpPolicy pols[NCTX] = {
    { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80 },
    { GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_32 },
    { GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_80 },
    { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL },
    { GSRTP_CIPHER_AES_256_GCM, GSRTP_AUTH_NULL },
    { GSRTP_CIPHER_NULL, GSRTP_AUTH_HMAC_SHA1_80 },
  };
  static GsSrtpCtx ptx[NCTX], atx[NCTX], stx[NCTX], prx[NCTX];
  static uint8_t orig[NPKT][1600], pb[NPKT][1600], ab[NPKT][1600], sb[NPKT][1600];
  static GsSrtpPacket pp[NPKT], ap[NPKT], sp[NPKT];
  static uint16_t seqs[NCTX];
  static uint32_t olen[NPKT];
  int bad_a = 0, bad_s = 0, bad_rx = 0, c, i;

  for (c = 0; c < NCTX; c++) {
    uint8_t key[46];
    size_t kl = gsrtp_master_key_len (pols[c].cipher) + gsrtp_master_salt_len (pols[c].cipher);
    for (size_t j = 0; j < kl; j++)
      key[j] = (uint8_t) rnd32 ();
    check (gsrtp_ctx_init (&ptx[c], pols[c], pols[c], key, kl, 0) == GSRTP_OK, "context %d", c);
    memcpy (&atx[c], &ptx[c], sizeof ptx[c]);
    memcpy (&stx[c], &ptx[c], sizeof ptx[c]);
    memcpy (&prx[c], &ptx[c], sizeof ptx[c]);
    seqs[c] = (uint16_t) (65500 + 7 * c);     /* ROC steps inside the stream */
  }
  for (i = 0; i < NPKT; i++) {
    int rtcp = rnd32 () % 8 == 0;
    uint32_t len = rtcp ? 8 + rnd32 () % 1400 : 12 + rnd32 () % 1480;
    c = (int) (rnd32 () % NCTX);
    for (uint32_t j = 0; j < len; j++)
      orig[i][j] = (uint8_t) rnd32 ();
    orig[i][0] = 0x80;
    if (rtcp) {
      orig[i][1] = 200;
    } else {
      orig[i][1] = 96;
      orig[i][2] = (uint8_t) (seqs[c] >> 8);
      orig[i][3] = (uint8_t) seqs[c];
      seqs[c]++;
    }
    gs_st32 (orig[i] + (rtcp ? 4 : 8), 0x1000u + (uint32_t) c);
    olen[i] = len;
    memcpy (pb[i], orig[i], len);
    memcpy (ab[i], orig[i], len);
    memcpy (sb[i], orig[i], len);
    pp[i] = (GsSrtpPacket) { &ptx[c], pb[i], len, 1600, (uint32_t) rtcp, 0 };
    ap[i] = (GsSrtpPacket) { &atx[c], ab[i], len, 1600, (uint32_t) rtcp, 0 };
    sp[i] = (GsSrtpPacket) { &stx[c], sb[i], len, 1600, (uint32_t) rtcp, 0 };
  }
  gsrtp_set_force_portable (1);
  check (gsrtp_protect_batch (pp, NPKT, GSRTP_IMPL_AUTO) == NPKT, "portable protects %d packets", NPKT);
  gsrtp_set_force_portable (0);
  gsrtp_protect_batch (ap, NPKT, GSRTP_IMPL_AUTO);
  gsrtp_protect_batch (sp, NPKT, GSRTP_IMPL_SCALAR);
  for (i = 0; i < NPKT; i++) {
    if (ap[i].len != pp[i].len || memcmp (ab[i], pb[i], pp[i].len))
      bad_a++;
    if (sp[i].len != pp[i].len || memcmp (sb[i], pb[i], pp[i].len))
      bad_s++;
  }
  check (bad_a == 0, "portable protect == accelerated (cpu features 0x%x), %d packets (%d differ)",
      gsrtp_cpu_features (), NPKT, bad_a);
  check (bad_s == 0, "portable protect == reference (%d differ)", bad_s);

  gsrtp_set_force_portable (1);
  for (i = 0; i < NPKT; i++)
    pp[i].ctx = &prx[pp[i].ctx - ptx];
  gsrtp_unprotect_batch (pp, NPKT, GSRTP_IMPL_AUTO);
  gsrtp_set_force_portable (0);
  for (i = 0; i < NPKT; i++)
    if (pp[i].result != GSRTP_OK || pp[i].len != olen[i] || memcmp (pb[i], orig[i], olen[i]))
      bad_rx++;
  check (bad_rx == 0, "portable unprotect gives back every packet (%d differ)", bad_rx);
  for (c = 0; c < NCTX; c++) {
    gsrtp_ctx_clear (&ptx[c]);
    gsrtp_ctx_clear (&atx[c]);
    gsrtp_ctx_clear (&stx[c]);
    gsrtp_ctx_clear (&prx[c]);
  }
}

int
main (void)
{
  test_rfc3711 ();
  test_rfc7714 (1);
  test_rfc7714 (0);
  test_random ();
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
