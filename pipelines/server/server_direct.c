/* server_direct.c: plain MPEG-TS sessions on the shared sender
 * (server_direct.h) */
#include <arpa/inet.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/socket.h>

#include <gst/rtsp/gstrtspconnection.h>
#include <gst/rtsp/gstrtsprange.h>
#include <gst/rtsp/gstrtsptransport.h>
#include <gst/sdp/gstmikey.h>

#include "server_direct.h"
#include "server_front.h"
#include "server_paths.h"
#include "server_sender.h"
#include "gpssrtp.h"

/* interleaved packets a connection may have queued before its session
 * waits (about 10 s of a 750 kbit/s stream) */
#define CONNECTION_BACKLOG 1024
#define PUBLIC_METHODS "OPTIONS, DESCRIBE, SETUP, PLAY, PAUSE, TEARDOWN, " \
  "GET_PARAMETER, SET_PARAMETER"
#define SESSION_DATA "gpustream-direct"

typedef struct
{
  GstRTSPServer *server;
  GstRTSPSessionPool *pool;
  gchar *root_real;
  guint session_timeout;
  /* SRTP mounts are served here too */
  gboolean srtp;
  /* network-coded ones too, coded so, when nc.m > 0 */
  ServerSenderNc nc;
  ServerSender *sender;
  GMainContext *context;
  /* the sessions on UDP by their client's RTCP address, for the receiver
   * reports that keep them alive */
  GMutex lock;
  GHashTable *by_rtcp;
  /* the connections served here (this thread's), for the idle sweep */
  GQueue conns;
} Direct;

static Direct *direct;

/* one RTSP connection served here */
typedef struct
{
  GstRTSPConnection *conn;
  GstRTSPWatch *watch;
  gchar *ip;
  gint port;
  /* the server's address on it, for the SDP's origin */
  gchar *local_ip;
  /* the sessions set up on it: ended with it, as gst-rtsp-server ends its
   * clients' */
  GList *sessions;
  gboolean shut;
  /* shut down for being idle without a session */
  gboolean idle;
  GList link;
  /* the key and SSRC the last DESCRIBE of an SRTP mount gave out in its
   * SDP (MIKEY), for the SETUP that follows it */
  gchar *offer_file;
  ServerSenderKey offer;
} DirectConn;

/* what a GstRTSPSession of the pool holds when it is ours */
typedef struct
{
  ServerSenderMedia *media;
  /* NULL once stopped (its connection closed) */
  ServerSenderSession *send;
  gchar *control;
  guint64 rtcp_key;
  /* SRTP and network-coded: the URL path, for the line said when it
   * ends */
  MountKind kind;
  gchar *path;
} DirectSession;

/* ---- sessions ---- */

static guint64
address_key (const struct sockaddr_in *sa)
{
  return ((guint64) ntohl (sa->sin_addr.s_addr) << 16) | ntohs (sa->sin_port);
}

static void
direct_session_stop (DirectSession * ds)
{
  ServerSenderSession *send;
  guint32 packets = 0, octets = 0, generations = 0;

  g_mutex_lock (&direct->lock);
  send = ds->send;
  ds->send = NULL;
  if (ds->rtcp_key != 0)
    g_hash_table_remove (direct->by_rtcp, &ds->rtcp_key);
  ds->rtcp_key = 0;
  g_mutex_unlock (&direct->lock);
  if (send == NULL)
    return;
  server_sender_session_counts (send, &packets, &octets, &generations);
  server_sender_session_free (send);
  /* what an SRTP session protected, or a network-coded one coded, as
   * their gpusrtpenc and ncencoder say it on the other mounts */
  if (ds->kind == MOUNT_SRTP && packets > 0)
    g_print ("srtp %s stream 0: shared sender protected %u packets, %u "
        "bytes (backend %s)\n", ds->path, packets, octets,
        server_sender_srtp_backend (direct->sender));
  else if (ds->kind == MOUNT_NC && packets > 0)
    g_print ("nc %s: shared sender sent %u packets of %u generations "
        "(backend %s)\n", ds->path, packets, generations,
        server_sender_backend (direct->sender));
  fflush (stdout);
}

/* when the pool's session is gone (teardown, expiry, connection closed) */
static void
direct_session_free (gpointer data)
{
  DirectSession *ds = data;

  direct_session_stop (ds);
  server_sender_media_unref (ds->media);
  g_free (ds->control);
  g_free (ds->path);
  g_free (ds);
}

/* our session named by the request's Session header, with a reference,
 * touched (the pool's find does); NULL when there is none */
static GstRTSPSession *
find_session (GstRTSPMessage * request, DirectSession ** ds)
{
  gchar *value = NULL;
  g_autofree gchar *id = NULL;
  GstRTSPSession *session;

  if (gst_rtsp_message_get_header (request, GST_RTSP_HDR_SESSION, &value,
          0) != GST_RTSP_OK)
    return NULL;
  id = g_strndup (value, strcspn (value, ";"));
  session = gst_rtsp_session_pool_find (direct->pool, g_strstrip (id));
  if (session == NULL)
    return NULL;
  *ds = g_object_get_data (G_OBJECT (session), SESSION_DATA);
  if (*ds == NULL || (*ds)->send == NULL) {
    g_object_unref (session);
    return NULL;
  }
  return session;
}

