/* srtp_hd.h: the per-packet SRTP math, written once (GS_HD) so the scalar CPU
 * reference, the CPU emulation of the GPU path and the CUDA kernel run the
 * very same lines: AES-128/256 (T-table), AES-CM, SHA-1 + HMAC-SHA1 from
 * precomputed ipad/opad midstates, GHASH (bitwise) + AES-GCM, and
 * gs_srtp_hd_protect() / gs_srtp_hd_unprotect(), which protect / check and
 * decrypt one packet described by a GsSrtpDesc.
 *
 * No GLib, no libc beyond <stdint.h>/<string.h>-free code, no globals: the
 * AES tables come in by pointer (host: the static copy, GPU: shared memory). */
#ifndef SRTP_HD_H
#define SRTP_HD_H

#include <stdint.h>
#include "common/gs_hd.h"
#include "srtp/srtp_aes_tables.h"

/* ---- session keys of one direction (RTP or RTCP) of one context ---------
 * Plain data: the GPU path copies an array of these to the device. */
enum { GS_SRTP_C_NULL = 0, GS_SRTP_C_AES_CM = 1, GS_SRTP_C_AES_GCM = 2 };

/* libsrtp's SRTP_MAX_MKI_LEN: srtpenc / srtpdec refuse longer MKIs */
#define GS_SRTP_MAX_MKI 128

typedef struct {
  uint32_t rk[60];        /* AES round keys, big-endian words (FIPS-197 w[]) */
  uint32_t hmac_i[5];     /* SHA-1 state after key ^ ipad */
  uint32_t hmac_o[5];     /* SHA-1 state after key ^ opad */
  uint8_t salt[16];       /* session salt: 14 bytes (CM) or 12 (GCM), rest 0 */
  uint8_t gcm_h[16];      /* GHASH key E(K, 0^128) */
  uint8_t cipher;         /* GS_SRTP_C_* */
  uint8_t rounds;         /* 10 (AES-128) or 14 (AES-256); 0 for NULL */
  uint8_t hmac;           /* 1 when HMAC-SHA1 authenticates (CM / NULL cipher) */
  uint8_t tag_len;        /* 0, 4, 10 (HMAC) or 16 (GCM) */
  uint8_t encrypt;        /* 0 for the NULL cipher */
  uint8_t mki_len;        /* 0: no MKI in the packets */
  uint8_t pad_[10];
  uint8_t mki[GS_SRTP_MAX_MKI]; /* master key identifier (RFC 3711 3.1) */
} GsSrtpKeys;

/* ---- one packet of a batch: everything the per-packet math needs, prepared
 * on the host (header parsing, ROC / SRTCP index bookkeeping) ---- */
typedef struct {
  uint32_t offset;        /* packet start in the batch buffer */
  uint32_t len;           /* unprotected length (RTP header + payload / RTCP) */
  uint32_t hdr_len;       /* bytes left in clear: RTP header, or 8 for RTCP */
  uint32_t keys;          /* index into the GsSrtpKeys array */
  uint32_t roc;           /* RTP: rollover counter; RTCP: E bit | SRTCP index */
  uint32_t is_rtcp;       /* 0 RTP, 1 RTCP */
} GsSrtpDesc;

/* ---- byte helpers ---- */
GS_HD uint32_t gs_ld32 (const uint8_t *p)
{
  return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

GS_HD void gs_st32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v;
}

