/* make_seeds.c: writes the seed corpora of the fuzz targets
 * (tests/fuzz/corpus/TARGET/) from the real senders: ncencoder and
 * rtpncpay, gpusrtpenc and rtpL16pay, dxtenc through the built plugins,
 * the CSTP code's encoder and cstpsink's frame packets (kernels/fountain),
 * the datagrams cstpsink sends over its S sockets,
 * the exchange between the receivers of a display wall,
 * and RTSP clients' request paths for gpustream-server. Each file is one
 * input in its target's format (the comment at the top of fuzz_TARGET.c).
 *
 *   eval "$(./run env)"; build/tests/fuzz/fuzz-make-seeds tests/fuzz/corpus
 *
 * The bytes differ from run to run where the senders draw them (ncencoder's
 * session, rtpncpay's SSRC); any run's files are a valid corpus, and the
 * test fuzz-fresh-seeds replays a fresh set through every target. */
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gst/app/gstappsink.h>

#include <gst/gpustream/gpsncpacket.h>
#include "fountain/fountain.h"
#include "fuzz.h"

static const gchar *out_dir;
static guint n_files;

/* Every buffer that reaches appsink "o" of the pipeline, as GBytes. */
static GPtrArray *
collect (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err), *sink;
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GstSample *s;

  if (!p) {
    g_printerr ("make_seeds: %s: %s\n", desc, err->message);
    exit (1);
  }
  sink = gst_bin_get_by_name (GST_BIN (p), "o");
  g_object_set (sink, "sync", FALSE, NULL);
  gst_element_set_state (p, GST_STATE_PLAYING);
  while ((s = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
    GstBuffer *b = gst_sample_get_buffer (s);
    GstMapInfo m;
    gst_buffer_map (b, &m, GST_MAP_READ);
    g_ptr_array_add (out, g_bytes_new (m.data, m.size));
    gst_buffer_unmap (b, &m);
    gst_sample_unref (s);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  if (out->len == 0) {
    g_printerr ("make_seeds: nothing came out of %s\n", desc);
    exit (1);
  }
  return out;
}

static void
put_chunk (GByteArray * a, const guint8 * prefix, gsize prefix_len,
    const guint8 * d, gsize len)
{
  guint8 l[2];
  gsize n = MIN (prefix_len + len, 0xffff);
  l[0] = (guint8) (n >> 8);
  l[1] = (guint8) n;
  g_byte_array_append (a, l, 2);
  g_byte_array_append (a, prefix, prefix_len);
  g_byte_array_append (a, d, n - prefix_len);
}

static void
write_seed (const gchar * target, const gchar * name, GByteArray * a)
{
  gchar *dir = g_build_filename (out_dir, target, NULL);
  gchar *path = g_build_filename (dir, name, NULL);
  GError *err = NULL;

  g_mkdir_with_parents (dir, 0755);
  if (!g_file_set_contents (path, (const gchar *) a->data, a->len, &err)) {
    g_printerr ("make_seeds: %s\n", err->message);
    exit (1);
  }
  g_print ("%s (%u bytes)\n", path, a->len);
  n_files++;
  g_byte_array_unref (a);
  g_free (path);
  g_free (dir);
}

/* ---- ncpacket and ncframing ---------------------------------------------- */

#define AUDIO "audiotestsrc num-buffers=%d samplesperbuffer=256 wave=%d ! " \
  "audio/x-raw,format=S16LE,rate=8000,channels=1 ! "

static void
nc_seeds (void)
{
  static const struct {
    const gchar *name, *enc;
    gboolean rtp;
  } runs[] = {
    {"systematic-rtp", "generation-size=8 block-size=128 redundancy=4 "
          "systematic=true framing=bytes", TRUE},
    {"seeded", "generation-size=8 block-size=96 redundancy=3 "
          "systematic=false coefficients=seed framing=bytes", FALSE},
    {"vector-rtp", "generation-size=16 block-size=48 redundancy=4 "
          "systematic=false coefficients=vector framing=bytes", TRUE},
    {"framed", "generation-size=8 block-size=64 redundancy=2 "
          "systematic=true framing=buffers", FALSE},
  };
  guint r;

  for (r = 0; r < G_N_ELEMENTS (runs); r++) {
    gchar *desc = g_strdup_printf (AUDIO "ncencoder %s ! %s appsink name=o",
        3, (int) r, runs[r].enc, runs[r].rtp ? "rtpncpay ! " : "");
    GPtrArray *pk = collect (desc);
    guint8 mode = runs[r].rtp ? 1 : 0;
    guint i, file = 0;
    GByteArray *a = g_byte_array_new ();

    /* files of a generation's packets or so, so that each decodes */
    for (i = 0; i < pk->len; i++) {
      gsize n;
      const guint8 *d = g_bytes_get_data (pk->pdata[i], &n);
      put_chunk (a, &mode, 1, d, n);
      if ((i + 1) % 20 == 0 || i + 1 == pk->len) {
        gchar *name = g_strdup_printf ("%s-%u", runs[r].name, file++);
        write_seed ("ncpacket", name, a);
        g_free (name);
        a = g_byte_array_new ();
      }
    }
    g_byte_array_unref (a);

    if (g_str_equal (runs[r].name, "framed")) {
      /* the decoded data of each generation from its source blocks, as
       * ncdecoder hands them to the deframer; the second file loses one */
      GByteArray *gens[2] = { g_byte_array_new (), g_byte_array_new () };
      guint8 *blocks = NULL;
      guint have = 0, gen_no = 0;
      guint32 cur = G_MAXUINT32;
      NcHeader h;
      for (i = 0; i < pk->len; i++) {
        gsize n;
        const guint8 *d = g_bytes_get_data (pk->pdata[i], &n), *coefs, *pay;
        if (nc_packet_parse (d, n, &h, &coefs, &pay) != NC_PARSE_OK ||
            !(h.flags & NC_FLAG_SOURCE))
          continue;
        if (h.generation != cur) {
          g_free (blocks);
          blocks = g_malloc0 ((gsize) h.m * h.block_size);
          cur = h.generation;
          have = 0;
        }
        memcpy (blocks + (gsize) h.seed * h.block_size, pay, h.block_size);
        if (++have == h.m) {
          put_chunk (gens[0], NULL, 0, blocks, h.data_length);
          if (gen_no++ != 2)
            put_chunk (gens[1], NULL, 0, blocks, h.data_length);
          else
            put_chunk (gens[1], NULL, 0, NULL, 0);     /* lost */
        }
      }
      g_free (blocks);
      write_seed ("ncframing", "framed-audio", gens[0]);
      write_seed ("ncframing", "framed-audio-lost", gens[1]);
    }
    g_ptr_array_unref (pk);
    g_free (desc);
  }
}

/* ---- srtp ---------------------------------------------------------------- */

static void
srtp_seeds (void)
{
  /* index into fuzz_srtp.c's policies, and the same as gpusrtpenc nicks */
  static const struct {
    guint policy;
    const gchar *cipher, *auth;
  } pols[] = {
    {0, "aes-128-icm", "hmac-sha1-80"}, {1, "aes-128-icm", "hmac-sha1-32"},
    {2, "aes-256-icm", "hmac-sha1-80"}, {4, "aes-128-gcm", "null"},
    {5, "aes-256-gcm", "null"}, {6, "null", "hmac-sha1-80"},
    {7, "aes-128-icm", "null"},
  };
  /* an RTCP sender report of SSRC 0x01020304 */
  static const guint8 sr[28] = { 0x80, 200, 0, 6, 1, 2, 3, 4, 0xe0, 0, 0, 0,
    0, 0, 0, 1, 0, 0, 0x10, 0, 0, 0, 0, 12, 0, 0, 0x0c, 0
  };
  GPtrArray *plain = collect ("audiotestsrc num-buffers=10 "
      "samplesperbuffer=80 ! audio/x-raw,rate=8000,channels=1 ! "
      "rtpL16pay seqnum-offset=65530 ! appsink name=o");
  guint p, i;

  for (p = 0; p < G_N_ELEMENTS (pols); p++) {
    /* master key + salt: AES-128 16 + 14, AES-256 32 + 14, GCM salts 12 */
    static const gsize key_lens[] = { 30, 30, 46, 46, 28, 44, 30, 30, 30 };
    gsize key_len = key_lens[pols[p].policy];
    gchar *hex, *desc;
    GPtrArray *wire;
    guint mki;

    hex = g_malloc0 (2 * key_len + 1);
    for (i = 0; i < key_len; i++)
      sprintf (hex + 2 * i, "%02x", fuzz_srtp_key[i]);
    for (mki = 0; mki < 2; mki++) {
      guint8 head[2] = { (guint8) pols[p].policy, (guint8) (mki | 2) };
      GByteArray *a = g_byte_array_new ();
      guint8 op0 = 0;
      gchar *name;

      desc = g_strdup_printf ("audiotestsrc num-buffers=10 samplesperbuffer=80 "
          "! audio/x-raw,rate=8000,channels=1 ! rtpL16pay seqnum-offset=65530 "
          "! gpusrtpenc key=%s rtp-cipher=%s rtp-auth=%s rtcp-cipher=%s "
          "rtcp-auth=%s%s ! appsink name=o", hex, pols[p].cipher,
          pols[p].auth, pols[p].cipher, pols[p].auth,
          mki ? " mki=deadbeef" : "");
      wire = collect (desc);
      g_byte_array_append (a, head, 2);
      /* as sent, across the sequence number wrap, then a duplicate and
       * one from the past */
      for (i = 0; i < wire->len; i++) {
        gsize n;
        const guint8 *d = g_bytes_get_data (wire->pdata[i], &n);
        put_chunk (a, &op0, 1, d, n);
      }
      for (i = 0; i < 2; i++) {
        gsize n;
        const guint8 *d = g_bytes_get_data (wire->pdata[i ? 2 : wire->len - 1],
            &n);
        put_chunk (a, &op0, 1, d, n);
      }
      name = g_strdup_printf ("wire-%s-%s%s", pols[p].cipher, pols[p].auth,
          mki ? "-mki" : "");
      write_seed ("srtp", name, a);
      g_free (name);
      g_ptr_array_unref (wire);
      g_free (desc);
    }
    {
      /* the plain packets for the target to protect: as sent, tampered,
       * cut, and an RTCP sender report */
      guint8 head[2] = { (guint8) pols[p].policy, 0 };
      GByteArray *a = g_byte_array_new ();
      gchar *name;
      g_byte_array_append (a, head, 2);
      for (i = 0; i < plain->len; i++) {
        gsize n;
        const guint8 *d = g_bytes_get_data (plain->pdata[i], &n);
        guint8 op[4] = { (guint8) (i % 4), 0, (guint8) (5 + i), 0x40 };
        put_chunk (a, op, (i % 4) >= 2 ? 4 : 1, d, n);
      }
      {
        guint8 op = 5;          /* RTCP, protected, as sent */
        put_chunk (a, &op, 1, sr, sizeof sr);
      }
      name = g_strdup_printf ("protect-%s-%s", pols[p].cipher, pols[p].auth);
      write_seed ("srtp", name, a);
      g_free (name);
    }
    g_free (hex);
  }
  g_ptr_array_unref (plain);
}

/* ---- fountain ------------------------------------------------------------ */

static void
fountain_seeds (void)
{
  static const struct { int streams, symbol; guint32 frame_len; double pipe; }
  geo[] = { {3, 64, 1536, 0.3}, {4, 32, 1000, 0.5}, {2, 100, 777, 1.0} };
  guint g;

  for (g = 0; g < G_N_ELEMENTS (geo); g++) {
    int S = geo[g].streams, k = geo[g].symbol;
    guint32 len = geo[g].frame_len;
    int n = (int) fountain_subframe_symbols (len, S, (guint16) k);
    guint8 *frame = g_malloc0 ((gsize) S * n * k);
    const guint8 **subs = g_new (const guint8 *, S);
    guint8 pkt[FOUNTAIN_HEADER_SIZE + 128];
    GByteArray *a = g_byte_array_new ();
    guint8 max_red = 3;
    guint32 frame_id;
    int s, i;

    g_byte_array_append (a, &max_red, 1);
    for (frame_id = 7; frame_id < 9; frame_id++) {
      for (i = 0; i < (int) len; i++)
        frame[i] = (guint8) (i * 31 + frame_id);
      for (s = 0; s < S; s++)
        subs[s] = frame + (gsize) s * n * k;
      for (s = 0; s < S; s++) {
        /* stream s loses its source symbol s + 1: a repair or a pipe
         * packet has to stand in */
        for (i = 0; i < n; i++) {
          FountainHeader h = { FOUNTAIN_KIND_SOURCE, (uint8_t) S, (uint8_t) s,
            frame_id, (uint16_t) n, (uint16_t) k, len, (uint32_t) i, 0 };
          if (i == s + 1)
            continue;
          fountain_header_write (&h, pkt, sizeof pkt);
          memcpy (pkt + FOUNTAIN_HEADER_SIZE, subs[s] + (gsize) i * k, k);
          put_chunk (a, NULL, 0, pkt, FOUNTAIN_HEADER_SIZE + k);
        }
        for (i = 0; i < 2; i++) {
          uint64_t mask = fountain_stream_degree_draw (geo[g].pipe, S, s,
              frame_id, (uint32_t) i);
          int pipe = __builtin_popcountll (mask) > 1;
          FountainHeader h = { pipe ? FOUNTAIN_KIND_PIPE : FOUNTAIN_KIND_REPAIR,
            (uint8_t) S, (uint8_t) s, frame_id, (uint16_t) n, (uint16_t) k,
            len, 1000u * frame_id + 10u * s + i, pipe ? mask : 0 };
          if (pipe)
            fountain_encode_pipe (n, k, subs, mask, h.index_or_seed,
                pkt + FOUNTAIN_HEADER_SIZE);
          else
            fountain_encode_repair (n, k, subs[s], h.index_or_seed,
                pkt + FOUNTAIN_HEADER_SIZE);
          fountain_header_write (&h, pkt, sizeof pkt);
          put_chunk (a, NULL, 0, pkt, FOUNTAIN_HEADER_SIZE + k);
        }
      }
    }
    {
      gchar *name = g_strdup_printf ("streams%d-symbol%d", S, k);
      write_seed ("fountain", name, a);
      g_free (name);
    }
    g_free (subs);
    g_free (frame);
  }
}

/* ---- cstpsrc ------------------------------------------------------------- */

/* What cstpsink sends to S sockets on loopback, taken from each socket in
 * turn (so frames interleave across streams as they arrive), every
 * `drop_every`-th datagram left out (0: none) so that repair and pipe
 * packets have to stand in. */
static void
cstpsrc_seed (const gchar * name, guint S, guint frames, guint drop_every)
{
  int fds[8];
  GString *dest = g_string_new (NULL);
  GByteArray *a = g_byte_array_new ();
  guint8 head[2] = { (guint8) (S - 1), 1 };     /* max-frame-size 64 KiB */
  guint s, got = 0;

  g_assert (S <= G_N_ELEMENTS (fds));
  for (s = 0; s < S; s++) {
    struct sockaddr_in sa = {.sin_family = AF_INET };
    socklen_t sl = sizeof sa;
    int size = 8 << 20;
    sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    fds[s] = socket (AF_INET, SOCK_DGRAM, 0);
    setsockopt (fds[s], SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    if (fds[s] < 0 || bind (fds[s], (struct sockaddr *) &sa, sizeof sa) < 0
        || getsockname (fds[s], (struct sockaddr *) &sa, &sl) < 0) {
      g_printerr ("make_seeds: no loopback socket\n");
      exit (1);
    }
    g_string_append_printf (dest, "%s127.0.0.1:%u", s ? "," : "",
        ntohs (sa.sin_port));
  }
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u ! "
      "video/x-raw,format=I420,width=64,height=48,framerate=30/1 ! "
      "cstpsink name=o streams=%u destinations=%s packet-size=288 "
      "overhead=0.25 pipe-width=0.5 sync=false", frames, S, dest->str);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  if (!p) {
    g_printerr ("make_seeds: %s: %s\n", desc, err->message);
    exit (1);
  }
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (m == NULL || GST_MESSAGE_TYPE (m) != GST_MESSAGE_EOS) {
    g_printerr ("make_seeds: %s did not end\n", desc);
    exit (1);
  }
  gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);

  g_byte_array_append (a, head, 2);
  for (gboolean more = TRUE; more;) {
    more = FALSE;
    for (s = 0; s < S; s++) {
      guint8 pkt[2048];
      ssize_t n = recv (fds[s], pkt, sizeof pkt, MSG_DONTWAIT);
      if (n < 0)
        continue;
      more = TRUE;
      if (drop_every && ++got % drop_every == 0)
        continue;
      guint8 stream = (guint8) s;
      put_chunk (a, &stream, 1, pkt, (gsize) n);
    }
  }
  for (s = 0; s < S; s++)
    close (fds[s]);
  if (a->len < 100) {
    g_printerr ("make_seeds: nothing arrived from %s\n", desc);
    exit (1);
  }
  write_seed ("cstpsrc", name, a);
  g_string_free (dest, TRUE);
  g_free (desc);
}

