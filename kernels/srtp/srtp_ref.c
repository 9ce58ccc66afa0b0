/* srtp_ref.c: SRTP contexts (KDF, ROC, replay) and the scalar reference
 * protect / unprotect, built on the GS_HD per-packet math of srtp_hd.h. */
#include <string.h>
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_internal.h"

static const GsAesTables gs_aes_tables_host = GS_AES_TABLES_INIT;

const GsAesTables *
gsrtp_aes_tables (void)
{
  return &gs_aes_tables_host;
}

const char *
gsrtp_result_name (GsSrtpResult r)
{
  static const char *names[] = { "ok", "auth-fail", "replay", "replay-old", "too-short",
    "bad-header", "no-space", "bad-param", "index-exhausted", "bad-mki" };
  return (unsigned) r < sizeof names / sizeof *names ? names[r] : "unknown";
}

/* Wipe that the compiler keeps (keys leave no copies behind). */
void
gsrtp_wipe (void *p, size_t n)
{
#if defined(__GNUC__) || defined(__clang__)
  /* memset at full width (a per-buffer GCM batch wipes a 752-byte expanded
   * key: ~3000 instructions byte by byte); the barrier keeps the store */
  memset (p, 0, n);
  __asm__ __volatile__ ("" : : "r" (p) : "memory");
#else
  volatile uint8_t *v = (volatile uint8_t *) p;
  while (n--)
    *v++ = 0;
#endif
}

/* ---- SHA-1 / HMAC helpers ---- */
void
gsrtp_sha1 (const uint8_t *msg, size_t len, uint8_t out[20])
{
  uint32_t st[5];
  size_t full = len / 64 * 64;
  int i;
  gs_sha1_init (st);
  /* gs_sha1_finish2 counts the length in 32-bit pieces: feed big inputs as
   * whole blocks first, passing the block count as the prefix. */
  for (size_t off = 0; off < full; off += 64)
    gs_sha1_compress (st, msg + off);
  gs_sha1_finish2 (st, (uint32_t) (full / 64), msg + full, (uint32_t) (len - full), msg, 0);
  for (i = 0; i < 5; i++)
    gs_st32 (out + 4 * i, st[i]);
}

void
gsrtp_hmac_sha1_midstates (const uint8_t *key, size_t key_len, uint32_t istate[5],
    uint32_t ostate[5])
{
  uint8_t k[64], blk[64];
  int i;
  memset (k, 0, sizeof k);
  if (key_len > 64)
    gsrtp_sha1 (key, key_len, k);
  else
    memcpy (k, key, key_len);
  for (i = 0; i < 64; i++)
    blk[i] = k[i] ^ 0x36;
  gs_sha1_init (istate);
  gs_sha1_compress (istate, blk);
  for (i = 0; i < 64; i++)
    blk[i] = k[i] ^ 0x5c;
  gs_sha1_init (ostate);
  gs_sha1_compress (ostate, blk);
  gsrtp_wipe (k, sizeof k);
  gsrtp_wipe (blk, sizeof blk);
}

void
gsrtp_hmac_sha1 (const uint8_t *key, size_t key_len, const uint8_t *msg, size_t len,
    uint8_t out[20])
{
  uint32_t is[5], os[5];
  gsrtp_hmac_sha1_midstates (key, key_len, is, os);
  gs_hmac_sha1_2seg (is, os, msg, (uint32_t) len, msg, 0, out);
}

/* ---- key derivation ---- */
void
gsrtp_kdf (const uint8_t *master_key, size_t key_len, const uint8_t master_salt[14],
    uint8_t label, uint8_t *out, size_t n)
{
  uint8_t iv[16];
  memcpy (iv, master_salt, 14);
  iv[14] = iv[15] = 0;
  /* key_id = label || r (r = 0 at kdr 0), right-aligned with the salt */
  iv[7] ^= label;
  memset (out, 0, n);
  /* the master key never goes through the T-tables (srtp_portable.c) */
  gsrtp_aes_ctr_portable_key (master_key, (int) key_len, iv, out, (uint32_t) n);
}

