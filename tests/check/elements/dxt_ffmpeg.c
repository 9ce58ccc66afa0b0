/* FFmpeg interop of dxtenc's HAP frames (something we did not write):
 *  1. a real photograph (kernels/tests/data/coffee.png) through dxtenc into
 *     Hap1, Hap5 and HapY, with and without Snappy; each frame decoded by
 *     libavcodec's hap decoder and by dxtdec, pixels compared;
 *  2. the frames written by hapmovmux into a .mov; ffprobe must see codec hap
 *     and the frame count, `ffmpeg -c copy` must give back our frames byte
 *     for byte, and `ffmpeg -f rawvideo` must decode them to the same pixels
 *     as libavcodec did in 1.
 * Everything is exact: libavcodec accepts every frame, `ffmpeg -c copy`
 * returns our bytes, and the pixels of libavcodec, the ffmpeg CLI and dxtdec
 * are identical (max difference 0, alpha included for Hap5). S3TC leaves
 * the 565 -> 888 expansion and palette rounding to the decoder; dxtdec
 * (kernels' dxt_decode_frame) rounds as FFmpeg's hap decoder does, YCoCg ->
 * RGB included (kernels/dxt/dxt_block.h, kernels/tests/test_dxt.c).
 * Exit 77 (skipped) only when the build found no libavcodec. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HAVE_LIBAV
int
main (void)
{
  printf ("SKIP: built without libavcodec/libavformat (install "
      "libavcodec-dev libavformat-dev libavutil-dev and reconfigure)\n");
  return 77;
}
#else
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#define N_FRAMES 3

static int failures = 0;

#define CHECK(cond, ...) do { if (!(cond)) { printf ("FAIL: " __VA_ARGS__); \
      printf ("\n"); failures++; } } while (0)

static GstBuffer *
load_image (gint * w, gint * h)
{
  gchar *desc = g_strdup_printf ("filesrc location=%s/coffee.png ! pngdec ! "
      "videoconvert ! video/x-raw,format=RGBA ! appsink name=s", DXT_TEST_DATA);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "s");
  GstSample *sample;
  GstBuffer *buf;
  GstStructure *s;

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
  g_assert (sample);
  s = gst_caps_get_structure (gst_sample_get_caps (sample), 0);
  gst_structure_get_int (s, "width", w);
  gst_structure_get_int (s, "height", h);
  buf = gst_buffer_ref (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  g_free (desc);
  return buf;
}

/* dxtenc then dxtdec on the image; returns the HAP frame, fills rgba. */
static GstBuffer *
gst_roundtrip (GstBuffer * img, gint w, gint h, const gchar * codec,
    gboolean snappy, const gchar * fourcc, GstBuffer ** rgba)
{
  gchar *launch = g_strdup_printf ("dxtenc format=%s hap=true snappy=%d "
      "quality=high", codec, snappy);
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGBA,width=%d,height=%d,"
      "framerate=30/1", w, h);
  GstHarness *enc = gst_harness_new_parse (launch);
  GstHarness *dec = gst_harness_new ("dxtdec");
  GstBuffer *hap;

  gst_harness_set_src_caps_str (enc, caps);
  g_assert (gst_harness_push (enc, gst_buffer_ref (img)) == GST_FLOW_OK);
  hap = gst_harness_pull (enc);
  g_free (caps);
  caps = g_strdup_printf ("video/x-hap,format=%s,width=%d,height=%d,"
      "framerate=30/1", fourcc, w, h);
  gst_harness_set_sink_caps_str (dec, "video/x-raw,format=RGBA");
  gst_harness_set_src_caps_str (dec, caps);
  g_assert (gst_harness_push (dec, gst_buffer_ref (hap)) == GST_FLOW_OK);
  *rgba = gst_harness_pull (dec);
  gst_harness_teardown (enc);
  gst_harness_teardown (dec);
  g_free (caps);
  g_free (launch);
  return hap;
}

