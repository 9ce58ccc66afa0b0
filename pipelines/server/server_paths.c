/* server_paths.c: the request paths of gpustream-server: which file of the
 * served directory (or which URL of the origin) a path names, on which
 * mount, and the one spelling under which each is served. Paths come from
 * the network: nothing here may name a file outside the directory. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server_paths.h"

/* The real path of the file a request path names, when it is a regular file
 * inside root_real; NULL otherwise (missing, outside, a directory). The path
 * is percent-decoded first and resolved with realpath(), so "..", encoded
 * dots and symlinks that leave the directory all end outside it. */
gchar *
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
  } else if (g_str_has_prefix (rel, SRTP_PREFIX "/")) {
    *kind = MOUNT_SRTP;
    rel += strlen (SRTP_PREFIX);
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

/* A SETUP sent without a DESCRIBE before it names a stream of the media
 * (".../file.ts/stream=0"): the file is the path without that suffix. */
gchar *
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
gboolean
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

/* The source a request names, or NULL. In a directory, the file: the path
 * as it is, else without the stream part of a SETUP URL. Proxying, the
 * origin's URL of the path, without that stream part (the origin answers
 * for the rest). *mount_path is the path of the media. */
gchar *
request_source (const gchar * root_real, const gchar * proxy_base,
    const GstRTSPUrl * uri, gchar ** mount_path, MountKind * kind)
{
  gchar *file;

  if (proxy_base != NULL) {
    *kind = MOUNT_SRTP;
    *mount_path = strip_stream_control (uri->abspath);
    if ((*mount_path)[0] != '/' || (*mount_path)[1] == '\0'
        || !path_is_canonical (*mount_path))
      return NULL;
    return g_strconcat (proxy_base, *mount_path + 1, NULL);
  }

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