size_t
gsrtp_master_key_len (GsSrtpCipher c)
{
  return (c == GSRTP_CIPHER_AES_256_CM || c == GSRTP_CIPHER_AES_256_GCM) ? 32 : 16;
}

size_t
gsrtp_master_salt_len (GsSrtpCipher c)
{
  return (c == GSRTP_CIPHER_AES_128_GCM || c == GSRTP_CIPHER_AES_256_GCM) ? 12 : 14;
}

static int
is_gcm (GsSrtpCipher c)
{
  return c == GSRTP_CIPHER_AES_128_GCM || c == GSRTP_CIPHER_AES_256_GCM;
}

static size_t
tag_len (GsSrtpPolicy p)
{
  if (is_gcm (p.cipher))
    return 16;
  return p.auth == GSRTP_AUTH_HMAC_SHA1_80 ? 10 : p.auth == GSRTP_AUTH_HMAC_SHA1_32 ? 4 : 0;
}

size_t
gsrtp_rtp_overhead (GsSrtpPolicy p)
{
  return tag_len (p);
}

size_t
gsrtp_rtcp_overhead (GsSrtpPolicy p)
{
  return tag_len (p) + 4;
}

size_t
gsrtp_ctx_overhead (const GsSrtpCtx *ctx, int is_rtcp)
{
  return (is_rtcp ? gsrtp_rtcp_overhead (ctx->rtcp) : gsrtp_rtp_overhead (ctx->rtp))
      + ctx->rtp_keys.mki_len;
}

static int
policy_ok (GsSrtpPolicy p)
{
  return (unsigned) p.cipher <= GSRTP_CIPHER_AES_256_GCM && (unsigned) p.auth <= GSRTP_AUTH_HMAC_SHA1_80;
}

/* Session keys of one direction; labels 0..2 (RTP) or 3..5 (RTCP). */
static void
keys_init (GsSrtpKeys *k, GsSrtpPolicy p, const uint8_t *mkey, size_t klen,
    const uint8_t *msalt, size_t slen, uint8_t label0)
{
  uint8_t salt14[14], sk[32], ak[20];
  memset (k, 0, sizeof *k);
  memset (salt14, 0, sizeof salt14);
  memcpy (salt14, msalt, slen);
  k->tag_len = (uint8_t) tag_len (p);
  if (p.cipher != GSRTP_CIPHER_NULL) {
    size_t ek = gsrtp_master_key_len (p.cipher);
    gsrtp_kdf (mkey, klen, salt14, label0, sk, ek);
    /* the reference's round keys, computed without secret-indexed reads */
    k->rounds = (uint8_t) gsrtp_aes_expand_ct (sk, (int) ek, k->rk);
    gsrtp_kdf (mkey, klen, salt14, (uint8_t) (label0 + 2), k->salt, gsrtp_master_salt_len (p.cipher));
    k->encrypt = 1;
    k->cipher = is_gcm (p.cipher) ? GS_SRTP_C_AES_GCM : GS_SRTP_C_AES_CM;
    if (is_gcm (p.cipher)) {
      /* H = E(K, 0^128): the keystream of counter block 0 */
      uint8_t zero[16] = { 0 };
      memset (k->gcm_h, 0, 16);
      gsrtp_aes_ctr_portable (k->rk, k->rounds, zero, k->gcm_h, 16);
    }
  }
  if (!is_gcm (p.cipher) && p.auth != GSRTP_AUTH_NULL) {
    gsrtp_kdf (mkey, klen, salt14, (uint8_t) (label0 + 1), ak, sizeof ak);
    gsrtp_hmac_sha1_midstates (ak, sizeof ak, k->hmac_i, k->hmac_o);
    k->hmac = 1;
  }
  gsrtp_wipe (sk, sizeof sk);
  gsrtp_wipe (ak, sizeof ak);
  gsrtp_wipe (salt14, sizeof salt14);
}