GS_HD uint32_t gs_ror32 (uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
GS_HD uint32_t gs_rol32 (uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

/* ---- AES ---- */
GS_HD uint32_t gs_aes_subword (const GsAesTables *t, uint32_t w)
{
  return ((uint32_t) t->sbox[w >> 24] << 24) | ((uint32_t) t->sbox[(w >> 16) & 0xff] << 16) |
         ((uint32_t) t->sbox[(w >> 8) & 0xff] << 8) | t->sbox[w & 0xff];
}

/* FIPS-197 5.2; key_len 16 or 32. Returns the number of rounds. */
GS_HD int gs_aes_expand (const GsAesTables *t, const uint8_t *key, int key_len, uint32_t *rk)
{
  int nk = key_len / 4, nr = nk + 6, i;
  uint32_t rcon = 1;
  for (i = 0; i < nk; i++)
    rk[i] = gs_ld32 (key + 4 * i);
  for (i = nk; i < 4 * (nr + 1); i++) {
    uint32_t tmp = rk[i - 1];
    if (i % nk == 0) {
      tmp = gs_aes_subword (t, gs_rol32 (tmp, 8)) ^ (rcon << 24);
      rcon = (rcon << 1) ^ ((rcon & 0x80) ? 0x11b : 0);
    } else if (nk > 6 && i % nk == 4) {
      tmp = gs_aes_subword (t, tmp);
    }
    rk[i] = rk[i - nk] ^ tmp;
  }
  return nr;
}

#define GS_AES_TE(t, s0, s1, s2, s3) \
  ((t)->te0[(s0) >> 24] ^ gs_ror32 ((t)->te0[((s1) >> 16) & 0xff], 8) ^ \
   gs_ror32 ((t)->te0[((s2) >> 8) & 0xff], 16) ^ gs_ror32 ((t)->te0[(s3) & 0xff], 24))
#define GS_AES_SB(t, s0, s1, s2, s3) \
  (((uint32_t) (t)->sbox[(s0) >> 24] << 24) | ((uint32_t) (t)->sbox[((s1) >> 16) & 0xff] << 16) | \
   ((uint32_t) (t)->sbox[((s2) >> 8) & 0xff] << 8) | (t)->sbox[(s3) & 0xff])

/* One block, state as four big-endian words (in place). */
GS_HD void gs_aes_encrypt_w (const GsAesTables *t, const uint32_t *rk, int nr, uint32_t s[4])
{
  uint32_t s0 = s[0] ^ rk[0], s1 = s[1] ^ rk[1], s2 = s[2] ^ rk[2], s3 = s[3] ^ rk[3];
  int r;
  for (r = 1; r < nr; r++) {
    uint32_t t0 = GS_AES_TE (t, s0, s1, s2, s3) ^ rk[4 * r];
    uint32_t t1 = GS_AES_TE (t, s1, s2, s3, s0) ^ rk[4 * r + 1];
    uint32_t t2 = GS_AES_TE (t, s2, s3, s0, s1) ^ rk[4 * r + 2];
    uint32_t t3 = GS_AES_TE (t, s3, s0, s1, s2) ^ rk[4 * r + 3];
    s0 = t0; s1 = t1; s2 = t2; s3 = t3;
  }
  s[0] = GS_AES_SB (t, s0, s1, s2, s3) ^ rk[4 * nr];
  s[1] = GS_AES_SB (t, s1, s2, s3, s0) ^ rk[4 * nr + 1];
  s[2] = GS_AES_SB (t, s2, s3, s0, s1) ^ rk[4 * nr + 2];
  s[3] = GS_AES_SB (t, s3, s0, s1, s2) ^ rk[4 * nr + 3];
}

GS_HD void gs_aes_encrypt_block (const GsAesTables *t, const uint32_t *rk, int nr,
    const uint8_t in[16], uint8_t out[16])
{
  uint32_t s[4];
  int i;
  for (i = 0; i < 4; i++)
    s[i] = gs_ld32 (in + 4 * i);
  gs_aes_encrypt_w (t, rk, nr, s);
  for (i = 0; i < 4; i++)
    gs_st32 (out + 4 * i, s[i]);
}

/* Counter mode: the counter is the last 32-bit word of ctr0 (big-endian),
 * incremented per block. SRTP's AES-CM counts in the low 16 bits, GCM in the
 * low 32: packets are far below 2^16 blocks, so both reduce to this.
 * Only the keystream blocks lane, lane + lanes, ... of buf: the lanes of a
 * warp share one packet (srtp_protect_batch_warp); lane 0 of 1 is all. */
GS_HD void gs_aes_ctr_xor_lanes (const GsAesTables *t, const uint32_t *rk, int nr,
    const uint8_t ctr0[16], uint8_t *buf, uint32_t len, uint32_t lane, uint32_t lanes)
{
  uint32_t c0 = gs_ld32 (ctr0), c1 = gs_ld32 (ctr0 + 4), c2 = gs_ld32 (ctr0 + 8),
      c3 = gs_ld32 (ctr0 + 12);
  uint32_t j;
  for (j = lane; j < (len + 15) / 16; j += lanes) {
    uint32_t s[4] = { c0, c1, c2, c3 + j };
    uint8_t ks[16];
    uint32_t i, off = 16 * j, n = len - off < 16 ? len - off : 16;
    gs_aes_encrypt_w (t, rk, nr, s);
    for (i = 0; i < 4; i++)
      gs_st32 (ks + 4 * i, s[i]);
    for (i = 0; i < n; i++)
      buf[off + i] ^= ks[i];
  }
}

GS_HD void gs_aes_ctr_xor (const GsAesTables *t, const uint32_t *rk, int nr,
    const uint8_t ctr0[16], uint8_t *buf, uint32_t len)
{
  gs_aes_ctr_xor_lanes (t, rk, nr, ctr0, buf, len, 0, 1);
}

/* ---- SHA-1 ---- */
GS_HD void gs_sha1_init (uint32_t st[5])
{
  st[0] = 0x67452301u; st[1] = 0xefcdab89u; st[2] = 0x98badcfeu;
  st[3] = 0x10325476u; st[4] = 0xc3d2e1f0u;
}

GS_HD void gs_sha1_compress (uint32_t st[5], const uint8_t *blk)
{
  uint32_t w[16], a = st[0], b = st[1], c = st[2], d = st[3], e = st[4];
  int i;
  for (i = 0; i < 16; i++)
    w[i] = gs_ld32 (blk + 4 * i);
  for (i = 0; i < 80; i++) {
    uint32_t f, k, tmp;
    if (i >= 16)
      w[i & 15] = gs_rol32 (w[(i - 3) & 15] ^ w[(i - 8) & 15] ^ w[(i - 14) & 15] ^ w[i & 15], 1);
    if (i < 20) { f = (b & c) | (~b & d); k = 0x5a827999u; }
    else if (i < 40) { f = b ^ c ^ d; k = 0x6ed9eba1u; }
    else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdcu; }
    else { f = b ^ c ^ d; k = 0xca62c1d6u; }
    tmp = gs_rol32 (a, 5) + f + e + k + w[i & 15];
    e = d; d = c; c = gs_rol32 (b, 30); b = a; a = tmp;
  }
  st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e;
}

/* SHA-1 of (64 * prefix_blocks bytes already in st) || m1[0..n1) || m2[0..n2),
 * n2 <= 64; the digest is left in st. This is the HMAC inner/outer hash over
 * an SRTP packet followed by its ROC, without copying the packet. */
GS_HD void gs_sha1_finish2 (uint32_t st[5], uint32_t prefix_blocks,
    const uint8_t *m1, uint32_t n1, const uint8_t *m2, uint32_t n2)
{
  uint8_t tail[192];
  uint32_t full = n1 / 64, r = n1 % 64, tl, i;
  uint64_t bits = ((uint64_t) prefix_blocks * 64 + n1 + n2) * 8;
  for (i = 0; i < full; i++)
    gs_sha1_compress (st, m1 + 64 * i);
  for (i = 0; i < r; i++)
    tail[i] = m1[64 * full + i];
  for (i = 0; i < n2; i++)
    tail[r + i] = m2[i];
  tl = r + n2;
  tail[tl++] = 0x80;
  while (tl % 64 != 56)
    tail[tl++] = 0;
  gs_st32 (tail + tl, (uint32_t) (bits >> 32));
  gs_st32 (tail + tl + 4, (uint32_t) bits);
  tl += 8;
  for (i = 0; i < tl; i += 64)
    gs_sha1_compress (st, tail + i);
}

/* HMAC-SHA1 from the ipad/opad midstates; out gets the 20-byte MAC. */
GS_HD void gs_hmac_sha1_2seg (const uint32_t *istate, const uint32_t *ostate,
    const uint8_t *m1, uint32_t n1, const uint8_t *m2, uint32_t n2, uint8_t out[20])
{
  uint32_t st[5], i;
  uint8_t inner[20];
  for (i = 0; i < 5; i++)
    st[i] = istate[i];
  gs_sha1_finish2 (st, 1, m1, n1, m2, n2);
  for (i = 0; i < 5; i++)
    gs_st32 (inner + 4 * i, st[i]);
  for (i = 0; i < 5; i++)
    st[i] = ostate[i];
  gs_sha1_finish2 (st, 1, inner, 20, inner, 0);
  for (i = 0; i < 5; i++)
    gs_st32 (out + 4 * i, st[i]);
}

/* ---- GHASH (GCM, SP 800-38D): bitwise multiply, the reference ---- */
typedef struct { uint64_t hi, lo; } GsU128;

GS_HD GsU128 gs_ld128 (const uint8_t *p)
{
  GsU128 r;
  r.hi = ((uint64_t) gs_ld32 (p) << 32) | gs_ld32 (p + 4);
  r.lo = ((uint64_t) gs_ld32 (p + 8) << 32) | gs_ld32 (p + 12);
  return r;
}

GS_HD GsU128 gs_gf128_mul (GsU128 x, GsU128 h)
{
  GsU128 z = { 0, 0 }, v = h;
  int i;
  for (i = 0; i < 128; i++) {
    uint64_t bit = i < 64 ? (x.hi >> (63 - i)) & 1 : (x.lo >> (127 - i)) & 1;
    uint64_t lsb = v.lo & 1;
    z.hi ^= v.hi & (0 - bit);
    z.lo ^= v.lo & (0 - bit);
    v.lo = (v.lo >> 1) | (v.hi << 63);
    v.hi = (v.hi >> 1) ^ (0xe100000000000000ull & (0 - lsb));
  }
  return z;
}

/* X = (X ^ zero-padded blocks of buf) * H, block by block. */
GS_HD GsU128 gs_ghash_update (GsU128 x, GsU128 h, const uint8_t *buf, uint32_t len)
{
  uint32_t off = 0;
  while (off < len) {
    uint8_t blk[16];
    uint32_t i, n = len - off < 16 ? len - off : 16;
    for (i = 0; i < 16; i++)
      blk[i] = i < n ? buf[off + i] : 0;
    GsU128 b = gs_ld128 (blk);
    x.hi ^= b.hi; x.lo ^= b.lo;
    x = gs_gf128_mul (x, h);
    off += n;
  }
  return x;
}

/* GCM with a 12-byte IV over an AAD made of two pieces (aad1 || aad2) and a
 * body encrypted (enc = 1) or decrypted (enc = 0) in place. The tag (16
 * bytes) is written to tag; on decryption the caller compares it first and
 * then calls again with decrypt_body = 1 (gs_gcm_tag_only then ctr). */
GS_HD void gs_gcm_tag (const GsAesTables *t, const GsSrtpKeys *k, const uint8_t iv[12],
    const uint8_t *aad1, uint32_t n1, const uint8_t *aad2, uint32_t n2,
    const uint8_t *ct, uint32_t clen, uint8_t tag[16])
{
  GsU128 h = gs_ld128 (k->gcm_h), x = { 0, 0 };
  uint8_t j0[16], lens[16];
  uint32_t i;
  if (n2 == 0) {
    x = gs_ghash_update (x, h, aad1, n1);
  } else {
    /* only SRTCP has a split AAD: 8 header bytes + 4 trailer bytes */
    uint8_t a[16];
    for (i = 0; i < n1; i++) a[i] = aad1[i];
    for (i = 0; i < n2; i++) a[n1 + i] = aad2[i];
    x = gs_ghash_update (x, h, a, n1 + n2);
  }
  x = gs_ghash_update (x, h, ct, clen);
  gs_st32 (lens, 0);
  gs_st32 (lens + 4, (n1 + n2) * 8);
  gs_st32 (lens + 8, clen >> 29);
  gs_st32 (lens + 12, clen * 8);
  x = gs_ghash_update (x, h, lens, 16);
  for (i = 0; i < 12; i++) j0[i] = iv[i];
  gs_st32 (j0 + 12, 1);
  gs_aes_encrypt_block (t, k->rk, k->rounds, j0, j0);
  gs_st32 (lens, (uint32_t) (x.hi >> 32));
  gs_st32 (lens + 4, (uint32_t) x.hi);
  gs_st32 (lens + 8, (uint32_t) (x.lo >> 32));
  gs_st32 (lens + 12, (uint32_t) x.lo);
  for (i = 0; i < 16; i++)
    tag[i] = j0[i] ^ lens[i];
}

GS_HD void gs_gcm_ctr_lanes (const GsAesTables *t, const GsSrtpKeys *k, const uint8_t iv[12],
    uint8_t *buf, uint32_t len, uint32_t lane, uint32_t lanes)
{
  uint8_t ctr[16];
  uint32_t i;
  for (i = 0; i < 12; i++) ctr[i] = iv[i];
  gs_st32 (ctr + 12, 2);
  gs_aes_ctr_xor_lanes (t, k->rk, k->rounds, ctr, buf, len, lane, lanes);
}

GS_HD void gs_gcm_ctr (const GsAesTables *t, const GsSrtpKeys *k, const uint8_t iv[12],
    uint8_t *buf, uint32_t len)
{
  gs_gcm_ctr_lanes (t, k, iv, buf, len, 0, 1);
}

/* ---- SRTP IVs ---- */
/* RFC 3711 4.1.1: IV = (salt << 16) ^ (SSRC << 64) ^ (index << 16). For
 * SRTCP the index is the 31-bit SRTCP index. */
GS_HD void gs_srtp_cm_iv (const GsSrtpKeys *k, uint32_t ssrc, uint64_t index, uint8_t iv[16])
{
  int i;
  for (i = 0; i < 14; i++) iv[i] = k->salt[i];
  iv[14] = iv[15] = 0;
  for (i = 0; i < 4; i++) iv[4 + i] ^= (uint8_t) (ssrc >> (24 - 8 * i));
  for (i = 0; i < 6; i++) iv[8 + i] ^= (uint8_t) (index >> (40 - 8 * i));
}

/* RFC 7714 8.1 / 9.1: IV = salt ^ (0x0000 || SSRC || w1 || w2), where
 * (w1, w2) = (ROC, SEQ) for SRTP and (0x0000, SRTCP index) for SRTCP. */
GS_HD void gs_srtp_gcm_iv (const GsSrtpKeys *k, uint32_t ssrc, uint32_t hi32, uint32_t lo16,
    int rtcp, uint8_t iv[12])
{
  uint8_t b[12];
  int i;
  b[0] = b[1] = 0;
  gs_st32 (b + 2, ssrc);
  if (rtcp) {
    b[6] = b[7] = 0;
    gs_st32 (b + 8, lo16);
  } else {
    gs_st32 (b + 6, hi32);
    b[10] = (uint8_t) (lo16 >> 8);
    b[11] = (uint8_t) lo16;
  }
  for (i = 0; i < 12; i++) iv[i] = b[i] ^ k->salt[i];
}

/* ---- the MKI ----
 * RFC 3711 3.1 / 3.4: the MKI follows the encrypted portion (and the SRTCP
 * trailer) and precedes an HMAC tag; RFC 7714 puts it after the GCM tag (and
 * the SRTCP trailer). It is not authenticated, so protect computes the packet
 * as without MKI and then opens the gap: out_len is that MKI-less length.
 * Returns the length with the MKI. */
GS_HD uint32_t gs_srtp_hd_place_mki (const GsSrtpKeys *k, uint8_t *pkt, uint32_t out_len)
{
  uint32_t m = k->mki_len, after = k->cipher == GS_SRTP_C_AES_GCM ? 0 : k->tag_len, i;
  if (m == 0)
    return out_len;
  for (i = 0; i < after; i++)     /* the HMAC tag moves back; backwards, it overlaps */
    pkt[out_len + m - 1 - i] = pkt[out_len - 1 - i];
  for (i = 0; i < m; i++)
    pkt[out_len - after + i] = k->mki[i];
  return out_len + m;
}

/* Offset of the MKI in a received packet of len bytes (len >= tag + MKI). */
GS_HD uint32_t gs_srtp_hd_mki_offset (const GsSrtpKeys *k, uint32_t len)
{
  return len - k->mki_len - (k->cipher == GS_SRTP_C_AES_GCM ? 0 : k->tag_len);
}

/* ---- one packet, protect, in place ----
 * pkt has room for the tag (+ 4 bytes SRTCP trailer, + the MKI). The SRTCP
 * trailer value (E | index) comes in d->roc. Two steps, so a warp can share
 * the first: the body's encryption, its keystream blocks lane, lane + lanes,
 * ... (lanes = 1: all of it), then the tag and trailer over the ciphertext,
 * a serial chain (HMAC-SHA1 or GHASH) that one thread runs. */
GS_HD void gs_srtp_hd_seal_encrypt (const GsAesTables *t, const GsSrtpKeys *k,
    uint8_t *pkt, const GsSrtpDesc *d, uint32_t lane, uint32_t lanes)
{
  uint32_t len = d->len, hl = d->hdr_len;
  if (!d->is_rtcp) {
    uint32_t ssrc = gs_ld32 (pkt + 8), seq = ((uint32_t) pkt[2] << 8) | pkt[3];
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      uint8_t iv[12];
      gs_srtp_gcm_iv (k, ssrc, d->roc, seq, 0, iv);
      gs_gcm_ctr_lanes (t, k, iv, pkt + hl, len - hl, lane, lanes);
    } else if (k->encrypt) {
      uint8_t iv[16];
      gs_srtp_cm_iv (k, ssrc, ((uint64_t) d->roc << 16) | seq, iv);
      gs_aes_ctr_xor_lanes (t, k->rk, k->rounds, iv, pkt + hl, len - hl, lane, lanes);
    }
  } else {
    uint32_t ssrc = gs_ld32 (pkt + 4), idx = d->roc & 0x7fffffffu;
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      uint8_t iv[12];
      gs_srtp_gcm_iv (k, ssrc, 0, idx, 1, iv);
      gs_gcm_ctr_lanes (t, k, iv, pkt + 8, len - 8, lane, lanes);
    } else if (k->encrypt && (d->roc >> 31)) {
      uint8_t iv[16];
      gs_srtp_cm_iv (k, ssrc, idx, iv);
      gs_aes_ctr_xor_lanes (t, k->rk, k->rounds, iv, pkt + 8, len - 8, lane, lanes);
    }
  }
}