static void
conn_forget_session (DirectConn * c, GstRTSPSession * session)
{
  GList *link = g_list_find (c->sessions, session);

  if (link != NULL) {
    c->sessions = g_list_delete_link (c->sessions, link);
    g_object_unref (session);
  }
}

/* ---- requests ---- */

static void
set_session_header (GstRTSPMessage * response, GstRTSPSession * session)
{
  gst_rtsp_message_remove_header (response, GST_RTSP_HDR_SESSION, -1);
  gst_rtsp_message_take_header (response, GST_RTSP_HDR_SESSION,
      gst_rtsp_session_get_header (session));
}

/* What a request's URL names when it is served here: the file, its media
 * (a reference), its mount's kind and path */
typedef struct
{
  gchar *file;
  ServerSenderMedia *media;
  MountKind kind;
  gchar *path;
} Target;

static void
target_clear (Target * t)
{
  g_free (t->file);
  g_clear_pointer (&t->media, server_sender_media_unref);
  g_free (t->path);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Target, target_clear);

/* What a request's URL names, when it is served here: a 188-byte MPEG-TS
 * file with clock references, on a mount served here (plain; SRTP and
 * network-coded when they are). What the first request line of a
 * connection and every later request are routed by; FALSE (t left empty)
 * when not served here. */
static gboolean
request_target (const gchar * uri_string, Target * t)
{
  GstRTSPUrl *url = NULL;

  t->kind = MOUNT_PLAIN;
  if (uri_string == NULL || gst_rtsp_url_parse (uri_string, &url) !=
      GST_RTSP_OK || url == NULL)
    return FALSE;
  t->file = request_source (direct->root_real, NULL, url, &t->path,
      &t->kind);
  gst_rtsp_url_free (url);
  if (t->file == NULL || (t->kind == MOUNT_SRTP && !direct->srtp) ||
      (t->kind == MOUNT_NC && direct->nc.m == 0) ||
      (t->media = server_sender_media_get (t->file, NULL)) == NULL) {
    target_clear (t);
    memset (t, 0, sizeof *t);
    return FALSE;
  }
  return TRUE;
}

/* The SDP media lines of an SRTP stream: the profile, the key by MIKEY
 * (RFC 4567, as gst-rtsp-server writes it for srtpenc) and the SSRC it is
 * for */
static gboolean
append_srtp_media (GString * sdp, const ServerSenderKey * key)
{
  g_autoptr (GstBuffer) buf = gst_buffer_new_memdup (key->key,
      sizeof key->key);
  g_autoptr (GstCaps) caps = gst_gpu_srtp_make_src_caps (NULL, FALSE, buf,
      NULL, GST_GPU_SRTP_CIPHER_AES_128_ICM, GST_GPU_SRTP_AUTH_HMAC_SHA1_80,
      GST_GPU_SRTP_CIPHER_AES_128_ICM, GST_GPU_SRTP_AUTH_HMAC_SHA1_80);
  GstMIKEYMessage *msg = gst_mikey_message_new_from_caps (caps);
  g_autofree gchar *base64 = NULL;

  if (msg == NULL)
    return FALSE;
  gst_mikey_message_add_cs_srtp (msg, 0, key->ssrc, 0);
  base64 = gst_mikey_message_base64_encode (msg);
  gst_mikey_message_unref (msg);
  if (base64 == NULL)
    return FALSE;
  g_string_append_printf (sdp, "m=video 0 RTP/SAVP %d\r\n"
      "c=IN IP4 0.0.0.0\r\n"
      "a=rtpmap:%d MP2T/90000\r\n"
      "a=control:stream=0\r\n"
      "a=key-mgmt:mikey %s\r\n"
      "a=ssrc:%u cname:gpustream-server\r\n", SERVER_SENDER_PT,
      SERVER_SENDER_PT, base64, key->ssrc);
  return TRUE;
}

static gboolean
new_key (ServerSenderKey * key)
{
  key->ssrc = g_random_int ();
  return gst_gpu_srtp_random_bytes (key->key, sizeof key->key);
}

