/* bench_http_fetch: the HTTP client of ./run bench server-files. C
 * keep-alive connections at once, each asking for the given paths in turn
 * (GET, HTTP/1.1) for the given seconds; prints one JSON object: responses,
 * body bytes, seconds, and any error. Bodies are dropped in the kernel
 * (recv MSG_TRUNC) so that the client costs as little CPU as it can: the
 * same client measures every server.
 *
 *   bench_http_fetch PORT CONNECTIONS SECONDS PATH...
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct
{
  int fd;
  unsigned next_path;
  char head[8192];
  size_t head_len;
  int in_head;
  /* body bytes still to come of the current response */
  long long body_left;
} Conn;

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
send_request (Conn * c, char **paths, int npaths)
{
  char req[1024];
  int len = snprintf (req, sizeof req,
      "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
      paths[c->next_path++ % npaths]);

  c->head_len = 0;
  c->in_head = 1;
  /* a request this small always fits in an idle socket's buffer */
  return send (c->fd, req, len, MSG_NOSIGNAL) == len ? 0 : -1;
}

static int
open_conn (Conn * c, int port, int epfd, unsigned first_path)
{
  struct sockaddr_in addr = {.sin_family = AF_INET,.sin_port = htons (port) };
  struct epoll_event ev = {.events = EPOLLIN,.data.ptr = c };
  int one = 1;

  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  c->fd = socket (AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0 || connect (c->fd, (struct sockaddr *) &addr, sizeof addr))
    return -1;
  setsockopt (c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  /* one loop for all connections: none may block it */
  fcntl (c->fd, F_SETFL, fcntl (c->fd, F_GETFL) | O_NONBLOCK);
  c->next_path = first_path;
  return epoll_ctl (epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

int
main (int argc, char **argv)
{
  int port, nconn, npaths, epfd;
  double seconds, start, end;
  unsigned long long responses = 0, bytes = 0;
  const char *error = NULL;
  Conn *conns;

  if (argc < 5) {
    fprintf (stderr, "usage: %s PORT CONNECTIONS SECONDS PATH...\n", argv[0]);
    return 2;
  }
  port = atoi (argv[1]);
  nconn = atoi (argv[2]);
  seconds = atof (argv[3]);
  npaths = argc - 4;
  conns = calloc (nconn, sizeof *conns);
  epfd = epoll_create1 (0);
  for (int i = 0; i < nconn; i++)
    if (open_conn (&conns[i], port, epfd, i) != 0
        || send_request (&conns[i], argv + 4, npaths) != 0) {
      printf ("{\"error\": \"connect: %s\"}\n", strerror (errno));
      return 1;
    }

  start = now_s ();
  end = start + seconds;
  while (error == NULL && now_s () < end) {
    struct epoll_event evs[256];
    int n = epoll_wait (epfd, evs, 256, 100);

    for (int i = 0; i < n && error == NULL; i++) {
      Conn *c = evs[i].data.ptr;

      for (;;) {
        ssize_t got;

        if (c->in_head) {
          char *end_of_head, *cl;

          got = recv (c->fd, c->head + c->head_len,
              sizeof c->head - 1 - c->head_len, 0);
          if (got < 0 && errno == EAGAIN)
            break;
          if (got <= 0) {
            error = got == 0 ? "server closed a connection" : strerror (errno);
            break;
          }
          c->head_len += got;
          c->head[c->head_len] = '\0';
          end_of_head = strstr (c->head, "\r\n\r\n");
          if (end_of_head == NULL)
            continue;
          if (strncmp (c->head, "HTTP/1.1 200 ", 13) != 0
              || (cl = strcasestr (c->head, "\r\nContent-Length:")) == NULL) {
            error = "not a 200 response with a Content-Length";
            break;
          }
          c->in_head = 0;
          c->body_left = strtoll (cl + 17, NULL, 10);
          /* body bytes that came with the head */
          got = c->head + c->head_len - (end_of_head + 4);
          c->body_left -= got;
          bytes += got;
        } else {
          size_t want = c->body_left > (1 << 20) ? (1 << 20) : c->body_left;

          got = want ? recv (c->fd, NULL, want, MSG_TRUNC) : 0;
          if (got < 0 && errno == EAGAIN)
            break;
          if (want && got <= 0) {
            error = got == 0 ? "server closed a connection" : strerror (errno);
            break;
          }
          c->body_left -= got;
          bytes += got;
        }
        if (c->in_head)
          continue;
        if (c->body_left == 0) {
          responses++;
          if (send_request (c, argv + 4, npaths) != 0) {
            error = "cannot send a request";
            break;
          }
        } else if (c->body_left < 0) {
          error = "more body than Content-Length";
          break;
        }
      }
    }
  }
  printf ("{\"responses\": %llu, \"bytes\": %llu, \"seconds\": %.3f%s%s%s}\n",
      responses, bytes, now_s () - start, error ? ", \"error\": \"" : "",
      error ? error : "", error ? "\"" : "");
  return error ? 1 : 0;
}
