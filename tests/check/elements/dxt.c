/* dxtenc / dxtdec (plugins/dxt), backend auto (the CPU path, the GPU path
 * where a CUDA device is found): every input format x every output (DXT1 /
 * DXT5 / YCoCg-DXT5, raw and HAP, Snappy on / off) equals the kernels'
 * dxt_encode_frame byte for byte; round-trip PSNR; caps refusal; latency;
 * corrupt input dropped and counted; state cycles. Also the CPU encoder's
 * own shortcuts against the GS_HD code the GPU runs (solid-block table, row
 * conversion of the input), on every CPU path, and, with a CUDA device only,
 * backend=gpu against backend=cpu, encoding and decoding. Scheduled mode
 * (cycle > 0) against unscheduled, byte for byte, and its EOS drain, flush,
 * stop with frames in flight, in-flight bound, leaks and latency. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <math.h>
#include <string.h>

#include <dxt/dxt.h>
#include <dxt/dxt_block.h>
#include "hap.h"
#include "element_backend.h"

static const struct
{
  const gchar *name;
  DxtFormat dxt;
} in_formats[] = {
  {"RGBA", DXT_FMT_RGBA}, {"BGRA", DXT_FMT_BGRA}, {"RGBx", DXT_FMT_RGBX},
  {"BGRx", DXT_FMT_BGRX}, {"UYVY", DXT_FMT_UYVY}, {"YUY2", DXT_FMT_YUY2},
  {"I420", DXT_FMT_I420}, {"NV12", DXT_FMT_NV12},
};

static const gchar *codec_nick[] = { "dxt1", "dxt5", "ycocg-dxt5" };
static const gchar *dxt_caps_fmt[] = { "DXT1", "DXT5", "YCoCg-DXT5" };
static const gchar *hap_caps_fmt[] = { "Hap1", "Hap5", "HapY" };
static const guint8 hap_tex[] = { 0x0B, 0x0E, 0x0F };

/* Smooth content with a noisy band: compressible by Snappy, yet not flat. */
static GstBuffer *
make_input (const GstVideoInfo * info, guint seed)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info->size, NULL);
  GstMapInfo map;
  GRand *rand = g_rand_new_with_seed (seed);
  gsize i;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (i = 0; i < map.size; i++) {
    guint row = i / 256;
    map.data[i] = (row % 7 == 3) ? g_rand_int (rand) & 0xFF :
        (guint8) (((i / 64) * 13 + seed) & 0xFF);
  }
  gst_buffer_unmap (buf, &map);
  g_rand_free (rand);
  return buf;
}

static guint8 *
reference_encode (const GstVideoInfo * info, GstBuffer * buf, DxtFormat fmt,
    DxtCodec codec, DxtQuality q, gsize * size)
{
  GstVideoFrame vf;
  DxtImage img;
  guint i;
  guint8 *out;

  memset (&img, 0, sizeof (img));
  fail_unless (gst_video_frame_map (&vf, info, buf, GST_MAP_READ));
  for (i = 0; i < GST_VIDEO_FRAME_N_PLANES (&vf); i++) {
    img.plane[i] = GST_VIDEO_FRAME_PLANE_DATA (&vf, i);
    img.stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&vf, i);
  }
  img.width = info->width;
  img.height = info->height;
  img.format = fmt;
  *size = dxt_frame_bytes (codec, info->width, info->height);
  out = g_malloc (*size);
  fail_unless_equals_int (dxt_encode_frame (&img, codec, q, out), 0);
  gst_video_frame_unmap (&vf);
  return out;
}

/* The chunk compressor table of a chunked (0xC?) HAP frame: its length,
 * and *table pointing at it. 0 when the frame is not chunked. */
static gsize
hap_chunk_table (const guint8 * frame, gsize len, const guint8 ** table)
{
  GsHapInfo hi;
  const guint8 *p;
  gsize instr_len, pos;

  if (gs_hap_peek (frame, len, &hi) != GS_HAP_OK ||
      hi.compressor != GS_HAP_COMP_COMPLEX)
    return 0;
  /* our instructions and their tables have 4-byte headers */
  p = frame + hi.header_len;
  fail_unless_equals_int (p[3], 0x01);
  instr_len = p[0] | (p[1] << 8) | (p[2] << 16);
  for (pos = 4; pos < 4 + instr_len;) {
    gsize sl = p[pos] | (p[pos + 1] << 8) | (p[pos + 2] << 16);

    if (p[pos + 3] == 0x02) {
      *table = p + pos + 4;
      return sl;
    }
    pos += 4 + sl;
  }
  fail ("no chunk compressor table");
  return 0;
}

/* One frame through dxtenc (chunks: its property, 0 = by size); checks caps
 * and bytes against the kernels, and the HAP frame's chunks. */
static void
check_encode_chunks (guint fi, DxtCodec codec, gboolean hap, gboolean snappy,
    guint w, guint h, DxtQuality q, guint batch, guint chunks)
{
  GstVideoInfo info;
  GstHarness *hr;
  GstBuffer *in, *out;
  GstCaps *caps;
  GstStructure *s;
  GstMapInfo map;
  gchar *launch;
  guint8 *ref, *tex;
  gsize ref_size;
  gint cw = 0, ch = 0;

  gst_video_info_set_format (&info,
      gst_video_format_from_string (in_formats[fi].name), w, h);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  launch = g_strdup_printf ("dxtenc format=%s hap=%d snappy=%d quality=%s "
      "batch-blocks=%u chunks=%u", codec_nick[codec], hap, snappy,
      q == DXT_HIGH ? "high" : "fast", batch, chunks);
  hr = gst_harness_new_parse (launch);
  caps = gst_video_info_to_caps (&info);
  gst_harness_set_src_caps (hr, caps);

  in = make_input (&info, w * 31 + h + fi);
  ref = reference_encode (&info, in, in_formats[fi].dxt, codec, q, &ref_size);
  fail_unless_equals_int (gst_harness_push (hr, in), GST_FLOW_OK);
  out = gst_harness_pull (hr);
  fail_unless (out != NULL);

  caps = gst_pad_get_current_caps (hr->sinkpad);
  s = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_has_name (s, hap ? "video/x-hap" : "video/x-dxt"));
  fail_unless_equals_string (gst_structure_get_string (s, "format"),
      hap ? hap_caps_fmt[codec] : dxt_caps_fmt[codec]);
  fail_unless (gst_structure_get_int (s, "width", &cw) && cw == (gint) w);
  fail_unless (gst_structure_get_int (s, "height", &ch) && ch == (gint) h);
  gst_caps_unref (caps);

  gst_buffer_map (out, &map, GST_MAP_READ);
  if (!hap) {
    fail_unless_equals_int (map.size, ref_size);
    fail_unless (memcmp (map.data, ref, ref_size) == 0,
        "%s -> %s %ux%u differs from dxt_encode_frame", in_formats[fi].name,
        codec_nick[codec], w, h);
  } else {
    GsHapInfo hi;
    gsize n_blocks = ref_size / dxt_block_bytes (codec);
    /* the element's rule: one chunk per 512 KiB of texture, rounded */
    gsize n_chunks = chunks ? chunks :
        MIN (64, MAX (1, (ref_size + 256 * 1024) / (512 * 1024)));
    const guint8 *table = NULL;
    gsize i;

    n_chunks = MIN (n_chunks, n_blocks);
    fail_unless_equals_int (gs_hap_peek (map.data, map.size, &hi), GS_HAP_OK);
    fail_unless_equals_int (hi.header_len + hi.section_len, map.size);
    fail_unless_equals_int (hi.tex_format, hap_tex[codec]);
    if (n_chunks > 1) {
      /* chunked: one compressor byte a chunk, Snappy where it shrinks
       * (every chunk of make_input () at these sizes), stored otherwise */
      fail_unless_equals_int (hi.compressor, GS_HAP_COMP_COMPLEX);
      fail_unless_equals_int (hap_chunk_table (map.data, map.size, &table),
          n_chunks);
      for (i = 0; i < n_chunks; i++)
        if (!snappy || ref_size / n_chunks >= 4096)
          fail_unless_equals_int (table[i], snappy ? 0x0B : 0x0A);
    } else if (!snappy) {
      fail_unless_equals_int (hi.compressor, GS_HAP_COMP_NONE);
    } else if (w * h >= 4096) {
      /* 64x64 and larger frames of make_input () compress */
      fail_unless_equals_int (hi.compressor, GS_HAP_COMP_SNAPPY);
    }
    tex = g_malloc (ref_size);
    fail_unless_equals_int (gs_hap_decode (map.data, map.size, tex, ref_size),
        GS_HAP_OK);
    fail_unless (memcmp (tex, ref, ref_size) == 0,
        "%s -> HAP %s %ux%u differs from dxt_encode_frame",
        in_formats[fi].name, codec_nick[codec], w, h);
    g_free (tex);
  }
  gst_buffer_unmap (out, &map);
  fail_unless (!GST_BUFFER_FLAG_IS_SET (out, GST_BUFFER_FLAG_DELTA_UNIT));

  gst_buffer_unref (out);
  g_free (ref);
  g_free (launch);
  gst_harness_teardown (hr);
}

