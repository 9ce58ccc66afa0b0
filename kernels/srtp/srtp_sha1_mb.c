/* srtp_sha1_mb.c: multi-buffer SHA-1 (8 lanes of AVX2, 16 of AVX-512) and the choice of
 * SHA-1 implementation for the batched SRTP path; see srtp_sha1_mb.h. */
#include <stdlib.h>
#include <string.h>
#include "common/cpu.h"
#include "srtp/srtp_hd.h"
#include "srtp/srtp_sha1_mb.h"

#if defined(__x86_64__) || defined(__i386__)
#define GS_X86 1
#include <immintrin.h>
#endif

static unsigned prog_cap = GS_SHA1_AVX512;

/* Whether the CPU has what level needs. */
static int
cpu_has (unsigned level)
{
  static const unsigned need[] = { 0, GS_CPU_AVX2, GS_CPU_SHA, GS_CPU_AVX512F };
  return (gs_cpu_features () & need[level]) == need[level];
}

/* The best level the CPU has at or below cap: a CPU may have any of them
 * without the others. */
static unsigned
best_at_or_below (unsigned cap)
{
  unsigned l;
  for (l = cap; l > GS_SHA1_SCALAR && !cpu_has (l); l--)
    ;
  return l;
}

unsigned
gs_sha1_level (void)
{
  static int level = -1;
  unsigned cap;
  if (level < 0) {
    const char *env = getenv ("GS_SRTP_SHA1");
    cap = GS_SHA1_AVX512;
    if (env && !strcmp (env, "shani"))
      cap = GS_SHA1_SHANI;
    else if (env && !strcmp (env, "avx2"))
      cap = GS_SHA1_AVX2;
    else if (env && !strcmp (env, "scalar"))
      cap = GS_SHA1_SCALAR;
    level = (int) best_at_or_below (cap);
  }
  cap = prog_cap < (unsigned) level ? prog_cap : (unsigned) level;
  return best_at_or_below (cap);
}

void
gs_sha1_level_cap (unsigned cap)
{
  prog_cap = cap;
}

int
gs_sha1_shani_ok (void)
{
#ifdef GS_X86
  return gs_sha1_level () >= GS_SHA1_SHANI && cpu_has (GS_SHA1_SHANI);
#else
  return 0;
#endif
}

/* One job's remaining blocks, one at a time (st in, st out). */
static void
job_scalar (uint32_t st[5], const uint8_t *p, uint32_t nb, const GsSha1Job *j, int seg)
{
  for (;;) {
    for (; nb; nb--, p += 64)
      gs_sha1_compress (st, p);
    if (seg++ == 1)
      break;
    p = j->p[1];
    nb = j->nb[1];
  }
}

static void
mb_scalar (GsSha1Job *jobs, size_t n, const uint32_t *order)
{
  size_t i;
  for (i = 0; i < n; i++) {
    GsSha1Job *j = &jobs[order ? order[i] : i];
    job_scalar (j->st, j->p[0], j->nb[0], j, 0);
  }
}

#ifdef GS_X86
#define GS_AVX2 __attribute__ ((target ("avx2")))

GS_AVX2 static inline __m256i
rotl (__m256i x, int n)
{
  return _mm256_or_si256 (_mm256_slli_epi32 (x, n), _mm256_srli_epi32 (x, 32 - n));
}

/* Words 0..7 (at byte offset off) of the 8 lanes' blocks, transposed so that
 * register i holds word i of every lane, byte-swapped to big-endian. */