/* The second step: returns the protected length (without the MKI). */
GS_HD uint32_t gs_srtp_hd_seal_auth (const GsAesTables *t, const GsSrtpKeys *k,
    uint8_t *pkt, const GsSrtpDesc *d)
{
  uint32_t len = d->len, hl = d->hdr_len;
  uint8_t tmp[20];
  uint32_t i;
  if (!d->is_rtcp) {
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      uint32_t ssrc = gs_ld32 (pkt + 8), seq = ((uint32_t) pkt[2] << 8) | pkt[3];
      uint8_t iv[12];
      gs_srtp_gcm_iv (k, ssrc, d->roc, seq, 0, iv);
      gs_gcm_tag (t, k, iv, pkt, hl, pkt, 0, pkt + hl, len - hl, pkt + len);
      return len + 16;
    }
    if (k->hmac) {
      uint8_t roc[4];
      gs_st32 (roc, d->roc);
      gs_hmac_sha1_2seg (k->hmac_i, k->hmac_o, pkt, len, roc, 4, tmp);
      for (i = 0; i < k->tag_len; i++)
        pkt[len + i] = tmp[i];
    }
    return len + k->tag_len;
  } else {
    uint8_t trailer[4];
    gs_st32 (trailer, d->roc);
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      uint32_t ssrc = gs_ld32 (pkt + 4), idx = d->roc & 0x7fffffffu;
      uint8_t iv[12];
      gs_srtp_gcm_iv (k, ssrc, 0, idx, 1, iv);
      gs_gcm_tag (t, k, iv, pkt, 8, trailer, 4, pkt + 8, len - 8, pkt + len);
      for (i = 0; i < 4; i++)
        pkt[len + 16 + i] = trailer[i];
      return len + 20;
    }
    for (i = 0; i < 4; i++)
      pkt[len + i] = trailer[i];
    if (k->hmac) {
      gs_hmac_sha1_2seg (k->hmac_i, k->hmac_o, pkt, len + 4, pkt, 0, tmp);
      for (i = 0; i < k->tag_len; i++)
        pkt[len + 4 + i] = tmp[i];
    }
    return len + 4 + k->tag_len;
  }
}

