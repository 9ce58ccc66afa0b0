/* server_front_guard.c: the request heads after the first, measured as
 * the first was (server_front.h, server_front_follow).
 *
 * gst-rtsp-server's reader (GstRTSPConnection) reads a connection through
 * the input stream of the GSocketConnection that GIO's connection factory
 * makes for its socket. The factory's type for TCP sockets is replaced by
 * a GTcpConnection whose input stream, for a socket that server_front.c
 * marked, is a filter: every byte the reader takes passes through a
 * ServerFrontFollow first. A head over the limits is answered (400 or 431),
 * what the client still sends is drained for a while (closing with unread
 * bytes would reset the connection and could lose the answer), and then
 * the reader reads the end of the stream and closes the connection, as it
 * does when a client leaves. Sockets not marked (rtspsrc's in a proxy, the
 * RTSP-over-HTTP tunnel's, whose POST body is base64) read as GIO reads
 * them. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "server_front.h"

#define FOLLOW_KEY "gpustream-server-front-follow"
/* as the first head's refusal (server_front.c) */
#define LINGER_US (2 * G_USEC_PER_SEC)
#define LINGER_BYTES (4 << 20)

/* ---- the filter ---- */

typedef struct
{
  GFilterInputStream parent;
  ServerFrontFollow follow;
  int fd;
  /* refused: what comes is dropped until the client closes, linger_until
   * or LINGER_BYTES more; then the end of the stream */
  gboolean refused;
  gint64 linger_until;
  gsize drained;
} HeadGuard;

typedef GFilterInputStreamClass HeadGuardClass;

static void head_guard_pollable_init (GPollableInputStreamInterface * iface);

G_DEFINE_TYPE_WITH_CODE (HeadGuard, head_guard, G_TYPE_FILTER_INPUT_STREAM,
    G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
        head_guard_pollable_init));

static GInputStream *
base_of (gpointer guard)
{
  return g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (guard));
}

/* What the reader gets of n bytes just read into buffer (n > 0): n while
 * the heads are within the limits; from a refused head on, nothing (the
 * bytes dropped; -1 and would-block) until the linger is over, then the
 * end of the stream (0) */
static gssize
guard_check (HeadGuard * g, const void *buffer, gssize n, GError ** error)
{
  ServerFrontHead why;

  if (!g->refused) {
    why = server_front_follow (&g->follow, buffer, n);
    if (why == SERVER_FRONT_MORE)
      return n;
    server_front_answer_refusal (g->fd, why);
    g->refused = TRUE;
    g->linger_until = g_get_monotonic_time () + LINGER_US;
  } else if ((g->drained += n) > LINGER_BYTES
      || g_get_monotonic_time () >= g->linger_until) {
    return 0;
  }
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK,
      "a refused client: what it sends is dropped");
  return -1;
}

static gssize
head_guard_read (GInputStream * stream, void *buffer, gsize count,
    GCancellable * cancellable, GError ** error)
{
  HeadGuard *g = (HeadGuard *) stream;

  while (TRUE) {
    gssize n = g_input_stream_read (base_of (g), buffer, count, cancellable,
        error);

    if (n <= 0)
      return n;
    n = guard_check (g, buffer, n, NULL);
    /* a blocking read drains until the end, which it then returns */
    if (n >= 0)
      return n;
  }
}

static gssize
head_guard_read_nonblocking (GPollableInputStream * stream, void *buffer,
    gsize count, GError ** error)
{
  HeadGuard *g = (HeadGuard *) stream;
  gssize n = g_pollable_input_stream_read_nonblocking
      (G_POLLABLE_INPUT_STREAM (base_of (g)), buffer, count, NULL, error);

  if (n <= 0)
    return n;
  return guard_check (g, buffer, n, error);
}

static gboolean
head_guard_can_poll (GPollableInputStream * stream)
{
  GInputStream *base = base_of (stream);

  return G_IS_POLLABLE_INPUT_STREAM (base)
      && g_pollable_input_stream_can_poll (G_POLLABLE_INPUT_STREAM (base));
}

static gboolean
head_guard_is_readable (GPollableInputStream * stream)
{
  return g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM
      (base_of (stream)));
}

static GSource *
head_guard_create_source (GPollableInputStream * stream,
    GCancellable * cancellable)
{
  GSource *base = g_pollable_input_stream_create_source
      (G_POLLABLE_INPUT_STREAM (base_of (stream)), cancellable);
  GSource *source;

  /* dispatched as ours: the reader's callback gets this stream (the
   * child's own callback is made a dummy there) */
  source = g_pollable_source_new_full (stream, base, cancellable);
  g_source_unref (base);
  return source;
}

