/* Tests of libgstgpustream's SRTP batch API (gpssrtp.h):
 * gst_gpustream_srtp_protect_batch and gst_gpustream_srtp_unprotect_batch
 * against the kernels' scalar reference, one packet at a time. Unprotect
 * gets a mixed batch: several profiles, contexts with an MKI, a ROC wrap,
 * tampered, duplicated and reordered packets. The CPU backend always; the
 * GPU backend where a CUDA device is usable; the CPU fallbacks of the GPU
 * paths on the constant-time path. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include "check/gpu_expected.h"
#include <string.h>

#include "gstgpustream.h"
#include "gpssrtp.h"

#define NCTX 9
#define STRIDE 1600
#define NPKT 1500

static const GsSrtpPolicy policies[] = {
  {GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_HMAC_SHA1_80},
  {GSRTP_CIPHER_AES_256_CM, GSRTP_AUTH_HMAC_SHA1_32},
  {GSRTP_CIPHER_AES_128_GCM, GSRTP_AUTH_NULL},
  {GSRTP_CIPHER_AES_256_GCM, GSRTP_AUTH_NULL},
  {GSRTP_CIPHER_NULL, GSRTP_AUTH_HMAC_SHA1_80},
  {GSRTP_CIPHER_AES_128_CM, GSRTP_AUTH_NULL},
};

/* Protected packets of NCTX streams and their plaintexts; tx / rx contexts
 * as they were before any packet (the receivers copy them). */
typedef struct {
  GsSrtpCtx tx0[NCTX], rx0[NCTX];
  guint8 plain[NPKT][STRIDE], prot[NPKT][STRIDE];
  guint32 plain_len[NPKT], prot_len[NPKT];
  gint pctx[NPKT], prtcp[NPKT];
} Stream;

static Stream *
stream_new (guint32 seed)
{
  Stream *s = g_new0 (Stream, 1);
  GRand *rand = g_rand_new_with_seed (seed);
  GsSrtpCtx tx[NCTX];
  guint16 seq[NCTX];
  gint c, i;

  for (c = 0; c < NCTX; c++) {
    GsSrtpPolicy p = policies[c % G_N_ELEMENTS (policies)];
    guint8 key[46];
    gsize kl = gsrtp_master_key_len (p.cipher) +
        gsrtp_master_salt_len (p.cipher);

    for (i = 0; i < (gint) kl; i++)
      key[i] = (guint8) g_rand_int (rand);
    fail_unless_equals_int (gsrtp_ctx_init (&s->tx0[c], p, p, key, kl, 0),
        GSRTP_OK);
    if (c % 3 == 1) {
      guint8 mki[4] = { 0x5a, 0, 0, (guint8) c };
      gsrtp_ctx_set_mki (&s->tx0[c], mki, sizeof mki);
    }
    s->rx0[c] = tx[c] = s->tx0[c];
    /* each stream wraps its sequence number inside the batch */
    seq[c] = (guint16) (65535 - 40 - 3 * c);
  }
  for (i = 0; i < NPKT; i++) {
    gint rtcp = g_rand_int_range (rand, 0, 8) == 0, j;
    guint8 *p = s->plain[i];
    gsize len, ol;

    c = g_rand_int_range (rand, 0, NCTX);
    if (rtcp) {
      len = 8 + 4 * g_rand_int_range (rand, 0, 300);
      p[0] = 0x81;
      p[1] = 200;
      p[2] = (guint8) ((len / 4 - 1) >> 8);
      p[3] = (guint8) (len / 4 - 1);
      GST_WRITE_UINT32_BE (p + 4, 0x4000 + c);
    } else {
      len = 12 + g_rand_int_range (rand, 0, 1400);
      p[0] = 0x80;
      p[1] = 96;
      GST_WRITE_UINT16_BE (p + 2, seq[c]);
      seq[c]++;
      GST_WRITE_UINT32_BE (p + 4, g_rand_int (rand));
      GST_WRITE_UINT32_BE (p + 8, 0x4000 + c);
    }
    for (j = rtcp ? 8 : 12; j < (gint) len; j++)
      p[j] = (guint8) g_rand_int (rand);
    memcpy (s->prot[i], p, len);
    fail_unless_equals_int (rtcp ?
        gsrtp_rtcp_protect (&tx[c], s->prot[i], len, STRIDE, &ol) :
        gsrtp_rtp_protect (&tx[c], s->prot[i], len, STRIDE, &ol), GSRTP_OK);
    s->plain_len[i] = (guint32) len;
    s->prot_len[i] = (guint32) ol;
    s->pctx[i] = c;
    s->prtcp[i] = rtcp;
  }
  for (c = 0; c < NCTX; c++)
    gsrtp_ctx_clear (&tx[c]);
  g_rand_free (rand);
  return s;
}