static GstRTSPStatusCode
handle_describe (DirectConn * c, const gchar * uri, const Target * t,
    GstRTSPMessage * response)
{
  GString *sdp;

  if (t->media == NULL)
    return GST_RTSP_STS_NOT_FOUND;
  sdp = g_string_new (NULL);
  g_string_append_printf (sdp, "v=0\r\n"
      "o=- %u 1 IN IP4 %s\r\n"
      "s=Session streamed by gpustream-server\r\n"
      "t=0 0\r\n"
      "a=tool:gpustream-server\r\n"
      "a=control:*\r\n"
      "a=range:npt=0-\r\n", g_random_int (), c->local_ip);
  if (t->kind == MOUNT_SRTP) {
    /* a key and SSRC for this client, taken by its SETUP */
    if (!new_key (&c->offer) || !append_srtp_media (sdp, &c->offer)) {
      g_string_free (sdp, TRUE);
      return GST_RTSP_STS_INTERNAL_SERVER_ERROR;
    }
    g_free (c->offer_file);
    c->offer_file = g_strdup (t->file);
  } else if (t->kind == MOUNT_NC) {
    /* rtpncpay's caps, as gst-rtsp-server writes them */
    g_string_append_printf (sdp, "m=application 0 RTP/AVP %d\r\n"
        "c=IN IP4 0.0.0.0\r\n"
        "a=rtpmap:%d X-RLNC/90000\r\n"
        "a=fmtp:%d sprop-generation-size=%u;sprop-block-size=%u\r\n"
        "a=control:stream=0\r\n", SERVER_SENDER_NC_PT,
        SERVER_SENDER_NC_PT, SERVER_SENDER_NC_PT, direct->nc.m,
        direct->nc.k);
  } else {
    g_string_append_printf (sdp, "m=video 0 RTP/AVP %d\r\n"
        "c=IN IP4 0.0.0.0\r\n"
        "a=rtpmap:%d MP2T/90000\r\n"
        "a=control:stream=0\r\n", SERVER_SENDER_PT, SERVER_SENDER_PT);
  }
  gst_rtsp_message_add_header (response, GST_RTSP_HDR_CONTENT_TYPE,
      "application/sdp");
  gst_rtsp_message_take_header (response, GST_RTSP_HDR_CONTENT_BASE,
      g_str_has_suffix (uri, "/") ? g_strdup (uri) :
      g_strconcat (uri, "/", NULL));
  gst_rtsp_message_take_body (response, (guint8 *) sdp->str, sdp->len);
  g_string_free (sdp, FALSE);
  return GST_RTSP_STS_OK;
}

/* A SETUP URL is the mount's, or its one stream's (stream=0, as the SDP
 * names it) */
static gboolean
names_the_stream (const gchar * uri, const gchar * mount_path)
{
  GstRTSPUrl *url = NULL;
  gboolean ok;

  if (gst_rtsp_url_parse (uri, &url) != GST_RTSP_OK || url == NULL)
    return FALSE;
  ok = strcmp (url->abspath, mount_path) == 0 ||
      (g_str_has_prefix (url->abspath, mount_path) &&
      strcmp (url->abspath + strlen (mount_path), "/stream=0") == 0);
  gst_rtsp_url_free (url);
  return ok;
}

/* the first transport of the client's list that is served here */
static gboolean
choose_transport (GstRTSPMessage * request, GstRTSPProfile profile,
    GstRTSPTransport * chosen)
{
  gchar *value = NULL;
  g_auto (GStrv) choices = NULL;

  if (gst_rtsp_message_get_header (request, GST_RTSP_HDR_TRANSPORT, &value,
          0) != GST_RTSP_OK)
    return FALSE;
  choices = g_strsplit (value, ",", 0);
  for (guint i = 0; choices[i] != NULL; i++) {
    gst_rtsp_transport_init (chosen);
    if (gst_rtsp_transport_parse (choices[i], chosen) != GST_RTSP_OK)
      continue;
    if (chosen->trans == GST_RTSP_TRANS_RTP &&
        chosen->profile == profile &&
        ((chosen->lower_transport == GST_RTSP_LOWER_TRANS_UDP &&
                chosen->client_port.min > 0 &&
                chosen->client_port.min < 65535) ||
            chosen->lower_transport == GST_RTSP_LOWER_TRANS_TCP))
      return TRUE;
    gst_rtsp_transport_init (chosen);
  }
  return FALSE;
}

/* the sender's writer of a session interleaved in connection c */
static gboolean
write_interleaved (gpointer data, guint8 * frame, gsize size)
{
  DirectConn *c = data;

  return gst_rtsp_watch_write_data (c->watch, frame, size, NULL) ==
      GST_RTSP_OK;
}

