/* HAP in QuickTime files, both ways, against the ffmpeg CLI:
 *  1. videotestsrc ! dxtenc hap=true ! hapmovmux ! filesink, for Hap1, Hap5
 *     (with alpha) and HapY, Snappy on and off, and large frames in several
 *     chunks (the chunked 0xC? form): ffprobe must see codec hap, the fourcc
 *     and every frame; `ffmpeg -c copy` must give back the frames dxtenc
 *     made, byte for byte (the mdat and sample table are right); and
 *     `ffmpeg -f rawvideo -pix_fmt rgba` must decode them to the pixels
 *     dxtdec decodes from the same frames: identical, since dxtdec rounds
 *     as FFmpeg's hap decoder does (alpha compared for Hap5 only: FFmpeg
 *     decodes Hap1 and HapY as opaque rgb0).
 *  2. FFmpeg-made .mov files (hap, hap_alpha, hap_q, and hap_q in 4 chunks)
 *     through filesrc ! decodebin ! videoconvert ! appsink: decodebin must
 *     pick dxtdec, every frame must come out, and each must equal FFmpeg's
 *     own decode of the file (max difference 0; the PSNR is printed).
 *  3. Bad input to hapmovmux: a buffer that is not HAP and a Hap5 frame in a
 *     Hap1 stream are dropped with a warning each and counted, the file
 *     holds the valid frames; a sink that cannot seek is an error naming it.
 *  4. The code blocks of docs/elements/dxtenc.md and dxtdec.md that write or
 *     play a .mov run as written (sh -e, in a scratch directory), and the
 *     file the dxtenc.md block writes holds its 60 frames. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include "hap.h"

static int failures = 0;

#define CHECK(cond, ...) do { if (!(cond)) { printf ("FAIL: " __VA_ARGS__); \
      printf ("\n"); failures++; } } while (0)

static const gchar *ffmpeg, *ffprobe;
static gchar *tmp;

/* argv run in cwd (NULL: ours); its stdout, *status its exit code. */
static gchar *
run_cmd (const gchar * cwd, const gchar * const *argv, gint * status)
{
  gchar *out = NULL, *err = NULL;
  GError *e = NULL;

  if (!g_spawn_sync (cwd, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, status, &e)) {
    printf ("cannot run %s: %s\n", argv[0], e->message);
    g_error_free (e);
    *status = -1;
    return g_strdup ("");
  }
  if (!g_spawn_check_wait_status (*status, NULL)) {
    printf ("%s failed: %s\n", argv[0], err);
    *status = *status ? *status : -1;
  }
  g_free (err);
  return out;
}

/* A pipeline of ours that does not parse is a bug of the test: stop. */
static GstElement *
parse (const gchar * desc)
{
  GError *e = NULL;
  GstElement *pipe = gst_parse_launch_full (desc, NULL,
      GST_PARSE_FLAG_FATAL_ERRORS, &e);

  if (!pipe) {
    printf ("FAIL: %s: %s\n", desc, e->message);
    exit (1);
  }
  return pipe;
}

/* The pipeline to EOS (TRUE) or an error (printed, FALSE). */
static gboolean
run_to_eos (GstElement * pipe)
{
  GstMessage *msg;
  gboolean ok;

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipe), 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg && !ok) {
    GError *e = NULL;
    gchar *dbg = NULL;

    gst_message_parse_error (msg, &e, &dbg);
    printf ("pipeline error: %s (%s)\n", e->message, dbg);
    g_error_free (e);
    g_free (dbg);
  }
  if (msg)
    gst_message_unref (msg);
  return ok;
}

/* Every buffer the appsink named name holds (after EOS). */
static GPtrArray *
pull_all (GstElement * pipe, const gchar * name)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), name);
  GPtrArray *bufs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GstSample *s;

  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
    g_ptr_array_add (bufs, gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  gst_object_unref (sink);
  return bufs;
}

