/* gpustream-server: an RTSP video-on-demand server for a directory of media
 * files, on gst-rtsp-server.
 *
 *   gpustream-server [--port 8554] [--address 127.0.0.1] DIR
 *   gpustream-server [--port 8554] --proxy rtsp://ORIGIN:PORT/
 *
 * rtsp://HOST:PORT/<file>       plays DIR/<file> as plain RTP (any RTSP client)
 * rtsp://HOST:PORT/nc/<file>    plays it network-coded (ncencoder's packets,
 *                               X-RLNC); receive with rtpncdepay ! ncdecoder
 * rtsp://HOST:PORT/srtp/<file>  plays it as SRTP (RTP/SAVP), encrypted by
 *                               gpusrtpenc, the key in the SDP (MIKEY)
 *
 * No per-file configuration: each client's media is built from the path it
 * asks for. Paths that leave DIR (.., absolute, symlinks out) and missing
 * files are answered 404 Not Found before any pipeline is built.
 *
 * With --proxy, rtsp://HOST:PORT/<path> re-serves ORIGIN's <path> as SRTP:
 * each client's media plays the origin's stream and re-payloads it, and
 * gpusrtpenc encrypts it (the SRTP reverse proxy of Kai Zhang, Jiayu Hu,
 * Bei Hua, "A holistic approach to build real-time stream processing system
 * with GPU", 2015); ORIGIN's network-coded paths (/nc/<file>) are recoded at
 * the proxy without decoding (ncencoder as a relay). Proxies of one origin
 * make a tree of servers: the origin and its edges.
 *
 * With --workers N, N processes serve the same sockets under a supervisor
 * (server_workers.c); media files are read through one shared mapping each
 * (server_cache.c), and --http-port serves them as they are with sendfile
 * (server_http.c), after Woo-Yeong Jeong, Youngjae Lee, Jin-Soo Kim, "A
 * High-Performance Media Streaming Architecture based on KVM", 2018.
 *
 * Network-coded video on demand is the server design of Jin Zhao, Xinya
 * Zhang, Xin Wang, "An Architecture Design of GPU-Accelerated VoD Streaming
 * Servers with Network Coding", 2010 (docs/server.md says what of it is
 * built so far).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>
#include <gst/gst.h>
#include <gst/base/gsttypefindhelper.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gst/sdp/gstmikey.h>

#include "gstgpustream.h"
#include "gpsncframing.h"
#include "gpsncpacket.h"
#include "server_cache.h"
#include "server_direct.h"
#include "server_front.h"
#include "server_paths.h"
#include "server_workers.h"

/* ---- options ---- */

static gint opt_port = 8554;
static gchar *opt_address = NULL;
static gint opt_session_timeout = 60;
static gint opt_idle_timeout = 30;
static gint opt_max_sessions = 0;
static gint opt_nc_generation_size = 32;
static gint opt_nc_block_size = 1316;
static gint opt_nc_redundancy_percent = 30;
static gint opt_nc_max_bitrate = 4000000;
static gchar *opt_backend = NULL;
static gchar *opt_proxy = NULL;
static gint opt_cycle_us = 0;
static gint opt_client_threads = 0;
static gchar *opt_ts_sessions = NULL;

static GOptionEntry option_entries[] = {
  {"port", 'p', 0, G_OPTION_ARG_INT, &opt_port,
      "TCP port to listen on; 0 binds any free port (default 8554)", "PORT"},
  {"address", 'a', 0, G_OPTION_ARG_STRING, &opt_address,
      "Address to listen on (default 0.0.0.0)", "ADDR"},
  {"session-timeout", 't', 0, G_OPTION_ARG_INT, &opt_session_timeout,
        "Seconds without a request or RTCP from a client before its session "
        "is freed (default 60)", "SECONDS"},
  {"idle-timeout", 0, 0, G_OPTION_ARG_INT, &opt_idle_timeout,
        "Seconds an RTSP connection without a session (one that sent no "
        "whole request, or never set up a session) may stay silent before "
        "it is closed (default 30)", "SECONDS"},
  {"max-sessions", 0, 0, G_OPTION_ARG_INT, &opt_max_sessions,
      "Most concurrent sessions, 0 = unlimited (default 0)", "N"},
  {"nc-generation-size", 0, 0, G_OPTION_ARG_INT, &opt_nc_generation_size,
      "Network-coded mount: source blocks per generation (default 32)", "M"},
  {"nc-block-size", 0, 0, G_OPTION_ARG_INT, &opt_nc_block_size,
      "Network-coded mount: bytes per block (default 1316)", "BYTES"},
  {"nc-redundancy-percent", 0, 0, G_OPTION_ARG_INT, &opt_nc_redundancy_percent,
        "Network-coded mount: coded packets sent beyond each generation, "
        "as a percentage of its size (default 30)", "PERCENT"},
  {"backend", 'b', 0, G_OPTION_ARG_STRING, &opt_backend,
        "Where the network coding (through the one coder pool of the "
        "process) and the SRTP encryption run: auto (the GPU when a CUDA "
        "device is usable), cpu, gpu or hybrid (default auto)", "BACKEND"},
  {"nc-max-bitrate", 0, 0, G_OPTION_ARG_INT, &opt_nc_max_bitrate,
        "Network-coded mount, files other than MPEG-TS: send rate in bit/s "
        "(MPEG-TS is sent at its own pace; default 4000000)", "BITS"},
  {"cycle", 0, 0, G_OPTION_ARG_INT, &opt_cycle_us,
        "Network-coded and SRTP mounts, microseconds; 0 (default): each "
        "session's generations go to the coder pool as they complete, and "
        "each SRTP session encrypts its packets as they come. At least 100: "
        "every session codes and encrypts through the device's real-time "
        "scheduler, one batch of what all of them gathered every cycle",
      "MICROSECONDS"},
  {"client-threads", 0, 0, G_OPTION_ARG_INT, &opt_client_threads,
        "Threads that read and answer the RTSP connections; more "
        "connections share them in turn, so the count stays bounded "
        "whatever the number of clients. 0 (default): 16 serving a "
        "directory, one per connection with --proxy", "N"},
  {"ts-sessions", 0, 0, G_OPTION_ARG_STRING, &opt_ts_sessions,
        "How sessions of MPEG-TS files (plain, SRTP, network-coded) are "
        "served: shared (default: one sending thread and one pair of UDP "
        "ports for all of them, the packets read from the shared cache, "
        "SRTP protected and generations coded a round of all sessions at "
        "once) or pipeline (a GStreamer pipeline each, as every other "
        "mount)", "MODE"},
  {"proxy", 0, 0, G_OPTION_ARG_STRING, &opt_proxy,
        "Serve no directory: re-serve every path of this RTSP server (the "
        "origin) as SRTP, rtsp://HOST:PORT/<path> playing ORIGIN/<path>; "
        "paths under /nc/ (network-coded) are recoded without decoding",
      "rtsp://ORIGIN:PORT/"},
  {NULL}
};

/* ---- the media directory: request path -> file, or nothing ---- */

/* MPEG-TS is recognised by its sync bytes (0x47 every 188 bytes), not by the
 * file name: it is the one format sent at its own pace through tsparse */
static gboolean
file_is_mpegts (const gchar * path)
{
  guint8 head[189 * 2];
  FILE *f = fopen (path, "rb");
  size_t n;

  if (f == NULL)
    return FALSE;
  n = fread (head, 1, sizeof (head), f);
  fclose (f);
  return n >= 377 && head[0] == 0x47 && head[188] == 0x47 && head[376] == 0x47;
}

/* The bytes a file's type is found from (MPEG-TS needs a few packets, MP4
 * its first box) */
#define TYPEFIND_BYTES 65536

/* Whether a file of the directory can be served: GST_RTSP_STS_OK, 404 (it
 * cannot be read) or 415 (empty, or of no media type GStreamer knows), and
 * then the reason in *why. Checked before a pipeline is built for it: the
 * pipeline's typefind would fail it with 503 and nothing said. */
static GstRTSPStatusCode
file_refusal (const gchar * file, gchar ** why)
{
  g_autofree guint8 *head = NULL;
  g_autoptr (GstCaps) caps = NULL;
  const gchar *dot;
  struct stat st;
  ssize_t n;
  int fd;

  if (file_is_mpegts (file))
    return GST_RTSP_STS_OK;
  fd = open (file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = g_strdup_printf ("cannot be read: %s", g_strerror (errno));
    return GST_RTSP_STS_NOT_FOUND;
  }
  if (fstat (fd, &st) != 0 || st.st_size == 0) {
    close (fd);
    *why = g_strdup ("is empty");
    return GST_RTSP_STS_UNSUPPORTED_MEDIA_TYPE;
  }
  head = g_malloc (TYPEFIND_BYTES);
  do
    n = read (fd, head, TYPEFIND_BYTES);
  while (n < 0 && errno == EINTR);
  close (fd);
  if (n <= 0) {
    *why = n < 0 ? g_strdup_printf ("cannot be read: %s", g_strerror (errno))
        : g_strdup ("is empty");
    return n < 0 ? GST_RTSP_STS_NOT_FOUND :
        GST_RTSP_STS_UNSUPPORTED_MEDIA_TYPE;
  }
  dot = strrchr (file, '.');
  caps = gst_type_find_helper_for_data_with_extension (NULL, head, n,
      dot && !strchr (dot, '/') ? dot + 1 : NULL, NULL);
  if (caps == NULL) {
    *why = g_strdup ("is of no media type the server knows");
    return GST_RTSP_STS_UNSUPPORTED_MEDIA_TYPE;
  }
  return GST_RTSP_STS_OK;
}

