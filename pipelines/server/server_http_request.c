/* server_http_request.c: the request heads and Range headers of
 * gpustream-server's HTTP path. The bytes come from any client: nothing
 * here may read past the head, and what it cannot read is a 400. */
#define _DEFAULT_SOURCE         /* timegm */
#include <stdio.h>
#include <string.h>
#include <time.h>

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
  /* the absolute form (RFC 9112 3.2.2), which a server must accept: the
   * path after the authority */
  if (g_ascii_strncasecmp (target, "http://", 7) == 0 ||
      g_ascii_strncasecmp (target, "https://", 8) == 0) {
    const gchar *authority = strstr (target, "://") + 3;

    target = authority + strcspn (authority, "/?#");
    if (target == authority || *target == '#')
      return;
    if (*target == '\0' || *target == '?')
      target = "/";
  }
  if (target[0] != '/')
    return;
  /* a query names no other file */
  query = strchr (target, '?');
  req->path = query ? g_strndup (target, query - target) : g_strdup (target);
  req->range = header_value (lines, "Range");
  req->if_none_match = header_value (lines, "If-None-Match");
  req->if_modified_since = header_value (lines, "If-Modified-Since");
  req->if_range = header_value (lines, "If-Range");
  req->status = 0;
}

void
http_request_clear (HttpRequest * req)
{
  g_clear_pointer (&req->path, g_free);
  g_clear_pointer (&req->range, g_free);
  g_clear_pointer (&req->if_none_match, g_free);
  g_clear_pointer (&req->if_modified_since, g_free);
  g_clear_pointer (&req->if_range, g_free);
}

static const gchar *const months[] = { "Jan", "Feb", "Mar", "Apr", "May",
  "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

static const gchar *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu",
  "Fri", "Sat"
};

gboolean
http_date_parse (const gchar * value, gint64 * seconds)
{
  gchar month[4] = "", day[10] = "", zone[4] = "";
  gint d = 0, y = 0, h = 0, m = 0, s = 0, mon, consumed = 0;
  struct tm tm = { 0 };

  if (value == NULL)
    return FALSE;
  /* Sun, 06 Nov 1994 08:49:37 GMT */
  if (sscanf (value, "%3s, %2d %3s %4d %2d:%2d:%2d %3s%n", day, &d, month, &y,
          &h, &m, &s, zone, &consumed) == 8 && value[consumed] == '\0'
      && strcmp (zone, "GMT") == 0) {
    /* read */
  } else if (sscanf (value, "%9[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s%n", day,
          &d, month, &y, &h, &m, &s, zone, &consumed) == 8
      && value[consumed] == '\0' && strcmp (zone, "GMT") == 0) {
    /* Sunday, 06-Nov-94 08:49:37 GMT: a two-digit year within 50 years */
    y += y < 70 ? 2000 : 1900;
  } else if (sscanf (value, "%3s %3s %2d %2d:%2d:%2d %4d%n", day, month, &d,
          &h, &m, &s, &y, &consumed) == 7 && value[consumed] == '\0') {
    /* Sun Nov  6 08:49:37 1994 */
  } else {
    return FALSE;
  }
  for (mon = 0; mon < 12 && strcmp (month, months[mon]) != 0; mon++);
  if (mon == 12 || d < 1 || d > 31 || h > 23 || m > 59 || s > 60 || y < 1970
      || y > 9999 || h < 0 || m < 0 || s < 0)
    return FALSE;
  tm.tm_year = y - 1900;
  tm.tm_mon = mon;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  *seconds = timegm (&tm);
  return TRUE;
}

void
http_date_format (gint64 seconds, gchar out[32])
{
  time_t t = seconds;
  struct tm tm;

  gmtime_r (&t, &tm);
  g_snprintf (out, 32, "%s, %02d %s %04d %02d:%02d:%02d GMT",
      days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
      tm.tm_hour, tm.tm_min, tm.tm_sec);
}

gboolean
http_etag_matches (const gchar * value, const gchar * etag, gboolean weak)
{
  gsize etag_len = strlen (etag);
  const gchar *p = value;

  if (value == NULL)
    return FALSE;
  while (*p == ' ' || *p == '\t')
    p++;
  if (strcmp (p, "*") == 0)
    return TRUE;
  while (*p != '\0') {
    gboolean is_weak = FALSE;
    const gchar *end;

    while (*p == ' ' || *p == '\t' || *p == ',')
      p++;
    if (strncmp (p, "W/", 2) == 0) {
      is_weak = TRUE;
      p += 2;
    }
    if (*p != '"')
      return FALSE;
    end = strchr (p + 1, '"');
    if (end == NULL)
      return FALSE;
    if ((weak || !is_weak) && (gsize) (end + 1 - p) == etag_len
        && strncmp (p, etag, etag_len) == 0)
      return TRUE;
    p = end + 1;
  }
  return FALSE;
}
