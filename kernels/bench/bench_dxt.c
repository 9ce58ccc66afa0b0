/* bench_dxt.c: single-core DXT encode speed (Mpix/s) and quality (RGB PSNR)
 * on the test photograph tiled to 1920x1080, for our fast/high BC1, BC3 and
 * YCoCg-DXT5 and the anchors stb_dxt (normal, highqual) and libsquish
 * (range fit, cluster fit; block by block, one thread). Prints a table and
 * one JSON line per figure; --json FILE also writes the JSON lines there.
 * Helpers for the anchors that live outside this program (bench/dxt_anchors.py):
 *   --squish-only LABEL   measure only libsquish (the build this binary is linked
 *                         with: rows squish-LABEL-rangefit/-clusterfit) and our
 *                         high mode against squish-LABEL-clusterfit
 *   --dump-rgba FILE      write the 1920x1080 RGBA input frame (tight) and exit
 *   --psnr bc1|bc3 FILE   decode FILE's blocks of the input frame with our
 *                         decoder, print the RGB PSNR against the input and exit
 *   --frame FILE WxH rgba|uyvy [THREADS [SLICE_ROWS [SECONDS]]]
 *                         DXT1 fast of one raw frame (tight rows) coded again
 *                         and again as dxtenc's CPU path codes it
 *                         (dxt_encode_frame_threads; THREADS 0: one per CPU,
 *                         SLICE_ROWS 0: even split), for SECONDS (default
 *                         2): one JSON line, frames/s over the whole run and
 *                         per-frame times; the kernel figure the dxtenc
 *                         element is compared with (bench/bench_dxt_element.py)
 * Targets: fast >= 2x stb_dxt normal at >= its PSNR; high >= 10x squish
 * cluster fit within 0.2 dB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dxt/dxt.h"
#include "../tests/test_dxt_common.h"

#define W 1920
#define H 1080

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static FILE *json;

typedef struct {
  double mpix, psnr;
} Fig;

static void
emit (const char *enc, const char *fmt, Fig f, const char *anchor, double ratio, double dpsnr)
{
  char line[512];
  if (anchor)
    snprintf (line, sizeof line, "{\"bench\":\"dxt\",\"encoder\":\"%s\",\"format\":\"%s\",\"mpix_s\":%.2f,\"psnr\":%.3f,"
              "\"anchor\":\"%s\",\"ratio\":%.2f,\"psnr_delta\":%.3f,\"device\":\"cpu\"}", enc, fmt, f.mpix, f.psnr, anchor, ratio, dpsnr);
  else
    snprintf (line, sizeof line, "{\"bench\":\"dxt\",\"encoder\":\"%s\",\"format\":\"%s\",\"mpix_s\":%.2f,\"psnr\":%.3f,"
              "\"anchor\":null,\"ratio\":null,\"device\":\"cpu\"}", enc, fmt, f.mpix, f.psnr);
  printf ("%s\n", line);
  if (json)
    fprintf (json, "%s\n", line);
}

static uint8_t *frame, *blocks, *dec;

static int
write_file (const char *path, const void *data, size_t n)
{
  FILE *f = fopen (path, "wb");
  if (!f || fwrite (data, 1, n, f) != n) {
    perror (path);
    if (f) fclose (f);
    return 1;
  }
  return fclose (f) != 0;
}

/* --psnr: the blocks of another encoder (a whole frame), decoded by ours */
static int
psnr_file (DxtCodec c, const char *path)
{
  size_t n = dxt_frame_bytes (c, W, H);
  FILE *f = fopen (path, "rb");
  if (!f) { perror (path); return 1; }
  size_t got = fread (blocks, 1, n + 1, f);
  fclose (f);
  if (got != n) {
    fprintf (stderr, "%s: %zu bytes, want %zu (a %ux%u frame)\n", path, got, n, W, H);
    return 1;
  }
  dxt_decode_frame (c, blocks, W, H, dec, 4 * W);
  printf ("%.3f\n", psnr_rgb (frame, dec, W, H));
  return 0;
}

static double
psnr_blocks (DxtCodec c)
{
  dxt_decode_frame (c, blocks, W, H, dec, 4 * W);
  return psnr_rgb (frame, dec, W, H);
}

/* run at least min_s seconds (and once), best time per frame; threads > 1:
 * the whole machine (dxt_encode_frame_threads, the rows split evenly) */
static Fig
run_ours_threads (DxtCodec c, DxtQuality q, double min_s, unsigned threads)
{
  DxtImage im = { { frame, 0, 0 }, { 4 * W, 0, 0 }, W, H, DXT_FMT_RGBA };
  double best = 1e9, t0 = now ();
  do {
    double t = now ();
    if (threads > 1)
      dxt_encode_frame_threads (&im, c, q, 0, threads, blocks);
    else
      dxt_encode_frame (&im, c, q, blocks);
    t = now () - t;
    best = t < best ? t : best;
  } while (now () - t0 < min_s);
  Fig f = { W * (double) H / best / 1e6, psnr_blocks (c) };
  return f;
}

