/* gpustream-server: an RTSP video-on-demand server for a directory of media
 * files, on gst-rtsp-server.
 *
 *   gpustream-server [--port 8554] [--address 127.0.0.1] DIR
 *
 * rtsp://HOST:PORT/<file>     plays DIR/<file> as plain RTP (any RTSP client)
 * rtsp://HOST:PORT/nc/<file>  plays it network-coded (ncencoder ! rtpncpay,
 *                             X-RLNC); receive with rtpncdepay ! ncdecoder
 *
 * No per-file configuration: each client's media is built from the path it
 * asks for. Paths that leave DIR (.., absolute, symlinks out) and missing
 * files are answered 404 Not Found before any pipeline is built.
 *
 * Network-coded video on demand is the server design of Jin Zhao, Xinya
 * Zhang, Xin Wang, "An Architecture Design of GPU-Accelerated VoD Streaming
 * Servers with Network Coding", 2010 (docs/server.md says what of it is
 * built so far).
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>

/* the URL prefix of the network-coded mount */
#define NC_PREFIX "/nc"

/* ---- options ---- */

static gint opt_port = 8554;
static gchar *opt_address = NULL;
static gint opt_session_timeout = 60;
static gint opt_max_sessions = 0;
static gint opt_nc_generation_size = 32;
static gint opt_nc_block_size = 1316;
static gint opt_nc_redundancy_percent = 30;
static gint opt_nc_max_bitrate = 4000000;
static gchar *opt_backend = NULL;

static GOptionEntry option_entries[] = {
  {"port", 'p', 0, G_OPTION_ARG_INT, &opt_port,
      "TCP port to listen on; 0 binds any free port (default 8554)", "PORT"},
  {"address", 'a', 0, G_OPTION_ARG_STRING, &opt_address,
      "Address to listen on (default 0.0.0.0)", "ADDR"},
  {"session-timeout", 't', 0, G_OPTION_ARG_INT, &opt_session_timeout,
        "Seconds without a request or RTCP from a client before its session "
        "is freed (default 60)", "SECONDS"},
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
        "Network-coded mount: where the coding runs, for all sessions through "
        "the one coder pool of the process: auto (the GPU when a CUDA device "
        "is usable), cpu, gpu or hybrid (default auto)", "BACKEND"},
  {"nc-max-bitrate", 0, 0, G_OPTION_ARG_INT, &opt_nc_max_bitrate,
        "Network-coded mount, files other than MPEG-TS: send rate in bit/s "
        "(MPEG-TS is sent at its own pace; default 4000000)", "BITS"},
  {NULL}
};

/* ---- the media directory: request path -> file, or nothing ---- */

typedef enum
{
  MOUNT_PLAIN,
  MOUNT_NC,
} MountKind;

/* The real path of the file a request path names, when it is a regular file
 * inside root_real; NULL otherwise (missing, outside, a directory). The path
 * is percent-decoded first and resolved with realpath(), so "..", encoded
 * dots and symlinks that leave the directory all end outside it. */
static gchar *
media_dir_resolve (const gchar * root_real, const gchar * abspath,
    MountKind * kind)
{
  g_autofree gchar *decoded = NULL;
  g_autofree gchar *joined = NULL;
  const gchar *rel;
  char resolved[PATH_MAX];
  struct stat st;
  gsize root_len = strlen (root_real);

  if (abspath == NULL || abspath[0] != '/')
    return NULL;
  /* NULL also for an encoded NUL byte */
  decoded = g_uri_unescape_string (abspath, NULL);
  if (decoded == NULL)
    return NULL;

  rel = decoded;
  *kind = MOUNT_PLAIN;
  if (g_str_has_prefix (rel, NC_PREFIX "/")) {
    *kind = MOUNT_NC;
    rel += strlen (NC_PREFIX);
  }
  while (*rel == '/')
    rel++;
  if (*rel == '\0')
    return NULL;

  joined = g_build_filename (root_real, rel, NULL);
  if (realpath (joined, resolved) == NULL)
    return NULL;
  if (strncmp (resolved, root_real, root_len) != 0 || resolved[root_len] != '/')
    return NULL;
  if (stat (resolved, &st) != 0 || !S_ISREG (st.st_mode))
    return NULL;
  return g_strdup (resolved);
}

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