GS_AVX2 static inline void
load8 (__m256i w[8], const uint8_t *const ptr[8], int off)
{
  const __m256i bs = _mm256_set_epi8 (12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
      12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m256i r[8], t[8], u[8];
  int i;
  for (i = 0; i < 8; i++)
    r[i] = _mm256_shuffle_epi8 (_mm256_loadu_si256 ((const __m256i *) (ptr[i] + off)), bs);
  for (i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32 (r[i], r[i + 1]);     /* words 0 1 | 4 5 of lanes i, i+1 */
    t[i + 1] = _mm256_unpackhi_epi32 (r[i], r[i + 1]); /* words 2 3 | 6 7 */
  }
  for (i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64 (t[i], t[i + 2]);     /* word 0 | 4 of lanes i..i+3 */
    u[i + 1] = _mm256_unpackhi_epi64 (t[i], t[i + 2]); /* word 1 | 5 */
    u[i + 2] = _mm256_unpacklo_epi64 (t[i + 1], t[i + 3]); /* word 2 | 6 */
    u[i + 3] = _mm256_unpackhi_epi64 (t[i + 1], t[i + 3]); /* word 3 | 7 */
  }
  for (i = 0; i < 4; i++) {
    w[i] = _mm256_permute2x128_si256 (u[i], u[i + 4], 0x20);
    w[i + 4] = _mm256_permute2x128_si256 (u[i], u[i + 4], 0x31);
  }
}

/* The 80 rounds, written once for both widths over the vector operations
 * V_T (the type), V_ADD, V_ROL (x, n), V_XOR4 (a, b, c, d) and the boolean
 * functions F0 (Ch), F1 (parity), F2 (Maj), which each width defines before
 * its block function. Round t: the message word (expanded in place from
 * round 16 on), then e += rol(a, 5) + f(b, c, d) + K + W[t], b = rol(b, 30);
 * callers rotate the names instead of moving registers. */
#define RND(a, b, c, d, e, F, K, t) do { \
    V_T wt = w[(t) & 15]; \
    if ((t) >= 16) { \
      wt = V_ROL (V_XOR4 (w[((t) - 3) & 15], w[((t) - 8) & 15], w[((t) - 14) & 15], wt), 1); \
      w[(t) & 15] = wt; \
    } \
    e = V_ADD (V_ROL (a, 5), V_ADD (V_ADD (e, F (b, c, d)), V_ADD (K, wt))); \
    b = V_ROL (b, 30); \
  } while (0)
#define RND5(F, K, t) do { \
    RND (a, b, c, d, e, F, K, (t)); RND (e, a, b, c, d, F, K, (t) + 1); \
    RND (d, e, a, b, c, F, K, (t) + 2); RND (c, d, e, a, b, F, K, (t) + 3); \
    RND (b, c, d, e, a, F, K, (t) + 4); \
  } while (0)
/* a..e from the state words s0..s4 (kept for the final additions), w[16]
 * loaded, k0..k3 the constants */
#define ROUNDS80() do { \
    RND5 (F0, k0, 0); RND5 (F0, k0, 5); RND5 (F0, k0, 10); RND5 (F0, k0, 15); \
    RND5 (F1, k1, 20); RND5 (F1, k1, 25); RND5 (F1, k1, 30); RND5 (F1, k1, 35); \
    RND5 (F2, k2, 40); RND5 (F2, k2, 45); RND5 (F2, k2, 50); RND5 (F2, k2, 55); \
    RND5 (F1, k3, 60); RND5 (F1, k3, 65); RND5 (F1, k3, 70); RND5 (F1, k3, 75); \
  } while (0)

#define V_T __m256i
#define V_ADD _mm256_add_epi32
#define V_ROL rotl
#define V_XOR4(p, q, r, s) _mm256_xor_si256 (_mm256_xor_si256 (p, q), _mm256_xor_si256 (r, s))
#define F0(b, c, d) _mm256_xor_si256 (d, _mm256_and_si256 (b, _mm256_xor_si256 (c, d)))
#define F1(b, c, d) _mm256_xor_si256 (_mm256_xor_si256 (b, c), d)
#define F2(b, c, d) _mm256_or_si256 (_mm256_and_si256 (b, c), _mm256_and_si256 (d, _mm256_or_si256 (b, c)))

/* One block of each of 8 lanes; S[i][lane] is state word i (lanes 0..7 of
 * the scheduler's 16). */
GS_AVX2 static void
block8 (uint32_t S[5][16], const uint8_t *const ptr[16])
{
  const __m256i k0 = _mm256_set1_epi32 (0x5a827999), k1 = _mm256_set1_epi32 (0x6ed9eba1);
  const __m256i k2 = _mm256_set1_epi32 ((int) 0x8f1bbcdcu), k3 = _mm256_set1_epi32 ((int) 0xca62c1d6u);
  __m256i s0[5], a, b, c, d, e, w[16];
  int i;
  for (i = 0; i < 5; i++)
    s0[i] = _mm256_load_si256 ((const __m256i *) S[i]);
  a = s0[0]; b = s0[1]; c = s0[2]; d = s0[3]; e = s0[4];
  load8 (w, ptr, 0);
  load8 (w + 8, ptr, 32);
  ROUNDS80 ();
  _mm256_store_si256 ((__m256i *) S[0], _mm256_add_epi32 (a, s0[0]));
  _mm256_store_si256 ((__m256i *) S[1], _mm256_add_epi32 (b, s0[1]));
  _mm256_store_si256 ((__m256i *) S[2], _mm256_add_epi32 (c, s0[2]));
  _mm256_store_si256 ((__m256i *) S[3], _mm256_add_epi32 (d, s0[3]));
  _mm256_store_si256 ((__m256i *) S[4], _mm256_add_epi32 (e, s0[4]));
}
#undef V_T
#undef V_ADD
#undef V_ROL
#undef V_XOR4
#undef F0
#undef F1
#undef F2