/* ffmpeg's RGBA decode of a file; NULL when it fails. */
static gchar *
ffmpeg_rgba (const gchar * mov, gsize * len)
{
  gchar *raw = g_build_filename (tmp, "ffmpeg.rgba", NULL), *data = NULL;
  const gchar *a[] = { ffmpeg, "-v", "error", "-y", "-i", mov, "-f",
    "rawvideo", "-pix_fmt", "rgba", raw, NULL
  };
  gint st;

  g_free (run_cmd (NULL, a, &st));
  if (st != 0 || !g_file_get_contents (raw, &data, len, NULL))
    data = NULL;
  g_unlink (raw);
  g_free (raw);
  return data;
}

/* "codec,fourcc,frames" of the file's video stream, as ffprobe sees it. */
static gchar *
ffprobe_stream (const gchar * mov)
{
  const gchar *a[] = { ffprobe, "-v", "error", "-count_frames",
    "-select_streams", "v:0", "-show_entries",
    "stream=codec_name,codec_tag_string,nb_read_frames", "-of", "csv=p=0",
    mov, NULL
  };
  gint st;

  return g_strstrip (run_cmd (NULL, a, &st));
}

/* max |a - b| over n_pix RGBA pixels (alpha when with_alpha), and the
 * PSNR over the compared values (INFINITY when equal) */
static gint
compare (const guint8 * a, const guint8 * b, gsize n_pix,
    gboolean with_alpha, gdouble * psnr)
{
  gsize i, n = 0;
  gint c, m = 0;
  gdouble se = 0;

  for (i = 0; i < n_pix; i++)
    for (c = 0; c < (with_alpha ? 4 : 3); c++, n++) {
      gint d = abs ((gint) a[i * 4 + c] - (gint) b[i * 4 + c]);

      se += (gdouble) d *d;
      m = MAX (m, d);
    }
  *psnr = se > 0 ? 10 * log10 (255.0 * 255.0 * n / se) : INFINITY;
  return m;
}