/* libavcodec's hap decoder: RGBA rows, alpha forced to 255 for RGB0. */
static guint8 *
av_decode (GstBuffer * hap, gint w, gint h, const gchar * fourcc,
    const gchar ** pix_fmt)
{
  const AVCodec *c = avcodec_find_decoder (AV_CODEC_ID_HAP);
  AVCodecContext *ctx = avcodec_alloc_context3 (c);
  AVPacket *pkt = av_packet_alloc ();
  AVFrame *fr = av_frame_alloc ();
  GstMapInfo map;
  guint8 *out = NULL;
  gint y, x;

  ctx->width = w;
  ctx->height = h;
  ctx->codec_tag = MKTAG (fourcc[0], fourcc[1], fourcc[2], fourcc[3]);
  g_assert (avcodec_open2 (ctx, c, NULL) == 0);
  gst_buffer_map (hap, &map, GST_MAP_READ);
  av_new_packet (pkt, map.size);
  memcpy (pkt->data, map.data, map.size);
  gst_buffer_unmap (hap, &map);
  if (avcodec_send_packet (ctx, pkt) == 0 &&
      avcodec_receive_frame (ctx, fr) == 0) {
    gboolean has_alpha = fr->format == AV_PIX_FMT_RGBA;

    *pix_fmt = av_get_pix_fmt_name (fr->format);
    g_assert (fr->format == AV_PIX_FMT_RGBA || fr->format == AV_PIX_FMT_RGB0);
    out = g_malloc ((gsize) w * h * 4);
    for (y = 0; y < h; y++) {
      memcpy (out + (gsize) y * w * 4, fr->data[0] + (gsize) y *
          fr->linesize[0], (gsize) w * 4);
      if (!has_alpha)
        for (x = 0; x < w; x++)
          out[((gsize) y * w + x) * 4 + 3] = 255;
    }
  }
  av_frame_free (&fr);
  av_packet_free (&pkt);
  avcodec_free_context (&ctx);
  return out;
}

/* n copies of the HAP frame, 30 frames/s, through hapmovmux into path. */
static gboolean
write_mov (GstBuffer * hap, guint n, gint w, gint h, const gchar * fourcc,
    const gchar * path)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps=\""
      "video/x-hap,format=%s,width=%d,height=%d,framerate=30/1\" ! "
      "hapmovmux ! filesink location=\"%s\"", fourcc, w, h, path);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstMessage *msg;
  gboolean ok;
  guint i;

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  for (i = 0; i < n; i++) {
    GstBuffer *b = gst_buffer_copy (hap);

    GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
    GST_BUFFER_DURATION (b) = gst_util_uint64_scale (1, GST_SECOND, 30);
    gst_app_src_push_buffer (GST_APP_SRC (src), b);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipe), 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (pipe);
  g_free (desc);
  return ok;
}

/* max |a - b| over RGB (and alpha when with_alpha); counts differing bytes */
static gint
compare (const guint8 * a, const guint8 * b, gsize n_pix, gboolean with_alpha,
    gsize * n_diff)
{
  gsize i;
  gint c, m = 0;

  *n_diff = 0;
  for (i = 0; i < n_pix; i++)
    for (c = 0; c < (with_alpha ? 4 : 3); c++) {
      gint d = abs ((gint) a[i * 4 + c] - (gint) b[i * 4 + c]);

      if (d)
        (*n_diff)++;
      m = MAX (m, d);
    }
  return m;
}

static gchar *
run_cmd (const gchar * const *argv, gint * status)
{
  gchar *out = NULL, *err = NULL;
  GError *e = NULL;

  if (!g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
          &out, &err, status, &e)) {
    printf ("cannot run %s: %s\n", argv[0], e->message);
    g_error_free (e);
    *status = -1;
    return g_strdup ("");
  }
  if (*status != 0)
    printf ("%s: %s\n", argv[0], err);
  g_free (err);
  return out;
}

