/* server_http.c: files of the served directory over HTTP/1.1, with
 * sendfile(2): the bytes go from the page cache (the server's one copy of
 * each file) to the socket without a copy through user space, as the media
 * streaming server of Woo-Yeong Jeong, Youngjae Lee, Jin-Soo Kim, "A
 * High-Performance Media Streaming Architecture based on KVM", 2018 sends
 * its DASH segments.
 *
 * GET and HEAD, one byte range (Range: bytes=A-B, A-, -N), keep-alive and
 * pipelined requests, the origin and absolute forms of request targets;
 * Date, Last-Modified and ETag on every file, and the conditional
 * requests they make (If-None-Match, If-Modified-Since: 304; If-Range). Request paths map to files exactly as the plain RTSP
 * mount's do (server_paths.c): a path that is not a regular file inside the
 * directory, or is not spelled the one way the server serves it, is 404. */
#define _GNU_SOURCE             /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gio/gio.h>

#include "server_http.h"
#include "server_http_request.h"
#include "server_paths.h"

/* a request's head (request line and headers) must fit in this */
#define HTTP_HEAD_MAX 8192
/* a connection silent for this long (mid-request or between requests) is
 * closed: a client cannot hold a slot by sending nothing */
#define HTTP_IDLE_TIMEOUT_US (30 * G_USEC_PER_SEC)
/* after the last response of a connection, what the client still sends is
 * read and dropped for this long before closing: closing with unread bytes
 * would reset the connection, and the client could lose the response */
#define HTTP_LINGER_US (2 * G_USEC_PER_SEC)
/* most request paths whose resolution a worker remembers */
#define HTTP_RESOLVED_MAX 4096

typedef struct _HttpConn HttpConn;

struct _HttpConn
{
  int fd;
  gchar in[HTTP_HEAD_MAX];
  gsize in_len;
  /* the response head (or a whole error response) still to send */
  gchar out[1024];
  gsize out_len, out_sent;
  /* then the file's bytes [file_off, file_end) */
  int file_fd;
  off_t file_off, file_end;
  gboolean keep_alive;
  gboolean writing;
  /* the response is sent and our side shut: draining until the client
   * closes, or until linger_until */
  gboolean lingering;
  gint64 linger_until;
  gint64 last_active;
  /* what epoll watches for now */
  guint32 events;
  GList link;
};

typedef struct
{
  int epfd;
  int listen_fd;
  gboolean listening;
  gchar *root_real;
  /* request path -> the real path of its file, as server_paths resolved
   * it (a path with no symbolic link in it) */
  GHashTable *resolved;
  /* every open connection, for the idle sweep */
  GQueue conns;
} HttpServer;

/* ---- the request: parsed into what the response needs ---- */

static const gchar *
content_type (const gchar * path)
{
  static const struct
  {
    const gchar *suffix, *type;
  } types[] = {
    {".ts", "video/mp2t"}, {".m2ts", "video/mp2t"}, {".mp4", "video/mp4"},
    {".m4s", "video/iso.segment"}, {".m4v", "video/mp4"},
    {".m4a", "audio/mp4"}, {".mkv", "video/x-matroska"},
    {".webm", "video/webm"}, {".mpd", "application/dash+xml"},
    {".m3u8", "application/vnd.apple.mpegurl"},
  };

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    if (g_str_has_suffix (path, types[i].suffix))
      return types[i].type;
  return "application/octet-stream";
}

static void
respond_error (HttpConn * c, guint status, const gchar * reason,
    gboolean head_only, const gchar * extra_headers)
{
  gchar body[64];
  gint body_len = g_snprintf (body, sizeof body, "%u %s\n", status, reason);

  /* after a request we could not parse, or one that may carry a body we do
   * not read (a POST), nothing else on the connection can be trusted to
   * start a request */
  if (status == 400 || status == 405)
    c->keep_alive = FALSE;
  c->out_len = g_snprintf (c->out, sizeof c->out,
      "HTTP/1.1 %u %s\r\nServer: gpustream-server\r\n"
      "Content-Type: text/plain\r\nContent-Length: %d\r\n%s"
      "Connection: %s\r\n\r\n%s", status, reason, body_len,
      extra_headers ? extra_headers : "",
      c->keep_alive ? "keep-alive" : "close", head_only ? "" : body);
  c->out_sent = 0;
}

/* The file a request path names, opened (and *st), or -1. Resolving a path
 * (realpath: one readlink per component, then stat) costs more system calls
 * than sending a small segment. A path that led to its file through no
 * symbolic link is remembered, and opened again in one call that refuses
 * any link on the way: one found there now (a directory swapped for a link
 * out of the directory) sends the path through server_paths again. Paths
 * through links (a manifest re-pointed at each update) are resolved at
 * every request. */