static void
stream_free (Stream * s)
{
  /* session keys inside: leave no copy behind */
  memset (s, 0, sizeof *s);
  g_free (s);
}

/* protect through the library, batch_size packets a call; lanes > 0: as
 * the scheduler's worker does, `lanes` batches submitted (each on its lane)
 * before the first is finished */
static void
check_protect_lanes (Stream * s, GstGpuStreamBackend backend,
    GstObject * ctx, gboolean want_gpu, gsize batch_size, guint lanes)
{
  static guint8 data[NPKT][STRIDE];
  GsSrtpCtx tx[NCTX];
  GsSrtpPacket *pk = g_new0 (GsSrtpPacket, NPKT);
  gsize i, base, ok = 0;

  memcpy (tx, s->tx0, sizeof tx);
  for (i = 0; i < NPKT; i++) {
    memcpy (data[i], s->plain[i], s->plain_len[i]);
    pk[i].ctx = &tx[s->pctx[i]];
    pk[i].data = data[i];
    pk[i].len = s->plain_len[i];
    pk[i].cap = STRIDE;
    pk[i].is_rtcp = s->prtcp[i];
  }
  for (base = 0; base < NPKT && lanes == 0; base += batch_size) {
    gboolean used_gpu = !want_gpu;

    ok += gst_gpustream_srtp_protect_batch (pk + base,
        MIN (batch_size, NPKT - base), backend, ctx, &used_gpu);
    fail_unless_equals_int (used_gpu, want_gpu);
  }
  for (base = 0; base < NPKT && lanes > 0; base += batch_size * lanes) {
    GstGpuStreamSrtpBatch *inflight[8];
    guint l, n = 0;

    g_assert (lanes <= G_N_ELEMENTS (inflight));
    for (l = 0; l < lanes && base + l * batch_size < NPKT; l++, n++) {
      gsize b = base + l * batch_size;
      inflight[l] = gst_gpustream_srtp_protect_submit (pk + b,
          MIN (batch_size, NPKT - b), backend, ctx, l);
    }
    for (l = 0; l < n; l++) {
      gboolean used_gpu = !want_gpu;

      ok += gst_gpustream_srtp_protect_finish (inflight[l], &used_gpu);
      fail_unless_equals_int (used_gpu, want_gpu);
    }
  }
  fail_unless_equals_int (ok, NPKT);
  for (i = 0; i < NPKT; i++) {
    fail_unless_equals_int (pk[i].result, GSRTP_OK);
    fail_unless_equals_int (pk[i].len, s->prot_len[i]);
    fail_unless (memcmp (data[i], s->prot[i], pk[i].len) == 0,
        "protected packet %" G_GSIZE_FORMAT " differs", i);
  }
  g_free (pk);
}

static void
check_protect (Stream * s, GstGpuStreamBackend backend, GstObject * ctx,
    gboolean want_gpu, gsize batch_size)
{
  check_protect_lanes (s, backend, ctx, want_gpu, batch_size, 0);
}

/* unprotect through the library against one by one */
static void
check_unprotect (Stream * s, GstGpuStreamBackend backend, GstObject * ctx,
    gboolean want_gpu, gsize batch_size)
{
  static guint8 in[NPKT + 200][STRIDE], ref[NPKT + 200][STRIDE],
      got[NPKT + 200][STRIDE];
  guint32 inlen[NPKT + 200];
  gint ictx[NPKT + 200], irtcp[NPKT + 200];
  GsSrtpResult want[NPKT + 200];
  gsize want_len[NPKT + 200];
  GsSrtpCtx rx_ref[NCTX], rx[NCTX];
  GsSrtpPacket *pk = g_new0 (GsSrtpPacket, NPKT + 200);
  GRand *rand = g_rand_new_with_seed (99);
  gsize m = 0, i, base, ok = 0, want_ok = 0, rejected = 0;
  gint c;

#define PUSH(j, tamper) G_STMT_START { \
    memcpy (in[m], s->prot[j], s->prot_len[j]); \
    inlen[m] = s->prot_len[j]; \
    ictx[m] = s->pctx[j]; \
    irtcp[m] = s->prtcp[j]; \
    if (tamper) \
      in[m][g_rand_int_range (rand, 0, inlen[m])] ^= 0x08; \
    m++; \
  } G_STMT_END
  for (i = 0; i < NPKT; i++) {
    if (i + 1 < NPKT && g_rand_int_range (rand, 0, 20) == 0) {
      PUSH (i + 1, FALSE);
      PUSH (i, FALSE);
      i++;
      continue;
    }
    PUSH (i, g_rand_int_range (rand, 0, 40) == 0);
    if (m < NPKT + 200 && g_rand_int_range (rand, 0, 40) == 0)
      PUSH (i, FALSE);
  }