GsSrtpResult
gsrtp_ctx_init (GsSrtpCtx *ctx, GsSrtpPolicy rtp, GsSrtpPolicy rtcp, const uint8_t *key,
    size_t key_len, uint32_t replay_window)
{
  size_t kl = gsrtp_master_key_len (rtp.cipher), sl = gsrtp_master_salt_len (rtp.cipher);
  if (!ctx || !key || !policy_ok (rtp) || !policy_ok (rtcp) || key_len != kl + sl
      || gsrtp_master_key_len (rtcp.cipher) != kl || gsrtp_master_salt_len (rtcp.cipher) != sl
      || replay_window > GSRTP_MAX_WINDOW)
    return GSRTP_ERR_BAD_PARAM;
  memset (ctx, 0, sizeof *ctx);
  ctx->rtp = rtp;
  ctx->rtcp = rtcp;
  keys_init (&ctx->rtp_keys, rtp, key, kl, key + kl, sl, 0);
  keys_init (&ctx->rtcp_keys, rtcp, key, kl, key + kl, sl, 3);
  if (replay_window == 0)
    replay_window = GSRTP_DEFAULT_WINDOW;
  ctx->rtp_replay.size = ctx->rtcp_replay.size = replay_window;
  return GSRTP_OK;
}

void
gsrtp_ctx_clear (GsSrtpCtx *ctx)
{
  gsrtp_wipe (ctx, sizeof *ctx);
}

GsSrtpResult
gsrtp_ctx_set_mki (GsSrtpCtx *ctx, const uint8_t *mki, size_t mki_len)
{
  if (mki_len > GSRTP_MAX_MKI || (mki_len && !mki))
    return GSRTP_ERR_BAD_PARAM;
  ctx->rtp_keys.mki_len = ctx->rtcp_keys.mki_len = (uint8_t) mki_len;
  memset (ctx->rtp_keys.mki, 0, sizeof ctx->rtp_keys.mki);
  memset (ctx->rtcp_keys.mki, 0, sizeof ctx->rtcp_keys.mki);
  if (mki_len) {
    memcpy (ctx->rtp_keys.mki, mki, mki_len);
    memcpy (ctx->rtcp_keys.mki, mki, mki_len);
  }
  return GSRTP_OK;
}

const uint8_t *
gsrtp_packet_mki (const GsSrtpCtx *ctx, const uint8_t *pkt, size_t len, int is_rtcp)
{
  const GsSrtpKeys *k = is_rtcp ? &ctx->rtcp_keys : &ctx->rtp_keys;
  size_t need = (size_t) k->tag_len + k->mki_len + (is_rtcp ? 8 + 4 : 12);
  if (k->mki_len == 0 || len < need || len > 0xffffffffu)
    return NULL;
  return pkt + gs_srtp_hd_mki_offset (k, (uint32_t) len);
}

void
gsrtp_ctx_take_keys (GsSrtpCtx *ctx, const GsSrtpCtx *from)
{
  ctx->rtp_keys = from->rtp_keys;
  ctx->rtcp_keys = from->rtcp_keys;
}

void
gsrtp_ctx_set_roc (GsSrtpCtx *ctx, uint32_t roc)
{
  ctx->roc = roc;
  ctx->have_seq = 0;
}

/* ---- index estimation and replay ---- */
uint64_t
gsrtp_estimate_index (const GsSrtpCtx *ctx, uint16_t seq, int64_t *v_out)
{
  int64_t v = ctx->roc;
  if (ctx->have_seq) {
    if (ctx->s_l < 32768) {
      if ((int64_t) seq - ctx->s_l > 32768)
        v = (int64_t) ctx->roc - 1;
    } else if ((int64_t) ctx->s_l - 32768 > seq) {
      v = (int64_t) ctx->roc + 1;
    }
    /* Before the first wrap a "previous ROC" does not exist: libsrtp takes
     * the sequence number as is there, and so do we (same bytes). */
    if (v < 0 && ctx->roc == 0)
      v = 0;
  }
  *v_out = v;
  return v < 0 ? 0 : ((uint64_t) v << 16) | seq;
}