GS_HD uint32_t gs_srtp_hd_seal (const GsAesTables *t, const GsSrtpKeys *k,
    uint8_t *pkt, const GsSrtpDesc *d)
{
  gs_srtp_hd_seal_encrypt (t, k, pkt, d, 0, 1);
  return gs_srtp_hd_seal_auth (t, k, pkt, d);
}

GS_HD uint32_t gs_srtp_hd_protect (const GsAesTables *t, const GsSrtpKeys *k,
    uint8_t *pkt, const GsSrtpDesc *d)
{
  return gs_srtp_hd_place_mki (k, pkt, gs_srtp_hd_seal (t, k, pkt, d));
}

/* ---- one packet, unprotect ----
 * d describes the received packet as gsrtp_prepare_unprotect_desc fills it:
 * len without tag, SRTCP trailer and MKI; roc the ROC, or for SRTCP the
 * trailer (E bit | index). */

/* Where the received tag is. RTP: right after the packet; SRTCP-CM: after
 * the trailer; SRTCP-GCM: before the trailer. An HMAC tag follows the MKI,
 * a GCM tag precedes it. */
GS_HD const uint8_t *gs_srtp_hd_received_tag (const GsSrtpKeys *k, const uint8_t *pkt,
    const GsSrtpDesc *d)
{
  if (k->cipher == GS_SRTP_C_AES_GCM)
    return pkt + d->len;
  return pkt + d->len + (d->is_rtcp ? 4 : 0) + k->mki_len;
}

