/* srtp_portable.c: AES on a CPU without AES-NI, in constant time.
 *
 * The GS_HD reference (srtp_hd.h) computes AES with T-tables indexed by
 * state bytes, which depend on the key: on a CPU the cache lines an
 * encryption touches leak key bits to anyone timing the same cache (a
 * co-tenant, or a remote peer measuring response times). The GPU keeps the
 * reference (its tables sit in shared memory, per thread block); on the host
 * the batch path and the key setup use this file instead wherever AES-NI is
 * missing:
 *   - counter mode through OpenSSL's EVP, which picks a constant-time AES
 *     when AES-NI is absent (vector-permute AES on SSSE3 / NEON, bitsliced
 *     elsewhere);
 *   - the key expansion with an S-box read that touches every entry (once per
 *     key; the round keys are what the reference and the GPU take);
 * GHASH needs nothing here: the reference multiply (gs_gf128_mul) is already
 * bit by bit with masks, no secret-indexed table, no secret-dependent branch.
 * Output is byte for byte the reference's (counter blocks as gs_aes_ctr_xor
 * builds them: the low 32-bit word counts, the 96 bits above stay). */
#include <stdlib.h>
#include <string.h>
#ifdef GS_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif
#include "srtp/srtp_kernels.h"
#include "srtp/srtp_internal.h"

/* -1: not decided yet (GS_SRTP_FORCE_PORTABLE is read on first use) */
static int force_portable = -1;

void
gsrtp_set_force_portable (int on)
{
  __atomic_store_n (&force_portable, on ? 1 : 0, __ATOMIC_RELAXED);
}

int
gsrtp_force_portable (void)
{
  int f = __atomic_load_n (&force_portable, __ATOMIC_RELAXED);
  if (f < 0) {
    const char *env = getenv ("GS_SRTP_FORCE_PORTABLE");
    f = env && *env && strcmp (env, "0") != 0;
    __atomic_store_n (&force_portable, f, __ATOMIC_RELAXED);
  }
  return f;
}

/* sbox[x] reading all 256 entries, so that which cache line holds sbox[x]
 * does not show. */
static uint32_t
sbox_ct (uint32_t x)
{
  const uint8_t *sbox = gsrtp_aes_tables ()->sbox;
  uint32_t r = 0, i;
  for (i = 0; i < 256; i++) {
    uint32_t hit = (((i ^ x) - 1u) >> 31) & 1u;   /* 1 iff i == x (x < 256) */
    r |= sbox[i] & (0u - hit);
  }
  return r;
}

static uint32_t
subword_ct (uint32_t w)
{
  return (sbox_ct (w >> 24) << 24) | (sbox_ct ((w >> 16) & 0xff) << 16)
      | (sbox_ct ((w >> 8) & 0xff) << 8) | sbox_ct (w & 0xff);
}

/* gs_aes_expand's round keys, the same words. */
int
gsrtp_aes_expand_ct (const uint8_t *key, int key_len, uint32_t *rk)
{
  int nk = key_len / 4, nr = nk + 6, i;
  uint32_t rcon = 1;
  for (i = 0; i < nk; i++)
    rk[i] = gs_ld32 (key + 4 * i);
  for (i = nk; i < 4 * (nr + 1); i++) {
    uint32_t tmp = rk[i - 1];
    if (i % nk == 0) {
      tmp = subword_ct (gs_rol32 (tmp, 8)) ^ (rcon << 24);
      rcon = (rcon << 1) ^ ((rcon & 0x80) ? 0x11b : 0);
    } else if (nk > 6 && i % nk == 4) {
      tmp = subword_ct (tmp);
    }
    rk[i] = rk[i - nk] ^ tmp;
  }
  return nr;
}

#ifdef GS_HAVE_LIBCRYPTO
/* buf ^= AES-CTR keystream of key (16 or 32 bytes) from counter block ctr0.
 * EVP counts with a 128-bit counter, the reference with the low 32 bits
 * only: the buffer goes to EVP in pieces that end where the low word wraps. */
static int
ctr_evp (const uint8_t *key, int key_len, const uint8_t ctr0[16], uint8_t *buf, uint32_t len)
{
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new ();
  const EVP_CIPHER *cipher = key_len == 32 ? EVP_aes_256_ctr () : EVP_aes_128_ctr ();
  uint8_t ctr[16];
  uint32_t off = 0;
  int ok = c != NULL;
  memcpy (ctr, ctr0, 16);
  while (ok && off < len) {
    uint64_t to_wrap = ((uint64_t) 1 << 32) - gs_ld32 (ctr + 12);
    uint64_t n64 = len - off < to_wrap * 16 ? len - off : to_wrap * 16;
    int n = (int) (n64 < (1u << 30) ? n64 : (1u << 30)), outl = 0;
    ok = EVP_EncryptInit_ex (c, cipher, NULL, key, ctr) == 1
        && EVP_EncryptUpdate (c, buf + off, &outl, buf + off, n) == 1 && outl == n;
    off += (uint32_t) n;
    gs_st32 (ctr + 12, gs_ld32 (ctr + 12) + (uint32_t) (n / 16));
  }
  EVP_CIPHER_CTX_free (c);
  gsrtp_wipe (ctr, sizeof ctr);
  return ok;
}
#else
/* A kernels-only build without libcrypto (kernels/srtp/meson.build says so
 * when it configures): the reference AES, same bytes, not constant time. */
static int
ctr_evp (const uint8_t *key, int key_len, const uint8_t ctr0[16], uint8_t *buf, uint32_t len)
{
  uint32_t rk[60];
  int nr = gsrtp_aes_expand_ct (key, key_len, rk);
  gs_aes_ctr_xor (gsrtp_aes_tables (), rk, nr, ctr0, buf, len);
  gsrtp_wipe (rk, sizeof rk);
  return 1;
}
#endif

void
gsrtp_aes_ctr_portable (const uint32_t *rk, int nr, const uint8_t ctr0[16], uint8_t *buf,
    uint32_t len)
{
  /* the first nk round-key words are the key itself (FIPS-197 5.2) */
  uint8_t key[32];
  int i, nk = nr == 14 ? 8 : 4;   /* SRTP has AES-128 and AES-256 only */
  for (i = 0; i < nk; i++)
    gs_st32 (key + 4 * i, rk[i]);
  if (!ctr_evp (key, 4 * nk, ctr0, buf, len))
    abort ();                   /* out of memory inside libcrypto */
  gsrtp_wipe (key, sizeof key);
}

void
gsrtp_aes_ctr_portable_key (const uint8_t *key, int key_len, const uint8_t ctr0[16],
    uint8_t *buf, uint32_t len)
{
  if (!ctr_evp (key, key_len, ctr0, buf, len))
    abort ();
}