int
main (int argc, char **argv)
{
  static const struct
  {
    const gchar *codec, *fourcc;
    gboolean alpha;
  } cases[] = {
    {"dxt1", "Hap1", FALSE}, {"dxt5", "Hap5", TRUE},
    {"ycocg-dxt5", "HapY", FALSE},
  };
  const gchar *ffmpeg = g_getenv ("DXT_FFMPEG");
  const gchar *ffprobe = g_getenv ("DXT_FFPROBE");
  gchar *tmp;
  GstBuffer *img;
  gint w = 0, h = 0;
  guint ci, sn;

  gst_init (&argc, &argv);
  if (!ffmpeg || !ffprobe) {
    printf ("FAIL: DXT_FFMPEG and DXT_FFPROBE must be set (meson "
        "did not find ffmpeg / ffprobe: install the ffmpeg package)\n");
    return 1;
  }
  tmp = g_dir_make_tmp ("dxt-ffmpeg-XXXXXX", NULL);
  img = load_image (&w, &h);
  printf ("image %dx%d\n", w, h);

  for (ci = 0; ci < G_N_ELEMENTS (cases); ci++)
    for (sn = 0; sn < 2; sn++) {
      GstBuffer *hap, *rgba;
      GstMapInfo m;
      guint8 *av;
      const gchar *pix_fmt = "?";
      gsize n_diff = 0, n_pix = (gsize) w * h;
      gint maxd;

      hap = gst_roundtrip (img, w, h, cases[ci].codec, sn, cases[ci].fourcc,
          &rgba);
      av = av_decode (hap, w, h, cases[ci].fourcc, &pix_fmt);
      CHECK (av != NULL, "libavcodec refused our %s frame", cases[ci].fourcc);
      if (!av)
        continue;
      gst_buffer_map (rgba, &m, GST_MAP_READ);
      maxd = compare (av, m.data, n_pix, cases[ci].alpha, &n_diff);
      printf ("%s snappy=%u (type 0x%02x, %" G_GSIZE_FORMAT " bytes): "
          "libavcodec %s, max |diff| %d, %" G_GSIZE_FORMAT " of %"
          G_GSIZE_FORMAT " values differ\n", cases[ci].fourcc, sn,
          ({
            GstMapInfo hm;
            guint8 t;
            gst_buffer_map (hap, &hm, GST_MAP_READ);
            t = hm.data[3];
            gst_buffer_unmap (hap, &hm);
            t;
          }), gst_buffer_get_size (hap), pix_fmt, maxd, n_diff,
          n_pix * (cases[ci].alpha ? 4 : 3));
      /* dxtdec rounds as FFmpeg does: exact equality */
      CHECK (maxd == 0, "%s: libavcodec and dxtdec differ by %d in %"
          G_GSIZE_FORMAT " values", cases[ci].fourcc, maxd, n_diff);

      /* 2. into a .mov, and back through the ffmpeg tools */
      {
        gchar *movf = g_build_filename (tmp, "x.mov", NULL);
        gchar *copyf = g_build_filename (tmp, "copy.bin", NULL);
        gchar *rawf = g_build_filename (tmp, "x.rgba", NULL);
        GString *all = g_string_new (NULL);
        GstMapInfo hm;
        gchar *out, *expect, *data = NULL;
        gsize len = 0;
        gint st, i;

        gst_buffer_map (hap, &hm, GST_MAP_READ);
        for (i = 0; i < N_FRAMES; i++)
          g_string_append_len (all, (const gchar *) hm.data, hm.size);
        gst_buffer_unmap (hap, &hm);
        CHECK (write_mov (hap, N_FRAMES, w, h, cases[ci].fourcc, movf),
            "hapmovmux ! filesink did not reach EOS");
        {
          const gchar *a[] = { ffprobe, "-v", "error", "-count_frames",
            "-select_streams", "v:0", "-show_entries",
            "stream=codec_name,codec_tag_string,nb_read_frames", "-of",
            "csv=p=0", movf, NULL
          };
          out = g_strstrip (run_cmd (a, &st));
          expect = g_strdup_printf ("hap,%s,%d", cases[ci].fourcc, N_FRAMES);
          printf ("  ffprobe: %s\n", out);
          CHECK (st == 0 && g_str_equal (out, expect),
              "ffprobe said '%s', expected '%s'", out, expect);
          g_free (out);
          g_free (expect);
        }
        {
          const gchar *a[] = { ffmpeg, "-v", "error", "-y", "-i", movf,
            "-map", "0:v", "-c", "copy", "-f", "data", copyf, NULL
          };
          g_free (run_cmd (a, &st));
          CHECK (st == 0 && g_file_get_contents (copyf, &data, &len, NULL) &&
              len == all->len && memcmp (data, all->str, len) == 0,
              "ffmpeg -c copy did not give our frames back");
          g_free (data);
          data = NULL;
        }
        {
          const gchar *a[] = { ffmpeg, "-v", "error", "-y", "-i", movf,
            "-f", "rawvideo", "-pix_fmt", "rgba", rawf, NULL
          };
          g_free (run_cmd (a, &st));
          CHECK (st == 0 && g_file_get_contents (rawf, &data, &len, NULL) &&
              len == n_pix * 4 * N_FRAMES, "ffmpeg -f rawvideo failed");
          if (data && len == n_pix * 4 * N_FRAMES) {
            for (i = 0; i < N_FRAMES; i++) {
              gsize nd;
              CHECK (compare ((guint8 *) data + n_pix * 4 * i, av, n_pix,
                      cases[ci].alpha, &nd) == 0,
                  "ffmpeg CLI frame %d differs from libavcodec", i);
              CHECK (compare ((guint8 *) data + n_pix * 4 * i, m.data, n_pix,
                      cases[ci].alpha, &nd) == 0,
                  "ffmpeg CLI frame %d differs from dxtdec", i);
            }
            printf ("  mov: ffmpeg -c copy identical, ffmpeg rawvideo = "
                "libavcodec = dxtdec\n");
          }
          g_free (data);
        }
        g_string_free (all, TRUE);
        g_unlink (movf);
        g_unlink (copyf);
        g_unlink (rawf);
        g_free (movf);
        g_free (copyf);
        g_free (rawf);
      }
      gst_buffer_unmap (rgba, &m);
      g_free (av);
      gst_buffer_unref (hap);
      gst_buffer_unref (rgba);
    }
  gst_buffer_unref (img);
  g_rmdir (tmp);
  g_free (tmp);
  printf ("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
#endif