static Fig
run_ours (DxtCodec c, DxtQuality q, double min_s)
{
  return run_ours_threads (c, q, min_s, 1);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* --frame: the kernel end to end on one frame, as the element calls it */
static int
run_frame (const char *path, const char *size, const char *fmt,
    unsigned threads, unsigned slice_rows, double seconds)
{
  unsigned w = 0, h = 0;
  int uyvy = !strcmp (fmt, "uyvy");
  if (sscanf (size, "%ux%u", &w, &h) != 2 || !w || !h || (uyvy && (w & 1))
      || (!uyvy && strcmp (fmt, "rgba"))) {
    fprintf (stderr, "--frame: WxH and rgba or uyvy (UYVY: even width)\n");
    return 2;
  }
  size_t stride = (size_t) w * (uyvy ? 2 : 4), n = stride * h;
  uint8_t *px = malloc (n + 1), *out = malloc (dxt_frame_bytes (DXT_BC1, w, h));
  FILE *f = fopen (path, "rb");
  size_t got = f ? fread (px, 1, n + 1, f) : 0;
  if (f)
    fclose (f);
  if (got != n) {
    fprintf (stderr, "%s: %zu bytes, want %zu (a %ux%u %s frame)\n", path,
        got, n, w, h, fmt);
    free (px); free (out);
    return 1;
  }
  if (!threads)
    threads = dxt_cpu_count ();
  DxtImage im = { { px, 0, 0 }, { stride, 0, 0 }, w, h,
    uyvy ? DXT_FMT_UYVY : DXT_FMT_RGBA };
  size_t cap = 1 << 16, frames = 0;
  double *t = malloc (cap * sizeof *t), t0 = now ();
  /* one frame untimed: first-touch of the output, thread start-up */
  dxt_encode_frame_threads (&im, DXT_BC1, DXT_FAST, slice_rows, threads, out);
  t0 = now ();
  do {
    double s = now ();
    if (dxt_encode_frame_threads (&im, DXT_BC1, DXT_FAST, slice_rows, threads,
            out)) {
      fprintf (stderr, "--frame: the encoder refused the frame\n");
      free (px); free (out); free (t);
      return 1;
    }
    if (frames < cap)
      t[frames] = now () - s;
    frames++;
  } while (now () - t0 < seconds);
  double wall = now () - t0;
  size_t nt = frames < cap ? frames : cap;
  qsort (t, nt, sizeof *t, cmp_double);
  char line[512];
  snprintf (line, sizeof line, "{\"bench\":\"dxt-frame\",\"encoder\":"
      "\"dxt_encode_frame_threads\",\"codec\":\"bc1\",\"quality\":\"fast\","
      "\"input\":\"%s\",\"size\":\"%ux%u\",\"threads\":%u,\"slice_rows\":%u,"
      "\"frames\":%zu,\"fps\":%.2f,\"ms_p50\":%.3f,\"ms_p99\":%.3f,"
      "\"ms_max\":%.3f,\"device\":\"cpu\"}", fmt, w, h, threads, slice_rows,
      frames, frames / wall, 1e3 * t[nt / 2], 1e3 * t[(nt * 99) / 100],
      1e3 * t[nt - 1]);
  printf ("%s\n", line);
  if (json)
    fprintf (json, "%s\n", line);
  free (px); free (out); free (t);
  return 0;
}

static Fig
run_anchor (Anchor a, DxtCodec c, double min_s)
{
  double best = 1e9, t0 = now ();
  Fig f = { -1, -1 };
  do {
    double t = now ();
    if (!anchor_encode (a, c, frame, W, H, blocks))
      return f;
    t = now () - t;
    best = t < best ? t : best;
  } while (now () - t0 < min_s);
  f.mpix = W * (double) H / best / 1e6;
  f.psnr = psnr_blocks (c);
  return f;
}

int
main (int argc, char **argv)
{
  const char *squish_only = NULL, *dump = NULL, *psnr_path = NULL;
  int psnr_codec = -1;
  for (int i = 1; i < argc; i++)
    if (!strcmp (argv[i], "--json") && i + 1 < argc) {
      json = fopen (argv[++i], "w");
      if (!json) { perror (argv[i]); return 1; }
    } else if (!strcmp (argv[i], "--squish-only") && i + 1 < argc) {
      squish_only = argv[++i];
    } else if (!strcmp (argv[i], "--dump-rgba") && i + 1 < argc) {
      dump = argv[++i];
    } else if (!strcmp (argv[i], "--psnr") && i + 2 < argc) {
      psnr_codec = !strcmp (argv[i + 1], "bc1") ? DXT_BC1 : !strcmp (argv[i + 1], "bc3") ? DXT_BC3 : -1;
      psnr_path = argv[i + 2];
      i += 2;
      if (psnr_codec < 0) { fprintf (stderr, "--psnr: bc1 or bc3\n"); return 2; }
    } else if (!strcmp (argv[i], "--frame") && i + 3 < argc) {
      /* optional trailing numbers: THREADS, SLICE_ROWS, SECONDS */
      unsigned th = 0, rows = 0;
      double secs = 2;
      const char *path = argv[i + 1], *size = argv[i + 2], *fmt = argv[i + 3];
      i += 3;
      if (i + 1 < argc && argv[i + 1][0] != '-')
        th = (unsigned) atoi (argv[++i]);
      if (i + 1 < argc && argv[i + 1][0] != '-')
        rows = (unsigned) atoi (argv[++i]);
      if (i + 1 < argc && argv[i + 1][0] != '-')
        secs = atof (argv[++i]);
      /* --json before --frame is honoured; nothing after it is read */
      return run_frame (path, size, fmt, th, rows, secs);
    } else {
      fprintf (stderr, "usage: %s [--json FILE] [--squish-only LABEL] [--dump-rgba FILE] [--psnr bc1|bc3 FILE] [--frame FILE WxH rgba|uyvy [THREADS [SLICE_ROWS [SECONDS]]]]\n", argv[0]);
      return 2;
    }
  uint32_t pw = 1, ph = 1;
  uint8_t *photo = load_photo (&pw, &ph);
  frame = malloc ((size_t) W * H * 4);
  blocks = malloc (dxt_frame_bytes (DXT_BC3, W, H));
  dec = malloc ((size_t) W * H * 4);
  for (uint32_t y = 0; y < H; y++)
    for (uint32_t x = 0; x < W; x++) {
      uint8_t *p = frame + 4 * ((size_t) y * W + x);
      if (photo) {
        /* mirrored tiling: no artificial edges at the seams */
        uint32_t sx = x % (2 * pw), sy = y % (2 * ph);
        sx = sx < pw ? sx : 2 * pw - 1 - sx;
        sy = sy < ph ? sy : 2 * ph - 1 - sy;
        memcpy (p, photo + 4 * ((size_t) sy * pw + sx), 4);
      } else {
        p[0] = x; p[1] = y; p[2] = x + y; p[3] = 255;
      }
    }
  if (dump || psnr_path) {
    int rc = dump ? write_file (dump, frame, (size_t) W * H * 4) : psnr_file ((DxtCodec) psnr_codec, psnr_path);
    free (photo); free (frame); free (blocks); free (dec);
    return rc;
  }
  const char *fmt_name[] = { "bc1", "bc3", "ycocg" };
  if (squish_only) {
    /* this binary is linked with another libsquish build: its anchors under
     * another name, and our high mode measured again beside them (same run) */
    Fig sq[2][2];
    char sqn[2][64];
    for (int a = 0; a < 2; a++)
      snprintf (sqn[a], sizeof sqn[a], "squish-%s-%s", squish_only, a ? "clusterfit" : "rangefit");
    for (int ci = 0; ci < 2; ci++)
      for (int a = 0; a < 2; a++) {
        sq[ci][a] = run_anchor (a ? ANCHOR_SQUISH_CLUSTER : ANCHOR_SQUISH_RANGE, (DxtCodec) ci, a ? 0 : 0.4);
        if (sq[ci][a].mpix <= 0) {
          fprintf (stderr, "bench_dxt: built without libsquish\n");
          return 77;
        }
      }
    printf ("%-22s %-6s %10s %9s %-20s %7s %8s\n", "encoder", "format", "Mpix/s", "PSNR", "anchor", "ratio", "dPSNR");
    for (int ci = 0; ci < 3; ci++) {
      Fig f = run_ours ((DxtCodec) ci, DXT_HIGH, 0.5), a = sq[ci == DXT_BC1 ? 0 : 1][1];
      double ratio = f.mpix / a.mpix, dp = f.psnr - a.psnr;
      printf ("%-22s %-6s %10.2f %9.3f %-20s %7.2f %+8.3f\n", "gpustream-high", fmt_name[ci], f.mpix, f.psnr,
              sqn[1], ratio, dp);
      emit ("gpustream-high", fmt_name[ci], f, sqn[1], ratio, dp);
    }
    for (int ci = 0; ci < 2; ci++)
      for (int a = 0; a < 2; a++) {
        printf ("%-22s %-6s %10.2f %9.3f\n", sqn[a], fmt_name[ci], sq[ci][a].mpix, sq[ci][a].psnr);
        emit (sqn[a], fmt_name[ci], sq[ci][a], NULL, 0, 0);
      }
    if (json)
      fclose (json);
    free (photo); free (frame); free (blocks); free (dec);
    return 0;
  }
  printf ("# dxt bench: %s 1920x1080 (tiled), single core, cpu path %s\n",
          photo ? "coffee.png" : "synthetic ramp (no photo)", dxt_cpu_path_name (dxt_get_cpu_path ()));
  Fig anc[2][4];
  for (int ci = 0; ci < 2; ci++)
    for (int a = 0; a < 4; a++)
      anc[ci][a] = run_anchor ((Anchor) a, (DxtCodec) ci, a == ANCHOR_SQUISH_CLUSTER ? 0 : 0.4);
  printf ("%-22s %-6s %10s %9s %-20s %7s %8s\n", "encoder", "format", "Mpix/s", "PSNR", "anchor", "ratio", "dPSNR");
  for (int ci = 0; ci < 3; ci++) {
    int ac = ci == DXT_BC1 ? 0 : 1;   /* ycocg is compared with the BC3 anchors (same size) */
    for (int q = 0; q < 2; q++) {
      Anchor an = q == DXT_FAST ? ANCHOR_STB_NORMAL : ANCHOR_SQUISH_CLUSTER;
      Fig f = run_ours ((DxtCodec) ci, (DxtQuality) q, 0.5);
      Fig a = anc[ac][an];
      char enc[32];
      snprintf (enc, sizeof enc, "gpustream-%s", q ? "high" : "fast");
      double ratio = a.mpix > 0 ? f.mpix / a.mpix : 0, dp = f.psnr - a.psnr;
      printf ("%-22s %-6s %10.2f %9.3f %-20s %7.2f %+8.3f\n", enc, fmt_name[ci], f.mpix, f.psnr,
              a.mpix > 0 ? anchor_name (an) : "-", ratio, a.mpix > 0 ? dp : 0);
      emit (enc, fmt_name[ci], f, a.mpix > 0 ? anchor_name (an) : NULL, ratio, dp);
      if (q == DXT_FAST && ci != DXT_YCOCG) {
        DxtCpuPath p = dxt_get_cpu_path ();
        dxt_set_cpu_path (DXT_CPU_SCALAR);
        Fig s = run_ours ((DxtCodec) ci, DXT_FAST, 0.4);
        dxt_set_cpu_path (p);
        ratio = a.mpix > 0 ? s.mpix / a.mpix : 0;
        printf ("%-22s %-6s %10.2f %9.3f %-20s %7.2f %+8.3f\n", "gpustream-fast-scalar", fmt_name[ci], s.mpix, s.psnr,
                a.mpix > 0 ? anchor_name (an) : "-", ratio, a.mpix > 0 ? s.psnr - a.psnr : 0);
        emit ("gpustream-fast-scalar", fmt_name[ci], s, a.mpix > 0 ? anchor_name (an) : NULL, ratio, s.psnr - a.psnr);
      }
    }
  }
  /* the whole machine: every online CPU, against one core of the same run */
  unsigned ncpu = dxt_cpu_count ();
  if (ncpu > 1) {
    printf ("# whole machine: %u threads, x one core of this run\n", ncpu);
    for (int ci = 0; ci < 3; ci++)
      for (int q = 0; q < 2; q++) {
        char enc[48], one[32];
        Fig f1 = run_ours ((DxtCodec) ci, (DxtQuality) q, 0.4);
        Fig fm = run_ours_threads ((DxtCodec) ci, (DxtQuality) q, 0.4, ncpu);
        snprintf (enc, sizeof enc, "gpustream-%s-%uthreads", q ? "high" : "fast", ncpu);
        snprintf (one, sizeof one, "gpustream-%s", q ? "high" : "fast");
        printf ("%-22s %-6s %10.2f %9.3f %-20s %7.2f %+8.3f\n", enc, fmt_name[ci], fm.mpix, fm.psnr,
                one, fm.mpix / f1.mpix, fm.psnr - f1.psnr);
        emit (enc, fmt_name[ci], fm, one, fm.mpix / f1.mpix, fm.psnr - f1.psnr);
      }
  }
  for (int ci = 0; ci < 2; ci++)
    for (int a = 0; a < 4; a++)
      if (anc[ci][a].mpix > 0) {
        printf ("%-22s %-6s %10.2f %9.3f\n", anchor_name ((Anchor) a), fmt_name[ci], anc[ci][a].mpix, anc[ci][a].psnr);
        emit (anchor_name ((Anchor) a), fmt_name[ci], anc[ci][a], NULL, 0, 0);
      }
  if (json)
    fclose (json);
  free (photo); free (frame); free (blocks); free (dec);
  return 0;
}