static GstRTSPStatusCode
handle_setup (DirectConn * c, const gchar * uri, const Target * t,
    GstRTSPMessage * request, GstRTSPMessage * response)
{
  const gchar *file = t->file;
  MountKind kind = t->kind;
  GstRTSPTransport transport = { 0 };
  GstRTSPSession *session;
  DirectSession *ds;
  ServerSenderKey key;
  const gchar *profile = kind == MOUNT_SRTP ? "RTP/SAVP" : "RTP/AVP";
  gchar *value = NULL;
  gchar *reply;

  if (t->media == NULL || !names_the_stream (uri, t->path))
    return GST_RTSP_STS_NOT_FOUND;
  /* one stream: a second SETUP in a session has nothing to add */
  if (gst_rtsp_message_get_header (request, GST_RTSP_HDR_SESSION, &value,
          0) == GST_RTSP_OK)
    return GST_RTSP_STS_AGGREGATE_OPERATION_NOT_ALLOWED;
  if (!choose_transport (request, kind == MOUNT_SRTP ?
          GST_RTSP_PROFILE_SAVP : GST_RTSP_PROFILE_AVP, &transport))
    return GST_RTSP_STS_UNSUPPORTED_TRANSPORT;
  if (kind == MOUNT_SRTP) {
    /* the key of this connection's SDP of the file; a SETUP without one
     * gets a key nobody knows */
    if (g_strcmp0 (c->offer_file, file) == 0)
      key = c->offer;
    else if (!new_key (&key)) {
      gst_rtsp_transport_init (&transport);
      return GST_RTSP_STS_INTERNAL_SERVER_ERROR;
    }
  }
  ds = g_new0 (DirectSession, 1);
  if (kind == MOUNT_NC &&
      !server_sender_media_prepare_nc (t->media, &direct->nc)) {
    g_free (ds);
    gst_rtsp_transport_init (&transport);
    return GST_RTSP_STS_NOT_FOUND;
  }
  ds->media = server_sender_media_ref (t->media);
  /* NULL at --max-sessions */
  session = gst_rtsp_session_pool_create (direct->pool);
  if (session == NULL) {
    server_sender_media_unref (ds->media);
    g_free (ds);
    gst_rtsp_transport_init (&transport);
    return GST_RTSP_STS_SERVICE_UNAVAILABLE;
  }
  gst_rtsp_session_set_timeout (session, direct->session_timeout);
  /* "id;timeout=N" in its header even at the default 60 */
  g_object_set (session, "timeout-always-visible", TRUE, NULL);
  ds->control = g_strdup (uri);
  ds->kind = kind;
  ds->path = strip_stream_control (t->path);

  if (transport.lower_transport == GST_RTSP_LOWER_TRANS_TCP) {
    guint rtp = transport.interleaved.min >= 0 &&
        transport.interleaved.min < 255 ? transport.interleaved.min : 0;

    ds->send = server_sender_session_new_tcp (direct->sender, ds->media,
        kind == MOUNT_SRTP ? &key : NULL, kind == MOUNT_NC ? &direct->nc :
        NULL, rtp, write_interleaved, c);
    /* alive as long as its connection is */
    gst_rtsp_session_prevent_expire (session);
    reply = g_strdup_printf ("%s/TCP;unicast;interleaved=%u-%u;"
        "ssrc=%08X;mode=\"PLAY\"", profile, rtp, rtp + 1,
        server_sender_session_ssrc (ds->send));
  } else {
    struct sockaddr_in rtp_to = { 0 }, rtcp_to;
    gint rtcp_port = transport.client_port.max > 0 ?
        transport.client_port.max : transport.client_port.min + 1;

    /* the client's own address: a Transport destination is not obeyed */
    rtp_to.sin_family = AF_INET;
    inet_pton (AF_INET, c->ip, &rtp_to.sin_addr);
    rtcp_to = rtp_to;
    rtp_to.sin_port = htons (transport.client_port.min);
    rtcp_to.sin_port = htons (rtcp_port);
    ds->send = server_sender_session_new_udp (direct->sender, ds->media,
        kind == MOUNT_SRTP ? &key : NULL, kind == MOUNT_NC ? &direct->nc :
        NULL, &rtp_to, &rtcp_to);
    ds->rtcp_key = address_key (&rtcp_to);
    g_mutex_lock (&direct->lock);
    g_hash_table_insert (direct->by_rtcp, &ds->rtcp_key, session);
    g_mutex_unlock (&direct->lock);
    reply = g_strdup_printf ("%s;unicast;client_port=%d-%d;"
        "server_port=%u-%u;ssrc=%08X;mode=\"PLAY\"", profile,
        transport.client_port.min, rtcp_port,
        server_sender_rtp_port (direct->sender),
        server_sender_rtp_port (direct->sender) + 1,
        server_sender_session_ssrc (ds->send));
  }
  gst_rtsp_transport_init (&transport);
  g_object_set_data_full (G_OBJECT (session), SESSION_DATA, ds,
      direct_session_free);
  c->sessions = g_list_prepend (c->sessions, session);
  gst_rtsp_message_take_header (response, GST_RTSP_HDR_TRANSPORT, reply);
  set_session_header (response, session);
  return GST_RTSP_STS_OK;
}

/* Where a PLAY's npt start (seconds) is in the presentation: nanoseconds
 * after the file's first PTS, or -1 past its end. npt counts from the
 * start of the presentation (RFC 2326 3.6, RFC 7826 4.4.2), but
 * libavformat (ffmpeg, ffplay, mpv: User-Agent "Lavf") asks for an MPEG-TS
 * over RTP in the file's own PTS timeline: its start_time comes from the
 * PTS of the packets it got, the inner TS's, and it asks for start_time
 * plus the time wanted. A time that only that reading fits (within the
 * file's first..last PTS, past the presentation's length: mpegtsmux's PTS
 * start at 3600 s) is read so from any client; one that both fit (a file
 * whose PTS start before its length, ffmpeg's from 1.4 s) from libavformat
 * only. */
static gint64
range_start_ns (const ServerMpegtsIndex * index, gdouble seconds,
    gboolean lavf)
{
  gdouble span = (index->first_pts >= 0 ? index->pts_span_ns :
      index->duration_ns) / 1e9;
  gdouble own = index->first_pts / 90000.0;
  gboolean in_own = index->first_pts >= 0 && seconds >= own &&
      seconds <= own + span;

  if (seconds < 0)
    return -1;
  if (in_own && (lavf || seconds > span))
    return (seconds - own) * 1e9;
  if (seconds <= span)
    return seconds * 1e9;
  return -1;
}

