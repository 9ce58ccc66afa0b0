/* fuzz_serverfront.c: gpustream-server's RTSP front door
 * (pipelines/server/server_front.c): the first request head of a
 * connection (server_front_scan), and the bytes after it as its reader
 * gets them (server_front_follow: later heads, interleaved frames,
 * bodies). The bytes come from any client of the RTSP port.
 *
 * Input: byte 0 seeds the sizes the rest is cut into (as reads of a
 * socket cut a connection's bytes); the rest is the connection's bytes.
 *
 * Checks: the first head is found or refused alike whether the scan sees
 * the bytes at once or as they arrive (each scan sees the bytes of the one
 * before and more); a head found ends with its empty line, within
 * SERVER_FRONT_HEAD_MAX, and holds no NUL; following the bytes after it
 * gives the same answer, and ends in the same place, however they are cut;
 * a refusal leaves the follower as it was before the offending byte
 * (following from there refuses that byte again). */
#include <string.h>

#include <glib.h>

#include "server_front.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  return 0;
}

/* the next cut's size: 1 to 64 bytes, from a small generator seeded by
 * the input's first byte */
static gsize
next_cut (guint32 * seed)
{
  *seed = *seed * 1103515245u + 12345u;
  return 1 + ((*seed >> 16) & 63);
}

/* follows buf in cuts; returns the answer and how many bytes were taken
 * before it (all of them when nothing was refused) */
static ServerFrontHead
follow_cut (ServerFrontFollow * f, const guint8 * buf, gsize len,
    guint32 seed, gsize * taken)
{
  gsize at = 0;

  while (at < len) {
    gsize n = next_cut (&seed);
    ServerFrontHead state;

    n = MIN (n, len - at);
    state = server_front_follow (f, buf + at, n);

    if (state != SERVER_FRONT_MORE) {
      *taken = at;
      return state;
    }
    at += n;
  }
  *taken = len;
  return SERVER_FRONT_MORE;
}

static gboolean
same_place (const ServerFrontFollow * a, const ServerFrontFollow * b)
{
  return a->at == b->at && a->cl == b->cl && a->past_first == b->past_first
      && a->has_length == b->has_length && a->cr == b->cr
      && a->head_len == b->head_len && a->line_len == b->line_len
      && a->content_length == b->content_length && a->left == b->left
      && a->frame_have == b->frame_have;
}

static gboolean
has_content_length (const gchar * head, gsize len)
{
  static const char name[] = "content-length";

  for (gsize i = 0; i + sizeof name - 1 <= len; i++)
    if (g_ascii_strncasecmp (head + i, name, sizeof name - 1) == 0)
      return TRUE;
  return FALSE;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  const gchar *buf;
  gsize len, head_len = 0, grown_len = 0, have = 0;
  ServerFrontScan scan = { 0 }, grown = { 0 };
  ServerFrontHead whole, as_grown = SERVER_FRONT_MORE;
  guint32 seed;

  if (size < 1)
    return 0;
  seed = data[0];
  buf = (const gchar *) data + 1;
  len = size - 1;

  /* the first head: the bytes at once, and as they arrive */
  whole = server_front_scan (&scan, buf, len, &head_len);
  while (have < len && as_grown == SERVER_FRONT_MORE) {
    have += next_cut (&seed);
    have = MIN (have, len);
    as_grown = server_front_scan (&grown, buf, have, &grown_len);
  }
  FUZZ_CHECK (as_grown == whole, "scanned at once %d, as it came %d", whole,
      as_grown);
  if (whole != SERVER_FRONT_DONE)
    return 0;
  FUZZ_CHECK (grown_len == head_len, "head of %zu or %zu bytes", head_len,
      grown_len);
  FUZZ_CHECK (head_len >= 2 && head_len <= SERVER_FRONT_HEAD_MAX
      && buf[head_len - 1] == '\n', "a head of %zu bytes", head_len);
  FUZZ_CHECK (memchr (buf, '\0', head_len) == NULL, "a NUL in the head");

  /* the bytes after it, as the reader gets them: the first head fed first,
   * then the rest at once and in cuts */
  {
    ServerFrontFollow once = { 0 }, cut, again;
    const guint8 *rest = (const guint8 *) buf + head_len;
    gsize rest_len = len - head_len, taken = 0;
    ServerFrontHead first, at_once, in_cuts;

    first = server_front_follow (&once, (const guint8 *) buf, head_len);
    /* a head the scan found is refused by the follower only for its
     * Content-Length */
    if (first != SERVER_FRONT_MORE) {
      FUZZ_CHECK (first == SERVER_FRONT_BAD, "first head followed: %d", first);
      FUZZ_CHECK (has_content_length (buf, head_len),
          "refused a head without a Content-Length");
      return 0;
    }
    cut = once;
    at_once = server_front_follow (&once, rest, rest_len);
    in_cuts = follow_cut (&cut, rest, rest_len, seed, &taken);
    FUZZ_CHECK (at_once == in_cuts, "followed at once %d, in cuts %d",
        at_once, in_cuts);
    if (at_once == SERVER_FRONT_MORE) {
      FUZZ_CHECK (same_place (&once, &cut),
          "followed in cuts, it ends elsewhere");
      return 0;
    }
    /* refused at a byte: the follower is where it was before it */
    again = cut;
    {
      gsize at = taken, n = 0;
      ServerFrontHead state = SERVER_FRONT_MORE;

      /* the cut that was refused, byte by byte: up to the offending one */
      while (at + n < rest_len && state == SERVER_FRONT_MORE) {
        ServerFrontFollow before = again;

        state = server_front_follow (&again, rest + at + n, 1);
        if (state != SERVER_FRONT_MORE) {
          FUZZ_CHECK (state == in_cuts, "byte by byte %d, in cuts %d", state,
              in_cuts);
          FUZZ_CHECK (same_place (&before, &again),
              "a refusal changed the follower");
        }
        n++;
      }
      FUZZ_CHECK (state == in_cuts, "byte by byte it went on");
    }
  }
  return 0;
}
