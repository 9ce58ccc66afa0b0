/* server_front.c: the first request head of each RTSP connection, read
 * and measured before anything else sees the connection, and the idle
 * connections closed (server_front.h).
 *
 * gst-rtsp-server's connection reader (GstRTSPConnection) keeps reading
 * header lines as long as they come (each one stored), and a line without
 * an end keeps it waiting: the head is read here first. The bytes are
 * peeked (MSG_PEEK) until the end of the head is among them, then exactly
 * the head is taken off the socket: what follows it (a pipelined request)
 * is left for the reader the connection goes to. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_front.h"

/* after a refusal, what the client still sends is read and dropped for
 * this long (or this many bytes) before closing: closing with unread bytes
 * resets the connection, and the client could lose the answer */
#define LINGER_US (2 * G_USEC_PER_SEC)
#define LINGER_BYTES (4 << 20)

static guint idle_timeout_s = 30;
/* counts, from several threads */
static gint idle_closed;
static gint refused;

void
server_front_set_idle_timeout (guint seconds)
{
  idle_timeout_s = seconds;
}

guint
server_front_get_idle_timeout (void)
{
  return idle_timeout_s;
}

guint64
server_front_idle_closed (void)
{
  return (guint) g_atomic_int_get (&idle_closed);
}

guint64
server_front_refused (void)
{
  return (guint) g_atomic_int_get (&refused);
}

/* ---- the head ---- */

static gboolean
is_tchar (gchar c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c));
}

/* METHOD SP TARGET SP RTSP/d.d (or HTTP/d.d: RTSP over HTTP starts so) */
static gboolean
request_line_ok (const gchar * line, gsize len)
{
  gsize i = 0, target;

  while (i < len && is_tchar (line[i]))
    i++;
  if (i == 0 || i >= len || line[i] != ' ')
    return FALSE;
  target = ++i;
  while (i < len && line[i] != ' ')
    i++;
  if (i == target || i >= len)
    return FALSE;
  i++;
  if (len - i != 8 || (strncmp (line + i, "RTSP/", 5) != 0 &&
          strncmp (line + i, "HTTP/", 5) != 0))
    return FALSE;
  return g_ascii_isdigit (line[i + 5]) && line[i + 6] == '.'
      && g_ascii_isdigit (line[i + 7]);
}

/* a header line: NAME ':' ..., or the continuation of the one before
 * (starting with a space or a tab) */
static gboolean
header_line_ok (const gchar * line, gsize len)
{
  gsize i = 0;

  if (line[0] == ' ' || line[0] == '\t')
    return TRUE;
  while (i < len && is_tchar (line[i]))
    i++;
  return i > 0 && i < len && line[i] == ':';
}