/* *start: the session to start once the answer is on its way (interleaved
 * packets must not go before it) */
static GstRTSPStatusCode
handle_play (GstRTSPMessage * request, GstRTSPMessage * response,
    GstRTSPSession ** start)
{
  DirectSession *ds = NULL;
  GstRTSPSession *session = find_session (request, &ds);
  const ServerMpegtsIndex *index;
  gchar *value = NULL;
  GstRTSPTimeRange *range = NULL;
  GstRTSPTimeRange answer = { 0 };
  gint64 from_packet = -1;
  guint64 start_ns, at_ns = 0;
  guint16 seq;
  guint32 rtptime;

  if (session == NULL)
    return GST_RTSP_STS_SESSION_NOT_FOUND;
  index = server_sender_media_index (ds->media);
  if (gst_rtsp_message_get_header (request, GST_RTSP_HDR_RANGE, &value,
          0) == GST_RTSP_OK) {
    if (gst_rtsp_range_parse (value, &range) != GST_RTSP_OK ||
        range->unit != GST_RTSP_RANGE_NPT) {
      gst_rtsp_range_free (range);
      g_object_unref (session);
      return GST_RTSP_STS_HEADER_FIELD_NOT_VALID_FOR_RESOURCE;
    }
    if (range->min.type == GST_RTSP_TIME_SECONDS) {
      gchar *agent = NULL;
      gint64 asked;

      gst_rtsp_message_get_header (request, GST_RTSP_HDR_USER_AGENT, &agent,
          0);
      asked = range_start_ns (index, range->min.seconds, agent != NULL &&
          g_str_has_prefix (agent, "Lavf"));

      if (asked < 0) {
        /* refused, and the stream ends (a BYE once the answer is out): a
         * client that goes on reading after a failed seek (ffmpeg does,
         * after the PAUSE before it) ends instead of waiting on a paused
         * session */
        gst_rtsp_range_free (range);
        server_sender_session_seek (ds->send, G_MAXINT64, &seq, &rtptime,
            &start_ns);
        *start = session;
        return GST_RTSP_STS_INVALID_RANGE;
      }
      /* a random access point at or before it */
      from_packet = server_mpegts_index_seek_pts (index, asked, &at_ns);
    }
    gst_rtsp_range_free (range);
  }
  server_sender_session_seek (ds->send, from_packet, &seq, &rtptime,
      &start_ns);
  *start = g_object_ref (session);
  answer.unit = GST_RTSP_RANGE_NPT;
  answer.min.type = GST_RTSP_TIME_SECONDS;
  answer.min.seconds = (from_packet >= 0 ? at_ns : start_ns) / 1e9;
  /* open-ended, as for the pipeline sessions: the stream's last clock
   * reference is not its last presentation time, and a client clips what
   * comes after a stop time given here */
  answer.max.type = GST_RTSP_TIME_END;
  gst_rtsp_message_take_header (response, GST_RTSP_HDR_RANGE,
      gst_rtsp_range_to_string (&answer));
  gst_rtsp_message_take_header (response, GST_RTSP_HDR_RTP_INFO,
      g_strdup_printf ("url=%s;seq=%u;rtptime=%u", ds->control, seq, rtptime));
  set_session_header (response, session);
  g_object_unref (session);
  return GST_RTSP_STS_OK;
}

static GstRTSPStatusCode
handle_session_request (DirectConn * c, GstRTSPMethod method,
    GstRTSPMessage * request, GstRTSPMessage * response)
{
  DirectSession *ds = NULL;
  GstRTSPSession *session = find_session (request, &ds);

  if (session == NULL) {
    /* keep-alives without a session are answered too */
    if (method == GST_RTSP_GET_PARAMETER || method == GST_RTSP_SET_PARAMETER)
      return GST_RTSP_STS_OK;
    return GST_RTSP_STS_SESSION_NOT_FOUND;
  }
  set_session_header (response, session);
  if (method == GST_RTSP_PAUSE) {
    server_sender_session_pause (ds->send);
  } else if (method == GST_RTSP_TEARDOWN) {
    direct_session_stop (ds);
    conn_forget_session (c, session);
    gst_rtsp_session_pool_remove (direct->pool, session);
  }
  g_object_unref (session);
  return GST_RTSP_STS_OK;
}

/* Whether this thread answers the request: everything about a plain
 * MPEG-TS file or one of its sessions */
static gboolean
request_is_ours (GstRTSPMethod method, const Target * t,
    GstRTSPMessage * request)
{
  DirectSession *ds;
  GstRTSPSession *session;
  gchar *value;

  switch (method) {
    case GST_RTSP_OPTIONS:
      return TRUE;
    case GST_RTSP_DESCRIBE:
    case GST_RTSP_SETUP:
      return t->file != NULL;
    case GST_RTSP_PLAY:
    case GST_RTSP_PAUSE:
    case GST_RTSP_TEARDOWN:
    case GST_RTSP_GET_PARAMETER:
    case GST_RTSP_SET_PARAMETER:
      if (gst_rtsp_message_get_header (request, GST_RTSP_HDR_SESSION, &value,
              0) != GST_RTSP_OK)
        return TRUE;
      session = find_session (request, &ds);
      if (session == NULL)
        return FALSE;
      g_object_unref (session);
      return TRUE;
    default:
      return FALSE;
  }
}