/* After authentication only (RFC 3711 3.3.1). */
void
gsrtp_update_roc (GsSrtpCtx *ctx, uint16_t seq, int64_t v)
{
  if (!ctx->have_seq) {
    ctx->roc = (uint32_t) v;
    ctx->s_l = seq;
    ctx->have_seq = 1;
  } else if (v == (int64_t) ctx->roc + 1) {
    ctx->roc = (uint32_t) v;
    ctx->s_l = seq;
  } else if (v == ctx->roc && seq > ctx->s_l) {
    ctx->s_l = seq;
  }
}

GsSrtpResult
gsrtp_replay_check (const GsSrtpReplay *r, uint64_t idx)
{
  uint64_t d;
  if (!r->have || idx > r->top)
    return GSRTP_OK;
  d = r->top - idx;
  if (d >= r->size)
    return GSRTP_ERR_REPLAY_OLD;
  idx %= GSRTP_MAX_WINDOW;
  return (r->bits[idx / 64] >> (idx % 64)) & 1 ? GSRTP_ERR_REPLAY : GSRTP_OK;
}

static void
replay_set (GsSrtpReplay *r, uint64_t idx)
{
  idx %= GSRTP_MAX_WINDOW;
  r->bits[idx / 64] |= 1ull << (idx % 64);
}

void
gsrtp_replay_add (GsSrtpReplay *r, uint64_t idx)
{
  if (!r->have || idx >= r->top + GSRTP_MAX_WINDOW) {
    memset (r->bits, 0, sizeof r->bits);
    r->top = idx;
    r->have = 1;
  } else if (idx > r->top) {
    /* the slots of the indices top skips now hold nothing in the window */
    uint64_t i = r->top + 1;
    while (i < idx) {
      uint64_t slot = i % GSRTP_MAX_WINDOW;
      if (slot % 64 == 0 && idx - i >= 64) {
        r->bits[slot / 64] = 0;
        i += 64;
      } else {
        r->bits[slot / 64] &= ~(1ull << (slot % 64));
        i++;
      }
    }
    r->top = idx;
  } else if (r->top - idx >= GSRTP_MAX_WINDOW) {
    return;       /* older than any window: nothing to remember */
  }
  replay_set (r, idx);
}

/* ---- header parsing ---- */
GsSrtpResult
gsrtp_rtp_header_len (const uint8_t *pkt, size_t len, uint32_t *hl_out)
{
  size_t hl;
  if (len < 12)
    return GSRTP_ERR_TOO_SHORT;
  if ((pkt[0] >> 6) != 2)
    return GSRTP_ERR_BAD_HEADER;
  hl = 12 + 4 * (size_t) (pkt[0] & 0x0f);
  if (pkt[0] & 0x10) {
    if (hl + 4 > len)
      return GSRTP_ERR_BAD_HEADER;
    hl += 4 + 4 * (size_t) (((uint32_t) pkt[hl + 2] << 8) | pkt[hl + 3]);
  }
  if (hl > len)
    return GSRTP_ERR_BAD_HEADER;
  *hl_out = (uint32_t) hl;
  return GSRTP_OK;
}

int
gsrtp_ct_equal (const uint8_t *a, const uint8_t *b, size_t n)
{
  return gs_srtp_hd_ct_equal (a, b, (uint32_t) n);
}