static void
cstpsrc_seeds (void)
{
  cstpsrc_seed ("video-streams3", 3, 4, 0);
  cstpsrc_seed ("video-streams4-lossy", 4, 6, 9);
}

/* ---- cstpmeta ------------------------------------------------------------ */

/* cstpsink's frame packets: one per stream before each frame, with the
 * frame's timestamps, flags and the caps string of its sink pad, built as
 * cstpsink builds them from the buffers and caps of a real source. */
static void
cstpmeta_put (GByteArray * a, int S, guint32 frame_id, GstBuffer * b,
    guint32 len, const gchar * caps)
{
  guint8 pkt[FOUNTAIN_META_SIZE + 1024];
  guint8 flags = (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DELTA_UNIT) ?
      FOUNTAIN_META_FLAG_DELTA : 0) |
      (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_HEADER) ?
      FOUNTAIN_META_FLAG_HEADER : 0);
  int s;

  for (s = 0; s < S; s++) {
    FountainMeta m = { (uint8_t) S, (uint8_t) s, flags, frame_id, len,
      GST_BUFFER_PTS_IS_VALID (b) ? GST_BUFFER_PTS (b) : FOUNTAIN_META_NONE,
      GST_BUFFER_DURATION_IS_VALID (b) ? GST_BUFFER_DURATION (b) :
          FOUNTAIN_META_NONE,
      (uint16_t) (caps ? strlen (caps) : 0), caps
    };
    int n = fountain_meta_write (&m, pkt, sizeof pkt);
    if (n < 0) {
      g_printerr ("make_seeds: frame packet not written (%d)\n", n);
      exit (1);
    }
    put_chunk (a, NULL, 0, pkt, (gsize) n);
  }
}