/* The request as it came (its headers in the library's order; headers it
 * does not know are left out) */
static gchar *
request_text (GstRTSPMessage * request)
{
  GstRTSPMethod method;
  const gchar *uri;
  GstRTSPVersion version;
  GString *text = g_string_new (NULL);
  guint8 *body = NULL;
  guint body_size = 0;

  gst_rtsp_message_parse_request (request, &method, &uri, &version);
  g_string_append_printf (text, "%s %s RTSP/1.0\r\n",
      gst_rtsp_method_as_text (method), uri);
  for (GstRTSPHeaderField field = GST_RTSP_HDR_ACCEPT;
      field < GST_RTSP_HDR_LAST; field++) {
    gchar *value;

    if (field == GST_RTSP_HDR_CONTENT_LENGTH)
      continue;
    for (gint i = 0; gst_rtsp_message_get_header (request, field, &value,
            i) == GST_RTSP_OK; i++)
      g_string_append_printf (text, "%s: %s\r\n",
          gst_rtsp_header_as_text (field), value);
  }
  gst_rtsp_message_get_body (request, &body, &body_size);
  if (body_size > 0)
    g_string_append_printf (text, "Content-Length: %u\r\n", body_size);
  g_string_append (text, "\r\n");
  if (body_size > 0)
    g_string_append_len (text, (const gchar *) body, body_size);
  return g_string_free (text, FALSE);
}

static void conn_shut (DirectConn * c);

/* A connection with no session here asks for something served by
 * gst-rtsp-server (another mount on the same connection): it goes there,
 * the request first. Its socket is handed over as a copy, since this
 * connection closes its own. */
static void
conn_hand_over (DirectConn * c, GstRTSPMessage * request)
{
  g_autofree gchar *text = request_text (request);
  GSocket *mine = gst_rtsp_connection_get_read_socket (c->conn);
  int fd = fcntl (g_socket_get_fd (mine), F_DUPFD_CLOEXEC, 0);
  GSocket *copy = fd >= 0 ? g_socket_new_from_fd (fd, NULL) : NULL;

  if (copy != NULL)
    gst_rtsp_server_transfer_connection (direct->server, copy, c->ip,
        c->port, text);
  else if (fd >= 0)
    close (fd);
  conn_shut (c);
}

static GstRTSPResult
on_message (GstRTSPWatch * watch, GstRTSPMessage * request, gpointer data)
{
  DirectConn *c = data;
  GstRTSPMethod method;
  const gchar *uri = NULL;
  GstRTSPVersion version;
  GstRTSPMessage response = { 0 };
  GstRTSPStatusCode code;
  GstRTSPSession *start = NULL;
  g_auto (Target) target = { NULL };

  if (gst_rtsp_message_get_type (request) != GST_RTSP_MESSAGE_REQUEST)
    return GST_RTSP_OK;
  if (gst_rtsp_message_parse_request (request, &method, &uri,
          &version) != GST_RTSP_OK)
    return GST_RTSP_OK;
  /* the directory is looked up once per request */
  if (method == GST_RTSP_DESCRIBE || method == GST_RTSP_SETUP)
    request_target (uri, &target);
  if (c->sessions == NULL && !request_is_ours (method, &target, request)) {
    conn_hand_over (c, request);
    return GST_RTSP_OK;
  }
  gst_rtsp_message_init_response (&response, GST_RTSP_STS_OK, NULL, request);
  switch (method) {
    case GST_RTSP_OPTIONS:
      gst_rtsp_message_add_header (&response, GST_RTSP_HDR_PUBLIC,
          PUBLIC_METHODS);
      code = GST_RTSP_STS_OK;
      break;
    case GST_RTSP_DESCRIBE:
      code = handle_describe (c, uri, &target, &response);
      break;
    case GST_RTSP_SETUP:
      code = handle_setup (c, uri, &target, request, &response);
      break;
    case GST_RTSP_PLAY:
      code = handle_play (request, &response, &start);
      break;
    case GST_RTSP_PAUSE:
    case GST_RTSP_TEARDOWN:
    case GST_RTSP_GET_PARAMETER:
    case GST_RTSP_SET_PARAMETER:
      code = handle_session_request (c, method, request, &response);
      break;
    case GST_RTSP_INVALID:
      code = GST_RTSP_STS_BAD_REQUEST;
      break;
    default:
      code = GST_RTSP_STS_METHOD_NOT_ALLOWED;
      gst_rtsp_message_add_header (&response, GST_RTSP_HDR_ALLOW,
          PUBLIC_METHODS);
      break;
  }
  if (code != GST_RTSP_STS_OK) {
    /* the error alone: no header or body of the half-made answer */
    gst_rtsp_message_unset (&response);
    gst_rtsp_message_init_response (&response, code, NULL, request);
    gst_rtsp_message_remove_header (&response, GST_RTSP_HDR_SESSION, -1);
  }
  gst_rtsp_message_add_header (&response, GST_RTSP_HDR_SERVER,
      "gpustream-server");
  gst_rtsp_watch_send_message (watch, &response, NULL);
  gst_rtsp_message_unset (&response);
  if (start != NULL) {
    DirectSession *ds = g_object_get_data (G_OBJECT (start), SESSION_DATA);

    g_mutex_lock (&direct->lock);
    if (ds->send != NULL)
      server_sender_session_start (ds->send);
    g_mutex_unlock (&direct->lock);
    g_object_unref (start);
  }
  return GST_RTSP_OK;
}