ServerFrontHead
server_front_scan (ServerFrontScan * scan, const gchar * buf, gsize len,
    gsize * head_len)
{
  gsize i = scan->line_start, line_start;

  /* empty lines before the request line are allowed (RFC 9112 2.2) */
  if (!scan->past_first) {
    while (i < len && (buf[i] == '\r' || buf[i] == '\n')) {
      if (buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n')
        return SERVER_FRONT_BAD;
      if (++i > SERVER_FRONT_HEAD_MAX)
        return SERVER_FRONT_TOO_LARGE;
    }
    if (i > 0 && i == len && buf[i - 1] == '\r')
      i--;                      /* its LF is still to come */
    scan->line_start = i;
  }
  line_start = i;
  for (; i < len; i++) {
    guchar c = buf[i];

    if (i >= SERVER_FRONT_HEAD_MAX)
      return SERVER_FRONT_TOO_LARGE;
    if (c == '\n') {
      gsize end = i > line_start && buf[i - 1] == '\r' ? i - 1 : i;

      if (end == line_start) {
        *head_len = i + 1;
        return SERVER_FRONT_DONE;
      }
      if (!scan->past_first ? !request_line_ok (buf + line_start,
              end - line_start) : !header_line_ok (buf + line_start,
              end - line_start))
        return SERVER_FRONT_BAD;
      scan->past_first = TRUE;
      line_start = scan->line_start = i + 1;
      continue;
    }
    /* a CR ends a line with the LF after it, or is not allowed */
    if (c == '\r') {
      if (i + 1 < len && buf[i + 1] != '\n')
        return SERVER_FRONT_BAD;
      continue;
    }
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return SERVER_FRONT_BAD;
    if (i - line_start >= SERVER_FRONT_LINE_MAX)
      return SERVER_FRONT_TOO_LARGE;
    /* what starts a request line must be a method */
    if (!scan->past_first && i == line_start && !is_tchar (c))
      return SERVER_FRONT_BAD;
  }
  return SERVER_FRONT_MORE;
}

/* ---- the heads after the first ---- */

enum
{
  FOLLOW_START,                 /* between messages */
  FOLLOW_HEAD,
  FOLLOW_BODY,
  FOLLOW_FRAME_HEAD,            /* after a '$' */
  FOLLOW_FRAME,
};

enum
{
  CL_NAME,                      /* the line may still be Content-Length */
  CL_OTHER,                     /* it is not */
  CL_SPACE,                     /* "Content-Length:" and spaces so far */
  CL_DIGITS,
  CL_END,                       /* spaces after the digits */
};

#define CL_HEADER "content-length:"
/* far above any limit of the reader's; keeps the sum from overflowing */
#define CL_MAX (G_GUINT64_CONSTANT (1) << 40)

static void
follow_head_done (ServerFrontFollow * f)
{
  f->left = f->has_length ? f->content_length : 0;
  f->at = f->left ? FOLLOW_BODY : FOLLOW_START;
  f->past_first = f->cr = f->has_length = FALSE;
  f->head_len = f->line_len = 0;
  f->content_length = 0;
  f->cl = CL_NAME;
}

/* one byte of a head, checked as server_front_scan checks the first */
static ServerFrontHead
follow_head_byte (ServerFrontFollow * f, guchar c)
{
  if (++f->head_len > SERVER_FRONT_HEAD_MAX)
    return SERVER_FRONT_TOO_LARGE;
  /* a CR ends a line with the LF after it, or is not allowed */
  if (f->cr && c != '\n')
    return SERVER_FRONT_BAD;
  if (c == '\r') {
    f->cr = TRUE;
    return SERVER_FRONT_MORE;
  }
  if (c == '\n') {
    f->cr = FALSE;
    if (f->line_len == 0) {
      /* empty lines before the first line are allowed (RFC 9112 2.2) */
      if (f->past_first)
        follow_head_done (f);
      return SERVER_FRONT_MORE;
    }
    /* a Content-Length counts once its line ended with digits */
    if (f->cl == CL_SPACE)
      return SERVER_FRONT_BAD;
    if (f->cl == CL_DIGITS || f->cl == CL_END)
      f->has_length = TRUE;
    f->cl = CL_NAME;
    f->past_first = TRUE;
    f->line_len = 0;
    return SERVER_FRONT_MORE;
  }
  if ((c < 0x20 && c != '\t') || c == 0x7f)
    return SERVER_FRONT_BAD;
  if (f->line_len >= SERVER_FRONT_LINE_MAX)
    return SERVER_FRONT_TOO_LARGE;
  /* what starts a request line must be a method (or "RTSP/": a status
   * line, the client's answer to a request of ours) */
  if (!f->past_first && f->line_len == 0 && !is_tchar (c))
    return SERVER_FRONT_BAD;
  f->line_len++;
  if (!f->past_first)
    return SERVER_FRONT_MORE;
  switch (f->cl) {
    case CL_NAME:
      if (g_ascii_tolower (c) != CL_HEADER[f->line_len - 1])
        f->cl = CL_OTHER;
      else if (f->line_len < sizeof CL_HEADER - 1)
        break;
      else if (f->has_length)
        return SERVER_FRONT_BAD;        /* a second Content-Length */
      else {
        f->cl = CL_SPACE;
        f->content_length = 0;
      }
      break;
    case CL_SPACE:
    case CL_DIGITS:
      if (g_ascii_isdigit (c)) {
        f->content_length = f->content_length * 10 + (c - '0');
        if (f->content_length > CL_MAX)
          return SERVER_FRONT_BAD;
        f->cl = CL_DIGITS;
      } else if (c == ' ' || c == '\t') {
        if (f->cl == CL_DIGITS)
          f->cl = CL_END;
      } else {
        return SERVER_FRONT_BAD;
      }
      break;
    case CL_END:
      if (c != ' ' && c != '\t')
        return SERVER_FRONT_BAD;
      break;
    default:
      break;
  }
  return SERVER_FRONT_MORE;
}

ServerFrontHead
server_front_follow (ServerFrontFollow * f, const guint8 * buf, gsize len)
{
  gsize i = 0;

  while (i < len) {
    switch (f->at) {
      case FOLLOW_START:
        if (buf[i] == '$') {
          f->at = FOLLOW_FRAME_HEAD;
          f->frame_have = 0;
          i++;
          break;
        }
        f->at = FOLLOW_HEAD;
        /* fall through */
      case FOLLOW_HEAD:{
        ServerFrontFollow before = *f;
        ServerFrontHead state = follow_head_byte (f, buf[i]);

        if (state != SERVER_FRONT_MORE) {
          *f = before;
          return state;
        }
        i++;
        break;
      }
      case FOLLOW_FRAME_HEAD:
        f->frame_head[f->frame_have++] = buf[i++];
        if (f->frame_have == 3) {
          f->left = (guint) f->frame_head[1] << 8 | f->frame_head[2];
          f->at = f->left ? FOLLOW_FRAME : FOLLOW_START;
        }
        break;
      case FOLLOW_BODY:
      case FOLLOW_FRAME:{
        guint64 take = MIN (f->left, (guint64) (len - i));

        i += take;
        if ((f->left -= take) == 0)
          f->at = FOLLOW_START;
        break;
      }
    }
  }
  return SERVER_FRONT_MORE;
}

/* ---- a connection until its first head ---- */

typedef struct
{
  GSocket *socket;
  gchar *ip;
  gint port;
  GMainContext *context;
  ServerFrontHandoff handoff;
  gpointer data;
  GSource *read_source;
  GSource *timer;
  /* what was taken of the head so far: every byte peeked while the head
   * had not ended (so that the socket is not readable again for the same
   * bytes), then the rest of the head alone */
  gchar *head;
  gsize have;
  ServerFrontScan scan;
  /* refused: draining until the client closes, linger_until, or
   * LINGER_BYTES more */
  gboolean lingering;
  gint64 linger_until;
  gsize drained;
} Pending;

static void
pending_free (Pending * p)
{
  if (p->read_source != NULL) {
    g_source_destroy (p->read_source);
    g_source_unref (p->read_source);
  }
  if (p->timer != NULL) {
    g_source_destroy (p->timer);
    g_source_unref (p->timer);
  }
  g_clear_object (&p->socket);
  g_free (p->head);
  if (p->context != NULL)
    g_main_context_unref (p->context);
  g_free (p->ip);
  g_free (p);
}

static gboolean on_timer (gpointer data);

static void
set_timer (Pending * p, guint ms)
{
  if (p->timer != NULL) {
    g_source_destroy (p->timer);
    g_source_unref (p->timer);
  }
  p->timer = g_timeout_source_new (ms);
  g_source_set_callback (p->timer, on_timer, p, NULL);
  g_source_attach (p->timer, p->context);
}

void
server_front_answer_refusal (int fd, ServerFrontHead why)
{
  static const char bad[] = "RTSP/1.0 400 Bad Request\r\n"
      "Server: gpustream-server\r\nConnection: close\r\n"
      "Content-Length: 0\r\n\r\n";
  static const char large[] = "RTSP/1.0 431 Request Header Fields Too Large\r\n"
      "Server: gpustream-server\r\nConnection: close\r\n"
      "Content-Length: 0\r\n\r\n";
  const char *answer = why == SERVER_FRONT_BAD ? bad : large;
  gsize len = why == SERVER_FRONT_BAD ? sizeof bad - 1 : sizeof large - 1;

  g_atomic_int_inc (&refused);
  /* a few dozen bytes: whole or not at all into a send buffer with room
   * (a later head's may cut into an interleaved frame being sent: the
   * client is refused either way) */
  if (send (fd, answer, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    /* the client is gone: closed by the caller either way */
  }
  shutdown (fd, SHUT_WR);
}

/* answers why and closes (after the linger) */
static void
refuse (Pending * p, ServerFrontHead why)
{
  server_front_answer_refusal (g_socket_get_fd (p->socket), why);
  p->lingering = TRUE;
  p->linger_until = g_get_monotonic_time () + LINGER_US;
  set_timer (p, LINGER_US / 1000);
}

static gboolean
on_timer (gpointer data)
{
  Pending *p = data;

  /* silent for the idle timeout without a whole head, or lingered enough */
  if (!p->lingering)
    g_atomic_int_inc (&idle_closed);
  pending_free (p);
  return G_SOURCE_REMOVE;
}

static gboolean
on_readable (GSocket * socket, GIOCondition condition, gpointer data)
{
  Pending *p = data;
  int fd = g_socket_get_fd (socket);
  gchar *buf;
  gssize n;
  gsize head_len = 0, take;
  ServerFrontHead state;

  if (p->lingering) {
    gchar drop[16384];

    while ((n = recv (fd, drop, sizeof drop, MSG_DONTWAIT)) > 0)
      if ((p->drained += n) > LINGER_BYTES)
        break;
    if ((n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        && p->drained <= LINGER_BYTES
        && g_get_monotonic_time () < p->linger_until)
      return G_SOURCE_CONTINUE;
    pending_free (p);
    return G_SOURCE_REMOVE;
  }

  /* up to one byte more than a head may hold: enough to tell it is too
   * large */
  if (p->head == NULL)
    p->head = g_malloc (SERVER_FRONT_HEAD_MAX + 2);
  n = recv (fd, p->head + p->have, SERVER_FRONT_HEAD_MAX + 1 - p->have,
      MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return G_SOURCE_CONTINUE;
  if (n <= 0) {
    /* gone (or reset) before a whole head */
    pending_free (p);
    return G_SOURCE_REMOVE;
  }
  state = server_front_scan (&p->scan, p->head, p->have + n, &head_len);
  if (state == SERVER_FRONT_BAD || state == SERVER_FRONT_TOO_LARGE) {
    refuse (p, state);
    return G_SOURCE_CONTINUE;
  }
  /* the bytes of the head off the socket, exactly (they are in p->head
   * already): all of them while it goes on, what is left of it at its end */
  take = state == SERVER_FRONT_DONE ? head_len - p->have : (gsize) n;
  buf = p->head + p->have;
  if (recv (fd, buf, take, MSG_DONTWAIT) != (gssize) take) {
    pending_free (p);
    return G_SOURCE_REMOVE;
  }
  p->have += take;
  if (state == SERVER_FRONT_MORE)
    return G_SOURCE_CONTINUE;
  p->head[p->have] = '\0';
  state = server_front_guard_attach (p->socket, p->head);
  if (state != SERVER_FRONT_MORE) {
    refuse (p, state);
    return G_SOURCE_CONTINUE;
  }
  p->handoff (g_object_ref (p->socket), p->ip, p->port, p->head, p->data);
  pending_free (p);
  return G_SOURCE_REMOVE;
}

void
server_front_take (GSocket * socket, const gchar * ip, gint port,
    GMainContext * context, ServerFrontHandoff handoff, gpointer data)
{
  Pending *p = g_new0 (Pending, 1);

  p->socket = socket;
  p->ip = g_strdup (ip);
  p->port = port;
  p->context = context ? g_main_context_ref (context) : NULL;
  p->handoff = handoff;
  p->data = data;
  g_socket_set_blocking (socket, FALSE);
  set_timer (p, idle_timeout_s * 1000);
  p->read_source = g_socket_create_source (socket, G_IO_IN | G_IO_HUP |
      G_IO_ERR, NULL);
  g_source_set_callback (p->read_source, G_SOURCE_FUNC (on_readable), p,
      NULL);
  /* last: from here the context's thread owns p (and may free it) */
  g_source_attach (p->read_source, context);
}

/* ---- connections handed on ---- */

gboolean
server_front_idle (GSocket * socket)
{
  struct tcp_info info;
  socklen_t len = sizeof info;
  int fd;

  if (socket == NULL)
    return FALSE;
  fd = g_socket_get_fd (socket);
  memset (&info, 0, sizeof info);
  if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0)
    return FALSE;
  if (info.tcpi_last_data_recv < (guint64) idle_timeout_s * 1000)
    return FALSE;
  /* its reader sees the end and closes it, in its own thread */
  shutdown (fd, SHUT_RDWR);
  g_atomic_int_inc (&idle_closed);
  return TRUE;
}