static int
open_request_file (HttpServer * srv, const gchar * path, gchar ** file_out,
    struct stat *st)
{
  const gchar *known = g_hash_table_lookup (srv->resolved, path);
  gchar *file;
  MountKind kind;
  int fd;

  if (known != NULL) {
    struct open_how how = {.flags = O_RDONLY | O_CLOEXEC,
      .resolve = RESOLVE_NO_SYMLINKS
    };

    fd = syscall (SYS_openat2, AT_FDCWD, known, &how, sizeof how);
    if (fd >= 0 && fstat (fd, st) == 0 && S_ISREG (st->st_mode)) {
      *file_out = g_strdup (known);
      return fd;
    }
    if (fd >= 0)
      close (fd);
    g_hash_table_remove (srv->resolved, path);
  }
  file = media_dir_resolve (srv->root_real, path, &kind);
  if (file == NULL || kind != MOUNT_PLAIN || !path_is_canonical (path)) {
    g_free (file);
    return -1;
  }
  fd = open (file, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, st) != 0 || !S_ISREG (st->st_mode)) {
    if (fd >= 0)
      close (fd);
    g_free (file);
    return -1;
  }
  if (!g_hash_table_contains (srv->resolved, path)) {
    g_autofree gchar *decoded = g_uri_unescape_string (path, NULL);
    g_autofree gchar *joined = g_strconcat (srv->root_real, decoded, NULL);

    if (strcmp (joined, file) == 0) {
      if (g_hash_table_size (srv->resolved) >= HTTP_RESOLVED_MAX)
        g_hash_table_remove_all (srv->resolved);
      g_hash_table_insert (srv->resolved, g_strdup (path), g_strdup (file));
    }
  }
  *file_out = file;
  return fd;
}

/* Turns the head in c->in[0, head_len) into a response in c */
static void
handle_request (HttpServer * srv, HttpConn * c, gsize head_len)
{
  HttpRequest req;
  g_autofree gchar *file = NULL;
  gboolean head_only;
  struct stat st;
  guint64 first = 0, last = 0, size;
  HttpRange ranged;
  gchar content_range[96] = "";
  gchar etag[48], modified[32], now[32], validators[192];
  gint64 since = 0;

  http_request_parse (c->in, head_len, &req);
  c->keep_alive = req.keep_alive;
  head_only = req.head_only;
  if (req.status == 405) {
    respond_error (c, 405, "Method Not Allowed", FALSE,
        "Allow: GET, HEAD\r\n");
    goto done;
  }
  if (req.status != 0) {
    respond_error (c, 400, "Bad Request", head_only, NULL);
    goto done;
  }
  c->file_fd = open_request_file (srv, req.path, &file, &st);
  if (c->file_fd < 0) {
    respond_error (c, 404, "Not Found", head_only, NULL);
    goto done;
  }
  size = st.st_size;
  /* the validators: an entity tag of the size and modification time (a
   * file replaced or changed gets another), its Last-Modified, and Date */
  g_snprintf (etag, sizeof etag, "\"%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER
      "x\"", (gint64) st.st_size, (gint64) st.st_mtim.tv_sec * G_GINT64_CONSTANT
      (1000000000) + st.st_mtim.tv_nsec);
  http_date_format (st.st_mtim.tv_sec, modified);
  http_date_format (g_get_real_time () / G_USEC_PER_SEC, now);
  g_snprintf (validators, sizeof validators, "Date: %s\r\nLast-Modified: "
      "%s\r\nETag: %s\r\n", now, modified, etag);
  /* If-None-Match, else If-Modified-Since (RFC 9110 13.2.2): the client's
   * copy is the file's */
  if (req.if_none_match != NULL ? http_etag_matches (req.if_none_match, etag,
          TRUE) : (http_date_parse (req.if_modified_since, &since)
          && st.st_mtim.tv_sec <= since)) {
    close (c->file_fd);
    c->file_fd = -1;
    c->out_len = g_snprintf (c->out, sizeof c->out,
        "HTTP/1.1 304 Not Modified\r\nServer: gpustream-server\r\n%s"
        "Connection: %s\r\n\r\n", validators,
        c->keep_alive ? "keep-alive" : "close");
    c->out_sent = 0;
    goto done;
  }
  ranged = http_range_parse (req.range, size, &first, &last);
  /* If-Range: the range of the copy the client has, the whole file when
   * that is not this one (a strong entity tag match, or the very date) */
  if (ranged != HTTP_RANGE_NONE && req.if_range != NULL &&
      !(req.if_range[0] == '"' ? http_etag_matches (req.if_range, etag,
              FALSE) : (http_date_parse (req.if_range, &since)
              && since == st.st_mtim.tv_sec))) {
    ranged = HTTP_RANGE_NONE;
    first = 0;
  }
  if (ranged == HTTP_RANGE_UNSATISFIABLE) {
    close (c->file_fd);
    c->file_fd = -1;
    g_snprintf (content_range, sizeof content_range,
        "Content-Range: bytes */%" G_GUINT64_FORMAT "\r\n", size);
    respond_error (c, 416, "Range Not Satisfiable", head_only, content_range);
    goto done;
  }
  if (ranged == HTTP_RANGE_OK)
    g_snprintf (content_range, sizeof content_range,
        "Content-Range: bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
        "/%" G_GUINT64_FORMAT "\r\n", first, last, size);
  else if (size > 0)
    last = size - 1;
  c->out_len = g_snprintf (c->out, sizeof c->out,
      "HTTP/1.1 %s\r\nServer: gpustream-server\r\nContent-Type: %s\r\n"
      "Content-Length: %" G_GUINT64_FORMAT "\r\nAccept-Ranges: bytes\r\n%s%s"
      "Connection: %s\r\n\r\n",
      ranged == HTTP_RANGE_OK ? "206 Partial Content" : "200 OK",
      content_type (file), size == 0 ? 0 : last - first + 1, content_range,
      validators, c->keep_alive ? "keep-alive" : "close");
  c->out_sent = 0;
  if (head_only || size == 0) {
    close (c->file_fd);
    c->file_fd = -1;
    goto done;
  }
  c->file_off = first;
  c->file_end = last + 1;
done:
  http_request_clear (&req);
}