/* ---- connections ---- */

/* The connection is gone: its sessions end, the sender stops writing to
 * it, and the watch (the last reference after this) goes */
static void
conn_shut (DirectConn * c)
{
  if (c->shut)
    return;
  c->shut = TRUE;
  g_queue_unlink (&direct->conns, &c->link);
  for (GList * l = c->sessions; l != NULL; l = l->next) {
    GstRTSPSession *session = l->data;
    DirectSession *ds = g_object_get_data (G_OBJECT (session), SESSION_DATA);

    if (ds != NULL)
      direct_session_stop (ds);
    gst_rtsp_session_pool_remove (direct->pool, session);
  }
  g_list_free_full (c->sessions, g_object_unref);
  c->sessions = NULL;
  /* the sender writes no more to it: the watch may go */
  g_source_destroy ((GSource *) c->watch);
  gst_rtsp_watch_unref (c->watch);
}

static GstRTSPResult
on_closed (GstRTSPWatch * watch, gpointer data)
{
  conn_shut (data);
  return GST_RTSP_OK;
}

/* A request the parser refused: 400, as gst-rtsp-server answers, written
 * at once since the watch closes the connection next */
static GstRTSPResult
on_error_full (GstRTSPWatch * watch, GstRTSPResult result,
    GstRTSPMessage * message, guint id, gpointer data)
{
  DirectConn *c = data;

  if (result == GST_RTSP_EPARSE) {
    GstRTSPMessage response = { 0 };

    gst_rtsp_message_init_response (&response, GST_RTSP_STS_BAD_REQUEST,
        NULL, NULL);
    gst_rtsp_connection_send_usec (c->conn, &response, G_USEC_PER_SEC / 10);
    gst_rtsp_message_unset (&response);
  }
  return GST_RTSP_OK;
}

/* the watch stopped without a close (a failed write with nothing to read) */
static GstRTSPResult
on_error (GstRTSPWatch * watch, GstRTSPResult result, gpointer data)
{
  conn_shut (data);
  return GST_RTSP_OK;
}

/* the watch's last reference went, after conn_shut */
static void
conn_free (gpointer data)
{
  DirectConn *c = data;

  gst_rtsp_connection_free (c->conn);
  g_free (c->ip);
  g_free (c->local_ip);
  g_free (c->offer_file);
  memset (&c->offer, 0, sizeof c->offer);
  g_free (c);
}

static GstRTSPWatchFuncs watch_funcs = {
  .message_received = on_message,
  .closed = on_closed,
  .error_full = on_error_full,
  .error = on_error,
};

static void
serve_here (GSocket * socket, const gchar * ip, gint port, const gchar * head)
{
  DirectConn *c = g_new0 (DirectConn, 1);

  if (gst_rtsp_connection_create_from_socket (socket, ip, port, head,
          &c->conn) != GST_RTSP_OK) {
    g_free (c);
    return;
  }
  gst_rtsp_connection_set_content_length_limit (c->conn,
      gst_rtsp_server_get_content_length_limit (direct->server));
  c->ip = g_strdup (ip);
  c->port = port;
  {
    g_autoptr (GSocketAddress) local = g_socket_get_local_address (socket,
        NULL);

    c->local_ip = G_IS_INET_SOCKET_ADDRESS (local) ?
        g_inet_address_to_string (g_inet_socket_address_get_address
        (G_INET_SOCKET_ADDRESS (local))) : g_strdup ("0.0.0.0");
  }
  c->link.data = c;
  g_queue_push_tail_link (&direct->conns, &c->link);
  c->watch = gst_rtsp_watch_new (c->conn, &watch_funcs, c, conn_free);
  gst_rtsp_watch_set_send_backlog (c->watch, 0, CONNECTION_BACKLOG);
  /* our reference on the watch is kept until conn_shut: the sender may
   * write to it until then */
  gst_rtsp_watch_attach (c->watch, direct->context);
}

/* ---- the first request of a new client ---- */

/* TRUE when the request line asks for an MPEG-TS file served here */
static gboolean
first_line_is_ours (const gchar * head)
{
  g_autofree gchar *line = g_strndup (head, strcspn (head, "\r\n"));
  g_auto (GStrv) words = g_strsplit (line, " ", 0);
  g_auto (Target) target = { NULL };

  if (g_strv_length (words) != 3 || !g_str_has_prefix (words[2], "RTSP/"))
    return FALSE;
  return request_target (words[1], &target);
}

/* The client's first head is in (server_front.c): served here, or by
 * gst-rtsp-server (the shared sender sends from IPv4 sockets) */