static void
cstpmeta_seeds (void)
{
  static const struct { const gchar *name, *desc; int streams; } runs[] = {
    {"video-streams3", "videotestsrc num-buffers=3 ! "
          "video/x-raw,format=I420,width=64,height=48,framerate=30/1 ! "
          "appsink name=o", 3},
    {"audio-streams2", "audiotestsrc num-buffers=2 samplesperbuffer=160 ! "
          "audio/x-raw,format=S16LE,rate=8000,channels=1 ! appsink name=o", 2},
  };
  guint r;

  for (r = 0; r < G_N_ELEMENTS (runs); r++) {
    GstElement *p = gst_parse_launch (runs[r].desc, NULL), *sink;
    GByteArray *a = g_byte_array_new ();
    GstSample *smp;
    guint32 frame_id = 1;

    if (!p) {
      g_printerr ("make_seeds: %s does not parse\n", runs[r].desc);
      exit (1);
    }
    sink = gst_bin_get_by_name (GST_BIN (p), "o");
    g_object_set (sink, "sync", FALSE, NULL);
    gst_element_set_state (p, GST_STATE_PLAYING);
    while ((smp = gst_app_sink_pull_sample (GST_APP_SINK (sink)))) {
      GstBuffer *b = gst_sample_get_buffer (smp);
      gchar *caps = gst_caps_to_string (gst_sample_get_caps (smp));
      cstpmeta_put (a, runs[r].streams, frame_id++, b,
          (guint32) gst_buffer_get_size (b), caps);
      g_free (caps);
      gst_sample_unref (smp);
    }
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (sink);
    gst_object_unref (p);
    if (frame_id == 1) {
      g_printerr ("make_seeds: nothing came out of %s\n", runs[r].desc);
      exit (1);
    }
    write_seed ("cstpmeta", runs[r].name, a);
  }
  {
    /* a sink without caps (caps_len 0), a buffer without timestamps that
     * is a delta unit and a codec header */
    GByteArray *a = g_byte_array_new ();
    GstBuffer *b = gst_buffer_new_allocate (NULL, 1316, NULL);
    GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_DELTA_UNIT | GST_BUFFER_FLAG_HEADER);
    cstpmeta_put (a, 1, 0xfffffffeu, b, 1316, NULL);
    cstpmeta_put (a, 1, 0xffffffffu, b, 1, NULL);
    gst_buffer_unref (b);
    write_seed ("cstpmeta", "no-caps-no-timestamps", a);
  }
}