/* The tag the packet should carry, over its protected form (no decryption).
 * Nothing is written when the profile has no tag. */
GS_HD void gs_srtp_hd_expected_tag (const GsAesTables *t, const GsSrtpKeys *k,
    const uint8_t *pkt, const GsSrtpDesc *d, uint8_t tag[20])
{
  uint8_t b[4];
  if (k->cipher == GS_SRTP_C_AES_GCM) {
    uint8_t iv[12];
    if (!d->is_rtcp) {
      uint32_t seq = ((uint32_t) pkt[2] << 8) | pkt[3];
      gs_srtp_gcm_iv (k, gs_ld32 (pkt + 8), d->roc, seq, 0, iv);
      gs_gcm_tag (t, k, iv, pkt, d->hdr_len, pkt, 0, pkt + d->hdr_len, d->len - d->hdr_len, tag);
    } else {
      gs_st32 (b, d->roc);
      gs_srtp_gcm_iv (k, gs_ld32 (pkt + 4), 0, d->roc & 0x7fffffffu, 1, iv);
      gs_gcm_tag (t, k, iv, pkt, 8, b, 4, pkt + 8, d->len - 8, tag);
    }
  } else if (k->hmac) {
    if (!d->is_rtcp) {
      gs_st32 (b, d->roc);
      gs_hmac_sha1_2seg (k->hmac_i, k->hmac_o, pkt, d->len, b, 4, tag);
    } else {
      /* SRTCP-CM: the trailer right after the body is authenticated too */
      gs_hmac_sha1_2seg (k->hmac_i, k->hmac_o, pkt, d->len + 4, pkt, 0, tag);
    }
  }
}