/* 1. dxtenc ! hapmovmux ! filesink, decoded by ffmpeg */
static void
check_write (const gchar * codec, const gchar * fourcc, gboolean snappy,
    guint chunks, gint w, gint h, guint n)
{
  gboolean alpha = g_str_equal (fourcc, "Hap5");
  gchar *mov = g_build_filename (tmp, "ours.mov", NULL);
  /* Hap5 carries alpha: a ball of alpha 0xc0 on a background of 0x40,
   * anti-aliased in between; the others a moving test card */
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u %s ! "
      "video/x-raw,format=RGBA,width=%d,"
      "height=%d,framerate=25/1 ! dxtenc format=%s hap=true snappy=%d "
      "chunks=%u ! tee name=t ! queue ! hapmovmux name=mux ! filesink "
      "location=\"%s\" t. ! queue ! appsink name=hap sync=false wait-on-eos=false t. ! queue ! "
      "dxtdec ! video/x-raw,format=RGBA ! appsink name=dec sync=false wait-on-eos=false", n,
      alpha ? "pattern=ball background-color=0x40204080 "
      "foreground-color=0xc0ffe0a0" : "pattern=smpte horizontal-speed=8",
      w, h, codec, snappy, chunks, mov);
  GstElement *pipe = parse (desc);
  GstElement *mux = gst_bin_get_by_name (GST_BIN (pipe), "mux");
  GPtrArray *haps, *decs;
  GString *all = g_string_new (NULL);
  GstStructure *stats = NULL;
  guint64 written = 0, dropped = 1;
  gsize n_pix = (gsize) w * h, len = 0;
  gchar *out, *expect, *data;
  guint i, type = 0;
  gint maxd = 0, st;
  gdouble psnr, min_psnr = INFINITY;

  printf ("%s %dx%d snappy=%d chunks=%u, %u frames\n", fourcc, w, h, snappy,
      chunks, n);
  CHECK (run_to_eos (pipe), "%s: dxtenc ! hapmovmux ! filesink failed",
      fourcc);
  haps = pull_all (pipe, "hap");
  decs = pull_all (pipe, "dec");
  g_object_get (mux, "stats", &stats, NULL);
  gst_structure_get_uint64 (stats, "frames-written", &written);
  gst_structure_get_uint64 (stats, "frames-dropped", &dropped);
  gst_structure_free (stats);
  gst_element_set_state (pipe, GST_STATE_NULL);
  CHECK (haps->len == n && decs->len == n && written == n && dropped == 0,
      "%u HAP frames, %u decoded, %" G_GUINT64_FORMAT " written, %"
      G_GUINT64_FORMAT " dropped; expected %u", haps->len, decs->len, written,
      dropped, n);

  for (i = 0; i < haps->len; i++) {
    GstMapInfo m;

    gst_buffer_map (g_ptr_array_index (haps, i), &m, GST_MAP_READ);
    g_string_append_len (all, (const gchar *) m.data, m.size);
    type = m.data[3];
    gst_buffer_unmap (g_ptr_array_index (haps, i), &m);
  }
  printf ("  frame type 0x%02x, %" G_GSIZE_FORMAT " bytes of frames\n", type,
      all->len);
  /* chunks > 1: decode instructions (0xC?), else one section */
  CHECK ((type & 0xF0) == (chunks != 1 ? 0xC0 : snappy ? 0xB0 : 0xA0),
      "%s chunks=%u snappy=%d: frame type 0x%02x", fourcc, chunks, snappy,
      type);

  out = ffprobe_stream (mov);
  expect = g_strdup_printf ("hap,%s,%u", fourcc, n);
  printf ("  ffprobe: %s\n", out);
  CHECK (g_str_equal (out, expect), "ffprobe said '%s', expected '%s'", out,
      expect);
  g_free (out);
  g_free (expect);

  {
    gchar *copy = g_build_filename (tmp, "copy.bin", NULL);
    const gchar *a[] = { ffmpeg, "-v", "error", "-y", "-i", mov, "-map",
      "0:v", "-c", "copy", "-f", "data", copy, NULL
    };

    g_free (run_cmd (NULL, a, &st));
    data = NULL;
    CHECK (st == 0 && g_file_get_contents (copy, &data, &len, NULL) &&
        len == all->len && memcmp (data, all->str, len) == 0,
        "%s: ffmpeg -c copy did not give dxtenc's frames back", fourcc);
    g_free (data);
    g_unlink (copy);
    g_free (copy);
  }

  data = ffmpeg_rgba (mov, &len);
  CHECK (data && len == n_pix * 4 * n, "%s: ffmpeg decoded %" G_GSIZE_FORMAT
      " bytes, expected %u frames of %" G_GSIZE_FORMAT, fourcc, len, n,
      n_pix * 4);
  if (data && len == n_pix * 4 * n && decs->len == n) {
    for (i = 0; i < n; i++) {
      GstMapInfo m;
      gint d;

      gst_buffer_map (g_ptr_array_index (decs, i), &m, GST_MAP_READ);
      d = compare ((const guint8 *) data + n_pix * 4 * i, m.data, n_pix,
          alpha, &psnr);
      gst_buffer_unmap (g_ptr_array_index (decs, i), &m);
      maxd = MAX (maxd, d);
      min_psnr = MIN (min_psnr, psnr);
    }
    printf ("  ffmpeg rawvideo against dxtdec: max |diff| %d, PSNR %.1f dB\n",
        maxd, min_psnr);
    CHECK (maxd == 0, "%s: ffmpeg and dxtdec differ by up to %d", fourcc,
        maxd);
  }
  g_free (data);

  g_string_free (all, TRUE);
  g_ptr_array_unref (haps);
  g_ptr_array_unref (decs);
  gst_object_unref (mux);
  gst_object_unref (pipe);
  g_free (desc);
  g_unlink (mov);
  g_free (mov);
}