static void
check_encode (guint fi, DxtCodec codec, gboolean hap, gboolean snappy,
    guint w, guint h, DxtQuality q, guint batch)
{
  check_encode_chunks (fi, codec, hap, snappy, w, h, q, batch, 0);
}

GST_START_TEST (test_encode_matrix)
{
  static const guint sizes[][2] = { {1, 1}, {5, 3}, {64, 64}, {70, 37} };
  guint fi, c, o, si;

  for (fi = 0; fi < G_N_ELEMENTS (in_formats); fi++)
    for (c = 0; c < 3; c++)
      for (o = 0; o < 3; o++)
        for (si = 0; si < G_N_ELEMENTS (sizes); si++)
          check_encode (fi, c, o > 0, o == 2, sizes[si][0], sizes[si][1],
              DXT_FAST, 2880);
}

GST_END_TEST;

GST_START_TEST (test_encode_full_hd)
{
  guint fi;

  /* 1918x1080: a width that is not a multiple of 4, slices of the paper's
   * 2880 blocks (6 rows of 480 blocks) */
  for (fi = 0; fi < G_N_ELEMENTS (in_formats); fi++)
    check_encode (fi, DXT_BC1, FALSE, FALSE, 1918, 1080, DXT_FAST, 2880);
  check_encode (4, DXT_YCOCG, TRUE, TRUE, 1918, 1080, DXT_FAST, 5760);
  check_encode (0, DXT_BC3, TRUE, FALSE, 1918, 1080, DXT_FAST, 0);
}

GST_END_TEST;

/* HAP chunks: by size (1918x1080 BC1 is 2 chunks, YCoCg 4), as set, one
 * section with chunks=1, never more chunks than blocks; every frame must
 * decode to the kernels' block stream (check_encode_chunks) */
GST_START_TEST (test_hap_chunks)
{
  check_encode_chunks (0, DXT_BC1, TRUE, TRUE, 1918, 1080, DXT_FAST, 0, 1);
  check_encode_chunks (0, DXT_BC1, TRUE, TRUE, 1918, 1080, DXT_FAST, 0, 0);
  check_encode_chunks (0, DXT_YCOCG, TRUE, FALSE, 1918, 1080, DXT_FAST, 0,
      0);
  check_encode_chunks (4, DXT_BC1, TRUE, FALSE, 1918, 1080, DXT_FAST, 2880,
      7);
  check_encode_chunks (0, DXT_BC3, TRUE, TRUE, 1280, 720, DXT_FAST, 0, 64);
  check_encode_chunks (0, DXT_BC3, TRUE, TRUE, 70, 37, DXT_FAST, 0, 64);
  check_encode_chunks (0, DXT_BC1, TRUE, FALSE, 5, 3, DXT_FAST, 0, 8);
}

GST_END_TEST;

GST_START_TEST (test_encode_quality_and_batch)
{
  static const guint batches[] = { 0, 1, 17, 2880, 1000000 };
  guint b, c;

  for (c = 0; c < 3; c++)
    check_encode (0, c, TRUE, TRUE, 133, 75, DXT_HIGH, 2880);
  for (b = 0; b < G_N_ELEMENTS (batches); b++)
    check_encode (4, DXT_BC1, FALSE, FALSE, 130, 66, DXT_FAST, batches[b]);
}

GST_END_TEST;

/* dxtenc ! dxtdec on a smooth RGBA image: PSNR against the input. */
static gdouble
roundtrip_psnr (const gchar * codec, gboolean hap, gboolean snappy,
    const gchar * out_fmt)
{
  const guint w = 96, h = 64;
  GstHarness *hr;
  GstBuffer *in, *out;
  GstMapInfo mi, mo;
  gchar *launch;
  gdouble se = 0;
  guint x, y, c;

  launch = g_strdup_printf ("dxtenc format=%s hap=%d snappy=%d ! dxtdec",
      codec, hap, snappy);
  hr = gst_harness_new_parse (launch);
  g_free (launch);
  /* sink caps first: the decoder picks its output format at the caps event */
  launch = g_strdup_printf ("video/x-raw,format=%s", out_fmt);
  gst_harness_set_sink_caps_str (hr, launch);
  g_free (launch);
  gst_harness_set_src_caps_str (hr, "video/x-raw,format=RGBA,width=96,"
      "height=64,framerate=30/1");

  in = gst_buffer_new_allocate (NULL, w * h * 4, NULL);
  gst_buffer_map (in, &mi, GST_MAP_WRITE);
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++) {
      guint8 *p = mi.data + (y * w + x) * 4;
      p[0] = x * 255 / w;
      p[1] = y * 255 / h;
      p[2] = (x + y) * 255 / (w + h);
      p[3] = 255;
    }
  gst_buffer_unmap (in, &mi);
  fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
      GST_FLOW_OK);
  out = gst_harness_pull (hr);
  fail_unless (out != NULL);
  gst_buffer_map (in, &mi, GST_MAP_READ);
  gst_buffer_map (out, &mo, GST_MAP_READ);
  fail_unless_equals_int (mo.size, w * h * 4);
  for (x = 0; x < w * h; x++)
    for (c = 0; c < 3; c++) {
      guint oc = g_str_equal (out_fmt, "BGRA") ? 2 - c : c;
      gdouble d = (gdouble) mi.data[x * 4 + c] - mo.data[x * 4 + oc];
      se += d * d;
    }
  gst_buffer_unmap (in, &mi);
  gst_buffer_unmap (out, &mo);
  gst_buffer_unref (in);
  gst_buffer_unref (out);
  gst_harness_teardown (hr);
  se /= w * h * 3;
  return se == 0 ? 99.0 : 10.0 * log10 (255.0 * 255.0 / se);
}

GST_START_TEST (test_roundtrip_psnr)
{
  guint c;

  for (c = 0; c < 3; c++) {
    gdouble p1 = roundtrip_psnr (codec_nick[c], FALSE, FALSE, "RGBA");
    gdouble p2 = roundtrip_psnr (codec_nick[c], TRUE, TRUE, "RGBA");
    gdouble p3 = roundtrip_psnr (codec_nick[c], TRUE, FALSE, "BGRA");

    GST_INFO ("%s: PSNR %.2f dB", codec_nick[c], p1);
    fail_unless (p1 > 35.0, "%s PSNR %.2f", codec_nick[c], p1);
    fail_unless (p1 == p2 && p1 == p3, "%s PSNR %.3f %.3f %.3f",
        codec_nick[c], p1, p2, p3);
  }
}

GST_END_TEST;