/* ---- the SRTP media: gpusrtpenc in rtpbin, its key in the SDP ---- */

/* gst-rtsp-server builds RTP/SAVP on srtpenc, which it creates by name. Our
 * media answers rtpbin's request for an encoder before the stream's own
 * handler would (the first element returned wins): one gpusrtpenc per RTP
 * session, with a random key, for its RTP and its RTCP. The stream then
 * knows no encoder, so the SDP is ours: the same RTP/SAVP media with
 * a=key-mgmt:mikey that gst-rtsp-server writes for srtpenc, from the
 * encoder's caps (key, ciphers) and stats (each SSRC's rollover counter). */
#define GPS_TYPE_SRTP_MEDIA (gps_srtp_media_get_type ())
G_DECLARE_FINAL_TYPE (GpsSrtpMedia, gps_srtp_media, GPS, SRTP_MEDIA,
    GstRTSPMedia);

/* the URL path of a media, for the line printed when its session ends */
#define MEDIA_PATH(media) \
  ((const gchar *) g_object_get_data (G_OBJECT (media), "gpustream-path"))

struct _GpsSrtpMedia
{
  GstRTSPMedia parent;
  GMutex lock;
  /* gpusrtpenc of each RTP session (the stream index), NULL until asked */
  GPtrArray *encoders;
};

G_DEFINE_TYPE (GpsSrtpMedia, gps_srtp_media, GST_TYPE_RTSP_MEDIA);

/* the encoder of a session, made on the first request (RTP or RTCP) */
static GstElement *
srtp_media_encoder (GpsSrtpMedia * self, guint session)
{
  GstElement *enc;

  g_mutex_lock (&self->lock);
  if (self->encoders->len <= session)
    g_ptr_array_set_size (self->encoders, session + 1);
  enc = g_ptr_array_index (self->encoders, session);
  if (enc == NULL) {
    g_autofree gchar *name = g_strdup_printf ("gpusrtpenc_%u", session);

    enc = gst_element_factory_make ("gpusrtpenc", name);
    if (enc != NULL) {
      gst_util_set_object_arg (G_OBJECT (enc), "backend", opt_backend);
      /* --cycle: every session's packets are protected in the one batch
       * per cycle of the device's scheduler (the encoder keeps a stream's
       * RTCP behind its RTP, so the BYE at a file's end comes last) */
      g_object_set (enc, "random-key", TRUE, "cycle",
          (guint64) opt_cycle_us * GST_USECOND, NULL);
      g_ptr_array_index (self->encoders, session) = gst_object_ref_sink (enc);
    }
  }
  if (enc != NULL)
    gst_object_ref (enc);
  g_mutex_unlock (&self->lock);
  return enc;
}

/* rtpbin's request-rtp-encoder / request-rtcp-encoder: the session's
 * gpusrtpenc with its sink pad for that session requested, as rtpbin
 * expects (it links rtp_sink_N / rtcp_sink_N and their src pads). Without
 * one, no other handler may answer (the streams' would give srtpenc) and
 * the media fails: its packets never leave in clear. */
static GstElement *
request_encoder (GpsSrtpMedia * self, GstElement * rtpbin, guint session,
    const gchar * sink, const gchar * signal)
{
  GstElement *enc = srtp_media_encoder (self, session);
  g_autofree gchar *pad_name = g_strdup_printf ("%s_%u", sink, session);
  GstPad *pad = enc ? gst_element_request_pad_simple (enc, pad_name) : NULL;

  if (pad == NULL) {
    GError *err = g_error_new (GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN,
        "cannot make gpusrtpenc (with pad %s) for the SRTP mount", pad_name);

    g_signal_stop_emission_by_name (rtpbin, signal);
    gst_element_post_message (rtpbin, gst_message_new_error (GST_OBJECT
            (rtpbin), err, NULL));
    g_error_free (err);
    g_clear_object (&enc);
    return NULL;
  }
  gst_object_unref (pad);
  return enc;
}

static GstElement *
request_rtp_encoder (GstElement * rtpbin, guint session, gpointer media)
{
  return request_encoder (GPS_SRTP_MEDIA (media), rtpbin, session, "rtp_sink",
      "request-rtp-encoder");
}

static GstElement *
request_rtcp_encoder (GstElement * rtpbin, guint session, gpointer media)
{
  return request_encoder (GPS_SRTP_MEDIA (media), rtpbin, session,
      "rtcp_sink", "request-rtcp-encoder");
}

/* Connected before the streams join rtpbin, so before their handlers. A
 * server without our SRTP plugin refuses the media (503) rather than let
 * the streams fall back to srtpenc. */
static gboolean
gps_srtp_media_setup_rtpbin (GstRTSPMedia * media, GstElement * rtpbin)
{
  GstElementFactory *factory = gst_element_factory_find ("gpusrtpenc");

  if (factory == NULL) {
    g_printerr ("gpustream-server: the SRTP mount needs gpusrtpenc, which "
        "is not on GStreamer's plugin path\n");
    return FALSE;
  }
  gst_object_unref (factory);
  g_signal_connect_object (rtpbin, "request-rtp-encoder",
      G_CALLBACK (request_rtp_encoder), media, 0);
  g_signal_connect_object (rtpbin, "request-rtcp-encoder",
      G_CALLBACK (request_rtcp_encoder), media, 0);
  if (GST_RTSP_MEDIA_CLASS (gps_srtp_media_parent_class)->setup_rtpbin)
    return GST_RTSP_MEDIA_CLASS (gps_srtp_media_parent_class)->setup_rtpbin
        (media, rtpbin);
  return TRUE;
}

/* One crypto session per SSRC the encoder protects, with its rollover
 * counter, as gst-rtsp-server does for srtpenc; FALSE when it protected
 * nothing yet (the media is prerolled: it has) */
static gboolean
mikey_add_encoder_ssrcs (GstMIKEYMessage * msg, GstElement * enc)
{
  GstStructure *stats = NULL;
  const GValue *streams;
  guint added = 0;

  g_object_get (enc, "stats", &stats, NULL);
  if (stats == NULL)
    return FALSE;
  streams = gst_structure_get_value (stats, "streams");
  for (guint i = 0; streams != NULL && i < gst_value_array_get_size (streams);
      i++) {
    const GstStructure *s =
        gst_value_get_structure (gst_value_array_get_value (streams, i));
    guint ssrc, roc;

    if (gst_structure_get_uint (s, "ssrc", &ssrc)
        && gst_structure_get_uint (s, "roc", &roc)) {
      gst_mikey_message_add_cs_srtp (msg, 0, ssrc, roc);
      added++;
    }
  }
  gst_structure_free (stats);
  return added > 0;
}

/* The SDP media of one stream: made by gst-rtsp-server from the stream's
 * RTP caps, with the MIKEY message of its encoder's key added */
static gboolean
add_srtp_stream (GpsSrtpMedia * self, GstSDPMessage * sdp, GstSDPInfo * info,
    GstRTSPStream * stream)
{
  guint idx = gst_rtsp_stream_get_index (stream);
  g_autoptr (GstCaps) caps = gst_rtsp_stream_get_caps (stream);
  g_autoptr (GstCaps) rtp_caps = NULL;
  g_autoptr (GstElement) enc = NULL;
  g_autofree gchar *base64 = NULL;
  g_autofree gchar *key_mgmt = NULL;
  GstMIKEYMessage *msg;
  GstStructure *s;

  g_mutex_lock (&self->lock);
  if (idx < self->encoders->len && g_ptr_array_index (self->encoders, idx))
    enc = gst_object_ref (g_ptr_array_index (self->encoders, idx));
  g_mutex_unlock (&self->lock);
  if (caps == NULL || enc == NULL)
    return FALSE;

  msg = gst_mikey_message_new_from_caps (caps);
  if (msg == NULL || !mikey_add_encoder_ssrcs (msg, enc)) {
    g_printerr ("gpustream-server: %s: no SRTP key for stream %u\n",
        MEDIA_PATH (self), idx);
    g_clear_pointer (&msg, gst_mikey_message_unref);
    return FALSE;
  }
  base64 = gst_mikey_message_base64_encode (msg);
  gst_mikey_message_unref (msg);

  /* the key stays out of the media's format parameters */
  rtp_caps = gst_caps_copy (caps);
  s = gst_caps_get_structure (rtp_caps, 0);
  gst_structure_set_name (s, "application/x-rtp");
  gst_structure_remove_fields (s, "srtp-key", "srtp-cipher", "srtp-auth",
      "srtcp-cipher", "srtcp-auth", "mki", NULL);
  if (!gst_rtsp_sdp_make_media (sdp, info, stream, rtp_caps,
          GST_RTSP_PROFILE_SAVP))
    return FALSE;
  key_mgmt = g_strdup_printf ("mikey %s", base64);
  gst_sdp_media_add_attribute ((GstSDPMedia *) gst_sdp_message_get_media (sdp,
          gst_sdp_message_medias_len (sdp) - 1), "key-mgmt", key_mgmt);
  return TRUE;
}