#undef PUSH

  memcpy (rx_ref, s->rx0, sizeof rx_ref);
  memcpy (rx, s->rx0, sizeof rx);
  for (i = 0; i < m; i++) {
    memcpy (ref[i], in[i], inlen[i]);
    memcpy (got[i], in[i], inlen[i]);
    want_len[i] = 0;
    want[i] = irtcp[i] ?
        gsrtp_rtcp_unprotect (&rx_ref[ictx[i]], ref[i], inlen[i], &want_len[i])
        : gsrtp_rtp_unprotect (&rx_ref[ictx[i]], ref[i], inlen[i],
        &want_len[i]);
    want[i] == GSRTP_OK ? want_ok++ : rejected++;
    pk[i].ctx = &rx[ictx[i]];
    pk[i].data = got[i];
    pk[i].len = inlen[i];
    pk[i].cap = STRIDE;
    pk[i].is_rtcp = irtcp[i];
    pk[i].result = GSRTP_ERR_BAD_PARAM;
  }
  fail_unless (rejected > 0);

  for (base = 0; base < m; base += batch_size) {
    gboolean used_gpu = !want_gpu;

    ok += gst_gpustream_srtp_unprotect_batch (pk + base,
        MIN (batch_size, m - base), backend, ctx, &used_gpu);
    fail_unless_equals_int (used_gpu, want_gpu);
  }
  fail_unless_equals_int (ok, want_ok);
  for (i = 0; i < m; i++) {
    fail_unless_equals_int (pk[i].result, want[i]);
    if (want[i] == GSRTP_OK) {
      fail_unless_equals_int (pk[i].len, want_len[i]);
      fail_unless (memcmp (got[i], ref[i], want_len[i]) == 0,
          "unprotected packet %" G_GSIZE_FORMAT " differs", i);
    } else {
      fail_unless_equals_int (pk[i].len, inlen[i]);
      fail_unless (memcmp (got[i], in[i], inlen[i]) == 0,
          "rejected packet %" G_GSIZE_FORMAT " (%s) was touched", i,
          gsrtp_result_name (want[i]));
    }
  }
  for (c = 0; c < NCTX; c++) {
    fail_unless_equals_int (rx[c].roc, rx_ref[c].roc);
    fail_unless_equals_int (rx[c].s_l, rx_ref[c].s_l);
    fail_unless (memcmp (&rx[c].rtp_replay, &rx_ref[c].rtp_replay,
            sizeof rx[c].rtp_replay) == 0);
    fail_unless (memcmp (&rx[c].rtcp_replay, &rx_ref[c].rtcp_replay,
            sizeof rx[c].rtcp_replay) == 0);
    /* every stream crossed 65535 -> 0 */
    fail_unless_equals_int (rx[c].roc, 1);
  }
  g_rand_free (rand);
  g_free (pk);
}

GST_START_TEST (test_srtp_cpu)
{
  Stream *s = stream_new (1);

  check_protect (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, NPKT);
  check_protect (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, 37);
  check_protect_lanes (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, 100, 4);
  check_unprotect (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, NPKT + 200);
  check_unprotect (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, 37);
  stream_free (s);
}

GST_END_TEST;

/* backend GPU without a context: the CPU path, not an error */
GST_START_TEST (test_srtp_gpu_backend_without_context)
{
  Stream *s = stream_new (2);

  check_protect (s, GST_GPUSTREAM_BACKEND_GPU, NULL, FALSE, 100);
  check_unprotect (s, GST_GPUSTREAM_BACKEND_GPU, NULL, FALSE, 100);
  check_unprotect (s, GST_GPUSTREAM_BACKEND_HYBRID, NULL, FALSE, 100);
  stream_free (s);
}

GST_END_TEST;

/* Only where a CUDA device is usable: one launch per call, whole batches
 * (the ROC steps inside them go the redo path) and small ones. */