GST_START_TEST (test_caps_refused)
{
  GstHarness *hr;
  GstBuffer *buf;

  /* an input format the kernels do not take */
  hr = gst_harness_new ("dxtenc");
  gst_harness_set_src_caps_str (hr, "video/x-raw,format=GRAY8,width=16,"
      "height=16,framerate=30/1");
  buf = gst_buffer_new_allocate (NULL, 256, NULL);
  fail_unless_equals_int (gst_harness_push (hr, buf), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown (hr);

  /* downstream wants HAP, the element is set to raw DXT */
  hr = gst_harness_new_parse ("dxtenc hap=false");
  gst_harness_set_sink_caps_str (hr, "video/x-hap");
  gst_harness_set_src_caps_str (hr, "video/x-raw,format=RGBA,width=16,"
      "height=16,framerate=30/1");
  buf = gst_buffer_new_allocate (NULL, 16 * 16 * 4, NULL);
  fail_unless_equals_int (gst_harness_push (hr, buf), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown (hr);

  /* downstream wants DXT5, the element is set to DXT1 */
  hr = gst_harness_new_parse ("dxtenc format=dxt1");
  gst_harness_set_sink_caps_str (hr, "video/x-dxt,format=DXT5");
  gst_harness_set_src_caps_str (hr, "video/x-raw,format=RGBA,width=16,"
      "height=16,framerate=30/1");
  buf = gst_buffer_new_allocate (NULL, 16 * 16 * 4, NULL);
  fail_unless_equals_int (gst_harness_push (hr, buf), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown (hr);
}

GST_END_TEST;

GST_START_TEST (test_latency)
{
  GstHarness *hr = gst_harness_new ("dxtenc");
  GstBuffer *out;

  gst_harness_set_src_caps_str (hr, "video/x-raw,format=UYVY,width=16,"
      "height=8,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (hr,
          gst_buffer_new_allocate (NULL, 16 * 8 * 2, NULL)), GST_FLOW_OK);
  out = gst_harness_pull (hr);
  gst_buffer_unref (out);
  fail_unless_equals_uint64 (gst_harness_query_latency (hr), 0);
  gst_harness_teardown (hr);
}

GST_END_TEST;

/* Encoded HAP / DXT frame of a 32x16 image, for the decoder tests. */
static GstBuffer *
encoded_frame (const gchar * launch, const gchar * caps_fmt)
{
  GstHarness *hr = gst_harness_new_parse (launch);
  GstVideoInfo info;
  GstBuffer *out;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, 32, 16);
  gst_harness_set_src_caps_str (hr, "video/x-raw,format=RGBA,width=32,"
      "height=16,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (hr, make_input (&info, 7)),
      GST_FLOW_OK);
  out = gst_harness_pull (hr);
  gst_harness_teardown (hr);
  return out;
}

static guint64
dropped_of (GstElement * dec)
{
  GstStructure *s;
  guint64 v = 0;

  g_object_get (dec, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, "frames-dropped", &v));
  gst_structure_free (s);
  return v;
}

static void
check_corrupt (const gchar * enc_launch, const gchar * dec_caps)
{
  GstBuffer *good = encoded_frame (enc_launch, NULL);
  GstHarness *hr = gst_harness_new ("dxtdec");
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GstBuffer *out;
  gsize size = gst_buffer_get_size (good);
  guint64 dropped = 0, n_warn = 0;

  gst_element_set_bus (hr->element, bus);
  gst_harness_set_src_caps_str (hr, dec_caps);

  /* a good frame decodes */
  fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (good)),
      GST_FLOW_OK);
  out = gst_harness_pull (hr);
  fail_unless_equals_int (gst_buffer_get_size (out), 32 * 16 * 4);
  gst_buffer_unref (out);

  /* truncations: dropped, counted, warned, never decoded */
  {
    static const gsize cuts[] = { 0, 1, 3, 4, 7, 8, 100 };
    guint i;

    for (i = 0; i < G_N_ELEMENTS (cuts); i++) {
      GstBuffer *b;

      if (cuts[i] >= size)
        continue;
      b = gst_buffer_copy_region (good, GST_BUFFER_COPY_ALL, 0,
          size - cuts[i] - 1);
      fail_unless_equals_int (gst_harness_push (hr, b), GST_FLOW_OK);
      dropped++;
    }
  }
  fail_unless_equals_int (gst_harness_buffers_in_queue (hr), 0);
  fail_unless_equals_uint64 (dropped_of (hr->element), dropped);
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING))) {
    n_warn++;
    gst_message_unref (msg);
  }
  fail_unless_equals_uint64 (n_warn, dropped);

  /* and the stream goes on */
  fail_unless_equals_int (gst_harness_push (hr, good), GST_FLOW_OK);
  out = gst_harness_pull (hr);
  gst_buffer_unref (out);

  gst_element_set_bus (hr->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hr);
}

GST_START_TEST (test_decoder_corrupt)
{
  check_corrupt ("dxtenc format=dxt1",
      "video/x-dxt,format=DXT1,width=32,height=16,framerate=30/1");
  check_corrupt ("dxtenc format=dxt5 hap=true",
      "video/x-hap,format=Hap5,width=32,height=16,framerate=30/1");
  check_corrupt ("dxtenc format=ycocg-dxt5 hap=true snappy=true",
      "video/x-hap,format=HapY,width=32,height=16,framerate=30/1");
}

GST_END_TEST;

/* Random mutations of valid HAP frames through the element: never a crash,
 * every frame either decoded or dropped. */
GST_START_TEST (test_decoder_fuzz)
{
  GstBuffer *good = encoded_frame ("dxtenc format=ycocg-dxt5 hap=true "
      "snappy=true", NULL);
  GstHarness *hr = gst_harness_new ("dxtdec");
  GRand *rand = g_rand_new_with_seed (3);
  GstMapInfo map;
  guint i, n_out = 0;
  guint64 dropped;

  gst_harness_set_src_caps_str (hr,
      "video/x-hap,format=HapY,width=32,height=16,framerate=30/1");
  gst_buffer_map (good, &map, GST_MAP_READ);
  for (i = 0; i < 2000; i++) {
    gsize len = g_rand_int_range (rand, 0, map.size + 1);
    guint8 *d = g_memdup2 (map.data, map.size);
    guint k, nflip = g_rand_int_range (rand, 0, 4);
    GstBuffer *out;

    for (k = 0; k < nflip; k++)
      d[g_rand_int_range (rand, 0, map.size)] = g_rand_int (rand);
    if (len == 0)
      len = 1;
    fail_unless_equals_int (gst_harness_push (hr,
            gst_buffer_new_wrapped (d, len)), GST_FLOW_OK);
    while ((out = gst_harness_try_pull (hr))) {
      n_out++;
      gst_buffer_unref (out);
    }
  }
  gst_buffer_unmap (good, &map);
  dropped = dropped_of (hr->element);
  fail_unless_equals_uint64 (dropped + n_out, 2000);
  fail_unless (dropped > 0);
  g_rand_free (rand);
  gst_buffer_unref (good);
  gst_harness_teardown (hr);
}

GST_END_TEST;