/* A 64x32 HAP frame of the given texture format, blocks of value v. */
static GstBuffer *
hap_frame (gint tex_format, guint8 v, GstClockTime pts)
{
  gsize tex_size = tex_format == GS_HAP_TEX_DXT1 ? 1024 : 2048;
  guint8 *tex = g_malloc (tex_size), *out = g_malloc (tex_size + 64);
  gsize len;
  GstBuffer *b;

  memset (tex, v, tex_size);
  len = gs_hap_write_frame (out, tex_size + 64, tex_format, 0, 1, tex,
      tex_size);
  g_assert (len > 0);
  b = gst_buffer_new_wrapped (out, len);
  GST_BUFFER_PTS (b) = pts;
  GST_BUFFER_DURATION (b) = GST_SECOND / 25;
  g_free (tex);
  return b;
}

/* 3. bad input: counted drops, and an unseekable sink refused */
static void
check_bad_input (void)
{
  gchar *mov = g_build_filename (tmp, "bad.mov", NULL);
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps=\""
      "video/x-hap,format=Hap1,width=64,height=32,framerate=25/1\" ! "
      "hapmovmux name=mux ! filesink location=\"%s\"", mov);
  GstElement *pipe = parse (desc), *src, *mux;
  GstStructure *stats = NULL;
  guint64 written = 0, dropped = 0;
  guint warnings = 0;
  GstMessage *msg;
  gchar *out;
  const guint8 junk[16] = { 0 };

  src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  mux = gst_bin_get_by_name (GST_BIN (pipe), "mux");
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  gst_app_src_push_buffer (GST_APP_SRC (src),
      hap_frame (GS_HAP_TEX_DXT1, 0x11, 0));
  gst_app_src_push_buffer (GST_APP_SRC (src),
      gst_buffer_new_memdup (junk, sizeof (junk)));
  gst_app_src_push_buffer (GST_APP_SRC (src),
      hap_frame (GS_HAP_TEX_DXT5, 0x22, GST_SECOND / 25));
  gst_app_src_push_buffer (GST_APP_SRC (src),
      hap_frame (GS_HAP_TEX_DXT1, 0x33, 2 * GST_SECOND / 25));
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  while ((msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipe),
              10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR |
              GST_MESSAGE_WARNING))) {
    GstMessageType t = GST_MESSAGE_TYPE (msg);

    if (t == GST_MESSAGE_WARNING && GST_MESSAGE_SRC (msg) == GST_OBJECT (mux))
      warnings++;
    gst_message_unref (msg);
    if (t != GST_MESSAGE_WARNING) {
      CHECK (t == GST_MESSAGE_EOS, "bad input: error instead of EOS");
      break;
    }
  }
  g_object_get (mux, "stats", &stats, NULL);
  gst_structure_get_uint64 (stats, "frames-written", &written);
  gst_structure_get_uint64 (stats, "frames-dropped", &dropped);
  gst_structure_free (stats);
  gst_element_set_state (pipe, GST_STATE_NULL);
  out = ffprobe_stream (mov);
  printf ("bad input: %" G_GUINT64_FORMAT " written, %" G_GUINT64_FORMAT
      " dropped, %u warnings; ffprobe: %s\n", written, dropped, warnings, out);
  CHECK (written == 2 && dropped == 2 && warnings == 2,
      "bad input: expected 2 written, 2 dropped, 2 warnings");
  CHECK (g_str_equal (out, "hap,Hap1,2"), "bad input: ffprobe said '%s'", out);
  g_free (out);
  gst_object_unref (src);
  gst_object_unref (mux);
  gst_object_unref (pipe);
  g_free (desc);

  /* fakesink cannot seek back to the mdat header */
  pipe = parse ("appsrc name=src format=time caps=\"video/x-hap,format=Hap1,"
      "width=64,height=32,framerate=25/1\" ! hapmovmux ! fakesink");
  src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  gst_app_src_push_buffer (GST_APP_SRC (src),
      hap_frame (GS_HAP_TEX_DXT1, 0x11, 0));
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipe), 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  {
    GError *e = NULL;

    if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
      gst_message_parse_error (msg, &e, NULL);
    printf ("unseekable sink: %s\n", e ? e->message : "no error");
    CHECK (e && strstr (e->message, "not seekable"),
        "an unseekable sink was not refused with an error");
    g_clear_error (&e);
  }
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipe);
  g_unlink (mov);
  g_free (mov);
}

