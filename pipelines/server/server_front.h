/* server_front.h: the front door of gpustream-server's RTSP connections.
 *
 * Every connection accepted on the RTSP port is read here until its first
 * request head (request line, headers, the empty line) is complete; only
 * then is it handed on (to the shared sender's thread or to
 * gst-rtsp-server) with that head. The head is measured on the bytes read:
 * a line longer than SERVER_FRONT_LINE_MAX or a head longer than
 * SERVER_FRONT_HEAD_MAX is answered 431, a head with bytes no request
 * holds (NUL, control characters, a request line that is not one) 400,
 * and the connection is closed either way. A connection that completes no
 * head within the idle timeout is closed.
 *
 * Connections that were handed on are closed when they hold no session and
 * have been silent for the idle timeout (server_front_idle): a client
 * cannot hold a descriptor by connecting and never playing. */
#ifndef GPUSTREAM_SERVER_FRONT_H
#define GPUSTREAM_SERVER_FRONT_H

#include <gio/gio.h>

/* as nginx's large_client_header_buffers (4 of 8 KiB) */
#define SERVER_FRONT_LINE_MAX 8192
#define SERVER_FRONT_HEAD_MAX 32768

typedef enum
{
  SERVER_FRONT_MORE,            /* no end of head yet, nothing wrong so far */
  SERVER_FRONT_DONE,            /* a head of *head_len bytes */
  SERVER_FRONT_BAD,             /* 400 */
  SERVER_FRONT_TOO_LARGE,       /* 431 */
} ServerFrontHead;

/* Where a scan of a connection's first bytes got to: the complete lines
 * before line_start are read and good. Zeroed for a new connection. */
typedef struct
{
  gsize line_start;
  gboolean past_first;          /* the request line is among them */
} ServerFrontScan;

/* Reads the start of a connection's bytes, buf[0, len) (the same bytes as
 * the last call, and maybe more): whether they hold a whole request head
 * (its length in *head_len, the empty line included), not yet, or one to
 * refuse */
ServerFrontHead server_front_scan (ServerFrontScan * scan, const gchar * buf,
    gsize len, gsize * head_len);

/* Where a connection's bytes after its first head are: every later head
 * is measured on the bytes as they are read, as the first was (a line
 * longer than SERVER_FRONT_LINE_MAX or a head longer than
 * SERVER_FRONT_HEAD_MAX is too large, a control character bad); the bytes
 * of interleaved frames ('$', channel, length) and of bodies (as long as
 * the head's Content-Length) pass unread. The syntax of the lines is the
 * reader's (gst-rtsp-server's): this bounds what it is made to hold.
 * Zeroed for the start of a head, or fed the first head. */
typedef struct
{
  guint8 at;                    /* FOLLOW_* of server_front.c */
  guint8 cl;                    /* the Content-Length header: CL_* */
  gboolean past_first;          /* the head's first line is complete */
  gboolean has_length;          /* a Content-Length line is complete */
  gboolean cr;                  /* the byte before was a CR */
  gsize head_len, line_len;
  guint64 content_length, left;
  guint frame_have;             /* bytes of an interleaved frame's header */
  guint8 frame_head[3];
} ServerFrontFollow;

/* Follows buf[0, len): SERVER_FRONT_MORE while nothing is wrong, or the
 * refusal (and f is then left as it was at the offending byte) */
ServerFrontHead server_front_follow (ServerFrontFollow * f, const guint8 * buf,
    gsize len);

/* What takes a connection once its first head is in: socket (transfer
 * full), the client's address, and the head (what was read of it) */
typedef void (*ServerFrontHandoff) (GSocket * socket, const gchar * ip,
    gint port, const gchar * head, gpointer data);

/* Seconds a connection without a session may stay silent (> 0) */
void server_front_set_idle_timeout (guint seconds);
guint server_front_get_idle_timeout (void);

/* Reads the first head of a client just accepted (socket: transfer full)
 * in context (NULL: the default one), then calls handoff there */
void server_front_take (GSocket * socket, const gchar * ip, gint port,
    GMainContext * context, ServerFrontHandoff handoff, gpointer data);

/* For a connection handed on, holding no session: TRUE (and the connection
 * shut down, both ways, so that its reader sees it end and closes it) when
 * the client has sent nothing for the idle timeout; counted */
gboolean server_front_idle (GSocket * socket);

/* Makes the RTSP reader of every connection handed on from here read
 * through a ServerFrontFollow (server_front_guard.c): a later head over
 * the limits is answered as the first would be, and the reader sees the
 * connection end. Once, before the first connection is taken. */
void server_front_guard_install (void);

/* Marks socket, whose first head is head, for the guard (a connection of
 * RTSP; one of RTSP over HTTP is left as it is): SERVER_FRONT_MORE, or the
 * refusal of a head whose Content-Length is not one number */
ServerFrontHead server_front_guard_attach (GSocket * socket,
    const gchar * head);

/* The refusal's answer (400 or 431) sent on fd, its sending side shut;
 * counted with the heads refused */
void server_front_answer_refusal (int fd, ServerFrontHead why);

/* Counts so far: connections closed idle, heads refused */
guint64 server_front_idle_closed (void);
guint64 server_front_refused (void);

#endif /* GPUSTREAM_SERVER_FRONT_H */