static void
head_guard_pollable_init (GPollableInputStreamInterface * iface)
{
  iface->can_poll = head_guard_can_poll;
  iface->is_readable = head_guard_is_readable;
  iface->create_source = head_guard_create_source;
  iface->read_nonblocking = head_guard_read_nonblocking;
}

static void
head_guard_class_init (HeadGuardClass * klass)
{
  G_INPUT_STREAM_CLASS (klass)->read_fn = head_guard_read;
}

static void
head_guard_init (HeadGuard * g)
{
}

/* ---- the connection ---- */

typedef struct
{
  GTcpConnection parent;
  gboolean looked;
  GInputStream *guard;
} GuardedConnection;

typedef GTcpConnectionClass GuardedConnectionClass;

G_DEFINE_TYPE (GuardedConnection, guarded_connection, G_TYPE_TCP_CONNECTION);

static GInputStream *
guarded_connection_get_input_stream (GIOStream * io)
{
  GuardedConnection *c = (GuardedConnection *) io;
  GInputStream *base = G_IO_STREAM_CLASS
      (guarded_connection_parent_class)->get_input_stream (io);
  GSocket *socket;
  ServerFrontFollow *follow;

  if (c->looked)
    return c->guard ? c->guard : base;
  c->looked = TRUE;
  socket = g_socket_connection_get_socket (G_SOCKET_CONNECTION (io));
  follow = g_object_steal_data (G_OBJECT (socket), FOLLOW_KEY);
  if (follow == NULL)
    return base;
  c->guard = g_object_new (head_guard_get_type (), "base-stream", base,
      "close-base-stream", FALSE, NULL);
  ((HeadGuard *) c->guard)->follow = *follow;
  ((HeadGuard *) c->guard)->fd = g_socket_get_fd (socket);
  g_free (follow);
  return c->guard;
}

static void
guarded_connection_dispose (GObject * object)
{
  GuardedConnection *c = (GuardedConnection *) object;

  g_clear_object (&c->guard);
  G_OBJECT_CLASS (guarded_connection_parent_class)->dispose (object);
}

static void
guarded_connection_class_init (GuardedConnectionClass * klass)
{
  G_OBJECT_CLASS (klass)->dispose = guarded_connection_dispose;
  G_IO_STREAM_CLASS (klass)->get_input_stream =
      guarded_connection_get_input_stream;
}

static void
guarded_connection_init (GuardedConnection * c)
{
}

/* ---- marking and installing ---- */

ServerFrontHead
server_front_guard_attach (GSocket * socket, const gchar * head)
{
  const gchar *line = head + strspn (head, "\r\n");
  gsize len = strcspn (line, "\r\n");
  ServerFrontFollow *follow;
  ServerFrontHead state;

  /* RTSP over HTTP: the tunnel's reader takes it as it comes */
  if (len >= 8 && strncmp (line + len - 8, "HTTP/", 5) == 0)
    return SERVER_FRONT_MORE;
  /* the first head was measured already; this finds where its body ends
   * (and refuses a Content-Length that is not one number) */
  follow = g_new0 (ServerFrontFollow, 1);
  state = server_front_follow (follow, (const guint8 *) head, strlen (head));
  if (state != SERVER_FRONT_MORE) {
    g_free (follow);
    return state;
  }
  g_object_set_data_full (G_OBJECT (socket), FOLLOW_KEY, follow, g_free);
  return SERVER_FRONT_MORE;
}

void
server_front_guard_install (void)
{
  static const GSocketFamily families[] = {
    G_SOCKET_FAMILY_IPV4, G_SOCKET_FAMILY_IPV6
  };
  static const GSocketProtocol protocols[] = {
    G_SOCKET_PROTOCOL_DEFAULT, G_SOCKET_PROTOCOL_TCP
  };

  /* GIO registers its own types when the first is looked up: after it,
   * ours replaces them */
  g_type_class_unref (g_type_class_ref (G_TYPE_TCP_CONNECTION));
  g_socket_connection_factory_lookup_type (G_SOCKET_FAMILY_IPV4,
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP);
  for (guint f = 0; f < G_N_ELEMENTS (families); f++)
    for (guint p = 0; p < G_N_ELEMENTS (protocols); p++)
      g_socket_connection_factory_register_type
          (guarded_connection_get_type (), families[f], G_SOCKET_TYPE_STREAM,
          protocols[p]);
}
