/* server_http_request.h: how gpustream-server's HTTP path reads a request
 * head and a Range header. Apart from the connections (server_http.c) so
 * that the fuzz target of the HTTP requests (tests/fuzz/fuzz_serverhttp.c)
 * runs the very code the server does. */
#ifndef GPUSTREAM_SERVER_HTTP_REQUEST_H
#define GPUSTREAM_SERVER_HTTP_REQUEST_H

#include <glib.h>

typedef struct
{
  /* 0: a GET or HEAD of path, to answer with the file it names; else the
   * status to answer: 400 (malformed) or 405 (another method) */
  guint status;
  gboolean head_only;
  /* whether the connection stays open after the answer */
  gboolean keep_alive;
  /* the target without its query (status 0), and the Range header's value
   * (or NULL) */
  gchar *path;
  gchar *range;
  /* the conditional headers' values, or NULL */
  gchar *if_none_match;
  gchar *if_modified_since;
  gchar *if_range;
} HttpRequest;

/* Reads head, the request line and headers before the empty line (without
 * it), into req; clear it with http_request_clear */
void http_request_parse (const gchar * head, gsize len, HttpRequest * req);
void http_request_clear (HttpRequest * req);

typedef enum
{
  HTTP_RANGE_NONE,              /* no Range header, or one that is ignored */
  HTTP_RANGE_OK,
  HTTP_RANGE_UNSATISFIABLE,
} HttpRange;

/* The byte range [*first, *last] of a file of size bytes that a Range
 * header's value asks for */
HttpRange http_range_parse (const gchar * value, guint64 size,
    guint64 * first, guint64 * last);

/* An HTTP-date (RFC 9110 5.6.7: IMF-fixdate, also the obsolete RFC 850
 * and asctime forms) in seconds since the epoch; FALSE when it is none */
gboolean http_date_parse (const gchar * value, gint64 * seconds);

/* seconds as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") */
void http_date_format (gint64 seconds, gchar out[32]);

/* Whether an If-None-Match (weak comparison) or If-Range (strong) value
 * names etag (an entity tag with its quotes): "*" or one of a list */
gboolean http_etag_matches (const gchar * value, const gchar * etag,
    gboolean weak);

#endif /* GPUSTREAM_SERVER_HTTP_REQUEST_H */