/* Whether an element of factory name is in bin, at any depth. */
static gboolean
bin_has_factory (GstBin * bin, const gchar * name)
{
  GstIterator *it = gst_bin_iterate_recurse (bin);
  GValue v = G_VALUE_INIT;
  gboolean found = FALSE;

  while (!found && gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElementFactory *f = gst_element_get_factory (g_value_get_object (&v));

    found = f && g_str_equal (GST_OBJECT_NAME (f), name);
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return found;
}

/* 2. an FFmpeg-made .mov through decodebin */
static void
check_play (const gchar * format, const gchar * chunks, gboolean alpha)
{
  gchar *mov = g_build_filename (tmp, "ffmpeg.mov", NULL);
  const gchar *make[] = { ffmpeg, "-v", "error", "-y", "-f", "lavfi", "-i",
    "testsrc=size=640x360:rate=25", "-t", "1", "-c:v", "hap", "-format",
    format, "-chunks", chunks, mov, NULL
  };
  gchar *desc = g_strdup_printf ("filesrc location=\"%s\" ! decodebin name=db "
      "! videoconvert ! video/x-raw,format=RGBA ! appsink name=out wait-on-eos=false "
      "sync=false", mov);
  GstElement *pipe;
  GPtrArray *frames;
  gsize n_pix = 640 * 360, len = 0;
  gchar *data;
  gint st, maxd = 0;
  gdouble psnr, min_psnr = INFINITY;
  guint i;

  g_free (run_cmd (NULL, make, &st));
  CHECK (st == 0, "ffmpeg could not write a %s .mov", format);
  pipe = parse (desc);
  CHECK (run_to_eos (pipe), "%s: filesrc ! decodebin failed", format);
  CHECK (bin_has_factory (GST_BIN (pipe), "dxtdec"),
      "%s: decodebin did not pick dxtdec", format);
  frames = pull_all (pipe, "out");
  gst_element_set_state (pipe, GST_STATE_NULL);
  data = ffmpeg_rgba (mov, &len);
  printf ("FFmpeg %s, %s chunk(s): %u frames through decodebin, ffmpeg "
      "decoded %" G_GSIZE_FORMAT "\n", format, chunks, frames->len,
      len / (n_pix * 4));
  CHECK (frames->len == 25 && data && len == n_pix * 4 * 25,
      "%s: %u frames through decodebin, ffmpeg %" G_GSIZE_FORMAT
      " bytes; expected 25 frames", format, frames->len, len);
  if (frames->len == 25 && data && len == n_pix * 4 * 25) {
    for (i = 0; i < 25; i++) {
      GstMapInfo m;

      gst_buffer_map (g_ptr_array_index (frames, i), &m, GST_MAP_READ);
      CHECK (m.size == n_pix * 4, "frame %u: %" G_GSIZE_FORMAT " bytes", i,
          m.size);
      if (m.size == n_pix * 4) {
        maxd = MAX (maxd, compare ((const guint8 *) data + n_pix * 4 * i,
                m.data, n_pix, alpha, &psnr));
        min_psnr = MIN (min_psnr, psnr);
      }
      gst_buffer_unmap (g_ptr_array_index (frames, i), &m);
    }
    printf ("  decodebin against ffmpeg: max |diff| %d, PSNR %.1f dB\n",
        maxd, min_psnr);
    CHECK (maxd == 0, "%s: decodebin's frames differ from ffmpeg's by up "
        "to %d", format, maxd);
  }
  g_free (data);
  g_ptr_array_unref (frames);
  gst_object_unref (pipe);
  g_free (desc);
  g_unlink (mov);
  g_free (mov);
}

/* 4. the fenced blocks of a doc page that write or play a .mov, as
 * written; returns how many ran */
static guint
run_doc_blocks (const gchar * page, const gchar * dir)
{
  gchar *path = g_build_filename (DXT_DOCS_DIR, page, NULL), *text = NULL;
  gchar **parts;
  guint i, ran = 0;

  CHECK (g_file_get_contents (path, &text, NULL, NULL), "cannot read %s",
      path);
  /* the odd parts between ``` fences are the code blocks */
  parts = g_strsplit (text ? text : "", "```", -1);
  for (i = 1; parts[i]; i += 2) {
    const gchar *block = parts[i];
    gint st;

    if (!strstr (block, ".mov"))
      continue;
    block = strchr (block, '\n') ? strchr (block, '\n') + 1 : block;
    {
      const gchar *a[] = { "/bin/sh", "-e", "-c", block, NULL };

      printf ("%s: running\n%s", page, block);
      g_free (run_cmd (dir, a, &st));
      CHECK (st == 0, "%s: a .mov block failed (exit %d)", page, st);
      ran++;
    }
  }
  g_strfreev (parts);
  g_free (text);
  g_free (path);
  return ran;
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  ffmpeg = g_getenv ("DXT_FFMPEG");
  ffprobe = g_getenv ("DXT_FFPROBE");
  if (!ffmpeg || !ffprobe) {
    printf ("FAIL: DXT_FFMPEG and DXT_FFPROBE must be set (meson did not "
        "find ffmpeg / ffprobe: install the ffmpeg package)\n");
    return 1;
  }
  tmp = g_dir_make_tmp ("dxt-mov-XXXXXX", NULL);

  check_write ("dxt1", "Hap1", FALSE, 1, 640, 360, 6);
  check_write ("dxt1", "Hap1", TRUE, 1, 640, 360, 6);
  check_write ("dxt5", "Hap5", FALSE, 1, 640, 360, 6);
  check_write ("dxt5", "Hap5", TRUE, 1, 640, 360, 6);
  check_write ("ycocg-dxt5", "HapY", FALSE, 1, 640, 360, 6);
  check_write ("ycocg-dxt5", "HapY", TRUE, 1, 640, 360, 6);
  /* large frames: chunks by size (1080p HapY: 4, Hap1: 2), and set */
  check_write ("ycocg-dxt5", "HapY", TRUE, 0, 1920, 1080, 3);
  check_write ("dxt1", "Hap1", FALSE, 0, 1920, 1080, 3);
  check_write ("dxt5", "Hap5", TRUE, 9, 642, 362, 4);

  check_play ("hap", "1", FALSE);
  check_play ("hap_alpha", "1", TRUE);
  check_play ("hap_q", "1", FALSE);
  check_play ("hap_q", "4", FALSE);

  check_bad_input ();

  {
    gchar *dir = g_build_filename (tmp, "docs", NULL), *mov, *out;

    g_mkdir (dir, 0700);
    CHECK (run_doc_blocks ("dxtenc.md", dir) > 0,
        "dxtenc.md shows no .mov block");
    mov = g_build_filename (dir, "x.mov", NULL);
    out = ffprobe_stream (mov);
    printf ("dxtenc.md's x.mov: %s\n", out);
    CHECK (g_str_equal (out, "hap,Hap5,60"), "dxtenc.md's x.mov: '%s', "
        "expected 'hap,Hap5,60'", out);
    g_free (out);
    CHECK (run_doc_blocks ("dxtdec.md", dir) > 0,
        "dxtdec.md shows no .mov block");
    /* what the blocks left */
    {
      GDir *d = g_dir_open (dir, 0, NULL);
      const gchar *f;

      while (d && (f = g_dir_read_name (d))) {
        gchar *p = g_build_filename (dir, f, NULL);

        g_unlink (p);
        g_free (p);
      }
      if (d)
        g_dir_close (d);
    }
    g_rmdir (dir);
    g_free (mov);
    g_free (dir);
  }

  g_rmdir (tmp);
  g_free (tmp);
  printf ("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