static gboolean
gps_srtp_media_setup_sdp (GstRTSPMedia * media, GstSDPMessage * sdp,
    GstSDPInfo * info)
{
  g_autofree gchar *range = gst_rtsp_media_get_range_string (media, FALSE,
      GST_RTSP_RANGE_NPT);

  if (range == NULL)
    return FALSE;
  gst_sdp_message_add_attribute (sdp, "range", range);
  for (guint i = 0; i < gst_rtsp_media_n_streams (media); i++)
    if (!add_srtp_stream (GPS_SRTP_MEDIA (media), sdp, info,
            gst_rtsp_media_get_stream (media, i)))
      return FALSE;
  return TRUE;
}

/* What each encoder did, once the session's pipeline has stopped (the
 * element keeps its stats until it starts again): one line per stream that
 * sent anything (a media that failed to start has said why on stderr) */
static void
gps_srtp_media_unprepared (GstRTSPMedia * media)
{
  GpsSrtpMedia *self = GPS_SRTP_MEDIA (media);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->encoders->len; i++) {
    GstElement *enc = g_ptr_array_index (self->encoders, i);
    GstStructure *stats = NULL;
    guint64 packets = 0, bytes = 0, batches = 0;
    const gchar *backend;
    g_autofree gchar *scheduled = NULL;

    if (enc == NULL)
      continue;
    g_object_get (enc, "stats", &stats, NULL);
    if (stats == NULL)
      continue;
    gst_structure_get_uint64 (stats, "packets-out", &packets);
    gst_structure_get_uint64 (stats, "bytes-out", &bytes);
    gst_structure_get_uint64 (stats, "scheduled-batches", &batches);
    backend = gst_structure_get_string (stats, "backend");
    /* with --cycle, how many of the scheduler's batches it took part in */
    if (opt_cycle_us > 0)
      scheduled = g_strdup_printf (", %" G_GUINT64_FORMAT
          " scheduled batches", batches);
    if (packets > 0)
      g_print ("srtp %s stream %u: gpusrtpenc protected %" G_GUINT64_FORMAT
          " packets, %" G_GUINT64_FORMAT " bytes (backend %s%s)\n",
          MEDIA_PATH (self), i, packets, bytes, backend ? backend : "none",
          scheduled ? scheduled : "");
    gst_structure_free (stats);
  }
  g_mutex_unlock (&self->lock);
  fflush (stdout);
  if (GST_RTSP_MEDIA_CLASS (gps_srtp_media_parent_class)->unprepared)
    GST_RTSP_MEDIA_CLASS (gps_srtp_media_parent_class)->unprepared (media);
}

/* ---- the media factory: one pipeline per client, from its URL ---- */

#define GPS_TYPE_DIR_FACTORY (gps_dir_factory_get_type ())
G_DECLARE_FINAL_TYPE (GpsDirFactory, gps_dir_factory, GPS, DIR_FACTORY,
    GstRTSPMediaFactoryURI);

struct _GpsDirFactory
{
  GstRTSPMediaFactoryURI parent;
  /* the directory served, or the origin's URL ending in '/' (--proxy) */
  gchar *root_real;
  gchar *proxy_base;
  /* the parent reads its "uri" property while building: one build at a time */
  GMutex uri_lock;
  /* --proxy: where its paths are mounted (uri_lock), to unmount them */
  GstRTSPMountPoints *mounts;
};

G_DEFINE_TYPE (GpsDirFactory, gps_dir_factory, GST_TYPE_RTSP_MEDIA_FACTORY_URI);

/* The pipeline of one client, from a description whose filesrc is named
 * "src"; its location is set as a property, so that no file name needs
 * quoting in the description */
/* tsparse stamps a file's packets from its clock references, the first one
 * typically 190 ms into the stream, and the media sends each packet at its
 * running time: every client would wait that long for its first packet.
 * The offset makes the first timestamp running time zero. */
static GstPadProbeReturn
start_at_first_timestamp (GstPad * pad, GstPadProbeInfo * info, gpointer unused)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstEvent *event;
  const GstSegment *segment;
  guint64 running_time;

  if (!GST_BUFFER_PTS_IS_VALID (buf))
    return GST_PAD_PROBE_OK;
  event = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
  if (event != NULL) {
    gst_event_parse_segment (event, &segment);
    running_time = gst_segment_to_running_time (segment, GST_FORMAT_TIME,
        GST_BUFFER_PTS (buf));
    if (GST_CLOCK_TIME_IS_VALID (running_time))
      gst_pad_set_offset (pad, -(gint64) running_time);
    gst_event_unref (event);
  }
  return GST_PAD_PROBE_REMOVE;
}

static GstElement *
build_media_bin (const gchar * file, const gchar * description)
{
  GError *err = NULL;
  GstElement *bin = gst_parse_bin_from_description (description, FALSE, &err);
  GstElement *src, *ts;

  if (bin == NULL) {
    g_printerr ("gpustream-server: cannot build the pipeline for %s: %s\n",
        file, err->message);
    g_clear_error (&err);
    return NULL;
  }
  src = gst_bin_get_by_name (GST_BIN (bin), "src");
  g_object_set (src, "location", file, NULL);
  gst_object_unref (src);
  ts = gst_bin_get_by_name (GST_BIN (bin), "ts");
  if (ts != NULL) {
    GstPad *pad = gst_element_get_static_pad (ts, "src");
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
        start_at_first_timestamp, NULL, NULL);
    gst_object_unref (pad);
    gst_object_unref (ts);
  }
  return bin;
}

/* The parent's pipeline for a URI: its source, demuxed or depayloaded, and
 * each stream payloaded as it is coded */
static GstElement *
create_uri_element (GpsDirFactory * self, const GstRTSPUrl * url,
    const gchar * uri)
{
  GstElement *element;

  g_mutex_lock (&self->uri_lock);
  gst_rtsp_media_factory_uri_set_uri (GST_RTSP_MEDIA_FACTORY_URI (self), uri);
  element = GST_RTSP_MEDIA_FACTORY_CLASS (gps_dir_factory_parent_class)
      ->create_element (GST_RTSP_MEDIA_FACTORY (self), url);
  g_mutex_unlock (&self->uri_lock);
  return element;
}

/* The end of an origin's stream. rtspsrc turns the origin's RTCP BYE into
 * an EOS into its jitterbuffer; when that EOS comes while the jitterbuffer's
 * thread is held downstream (the proxy's media waits for its client's PLAY
 * after DESCRIBE: a clip no longer than the jitterbuffer's 2 s, or a client
 * slow to PLAY), the jitterbuffer never sends it on, and the proxy's client
 * would wait for the end forever. The proxy counts the packets into and out
 * of each origin jitterbuffer, and sends the EOS itself once the jitterbuffer
 * has let out every packet it took in (nothing is lost over TCP). */
typedef struct
{
  GMutex lock;
  guint64 in, out;              /* packets */
  gboolean ended;               /* EOS came in */
  gboolean sent;                /* EOS went out (the jitterbuffer's or ours) */
  gboolean scheduled;           /* our EOS waits for the pad to be idle */
} OriginEnd;

static void
origin_end_free (gpointer data)
{
  OriginEnd *end = data;

  g_mutex_clear (&end->lock);
  g_free (end);
}

static guint
probe_packets (GstPadProbeInfo * info)
{
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST)
    return gst_buffer_list_length (GST_PAD_PROBE_INFO_BUFFER_LIST (info));
  return 1;
}

/* the jitterbuffer's source pad, idle after its last packet */
static GstPadProbeReturn
origin_end_send (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  OriginEnd *end = data;
  GstPad *peer;
  gboolean send;

  g_mutex_lock (&end->lock);
  send = !end->sent;
  end->sent = TRUE;
  g_mutex_unlock (&end->lock);
  /* into the peer: a push through the pad itself is refused while its
   * idle probe runs */
  peer = send ? gst_pad_get_peer (pad) : NULL;
  if (peer != NULL) {
    gst_pad_send_event (peer, gst_event_new_eos ());
    gst_object_unref (peer);
  }
  return GST_PAD_PROBE_REMOVE;
}