/* A SETUP sent without a DESCRIBE before it names a stream of the media
 * (".../file.ts/stream=0"): the file is the path without that suffix. */
static gchar *
strip_stream_control (const gchar * abspath)
{
  const gchar *slash = strrchr (abspath, '/');

  if (slash != NULL && g_str_has_prefix (slash, "/stream="))
    return g_strndup (abspath, slash - abspath);
  return g_strdup (abspath);
}

/* A path is served under one spelling only, the percent-encoding of its
 * segments as URIs write them, with no "." or ".." segments: every servable
 * path is then one mount point, and the mount table stays as small as the
 * number of files asked for, whatever spellings clients try. */
static gboolean
path_is_canonical (const gchar * abspath)
{
  g_autofree gchar *decoded = g_uri_unescape_string (abspath, NULL);
  g_autofree gchar *reencoded = NULL;
  g_auto (GStrv) segments = NULL;

  if (decoded == NULL)
    return FALSE;
  segments = g_strsplit (decoded + 1, "/", -1);
  for (guint i = 0; segments[i] != NULL; i++)
    if (segments[i][0] == '\0' || strcmp (segments[i], ".") == 0
        || strcmp (segments[i], "..") == 0)
      return FALSE;
  reencoded = g_uri_escape_string (decoded,
      G_URI_RESERVED_CHARS_ALLOWED_IN_PATH, FALSE);
  return strcmp (reencoded, abspath) == 0;
}

/* The file a request names, or NULL: the path as it is, else without the
 * stream part of a SETUP URL; *mount_path is the path of the media. */
static gchar *
request_file (const gchar * root_real, const GstRTSPUrl * uri,
    gchar ** mount_path, MountKind * kind)
{
  gchar *file;

  *mount_path = g_strdup (uri->abspath);
  file = media_dir_resolve (root_real, *mount_path, kind);
  if (file == NULL) {
    g_free (*mount_path);
    *mount_path = strip_stream_control (uri->abspath);
    file = media_dir_resolve (root_real, *mount_path, kind);
  }
  if (file != NULL && !path_is_canonical (*mount_path))
    g_clear_pointer (&file, g_free);
  return file;
}

/* ---- the media factory: one pipeline per client, from its URL ---- */

#define GPS_TYPE_DIR_FACTORY (gps_dir_factory_get_type ())
G_DECLARE_FINAL_TYPE (GpsDirFactory, gps_dir_factory, GPS, DIR_FACTORY,
    GstRTSPMediaFactoryURI);

struct _GpsDirFactory
{
  GstRTSPMediaFactoryURI parent;
  gchar *root_real;
  /* the parent reads its "uri" property while building: one build at a time */
  GMutex uri_lock;
};

G_DEFINE_TYPE (GpsDirFactory, gps_dir_factory, GST_TYPE_RTSP_MEDIA_FACTORY_URI);

/* The pipeline of one client, from a description whose filesrc is named
 * "src"; its location is set as a property, so that no file name needs
 * quoting in the description */
static GstElement *
build_media_bin (const gchar * file, const gchar * description)
{
  GError *err = NULL;
  GstElement *bin = gst_parse_bin_from_description (description, FALSE, &err);
  GstElement *src;

  if (bin == NULL) {
    g_printerr ("gpustream-server: cannot build the pipeline for %s: %s\n",
        file, err->message);
    g_clear_error (&err);
    return NULL;
  }
  src = gst_bin_get_by_name (GST_BIN (bin), "src");
  g_object_set (src, "location", file, NULL);
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
  g_autofree gchar *file = request_file (self->root_real, url, &mount_path,
      &kind);
  g_autofree gchar *description = NULL;
  g_autofree gchar *uri = NULL;
  GstElement *element;
  gboolean mpegts;

  if (file == NULL)
    return NULL;
  mpegts = file_is_mpegts (file);
  /* MPEG-TS leaves at its own pace: tsparse timestamps it from its clock
   * references. Network-coded, anything else is a byte stream sent at
   * --nc-max-bitrate; plain, MPEG-TS goes out as it is (RTP/MP2T, RFC 2250) */
  if (kind == MOUNT_NC)
    description = g_strdup_printf ("filesrc name=src ! %s"
        "ncencoder generation-size=%d block-size=%d redundancy-percent=%d "
        "max-bitrate=%d backend=%s ! rtpncpay name=pay0 pt=96",
        mpegts ? "tsparse set-timestamps=true ! " : "",
        opt_nc_generation_size, opt_nc_block_size, opt_nc_redundancy_percent,
        mpegts ? 0 : opt_nc_max_bitrate, opt_backend);
  else if (mpegts)
    description = g_strdup ("filesrc name=src ! tsparse set-timestamps=true ! "
        "rtpmp2tpay name=pay0 pt=33");
  if (description != NULL)
    return build_media_bin (file, description);

  /* other containers: demuxed, and each stream payloaded, by the parent */
  uri = gst_filename_to_uri (file, NULL);
  if (uri == NULL)
    return NULL;
  g_mutex_lock (&self->uri_lock);
  gst_rtsp_media_factory_uri_set_uri (GST_RTSP_MEDIA_FACTORY_URI (self), uri);
  element = GST_RTSP_MEDIA_FACTORY_CLASS (gps_dir_factory_parent_class)
      ->create_element (factory, url);
  g_mutex_unlock (&self->uri_lock);
  return element;
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
  GpsDirFactory *factory;
};