/* ---- serverpath ---------------------------------------------------------- */

/* Request paths as RTSP clients send them (DESCRIBE names the file, SETUP
 * its stream), served and refused ones, for the directory the harness
 * makes and for the proxy; byte 0 is the harness's mode. */
static void
serverpath_seeds (void)
{
  static const struct { const gchar *name; guint8 mode; const gchar *path; }
  paths[] = {
    {"dir-plain", 2, "/clip.ts"},
    {"dir-setup-stream", 2, "/clip.ts/stream=0"},
    {"dir-nc-sub", 0, "/nc/sub/clip.mp4"},
    {"dir-srtp-space-setup", 2, "/srtp/a%20b.mp4/stream=1"},
    {"dir-percent", 0, "/100%25.ts"},
    {"dir-link-inside", 0, "/in"},
    {"dir-link-outside", 2, "/out"},
    {"dir-link-up", 0, "/up/secret"},
    {"dir-encoded-dots", 0, "/%2e%2e/secret"},
    {"dir-double-slash", 2, "/nc//clip.ts"},
    {"proxy-live", 3, "/live/cam1"},
    {"proxy-dots", 1, "/live/../cam1/stream=0"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (paths); i++) {
    GByteArray *a = g_byte_array_new ();
    g_byte_array_append (a, &paths[i].mode, 1);
    g_byte_array_append (a, (const guint8 *) paths[i].path,
        strlen (paths[i].path));
    write_seed ("serverpath", paths[i].name, a);
  }
}

/* ---- serverhttp ---------------------------------------------------------- */

/* Request heads as HTTP clients send them (a DASH player's segment and its
 * byte ranges, curl's HEAD, a download resumed), served and refused ones,
 * each after the 8-byte big-endian size of the file its range is read
 * against (1000000 bytes, or 0). */
static void
serverhttp_seeds (void)
{
  static const struct { const gchar *name; guint64 size; const gchar *head; }
  heads[] = {
    {"get-segment", 1000000, "GET /video/seg-1.m4s HTTP/1.1\r\n"
          "Host: 127.0.0.1:8080\r\nUser-Agent: dash.js\r\nAccept: */*"},
    {"get-range", 1000000, "GET /movie.ts HTTP/1.1\r\nHost: x\r\n"
          "Range: bytes=188-375"},
    {"get-suffix-range", 1000000, "GET /movie.ts HTTP/1.1\r\n"
          "Range: bytes=-188\r\nConnection: close"},
    {"get-open-range-resume", 1000000, "GET /a%20b.mp4?token=1 HTTP/1.0\r\n"
          "Connection: keep-alive\r\nRange: bytes=500000-"},
    {"range-past-end", 1000000, "GET /movie.ts HTTP/1.1\r\n"
          "Range: bytes=2000000-"},
    {"range-several", 1000000, "GET /movie.ts HTTP/1.1\r\n"
          "Range: bytes=0-1, 5-9"},
    {"head-empty-file", 0, "HEAD /empty.ts HTTP/1.1\r\nRange: bytes=0-0"},
    {"post-refused", 1000000, "POST /movie.ts HTTP/1.1\r\n"
          "Content-Length: 3"},
    {"bad-request-line", 1000000, "GET /movie.ts\r\nHost: x"},
    {"bad-header", 1000000, "GET /movie.ts HTTP/1.1\r\n folded: value"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (heads); i++) {
    GByteArray *a = g_byte_array_new ();
    guint8 size[8];

    for (int b = 0; b < 8; b++)
      size[b] = heads[i].size >> (56 - 8 * b);
    g_byte_array_append (a, size, 8);
    g_byte_array_append (a, (const guint8 *) heads[i].head,
        strlen (heads[i].head));
    write_seed ("serverhttp", heads[i].name, a);
  }
}

/* ---- serverfront --------------------------------------------------------- */

/* What RTSP clients send on a connection: rtspsrc's and ffmpeg's
 * requests one after the other, a body (SET_PARAMETER), interleaved RTCP
 * between requests (TCP transport), and heads refused; byte 0 seeds the
 * harness's cuts. */
static void
serverfront_seeds (void)
{
  static const struct { const gchar *name; const gchar *bytes; gsize len; }
  runs[] = {
#define RUN(name, text) {name, text, sizeof text - 1}
    RUN ("rtspsrc-describe-setup-play",
        "OPTIONS rtsp://127.0.0.1:8554/clip.ts RTSP/1.0\r\nCSeq: 1\r\n"
        "User-Agent: GStreamer/1.22.0\r\n\r\n"
        "DESCRIBE rtsp://127.0.0.1:8554/clip.ts RTSP/1.0\r\nCSeq: 2\r\n"
        "Accept: application/sdp\r\n\r\n"
        "SETUP rtsp://127.0.0.1:8554/clip.ts/stream=0 RTSP/1.0\r\nCSeq: 3\r\n"
        "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n"
        "PLAY rtsp://127.0.0.1:8554/clip.ts RTSP/1.0\r\nCSeq: 4\r\n"
        "Session: 1234\r\nRange: npt=0-\r\n\r\n"
        "$\x01\x00\x08\x81\xc9\x00\x01\x00\x00\x00\x01"
        "TEARDOWN rtsp://127.0.0.1:8554/clip.ts RTSP/1.0\r\nCSeq: 5\r\n"
        "Session: 1234\r\n\r\n"),
    RUN ("ffmpeg-pause-seek",
        "DESCRIBE rtsp://127.0.0.1:8554/movie.ts RTSP/1.0\r\nAccept: "
        "application/sdp\r\nCSeq: 2\r\nUser-Agent: Lavf59.27.100\r\n\r\n"
        "PAUSE rtsp://127.0.0.1:8554/movie.ts RTSP/1.0\r\nCSeq: 5\r\n"
        "Session: 99\r\n\r\nPLAY rtsp://127.0.0.1:8554/movie.ts RTSP/1.0\r\n"
        "Range: npt=3610.000-\r\nCSeq: 6\r\nSession: 99\r\n\r\n"),
    RUN ("set-parameter-body",
        "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n"
        "SET_PARAMETER rtsp://h/clip.ts RTSP/1.0\r\nCSeq: 2\r\n"
        "Content-Type: text/parameters\r\nContent-Length: 12\r\n\r\n"
        "barparam: x\n"
        "GET_PARAMETER rtsp://h/clip.ts RTSP/1.0\r\nCSeq: 3\r\n\r\n"),
    RUN ("first-head-with-body",
        "ANNOUNCE rtsp://h/x RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 4\r\n"
        "\r\nv=0\nOPTIONS * RTSP/1.0\r\nCSeq: 2\r\n\r\n"),
    RUN ("later-nul-bytes",
        "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n\0\0\0\0\0\0\0\0"),
    RUN ("later-long-line",
        "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\nOPTIONS * RTSP/1.0\r\n"
        "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
    RUN ("bad-content-length",
        "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 12x\r\n\r\n"),
    RUN ("status-line-from-client",
        "OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n"
        "RTSP/1.0 200 OK\r\nCSeq: 7\r\n\r\n"),
#undef RUN
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (runs); i++) {
    GByteArray *a = g_byte_array_new ();
    guint8 seed = 17 * (i + 1);

    g_byte_array_append (a, &seed, 1);
    g_byte_array_append (a, (const guint8 *) runs[i].bytes, runs[i].len);
    write_seed ("serverfront", runs[i].name, a);
  }
}

/* ---- hap ----------------------------------------------------------------- */

static void
hap_seeds (void)
{
  static const struct { const gchar *name, *enc; int w, h; } runs[] = {
    {"hap1-snappy", "format=dxt1 hap=true snappy=true", 64, 32},
    {"hap5-plain", "format=dxt5 hap=true snappy=false", 32, 32},
    {"hapy-chunks", "format=ycocg-dxt5 hap=true snappy=true chunks=4", 64, 64},
    {"hap1-chunks-plain", "format=dxt1 hap=true snappy=false chunks=3", 48, 16},
  };
  guint r;

  for (r = 0; r < G_N_ELEMENTS (runs); r++) {
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=1 pattern=%u ! "
        "video/x-raw,format=RGBA,width=%d,height=%d ! dxtenc %s ! "
        "appsink name=o", r == 0 ? 0 : 18, runs[r].w, runs[r].h, runs[r].enc);
    GPtrArray *f = collect (desc);
    GByteArray *a = g_byte_array_new ();
    guint8 dims[2] = { (guint8) (runs[r].w / 4 - 1), (guint8) (runs[r].h / 4 - 1) };
    gsize n;
    const guint8 *d = g_bytes_get_data (f->pdata[0], &n);

    g_byte_array_append (a, dims, 2);
    g_byte_array_append (a, d, n);
    write_seed ("hap", runs[r].name, a);
    g_ptr_array_unref (f);
    g_free (desc);
  }
}

/* ---- cstpwall ------------------------------------------------------------ */

/* The exchange of a 4-receiver display wall: the frame states each receiver
 * sends, and pipe packets of a real frame reduced by one decoded stream, as
 * cstpsrc forwards them. */
static void
cstpwall_seeds (void)
{
  const int S = 4;
  const guint16 k = 64;
  const guint32 frame_len = 4 * 8 * 64 - 17;
  int n = (int) fountain_subframe_symbols (frame_len, S, k);
  guint8 *frame = g_malloc0 ((gsize) S * n * k);
  guint8 pkt[FOUNTAIN_WALL_PIPE_SIZE + 64], comp[64];
  GByteArray *a = g_byte_array_new ();
  guint i;

  for (i = 0; i < frame_len; i++)
    frame[i] = (guint8) (i * 7 + 3);
  {
    static const guint8 states[][8] = {
      {2, 2, 2, 2, 1, 0, 0, 0}, {3, 2, 2, 1, 1, 0, 0, 0}
    };
    for (i = 0; i < G_N_ELEMENTS (states); i++) {
      FountainWallPacket p = { FOUNTAIN_WALL_STATUS, (uint8_t) S,
        (uint8_t) i, 40 + i, 8, states[i] };
      int len = fountain_wall_write (&p, pkt, sizeof pkt);
      g_assert (len > 0);
      put_chunk (a, NULL, 0, pkt, (gsize) len);
    }
  }
  for (i = 0; i < 3; i++) {
    /* a pipe of streams 0, 1 (and all four for i = 2), stream 0's part
     * taken out by its receiver */
    const guint8 *subs[4] = { frame, frame + n * k, frame + 2 * n * k,
      frame + 3 * n * k };
    uint64_t mask = i == 2 ? 0xf : 0x3;
    uint32_t seed = 0x10000u + i;
    fountain_encode_pipe (n, k, subs, mask, seed, pkt + FOUNTAIN_WALL_PIPE_SIZE);
    fountain_encode_repair (n, k, subs[0],
        fountain_pipe_component_seed (seed, 0), comp);
    guint8 payload[64];
    for (int j = 0; j < k; j++)
      payload[j] = pkt[FOUNTAIN_WALL_PIPE_SIZE + j] ^ comp[j];
    FountainWallPacket p = { FOUNTAIN_WALL_PIPE, (uint8_t) S, 0, 41, 0, NULL,
      (uint16_t) n, k, frame_len, seed, mask & ~1ull, payload };
    int len = fountain_wall_write (&p, pkt, sizeof pkt);
    g_assert (len > 0);
    put_chunk (a, NULL, 0, pkt, (gsize) len);
  }
  write_seed ("cstpwall", "wall-streams4", a);
  g_free (frame);
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  if (argc != 2) {
    g_printerr ("usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  nc_seeds ();
  srtp_seeds ();
  fountain_seeds ();
  cstpmeta_seeds ();
  cstpsrc_seeds ();
  cstpwall_seeds ();
  hap_seeds ();
  serverpath_seeds ();
  serverhttp_seeds ();
  serverfront_seeds ();
  g_print ("%u seed files\n", n_files);
  return 0;
}
