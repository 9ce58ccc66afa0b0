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

#endif /* GPUSTREAM_SERVER_HTTP_REQUEST_H */