/* ---- the connections: read a head, write a response, again ---- */

static void
conn_close (HttpServer * srv, HttpConn * c)
{
  epoll_ctl (srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close (c->fd);
  if (c->file_fd >= 0)
    close (c->file_fd);
  g_queue_unlink (&srv->conns, &c->link);
  g_free (c);
}

static void
conn_watch (HttpServer * srv, HttpConn * c, guint32 events)
{
  struct epoll_event ev = {.events = events,.data.ptr = c };

  /* most responses leave in one go: no change, no system call */
  if (c->events == events)
    return;
  c->events = events;
  epoll_ctl (srv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static gboolean conn_read (HttpServer * srv, HttpConn * c);

/* Sends what the socket takes; FALSE when the connection is closed */
static gboolean
conn_write (HttpServer * srv, HttpConn * c)
{
  while (c->out_sent < c->out_len) {
    ssize_t n = send (c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
        MSG_NOSIGNAL | (c->file_fd >= 0 ? MSG_MORE : 0));

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      goto wait_writable;
    if (n <= 0)
      goto closed;
    c->out_sent += n;
  }
  while (c->file_fd >= 0 && c->file_off < c->file_end) {
    /* the kernel takes what fits in the socket's buffer and moves the
     * offset: a partial write continues from there when writable again */
    ssize_t n = sendfile (c->fd, c->file_fd, &c->file_off,
        MIN (c->file_end - c->file_off, (off_t) 1 << 30));

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      goto wait_writable;
    /* 0: the file got shorter than the length announced; the connection
     * cannot be kept in step with the client any more */
    if (n <= 0)
      goto closed;
  }
  if (c->file_fd >= 0) {
    close (c->file_fd);
    c->file_fd = -1;
  }
  c->writing = FALSE;
  if (!c->keep_alive) {
    shutdown (c->fd, SHUT_WR);
    c->lingering = TRUE;
    c->linger_until = g_get_monotonic_time () + HTTP_LINGER_US;
    conn_watch (srv, c, EPOLLIN | EPOLLRDHUP);
    return TRUE;
  }
  conn_watch (srv, c, EPOLLIN | EPOLLRDHUP);
  /* a pipelined request may already be in the buffer */
  return conn_read (srv, c);

wait_writable:
  conn_watch (srv, c, EPOLLOUT);
  return TRUE;
closed:
  conn_close (srv, c);
  return FALSE;
}

/* Reads until a whole head is in, then answers it; FALSE when the
 * connection is closed */
static gboolean
conn_read (HttpServer * srv, HttpConn * c)
{
  while (c->lingering) {
    gchar drop[4096];
    ssize_t n = recv (c->fd, drop, sizeof drop, 0);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return TRUE;
    if (n <= 0) {
      conn_close (srv, c);
      return FALSE;
    }
  }
  for (;;) {
    gchar *end = g_strstr_len (c->in, c->in_len, "\r\n\r\n");

    if (end != NULL) {
      gsize head_len = end - c->in;
      gsize used = head_len + 4;

      handle_request (srv, c, head_len);
      /* a body (none is expected for GET and HEAD) is not read: the
       * bytes after the head start the next request */
      memmove (c->in, c->in + used, c->in_len - used);
      c->in_len -= used;
      c->writing = TRUE;
      return conn_write (srv, c);
    }
    if (c->in_len == sizeof c->in) {
      respond_error (c, 400, "Bad Request", FALSE, NULL);
      c->in_len = 0;
      c->writing = TRUE;
      return conn_write (srv, c);
    }
    ssize_t n = recv (c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return TRUE;
    if (n <= 0) {
      conn_close (srv, c);
      return FALSE;
    }
    c->in_len += n;
  }
}

static void
accept_clients (HttpServer * srv)
{
  for (;;) {
    int fd = accept4 (srv->listen_fd, NULL, NULL,
        SOCK_NONBLOCK | SOCK_CLOEXEC);
    HttpConn *c;
    struct epoll_event ev;
    int one = 1;

    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      /* out of descriptors: stop listening until the next sweep, rather
       * than be woken for the same waiting client again and again */
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
          || errno == ENOMEM) {
        g_printerr ("gpustream-server: http: cannot accept a client: %s\n",
            g_strerror (errno));
        epoll_ctl (srv->epfd, EPOLL_CTL_DEL, srv->listen_fd, NULL);
        srv->listening = FALSE;
      }
      return;
    }
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c = g_new0 (HttpConn, 1);
    c->fd = fd;
    c->file_fd = -1;
    c->last_active = g_get_monotonic_time ();
    c->link.data = c;
    g_queue_push_tail_link (&srv->conns, &c->link);
    ev.events = c->events = EPOLLIN | EPOLLRDHUP;
    ev.data.ptr = c;
    epoll_ctl (srv->epfd, EPOLL_CTL_ADD, fd, &ev);
  }
}

static void
listen_again (HttpServer * srv)
{
  /* exclusive: of the processes sharing the socket, one is woken for a
   * client, not all of them */
  struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE,.data.ptr = NULL };

  if (epoll_ctl (srv->epfd, EPOLL_CTL_ADD, srv->listen_fd, &ev) == 0)
    srv->listening = TRUE;
}

static void
sweep_idle (HttpServer * srv, gint64 now)
{
  GList *l = srv->conns.head;

  while (l != NULL) {
    HttpConn *c = l->data;

    l = l->next;
    if (now - c->last_active > HTTP_IDLE_TIMEOUT_US
        || (c->lingering && now > c->linger_until))
      conn_close (srv, c);
  }
  if (!srv->listening)
    listen_again (srv);
}

static gpointer
http_loop (gpointer data)
{
  HttpServer *srv = data;
  struct epoll_event events[256];
  gint64 last_sweep = g_get_monotonic_time ();

  for (;;) {
    int n = epoll_wait (srv->epfd, events, G_N_ELEMENTS (events), 1000);
    gint64 now = g_get_monotonic_time ();

    for (int i = 0; i < n; i++) {
      HttpConn *c = events[i].data.ptr;

      if (c == NULL) {
        accept_clients (srv);
        continue;
      }
      c->last_active = now;
      if (events[i].events & (EPOLLERR | EPOLLHUP))
        conn_close (srv, c);
      else if (c->writing)
        conn_write (srv, c);
      else
        conn_read (srv, c);
    }
    if (now - last_sweep >= G_USEC_PER_SEC) {
      sweep_idle (srv, now);
      last_sweep = now;
    }
  }
  return NULL;
}

gboolean
server_http_start (int listen_fd, const gchar * root_real, GError ** err)
{
  HttpServer *srv = g_new0 (HttpServer, 1);
  int flags = fcntl (listen_fd, F_GETFL);

  /* the socket may be shared with other workers: whoever is woken second
   * for a client finds nothing to accept, and must not block */
  if (flags < 0 || fcntl (listen_fd, F_SETFL, flags | O_NONBLOCK) < 0
      || (srv->epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0) {
    g_set_error (err, G_IO_ERROR, g_io_error_from_errno (errno),
        "http: %s", g_strerror (errno));
    g_free (srv);
    return FALSE;
  }
  /* sendfile has no MSG_NOSIGNAL: a write to a client gone mid-file must
   * cost its connection (EPIPE), never the process */
  signal (SIGPIPE, SIG_IGN);
  srv->listen_fd = listen_fd;
  srv->root_real = g_strdup (root_real);
  srv->resolved = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  g_queue_init (&srv->conns);
  listen_again (srv);
  if (!srv->listening) {
    g_set_error (err, G_IO_ERROR, g_io_error_from_errno (errno),
        "http: %s", g_strerror (errno));
    close (srv->epfd);
    g_hash_table_unref (srv->resolved);
    g_free (srv->root_real);
    g_free (srv);
    return FALSE;
  }
  /* the loop serves for the life of the process */
  g_thread_unref (g_thread_new ("http", http_loop, srv));
  return TRUE;
}
