/* fuzz_serverpath.c: gpustream-server's request paths
 * (pipelines/server/server_paths.c): the one spelling under which a path is
 * served (path_is_canonical) and the mapping of a request's path to a
 * mount and to a file of the served directory, or with --proxy to the
 * origin's URL (request_source). The paths come from any RTSP client.
 *
 * Input: byte 0 picks the mode: bit 0 set, the proxy (origin
 * rtsp://127.0.0.1:9/); clear, a directory. Bit 1 set: the rest of the
 * input is the request URL's path, read with gst_rtsp_url_parse as
 * gst-rtsp-server reads it ("rtsp://127.0.0.1:8554" before it); clear: the
 * rest is the path as it is (a '/' put before it when it lacks one). The
 * path ends at the first zero byte.
 *
 * The directory, made once in a temporary directory: clip.ts, "a b.mp4",
 * "100%.ts", sub/clip.mp4, nc/clip.ts (a directory named like the NC
 * mount), an empty directory, the links in -> clip.ts, out -> ../secret
 * and up -> .. (both leave it), and secret beside it.
 *
 * Checks: a path path_is_canonical accepts has no empty, "." or ".."
 * segment ("//", "/./", "/../", a trailing "/", "/." or "/.."), neither as
 * written nor percent-decoded, and no encoded zero byte; a request that
 * maps to a file gives a canonical mount path (the request's path, or it
 * without a SETUP's "/stream=N"), the mount its prefix names, and the real
 * path of a regular file strictly inside the served directory (never
 * secret, never through a link that leaves); proxying, the origin's URL
 * is the origin's base and the canonical mount path after it; asked twice,
 * the mapping gives the same answer. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "server_paths.h"
#include "fuzz.h"

#define PROXY_BASE "rtsp://127.0.0.1:9/"

static gchar *fixture;          /* the temporary directory */
static gchar *root_real;        /* the served directory, its real path */
static gchar *secret_real;      /* the file beside it */

static void
remove_fixture (void)
{
  static const char *const paths[] = { "served/clip.ts", "served/a b.mp4",
    "served/100%.ts", "served/sub/clip.mp4", "served/nc/clip.ts",
    "served/in", "served/out", "served/up", "served/sub", "served/nc",
    "served/empty", "served", "secret"
  };
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++) {
    gchar *p = g_build_filename (fixture, paths[i], NULL);
    g_remove (p);
    g_free (p);
  }
  g_rmdir (fixture);
}

static void
make_file (const gchar * rel)
{
  gchar *p = g_build_filename (fixture, rel, NULL);
  FUZZ_CHECK (g_file_set_contents (p, "media", -1, NULL), "writing %s", p);
  g_free (p);
}

static void
make_link (const gchar * target, const gchar * rel)
{
  gchar *p = g_build_filename (fixture, rel, NULL);
  FUZZ_CHECK (symlink (target, p) == 0, "link %s", p);
  g_free (p);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  char real[PATH_MAX];
  gchar *p;

  fixture = g_dir_make_tmp ("gpustream-fuzz-serverpath-XXXXXX", NULL);
  FUZZ_CHECK (fixture != NULL, "no temporary directory");
  atexit (remove_fixture);
  for (const char *const *d = (const char *const[]) { "served", "served/sub",
          "served/nc", "served/empty", NULL }; *d; d++) {
    p = g_build_filename (fixture, *d, NULL);
    FUZZ_CHECK (g_mkdir (p, 0700) == 0, "mkdir %s", p);
    g_free (p);
  }
  make_file ("secret");
  make_file ("served/clip.ts");
  make_file ("served/a b.mp4");
  make_file ("served/100%.ts");
  make_file ("served/sub/clip.mp4");
  make_file ("served/nc/clip.ts");
  make_link ("clip.ts", "served/in");
  make_link ("../secret", "served/out");
  make_link ("..", "served/up");

  p = g_build_filename (fixture, "served", NULL);
  FUZZ_CHECK (realpath (p, real) != NULL, "realpath %s", p);
  root_real = g_strdup (real);
  g_free (p);
  p = g_build_filename (fixture, "secret", NULL);
  FUZZ_CHECK (realpath (p, real) != NULL, "realpath %s", p);
  secret_real = g_strdup (real);
  g_free (p);
  return 0;
}

/* no empty, "." or ".." segment after the leading '/' ("/" alone has
 * none) */
static gboolean
segments_clean (const gchar * path)
{
  gsize n = strlen (path);
  if (strcmp (path, "/") == 0)
    return TRUE;
  return path[0] == '/' && strstr (path, "//") == NULL
      && strstr (path, "/./") == NULL && strstr (path, "/../") == NULL
      && path[n - 1] != '/' && !g_str_has_suffix (path, "/.")
      && !g_str_has_suffix (path, "/..");
}