/* The last packet has reached the peer: the jitterbuffer's source pad is
 * busy pushing it, so its idle probe runs when that push returns */
static GstPadProbeReturn
origin_end_last_in_peer (GstPad * peer, GstPadProbeInfo * info, gpointer data)
{
  GstPad *srcpad = gst_pad_get_peer (peer);

  if (srcpad != NULL) {
    gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_IDLE, origin_end_send, data,
        NULL);
    gst_object_unref (srcpad);
  }
  return GST_PAD_PROBE_REMOVE;
}

/* Called with the lock from the probe of a packet on its way out, in the
 * jitterbuffer's thread: when it is the last one after the end came in, the
 * EOS follows it once the source pad is idle again (the source pad does
 * not count as busy in its own probe, only once the packet has reached the
 * peer: the idle probe goes on from there). */
static void
origin_end_check_locked (OriginEnd * end, GstPad * srcpad)
{
  GstPad *peer;

  if (!end->ended || end->sent || end->scheduled || end->out < end->in)
    return;
  end->scheduled = TRUE;
  g_mutex_unlock (&end->lock);
  peer = gst_pad_get_peer (srcpad);
  if (peer != NULL)
    gst_pad_add_probe (peer, GST_PAD_PROBE_TYPE_BUFFER |
        GST_PAD_PROBE_TYPE_BUFFER_LIST, origin_end_last_in_peer, end, NULL);
  gst_clear_object (&peer);
  g_mutex_lock (&end->lock);
}

/* The origin's caps without their npt-stop, the end of the PLAY's range.
 * From it the jitterbuffer (1.22) estimates when the stream ends and queues
 * an EOS of its own at that time, often before the last packets are out; as
 * it lets those out it arms the estimate again, and when it reaches that EOS
 * it waits for the estimate's timer, which nothing wakes. The EOS then never
 * leaves (the proxy sends one, above), and a teardown's flush wakes only one
 * of the two threads that wait, often the timer's: the jitterbuffer's thread
 * waits on, and the session's pipeline never stops (one session in seven of
 * clients that pause and leave at the end, as rtspsrc does at EOS). Without
 * it the end is the origin's BYE, which rtspsrc turns into the EOS counted
 * here. */
static GstEvent *
caps_without_npt_stop (GstEvent * event)
{
  GstEvent *stripped;
  GstCaps *caps;
  GstStructure *s;

  gst_event_parse_caps (event, &caps);
  if (gst_caps_get_size (caps) == 0)
    return event;
  s = gst_caps_get_structure (caps, 0);
  if (!gst_structure_has_field (s, "npt-stop"))
    return event;
  caps = gst_caps_copy (caps);
  gst_structure_remove_field (gst_caps_get_structure (caps, 0), "npt-stop");
  stripped = gst_event_new_caps (caps);
  gst_event_set_seqnum (stripped, gst_event_get_seqnum (event));
  gst_caps_unref (caps);
  gst_event_unref (event);
  return stripped;
}

/* The jitterbuffer's sink pad, in rtspsrc's thread: counts, and notes the
 * end. An end that comes after the last packet went out needs nothing: the
 * jitterbuffer, not held, sends it on itself. */
static GstPadProbeReturn
origin_end_in (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  OriginEnd *end = data;

  g_mutex_lock (&end->lock);
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);

    if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
      end->ended = TRUE;
    else if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
      end->in = end->out = 0;
    else if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS)
      GST_PAD_PROBE_INFO_DATA (info) = caps_without_npt_stop (event);
  } else {
    end->in += probe_packets (info);
  }
  g_mutex_unlock (&end->lock);
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
origin_end_out (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  OriginEnd *end = data;

  g_mutex_lock (&end->lock);
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_EOS)
      end->sent = TRUE;
  } else {
    end->out += probe_packets (info);
    origin_end_check_locked (end, pad);
  }
  g_mutex_unlock (&end->lock);
  return GST_PAD_PROBE_OK;
}

static void
origin_new_jitterbuffer (GstElement * rtpbin, GstElement * jitterbuffer,
    guint session, guint ssrc, gpointer user_data)
{
  OriginEnd *end = g_new0 (OriginEnd, 1);
  GstPad *sink = gst_element_get_static_pad (jitterbuffer, "sink");
  GstPad *src = gst_element_get_static_pad (jitterbuffer, "src");
  GstPadProbeType types = GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM;

  g_mutex_init (&end->lock);
  /* the jitterbuffer's data keeps it as long as the element lives */
  g_object_set_data_full (G_OBJECT (jitterbuffer), "gpustream-origin-end",
      end, origin_end_free);
  if (sink != NULL && src != NULL) {
    gst_pad_add_probe (sink, types, origin_end_in, end, NULL);
    gst_pad_add_probe (src, types, origin_end_out, end, NULL);
  }
  gst_clear_object (&sink);
  gst_clear_object (&src);
}

static void
origin_new_manager (GstElement * rtspsrc, GstElement * manager,
    gpointer user_data)
{
  if (g_signal_lookup ("new-jitterbuffer", G_OBJECT_TYPE (manager)) != 0)
    g_signal_connect (manager, "new-jitterbuffer",
        G_CALLBACK (origin_new_jitterbuffer), NULL);
}

/* The jitterbuffer between origin and edge: the origin's packets come in
 * order over TCP, so it has nothing to wait for. rtspsrc's default, 2 s,
 * held the end of the first generation of a relayed network-coded stream
 * as long as its client's decoder waits for a generation (2 s): the client
 * then lost that generation, about one play in six. */
#define ORIGIN_LATENCY_MS 200

/* The origin's stream comes over TCP, inside the RTSP connection: nothing
 * is lost between origin and proxy, and no UDP port is shared with another
 * process (two rtspsrc elements that bind the same reused port each lose
 * the other's packets, and a live media without packets never prepares) */
static void
origin_source_setup (GstElement * uridecodebin, GstElement * source,
    gpointer user_data)
{
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (source), "protocols"))
    gst_util_set_object_arg (G_OBJECT (source), "protocols", "tcp");
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (source), "latency"))
    g_object_set (source, "latency", ORIGIN_LATENCY_MS, NULL);
  if (g_signal_lookup ("new-manager", G_OBJECT_TYPE (source)) != 0)
    g_signal_connect (source, "new-manager", G_CALLBACK (origin_new_manager),
        NULL);
}

static GstElement *
create_origin_element (GpsDirFactory * self, const GstRTSPUrl * url,
    const gchar * uri)
{
  GstElement *element = create_uri_element (self, url, uri);
  GstElement *uridecodebin = NULL;
  GstIterator *it;
  GValue item = G_VALUE_INIT;

  if (element == NULL || !GST_IS_BIN (element))
    return element;
  it = gst_bin_iterate_all_by_element_factory_name (GST_BIN (element),
      "uridecodebin");
  if (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    uridecodebin = g_value_get_object (&item);
    g_signal_connect (uridecodebin, "source-setup",
        G_CALLBACK (origin_source_setup), NULL);
    g_value_unset (&item);
  }
  gst_iterator_free (it);
  return element;
}

/* An origin's network-coded path (/nc/...): the edge recodes it without
 * decoding (ncencoder fed with coded packets is a relay: it mixes each
 * generation's packets into new ones) and serves what it mixes, as SRTP
 * like every proxied stream. */
static GstElement *
create_origin_nc_element (const gchar * uri)
{
  g_autofree gchar *description = g_strdup_printf ("rtspsrc name=src "
      "protocols=tcp latency=%d ! rtpncdepay ! ncencoder "
      "redundancy-percent=%d backend=%s cycle=%" G_GUINT64_FORMAT " ! "
      "rtpncpay name=pay0 pt=96", ORIGIN_LATENCY_MS, opt_nc_redundancy_percent,
      opt_backend,
      (guint64) opt_cycle_us * GST_USECOND);
  GstElement *bin = build_media_bin (uri, description);
  GstElement *src;

  if (bin == NULL)
    return NULL;
  src = gst_bin_get_by_name (GST_BIN (bin), "src");
  g_signal_connect (src, "new-manager", G_CALLBACK (origin_new_manager), NULL);
  gst_object_unref (src);
  return bin;
}

