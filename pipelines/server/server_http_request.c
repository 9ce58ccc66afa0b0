/* server_http_request.c: the request heads and Range headers of
 * gpustream-server's HTTP path. The bytes come from any client: nothing
 * here may read past the head, and what it cannot read is a 400. */
#include <string.h>

#include "server_http_request.h"

/* The value of header name in the head (lines after the request line), or
 * NULL; the value is copied, trimmed */
static gchar *
header_value (gchar ** lines, const gchar * name)
{
  gsize n = strlen (name);

  for (guint i = 1; lines[i] != NULL; i++)
    if (g_ascii_strncasecmp (lines[i], name, n) == 0 && lines[i][n] == ':')
      return g_strstrip (g_strdup (lines[i] + n + 1));
  return NULL;
}

static gboolean
parse_uint64 (const gchar * s, const gchar * end, guint64 * v)
{
  if (s == end)
    return FALSE;
  *v = 0;
  for (; s < end; s++) {
    if (!g_ascii_isdigit (*s) || *v > (G_MAXINT64 - 9) / 10)
      return FALSE;
    *v = *v * 10 + (*s - '0');
  }
  return TRUE;
}

/* One range of "bytes=": A-B, A- or -N. Several ranges, other units and
 * malformed values are ignored (the whole file is sent), as RFC 7233
 * allows; a range that starts past the end is unsatisfiable. */
HttpRange
http_range_parse (const gchar * value, guint64 size, guint64 * first,
    guint64 * last)
{
  const gchar *spec, *dash, *end;
  guint64 a, b;

  if (value == NULL || g_ascii_strncasecmp (value, "bytes=", 6) != 0)
    return HTTP_RANGE_NONE;
  spec = value + 6;
  while (*spec == ' ')
    spec++;
  if (strchr (spec, ',') != NULL || (dash = strchr (spec, '-')) == NULL)
    return HTTP_RANGE_NONE;
  end = spec + strlen (spec);
  while (end > dash + 1 && end[-1] == ' ')
    end--;
  if (dash == spec) {
    /* the last N bytes */
    if (!parse_uint64 (dash + 1, end, &b))
      return HTTP_RANGE_NONE;
    if (b == 0 || size == 0)
      return HTTP_RANGE_UNSATISFIABLE;
    *first = b >= size ? 0 : size - b;
    *last = size - 1;
    return HTTP_RANGE_OK;
  }
  if (!parse_uint64 (spec, dash, &a))
    return HTTP_RANGE_NONE;
  if (dash + 1 == end)
    b = G_MAXUINT64;
  else if (!parse_uint64 (dash + 1, end, &b) || b < a)
    return HTTP_RANGE_NONE;
  if (a >= size)
    return HTTP_RANGE_UNSATISFIABLE;
  *first = a;
  *last = MIN (b, size - 1);
  return HTTP_RANGE_OK;
}


void
http_request_parse (const gchar * head, gsize len, HttpRequest * req)
{
  g_autofree gchar *text = g_strndup (head, len);
  g_auto (GStrv) lines = g_strsplit (text, "\r\n", -1);
  g_auto (GStrv) request = NULL;
  g_autofree gchar *connection = NULL;
  const gchar *method, *target, *version, *query;

  memset (req, 0, sizeof *req);
  req->status = 400;
  /* an empty head has no request line */
  if (lines[0] != NULL)
    request = g_strsplit (lines[0], " ", -1);
  if (request == NULL || g_strv_length (request) != 3)
    return;
  method = request[0];
  target = request[1];
  version = request[2];
  if (strcmp (version, "HTTP/1.1") != 0 && strcmp (version, "HTTP/1.0") != 0)
    return;
  for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++)
    if (strchr (lines[i], ':') == NULL || lines[i][0] == ' '
        || lines[i][0] == '\t')
      return;
  connection = header_value (lines, "Connection");
  if (strcmp (version, "HTTP/1.1") == 0)
    req->keep_alive = connection == NULL
        || g_ascii_strcasecmp (connection, "close") != 0;
  else
    req->keep_alive = connection != NULL
        && g_ascii_strcasecmp (connection, "keep-alive") == 0;

  req->head_only = strcmp (method, "HEAD") == 0;
  if (!req->head_only && strcmp (method, "GET") != 0) {
    req->status = 405;
    return;
  }
  if (target[0] != '/')
    return;
  /* a query names no other file */
  query = strchr (target, '?');
  req->path = query ? g_strndup (target, query - target) : g_strdup (target);
  req->range = header_value (lines, "Range");
  req->status = 0;
}

void
http_request_clear (HttpRequest * req)
{
  g_clear_pointer (&req->path, g_free);
  g_clear_pointer (&req->range, g_free);
}