#define GS_AVX512 __attribute__ ((target ("avx512f")))

/* 16 lanes: the boolean functions are one ternary-logic instruction each
 * (truth tables of b, c, d: Ch 0xca, parity 0x96, Maj 0xe8) and the
 * rotations are native. */
#define V_T __m512i
#define V_ADD _mm512_add_epi32
#define V_ROL _mm512_rol_epi32
#define V_XOR4(p, q, r, s) _mm512_ternarylogic_epi32 (p, q, _mm512_xor_si512 (r, s), 0x96)
#define F0(b, c, d) _mm512_ternarylogic_epi32 (b, c, d, 0xca)
#define F1(b, c, d) _mm512_ternarylogic_epi32 (b, c, d, 0x96)
#define F2(b, c, d) _mm512_ternarylogic_epi32 (b, c, d, 0xe8)

/* One block of each of 16 lanes: the AVX2 transpose of lanes 0..7 and of
 * 8..15, each word's two halves joined into one register. */
GS_AVX512 static void
block16 (uint32_t S[5][16], const uint8_t *const ptr[16])
{
  const __m512i k0 = _mm512_set1_epi32 (0x5a827999), k1 = _mm512_set1_epi32 (0x6ed9eba1);
  const __m512i k2 = _mm512_set1_epi32 ((int) 0x8f1bbcdcu), k3 = _mm512_set1_epi32 ((int) 0xca62c1d6u);
  __m512i s0[5], a, b, c, d, e, w[16];
  __m256i lo[16], hi[16];
  int i;
  for (i = 0; i < 5; i++)
    s0[i] = _mm512_load_si512 (S[i]);
  a = s0[0]; b = s0[1]; c = s0[2]; d = s0[3]; e = s0[4];
  load8 (lo, ptr, 0);
  load8 (lo + 8, ptr, 32);
  load8 (hi, ptr + 8, 0);
  load8 (hi + 8, ptr + 8, 32);
  for (i = 0; i < 16; i++)
    w[i] = _mm512_inserti64x4 (_mm512_castsi256_si512 (lo[i]), hi[i], 1);
  ROUNDS80 ();
  _mm512_store_si512 (S[0], _mm512_add_epi32 (a, s0[0]));
  _mm512_store_si512 (S[1], _mm512_add_epi32 (b, s0[1]));
  _mm512_store_si512 (S[2], _mm512_add_epi32 (c, s0[2]));
  _mm512_store_si512 (S[3], _mm512_add_epi32 (d, s0[3]));
  _mm512_store_si512 (S[4], _mm512_add_epi32 (e, s0[4]));
}
#undef V_T
#undef V_ADD
#undef V_ROL
#undef V_XOR4
#undef F0
#undef F1
#undef F2
#undef ROUNDS80
#undef RND5
#undef RND

/* The lane scheduler, for lanes = 8 (block8) or 16 (block16): the state
 * lives in memory between blocks, so filling or emptying a lane is five
 * scalar stores or loads. */
static void
mb_lanes (GsSha1Job *jobs, size_t n, const uint32_t *order, int lanes,
    void (*block) (uint32_t S[5][16], const uint8_t *const ptr[16]))
{
  static const uint8_t idle[64];
  _Alignas (64) uint32_t S[5][16];
  const uint8_t *ptr[16];
  uint32_t left[16];       /* blocks left in the lane's current segment */
  int job[16], seg[16];    /* job index (-1: idle lane) and its segment */
  size_t next = 0;
  int active = 0, l, i;
  for (l = 0; l < 16; l++) {
    job[l] = -1;
    ptr[l] = idle;
  }
  for (;;) {
    /* fill idle lanes; jobs without blocks are done as they are */
    for (l = 0; l < lanes && next < n; l++) {
      GsSha1Job *j;
      size_t ji;
      if (job[l] >= 0)
        continue;
      ji = order ? order[next] : next;
      next++;
      j = &jobs[ji];
      if (!j->nb[0] && !j->nb[1]) {
        l--;        /* same lane, next job */
        continue;
      }
      for (i = 0; i < 5; i++)
        S[i][l] = j->st[i];
      seg[l] = j->nb[0] ? 0 : 1;
      ptr[l] = j->p[seg[l]];
      left[l] = j->nb[seg[l]];
      job[l] = (int) ji;
      active++;
    }
    if (!active)
      break;
    if (active == 1 && next == n) {
      /* one message left: the scalar code does it in fewer cycles */
      for (l = 0; job[l] < 0; l++)
        ;
      {
        GsSha1Job *j = &jobs[job[l]];
        for (i = 0; i < 5; i++)
          j->st[i] = S[i][l];
        if (gs_sha1_shani_ok ()) {
          gs_sha1_shani (j->st, ptr[l], left[l]);
          if (seg[l] == 0)
            gs_sha1_shani (j->st, j->p[1], j->nb[1]);
        } else {
          job_scalar (j->st, ptr[l], left[l], j, seg[l]);
        }
      }
      break;
    }
    block (S, ptr);
    for (l = 0; l < lanes; l++) {
      GsSha1Job *j;
      if (job[l] < 0)
        continue;
      ptr[l] += 64;
      if (--left[l])
        continue;
      j = &jobs[job[l]];
      if (seg[l] == 0 && j->nb[1]) {
        seg[l] = 1;
        ptr[l] = j->p[1];
        left[l] = j->nb[1];
        continue;
      }
      for (i = 0; i < 5; i++)
        j->st[i] = S[i][l];
      job[l] = -1;
      ptr[l] = idle;
      active--;
    }
  }
}
/* SHA-1 with the SHA extensions: 20 groups of 4 rounds, message schedule
 * rolled through four registers. */