static GstElement *
gps_dir_factory_create_element (GstRTSPMediaFactory * factory,
    const GstRTSPUrl * url)
{
  GpsDirFactory *self = GPS_DIR_FACTORY (factory);
  MountKind kind;
  g_autofree gchar *mount_path = NULL;
  g_autofree gchar *file = request_source (self->root_real,
      self->proxy_base, url, &mount_path, &kind);
  g_autofree gchar *description = NULL;
  g_autofree gchar *uri = NULL;
  gboolean mpegts;

  if (file == NULL)
    return NULL;
  /* the origin's stream: played, depayloaded and payloaded again by the
   * parent (rtspsrc in a uridecodebin), each stream as it is coded */
  if (self->proxy_base != NULL)
    return g_str_has_prefix (mount_path, "/nc/") ?
        create_origin_nc_element (file) :
        create_origin_element (self, url, file);
  mpegts = file_is_mpegts (file);
  /* MPEG-TS leaves at its own pace: tsparse timestamps it from its clock
   * references. Network-coded, anything else is a byte stream sent at
   * --nc-max-bitrate; plain or SRTP, MPEG-TS goes out as it is (RTP/MP2T,
   * RFC 2250: SRTP is added by the media's rtpbin) */
  if (kind == MOUNT_NC)
    description = g_strdup_printf (SERVER_CACHE_SRC " name=src ! %s"
        "ncencoder generation-size=%d block-size=%d redundancy-percent=%d "
        "max-bitrate=%d backend=%s cycle=%" G_GUINT64_FORMAT " ! "
        "rtpncpay name=pay0 pt=96",
        mpegts ? "tsparse name=ts set-timestamps=true ! " : "",
        opt_nc_generation_size, opt_nc_block_size, opt_nc_redundancy_percent,
        mpegts ? 0 : opt_nc_max_bitrate, opt_backend,
        (guint64) opt_cycle_us * GST_USECOND);
  else if (mpegts)
    description = g_strdup (SERVER_CACHE_SRC " name=src ! tsparse name=ts set-timestamps=true ! "
        "rtpmp2tpay name=pay0 pt=33");
  if (description != NULL)
    return build_media_bin (file, description);

  /* other containers: demuxed, and each stream payloaded, by the parent */
  uri = gst_filename_to_uri (file, NULL);
  if (uri == NULL)
    return NULL;
  return create_uri_element (self, url, uri);
}

/* a media learns its path, for what it prints */
static GstRTSPMedia *
gps_dir_factory_construct (GstRTSPMediaFactory * factory,
    const GstRTSPUrl * url)
{
  GstRTSPMedia *media = GST_RTSP_MEDIA_FACTORY_CLASS
      (gps_dir_factory_parent_class)->construct (factory, url);

  if (media != NULL)
    g_object_set_data_full (G_OBJECT (media), "gpustream-path",
        strip_stream_control (url->abspath), g_free);
  return media;
}

static void
unref_closure_data (gpointer data, GClosure * closure)
{
  gst_object_unref (data);
}

/* What a network-coded session's encoder did, once its pipeline has
 * stopped (the element keeps its stats), as the SRTP media says its own */
static void
report_nc_session (GstRTSPMedia * media, gpointer encoder)
{
  GstStructure *stats = NULL;
  guint64 generations = 0, packets = 0, batches = 0;
  const gchar *backend;

  g_object_get (encoder, "stats", &stats, NULL);
  if (stats == NULL)
    return;
  gst_structure_get_uint64 (stats, "generations", &generations);
  gst_structure_get_uint64 (stats, "packets-out", &packets);
  gst_structure_get_uint64 (stats, "scheduled-batches", &batches);
  backend = gst_structure_get_string (stats, "backend");
  if (packets > 0) {
    g_print ("nc %s: ncencoder sent %" G_GUINT64_FORMAT " packets of %"
        G_GUINT64_FORMAT " generations (backend %s, %" G_GUINT64_FORMAT
        " scheduled batches)\n", MEDIA_PATH (media), packets, generations,
        backend ? backend : "none", batches);
    fflush (stdout);
  }
  gst_structure_free (stats);
}

/* gst-rtsp-server answers a media that fails 503 and keeps the reason in
 * its debug log; the operator sees it on stderr too (a backend without its
 * device, a file that cannot be demuxed). Synchronously, as the error is
 * posted: the failed media may be gone before a bus watch would run. */
static void
report_pipeline_error (GstBus * bus, GstMessage * message, gpointer user_data)
{
  GError *err = NULL;

  gst_message_parse_error (message, &err, NULL);
  g_printerr ("gpustream-server: %s: %s\n",
      GST_OBJECT_NAME (GST_MESSAGE_SRC (message)), err->message);
  g_clear_error (&err);
}

/* --proxy: a path's mount leaves with its media (each client has its own),
 * so that the paths clients ask for, which the proxy cannot list, do not
 * pile up as mounts; a request for the path mounts it again. Also after a
 * media that failed to start (the origin refused the path). */
static void
proxy_media_unprepared (GstRTSPMedia * media, gpointer factory)
{
  GpsDirFactory *self = GPS_DIR_FACTORY (factory);
  GstRTSPMountPoints *mounts;

  g_mutex_lock (&self->uri_lock);
  mounts = self->mounts ? g_object_ref (self->mounts) : NULL;
  g_mutex_unlock (&self->uri_lock);
  if (mounts != NULL && MEDIA_PATH (media) != NULL)
    gst_rtsp_mount_points_remove_factory (mounts, MEDIA_PATH (media));
  g_clear_object (&mounts);
}

static void
gps_dir_factory_media_constructed (GstRTSPMediaFactory * factory,
    GstRTSPMedia * media)
{
  GstElement *element = gst_rtsp_media_get_element (media);
  GstObject *pipeline = gst_object_get_parent (GST_OBJECT (element));

  if (pipeline != NULL && GST_IS_PIPELINE (pipeline)) {
    GstBus *bus = gst_pipeline_get_bus (GST_PIPELINE (pipeline));

    gst_bus_enable_sync_message_emission (bus);
    g_signal_connect (bus, "sync-message::error",
        G_CALLBACK (report_pipeline_error), NULL);
    gst_object_unref (bus);
  }
  g_clear_object (&pipeline);
  if (GPS_DIR_FACTORY (factory)->proxy_base != NULL)
    g_signal_connect_object (media, "unprepared",
        G_CALLBACK (proxy_media_unprepared), factory, 0);

  if (GST_IS_BIN (element)) {
    GstIterator *it = gst_bin_iterate_all_by_element_factory_name (GST_BIN
        (element), "ncencoder");
    GValue item = G_VALUE_INIT;

    if (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
      g_signal_connect_data (media, "unprepared",
          G_CALLBACK (report_nc_session), g_value_dup_object (&item),
          unref_closure_data, 0);
      g_value_unset (&item);
    }
    gst_iterator_free (it);
  }
  gst_object_unref (element);
  if (GST_RTSP_MEDIA_FACTORY_CLASS (gps_dir_factory_parent_class)
      ->media_constructed)
    GST_RTSP_MEDIA_FACTORY_CLASS (gps_dir_factory_parent_class)
        ->media_constructed (factory, media);
}

/* ---- the server: each file mounted on its first request, 404 otherwise ---- */

/* The client of one RTSP connection: it mounts the factory at the path of
 * each servable file it is asked for, before gst-rtsp-server looks the path
 * up (mount points match whole path segments, and what follows the mount in
 * a SETUP URL names the stream); other paths find no mount: 404. One mount
 * per file asked for, shared by all clients. */
#define GPS_TYPE_CLIENT (gps_client_get_type ())
G_DECLARE_FINAL_TYPE (GpsClient, gps_client, GPS, CLIENT, GstRTSPClient);

struct _GpsClient
{
  GstRTSPClient parent;
  /* plain and network-coded mounts (NULL when proxying), SRTP mounts */
  GpsDirFactory *factory;
  GpsDirFactory *srtp_factory;
  /* why the SETUP being handled found no media (its path was made, and its
   * file refused, before gst-rtsp-server looked it up and answered 404) */
  GstRTSPStatusCode setup_refusal;
};

G_DEFINE_TYPE (GpsClient, gps_client, GST_TYPE_RTSP_CLIENT);

/* Mounts the factory at the media path of a servable request: OK, or 404
 * for a path that is not served (missing, outside the directory, not
 * canonical, unreadable), 415 for a file that is empty or of no media
 * type (said on stderr) */
static GstRTSPStatusCode
gps_client_mount_request (GpsClient * self, const GstRTSPUrl * uri,
    gboolean check_file)
{
  g_autofree gchar *why = NULL;
  GstRTSPStatusCode code;
  g_autofree gchar *mount_path = NULL;
  g_autofree gchar *file = NULL;
  GstRTSPMountPoints *mounts;
  GstRTSPMediaFactory *found;
  GpsDirFactory *factory;
  MountKind kind;
  gint matched = 0;

  if (uri == NULL || uri->abspath == NULL)
    return GST_RTSP_STS_NOT_FOUND;
  file = request_source (self->srtp_factory->root_real,
      self->srtp_factory->proxy_base, uri, &mount_path, &kind);
  if (file == NULL)
    return GST_RTSP_STS_NOT_FOUND;
  if (check_file && self->srtp_factory->proxy_base == NULL &&
      (code = file_refusal (file, &why)) != GST_RTSP_STS_OK) {
    g_printerr ("gpustream-server: %s: %d %s: the file %s\n", mount_path,
        code, gst_rtsp_status_as_text (code), why);
    return code;
  }
  factory = kind == MOUNT_SRTP ? self->srtp_factory : self->factory;
  mounts = gst_rtsp_client_get_mount_points (GST_RTSP_CLIENT (self));
  if (mounts == NULL)
    return GST_RTSP_STS_NOT_FOUND;
  if (factory->proxy_base != NULL) {
    g_mutex_lock (&factory->uri_lock);
    if (factory->mounts == NULL)
      factory->mounts = g_object_ref (mounts);
    g_mutex_unlock (&factory->uri_lock);
  }
  found = gst_rtsp_mount_points_match (mounts, mount_path, &matched);
  if (found == NULL || matched != (gint) strlen (mount_path))
    gst_rtsp_mount_points_add_factory (mounts, mount_path,
        GST_RTSP_MEDIA_FACTORY (g_object_ref (factory)));
  g_clear_object (&found);
  g_object_unref (mounts);
  return GST_RTSP_STS_OK;
}