G_DEFINE_TYPE (GpsClient, gps_client, GST_TYPE_RTSP_CLIENT);

/* Mounts the factory at the media path of a servable request; FALSE for a
 * path that is not served (missing, outside the directory, not canonical) */
static gboolean
gps_client_mount_request (GpsClient * self, const GstRTSPUrl * uri)
{
  g_autofree gchar *mount_path = NULL;
  g_autofree gchar *file = NULL;
  GstRTSPMountPoints *mounts;
  GstRTSPMediaFactory *found;
  MountKind kind;
  gint matched = 0;

  if (uri == NULL || uri->abspath == NULL)
    return FALSE;
  file = request_file (self->factory->root_real, uri, &mount_path, &kind);
  if (file == NULL)
    return FALSE;
  mounts = gst_rtsp_client_get_mount_points (GST_RTSP_CLIENT (self));
  if (mounts == NULL)
    return FALSE;
  found = gst_rtsp_mount_points_match (mounts, mount_path, &matched);
  if (found == NULL || matched != (gint) strlen (mount_path))
    gst_rtsp_mount_points_add_factory (mounts, mount_path,
        GST_RTSP_MEDIA_FACTORY (g_object_ref (self->factory)));
  g_clear_object (&found);
  g_object_unref (mounts);
  return TRUE;
}

/* DESCRIBE looks its path up after this signal, SETUP before it (through
 * make_path_from_uri below): both mount there, and the signal answers 404
 * for a file that is not (or no longer) served before a pipeline is tried */
static GstRTSPStatusCode
check_request_path (GstRTSPClient * client, GstRTSPContext * ctx,
    gpointer user_data)
{
  if (ctx->uri == NULL)
    return GST_RTSP_STS_BAD_REQUEST;
  return gps_client_mount_request (GPS_CLIENT (client), ctx->uri) ?
      GST_RTSP_STS_OK : GST_RTSP_STS_NOT_FOUND;
}

static gchar *
gps_client_make_path_from_uri (GstRTSPClient * client, const GstRTSPUrl * uri)
{
  gps_client_mount_request (GPS_CLIENT (client), uri);
  return GST_RTSP_CLIENT_CLASS (gps_client_parent_class)->make_path_from_uri
      (client, uri);
}

static void
on_new_session (GstRTSPClient * client, GstRTSPSession * session,
    gpointer user_data)
{
  gst_rtsp_session_set_timeout (session, opt_session_timeout);
}

/* The server: its clients are GpsClients */
#define GPS_TYPE_SERVER (gps_server_get_type ())
G_DECLARE_FINAL_TYPE (GpsServer, gps_server, GPS, SERVER, GstRTSPServer);

struct _GpsServer
{
  GstRTSPServer parent;
  GpsDirFactory *factory;
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

  client->factory = g_object_ref (self->factory);
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
  return base;
}

/* the session pool frees expired sessions only when asked to */
static gboolean
cleanup_sessions (gpointer data)
{
  gst_rtsp_session_pool_cleanup (GST_RTSP_SESSION_POOL (data));
  return G_SOURCE_CONTINUE;
}

/* ---- GObject boilerplate ---- */

static void
gps_dir_factory_finalize (GObject * object)
{
  GpsDirFactory *self = GPS_DIR_FACTORY (object);

  g_free (self->root_real);
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
  G_OBJECT_CLASS (gps_client_parent_class)->finalize (object);
}