GST_START_TEST (test_state_cycles)
{
  GstElement *pipe;
  GstBus *bus;
  GstMessage *msg;
  guint i;

  pipe = gst_parse_launch ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=NV12,width=66,height=34 ! "
      "dxtenc format=ycocg-dxt5 hap=true snappy=true ! dxtdec ! fakesink",
      NULL);
  fail_unless (pipe != NULL);
  bus = gst_element_get_bus (pipe);
  for (i = 0; i < 4; i++) {
    fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
    gst_message_unref (msg);
    fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* The host's solid-colour table is the device's search, entry for entry,
 * and the one-pixel try of dxt_bc1_solid equals the 16-pixel dxt_bc1_try. */
GST_START_TEST (test_solid_blocks)
{
  GRand *rand = g_rand_new_with_seed (7);
  guint8 px[64];
  gint v, bits, i, n;

  for (bits = 5; bits <= 6; bits++)
    for (v = 0; v < 256; v++) {
      gint a0, a1, b0, b1;

      dxt_solid_pair (v, bits, &a0, &a1);
      dxt_solid_pair_search (v, bits, &b0, &b1);
      fail_unless (a0 == b0 && a1 == b1, "solid table, %d bits, v %d", bits, v);
    }
  for (n = 0; n < 20000; n++) {
    DxtBc1Cand a, b;
    gint q0[3], q1[3];
    guint32 c0, c1;

    for (i = 0; i < 3; i++)
      px[i] = n < 256 ? (guint) n : g_rand_int (rand) & 0xFF;
    for (i = 4; i < 64; i++)
      px[i] = px[i & 3];
    a.c0 = a.c1 = a.idx = b.c0 = b.c1 = b.idx = 0;
    a.err = b.err = 0x7fffffff;
    dxt_bc1_solid (px, &a);
    for (i = 0; i < 3; i++)
      dxt_solid_pair_search (px[i], i == 1 ? 6 : 5, &q0[i], &q1[i]);
    c0 = ((guint32) q0[0] << 11) | ((guint32) q0[1] << 5) | (guint32) q0[2];
    c1 = ((guint32) q1[0] << 11) | ((guint32) q1[1] << 5) | (guint32) q1[2];
    dxt_bc1_try (px, c0, c1, &b);
    fail_unless (a.c0 == b.c0 && a.c1 == b.c1 && a.idx == b.idx &&
        a.err == b.err, "solid block %u %u %u", px[0], px[1], px[2]);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* dxt_encode_frame (rows converted to RGBA blocks, SIMD where there is a
 * path) = dxt_load_block + dxt_encode_block_hd per block (the GPU kernel's
 * steps), every input format, odd sizes, every CPU path. */
GST_START_TEST (test_cpu_loader)
{
  static const guint sizes[][2] = { {1, 1}, {7, 5}, {37, 9}, {259, 6} };
  static const DxtCpuPath paths[] = { DXT_CPU_SCALAR, DXT_CPU_SSE41,
    DXT_CPU_AVX2
  };
  GRand *rand = g_rand_new_with_seed (11);
  guint si, f, c, p, bx, by;

  for (si = 0; si < G_N_ELEMENTS (sizes); si++)
    for (f = 0; f < DXT_FMT_COUNT; f++) {
      const guint w = sizes[si][0], h = sizes[si][1], cw = (w + 1) / 2;
      guint8 *pl[3];
      DxtImage img;

      memset (&img, 0, sizeof (img));
      img.width = w;
      img.height = h;
      img.format = f;
      /* strides with slack; planes random bytes (full YUV range: clamps) */
      img.stride[0] = (f <= DXT_FMT_BGRX ? 4 * w : f <= DXT_FMT_YUY2 ?
          4 * cw : w) + 3;
      img.stride[1] = (f == DXT_FMT_NV12 ? 2 * cw : cw) + 5;
      img.stride[2] = cw + 1;
      for (p = 0; p < 3; p++) {
        gsize sz = (gsize) img.stride[p] * h, i;

        pl[p] = g_malloc (sz);
        for (i = 0; i < sz; i++)
          pl[p][i] = g_rand_int (rand) & 0xFF;
        img.plane[p] = pl[p];
      }
      for (c = 0; c < 3; c++) {
        gsize fb = dxt_frame_bytes (c, w, h);
        guint32 bb = dxt_block_bytes (c);
        guint8 *ref = g_malloc (fb), *out = g_malloc (fb);

        for (by = 0; by < dxt_blocks_y (h); by++)
          for (bx = 0; bx < dxt_blocks_x (w); bx++) {
            guint8 px[64];

            dxt_load_block (&img, bx, by, px);
            dxt_encode_block_hd (c, DXT_FAST, px,
                ref + ((gsize) by * dxt_blocks_x (w) + bx) * bb);
          }
        for (p = 0; p < G_N_ELEMENTS (paths); p++) {
          if (dxt_set_cpu_path (paths[p]) != paths[p])
            continue;
          fail_unless_equals_int (dxt_encode_frame (&img, c, DXT_FAST, out), 0);
          fail_unless (memcmp (out, ref, fb) == 0, "%s %s %ux%u path %s",
              in_formats[f].name, codec_nick[c], w, h,
              dxt_cpu_path_name (paths[p]));
        }
        g_free (ref);
        g_free (out);
      }
      for (p = 0; p < 3; p++)
        g_free (pl[p]);
    }
  dxt_set_cpu_path (DXT_CPU_AUTO);
  g_rand_free (rand);
}

GST_END_TEST;

/* n frames through "dxtenc backend=<backend> <opts>"; the outputs, and how
 * many frames the element says it coded on the GPU. */
static void
encode_frames_after (const gchar * upstream, const gchar * backend,
    const gchar * opts, const GstVideoInfo * info, GstBuffer ** in, guint n,
    GstBuffer ** out, guint64 * gpu_frames, guint64 * device_input_frames)
{
  gchar *launch = g_strdup_printf ("%s dxtenc backend=%s %s", upstream,
      backend, opts);
  GstHarness *hr = gst_harness_new_parse (launch);
  GstElement *enc;
  GstStructure *s;
  guint i;

  gst_harness_set_src_caps (hr, gst_video_info_to_caps (info));
  for (i = 0; i < n; i++) {
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in[i])),
        GST_FLOW_OK);
    out[i] = gst_harness_pull (hr);
    fail_unless (out[i] != NULL);
  }
  enc = gst_harness_find_element (hr, "dxtenc");
  g_object_get (enc, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, "gpu-frames", gpu_frames));
  fail_unless (gst_structure_get_uint64 (s, "device-input-frames",
          device_input_frames));
  gst_structure_free (s);
  gst_object_unref (enc);
  gst_harness_teardown (hr);
  g_free (launch);
}

static void
encode_frames (const gchar * backend, const gchar * opts,
    const GstVideoInfo * info, GstBuffer ** in, guint n, GstBuffer ** out,
    guint64 * gpu_frames)
{
  guint64 device_input_frames;

  encode_frames_after ("", backend, opts, info, in, n, out, gpu_frames,
      &device_input_frames);
  fail_unless_equals_uint64 (device_input_frames, 0);
}

/* Both lists of n buffers hold the same bytes; frees them. */
static void
assert_same_outputs (GstBuffer ** a, GstBuffer ** b, guint n,
    const gchar * what)
{
  guint i;

  for (i = 0; i < n; i++) {
    GstMapInfo ma, mb;

    gst_buffer_map (a[i], &ma, GST_MAP_READ);
    gst_buffer_map (b[i], &mb, GST_MAP_READ);
    fail_unless_equals_int (ma.size, mb.size);
    fail_unless (memcmp (ma.data, mb.data, mb.size) == 0,
        "%s, frame %u: differs from backend=cpu", what, i);
    gst_buffer_unmap (a[i], &ma);
    gst_buffer_unmap (b[i], &mb);
    gst_buffer_unref (a[i]);
    gst_buffer_unref (b[i]);
  }
}

/* The same frames through backend=gpu (or hybrid) and backend=cpu: the same
 * bytes, and every GPU frame really coded on the GPU (no fallback). */
static void
check_gpu_cpu (const gchar * backend, guint fi, guint w, guint h,
    const gchar * opts)
{
  GstVideoInfo info;
  GstBuffer *in[3], *og[3], *oc[3];
  guint64 gpu_g = 0, gpu_c = 0;
  gchar *what;
  guint i;

  gst_video_info_set_format (&info,
      gst_video_format_from_string (in_formats[fi].name), w, h);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  /* several frames: the staging buffers and streams are reused */
  for (i = 0; i < G_N_ELEMENTS (in); i++)
    in[i] = make_input (&info, w * 7 + h + fi * 3 + i);
  encode_frames (backend, opts, &info, in, G_N_ELEMENTS (in), og, &gpu_g);
  encode_frames ("cpu", opts, &info, in, G_N_ELEMENTS (in), oc, &gpu_c);
  fail_unless_equals_uint64 (gpu_g, G_N_ELEMENTS (in));
  fail_unless_equals_uint64 (gpu_c, 0);
  what = g_strdup_printf ("%s %ux%u %s backend=%s", in_formats[fi].name, w,
      h, opts, backend);
  assert_same_outputs (og, oc, G_N_ELEMENTS (in), what);
  g_free (what);
  for (i = 0; i < G_N_ELEMENTS (in); i++)
    gst_buffer_unref (in[i]);
}