/* DESCRIBE looks its path up after this signal, SETUP before it (through
 * make_path_from_uri below): both mount there, and the signal answers 404
 * for a file that is not (or no longer) served before a pipeline is tried */
/* Each session holds about sixteen descriptors (its pipeline's sockets, its
 * threads' wakeups, its connection), and GLib aborts the process when it
 * cannot make one: near the open-file limit new sessions are refused (503)
 * instead. The room kept covers the sessions the client threads may be
 * preparing at once and the connections that come meanwhile: 512, or a
 * quarter of a lower limit (else a limit under 512 would refuse all). */
#define DESCRIPTOR_ROOM 512
static guint64 descriptor_limit;        /* RLIMIT_NOFILE, raised to its max */

static void
raise_descriptor_limit (void)
{
  struct rlimit rl;

  if (getrlimit (RLIMIT_NOFILE, &rl) != 0)
    return;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit (RLIMIT_NOFILE, &rl);
    getrlimit (RLIMIT_NOFILE, &rl);
  }
  descriptor_limit = rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur;
}

static gboolean
room_for_a_session (void)
{
  static gint64 said;
  DIR *dir;
  guint64 open_now = 0;

  if (descriptor_limit == 0)
    return TRUE;
  dir = opendir ("/proc/self/fd");
  if (dir == NULL)
    return TRUE;
  while (readdir (dir) != NULL)
    open_now++;
  closedir (dir);
  if (open_now + MIN (DESCRIPTOR_ROOM, descriptor_limit / 4) <=
      descriptor_limit)
    return TRUE;
  /* said at most every 10 s (a race between client threads only repeats
   * the line) */
  gint64 now = g_get_monotonic_time ();
  if (said == 0 || now - said > 10 * G_USEC_PER_SEC) {
    said = now;
    g_printerr ("gpustream-server: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
        " file descriptors open: new sessions are refused (503) until some "
        "end\n", open_now, descriptor_limit);
  }
  return FALSE;
}

static GstRTSPStatusCode
check_request_path (GstRTSPClient * client, GstRTSPContext * ctx,
    gpointer user_data)
{
  if (ctx->uri == NULL)
    return GST_RTSP_STS_BAD_REQUEST;
  if (!room_for_a_session ())
    return GST_RTSP_STS_SERVICE_UNAVAILABLE;
  /* a SETUP's file was checked as its path was made */
  if (ctx->method == GST_RTSP_SETUP)
    return GST_RTSP_STS_OK;
  return gps_client_mount_request (GPS_CLIENT (client), ctx->uri, TRUE);
}

static gchar *
gps_client_make_path_from_uri (GstRTSPClient * client, const GstRTSPUrl * uri)
{
  /* a SETUP looks its media up before its signal: a file that cannot be
   * served is not mounted, said here, and its 404 becomes the refusal's
   * code (adjust_error_code) */
  GPS_CLIENT (client)->setup_refusal =
      gps_client_mount_request (GPS_CLIENT (client), uri, TRUE);
  return GST_RTSP_CLIENT_CLASS (gps_client_parent_class)->make_path_from_uri
      (client, uri);
}

static GstRTSPStatusCode
gps_client_adjust_error_code (GstRTSPClient * client, GstRTSPContext * ctx,
    GstRTSPStatusCode code)
{
  GpsClient *self = GPS_CLIENT (client);

  /* a SETUP of an empty or untypable file: 415, as its DESCRIBE gets */
  if (ctx != NULL && ctx->method == GST_RTSP_SETUP &&
      code == GST_RTSP_STS_NOT_FOUND &&
      self->setup_refusal == GST_RTSP_STS_UNSUPPORTED_MEDIA_TYPE)
    return self->setup_refusal;
  return code;
}

/* A PLAY is answered with an open range (npt=A- for npt=A-B): rtspsrc makes
 * the end of the answer's range an npt-stop in its caps, from which its
 * jitterbuffer pushes an EOS of its own when the last packet is due; with
 * the BYE's EOS racing it, rtspsrc over TCP sometimes never posted EOS and
 * hung in its shutdown. The end stays in the DESCRIBE's a=range, where
 * clients take the duration from. */
static void
answer_play_with_open_range (GstRTSPClient * client, GstRTSPSession * session,
    GstRTSPMessage * message, gpointer user_data)
{
  GstRTSPContext *ctx = gst_rtsp_context_get_current ();
  GstRTSPStatusCode code;
  GstRTSPTimeRange *range = NULL;
  gchar *value = NULL;

  if (ctx == NULL || ctx->method != GST_RTSP_PLAY ||
      gst_rtsp_message_get_type (message) != GST_RTSP_MESSAGE_RESPONSE ||
      gst_rtsp_message_parse_response (message, &code, NULL, NULL) !=
      GST_RTSP_OK || code != GST_RTSP_STS_OK ||
      gst_rtsp_message_get_header (message, GST_RTSP_HDR_RANGE, &value, 0) !=
      GST_RTSP_OK || gst_rtsp_range_parse (value, &range) != GST_RTSP_OK)
    return;
  if (range->unit == GST_RTSP_RANGE_NPT &&
      range->max.type == GST_RTSP_TIME_SECONDS) {
    range->max.type = GST_RTSP_TIME_END;
    gst_rtsp_message_remove_header (message, GST_RTSP_HDR_RANGE, -1);
    gst_rtsp_message_take_header (message, GST_RTSP_HDR_RANGE,
        gst_rtsp_range_to_string (range));
  }
  gst_rtsp_range_free (range);
}

static void
on_new_session (GstRTSPClient * client, GstRTSPSession * session,
    gpointer user_data)
{
  gst_rtsp_session_set_timeout (session, opt_session_timeout);
}

/* --backend's nick, as the elements' backend property reads it */
static GstGpuStreamBackend
backend_from_nick (const gchar * nick)
{
  g_autoptr (GEnumClass) backends = g_type_class_ref
      (GST_TYPE_GPUSTREAM_BACKEND);
  GEnumValue *value = g_enum_get_value_by_nick (backends, nick);

  return value != NULL ? value->value : GST_GPUSTREAM_BACKEND_AUTO;
}

/* SRTP and network-coded sessions of MPEG-TS files go to the shared
 * sender, which protects each round's SRTP packets of all of them in one
 * batch and hands the round's generations to the coder pool together,
 * unless --cycle puts them on the device's scheduler, or --backend asks for
 * a GPU there is not (their gpusrtpenc or ncencoder then refuses, saying
 * why) */
static gboolean
shared_coding (void)
{
  if (opt_cycle_us > 0)
    return FALSE;
  return strcmp (opt_backend, "cpu") == 0 || strcmp (opt_backend, "auto") == 0
      || gst_gpustream_gpu_available ();
}

/* rtpncpay's packets at its default MTU: the largest coded packet (header
 * and block, seeded) in an RTP packet of 1400 bytes */
#define NC_SHARED_MAX_BLOCK (1400 - 12 - NC_HEADER_SIZE)

/* the network-coded sessions the shared sender takes: NULL (they stay on
 * pipelines, whose elements say what is wrong) when the coding options are
 * ones rtpncpay would refuse or too small for the framing */
static const ServerSenderNc *
shared_nc (void)
{
  static ServerSenderNc nc;

  if (!shared_coding () || opt_nc_block_size > NC_SHARED_MAX_BLOCK ||
      opt_nc_generation_size > NC_MAX_M ||
      (gint64) opt_nc_generation_size * opt_nc_block_size <=
      NC_FRAMING_PREFIX_SIZE + NC_RECORD_HEADER_SIZE)
    return NULL;
  nc.m = opt_nc_generation_size;
  nc.k = opt_nc_block_size;
  nc.redundancy_percent = opt_nc_redundancy_percent;
  return &nc;
}

/* The server: its clients are GpsClients */
#define GPS_TYPE_SERVER (gps_server_get_type ())
G_DECLARE_FINAL_TYPE (GpsServer, gps_server, GPS, SERVER, GstRTSPServer);

struct _GpsServer
{
  GstRTSPServer parent;
  GpsDirFactory *factory;
  GpsDirFactory *srtp_factory;
};

G_DEFINE_TYPE (GpsServer, gps_server, GST_TYPE_RTSP_SERVER);