GST_START_TEST (test_srtp_gpu)
{
  GstGpuStreamGpu gpu = GST_GPUSTREAM_GPU_INIT;
  GstElement *owner;
  Stream *s;

  if (!gst_gpustream_gpu_available ()) {
    gpu_skip_allowed ("the SRTP GPU batch");
    g_print ("SKIP: SRTP GPU batch test: no CUDA device (%s)\n",
        gst_gpustream_gpu_unavailable_reason ());
    return;
  }
  /* any element will do to own the context */
  owner = gst_bin_new ("srtp-gpu-test");
  gpu.backend = GST_GPUSTREAM_BACKEND_GPU;
  gpu.device_id = 0;
  fail_unless (gst_gpustream_gpu_start (owner, &gpu));
  fail_unless (gpu.cuda_context != NULL);

  s = stream_new (3);
  check_protect (s, GST_GPUSTREAM_BACKEND_GPU, gpu.cuda_context, TRUE, NPKT);
  /* batches in flight together on 4, then 8 lanes (each its own stream and
   * staging area): every packet as one by one */
  check_protect_lanes (s, GST_GPUSTREAM_BACKEND_GPU, gpu.cuda_context, TRUE,
      NPKT / 4 + 1, 4);
  check_protect_lanes (s, GST_GPUSTREAM_BACKEND_GPU, gpu.cuda_context, TRUE,
      50, 8);
  check_unprotect (s, GST_GPUSTREAM_BACKEND_GPU, gpu.cuda_context, TRUE,
      NPKT + 200);
  check_unprotect (s, GST_GPUSTREAM_BACKEND_HYBRID, gpu.cuda_context, TRUE,
      64);
  stream_free (s);

  gst_gpustream_gpu_stop (&gpu);
  gst_object_unref (owner);
}

GST_END_TEST;

/* What a GPU protect batch whose launch failed does on the CPU: every
 * packet prepared (gsrtp_prepare_protect, in array order: the indices
 * move here), the contexts' keys copied into one array, then each prepared
 * descriptor finished by gsrtp_protect_desc with its copy of the keys. */
static void
check_protect_prepared (Stream * s)
{
  static guint8 data[NPKT][STRIDE];
  static GsSrtpDesc descs[NPKT];
  GsSrtpKeys keys[2 * NCTX];
  GsSrtpCtx tx[NCTX];
  gsize i;
  gint c;

  memcpy (tx, s->tx0, sizeof tx);
  for (c = 0; c < NCTX; c++) {
    keys[2 * c] = tx[c].rtp_keys;
    keys[2 * c + 1] = tx[c].rtcp_keys;
  }
  for (i = 0; i < NPKT; i++) {
    memcpy (data[i], s->plain[i], s->plain_len[i]);
    fail_unless_equals_int (gsrtp_prepare_protect (&tx[s->pctx[i]], data[i],
            s->plain_len[i], STRIDE, s->prtcp[i], &descs[i]), GSRTP_OK);
    descs[i].keys = 2 * s->pctx[i] + s->prtcp[i];
  }
  for (i = 0; i < NPKT; i++) {
    guint32 len = gsrtp_protect_desc (&keys[descs[i].keys], data[i],
        &descs[i]);

    fail_unless_equals_int (len, s->prot_len[i]);
    fail_unless (memcmp (data[i], s->prot[i], len) == 0,
        "packet %" G_GSIZE_FORMAT " finished by gsrtp_protect_desc differs",
        i);
  }
  for (c = 0; c < NCTX; c++)
    fail_unless_equals_int (tx[c].roc, 1);
  memset (keys, 0, sizeof keys);
}

/* The CPU fallbacks of the GPU paths, on the constant-time path (no AES-NI,
 * no PCLMUL: GS_SRTP_FORCE_PORTABLE) against the scalar reference: a packet
 * whose ROC moved inside a GPU unprotect batch is redone as a CPU batch of
 * one (here every packet alone, each stream's ROC step included), and a
 * protect batch whose launch failed is finished by gsrtp_protect_desc. */
GST_START_TEST (test_srtp_cpu_fallbacks_portable)
{
  Stream *s = stream_new (4);

  gsrtp_set_force_portable (1);
  fail_unless (gsrtp_force_portable ());
  check_unprotect (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, 1);
  check_protect_prepared (s);
  check_protect (s, GST_GPUSTREAM_BACKEND_CPU, NULL, FALSE, 1);
  gsrtp_set_force_portable (0);
  /* and on the accelerated primitives where the CPU has them */
  check_protect_prepared (s);
  stream_free (s);
}

GST_END_TEST;

static Suite *
gpssrtp_suite (void)
{
  Suite *s = suite_create ("gpssrtp");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_srtp_cpu);
  tcase_add_test (tc, test_srtp_gpu_backend_without_context);
  tcase_add_test (tc, test_srtp_gpu);
  tcase_add_test (tc, test_srtp_cpu_fallbacks_portable);
  return s;
}

GST_CHECK_MAIN (gpssrtp);