static void
gps_client_class_init (GpsClientClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gps_client_finalize;
  GST_RTSP_CLIENT_CLASS (klass)->make_path_from_uri =
      gps_client_make_path_from_uri;
}

static void
gps_client_init (GpsClient * self)
{
}

static void
gps_server_finalize (GObject * object)
{
  g_clear_object (&GPS_SERVER (object)->factory);
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
}

static GpsDirFactory *
gps_dir_factory_new (const gchar * root_real)
{
  GpsDirFactory *self = g_object_new (GPS_TYPE_DIR_FACTORY, NULL);

  self->root_real = g_strdup (root_real);
  /* each client gets its own pipeline: its own position, pause and seek */
  gst_rtsp_media_factory_set_shared (GST_RTSP_MEDIA_FACTORY (self), FALSE);
  return self;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) optctx = NULL;
  GError *err = NULL;
  char root_real[PATH_MAX];
  GstRTSPServer *server;
  GstRTSPSessionPool *pool;
  GpsDirFactory *factory;
  GMainLoop *loop;
  g_autofree gchar *service = NULL;
  struct stat st;

  optctx = g_option_context_new ("DIR - serve every file of DIR over RTSP");
  g_option_context_set_description (optctx,
      "URLs:\n"
      "  rtsp://HOST:PORT/<file>     the file as plain RTP\n"
      "  rtsp://HOST:PORT/nc/<file>  the file network-coded (X-RLNC): "
      "rtspsrc ! rtpncdepay ! ncdecoder\n");
  g_option_context_add_main_entries (optctx, option_entries, NULL);
  g_option_context_add_group (optctx, gst_init_get_option_group ());
  if (!g_option_context_parse (optctx, &argc, &argv, &err)) {
    g_printerr ("gpustream-server: %s\n", err->message);
    g_clear_error (&err);
    return 2;
  }
  if (argc != 2) {
    g_printerr ("gpustream-server: give one directory to serve "
        "(gpustream-server --help)\n");
    return 2;
  }
  if (opt_port < 0 || opt_port > 65535 || opt_session_timeout <= 0
      || opt_max_sessions < 0 || opt_nc_generation_size <= 0
      || opt_nc_block_size <= 0 || opt_nc_redundancy_percent < 0
      || opt_nc_max_bitrate <= 0) {
    g_printerr ("gpustream-server: an option is out of range "
        "(port 0-65535, session timeout > 0, the nc sizes and rate > 0, "
        "redundancy >= 0)\n");
    return 2;
  }
  if (opt_backend == NULL)
    opt_backend = g_strdup ("auto");
  if (!g_strv_contains ((const gchar *[]) {"auto", "cpu", "gpu", "hybrid",
              NULL}, opt_backend)) {
    g_printerr ("gpustream-server: --backend is auto, cpu, gpu or hybrid, "
        "not %s\n", opt_backend);
    return 2;
  }
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

  loop = g_main_loop_new (NULL, FALSE);
  factory = gps_dir_factory_new (root_real);
  server = g_object_new (GPS_TYPE_SERVER, NULL);
  GPS_SERVER (server)->factory = g_object_ref (factory);
  if (opt_address != NULL)
    gst_rtsp_server_set_address (server, opt_address);
  service = g_strdup_printf ("%d", opt_port);
  gst_rtsp_server_set_service (server, service);

  pool = gst_rtsp_server_get_session_pool (server);
  gst_rtsp_session_pool_set_max_sessions (pool, opt_max_sessions);

  /* no mount points yet: each file is mounted on its first request */

  if (gst_rtsp_server_attach (server, NULL) == 0) {
    g_printerr ("gpustream-server: cannot listen on %s:%d\n",
        opt_address ? opt_address : "0.0.0.0", opt_port);
    return 1;
  }
  g_timeout_add_seconds (1, cleanup_sessions, pool);

  g_print ("rtsp://%s:%d/\n", opt_address ? opt_address : "0.0.0.0",
      gst_rtsp_server_get_bound_port (server));
  fflush (stdout);
  g_main_loop_run (loop);

  g_object_unref (pool);
  g_object_unref (factory);
  g_object_unref (server);
  g_main_loop_unref (loop);
  return 0;
}