/* what the parent's create_client configures, on a GpsClient */
static GstRTSPClient *
gps_server_create_client (GstRTSPServer * server)
{
  GpsServer *self = GPS_SERVER (server);
  GpsClient *client = g_object_new (GPS_TYPE_CLIENT, NULL);
  GstRTSPClient *base = GST_RTSP_CLIENT (client);
  GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool (server);
  GstRTSPMountPoints *mounts = gst_rtsp_server_get_mount_points (server);
  GstRTSPAuth *auth = gst_rtsp_server_get_auth (server);
  GstRTSPThreadPool *threads = gst_rtsp_server_get_thread_pool (server);

  client->factory = self->factory ? g_object_ref (self->factory) : NULL;
  client->srtp_factory = g_object_ref (self->srtp_factory);
  gst_rtsp_client_set_session_pool (base, pool);
  gst_rtsp_client_set_mount_points (base, mounts);
  gst_rtsp_client_set_auth (base, auth);
  gst_rtsp_client_set_thread_pool (base, threads);
  gst_rtsp_client_set_content_length_limit (base,
      gst_rtsp_server_get_content_length_limit (server));
  g_clear_object (&pool);
  g_clear_object (&mounts);
  g_clear_object (&auth);
  g_clear_object (&threads);

  g_signal_connect (base, "pre-describe-request",
      G_CALLBACK (check_request_path), NULL);
  g_signal_connect (base, "pre-setup-request",
      G_CALLBACK (check_request_path), NULL);
  g_signal_connect (base, "new-session", G_CALLBACK (on_new_session), NULL);
  g_signal_connect (base, "send-message",
      G_CALLBACK (answer_play_with_open_range), NULL);
  return base;
}

/* a client of gst-rtsp-server with no session, silent for --idle-timeout:
 * shut down (its thread then closes it) */
static GstRTSPFilterResult
shut_idle_client (GstRTSPServer * server, GstRTSPClient * client,
    gpointer user_data)
{
  GList *sessions = gst_rtsp_client_session_filter (client, NULL, NULL);
  GstRTSPConnection *conn;

  if (sessions != NULL) {
    g_list_free_full (sessions, g_object_unref);
    return GST_RTSP_FILTER_KEEP;
  }
  conn = gst_rtsp_client_get_connection (client);
  if (conn != NULL)
    server_front_idle (gst_rtsp_connection_get_read_socket (conn));
  return GST_RTSP_FILTER_KEEP;
}

/* Once a second: the session pool frees expired sessions (only when asked
 * to), idle connections are closed, and what the front door closed or
 * refused since the last line is said */
static gboolean
tick (gpointer server)
{
  static guint64 idle_said, refused_said;
  GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool (server);
  guint64 idle, refused;

  gst_rtsp_session_pool_cleanup (pool);
  g_object_unref (pool);
  gst_rtsp_server_client_filter (server, shut_idle_client, NULL);
  idle = server_front_idle_closed ();
  refused = server_front_refused ();
  if (idle != idle_said)
    g_print ("idle: closed %" G_GUINT64_FORMAT " connections without a "
        "session, silent for %d s (%" G_GUINT64_FORMAT " in all)\n",
        idle - idle_said, opt_idle_timeout, idle);
  if (refused != refused_said)
    g_print ("refused: %" G_GUINT64_FORMAT " request heads, too large (431) "
        "or malformed (400) (%" G_GUINT64_FORMAT " in all)\n",
        refused - refused_said, refused);
  if (idle != idle_said || refused != refused_said)
    fflush (stdout);
  idle_said = idle;
  refused_said = refused;
  return G_SOURCE_CONTINUE;
}

/* ---- stopping on SIGINT or SIGTERM ---- */

typedef struct
{
  GstRTSPServer *server;
  GMainLoop *loop;
  const gchar *signal;
  guint sessions;
} Stop;

static GstRTSPFilterResult
end_session (GstRTSPSessionPool * pool, GstRTSPSession * session,
    gpointer data)
{
  ((Stop *) data)->sessions++;
  return GST_RTSP_FILTER_REMOVE;
}

static GstRTSPFilterResult
close_client (GstRTSPServer * server, GstRTSPClient * client, gpointer data)
{
  return GST_RTSP_FILTER_REMOVE;
}

/* Every session ends (the lines they say when they end are said), every
 * client is closed, and the main loop stops: main says the last line */
static gboolean
on_stop_signal (gpointer data)
{
  Stop *stop = data;
  GstRTSPSessionPool *pool = gst_rtsp_server_get_session_pool (stop->server);

  /* the shared sender's sessions end with their connections */
  stop->sessions += server_direct_stop ();
  gst_rtsp_session_pool_filter (pool, end_session, stop);
  gst_rtsp_server_client_filter (stop->server, close_client, NULL);
  g_object_unref (pool);
  g_main_loop_quit (stop->loop);
  return G_SOURCE_REMOVE;
}

static gboolean
on_sigint (gpointer data)
{
  ((Stop *) data)->signal = "SIGINT";
  return on_stop_signal (data);
}

static gboolean
on_sigterm (gpointer data)
{
  ((Stop *) data)->signal = "SIGTERM";
  return on_stop_signal (data);
}

/* ---- GObject boilerplate ---- */

/* the encoders array's free function: a session never asked for is NULL */
static void
unref_encoder (gpointer enc)
{
  if (enc != NULL)
    gst_object_unref (enc);
}

static void
gps_srtp_media_finalize (GObject * object)
{
  GpsSrtpMedia *self = GPS_SRTP_MEDIA (object);

  g_ptr_array_unref (self->encoders);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (gps_srtp_media_parent_class)->finalize (object);
}

static void
gps_srtp_media_class_init (GpsSrtpMediaClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gps_srtp_media_finalize;
  GST_RTSP_MEDIA_CLASS (klass)->setup_rtpbin = gps_srtp_media_setup_rtpbin;
  GST_RTSP_MEDIA_CLASS (klass)->setup_sdp = gps_srtp_media_setup_sdp;
  GST_RTSP_MEDIA_CLASS (klass)->unprepared = gps_srtp_media_unprepared;
}

static void
gps_srtp_media_init (GpsSrtpMedia * self)
{
  g_mutex_init (&self->lock);
  self->encoders = g_ptr_array_new_with_free_func (unref_encoder);
}

static void
gps_dir_factory_finalize (GObject * object)
{
  GpsDirFactory *self = GPS_DIR_FACTORY (object);

  g_free (self->root_real);
  g_free (self->proxy_base);
  g_clear_object (&self->mounts);
  g_mutex_clear (&self->uri_lock);
  G_OBJECT_CLASS (gps_dir_factory_parent_class)->finalize (object);
}

static void
gps_dir_factory_class_init (GpsDirFactoryClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gps_dir_factory_finalize;
  GST_RTSP_MEDIA_FACTORY_CLASS (klass)->create_element =
      gps_dir_factory_create_element;
  GST_RTSP_MEDIA_FACTORY_CLASS (klass)->media_constructed =
      gps_dir_factory_media_constructed;
  GST_RTSP_MEDIA_FACTORY_CLASS (klass)->construct = gps_dir_factory_construct;
}

static void
gps_dir_factory_init (GpsDirFactory * self)
{
  g_mutex_init (&self->uri_lock);
}

static void
gps_client_finalize (GObject * object)
{
  g_clear_object (&GPS_CLIENT (object)->factory);
  g_clear_object (&GPS_CLIENT (object)->srtp_factory);
  G_OBJECT_CLASS (gps_client_parent_class)->finalize (object);
}

static void
gps_client_class_init (GpsClientClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gps_client_finalize;
  GST_RTSP_CLIENT_CLASS (klass)->make_path_from_uri =
      gps_client_make_path_from_uri;
  GST_RTSP_CLIENT_CLASS (klass)->adjust_error_code =
      gps_client_adjust_error_code;
}

static void
gps_client_init (GpsClient * self)
{
}

static void
gps_server_finalize (GObject * object)
{
  g_clear_object (&GPS_SERVER (object)->factory);
  g_clear_object (&GPS_SERVER (object)->srtp_factory);
  G_OBJECT_CLASS (gps_server_parent_class)->finalize (object);
}

static void
gps_server_class_init (GpsServerClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gps_server_finalize;
  GST_RTSP_SERVER_CLASS (klass)->create_client = gps_server_create_client;
}

static void
gps_server_init (GpsServer * self)
{
  GstRTSPThreadPool *threads = gst_rtsp_server_get_thread_pool
      (GST_RTSP_SERVER (self));

  /* --client-threads threads for the connections, taken in turn
   * (gst-rtsp-server's default is one for all): a request that waits holds
   * only the clients of its thread. Not one each when serving a directory:
   * thousands of idle connections would be thousands of threads. A proxy
   * gets one each: its requests wait for the origin. */
  gst_rtsp_thread_pool_set_max_threads (threads, opt_client_threads > 0 ?
      opt_client_threads : opt_proxy != NULL ? -1 : 16);
  g_object_unref (threads);
}

