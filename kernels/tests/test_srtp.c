/* test_srtp.c: kernels/srtp against published vectors (FIPS-197, FIPS 180,
 * RFC 2202, RFC 3711 B.2/B.3, SP 800-38D), byte for byte against libsrtp2
 * (protect both ways, unprotect both ways) and OpenSSL's GCM, the batched
 * and GPU-emulation paths against the scalar reference, negative cases and
 * ROC estimation, the multi-buffer SHA-1 against FIPS 180 and the scalar one,
 * the batch under each SHA-1 implementation. One line per check, then "N passed, N failed". Keys are
 * never printed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_internal.h"
#include "srtp/srtp_sha1_mb.h"
#ifdef HAVE_LIBSRTP2
#include <srtp2/srtp.h>
#endif
#ifdef HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif

#include "kernel_check.h"
#include "hex_vectors.h"

static uint32_t rs = 0x12345678;
static uint32_t
rnd32 (void)
{
  rs ^= rs << 13; rs ^= rs >> 17; rs ^= rs << 5;
  return rs;
}
static void
rnd_fill (uint8_t *p, size_t n)
{
  while (n--)
    *p++ = (uint8_t) rnd32 ();
}


/* ---- primitives ---- */
static void
test_vectors (void)
{
  const GsAesTables *t = gsrtp_aes_tables ();
  uint8_t key[80], in[16], out[64], buf[256];
  uint32_t rk[60];
  size_t n;
  int nr;

  hex ("000102030405060708090a0b0c0d0e0f", key, NULL);
  hex ("00112233445566778899aabbccddeeff", in, NULL);
  nr = gs_aes_expand (t, key, 16, rk);
  gs_aes_encrypt_block (t, rk, nr, in, out);
  check (nr == 10 && eqhex (out, "69c4e0d86a7b0430d8cdb78070b4c55a"), "FIPS-197 C.1 AES-128");
  hex ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", key, NULL);
  nr = gs_aes_expand (t, key, 32, rk);
  gs_aes_encrypt_block (t, rk, nr, in, out);
  check (nr == 14 && eqhex (out, "8ea2b7ca516745bfeafc49904b496089"), "FIPS-197 C.3 AES-256");

  gsrtp_sha1 ((const uint8_t *) "abc", 3, out);
  check (eqhex (out, "a9993e364706816aba3e25717850c26c9cd0d89d"), "SHA-1 \"abc\"");
  {
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    gsrtp_sha1 ((const uint8_t *) m, strlen (m), out);
    check (eqhex (out, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"), "SHA-1 448-bit message");
  }
  {
    uint8_t *m = malloc (1000000);
    memset (m, 'a', 1000000);
    gsrtp_sha1 (m, 1000000, out);
    check (eqhex (out, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"), "SHA-1 a million 'a'");
    free (m);
  }

  {
    struct { const char *key; int krep; int klen; const char *data; int drep; int dlen; const char *mac; } v[] = {
      { "0b", 20, 0, "Hi There", 0, 0, "b617318655057264e28bc0b6fb378c8ef146be00" },
      { "Jefe", -1, 0, "what do ya want for nothing?", 0, 0, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" },
      { "aa", 20, 0, "\xdd", 50, 0, "125d7342b9ac11cd91a39af48aa17b4f63f175d3" },
      { "0102030405060708090a0b0c0d0e0f10111213141516171819", 1, 0, "\xcd", 50, 0,
        "4c9007f4026250c6bc8414f9bf50c86c2d7235da" },
      { "0c", 20, 0, "Test With Truncation", 0, 0, "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04" },
      { "aa", 80, 0, "Test Using Larger Than Block-Size Key - Hash Key First", 0, 0,
        "aa4ae5e15272d00e95705637ce8a3b55ed402112" },
      { "aa", 80, 0, "Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data", 0, 0,
        "e8e99d0f45237d786d6bbaa7965c7808bbff1a91" },
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
      size_t kl, dl;
      if (v[i].krep < 0) {
        kl = strlen (v[i].key);
        memcpy (key, v[i].key, kl);
      } else {
        uint8_t k1[64];
        size_t k1n;
        hex (v[i].key, k1, &k1n);
        kl = 0;
        for (int r = 0; r < v[i].krep; r++) {
          memcpy (key + kl, k1, k1n);
          kl += k1n;
        }
      }
      if (v[i].drep) {
        memset (buf, v[i].data[0], v[i].drep);
        dl = v[i].drep;
      } else {
        dl = strlen (v[i].data);
        memcpy (buf, v[i].data, dl);
      }
      gsrtp_hmac_sha1 (key, kl, buf, dl, out);
      check (eqhex (out, v[i].mac), "RFC 2202 HMAC-SHA1 case %zu", i + 1);
    }
  }

  /* RFC 3711 B.2: AES-CM keystream, salt F0..FD, SSRC 0, index 0 */
  {
    uint8_t iv[16], ks[48];
    hex ("2b7e151628aed2a6abf7158809cf4f3c", key, NULL);
    hex ("f0f1f2f3f4f5f6f7f8f9fafbfcfd0000", iv, NULL);
    nr = gs_aes_expand (t, key, 16, rk);
    memset (ks, 0, sizeof ks);
    gs_aes_ctr_xor (t, rk, nr, iv, ks, sizeof ks);
    check (eqhex (ks, "e03ead0935c95e80e166b16dd92b4eb4d23513162b02d0f72a43a2fe4a5f97ab"
                      "41e95b3bb0a2e8dd477901e4fca894c0"), "RFC 3711 B.2 AES-CM keystream");
  }
  /* RFC 3711 B.3: key derivation */
  {
    uint8_t mk[16], ms[14], o[20];
    hex ("e1f97a0d3e018be0d64fa32c06de4139", mk, NULL);
    hex ("0ec675ad498afeebb6960b3aabe6", ms, NULL);
    gsrtp_kdf (mk, 16, ms, 0, o, 16);
    check (eqhex (o, "c61e7a93744f39ee10734afe3ff7a087"), "RFC 3711 B.3 KDF cipher key");
    gsrtp_kdf (mk, 16, ms, 2, o, 14);
    check (eqhex (o, "30cbbc08863d8c85d49db34a9ae1"), "RFC 3711 B.3 KDF cipher salt");
    gsrtp_kdf (mk, 16, ms, 1, o, 20);
    check (eqhex (o, "cebe321f6ff7716b6fd4ab49af256a156d38baa4"), "RFC 3711 B.3 KDF auth key");
  }
  /* SP 800-38D (GCM spec) test cases 1 and 2: zero key, zero IV */
  {
    GsSrtpKeys k;
    uint8_t iv[12] = { 0 }, p[16] = { 0 }, tag[16];
    memset (&k, 0, sizeof k);
    memset (key, 0, 16);
    k.rounds = (uint8_t) gs_aes_expand (t, key, 16, k.rk);
    gs_aes_encrypt_block (t, k.rk, k.rounds, k.gcm_h, k.gcm_h);
    gs_gcm_tag (t, &k, iv, p, 0, p, 0, p, 0, tag);
    check (eqhex (tag, "58e2fccefa7e3061367f1d57a4e7455a"), "GCM test case 1 (empty)");
    gs_gcm_ctr (t, &k, iv, p, 16);
    gs_gcm_tag (t, &k, iv, p, 0, p, 0, p, 16, tag);
    check (eqhex (p, "0388dace60b6a392f328c2b971b2fe78") && eqhex (tag, "ab6e47d42cec13bdf53a67b21257bddf"),
        "GCM test case 2 (one zero block)");
  }
  (void) n;
}

#ifdef HAVE_LIBCRYPTO
/* Our GCM (GS_HD, as used in SRTP) against OpenSSL EVP AES-GCM. */
static void
test_gcm_openssl (void)
{
  const GsAesTables *t = gsrtp_aes_tables ();
  int bad = 0, cases = 0;
  for (int kl = 16; kl <= 32; kl += 16) {
    for (int c = 0; c < 200; c++) {
      uint8_t key[32], iv[12], aad[64], pt[600], ct[600], ot[600], tag[16], otag[16];
      GsSrtpKeys k;
      int alen = (int) (rnd32 () % 64), plen = (int) (rnd32 () % 600), ol;
      rnd_fill (key, kl); rnd_fill (iv, 12); rnd_fill (aad, alen); rnd_fill (pt, plen);
      memset (&k, 0, sizeof k);
      k.rounds = (uint8_t) gs_aes_expand (t, key, kl, k.rk);
      gs_aes_encrypt_block (t, k.rk, k.rounds, k.gcm_h, k.gcm_h);
      memcpy (ct, pt, plen);
      gs_gcm_ctr (t, &k, iv, ct, plen);
      gs_gcm_tag (t, &k, iv, aad, alen, aad, 0, ct, plen, tag);
      EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new ();
      EVP_EncryptInit_ex (x, kl == 16 ? EVP_aes_128_gcm () : EVP_aes_256_gcm (), NULL, key, iv);
      EVP_EncryptUpdate (x, NULL, &ol, aad, alen);
      EVP_EncryptUpdate (x, ot, &ol, pt, plen);
      EVP_EncryptFinal_ex (x, ot + ol, &ol);
      EVP_CIPHER_CTX_ctrl (x, EVP_CTRL_GCM_GET_TAG, 16, otag);
      EVP_CIPHER_CTX_free (x);
      cases++;
      if (memcmp (ct, ot, plen) || memcmp (tag, otag, 16))
        bad++;
    }
  }
  check (bad == 0, "AES-128/256-GCM == OpenSSL EVP (%d random cases, %d differ)", cases, bad);
}
#endif

/* ---- packets ---- */
typedef struct {
  const char *name;
  GsSrtpPolicy pol;
#ifdef HAVE_LIBSRTP2
  void (*set) (srtp_crypto_policy_t *);
#endif
} Profile;

#ifdef HAVE_LIBSRTP2
static void set_80 (srtp_crypto_policy_t *p) { srtp_crypto_policy_set_rtp_default (p); }
#define P(name, c, a, fn) { name, { c, a }, fn }
#else
#define P(name, c, a, fn) { name, { c, a } }
#endif

static const Profile profiles[] = {
  P ("AES_CM_128_HMAC_SHA1_80", GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80, set_80),
  P ("AES_CM_128_HMAC_SHA1_32", GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_32,
      srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32),
  P ("AES_256_CM_HMAC_SHA1_80", GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_80,
      srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80),
  P ("AES_256_CM_HMAC_SHA1_32", GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_32,
      srtp_crypto_policy_set_aes_cm_256_hmac_sha1_32),
  P ("AEAD_AES_128_GCM", GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL,
      srtp_crypto_policy_set_aes_gcm_128_16_auth),
  P ("AEAD_AES_256_GCM", GSRTP_CIPHER_AES_256_GCM, GSRTP_AUTH_NULL,
      srtp_crypto_policy_set_aes_gcm_256_16_auth),
  P ("NULL_HMAC_SHA1_80", GSRTP_CIPHER_NULL, GSRTP_AUTH_HMAC_SHA1_80,
      srtp_crypto_policy_set_null_cipher_hmac_sha1_80),
  P ("AES_CM_128_NULL_AUTH", GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_NULL,
      srtp_crypto_policy_set_aes_cm_128_null_auth),
  P ("AES_256_CM_NULL_AUTH", GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_NULL,
      srtp_crypto_policy_set_aes_cm_256_null_auth),
  P ("NULL_NULL", GSRTP_CIPHER_NULL, GSRTP_AUTH_NULL,
      srtp_crypto_policy_set_null_cipher_hmac_null),
};
#define N_PROFILES (sizeof profiles / sizeof *profiles)

/* An RTP packet: variant bit 0 = 2 CSRCs, bit 1 = header extension. */
static size_t
make_rtp (uint8_t *p, uint32_t ssrc, uint16_t seq, int variant, size_t payload)
{
  size_t hl = 12;
  int cc = (variant & 1) ? 2 : 0;
  p[0] = (uint8_t) (0x80 | cc | ((variant & 2) ? 0x10 : 0));
  p[1] = (uint8_t) (rnd32 () & 0xff);
  p[2] = (uint8_t) (seq >> 8);
  p[3] = (uint8_t) seq;
  gs_st32 (p + 4, rnd32 ());
  gs_st32 (p + 8, ssrc);
  rnd_fill (p + 12, 4 * cc);
  hl += 4 * cc;
  if (variant & 2) {
    p[hl] = 0xbe; p[hl + 1] = 0xde; p[hl + 2] = 0; p[hl + 3] = 3;
    rnd_fill (p + hl + 4, 12);
    hl += 16;
  }
  rnd_fill (p + hl, payload);
  return hl + payload;
}

static size_t
make_rtcp (uint8_t *p, uint32_t ssrc, size_t body)
{
  size_t len = 8 + (body & ~(size_t) 3);
  p[0] = 0x80 | 1;
  p[1] = 200;
  p[2] = (uint8_t) ((len / 4 - 1) >> 8);
  p[3] = (uint8_t) (len / 4 - 1);
  gs_st32 (p + 4, ssrc);
  rnd_fill (p + 8, len - 8);
  return len;
}

#ifdef HAVE_LIBSRTP2
/* mki_len > 0: the key goes in as libsrtp's one master key with that MKI */
static srtp_t
lib_session (const Profile *pr, uint8_t *key, int outbound, uint8_t *mki, unsigned mki_len)
{
  srtp_policy_t pol;
  srtp_master_key_t mk = { key, mki, mki_len };
  srtp_master_key_t *mks[1] = { &mk };
  srtp_t s = NULL;
  memset (&pol, 0, sizeof pol);
  pr->set (&pol.rtp);
  pr->set (&pol.rtcp);
  pol.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound;
  if (mki_len) {
    pol.keys = mks;
    pol.num_master_keys = 1;
  } else {
    pol.key = key;
  }
  pol.window_size = 128;
  if (srtp_create (&s, &pol) != srtp_err_status_ok)
    return NULL;
  return s;
}

/* Every payload size 0..1500 across 3 SSRCs, sequence numbers from 65500 so
 * each SSRC wraps (ROC 0 -> 1), four header shapes; SRTCP every 8th. With
 * mki_len > 0 every packet carries that MKI (srtp_protect_mki). */
static void
test_libsrtp_profile (const Profile *pr, unsigned mki_len)
{
  uint8_t mki[GSRTP_MAX_MKI];
  int use_mki = mki_len > 0;
  char name[96];
  enum { NS = 3 };
  uint8_t key[46], a[1800], b[1800], orig[1800];   /* room for a 128-byte MKI */
  size_t kl = gsrtp_master_key_len (pr->pol.cipher) + gsrtp_master_salt_len (pr->pol.cipher);
  GsSrtpCtx tx[NS], rx[NS];
  uint32_t ssrc[NS];
  uint16_t seq[NS];
  srtp_t ltx, lrx_ours, lrx_lib;
  int diff = 0, ours_rejected = 0, lib_rejected = 0, n = 0, rdiff = 0, rn = 0, rrej = 0;
  rnd_fill (key, kl);
  rnd_fill (mki, sizeof mki);
  if (mki_len)
    snprintf (name, sizeof name, "%s, %u-byte MKI", pr->name, mki_len);
  else
    snprintf (name, sizeof name, "%s", pr->name);
  ltx = lib_session (pr, key, 1, mki, mki_len);
  lrx_ours = lib_session (pr, key, 0, mki, mki_len);
  lrx_lib = NULL;
  if (!ltx || !lrx_ours) {
    printf ("SKIP - %s: this libsrtp2 build does not offer it\n", name);
    if (ltx) srtp_dealloc (ltx);
    if (lrx_ours) srtp_dealloc (lrx_ours);
    return;
  }
  (void) lrx_lib;
  for (int i = 0; i < NS; i++) {
    ssrc[i] = rnd32 ();
    seq[i] = (uint16_t) (65500 + i);
    gsrtp_ctx_init (&tx[i], pr->pol, pr->pol, key, kl, 0);
    gsrtp_ctx_init (&rx[i], pr->pol, pr->pol, key, kl, 0);
    gsrtp_ctx_set_mki (&tx[i], mki, mki_len);
    gsrtp_ctx_set_mki (&rx[i], mki, mki_len);
  }
  for (int size = 0; size <= 1500; size++) {
    int s = size % NS, lenb;
    size_t len = make_rtp (orig, ssrc[s], seq[s]++, size & 3, (size_t) size), ol, dl;
    memcpy (a, orig, len);
    memcpy (b, orig, len);
    lenb = (int) len;
    GsSrtpResult r = gsrtp_rtp_protect (&tx[s], a, len, sizeof a, &ol);
    srtp_err_status_t e = srtp_protect_mki (ltx, b, &lenb, use_mki, 0);
    n++;
    if (r != GSRTP_OK || e != srtp_err_status_ok || ol != (size_t) lenb || memcmp (a, b, ol)) {
      if (diff++ < 3)
        printf ("  %s: size %d differs (ours %s len %zu, libsrtp %d len %d)\n", name, size,
            gsrtp_result_name (r), ol, (int) e, lenb);
      continue;
    }
    /* libsrtp unprotects ours; we unprotect libsrtp's (the same bytes) */
    {
      int l2 = (int) ol;
      if (srtp_unprotect_mki (lrx_ours, a, &l2, use_mki) != srtp_err_status_ok || l2 != (int) len || memcmp (a, orig, len))
        lib_rejected++;
      if (gsrtp_rtp_unprotect (&rx[s], b, ol, &dl) != GSRTP_OK || dl != len || memcmp (b, orig, len))
        ours_rejected++;
    }
    if (size % 8 == 0) {
      size_t rl = make_rtcp (orig, ssrc[s], (size_t) size / 2);
      memcpy (a, orig, rl);
      memcpy (b, orig, rl);
      lenb = (int) rl;
      r = gsrtp_rtcp_protect (&tx[s], a, rl, sizeof a, &ol);
      e = srtp_protect_rtcp_mki (ltx, b, &lenb, use_mki, 0);
      rn++;
      if (r != GSRTP_OK || e != srtp_err_status_ok || ol != (size_t) lenb || memcmp (a, b, ol)) {
        if (rdiff++ < 3)
          printf ("  %s: SRTCP %zu differs (ours %s len %zu, libsrtp %d len %d)\n", name, rl,
              gsrtp_result_name (r), ol, (int) e, lenb);
        continue;
      }
      int l2 = (int) ol;
      if (srtp_unprotect_rtcp_mki (lrx_ours, a, &l2, use_mki) != srtp_err_status_ok || l2 != (int) rl || memcmp (a, orig, rl))
        rrej++;
      if (gsrtp_rtcp_unprotect (&rx[s], b, ol, &dl) != GSRTP_OK || dl != rl || memcmp (b, orig, rl))
        rrej++;
    }
  }
  check (diff == 0, "%s: SRTP protect == libsrtp for payloads 0..1500, 3 SSRCs, ROC 0->1 (%d/%d differ)",
      name, diff, n);
  check (tx[0].roc == 1 && tx[1].roc == 1 && tx[2].roc == 1, "%s: sender ROC wrapped to 1", name);
  check (lib_rejected == 0, "%s: libsrtp unprotects ours (%d rejected)", name, lib_rejected);
  check (ours_rejected == 0, "%s: we unprotect libsrtp's (%d rejected)", name, ours_rejected);
  check (rdiff == 0, "%s: SRTCP protect == libsrtp (%d/%d differ)", name, rdiff, rn);
  check (rrej == 0, "%s: SRTCP unprotect both ways (%d rejected)", name, rrej);
  srtp_dealloc (ltx);
  srtp_dealloc (lrx_ours);
}
#endif

/* ---- batched and GPU emulation vs the scalar reference ---- */
enum { NCTX = 12, NPKT = 3000 };

static void
test_batch (void)
{
  static GsSrtpCtx ref_tx[NCTX], bat_tx[NCTX], sca_tx[NCTX], emu_tx[NCTX];
  static GsSrtpCtx ref_rx[NCTX], bat_rx[NCTX], emu_rx[NCTX];
  static uint8_t orig[NPKT][1600], ref[NPKT][1600], bat[NPKT][1600], sca[NPKT][1600];
  static size_t olen[NPKT], rlen[NPKT];
  static GsSrtpPacket bp[NPKT], sp[NPKT];
  static int pctx[NPKT], prtcp[NPKT];
  static uint16_t seqs[NCTX];
  uint8_t key[46];
  int bad = 0, sbad = 0, ebad = 0;
  for (int c = 0; c < NCTX; c++) {
    const Profile *pr = &profiles[c % N_PROFILES];
    size_t kl = gsrtp_master_key_len (pr->pol.cipher) + gsrtp_master_salt_len (pr->pol.cipher);
    rnd_fill (key, kl);
    gsrtp_ctx_init (&ref_tx[c], pr->pol, pr->pol, key, kl, 0);
    gsrtp_ctx_init (&ref_rx[c], pr->pol, pr->pol, key, kl, 0);
    if (c % 3 == 1) {           /* a third of the contexts carry an MKI */
      uint8_t mki[16];
      rnd_fill (mki, sizeof mki);
      gsrtp_ctx_set_mki (&ref_tx[c], mki, (size_t) c);
      gsrtp_ctx_set_mki (&ref_rx[c], mki, (size_t) c);
    }
    seqs[c] = (uint16_t) (65000 + 37 * c);
  }
  memcpy (bat_tx, ref_tx, sizeof ref_tx);
  memcpy (sca_tx, ref_tx, sizeof ref_tx);
  memcpy (emu_tx, ref_tx, sizeof ref_tx);
  memcpy (bat_rx, ref_rx, sizeof ref_rx);
  memcpy (emu_rx, ref_rx, sizeof ref_rx);
  for (int i = 0; i < NPKT; i++) {
    int c = (int) (rnd32 () % NCTX);
    pctx[i] = c;
    prtcp[i] = rnd32 () % 10 == 0;
    olen[i] = prtcp[i] ? make_rtcp (orig[i], 0x1000 + c, rnd32 () % 1400)
                       : make_rtp (orig[i], 0x1000 + c, seqs[c]++, (int) (rnd32 () & 3), rnd32 () % 1489);
    memcpy (ref[i], orig[i], olen[i]);
    memcpy (bat[i], orig[i], olen[i]);
    memcpy (sca[i], orig[i], olen[i]);
  }
  /* reference: one by one */
  for (int i = 0; i < NPKT; i++) {
    GsSrtpResult r = prtcp[i] ? gsrtp_rtcp_protect (&ref_tx[pctx[i]], ref[i], olen[i], 1600, &rlen[i])
                              : gsrtp_rtp_protect (&ref_tx[pctx[i]], ref[i], olen[i], 1600, &rlen[i]);
    if (r != GSRTP_OK)
      bad++;
  }
  check (bad == 0, "reference protects %d mixed packets", NPKT);
  for (int i = 0; i < NPKT; i++) {
    bp[i] = (GsSrtpPacket) { &bat_tx[pctx[i]], bat[i], (uint32_t) olen[i], 1600, (uint32_t) prtcp[i], 0 };
    sp[i] = (GsSrtpPacket) { &sca_tx[pctx[i]], sca[i], (uint32_t) olen[i], 1600, (uint32_t) prtcp[i], 0 };
  }
  gsrtp_protect_batch (bp, NPKT, GSRTP_IMPL_ACCEL);
  gsrtp_protect_batch (sp, NPKT, GSRTP_IMPL_SCALAR);
  bad = 0;
  for (int i = 0; i < NPKT; i++) {
    if (bp[i].result != GSRTP_OK || bp[i].len != rlen[i] || memcmp (bat[i], ref[i], rlen[i]))
      bad++;
    if (sp[i].result != GSRTP_OK || sp[i].len != rlen[i] || memcmp (sca[i], ref[i], rlen[i]))
      sbad++;
  }
  check (bad == 0, "batched protect (accel, cpu features 0x%x) == reference, %d packets, %d contexts (%d differ)",
      gsrtp_cpu_features (), NPKT, NCTX, bad);
  check (sbad == 0, "batched protect (scalar) == reference (%d differ)", sbad);

  /* GPU emulation: host prepare, one buffer + descriptors + key array, then
   * per descriptor the function the CUDA thread runs */
  {
    static uint8_t gbuf[NPKT * 1600];
    static GsSrtpDesc d[NPKT];
    static GsSrtpKeys keys[2 * NCTX];
    for (int c = 0; c < NCTX; c++) {
      keys[2 * c] = emu_tx[c].rtp_keys;
      keys[2 * c + 1] = emu_tx[c].rtcp_keys;
    }
    for (int i = 0; i < NPKT; i++) {
      memcpy (gbuf + 1600 * i, orig[i], olen[i]);
      if (gsrtp_prepare_protect (&emu_tx[pctx[i]], orig[i], olen[i], 1600, prtcp[i], &d[i]) != GSRTP_OK)
        ebad++;
      d[i].offset = 1600 * i;
      d[i].keys = 2 * pctx[i] + prtcp[i];
    }
    static uint8_t wbuf[NPKT * 1600];
    int wbad = 0;
    memcpy (wbuf, gbuf, sizeof wbuf);
    for (int i = 0; i < NPKT; i++) {
      uint32_t l = gs_srtp_hd_protect (gsrtp_aes_tables (), &keys[d[i].keys], gbuf + d[i].offset, &d[i]);
      if (l != rlen[i] || memcmp (gbuf + d[i].offset, ref[i], l))
        ebad++;
    }
    check (ebad == 0, "GPU-emulation path (prepare + gs_srtp_hd_protect per descriptor) == reference (%d differ)", ebad);
    /* srtp_protect_batch_warp: 32 lanes share the keystream, then lane 0
     * seals; the lanes in reverse order, so no lane leans on another's */
    for (int i = 0; i < NPKT; i++) {
      const GsSrtpKeys *k = &keys[d[i].keys];
      uint8_t *pkt = wbuf + d[i].offset;
      uint32_t l;
      for (int lane = 31; lane >= 0; lane--)
        gs_srtp_hd_seal_encrypt (gsrtp_aes_tables (), k, pkt, &d[i], (uint32_t) lane, 32);
      l = gs_srtp_hd_place_mki (k, pkt, gs_srtp_hd_seal_auth (gsrtp_aes_tables (), k, pkt, &d[i]));
      if (l != rlen[i] || memcmp (pkt, ref[i], l))
        wbad++;
    }
    check (wbad == 0, "warp-per-packet emulation (32 lanes of gs_srtp_hd_seal_encrypt, then "
        "gs_srtp_hd_seal_auth) == reference (%d differ)", wbad);
    /* a batch whose launch failed, finished on the CPU: the same prepared
     * descriptors and key array through gsrtp_protect_desc */
    {
      int cbad = 0;
      for (int i = 0; i < NPKT; i++) {
        uint8_t *pkt = wbuf + d[i].offset;
        uint32_t l;
        memcpy (pkt, orig[i], olen[i]);
        l = gsrtp_protect_desc (&keys[d[i].keys], pkt, &d[i]);
        if (l != rlen[i] || memcmp (pkt, ref[i], l))
          cbad++;
      }
      check (cbad == 0, "prepared packets finished by gsrtp_protect_desc (%s) == reference "
          "(%d differ)", gsrtp_force_portable () ? "constant-time path" : "accelerated", cbad);
    }
  }

  /* unprotect: batch vs one by one, with tampered, duplicated and reordered
   * packets mixed in */
  {
    static uint8_t in[NPKT + 200][1600], u1[NPKT + 200][1600], u2[NPKT + 200][1600];
    static size_t inlen[NPKT + 200];
    static int ictx[NPKT + 200], irtcp[NPKT + 200];
    static GsSrtpPacket up[NPKT + 200];
    int m = 0, diff = 0, okc = 0, rej = 0;
    for (int i = 0; i < NPKT; i++) {
      int j = i;
      if (i + 1 < NPKT && rnd32 () % 20 == 0) {
        /* swap neighbours */
        memcpy (in[m], ref[i + 1], rlen[i + 1]);
        inlen[m] = rlen[i + 1]; ictx[m] = pctx[i + 1]; irtcp[m] = prtcp[i + 1]; m++;
        memcpy (in[m], ref[i], rlen[i]);
        inlen[m] = rlen[i]; ictx[m] = pctx[i]; irtcp[m] = prtcp[i]; m++;
        i++;
        continue;
      }
      memcpy (in[m], ref[j], rlen[j]);
      inlen[m] = rlen[j]; ictx[m] = pctx[j]; irtcp[m] = prtcp[j];
      if (rnd32 () % 50 == 0)
        in[m][rnd32 () % rlen[j]] ^= 0x01;    /* tamper */
      m++;
      if (rnd32 () % 40 == 0 && m < NPKT + 200) {  /* duplicate */
        memcpy (in[m], ref[j], rlen[j]);
        inlen[m] = rlen[j]; ictx[m] = pctx[j]; irtcp[m] = prtcp[j]; m++;
      }
    }
    for (int i = 0; i < m; i++) {
      size_t ol;
      memcpy (u1[i], in[i], inlen[i]);
      memcpy (u2[i], in[i], inlen[i]);
      GsSrtpResult r = irtcp[i] ? gsrtp_rtcp_unprotect (&ref_rx[ictx[i]], u1[i], inlen[i], &ol)
                                : gsrtp_rtp_unprotect (&ref_rx[ictx[i]], u1[i], inlen[i], &ol);
      up[i] = (GsSrtpPacket) { &bat_rx[ictx[i]], u2[i], (uint32_t) inlen[i], 1600, (uint32_t) irtcp[i], 0 };
      up[i].result = r;            /* remember the reference result in cap */
      up[i].cap = r == GSRTP_OK ? (uint32_t) ol : 0;
      r == GSRTP_OK ? okc++ : rej++;
    }
    GsSrtpResult refres[NPKT + 200];
    uint32_t reflen[NPKT + 200];
    for (int i = 0; i < m; i++) {
      refres[i] = up[i].result;
      reflen[i] = up[i].cap;
    }
    gsrtp_unprotect_batch (up, (size_t) m, GSRTP_IMPL_ACCEL);
    for (int i = 0; i < m; i++) {
      if (up[i].result != refres[i])
        diff++;
      else if (refres[i] == GSRTP_OK && (up[i].len != reflen[i] || memcmp (u1[i], u2[i], reflen[i])))
        diff++;
      else if (refres[i] != GSRTP_OK && memcmp (u2[i], in[i], inlen[i]))
        diff++;      /* a rejected packet must be left as it came */
    }
    check (diff == 0 && rej > 0, "batched unprotect == one by one: %d packets, %d ok, %d rejected (%d differ)",
        m, okc, rej, diff);

    /* GPU emulation, the steps of gst_gpustream_srtp_unprotect_batch over
     * the whole batch: (A) prepare against the committed state; (B) per
     * descriptor the function the CUDA thread runs, on a staging copy; (C)
     * in order, prepare again: an estimate that moved (the ROC steps of the
     * contexts that wrap) is redone on the scalar path from the original,
     * else the flag decides and an accepted packet is committed */
    {
      static uint8_t gbuf[(NPKT + 200) * 1600], u3[NPKT + 200][1600];
      static GsSrtpDesc gd[NPKT + 200];
      static GsSrtpKeys keys[2 * NCTX];
      static int gslot[NPKT + 200];
      static uint32_t gok[NPKT + 200];
      int nd = 0, ediff = 0, redone = 0, sdiff = 0;
      for (int c = 0; c < NCTX; c++) {
        keys[2 * c] = emu_rx[c].rtp_keys;
        keys[2 * c + 1] = emu_rx[c].rtcp_keys;
      }
      for (int i = 0; i < m; i++) {
        memcpy (u3[i], in[i], inlen[i]);
        gslot[i] = -1;
        if (gsrtp_prepare_unprotect_desc (&emu_rx[ictx[i]], u3[i], inlen[i], irtcp[i], &gd[nd])
            != GSRTP_OK)
          continue;
        gd[nd].offset = 1600 * (uint32_t) nd;
        gd[nd].keys = (uint32_t) (2 * ictx[i] + irtcp[i]);
        memcpy (gbuf + gd[nd].offset, u3[i], inlen[i]);
        gslot[i] = nd++;
      }
      for (int j = 0; j < nd; j++)
        gok[j] = (uint32_t) gs_srtp_hd_unprotect (gsrtp_aes_tables (), &keys[gd[j].keys],
            gbuf + gd[j].offset, &gd[j]);
      for (int i = 0; i < m; i++) {
        GsSrtpCtx *cx = &emu_rx[ictx[i]];
        GsSrtpDesc now;
        size_t ol = 0;
        GsSrtpResult r = gsrtp_prepare_unprotect_desc (cx, u3[i], inlen[i], irtcp[i], &now);
        if (r == GSRTP_OK) {
          if (gslot[i] < 0 || now.roc != gd[gslot[i]].roc) {
            redone++;
            r = irtcp[i] ? gsrtp_rtcp_unprotect (cx, u3[i], inlen[i], &ol)
                         : gsrtp_rtp_unprotect (cx, u3[i], inlen[i], &ol);
          } else if (!gok[gslot[i]]) {
            r = GSRTP_ERR_AUTH;
          } else {
            gsrtp_commit_unprotect_desc (cx, u3[i], &now);
            memcpy (u3[i], gbuf + gd[gslot[i]].offset, now.len);
            ol = now.len;
          }
        }
        if (r != refres[i])
          ediff++;
        else if (r == GSRTP_OK && (ol != reflen[i] || memcmp (u1[i], u3[i], ol)))
          ediff++;
        else if (r != GSRTP_OK && memcmp (u3[i], in[i], inlen[i]))
          ediff++;
      }
      for (int c = 0; c < NCTX; c++)
        if (emu_rx[c].roc != ref_rx[c].roc || emu_rx[c].s_l != ref_rx[c].s_l
            || emu_rx[c].have_seq != ref_rx[c].have_seq
            || memcmp (&emu_rx[c].rtp_replay, &ref_rx[c].rtp_replay, sizeof ref_rx[c].rtp_replay)
            || memcmp (&emu_rx[c].rtcp_replay, &ref_rx[c].rtcp_replay, sizeof ref_rx[c].rtcp_replay))
          sdiff++;
      check (ediff == 0 && sdiff == 0 && redone > 0,
          "GPU-emulation unprotect (prepare + gs_srtp_hd_unprotect per descriptor + in-order "
          "recheck) == one by one: %d packets, %d on the GPU, %d redone (%d differ, %d contexts' "
          "state differs)", m, nd, redone, ediff, sdiff);
    }
  }
}

/* ---- multi-buffer SHA-1 ---- */

/* FIPS 180 padding of m into out; returns the block count */
static uint32_t
sha1_pad (const uint8_t *m, size_t n, uint8_t *out)
{
  size_t tl = n + 1;
  uint64_t bits = (uint64_t) n * 8;
  memcpy (out, m, n);
  out[n] = 0x80;
  while (tl % 64 != 56)
    out[tl++] = 0;
  gs_st32 (out + tl, (uint32_t) (bits >> 32));
  gs_st32 (out + tl + 4, (uint32_t) bits);
  return (uint32_t) ((tl + 8) / 64);
}

/* a padded message as a job, split at block `cut` into its two segments */
static void
sha1_job (GsSha1Job *j, const uint8_t *padded, uint32_t nb, uint32_t cut)
{
  gs_sha1_init (j->st);
  j->p[0] = padded;
  j->nb[0] = cut;
  j->p[1] = padded + 64 * cut;
  j->nb[1] = nb - cut;
}

static int
sha1_job_eq (const GsSha1Job *j, const uint8_t want[20])
{
  uint8_t got[20];
  for (int i = 0; i < 5; i++)
    gs_st32 (got + 4 * i, j->st[i]);
  return memcmp (got, want, 20) == 0;
}

/* The lanes gs_sha1_mb runs on this CPU at the current level. */
static const char *
sha1_mb_name (void)
{
  unsigned f = gsrtp_cpu_features ();
  if (gs_sha1_level () == GS_SHA1_AVX512 && (f & 16))
    return "AVX-512, 16 lanes";
  return (f & 8) ? "AVX2, 8 lanes" : "scalar: no AVX2";
}

static void
test_sha1_mb (void)
{
  /* FIPS 180 / NIST example messages and their digests, then lengths around
   * the padding edges (reference: gsrtp_sha1, checked against FIPS above) */
  static const struct { int len; const char *msg, *md; } v[] = {
    { 3, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
    { 0, "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
    { 56, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
    { 112, "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "a49b2446a02c645bf419f995b67091253a04a259" },
    { 1000000, NULL, "34aa973cd4c4daa4f61eeb2bdbad27316534016f" },  /* a million 'a' */
    { 55, NULL, NULL }, { 64, NULL, NULL }, { 119, NULL, NULL }, { 1500, NULL, NULL },
    { 63, NULL, NULL }, { 120, NULL, NULL }, { 1, NULL, NULL },
  };
  enum { NV = sizeof v / sizeof v[0] };
  uint8_t *msg[NV], *pad[NV], want[NV][20];
  uint32_t nb[NV];
  int bad = 0, runs = 0;
  for (int i = 0; i < NV; i++) {
    msg[i] = malloc ((size_t) v[i].len + 1);
    pad[i] = malloc ((size_t) v[i].len + 128);
    if (v[i].msg)
      memcpy (msg[i], v[i].msg, (size_t) v[i].len);
    else if (v[i].len == 1000000)
      memset (msg[i], 'a', 1000000);
    else
      rnd_fill (msg[i], (size_t) v[i].len);
    nb[i] = sha1_pad (msg[i], (size_t) v[i].len, pad[i]);
    if (v[i].md)
      hex (v[i].md, want[i], NULL);
    else
      gsrtp_sha1 (msg[i], (size_t) v[i].len, want[i]);
  }
  /* 1..8 lanes' worth of jobs, then more than 8 (lanes refilled), mixed
   * lengths, each split somewhere (including all in one segment) */
  for (int n = 1; n <= NV; n++) {
    for (int rot = 0; rot < NV; rot += (n <= 8 ? 1 : 3)) {
      GsSha1Job jobs[NV];
      int idx[NV];
      for (int i = 0; i < n; i++) {
        int m = (i + rot) % NV;
        idx[i] = m;
        sha1_job (&jobs[i], pad[m], nb[m], (uint32_t) (i + rot) % (nb[m] + 1));
      }
      gs_sha1_mb (jobs, (size_t) n, NULL);
      for (int i = 0; i < n; i++)
        bad += !sha1_job_eq (&jobs[i], want[idx[i]]);
      runs++;
    }
  }
  check (bad == 0, "multi-buffer SHA-1 (%s) == FIPS 180 / reference: 1..%d jobs of 0..1000000 bytes, "
      "%d runs (%d wrong)", sha1_mb_name (), NV, runs, bad);
  for (int i = 0; i < NV; i++) {
    free (msg[i]);
    free (pad[i]);
  }

  /* random messages from random midstates (an HMAC's inner / outer hash),
   * in a random order, against the scalar compression function */
  {
    enum { NJ = 300 };
    static uint8_t data[NJ][64 * 28];   /* blocks 0..25, then the tail copy */
    static GsSha1Job jobs[NJ];
    static uint32_t ref[NJ][5], order[NJ];
    bad = 0;
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < NJ; i++) {
        uint32_t n0 = rnd32 () % 24, n1 = rnd32 () % 3;
        if (i % 7 == 0)
          n0 = n1 = 0;                  /* nothing to do: state unchanged */
        rnd_fill (data[i], 64 * (n0 + n1));
        for (int k = 0; k < 5; k++)
          ref[i][k] = jobs[i].st[k] = rnd32 ();
        /* the second segment elsewhere, as an HMAC tail */
        jobs[i].p[0] = data[i];
        jobs[i].nb[0] = n0;
        jobs[i].p[1] = data[i] + 64 * 26;
        jobs[i].nb[1] = n1;
        memcpy (data[i] + 64 * 26, data[i] + 64 * n0, 64 * n1);
        for (uint32_t b = 0; b < n0 + n1; b++)
          gs_sha1_compress (ref[i], data[i] + 64 * b);
        order[i] = (uint32_t) i;
      }
      for (int i = NJ - 1; round && i > 0; i--) {
        int j = (int) (rnd32 () % (uint32_t) (i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
      gs_sha1_mb (jobs, NJ, round ? order : NULL);
      for (int i = 0; i < NJ; i++)
        bad += memcmp (jobs[i].st, ref[i], sizeof ref[i]) != 0;
    }
    check (bad == 0, "multi-buffer SHA-1 == scalar: %d random jobs from random states, array and "
        "shuffled order (%d differ)", 2 * NJ, bad);
  }
}

/* The level GS_SRTP_SHA1 asks for is the one the batch code gets (the
 * meson tests kernels-srtp-sha1-* rely on it), and protect / unprotect
 * batches of HMAC packets under each level in turn == one by one. */
static void
test_sha1_levels (void)
{
  const char *env = getenv ("GS_SRTP_SHA1");
  unsigned f = gsrtp_cpu_features (), lv = gs_sha1_level ();
  unsigned avx2 = (f & 8) ? GS_SHA1_AVX2 : GS_SHA1_SCALAR;
  unsigned shani = (f & 4) ? GS_SHA1_SHANI : avx2;
  unsigned want = (f & 16) ? GS_SHA1_AVX512 : shani;
  static const char *names[] = { "scalar", "avx2", "shani", "avx512" };
  if (env && !strcmp (env, "scalar"))
    want = GS_SHA1_SCALAR;
  else if (env && !strcmp (env, "avx2"))
    want = avx2;
  else if (env && !strcmp (env, "shani"))
    want = shani;
  check (lv == want, "SHA-1 for batches: %s (GS_SRTP_SHA1=%s, cpu features 0x%x)", names[lv],
      env ? env : "(unset)", f);

  for (unsigned cap = 0; cap <= GS_SHA1_AVX512; cap++) {
    enum { NP = 300, NC = 4 };
    static const int pi[NC] = { 0, 1, 2, 6 };    /* the HMAC profiles */
    static GsSrtpCtx ref_tx[NC], bat_tx[NC], ref_rx[NC], bat_rx[NC];
    static uint8_t ref[NP][1600], bat[NP][1600], un[NP][1600];
    static size_t rlen[NP];
    static GsSrtpPacket bp[NP];
    static int pc[NP], pr[NP], tam[NP];
    int bad = 0, ubad = 0, ntam = 0;
    uint8_t key[46];
    gs_sha1_level_cap (cap);
    for (int c = 0; c < NC; c++) {
      GsSrtpPolicy pol = profiles[pi[c]].pol;
      size_t kl = gsrtp_master_key_len (pol.cipher) + gsrtp_master_salt_len (pol.cipher);
      rnd_fill (key, kl);
      gsrtp_ctx_init (&ref_tx[c], pol, pol, key, kl, 0);
      gsrtp_ctx_init (&ref_rx[c], pol, pol, key, kl, 0);
      bat_tx[c] = ref_tx[c];
      bat_rx[c] = ref_rx[c];
    }
    for (int i = 0; i < NP; i++) {
      size_t ol;
      pc[i] = (int) (rnd32 () % NC);
      pr[i] = rnd32 () % 8 == 0;
      /* mostly full-size, some short: chunks of mixed block counts */
      size_t len = pr[i] ? make_rtcp (ref[i], 0x2000 + pc[i], rnd32 () % 1400)
                         : make_rtp (ref[i], 0x2000 + pc[i], (uint16_t) i, 0,
                               rnd32 () % 4 ? 1316 : rnd32 () % 1489);
      memcpy (bat[i], ref[i], len);
      bp[i] = (GsSrtpPacket) { &bat_tx[pc[i]], bat[i], (uint32_t) len, 1600, (uint32_t) pr[i], 0 };
      if ((pr[i] ? gsrtp_rtcp_protect (&ref_tx[pc[i]], ref[i], len, 1600, &ol)
                 : gsrtp_rtp_protect (&ref_tx[pc[i]], ref[i], len, 1600, &ol)) != GSRTP_OK)
        bad++;
      rlen[i] = ol;
    }
    /* batches of 1, 2, 3, then the rest (the multi-buffer path's small cases) */
    gsrtp_protect_batch (bp, 1, GSRTP_IMPL_ACCEL);
    gsrtp_protect_batch (bp + 1, 2, GSRTP_IMPL_ACCEL);
    gsrtp_protect_batch (bp + 3, 3, GSRTP_IMPL_ACCEL);
    gsrtp_protect_batch (bp + 6, NP - 6, GSRTP_IMPL_ACCEL);
    for (int i = 0; i < NP; i++)
      if (bp[i].result != GSRTP_OK || bp[i].len != rlen[i] || memcmp (bat[i], ref[i], rlen[i]))
        bad++;
    /* unprotect what the reference made, some tampered with */
    for (int i = 0; i < NP; i++) {
      memcpy (un[i], ref[i], rlen[i]);
      tam[i] = rnd32 () % 16 == 0;
      if (tam[i]) {
        un[i][rnd32 () % rlen[i]] ^= 0x40;
        ntam++;
      }
      bp[i] = (GsSrtpPacket) { &bat_rx[pc[i]], un[i], (uint32_t) rlen[i], 1600, (uint32_t) pr[i], 0 };
    }
    gsrtp_unprotect_batch (bp, 1, GSRTP_IMPL_ACCEL);
    gsrtp_unprotect_batch (bp + 1, NP - 1, GSRTP_IMPL_ACCEL);
    for (int i = 0; i < NP; i++) {
      size_t ol = 0;
      /* tampered: rejected (on the tag, mostly); else accepted and decrypted as the
       * reference does (which never sees the tampered ones) */
      if (tam[i]) {
        ubad += bp[i].result == GSRTP_OK;
        continue;
      }
      if ((pr[i] ? gsrtp_rtcp_unprotect (&ref_rx[pc[i]], ref[i], rlen[i], &ol)
                 : gsrtp_rtp_unprotect (&ref_rx[pc[i]], ref[i], rlen[i], &ol)) != GSRTP_OK
          || bp[i].result != GSRTP_OK || bp[i].len != ol || memcmp (un[i], ref[i], ol))
        ubad++;
    }
    check (bad == 0 && ubad == 0 && ntam > 0,
        "batched protect / unprotect, SHA-1 capped at %s (gets %s), %d HMAC packets (%d tampered) "
        "== one by one (%d / %d differ)", names[cap], names[gs_sha1_level ()], NP, ntam, bad, ubad);
    for (int c = 0; c < NC; c++) {
      gsrtp_ctx_clear (&ref_tx[c]); gsrtp_ctx_clear (&bat_tx[c]);
      gsrtp_ctx_clear (&ref_rx[c]); gsrtp_ctx_clear (&bat_rx[c]);
    }
  }
  gs_sha1_level_cap (GS_SHA1_AVX512);
}

/* ---- negative cases ---- */
static void
test_negative (const Profile *pr)
{
  uint8_t key[46], bad_key[46], p[1600], q[1600], orig[1600];
  size_t kl = gsrtp_master_key_len (pr->pol.cipher) + gsrtp_master_salt_len (pr->pol.cipher);
  GsSrtpCtx tx, rx, rx2, wrong;
  size_t len, pl, ol;
  GsSrtpResult r;
  rnd_fill (key, kl);
  memcpy (bad_key, key, kl);
  bad_key[3] ^= 0x40;
  gsrtp_ctx_init (&tx, pr->pol, pr->pol, key, kl, 0);
  gsrtp_ctx_init (&rx, pr->pol, pr->pol, key, kl, 0);
  gsrtp_ctx_init (&wrong, pr->pol, pr->pol, bad_key, kl, 0);
  len = make_rtp (orig, 0xabcdef01, 1000, 3, 200);
  memcpy (p, orig, len);
  gsrtp_rtp_protect (&tx, p, len, sizeof p, &pl);

#define TRY(mut, want, what) do { \
    memcpy (q, p, pl); \
    size_t ql = pl; \
    mut; \
    uint8_t before[1600]; \
    memcpy (before, q, ql); \
    rx2 = rx; \
    r = gsrtp_rtp_unprotect (&rx2, q, ql, &ol); \
    check (r == (want) && memcmp (before, q, ql) == 0, "%s: %s -> %s, packet untouched", pr->name, what, \
        gsrtp_result_name (r)); \
  } while (0)
  TRY (q[pl - 20] ^= 1, GSRTP_ERR_AUTH, "tampered payload");
  TRY (q[pl - 1] ^= 0x80, GSRTP_ERR_AUTH, "tampered tag");
  TRY (q[1] ^= 0x80, GSRTP_ERR_AUTH, "tampered header (marker)");
  TRY (q[6] ^= 1, GSRTP_ERR_AUTH, "tampered header (timestamp)");
  TRY (ql -= 1, GSRTP_ERR_AUTH, "truncated by one byte");
  TRY (ql = 12 + gsrtp_rtp_overhead (pr->pol) - 1, GSRTP_ERR_TOO_SHORT, "shorter than header + tag");
  TRY (ql = 5, GSRTP_ERR_TOO_SHORT, "shorter than the tag");
  TRY (q[0] = (uint8_t) ((q[0] & 0x3f) | 0x40), GSRTP_ERR_BAD_HEADER, "RTP version 1");
  {
    memcpy (q, p, pl);
    r = gsrtp_rtp_unprotect (&wrong, q, pl, &ol);
    check (r == GSRTP_ERR_AUTH && memcmp (q, p, pl) == 0, "%s: wrong key -> %s, packet untouched", pr->name,
        gsrtp_result_name (r));
  }
  memcpy (q, p, pl);
  r = gsrtp_rtp_unprotect (&rx, q, pl, &ol);
  check (r == GSRTP_OK && ol == len && memcmp (q, orig, len) == 0, "%s: genuine packet accepted", pr->name);
  TRY ((void) 0, GSRTP_ERR_REPLAY, "same index twice");
  /* older than the window (64): sender goes on to 1000 + 100, receiver sees
   * 1100, then 1036 (distance 64: too old) and 1037 (63: inside) */
  {
    uint8_t pk[3][1600];
    size_t pkl[3];
    for (uint16_t s = 1001; s <= 1100; s++) {
      size_t l = make_rtp (q, 0xabcdef01, s, 0, 50), o;
      gsrtp_rtp_protect (&tx, q, l, sizeof q, &o);
      int slot = s == 1036 ? 0 : s == 1037 ? 1 : s == 1100 ? 2 : -1;
      if (slot >= 0) {
        memcpy (pk[slot], q, o);
        pkl[slot] = o;
      }
    }
    r = gsrtp_rtp_unprotect (&rx, pk[2], pkl[2], &ol);
    check (r == GSRTP_OK, "%s: jump ahead accepted", pr->name);
    memcpy (q, pk[0], pkl[0]);
    r = gsrtp_rtp_unprotect (&rx, q, pkl[0], &ol);
    check (r == GSRTP_ERR_REPLAY_OLD && memcmp (q, pk[0], pkl[0]) == 0,
        "%s: older than the 64-packet window -> %s", pr->name, gsrtp_result_name (r));
    r = gsrtp_rtp_unprotect (&rx, pk[1], pkl[1], &ol);
    check (r == GSRTP_OK, "%s: last index inside the window accepted", pr->name);
  }
  /* SRTCP */
  {
    size_t rl = make_rtcp (orig, 0xabcdef01, 100), rpl;
    memcpy (p, orig, rl);
    gsrtp_rtcp_protect (&tx, p, rl, sizeof p, &rpl);
    memcpy (q, p, rpl);
    q[20] ^= 4;
    r = gsrtp_rtcp_unprotect (&rx, q, rpl, &ol);
    check (r == GSRTP_ERR_AUTH, "%s: SRTCP tampered -> %s", pr->name, gsrtp_result_name (r));
    memcpy (q, p, rpl);
    q[rpl - (pr->pol.cipher >= GSRTP_CIPHER_AES_128_GCM ? 1 : 11)] ^= 1;   /* index */
    r = gsrtp_rtcp_unprotect (&rx, q, rpl, &ol);
    check (r == GSRTP_ERR_AUTH, "%s: SRTCP tampered index -> %s", pr->name, gsrtp_result_name (r));
    memcpy (q, p, rpl);
    r = gsrtp_rtcp_unprotect (&rx, q, rpl, &ol);
    check (r == GSRTP_OK && ol == rl && memcmp (q, orig, rl) == 0, "%s: SRTCP genuine accepted", pr->name);
    memcpy (q, p, rpl);
    r = gsrtp_rtcp_unprotect (&rx, q, rpl, &ol);
    check (r == GSRTP_ERR_REPLAY, "%s: SRTCP replay -> %s", pr->name, gsrtp_result_name (r));
    r = gsrtp_rtcp_unprotect (&rx, q, 8 + gsrtp_rtcp_overhead (pr->pol) - 1, &ol);
    check (r == GSRTP_ERR_TOO_SHORT, "%s: SRTCP too short -> %s", pr->name, gsrtp_result_name (r));
  }
  /* protect without room for the tag */
  {
    memcpy (q, orig, len);
    r = gsrtp_rtp_protect (&tx, q, len, len + gsrtp_rtp_overhead (pr->pol) - 1, &ol);
    check (r == GSRTP_ERR_NO_SPACE, "%s: protect without room for the tag -> %s", pr->name, gsrtp_result_name (r));
  }
#undef TRY
}

/* ---- ROC estimation ---- */
/* RFC 3711 9.2: no packet past the last index of a master key. The sender
 * gives its last RTP packet (ROC 2^32 - 1, sequence number 65535) and
 * refuses the next, leaving ROC and packet as they were; the same for the
 * SRTCP index (2^31 - 1 the last). Reference and batch alike. */
static void
test_index_exhausted (void)
{
  const GsSrtpPolicy pol = GSRTP_AES_CM_128_HMAC_SHA1_80;
  uint8_t key[30], orig[200], a[200], b[200];
  int bad = 0;
  rnd_fill (key, sizeof key);
  for (int batch = 0; batch < 2; batch++) {
    GsSrtpCtx tx, rx;
    size_t len, ol = 0, dl;
    GsSrtpResult r;
    gsrtp_ctx_init (&tx, pol, pol, key, sizeof key, 0);
    gsrtp_ctx_init (&rx, pol, pol, key, sizeof key, 0);
    gsrtp_ctx_set_roc (&tx, 0xffffffffu);
    gsrtp_ctx_set_roc (&rx, 0xffffffffu);
    for (int seq = 65534; seq <= 65536; seq++) {
      len = make_rtp (orig, 0xfeed, (uint16_t) seq, 0, 60);
      memcpy (a, orig, len);
      if (batch) {
        GsSrtpPacket p = { &tx, a, (uint32_t) len, sizeof a, 0, GSRTP_OK };
        gsrtp_protect_batch (&p, 1, GSRTP_IMPL_AUTO);
        r = p.result;
        ol = p.len;
      } else {
        r = gsrtp_rtp_protect (&tx, a, len, sizeof a, &ol);
      }
      if (seq < 65536) {
        /* the last two indexes of the key: protected, and they unprotect */
        memcpy (b, a, ol);
        if (r != GSRTP_OK || gsrtp_rtp_unprotect (&rx, b, ol, &dl) != GSRTP_OK || dl != len
            || memcmp (b, orig, len))
          bad++;
      } else if (r != GSRTP_ERR_INDEX_EXHAUSTED || tx.roc != 0xffffffffu || tx.s_l != 65535
          || memcmp (a, orig, len)) {
        bad++;
      }
    }
    /* SRTCP: index 2^31 - 1 is the last one sent */
    tx.srtcp_index = 0x7ffffffeu;
    for (int k = 0; k < 2; k++) {
      len = make_rtcp (orig, 0xfeed, 40);
      memcpy (a, orig, len);
      if (batch) {
        GsSrtpPacket p = { &tx, a, (uint32_t) len, sizeof a, 1, GSRTP_OK };
        gsrtp_protect_batch (&p, 1, GSRTP_IMPL_AUTO);
        r = p.result;
        ol = p.len;
      } else {
        r = gsrtp_rtcp_protect (&tx, a, len, sizeof a, &ol);
      }
      if (k == 0) {
        memcpy (b, a, ol);
        if (r != GSRTP_OK || gs_ld32 (a + len) != (0x80000000u | 0x7fffffffu)
            || gsrtp_rtcp_unprotect (&rx, b, ol, &dl) != GSRTP_OK || dl != len || memcmp (b, orig, len))
          bad++;
      } else if (r != GSRTP_ERR_INDEX_EXHAUSTED || tx.srtcp_index != 0x7fffffffu
          || memcmp (a, orig, len)) {
        bad++;
      }
    }
    gsrtp_ctx_clear (&tx);
    gsrtp_ctx_clear (&rx);
  }
  check (bad == 0, "key lifetime: the last RTP index (ROC 2^32 - 1, seq 65535) and SRTCP index "
      "2^31 - 1 are sent, the next refused (index exhausted) and left untouched, reference "
      "and batch (%d bad)", bad);
}

static void
test_roc (void)
{
  GsSrtpCtx c, tx, rx;
  uint8_t key[30], p[256];
  int64_t v;
  uint64_t idx;
  memset (&c, 0, sizeof c);
  c.have_seq = 1;
  c.roc = 5; c.s_l = 65530;
  idx = gsrtp_estimate_index (&c, 3, &v);
  check (v == 6 && idx == ((6ull << 16) | 3), "ROC: s_l 65530, seq 3 -> ROC+1");
  gsrtp_estimate_index (&c, 65500, &v);
  check (v == 5, "ROC: s_l 65530, seq 65500 -> same ROC");
  c.s_l = 5;
  gsrtp_estimate_index (&c, 65530, &v);
  check (v == 4, "ROC: s_l 5, seq 65530 -> ROC-1 (late packet from before the wrap)");
  gsrtp_estimate_index (&c, 20000, &v);
  check (v == 5, "ROC: s_l 5, seq 20000 -> same ROC");
  c.roc = 0;
  gsrtp_estimate_index (&c, 65530, &v);
  check (v == 0, "ROC: ROC 0, s_l 5, seq 65530 -> 0 (no ROC -1, as libsrtp)");

  /* end to end: sender in order 65530..65535, 0..5; receiver gets them
   * reordered around the wrap, in both directions */
  rnd_fill (key, 30);
  gsrtp_ctx_init (&tx, GSRTP_AES_CM_128_HMAC_SHA1_80, GSRTP_AES_CM_128_HMAC_SHA1_80, key, 30, 0);
  gsrtp_ctx_init (&rx, GSRTP_AES_CM_128_HMAC_SHA1_80, GSRTP_AES_CM_128_HMAC_SHA1_80, key, 30, 0);
  {
    static uint8_t pk[12][256], orig[12][256];
    size_t pl[12], ol[12];
    uint16_t seqs[12];
    int order[12] = { 0, 1, 2, 6, 3, 4, 7, 5, 9, 8, 11, 10 };   /* 65530.. with 0/1 before 65533.. */
    int ok = 1;
    for (int i = 0; i < 12; i++) {
      seqs[i] = (uint16_t) (65530 + i);
      ol[i] = make_rtp (orig[i], 0x55, seqs[i], 0, 40);
      memcpy (pk[i], orig[i], ol[i]);
      gsrtp_rtp_protect (&tx, pk[i], ol[i], 256, &pl[i]);
    }
    check (tx.roc == 1 && tx.s_l == 5, "ROC: sender ROC 1 after the wrap");
    for (int j = 0; j < 12; j++) {
      int i = order[j];
      size_t o;
      memcpy (p, pk[i], pl[i]);
      if (gsrtp_rtp_unprotect (&rx, p, pl[i], &o) != GSRTP_OK || o != ol[i] || memcmp (p, orig[i], o))
        ok = 0;
    }
    check (ok && rx.roc == 1, "ROC: receiver accepts packets reordered across 65535/0, ROC 1");
    memcpy (p, pk[3], pl[3]);
    {
      size_t o;
      check (gsrtp_rtp_unprotect (&rx, p, pl[3], &o) == GSRTP_ERR_REPLAY,
          "ROC: replay of a pre-wrap packet after the wrap is caught");
    }
  }
}

/* srtpdec's largest replay window (32768): an index 30000 behind the top is
 * still taken once, a replay of one 32767 behind is caught, 32768 behind is
 * too old; the ring keeps this across a ROC step. (RFC 3711's index estimate
 * reads a sequence number more than 32768 behind as the next ROC, so that
 * is as far back as a receiver can be asked to look.) */
/* The batch path keeps a context's expanded GCM keys in the context: a key
 * that changes under it (another master key, an MKI switch) must be noticed.
 * Context a protects a packet (its key expanded and kept), then takes b's
 * session keys; its next packet must be what b's own state gives. */
static void
test_gcm_key_cache (void)
{
  /* a at 16 bytes past a 64-byte boundary: all malloc promises (the cached
   * keys must not need more) */
  static uint8_t raw[sizeof (GsSrtpCtx) + 64] __attribute__ ((aligned (64)));
  GsSrtpCtx *a = (GsSrtpCtx *) (void *) (raw + 16);
  static GsSrtpCtx b;
  GsSrtpPolicy pol = { GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL };
  uint8_t ka[28], kb[28], pa[1600], pb[1600];
  size_t lb = 0;
  int bad = 0;
  rnd_fill (ka, sizeof ka);
  rnd_fill (kb, sizeof kb);
  {
    gsrtp_ctx_init (a, pol, pol, ka, sizeof ka, 0);
    gsrtp_ctx_init (&b, pol, pol, kb, sizeof kb, 0);
    for (uint16_t seq = 0; seq < 3; seq++) {
      GsSrtpPacket pk = { a, pa, 12 + 700, sizeof pa, 0, GSRTP_OK };
      memset (pa, 0, 12);
      pa[0] = 0x80; pa[1] = 96; pa[2] = (uint8_t) (seq >> 8); pa[3] = (uint8_t) seq;
      gs_st32 (pa + 8, 0xabcd);
      rnd_fill (pa + 12, 700);
      memcpy (pb, pa, 12 + 700);
      if (seq == 1)
        a->rtp_keys = b.rtp_keys;
      gsrtp_protect_batch (&pk, 1, GSRTP_IMPL_AUTO);
      gsrtp_rtp_protect (&b, pb, 12 + 700, sizeof pb, &lb);
      if (seq >= 1 && (pk.result != GSRTP_OK || pk.len != lb || memcmp (pa, pb, lb)))
        bad++;
    }
  }
  check (bad == 0, "GCM batch after the context's key changed == the new key's packets, context "
      "16 bytes off a 32-byte boundary (%d differ)", bad);
  gsrtp_ctx_clear (a);
  gsrtp_ctx_clear (&b);
}

static void
test_big_window (void)
{
  const GsSrtpPolicy pol = GSRTP_AES_CM_128_HMAC_SHA1_80;
  /* 27332: index 60100 - 32768; 27331 after 60100: ROC 1 */
  static const uint16_t seqs[] = { 100, 30100, 60100, 27331, 27332 };
  uint8_t key[30], pkt[5][200], q[200];
  size_t len[5], plain, dl;
  GsSrtpCtx tx, rx, small;
  int i;
  rnd_fill (key, sizeof key);
  gsrtp_ctx_init (&tx, pol, pol, key, 30, 0);
  gsrtp_ctx_init (&rx, pol, pol, key, 30, GSRTP_MAX_WINDOW);
  gsrtp_ctx_init (&small, pol, pol, key, 30, 1024);
  check (gsrtp_ctx_init (&small, pol, pol, key, 30, GSRTP_MAX_WINDOW + 1) == GSRTP_ERR_BAD_PARAM,
      "window: larger than %d refused", GSRTP_MAX_WINDOW);
  gsrtp_ctx_init (&small, pol, pol, key, 30, 1024);
  for (int o = 0; o < 5; o++) {
    i = o == 3 ? 4 : o == 4 ? 3 : o;   /* 27332 while the sender is still in ROC 0 */
    plain = make_rtp (pkt[i], 0x5eed, seqs[i], 0, 100);
    gsrtp_rtp_protect (&tx, pkt[i], plain, sizeof pkt[i], &len[i]);
  }
#define RX(ctx, i) (memcpy (q, pkt[i], len[i]), gsrtp_rtp_unprotect (&(ctx), q, len[i], &dl))
  check (RX (rx, 0) == GSRTP_OK && RX (rx, 2) == GSRTP_OK, "window: index 100, then 60100");
  check (RX (rx, 1) == GSRTP_OK, "window 32768: index 30100, 30000 behind the top, accepted");
  check (RX (rx, 1) == GSRTP_ERR_REPLAY, "window 32768: its replay caught");
  check (RX (rx, 4) == GSRTP_ERR_REPLAY_OLD, "window 32768: 32768 behind is too old");
  check (RX (small, 0) == GSRTP_OK && RX (small, 2) == GSRTP_OK && RX (small, 1) == GSRTP_ERR_REPLAY_OLD,
      "window 1024: 30000 behind is too old");
  check (RX (rx, 3) == GSRTP_OK && rx.roc == 1, "window 32768: index 92867 (ROC 1) accepted");
  check (RX (rx, 2) == GSRTP_ERR_REPLAY, "window 32768: a replay 32767 behind the new top caught");
#undef RX
  gsrtp_ctx_clear (&tx);
  gsrtp_ctx_clear (&rx);
  gsrtp_ctx_clear (&small);
}

/* MKI: a packet of another master key is refused untouched; a receiver
 * moves to the second key (gsrtp_ctx_take_keys) and keeps its ROC. */
static void
test_mki (void)
{
  const GsSrtpPolicy pol = GSRTP_AES_CM_128_HMAC_SHA1_80;
  uint8_t key_a[30], key_b[30], mki_a[4] = { 0, 0, 0, 1 }, mki_b[4] = { 0, 0, 0, 2 };
  uint8_t p[1600], q[1600], orig[1600];
  GsSrtpCtx tx, rx, rx_b;
  size_t len, ol, dl;
  int bad = 0;
  GsSrtpResult r;
  rnd_fill (key_a, sizeof key_a);
  rnd_fill (key_b, sizeof key_b);
  gsrtp_ctx_init (&tx, pol, pol, key_a, 30, 0);
  gsrtp_ctx_init (&rx, pol, pol, key_a, 30, 0);
  gsrtp_ctx_init (&rx_b, pol, pol, key_b, 30, 0);
  check (gsrtp_ctx_set_mki (&tx, mki_a, GSRTP_MAX_MKI + 1) == GSRTP_ERR_BAD_PARAM,
      "MKI: longer than %d bytes refused", GSRTP_MAX_MKI);
  gsrtp_ctx_set_mki (&tx, mki_a, 4);
  gsrtp_ctx_set_mki (&rx, mki_a, 4);
  gsrtp_ctx_set_mki (&rx_b, mki_b, 4);
  check (gsrtp_ctx_overhead (&tx, 0) == 14 && gsrtp_ctx_overhead (&tx, 1) == 18,
      "MKI: overhead counts the MKI (RTP %zu, RTCP %zu)", gsrtp_ctx_overhead (&tx, 0),
      gsrtp_ctx_overhead (&tx, 1));
  len = make_rtp (orig, 0xabc, 65530, 0, 100);
  memcpy (p, orig, len);
  r = gsrtp_rtp_protect (&tx, p, len, len + 13, &ol);
  check (r == GSRTP_ERR_NO_SPACE, "MKI: no room for the MKI -> %s", gsrtp_result_name (r));
  gsrtp_rtp_protect (&tx, p, len, sizeof p, &ol);
  check (ol == len + 14 && memcmp (p + len, mki_a, 4) == 0, "MKI: sits between payload and tag");
  memcpy (q, p, ol);
  q[len + 3] ^= 3;            /* MKI of key B: not key A's packet */
  r = gsrtp_rtp_unprotect (&rx, q, ol, &dl);
  check (r == GSRTP_ERR_BAD_MKI && q[len + 3] == 2, "MKI: another MKI -> %s, packet untouched",
      gsrtp_result_name (r));
  r = gsrtp_rtp_unprotect (&rx, p, ol, &dl);
  check (r == GSRTP_OK && dl == len && memcmp (p, orig, len) == 0, "MKI: own MKI accepted");
  /* the sender switches to key B across the sequence number wrap */
  gsrtp_ctx_init (&rx_b, pol, pol, key_b, 30, 0);
  gsrtp_ctx_set_mki (&rx_b, mki_b, 4);
  {
    GsSrtpCtx tx_b;
    gsrtp_ctx_init (&tx_b, pol, pol, key_b, 30, 0);
    gsrtp_ctx_set_mki (&tx_b, mki_b, 4);
    gsrtp_ctx_take_keys (&tx, &tx_b);
    gsrtp_ctx_clear (&tx_b);
  }
  for (int i = 1; i < 20; i++) {
    len = make_rtp (orig, 0xabc, (uint16_t) (65530 + i), 0, 50 + i);
    memcpy (p, orig, len);
    gsrtp_rtp_protect (&tx, p, len, sizeof p, &ol);
    r = gsrtp_rtp_unprotect (&rx, p, ol, &dl);
    if (r == GSRTP_ERR_BAD_MKI) {
      const uint8_t *m = gsrtp_packet_mki (&rx, p, ol, 0);
      if (!m || memcmp (m, mki_b, 4) != 0)
        bad++;
      gsrtp_ctx_take_keys (&rx, &rx_b);
      r = gsrtp_rtp_unprotect (&rx, p, ol, &dl);
    }
    if (r != GSRTP_OK || dl != len || memcmp (p, orig, len))
      bad++;
  }
  check (bad == 0 && rx.roc == 1 && tx.roc == 1,
      "MKI: receiver takes the second key and keeps its ROC across the wrap (%d bad, ROC %u)",
      bad, rx.roc);
  gsrtp_ctx_clear (&tx);
  gsrtp_ctx_clear (&rx);
  gsrtp_ctx_clear (&rx_b);
}

int
main (void)
{
  test_vectors ();
#ifdef HAVE_LIBCRYPTO
  test_gcm_openssl ();
#endif
#ifdef HAVE_LIBSRTP2
  srtp_init ();
  for (size_t i = 0; i < N_PROFILES; i++) {
    test_libsrtp_profile (&profiles[i], 0);
    /* srtpenc's usual 4-byte MKI, and libsrtp's longest */
    test_libsrtp_profile (&profiles[i], i == 0 ? GSRTP_MAX_MKI : 4);
  }
#else
  printf ("SKIP - libsrtp2 not found: no interop checks\n");
#endif
  test_sha1_mb ();
  test_sha1_levels ();
  test_batch ();
  for (size_t i = 0; i < 6; i++)
    test_negative (&profiles[i]);
  test_roc ();
  test_index_exhausted ();
  test_mki ();
  test_gcm_key_cache ();
  test_big_window ();
  printf ("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