/* Only where a CUDA device is found; skipped (logged) elsewhere. */
GST_START_TEST (test_gpu_matches_cpu)
{
  static const guint sizes[][2] = { {1, 1}, {5, 3}, {70, 37}, {1918, 1080} };
  static const guint batches[] = { 0, 1, 17, 1000000 };
  guint fi, c, si, b;
  gchar *opts;

  if (!element_gpu_usable ("dxtenc")) {
    GST_INFO ("no CUDA device: backend=gpu test skipped");
    g_print ("no CUDA device: backend=gpu test skipped\n");
    return;
  }
  for (fi = 0; fi < G_N_ELEMENTS (in_formats); fi++)
    for (c = 0; c < 3; c++)
      for (si = 0; si < G_N_ELEMENTS (sizes); si++) {
        opts = g_strdup_printf ("format=%s batch-blocks=2880", codec_nick[c]);
        check_gpu_cpu ("gpu", fi, sizes[si][0], sizes[si][1], opts);
        g_free (opts);
      }
  /* slice sizes: one block row, rows of a partial slice, one slice */
  for (b = 0; b < G_N_ELEMENTS (batches); b++)
    for (fi = 4; fi < G_N_ELEMENTS (in_formats); fi++) {
      opts = g_strdup_printf ("format=dxt1 batch-blocks=%u", batches[b]);
      check_gpu_cpu ("gpu", fi, 130, 66, opts);
      g_free (opts);
    }
  for (c = 0; c < 3; c++) {
    opts = g_strdup_printf ("format=%s quality=high", codec_nick[c]);
    check_gpu_cpu ("gpu", 6, 133, 75, opts);
    g_free (opts);
  }
  check_gpu_cpu ("gpu", 7, 1918, 1080, "format=ycocg-dxt5 hap=true snappy=true");
  check_gpu_cpu ("hybrid", 0, 640, 360, "format=dxt5");
  /* scheduled: the worker codes on the GPU (process_gpu), same bytes */
  check_gpu_cpu ("gpu", 4, 1918, 1080, "format=dxt1 cycle=2000000");
  check_gpu_cpu ("gpu", 7, 640, 360, "format=ycocg-dxt5 hap=true "
      "cycle=1000000");
}

GST_END_TEST;

/* cudaupload ! dxtenc: frames in GstCudaMemory are coded where they lie
 * (device-input-frames counts them: no copy to the host), into the bytes of
 * backend=cpu from system memory. Where nvcodec's cudaupload and a device
 * are found; skipped (logged) elsewhere. */
GST_START_TEST (test_cuda_memory_input)
{
  static const guint sizes[][2] = { {5, 3}, {130, 66}, {1918, 1080} };
  GstElementFactory *upload = gst_element_factory_find ("cudaupload");
  guint fi, si, c, i;

  if (!upload || !element_gpu_usable ("dxtenc")) {
    g_print ("no cudaupload or no CUDA device: CUDA memory input test "
        "skipped\n");
    gst_clear_object (&upload);
    return;
  }
  gst_object_unref (upload);
  for (fi = 0; fi < G_N_ELEMENTS (in_formats); fi++)
    for (si = 0; si < G_N_ELEMENTS (sizes); si++)
      for (c = 0; c < 3; c += 2) {
        const guint w = sizes[si][0], h = sizes[si][1];
        const gboolean packed422 = !strcmp (in_formats[fi].name, "UYVY") ||
            !strcmp (in_formats[fi].name, "YUY2");
        GstVideoInfo info;
        GstBuffer *in[3], *og[3], *oc[3];
        guint64 gpu_g, dev_g, gpu_c;
        gchar *opts = g_strdup_printf ("format=%s batch-blocks=%u",
            codec_nick[c], si == 1 ? 33 : 2880);
        gchar *what;

        /* cudaupload copies width * 2 bytes of an odd-width UYVY / YUY2
         * row: the last pixel's chroma never reaches the GPU, so those
         * frames differ from the system-memory input by design */
        if (packed422 && (w & 1)) {
          g_free (opts);
          continue;
        }
        gst_video_info_set_format (&info,
            gst_video_format_from_string (in_formats[fi].name), w, h);
        GST_VIDEO_INFO_FPS_N (&info) = 30;
        GST_VIDEO_INFO_FPS_D (&info) = 1;
        for (i = 0; i < G_N_ELEMENTS (in); i++)
          in[i] = make_input (&info, w * 3 + h + fi * 5 + i);
        encode_frames_after ("cudaupload ! "
            "video/x-raw(memory:CUDAMemory) !", "gpu", opts, &info, in,
            G_N_ELEMENTS (in), og, &gpu_g, &dev_g);
        encode_frames ("cpu", opts, &info, in, G_N_ELEMENTS (in), oc, &gpu_c);
        fail_unless_equals_uint64 (gpu_g, G_N_ELEMENTS (in));
        fail_unless_equals_uint64 (dev_g, G_N_ELEMENTS (in));
        what = g_strdup_printf ("cudaupload %s %ux%u %s", in_formats[fi].name,
            w, h, opts);
        assert_same_outputs (og, oc, G_N_ELEMENTS (in), what);
        g_free (what);
        g_free (opts);
        for (i = 0; i < G_N_ELEMENTS (in); i++)
          gst_buffer_unref (in[i]);
      }
}

GST_END_TEST;

/* A frame of random blocks drawn from a pool of 16 (every block mode: BC1
 * 3-colour, both alpha ramps, any YCoCg scale; repeats, so Snappy shrinks
 * it): the block stream in *tex, the buffer raw (hap 0) or as a HAP frame
 * (1, 2: with Snappy), and dxtdec's caps in *caps. */
static GstBuffer *
random_dxt_frame (DxtCodec codec, guint hap, guint w, guint h, guint seed,
    guint8 ** tex, gchar ** caps)
{
  static const int hap_formats[] = { GS_HAP_TEX_DXT1, GS_HAP_TEX_DXT5,
    GS_HAP_TEX_YCOCG
  };
  const gsize size = dxt_frame_bytes (codec, w, h);
  const guint32 bb = dxt_block_bytes (codec);
  GRand *rand = g_rand_new_with_seed (seed);
  guint8 pool[16][16], *frame;
  gsize i, len;
  guint j;

  for (i = 0; i < 16; i++)
    for (j = 0; j < 16; j++)
      pool[i][j] = g_rand_int (rand);
  *tex = g_malloc (size);
  for (i = 0; i < size / bb; i++)
    memcpy (*tex + i * bb, pool[g_rand_int_range (rand, 0, 16)], bb);
  g_rand_free (rand);
  *caps = g_strdup_printf ("%s,format=%s,width=%u,height=%u,framerate=30/1",
      hap ? "video/x-hap" : "video/x-dxt",
      hap ? hap_caps_fmt[codec] : dxt_caps_fmt[codec], w, h);
  if (!hap)
    return gst_buffer_new_wrapped (g_memdup2 (*tex, size), size);
  frame = g_malloc (gs_hap_max_frame_size (size, 1));
  len = gs_hap_write_frame (frame, gs_hap_max_frame_size (size, 1),
      hap_formats[codec], hap == 2, 1, *tex, size);
  fail_unless (len > 0);
  return gst_buffer_new_wrapped (frame, len);
}

/* n frames through "dxtdec backend=<backend>" to out_fmt: the outputs, and
 * how many frames the element says it decoded on the GPU and the CPU. */
static void
decode_frames (const gchar * backend, const gchar * caps,
    const gchar * out_fmt, GstBuffer ** in, guint n, GstBuffer ** out,
    guint64 * gpu_frames, guint64 * cpu_frames)
{
  gchar *launch = g_strdup_printf ("dxtdec backend=%s", backend);
  GstHarness *hr = gst_harness_new_parse (launch);
  GstElement *dec;
  GstStructure *s;
  guint i;

  g_free (launch);
  /* sink caps first: the decoder picks its output format at the caps event */
  launch = g_strdup_printf ("video/x-raw,format=%s", out_fmt);
  gst_harness_set_sink_caps_str (hr, launch);
  gst_harness_set_src_caps_str (hr, caps);
  for (i = 0; i < n; i++) {
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in[i])),
        GST_FLOW_OK);
    out[i] = gst_harness_pull (hr);
    fail_unless (out[i] != NULL);
  }
  dec = gst_harness_find_element (hr, "dxtdec");
  g_object_get (dec, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, "gpu-frames", gpu_frames));
  fail_unless (gst_structure_get_uint64 (s, "cpu-frames", cpu_frames));
  gst_structure_free (s);
  gst_object_unref (dec);
  gst_harness_teardown (hr);
  g_free (launch);
}

/* The same frames through backend=cpu, which must give dxt_decode_frame's
 * pixels (swapped for BGRA), and, with gpu, through backend=<backend>,
 * which must give the same bytes with no frame fallen back to the CPU. */