/* the factory of the plain and network-coded mounts, or with srtp that of
 * the SRTP mounts; proxy_base is NULL, or root_real is */
static GpsDirFactory *
gps_dir_factory_new (const gchar * root_real, const gchar * proxy_base,
    gboolean srtp)
{
  GpsDirFactory *self = g_object_new (GPS_TYPE_DIR_FACTORY, NULL);
  GstRTSPMediaFactory *factory = GST_RTSP_MEDIA_FACTORY (self);

  self->root_real = g_strdup (root_real);
  self->proxy_base = g_strdup (proxy_base);
  /* each client gets its own pipeline: its own position, pause and seek */
  gst_rtsp_media_factory_set_shared (factory, FALSE);
  if (srtp) {
    gst_rtsp_media_factory_set_media_gtype (factory, GPS_TYPE_SRTP_MEDIA);
    gst_rtsp_media_factory_set_profiles (factory, GST_RTSP_PROFILE_SAVP);
  }
  return self;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) optctx = NULL;
  GError *err = NULL;
  char root_real[PATH_MAX];
  g_autofree gchar *proxy_base = NULL;
  GstRTSPServer *server;
  GstRTSPSessionPool *pool;
  GMainLoop *loop;
  Stop stop = { NULL };
  g_autofree gchar *service = NULL;
  struct stat st;
  /* the command line as given: what the workers are started with */
  g_auto (GStrv) command_line = g_strdupv (argv);
  int supervised;

  optctx = g_option_context_new ("DIR - serve every file of DIR over RTSP");
  g_option_context_set_description (optctx,
      "URLs:\n"
      "  rtsp://HOST:PORT/<file>       the file as plain RTP\n"
      "  rtsp://HOST:PORT/nc/<file>    the file network-coded (X-RLNC): "
      "rtspsrc ! rtpncdepay ! ncdecoder\n"
      "  rtsp://HOST:PORT/srtp/<file>  the file as SRTP (RTP/SAVP, the key "
      "in the SDP by MIKEY): rtspsrc plays it\n"
      "With --http-port HTTP_PORT:\n"
      "  http://HOST:HTTP_PORT/<file>  the file as it is (GET, HEAD, one "
      "byte range)\n"
      "With --proxy ORIGIN and no DIR:\n"
      "  rtsp://HOST:PORT/<path>       ORIGIN/<path> re-served as SRTP\n");
  g_option_context_add_main_entries (optctx, option_entries, NULL);
  g_option_context_add_main_entries (optctx, server_workers_option_entries (),
      NULL);
  g_option_context_add_group (optctx, gst_init_get_option_group ());
  if (!g_option_context_parse (optctx, &argc, &argv, &err)) {
    g_printerr ("gpustream-server: %s\n", err->message);
    g_clear_error (&err);
    return 2;
  }
  if (opt_proxy == NULL && argc != 2) {
    g_printerr ("gpustream-server: give one directory to serve "
        "(gpustream-server --help)\n");
    return 2;
  }
  if (opt_proxy != NULL && argc != 1) {
    g_printerr ("gpustream-server: --proxy re-serves its origin, "
        "give no directory too\n");
    return 2;
  }
  if (opt_port < 0 || opt_port > 65535 || opt_session_timeout <= 0
      || opt_max_sessions < 0 || opt_nc_generation_size <= 0
      || opt_nc_block_size <= 0 || opt_nc_redundancy_percent < 0
      || opt_nc_max_bitrate <= 0 || opt_cycle_us < 0
      || (opt_cycle_us > 0 && opt_cycle_us < 100)
      || opt_client_threads < 0 || opt_idle_timeout <= 0) {
    g_printerr ("gpustream-server: an option is out of range "
        "(port 0-65535, session and idle timeouts > 0, the nc sizes and "
        "rate > 0, "
        "redundancy >= 0, cycle 0 or >= 100, client threads >= 0)\n");
    return 2;
  }
  if (!server_workers_check_options (opt_proxy != NULL))
    return 2;
  if (opt_backend == NULL)
    opt_backend = g_strdup ("auto");
  if (!g_strv_contains ((const gchar *[]) {"auto", "cpu", "gpu", "hybrid",
              NULL}, opt_backend)) {
    g_printerr ("gpustream-server: --backend is auto, cpu, gpu or hybrid, "
        "not %s\n", opt_backend);
    return 2;
  }
  if (opt_ts_sessions == NULL)
    opt_ts_sessions = g_strdup ("shared");
  if (!g_strv_contains ((const gchar *[]) {"shared", "pipeline", NULL},
          opt_ts_sessions)) {
    g_printerr ("gpustream-server: --ts-sessions is shared or pipeline, "
        "not %s\n", opt_ts_sessions);
    return 2;
  }
  if (opt_proxy != NULL) {
    g_autoptr (GstUri) origin = gst_uri_from_string (opt_proxy);
    const gchar *scheme = origin ? gst_uri_get_scheme (origin) : NULL;

    if (scheme == NULL || !g_str_has_prefix (scheme, "rtsp")
        || gst_uri_get_host (origin) == NULL || gst_uri_get_query_table (origin)
        || gst_uri_get_fragment (origin)) {
      g_printerr ("gpustream-server: --proxy takes the RTSP URL of the "
          "origin, rtsp://HOST:PORT/ or rtsp://HOST:PORT/PATH/, not %s\n",
          opt_proxy);
      return 2;
    }
    /* each client's path is appended to it */
    proxy_base = g_str_has_suffix (opt_proxy, "/") ? g_strdup (opt_proxy)
        : g_strconcat (opt_proxy, "/", NULL);
  } else {
    if (realpath (argv[1], root_real) == NULL || stat (root_real, &st) != 0
        || !S_ISDIR (st.st_mode)) {
      g_printerr ("gpustream-server: %s is not a readable directory: %s\n",
          argv[1], g_strerror (errno ? errno : ENOTDIR));
      return 2;
    }
    /* the file "/" resolves to would be outside every prefix check below */
    if (strcmp (root_real, "/") == 0) {
      g_printerr ("gpustream-server: refusing to serve the root directory\n");
      return 2;
    }
  }

  /* with --workers N, this process only supervises them */
  supervised = server_workers_supervise (command_line, opt_address, opt_port,
      opt_proxy != NULL);
  if (supervised >= 0)
    return supervised;
  server_cache_register ();
  raise_descriptor_limit ();
  server_front_set_idle_timeout (opt_idle_timeout);
  server_front_guard_install ();

  loop = g_main_loop_new (NULL, FALSE);
  server = g_object_new (GPS_TYPE_SERVER, NULL);
  if (proxy_base == NULL)
    GPS_SERVER (server)->factory = gps_dir_factory_new (root_real, NULL, FALSE);
  GPS_SERVER (server)->srtp_factory = gps_dir_factory_new (proxy_base ? NULL :
      root_real, proxy_base, TRUE);
  if (opt_address != NULL)
    gst_rtsp_server_set_address (server, opt_address);
  service = g_strdup_printf ("%d", opt_port);
  gst_rtsp_server_set_service (server, service);
  /* gst-rtsp-server listens with a backlog of 5: a burst of clients
   * overflows it, and the kernel drops their SYNs for a second or resets
   * them (the workers' socket listens with SOMAXCONN as well) */
  gst_rtsp_server_set_backlog (server, SOMAXCONN);

  pool = gst_rtsp_server_get_session_pool (server);
  gst_rtsp_session_pool_set_max_sessions (pool, opt_max_sessions);

  /* no mount points yet: each file is mounted on its first request */

  if (proxy_base == NULL && strcmp (opt_ts_sessions, "shared") == 0 &&
      !server_direct_start (server, root_real, opt_address,
          opt_session_timeout, shared_coding (), shared_nc (),
          backend_from_nick (opt_backend),
          &err)) {
    g_printerr ("gpustream-server: %s\n", err->message);
    g_clear_error (&err);
    return 1;
  }

  /* before the URL is printed: whoever reads it may stop the server */
  stop.server = server;
  stop.loop = loop;
  g_unix_signal_add (SIGINT, on_sigint, &stop);
  g_unix_signal_add (SIGTERM, on_sigterm, &stop);
  if (!server_workers_listen (server, opt_address, opt_port,
          proxy_base ? NULL : root_real))
    return 1;
  g_timeout_add_seconds (1, tick, server);
  g_main_loop_run (loop);

  g_print ("gpustream-server: stopped by %s: %u sessions ended, %"
      G_GUINT64_FORMAT " idle connections closed, %" G_GUINT64_FORMAT
      " request heads refused\n", stop.signal, stop.sessions,
      server_front_idle_closed (), server_front_refused ());
  fflush (stdout);
  g_object_unref (pool);
  g_object_unref (server);
  g_main_loop_unref (loop);
  return 0;
}