/* Decrypts the body in place (nothing for the NULL cipher or an SRTCP
 * packet sent with E = 0). */
GS_HD void gs_srtp_hd_decrypt (const GsAesTables *t, const GsSrtpKeys *k, uint8_t *pkt,
    const GsSrtpDesc *d)
{
  uint32_t hl = d->hdr_len;
  if (!k->encrypt)
    return;
  if (!d->is_rtcp) {
    uint32_t ssrc = gs_ld32 (pkt + 8), seq = ((uint32_t) pkt[2] << 8) | pkt[3];
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      uint8_t iv[12];
      gs_srtp_gcm_iv (k, ssrc, d->roc, seq, 0, iv);
      gs_gcm_ctr (t, k, iv, pkt + hl, d->len - hl);
    } else {
      uint8_t iv[16];
      gs_srtp_cm_iv (k, ssrc, ((uint64_t) d->roc << 16) | seq, iv);
      gs_aes_ctr_xor (t, k->rk, k->rounds, iv, pkt + hl, d->len - hl);
    }
  } else {
    uint32_t ssrc = gs_ld32 (pkt + 4), idx = d->roc & 0x7fffffffu;
    if (!(d->roc >> 31))
      return;     /* E = 0: sent in clear */
    if (k->cipher == GS_SRTP_C_AES_GCM) {
      uint8_t iv[12];
      gs_srtp_gcm_iv (k, ssrc, 0, idx, 1, iv);
      gs_gcm_ctr (t, k, iv, pkt + 8, d->len - 8);
    } else {
      uint8_t iv[16];
      gs_srtp_cm_iv (k, ssrc, idx, iv);
      gs_aes_ctr_xor (t, k->rk, k->rounds, iv, pkt + 8, d->len - 8);
    }
  }
}

/* Constant time: how far two tags agree must not show in the timing. */
GS_HD int gs_srtp_hd_ct_equal (const uint8_t *a, const uint8_t *b, uint32_t n)
{
  uint8_t diff = 0;
  uint32_t i;
  for (i = 0; i < n; i++)
    diff |= a[i] ^ b[i];
  return diff == 0;
}

/* Checks the tag and, only if it matches, decrypts in place. Returns 1 on
 * success (always for a profile without tag), 0 on an authentication
 * failure, with the packet untouched. The unprotected length is d->len. */
GS_HD int gs_srtp_hd_unprotect (const GsAesTables *t, const GsSrtpKeys *k, uint8_t *pkt,
    const GsSrtpDesc *d)
{
  if (k->tag_len) {
    uint8_t tag[20];
    gs_srtp_hd_expected_tag (t, k, pkt, d, tag);
    if (!gs_srtp_hd_ct_equal (tag, gs_srtp_hd_received_tag (k, pkt, d), k->tag_len))
      return 0;
  }
  gs_srtp_hd_decrypt (t, k, pkt, d);
  return 1;
}

#endif /* SRTP_HD_H */
