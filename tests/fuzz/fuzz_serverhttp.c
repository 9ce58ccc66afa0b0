/* fuzz_serverhttp.c: gpustream-server's HTTP requests
 * (pipelines/server/server_http_request.c): the request head a client sends
 * (request line, headers) and the Range header's byte range. The heads come
 * from any HTTP client.
 *
 * Input: bytes 0-7, a big-endian file size for the range; the rest is the
 * head, cut before its first empty line as the server cuts it (so it holds
 * no "\r\n\r\n"). Its Range value is read against the size, and so is the
 * whole rest of the input taken as a Range value.
 *
 * Checks: the answer is a request (0), 400 or 405; a request (in the
 * origin or the absolute form) has a path that starts with '/' and holds
 * no '?', and is HEAD exactly when the head
 * starts with "HEAD "; anything else has no path and no range; a range
 * read as satisfiable lies inside the file (first <= last < size); read
 * twice, head and range give the same answer; a conditional header's date
 * read is written back as the same date. */
#include <string.h>

#include <glib.h>

#include "server_http_request.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  return 0;
}

static void
check_range (const gchar * value, guint64 size)
{
  guint64 first = 0, last = 0, first2 = 0, last2 = 0;
  HttpRange r = http_range_parse (value, size, &first, &last);

  FUZZ_CHECK (r == HTTP_RANGE_NONE || r == HTTP_RANGE_OK
      || r == HTTP_RANGE_UNSATISFIABLE, "range answer %d", r);
  if (r == HTTP_RANGE_OK)
    FUZZ_CHECK (first <= last && last < size, "range %" G_GUINT64_FORMAT "-%"
        G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, first, last, size);
  FUZZ_CHECK (http_range_parse (value, size, &first2, &last2) == r
      && (r != HTTP_RANGE_OK || (first2 == first && last2 == last)),
      "the range read twice differs");
}

/* a date read is written back as one that reads the same; entity tags are
 * matched without reading past their value */
static void
check_conditionals (const HttpRequest * req)
{
  const gchar *dates[] = { req->if_modified_since, req->if_range };

  for (guint i = 0; i < G_N_ELEMENTS (dates); i++) {
    gint64 t, again;
    gchar text[32];

    if (!http_date_parse (dates[i], &t))
      continue;
    http_date_format (t, text);
    FUZZ_CHECK (http_date_parse (text, &again) && again == t,
        "date %s read as %" G_GINT64_FORMAT ", written %s", dates[i], t, text);
  }
  if (req->if_none_match != NULL)
    FUZZ_CHECK (http_etag_matches (req->if_none_match, "\"f4240-17a3\"",
            TRUE) == http_etag_matches (req->if_none_match,
            "\"f4240-17a3\"", TRUE), "an entity tag matched twice differs");
  if (req->if_range != NULL && req->if_range[0] == '"')
    (void) http_etag_matches (req->if_range, "\"f4240-17a3\"", FALSE);
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  HttpRequest req, again;
  guint64 file_size = 0;
  const gchar *head;
  gsize len;
  gchar *end, *value;

  if (size < 8)
    return 0;
  for (int i = 0; i < 8; i++)
    file_size = file_size << 8 | data[i];
  head = (const gchar *) data + 8;
  len = size - 8;
  end = g_strstr_len (head, len, "\r\n\r\n");
  if (end != NULL)
    len = end - head;

  http_request_parse (head, len, &req);
  FUZZ_CHECK (req.status == 0 || req.status == 400 || req.status == 405,
      "status %u", req.status);
  if (req.status == 0) {
    FUZZ_CHECK (req.path != NULL && req.path[0] == '/'
        && strchr (req.path, '?') == NULL, "path %s", req.path);
    FUZZ_CHECK (req.head_only == (len >= 5 && memcmp (head, "HEAD ", 5) == 0),
        "HEAD is %d", req.head_only);
    if (req.range != NULL)
      check_range (req.range, file_size);
    check_conditionals (&req);
  } else {
    FUZZ_CHECK (req.path == NULL && req.range == NULL,
        "no request, yet a path or a range");
  }
  http_request_parse (head, len, &again);
  FUZZ_CHECK (again.status == req.status && again.head_only == req.head_only
      && again.keep_alive == req.keep_alive
      && g_strcmp0 (again.path, req.path) == 0
      && g_strcmp0 (again.range, req.range) == 0, "the head read twice differs");
  http_request_clear (&again);
  http_request_clear (&req);

  value = g_strndup (head, size - 8);
  check_range (value, file_size);
  g_free (value);
  return 0;
}