/* ---- protect: host half ---- */
GsSrtpResult
gsrtp_prepare_protect (GsSrtpCtx *ctx, const uint8_t *pkt, size_t len, size_t cap,
    int is_rtcp, GsSrtpDesc *d)
{
  GsSrtpResult r;
  uint32_t hl;
  if (len > 0xffff0000u)
    return GSRTP_ERR_BAD_PARAM;
  if (!is_rtcp) {
    uint16_t seq;
    int64_t v;
    if ((r = gsrtp_rtp_header_len (pkt, len, &hl)) != GSRTP_OK)
      return r;
    if (cap < len + gsrtp_ctx_overhead (ctx, 0))
      return GSRTP_ERR_NO_SPACE;
    seq = (uint16_t) ((pkt[2] << 8) | pkt[3]);
    gsrtp_estimate_index (ctx, seq, &v);
    if (v > 0xffffffffll)
      return GSRTP_ERR_INDEX_EXHAUSTED;
    gsrtp_update_roc (ctx, seq, v);
    d->roc = (uint32_t) v;
  } else {
    if (len < 8)
      return GSRTP_ERR_TOO_SHORT;
    if ((pkt[0] >> 6) != 2)
      return GSRTP_ERR_BAD_HEADER;
    if (cap < len + gsrtp_ctx_overhead (ctx, 1))
      return GSRTP_ERR_NO_SPACE;
    if (ctx->srtcp_index >= 0x7fffffffu)
      return GSRTP_ERR_INDEX_EXHAUSTED;
    /* libsrtp's first SRTCP index is 1 */
    ctx->srtcp_index++;
    hl = 8;
    d->roc = ctx->srtcp_index | (ctx->rtcp_keys.encrypt ? 0x80000000u : 0);
  }
  d->len = (uint32_t) len;
  d->hdr_len = hl;
  d->is_rtcp = is_rtcp ? 1 : 0;
  return GSRTP_OK;
}

GsSrtpResult
gsrtp_rtp_protect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t cap, size_t *out_len)
{
  GsSrtpDesc d;
  GsSrtpResult r = gsrtp_prepare_protect (ctx, pkt, len, cap, 0, &d);
  if (r != GSRTP_OK)
    return r;
  *out_len = gs_srtp_hd_protect (&gs_aes_tables_host, &ctx->rtp_keys, pkt, &d);
  return GSRTP_OK;
}

GsSrtpResult
gsrtp_rtcp_protect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t cap, size_t *out_len)
{
  GsSrtpDesc d;
  GsSrtpResult r = gsrtp_prepare_protect (ctx, pkt, len, cap, 1, &d);
  if (r != GSRTP_OK)
    return r;
  *out_len = gs_srtp_hd_protect (&gs_aes_tables_host, &ctx->rtcp_keys, pkt, &d);
  return GSRTP_OK;
}

/* ---- unprotect: parse / check, verify, decrypt, commit ---- */
GsSrtpResult
gsrtp_prepare_unprotect (const GsSrtpCtx *ctx, const uint8_t *pkt, size_t len, int is_rtcp,
    GsSrtpUnprot *u)
{
  GsSrtpResult r;
  const GsSrtpKeys *mk = is_rtcp ? &ctx->rtcp_keys : &ctx->rtp_keys;
  /* the MKI first: a packet of another master key is not ours to parse */
  if (mk->mki_len) {
    const uint8_t *mki = gsrtp_packet_mki (ctx, pkt, len, is_rtcp);
    if (!mki)
      return GSRTP_ERR_TOO_SHORT;
    if (!gsrtp_ct_equal (mki, mk->mki, mk->mki_len))
      return GSRTP_ERR_BAD_MKI;
    len -= mk->mki_len;   /* below, lengths are as without MKI */
  }
  if (!is_rtcp) {
    const GsSrtpKeys *k = &ctx->rtp_keys;
    uint32_t hl;
    if (len < 12 + (size_t) k->tag_len)
      return GSRTP_ERR_TOO_SHORT;
    if ((r = gsrtp_rtp_header_len (pkt, len - k->tag_len, &hl)) != GSRTP_OK)
      return r;
    u->seq = (uint16_t) ((pkt[2] << 8) | pkt[3]);
    u->index = gsrtp_estimate_index (ctx, u->seq, &u->v);
    if (u->v < 0)
      return GSRTP_ERR_REPLAY_OLD;
    if (u->v > 0xffffffffll)
      return GSRTP_ERR_INDEX_EXHAUSTED;
    u->d.len = (uint32_t) (len - k->tag_len);
    u->d.hdr_len = hl;
    u->d.roc = (uint32_t) u->v;
    u->d.is_rtcp = 0;
    return gsrtp_replay_check (&ctx->rtp_replay, u->index);
  } else {
    const GsSrtpKeys *k = &ctx->rtcp_keys;
    size_t body;
    uint32_t trailer;
    if (len < 8 + 4 + (size_t) k->tag_len)
      return GSRTP_ERR_TOO_SHORT;
    if ((pkt[0] >> 6) != 2)
      return GSRTP_ERR_BAD_HEADER;
    body = len - 4 - k->tag_len;
    /* CM: body | E+index | tag; GCM: body | tag | E+index */
    trailer = gs_ld32 (k->cipher == GS_SRTP_C_AES_GCM ? pkt + len - 4 : pkt + body);
    u->index = trailer & 0x7fffffffu;
    u->v = 0;
    u->seq = 0;
    u->d.len = (uint32_t) body;
    u->d.hdr_len = 8;
    u->d.roc = trailer;
    u->d.is_rtcp = 1;
    return gsrtp_replay_check (&ctx->rtcp_replay, u->index);
  }
}