static void
on_first_head (GSocket * socket, const gchar * ip, gint port,
    const gchar * head, gpointer data)
{
  /* the head may start with empty lines */
  const gchar *line = head + strspn (head, "\r\n");

  if (g_socket_get_family (socket) == G_SOCKET_FAMILY_IPV4 &&
      first_line_is_ours (line)) {
    serve_here (socket, ip, port, head);
    g_object_unref (socket);
  } else {
    gst_rtsp_server_transfer_connection (direct->server, socket, ip, port,
        head);
  }
}

void
server_direct_take (GSocket * socket, const gchar * ip, gint port)
{
  server_front_take (socket, ip, port, direct->context, on_first_head, NULL);
}

/* Connections without a session, silent for the idle timeout, are shut
 * (server_front_idle): their watch then closes them */
static gboolean
sweep_idle (gpointer unused)
{
  for (GList * l = direct->conns.head; l != NULL; l = l->next) {
    DirectConn *c = l->data;

    if (c->sessions == NULL && !c->idle)
      c->idle = server_front_idle (gst_rtsp_connection_get_read_socket
          (c->conn));
  }
  return G_SOURCE_CONTINUE;
}

/* ---- receiver reports ---- */

static gboolean
on_rtcp (GSocket * socket, GIOCondition condition, gpointer data)
{
  guint8 buf[1500];
  struct sockaddr_in from;
  socklen_t len = sizeof from;

  while (recvfrom (g_socket_get_fd (socket), buf, sizeof buf, MSG_DONTWAIT,
          (struct sockaddr *) &from, &len) >= 0) {
    guint64 key = address_key (&from);
    GstRTSPSession *session;

    g_mutex_lock (&direct->lock);
    session = g_hash_table_lookup (direct->by_rtcp, &key);
    if (session != NULL)
      gst_rtsp_session_touch (session);
    g_mutex_unlock (&direct->lock);
    len = sizeof from;
  }
  return G_SOURCE_CONTINUE;
}

static gpointer
direct_thread (gpointer data)
{
  GMainLoop *loop = g_main_loop_new (direct->context, FALSE);

  g_main_context_push_thread_default (direct->context);
  g_main_loop_run (loop);
  return NULL;
}

gboolean
server_direct_start (GstRTSPServer * server, const gchar * root_real,
    const gchar * address, guint session_timeout, gboolean srtp,
    const ServerSenderNc * nc, GstGpuStreamBackend backend, GError ** err)
{
  ServerSender *sender = server_sender_get (address, backend, err);
  GSocket *rtcp;
  GSource *source;

  if (sender == NULL)
    return FALSE;
  rtcp = g_socket_new_from_fd (server_sender_rtcp_fd (sender), err);
  if (rtcp == NULL)
    return FALSE;
  direct = g_new0 (Direct, 1);
  direct->server = g_object_ref (server);
  direct->pool = gst_rtsp_server_get_session_pool (server);
  direct->root_real = g_strdup (root_real);
  direct->session_timeout = session_timeout;
  direct->srtp = srtp;
  if (nc != NULL)
    direct->nc = *nc;
  direct->sender = sender;
  direct->context = g_main_context_new ();
  g_mutex_init (&direct->lock);
  direct->by_rtcp = g_hash_table_new (g_int64_hash, g_int64_equal);
  source = g_socket_create_source (rtcp, G_IO_IN, NULL);
  g_source_set_callback (source, G_SOURCE_FUNC (on_rtcp), NULL, NULL);
  g_source_attach (source, direct->context);
  g_source_unref (source);
  g_queue_init (&direct->conns);
  source = g_timeout_source_new_seconds (1);
  g_source_set_callback (source, sweep_idle, NULL, NULL);
  g_source_attach (source, direct->context);
  g_source_unref (source);
  /* the socket stays the sender's: this GSocket only watches it */
  g_thread_unref (g_thread_new ("rtsp-direct", direct_thread, NULL));
  return TRUE;
}

gboolean
server_direct_enabled (void)
{
  return direct != NULL;
}

/* ---- stopping ---- */

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  guint sessions;
} StopAll;

/* in the thread of the connections: each is shut, its sessions ended */
static gboolean
stop_all (gpointer data)
{
  StopAll *stop = data;

  while (direct->conns.head != NULL) {
    DirectConn *c = direct->conns.head->data;

    stop->sessions += g_list_length (c->sessions);
    conn_shut (c);
  }
  g_mutex_lock (&stop->lock);
  stop->done = TRUE;
  g_cond_signal (&stop->cond);
  g_mutex_unlock (&stop->lock);
  return G_SOURCE_REMOVE;
}

guint
server_direct_stop (void)
{
  StopAll stop = { 0 };

  if (direct == NULL)
    return 0;
  g_mutex_init (&stop.lock);
  g_cond_init (&stop.cond);
  g_main_context_invoke (direct->context, stop_all, &stop);
  g_mutex_lock (&stop.lock);
  while (!stop.done)
    g_cond_wait (&stop.cond, &stop.lock);
  g_mutex_unlock (&stop.lock);
  g_mutex_clear (&stop.lock);
  g_cond_clear (&stop.cond);
  return stop.sessions;
}