static void
check_canonical (const gchar * path)
{
  gchar *decoded = g_uri_unescape_string (path, NULL);

  FUZZ_CHECK (decoded != NULL, "canonical '%s' does not decode (a zero byte "
      "or a bad escape)", path);
  FUZZ_CHECK (segments_clean (path) && segments_clean (decoded),
      "canonical '%s' (decoded '%s') has an empty, '.' or '..' segment",
      path, decoded);
  g_free (decoded);
}

static MountKind
kind_of (const gchar * mount)
{
  if (g_str_has_prefix (mount, NC_PREFIX "/"))
    return MOUNT_NC;
  if (g_str_has_prefix (mount, SRTP_PREFIX "/"))
    return MOUNT_SRTP;
  return MOUNT_PLAIN;
}

static void
check_file (const GstRTSPUrl * url, const gchar * file, const gchar * mount,
    MountKind kind)
{
  char real[PATH_MAX];
  struct stat st;
  gsize root_len = strlen (root_real);
  gchar *stripped = strip_stream_control (url->abspath);

  check_canonical (mount);
  FUZZ_CHECK (strcmp (mount, "/") != 0, "'/' mapped to '%s'", file);
  FUZZ_CHECK (strcmp (mount, url->abspath) == 0 || strcmp (mount,
          stripped) == 0, "mount '%s' for the path '%s'", mount, url->abspath);
  FUZZ_CHECK (kind == kind_of (mount), "mount '%s' on mount kind %d", mount,
      (int) kind);
  FUZZ_CHECK (strncmp (file, root_real, root_len) == 0
      && file[root_len] == '/' && file[root_len + 1] != '\0',
      "'%s' maps to '%s', outside '%s'", url->abspath, file, root_real);
  FUZZ_CHECK (realpath (file, real) != NULL && strcmp (real, file) == 0,
      "'%s' maps to '%s', not a real path", url->abspath, file);
  FUZZ_CHECK (stat (file, &st) == 0 && S_ISREG (st.st_mode),
      "'%s' maps to '%s', not a regular file", url->abspath, file);
  FUZZ_CHECK (strcmp (file, secret_real) != 0, "'%s' reaches the file "
      "beside the served directory", url->abspath);
  g_free (stripped);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  gboolean proxy, parse;
  gchar *raw, *path;
  GstRTSPUrl plain = { 0 }, *parsed = NULL;
  const GstRTSPUrl *url;
  gchar *file[2], *mount[2];
  MountKind kind[2];

  if (size < 1)
    return 0;
  proxy = data[0] & 1;
  parse = (data[0] & 2) != 0;
  raw = g_strndup ((const gchar *) data + 1, size - 1);
  path = raw[0] == '/' ? g_strdup (raw) : g_strconcat ("/", raw, NULL);
  g_free (raw);

  if (parse) {
    gchar *u = g_strconcat ("rtsp://127.0.0.1:8554", path, NULL);
    if (gst_rtsp_url_parse (u, &parsed) != GST_RTSP_OK || parsed == NULL
        || parsed->abspath == NULL || parsed->abspath[0] != '/') {
      if (parsed)
        gst_rtsp_url_free (parsed);
      g_free (u);
      g_free (path);
      return 0;
    }
    g_free (u);
    url = parsed;
  } else {
    plain.abspath = path;
    url = &plain;
  }

  if (path_is_canonical (url->abspath))
    check_canonical (url->abspath);

  for (int i = 0; i < 2; i++)
    file[i] = request_source (proxy ? NULL : root_real,
        proxy ? PROXY_BASE : NULL, url, &mount[i], &kind[i]);
  FUZZ_CHECK ((file[0] == NULL) == (file[1] == NULL)
      && g_strcmp0 (file[0], file[1]) == 0
      && g_strcmp0 (mount[0], mount[1]) == 0
      && (file[0] == NULL || kind[0] == kind[1]),
      "'%s' mapped twice: '%s' then '%s'", url->abspath, file[0], file[1]);

  if (file[0] != NULL && proxy) {
    check_canonical (mount[0]);
    FUZZ_CHECK (strcmp (mount[0], "/") != 0, "'/' proxied");
    FUZZ_CHECK (kind[0] == MOUNT_SRTP, "proxied on mount kind %d",
        (int) kind[0]);
    FUZZ_CHECK (g_str_has_prefix (file[0], PROXY_BASE)
        && strcmp (file[0] + strlen (PROXY_BASE), mount[0] + 1) == 0,
        "'%s' proxied to '%s' for the mount '%s'", url->abspath, file[0],
        mount[0]);
  } else if (file[0] != NULL) {
    check_file (url, file[0], mount[0], kind[0]);
  }
  if (getenv ("FUZZ_VERBOSE"))
    fprintf (stderr, "%s %s -> %s (mount %s)\n", proxy ? "proxy" : "dir",
        url->abspath, file[0] ? file[0] : "(none)", mount[0]);

  for (int i = 0; i < 2; i++) {
    g_free (file[i]);
    g_free (mount[i]);
  }
  if (parsed)
    gst_rtsp_url_free (parsed);
  g_free (path);
  return 0;
}