static void
check_dec_gpu_cpu (gboolean gpu, const gchar * backend, DxtCodec codec,
    guint hap, guint w, guint h, const gchar * out_fmt)
{
  const gboolean bgra = g_str_equal (out_fmt, "BGRA");
  GstBuffer *in[2], *og[2], *oc[2];
  guint8 *ref[2];
  gchar *caps = NULL;
  guint64 gpu_f = 0, cpu_f = 0;
  guint i;
  gsize k;

  for (i = 0; i < G_N_ELEMENTS (in); i++) {
    guint8 *tex;

    g_free (caps);
    in[i] = random_dxt_frame (codec, hap, w, h, w * 7 + h + codec * 3 + i,
        &tex, &caps);
    ref[i] = g_malloc ((gsize) w * h * 4);
    fail_unless_equals_int (dxt_decode_frame (codec, tex, w, h, ref[i],
            4 * w), 0);
    for (k = 0; bgra && k < (gsize) w * h * 4; k += 4) {
      guint8 t = ref[i][k];
      ref[i][k] = ref[i][k + 2];
      ref[i][k + 2] = t;
    }
    g_free (tex);
  }
  decode_frames ("cpu", caps, out_fmt, in, G_N_ELEMENTS (in), oc, &gpu_f,
      &cpu_f);
  fail_unless_equals_uint64 (gpu_f, 0);
  fail_unless_equals_uint64 (cpu_f, G_N_ELEMENTS (in));
  if (gpu) {
    decode_frames (backend, caps, out_fmt, in, G_N_ELEMENTS (in), og, &gpu_f,
        &cpu_f);
    fail_unless_equals_uint64 (gpu_f, G_N_ELEMENTS (in));
    fail_unless_equals_uint64 (cpu_f, 0);
  }
  for (i = 0; i < G_N_ELEMENTS (in); i++) {
    GstMapInfo mg, mc;

    gst_buffer_map (oc[i], &mc, GST_MAP_READ);
    /* RGBA / BGRA rows are packed in GstVideoInfo's default layout */
    fail_unless_equals_int (mc.size, (gsize) w * h * 4);
    fail_unless (memcmp (mc.data, ref[i], mc.size) == 0,
        "%s hap %u %ux%u %s, frame %u: backend=cpu differs from "
        "dxt_decode_frame", dxt_caps_fmt[codec], hap, w, h, out_fmt, i);
    if (gpu) {
      gst_buffer_map (og[i], &mg, GST_MAP_READ);
      fail_unless_equals_int (mg.size, mc.size);
      fail_unless (memcmp (mg.data, mc.data, mc.size) == 0,
          "%s hap %u %ux%u %s, frame %u: backend=%s differs from "
          "backend=cpu", dxt_caps_fmt[codec], hap, w, h, out_fmt, i, backend);
      gst_buffer_unmap (og[i], &mg);
      gst_buffer_unref (og[i]);
    }
    gst_buffer_unmap (oc[i], &mc);
    gst_buffer_unref (oc[i]);
    gst_buffer_unref (in[i]);
    g_free (ref[i]);
  }
  g_free (caps);
}

/* The GPU half only where a CUDA device is found; skipped (logged)
 * elsewhere, where backend=cpu is still checked against the kernels. */
GST_START_TEST (test_gpu_decode_matches_cpu)
{
  static const guint sizes[][2] = { {1, 1}, {5, 3}, {70, 37} };
  static const gchar *out_fmts[] = { "RGBA", "BGRA" };
  const gboolean gpu = element_gpu_usable ("dxtdec");
  guint c, hap, si, o;

  if (!gpu) {
    GST_INFO ("no CUDA device: backend=gpu decode test skipped");
    g_print ("no CUDA device: backend=gpu decode test skipped\n");
  }
  for (c = 0; c < 3; c++)
    for (hap = 0; hap < 3; hap++)
      for (si = 0; si < G_N_ELEMENTS (sizes); si++)
        for (o = 0; o < G_N_ELEMENTS (out_fmts); o++)
          check_dec_gpu_cpu (gpu, "gpu", c, hap, sizes[si][0], sizes[si][1],
              out_fmts[o]);
  /* 1918x1080: a width that is not a multiple of 4, a staging buffer that
   * grows */
  for (c = 0; c < 3; c++) {
    check_dec_gpu_cpu (gpu, "gpu", c, 0, 1918, 1080, "RGBA");
    check_dec_gpu_cpu (gpu, "gpu", c, 2, 1918, 1080, "BGRA");
  }
  check_dec_gpu_cpu (gpu, "hybrid", DXT_BC3, 1, 640, 360, "BGRA");
}

GST_END_TEST;

/* ---- scheduled mode (cycle > 0) ------------------------------------------ */

#define FRAME_DURATION (GST_SECOND / 30)

static GstBuffer *
make_timed_input (const GstVideoInfo * info, guint seed, guint index)
{
  GstBuffer *buf = make_input (info, seed);

  GST_BUFFER_PTS (buf) = index * FRAME_DURATION;
  GST_BUFFER_DURATION (buf) = FRAME_DURATION;
  return buf;
}

static gint buffers_finalized;

static void
buffer_finalized (gpointer data, GstMiniObject * obj)
{
  g_atomic_int_inc (&buffers_finalized);
}

/* A copy of buf (same memory, its own GstBuffer) whose end is counted. */
static GstBuffer *
watched_copy (GstBuffer * buf)
{
  GstBuffer *copy = gst_buffer_copy (buf);

  gst_mini_object_weak_ref (GST_MINI_OBJECT (copy), buffer_finalized, NULL);
  return copy;
}

/* n frames through "dxtenc <opts>", all pushed before any is pulled, then
 * EOS: every frame must be out by the time EOS has gone through (the
 * drain), one output per input, nothing more. The outputs in out[]; the
 * element's stats in *stats. */
static void
encode_all (const gchar * opts, const GstVideoInfo * info, GstBuffer ** in,
    guint n, GstBuffer ** out, GstStructure ** stats)
{
  gchar *launch = g_strdup_printf ("dxtenc %s", opts);
  GstHarness *hr = gst_harness_new_parse (launch);
  guint i;

  gst_harness_set_src_caps (hr, gst_video_info_to_caps (info));
  for (i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in[i])),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (hr, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_received (hr), n);
  for (i = 0; i < n; i++) {
    out[i] = gst_harness_pull (hr);
    fail_unless (out[i] != NULL);
  }
  fail_unless (gst_harness_try_pull (hr) == NULL);
  if (stats) {
    GstElement *enc = gst_harness_find_element (hr, "dxtenc");

    /* stopped first: the worker counts a launch after its hand-off to the
     * forwarder, so right after EOS the last count may still be coming;
     * the stats stay until the next start */
    fail_unless_equals_int (gst_element_set_state (hr->element,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    g_object_get (enc, "stats", stats, NULL);
    gst_object_unref (enc);
  }
  gst_harness_teardown (hr);
  g_free (launch);
}

/* The outputs of the scheduled and unscheduled runs: the same bytes and
 * the same timestamps, each that of its input. */
static void
assert_same_frames (GstBuffer ** in, GstBuffer ** a, GstBuffer ** b, guint n,
    const gchar * what)
{
  guint i;

  for (i = 0; i < n; i++) {
    GstMapInfo ma, mb;

    fail_unless_equals_uint64 (GST_BUFFER_PTS (a[i]), GST_BUFFER_PTS (in[i]));
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b[i]), GST_BUFFER_PTS (in[i]));
    fail_unless_equals_uint64 (GST_BUFFER_DURATION (a[i]), FRAME_DURATION);
    fail_unless_equals_uint64 (GST_BUFFER_DURATION (b[i]), FRAME_DURATION);
    fail_unless (!GST_BUFFER_FLAG_IS_SET (b[i], GST_BUFFER_FLAG_DELTA_UNIT));
    gst_buffer_map (a[i], &ma, GST_MAP_READ);
    gst_buffer_map (b[i], &mb, GST_MAP_READ);
    fail_unless (ma.size > 0);
    fail_unless_equals_int (mb.size, ma.size);
    fail_unless (memcmp (ma.data, mb.data, ma.size) == 0,
        "%s, frame %u: scheduled differs from unscheduled", what, i);
    gst_buffer_unmap (a[i], &ma);
    gst_buffer_unmap (b[i], &mb);
  }
}

/* Every frame scheduled (coded by the worker in batches, finished by the
 * forwarder) in the bytes of the unscheduled path: RGBA, UYVY and NV12 in,
 * every codec, raw, HAP and HAP + Snappy, two sizes, several frames. */