void
gsrtp_commit_unprotect (GsSrtpCtx *ctx, const GsSrtpUnprot *u)
{
  if (!u->d.is_rtcp) {
    gsrtp_replay_add (&ctx->rtp_replay, u->index);
    gsrtp_update_roc (ctx, u->seq, u->v);
  } else {
    gsrtp_replay_add (&ctx->rtcp_replay, u->index);
  }
}

/* The public halves for the GPU path: GsSrtpUnprot without its
 * bookkeeping fields, which follow from d and the clear header. */
GsSrtpResult
gsrtp_prepare_unprotect_desc (const GsSrtpCtx *ctx, const uint8_t *pkt, size_t len,
    int is_rtcp, GsSrtpDesc *d)
{
  GsSrtpUnprot u;
  GsSrtpResult r = gsrtp_prepare_unprotect (ctx, pkt, len, is_rtcp, &u);
  if (r == GSRTP_OK)
    *d = u.d;
  return r;
}

void
gsrtp_commit_unprotect_desc (GsSrtpCtx *ctx, const uint8_t *pkt, const GsSrtpDesc *d)
{
  GsSrtpUnprot u;
  u.d = *d;
  if (!d->is_rtcp) {
    u.seq = (uint16_t) ((pkt[2] << 8) | pkt[3]);
    u.v = d->roc;
    u.index = ((uint64_t) d->roc << 16) | u.seq;
  } else {
    u.seq = 0;
    u.v = 0;
    u.index = d->roc & 0x7fffffffu;
  }
  gsrtp_commit_unprotect (ctx, &u);
}

static GsSrtpResult
unprotect_one (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, int is_rtcp, size_t *out_len)
{
  const GsSrtpKeys *k = is_rtcp ? &ctx->rtcp_keys : &ctx->rtp_keys;
  GsSrtpUnprot u;
  GsSrtpResult r = gsrtp_prepare_unprotect (ctx, pkt, len, is_rtcp, &u);
  if (r != GSRTP_OK)
    return r;
  if (!gs_srtp_hd_unprotect (&gs_aes_tables_host, k, pkt, &u.d))
    return GSRTP_ERR_AUTH;
  gsrtp_commit_unprotect (ctx, &u);
  *out_len = u.d.len;
  return GSRTP_OK;
}

GsSrtpResult
gsrtp_rtp_unprotect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t *out_len)
{
  return unprotect_one (ctx, pkt, len, 0, out_len);
}

GsSrtpResult
gsrtp_rtcp_unprotect (GsSrtpCtx *ctx, uint8_t *pkt, size_t len, size_t *out_len)
{
  return unprotect_one (ctx, pkt, len, 1, out_len);
}