__attribute__ ((target ("sha,sse4.1,ssse3"))) void
gs_sha1_shani (uint32_t st[5], const uint8_t *data, size_t nblocks)
{
  const __m128i mask = _mm_set_epi64x (0x0001020304050607ll, 0x08090a0b0c0d0e0fll);
  __m128i abcd = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) st), 0x1b);
  __m128i e0 = _mm_set_epi32 ((int) st[4], 0, 0, 0);
  for (; nblocks--; data += 64) {
    __m128i abcd_save = abcd, e_save = e0, w[4], ecur, prev = abcd;
    int i;
    for (i = 0; i < 4; i++)
      w[i] = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (data + 16 * i)), mask);
    ecur = _mm_add_epi32 (e0, w[0]);
#define GS_SHA1_STEP(g, f) do { \
      prev = abcd; \
      abcd = _mm_sha1rnds4_epu32 (abcd, ecur, f); \
      if ((g) < 19) { \
        __m128i wn; \
        if ((g) + 1 < 4) { \
          wn = w[((g) + 1) & 3]; \
        } else { \
          wn = _mm_sha1msg2_epu32 (_mm_xor_si128 (_mm_sha1msg1_epu32 (w[((g) + 1) & 3], \
                  w[((g) + 2) & 3]), w[((g) + 3) & 3]), w[(g) & 3]); \
          w[((g) + 1) & 3] = wn; \
        } \
        ecur = _mm_sha1nexte_epu32 (prev, wn); \
      } \
    } while (0)
    GS_SHA1_STEP (0, 0); GS_SHA1_STEP (1, 0); GS_SHA1_STEP (2, 0); GS_SHA1_STEP (3, 0);
    GS_SHA1_STEP (4, 0); GS_SHA1_STEP (5, 1); GS_SHA1_STEP (6, 1); GS_SHA1_STEP (7, 1);
    GS_SHA1_STEP (8, 1); GS_SHA1_STEP (9, 1); GS_SHA1_STEP (10, 2); GS_SHA1_STEP (11, 2);
    GS_SHA1_STEP (12, 2); GS_SHA1_STEP (13, 2); GS_SHA1_STEP (14, 2); GS_SHA1_STEP (15, 3);
    GS_SHA1_STEP (16, 3); GS_SHA1_STEP (17, 3); GS_SHA1_STEP (18, 3); GS_SHA1_STEP (19, 3);
#undef GS_SHA1_STEP
    e0 = _mm_sha1nexte_epu32 (prev, e_save);
    abcd = _mm_add_epi32 (abcd, abcd_save);
  }
  abcd = _mm_shuffle_epi32 (abcd, 0x1b);
  _mm_storeu_si128 ((__m128i *) st, abcd);
  st[4] = (uint32_t) _mm_extract_epi32 (e0, 3);
}

#endif /* GS_X86 */

void
gs_sha1_mb (GsSha1Job *jobs, size_t n, const uint32_t *order)
{
#ifdef GS_X86
  unsigned level = gs_sha1_level ();
  if (level == GS_SHA1_AVX512 && cpu_has (GS_SHA1_AVX512)) {
    mb_lanes (jobs, n, order, 16, block16);
    return;
  }
  if (cpu_has (GS_SHA1_AVX2)) {
    mb_lanes (jobs, n, order, 8, block8);
    return;
  }
#endif
  mb_scalar (jobs, n, order);
}