GST_START_TEST (test_sched_matches_unscheduled)
{
  static const guint fis[] = { 0, 4, 7 };       /* RGBA, UYVY, NV12 */
  static const guint sizes[][2] = { {70, 37}, {64, 64} };
  const guint n = 6;
  guint f, c, o, si, i;

  for (f = 0; f < G_N_ELEMENTS (fis); f++)
    for (c = 0; c < 3; c++)
      for (o = 0; o < 3; o++)
        for (si = 0; si < G_N_ELEMENTS (sizes); si++) {
          const guint w = sizes[si][0], h = sizes[si][1];
          GstVideoInfo info;
          GstBuffer *in[6], *ou[6], *os[6];
          GstStructure *st_u, *st_s;
          guint64 v;
          gchar *opts, *sopts, *what;

          gst_video_info_set_format (&info,
              gst_video_format_from_string (in_formats[fis[f]].name), w, h);
          GST_VIDEO_INFO_FPS_N (&info) = 30;
          GST_VIDEO_INFO_FPS_D (&info) = 1;
          for (i = 0; i < n; i++)
            in[i] = make_timed_input (&info, w * 11 + h + f * 5 + c + i, i);
          opts = g_strdup_printf ("format=%s hap=%d snappy=%d",
              codec_nick[c], o > 0, o == 2);
          sopts = g_strdup_printf ("%s cycle=1000000", opts);
          encode_all (opts, &info, in, n, ou, &st_u);
          encode_all (sopts, &info, in, n, os, &st_s);
          what = g_strdup_printf ("%s %ux%u %s", in_formats[fis[f]].name, w,
              h, opts);
          assert_same_frames (in, ou, os, n, what);

          /* stats: every frame coded, by batches only when scheduled */
          fail_unless (gst_structure_get_uint64 (st_u, "frames", &v));
          fail_unless_equals_uint64 (v, n);
          fail_unless (gst_structure_get_uint64 (st_s, "frames", &v));
          fail_unless_equals_uint64 (v, n);
          fail_unless (gst_structure_get_uint64 (st_u, "scheduled-batches",
                  &v));
          fail_unless_equals_uint64 (v, 0);
          fail_unless (gst_structure_get_uint64 (st_u, "latency-max-us", &v));
          fail_unless_equals_uint64 (v, 0);
          fail_unless (gst_structure_get_uint64 (st_s, "scheduled-batches",
                  &v));
          fail_unless (v > 0, "%s: no scheduled batch", what);
          /* a frame waits for the next cycle: some us at least */
          fail_unless (gst_structure_get_uint64 (st_s, "latency-max-us", &v));
          fail_unless (v > 0, "%s: no scheduled latency", what);
          fail_unless (gst_structure_get_uint64 (st_s, "latency-p99-us", &v));
          fail_unless (v > 0);
          fail_unless (gst_structure_get_uint64 (st_s, "latency-misses", &v));
          gst_structure_free (st_u);
          gst_structure_free (st_s);

          for (i = 0; i < n; i++) {
            gst_buffer_unref (in[i]);
            gst_buffer_unref (ou[i]);
            gst_buffer_unref (os[i]);
          }
          g_free (what);
          g_free (sopts);
          g_free (opts);
        }
}

GST_END_TEST;

/* A long cycle and more frames than may be in flight: handle_frame waits
 * for the forwarder (which needs the stream lock it releases) and EOS
 * drains them all, in order, before it goes downstream. */
GST_START_TEST (test_sched_eos_drains)
{
  const guint n = 20;
  GstVideoInfo info;
  GstBuffer *in[20], *ou[20], *os[20];
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_UYVY, 48, 20);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  for (i = 0; i < n; i++)
    in[i] = make_timed_input (&info, 100 + i, i);
  encode_all ("format=dxt5 hap=true", &info, in, n, ou, NULL);
  encode_all ("format=dxt5 hap=true cycle=30000000", &info, in, n, os, NULL);
  assert_same_frames (in, ou, os, n, "UYVY 48x20 dxt5 hap, cycle 30 ms");
  for (i = 0; i < n; i++) {
    gst_buffer_unref (in[i]);
    gst_buffer_unref (ou[i]);
    gst_buffer_unref (os[i]);
  }
}

GST_END_TEST;

/* A flush (flush-start, flush-stop) with frames in flight: none of them
 * comes out after it, each is released, and the frames after it are coded
 * as before. */
GST_START_TEST (test_sched_flush)
{
  const guint n_pre = 4, n_post = 3;
  GstVideoInfo info;
  GstBuffer *pre[4], *post[3], *ou[3], *os[3], *out;
  GstHarness *hr;
  GstSegment seg;
  guint i, n_out = 0;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, 40, 24);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  for (i = 0; i < n_pre; i++)
    pre[i] = make_timed_input (&info, 200 + i, i);
  for (i = 0; i < n_post; i++)
    post[i] = make_timed_input (&info, 300 + i, 10 + i);
  g_atomic_int_set (&buffers_finalized, 0);

  /* 200 ms: the frames are all but certainly still in the collector */
  hr = gst_harness_new_parse ("dxtenc format=dxt1 cycle=200000000");
  gst_harness_set_src_caps (hr, gst_video_info_to_caps (&info));
  for (i = 0; i < n_pre; i++)
    fail_unless_equals_int (gst_harness_push (hr, watched_copy (pre[i])),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (hr, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (hr, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&seg, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (hr, gst_event_new_segment (&seg)));

  /* what left before the flush: whole frames, in order */
  while ((out = gst_harness_try_pull (hr))) {
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), n_out * FRAME_DURATION);
    n_out++;
    gst_buffer_unref (out);
  }
  fail_unless (n_out <= n_pre);
  /* two cycles on: the flushed frames were dropped, not pushed, and their
   * buffers (input, and output with the frame) are gone */
  g_usleep (500 * G_TIME_SPAN_MILLISECOND);
  fail_unless (gst_harness_try_pull (hr) == NULL,
      "a frame from before the flush came out after it");
  fail_unless_equals_int (g_atomic_int_get (&buffers_finalized), n_pre);

  /* and it goes on */
  for (i = 0; i < n_post; i++)
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (post[i])),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (hr, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (hr), n_post);
  for (i = 0; i < n_post; i++)
    os[i] = gst_harness_pull (hr);
  gst_harness_teardown (hr);

  encode_all ("format=dxt1", &info, post, n_post, ou, NULL);
  assert_same_frames (post, ou, os, n_post, "after a flush");
  for (i = 0; i < n_post; i++) {
    gst_buffer_unref (ou[i]);
    gst_buffer_unref (os[i]);
    gst_buffer_unref (post[i]);
  }
  for (i = 0; i < n_pre; i++)
    gst_buffer_unref (pre[i]);
}

GST_END_TEST;

static void
element_finalized (gpointer data, GObject * obj)
{
  g_atomic_int_inc ((gint *) data);
}

static gint handoffs;

static void
on_handoff (GstElement * e, GstBuffer * buf, GstPad * pad, gpointer data)
{
  g_atomic_int_inc (&handoffs);
  gst_mini_object_weak_ref (GST_MINI_OBJECT (buf), buffer_finalized, NULL);
}

/* Downstream blocked (a sink prerolling in PAUSED holds the first frame):
 * exactly bound frames wait in the element, plus the one handle_frame
 * holds, however fast the source; then going to NULL neither hangs nor
 * leaves a frame behind. */
