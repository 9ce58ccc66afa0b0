/* srtp_internal.h: shared between srtp_ref.c and srtp_batch.c (not API). */
#ifndef SRTP_INTERNAL_H
#define SRTP_INTERNAL_H

#include "srtp/srtp_kernels.h"

/* A received packet between parsing and commit. */
typedef struct {
  GsSrtpDesc d;           /* len = without tag / trailer; roc = ROC or trailer */
  uint64_t index;         /* 48-bit SRTP or 31-bit SRTCP index */
  int64_t v;              /* guessed ROC (RTP) */
  uint16_t seq;
} GsSrtpUnprot;

void gsrtp_wipe (void *p, size_t n);
void gsrtp_update_roc (GsSrtpCtx *ctx, uint16_t seq, int64_t v);
GsSrtpResult gsrtp_replay_check (const GsSrtpReplay *r, uint64_t idx);
void gsrtp_replay_add (GsSrtpReplay *r, uint64_t idx);
GsSrtpResult gsrtp_rtp_header_len (const uint8_t *pkt, size_t len, uint32_t *hl);
int gsrtp_ct_equal (const uint8_t *a, const uint8_t *b, size_t n);
/* Reads ctx only: nothing is committed before the tag is checked. */
GsSrtpResult gsrtp_prepare_unprotect (const GsSrtpCtx *ctx, const uint8_t *pkt, size_t len,
    int is_rtcp, GsSrtpUnprot *u);
void gsrtp_commit_unprotect (GsSrtpCtx *ctx, const GsSrtpUnprot *u);

/* srtp_portable.c: AES without secret-indexed tables, output as the
 * reference's (gs_aes_expand, gs_aes_ctr_xor). */
int gsrtp_aes_expand_ct (const uint8_t *key, int key_len, uint32_t *rk);
void gsrtp_aes_ctr_portable (const uint32_t *rk, int nr, const uint8_t ctr0[16], uint8_t *buf,
    uint32_t len);
void gsrtp_aes_ctr_portable_key (const uint8_t *key, int key_len, const uint8_t ctr0[16],
    uint8_t *buf, uint32_t len);

#endif /* SRTP_INTERNAL_H */