static void
check_blocked_downstream (guint64 cycle, gint fps, gint bound)
{
  GstElement *pipe, *e;
  gint enc_gone = 0, waited;
  gchar *launch;

  g_atomic_int_set (&buffers_finalized, 0);
  g_atomic_int_set (&handoffs, 0);
  launch = g_strdup_printf ("videotestsrc ! video/x-raw,format=UYVY,"
      "width=64,height=32,framerate=%d/1 ! identity name=src "
      "signal-handoffs=true ! dxtenc name=enc cycle=%" G_GUINT64_FORMAT " ! "
      "fakesink sync=true", fps, cycle);
  pipe = gst_parse_launch (launch, NULL);
  fail_unless (pipe != NULL);
  e = gst_bin_get_by_name (GST_BIN (pipe), "src");
  g_signal_connect (e, "handoff", G_CALLBACK (on_handoff), NULL);
  gst_object_unref (e);
  e = gst_bin_get_by_name (GST_BIN (pipe), "enc");
  g_object_weak_ref (G_OBJECT (e), element_finalized, &enc_gone);
  gst_object_unref (e);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_PAUSED),
      GST_STATE_CHANGE_ASYNC);
  fail_unless_equals_int (gst_element_get_state (pipe, NULL, NULL,
          10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
  for (waited = 0; waited < 5000 && g_atomic_int_get (&handoffs) <= bound;
      waited += 10)
    g_usleep (10 * G_TIME_SPAN_MILLISECOND);
  /* and no more than that, a few cycles later */
  g_usleep (MAX (100 * G_TIME_SPAN_MILLISECOND, 3 * cycle / 1000));
  fail_unless_equals_int (g_atomic_int_get (&handoffs), bound + 1);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipe);
  fail_unless_equals_int (g_atomic_int_get (&enc_gone), 1);
  fail_unless_equals_int (g_atomic_int_get (&buffers_finalized),
      g_atomic_int_get (&handoffs));
  g_free (launch);
}

/* Going to NULL with frames in flight: no hang, every frame released.
 * First straight from the harness, then with downstream blocked, where at
 * most 8 frames wait in the element, or 3 cycles' worth at the frame rate
 * up to 64. */
GST_START_TEST (test_sched_null_in_flight)
{
  GstVideoInfo info;
  GstHarness *hr;
  GObject *enc;
  gint enc_gone = 0;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_UYVY, 64, 32);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  g_atomic_int_set (&buffers_finalized, 0);
  hr = gst_harness_new_parse ("dxtenc format=ycocg-dxt5 hap=true "
      "snappy=true cycle=500000000");
  enc = G_OBJECT (hr->element);
  g_object_weak_ref (enc, element_finalized, &enc_gone);
  gst_harness_set_src_caps (hr, gst_video_info_to_caps (&info));
  for (i = 0; i < 5; i++) {
    GstBuffer *b = make_timed_input (&info, i, i);

    fail_unless_equals_int (gst_harness_push (hr, watched_copy (b)),
        GST_FLOW_OK);
    gst_buffer_unref (b);
  }
  gst_harness_teardown (hr);
  fail_unless_equals_int (g_atomic_int_get (&enc_gone), 1);
  fail_unless_equals_int (g_atomic_int_get (&buffers_finalized), 5);

  /* 1 ms at 30 frames/s: the floor of 8 */
  check_blocked_downstream (GST_MSECOND, 30, 8);
  /* 20 ms at 400 frames/s: 24 frames in 3 cycles, and the one arriving */
  check_blocked_downstream (20 * GST_MSECOND, 400, 25);
  /* 100 ms at 1000 frames/s: 300, capped */
  check_blocked_downstream (100 * GST_MSECOND, 1000, 64);
}

GST_END_TEST;

/* The LATENCY query adds Theorem 1's 3 cycles; a cycle below 100 us is
 * refused at start with an error naming the property. */
GST_START_TEST (test_sched_latency_and_min_cycle)
{
  GstHarness *hr = gst_harness_new_parse ("dxtenc cycle=2000000");
  GstBuffer *buf;
  GstElement *e;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  guint64 cycle = 0;

  e = gst_harness_find_element (hr, "dxtenc");
  g_object_get (e, "cycle", &cycle, NULL);
  gst_object_unref (e);
  fail_unless_equals_uint64 (cycle, 2 * GST_MSECOND);
  gst_harness_set_src_caps_str (hr, "video/x-raw,format=UYVY,width=16,"
      "height=8,framerate=30/1");
  buf = gst_buffer_new_allocate (NULL, 16 * 8 * 2, NULL);
  gst_buffer_memset (buf, 0, 0x80, 16 * 8 * 2);
  fail_unless_equals_int (gst_harness_push (hr, buf), GST_FLOW_OK);
  gst_buffer_unref (gst_harness_pull (hr));
  fail_unless_equals_uint64 (gst_harness_query_latency (hr),
      3 * 2 * GST_MSECOND);
  gst_harness_teardown (hr);

  /* the least cycle starts */
  e = gst_element_factory_make ("dxtenc", NULL);
  g_object_set (e, "cycle", (guint64) 100000, NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (e);

  e = gst_element_factory_make ("dxtenc", NULL);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  g_object_set (e, "cycle", (guint64) 50000, NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless (g_error_matches (err, GST_LIBRARY_ERROR,
          GST_LIBRARY_ERROR_SETTINGS), "%s", err->message);
  fail_unless (strstr (err->message, "cycle") != NULL, "%s", err->message);
  fail_unless (strstr (err->message, "50000") != NULL, "%s", err->message);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* A frame shorter than its caps say: an error naming the frame, and no
 * output, in both modes; scheduled, the processor's warning names why and
 * the frame after it is not finished either (the stream ends with the
 * error). */
static void
check_short_frame (const gchar * launch)
{
  GstHarness *hr = gst_harness_new_parse (launch);
  GstBus *bus = gst_bus_new ();
  GstVideoInfo info;
  GstBuffer *in;
  GstMessage *msg;
  GError *err = NULL;
  gboolean scheduled = strstr (launch, "cycle") != NULL;
  GstFlowReturn ret;

  gst_element_set_bus (hr->element, bus);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_UYVY, 16, 8);
  gst_harness_set_src_caps (hr, gst_video_info_to_caps (&info));
  in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info) - 1, NULL);
  gst_buffer_memset (in, 0, 0x80, gst_buffer_get_size (in));
  ret = gst_harness_push (hr, in);
  if (scheduled) {
    /* handed to the scheduler; the next frame's finish reports it */
    fail_unless_equals_int (ret, GST_FLOW_OK);
    in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
    gst_buffer_memset (in, 0, 0x80, gst_buffer_get_size (in));
    fail_unless_equals_int (gst_harness_push (hr, in), GST_FLOW_OK);
    /* EOS drains: the error comes back through finish */
    gst_harness_push_event (hr, gst_event_new_eos ());
    msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
    fail_unless (msg != NULL, "no warning from dxt-encode");
    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (strstr (err->message, "too small") != NULL, "%s",
        err->message);
    g_clear_error (&err);
    gst_message_unref (msg);
  } else {
    fail_unless_equals_int (ret, GST_FLOW_ERROR);
  }
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "%s: no error message", launch);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, GST_STREAM_ERROR,
          GST_STREAM_ERROR_ENCODE), "%s", err->message);
  gst_message_unref (msg);
  g_clear_error (&err);
  fail_unless_equals_int (gst_harness_buffers_received (hr), 0);
  gst_element_set_bus (hr->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hr);
}

GST_START_TEST (test_short_frame_is_an_error)
{
  check_short_frame ("dxtenc format=dxt1");
  check_short_frame ("dxtenc format=dxt1 cycle=1000000 max-rate=1000000");
}

GST_END_TEST;

static Suite *
dxt_suite (void)
{
  Suite *s = suite_create ("dxt");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_encode_matrix);
  tcase_add_test (tc, test_encode_full_hd);
  tcase_add_test (tc, test_hap_chunks);
  tcase_add_test (tc, test_encode_quality_and_batch);
  tcase_add_test (tc, test_roundtrip_psnr);
  tcase_add_test (tc, test_caps_refused);
  tcase_add_test (tc, test_latency);
  tcase_add_test (tc, test_decoder_corrupt);
  tcase_add_test (tc, test_decoder_fuzz);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_solid_blocks);
  tcase_add_test (tc, test_cpu_loader);
  tcase_add_test (tc, test_gpu_matches_cpu);
  tcase_add_test (tc, test_cuda_memory_input);
  tcase_add_test (tc, test_gpu_decode_matches_cpu);
  tcase_add_test (tc, test_sched_matches_unscheduled);
  tcase_add_test (tc, test_sched_eos_drains);
  tcase_add_test (tc, test_sched_flush);
  tcase_add_test (tc, test_sched_null_in_flight);
  tcase_add_test (tc, test_sched_latency_and_min_cycle);
  tcase_add_test (tc, test_short_frame_is_an_error);
  return s;
}

GST_CHECK_MAIN (dxt);
