/* server_workers.c: gpustream-server's worker processes and listening
 * sockets.
 *
 * The workers share each listening socket: the supervisor binds it once,
 * before starting them, and each worker inherits it (rather than each
 * binding its own with SO_REUSEPORT). One socket means one accept queue:
 * a worker that dies loses no client still waiting in it (a SO_REUSEPORT
 * socket's queue is reset when its process dies), the worker started in its
 * place accepts on the very same socket, and --port 0 gives all of them one
 * port. The kernel hands each new client to one of the workers waiting on
 * the socket.
 *
 * Workers are this program started again (fork, then exec), so that each
 * initialises GStreamer, its registry and its threads for itself: the
 * supervisor never runs a pipeline, and nothing of its state crosses into
 * a worker. */
#define _GNU_SOURCE             /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gio/gio.h>

#include "server_direct.h"
#include "server_front.h"
#include "server_http.h"
#include "server_workers.h"

/* ---- options ---- */

#define MAX_WORKERS 256
/* a worker that dies this soon after its start, this many times in a row,
 * is not started again: the server stops and says why */
#define QUICK_DEATH_S 2
#define QUICK_DEATHS_MAX 5
/* seconds the workers have to exit on SIGTERM before they are killed */
#define STOP_GRACE_S 5

static gint opt_workers = 1;
static gint opt_http_port = -1;
/* "INDEX,RTSP_FD,HTTP_FD": set by the supervisor for the workers it starts */
static gchar *opt_worker = NULL;

static gint worker_index = -1;
static int worker_rtsp_fd = -1;
static int worker_http_fd = -1;

static GOptionEntry worker_entries[] = {
  {"workers", 'w', 0, G_OPTION_ARG_INT, &opt_workers,
        "Worker processes sharing the listening sockets, each serving its "
        "own clients, restarted if one dies (default 1: this process "
        "serves)", "N"},
  {"http-port", 0, 0, G_OPTION_ARG_INT, &opt_http_port,
        "Also serve the directory's files as they are over HTTP (GET, HEAD, "
        "byte ranges, sent with sendfile) on this TCP port; 0 binds any "
        "free port (default: no HTTP)", "PORT"},
  {"worker", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &opt_worker,
      "(set by the server for its workers)", "INDEX,FD,FD"},
  {NULL}
};

GOptionEntry *
server_workers_option_entries (void)
{
  return worker_entries;
}

gboolean
server_workers_check_options (gboolean proxy)
{
  if (opt_workers < 1 || opt_workers > MAX_WORKERS) {
    g_printerr ("gpustream-server: --workers is 1 to %d, not %d\n",
        MAX_WORKERS, opt_workers);
    return FALSE;
  }
  if (opt_http_port < -1 || opt_http_port > 65535) {
    g_printerr ("gpustream-server: --http-port is 0-65535, not %d\n",
        opt_http_port);
    return FALSE;
  }
  if (opt_http_port >= 0 && proxy) {
    g_printerr ("gpustream-server: --http-port serves the files of a "
        "directory, and --proxy serves none\n");
    return FALSE;
  }
  if (opt_worker != NULL) {
    gchar *end;
    g_auto (GStrv) parts = g_strsplit (opt_worker, ",", -1);

    if (g_strv_length (parts) != 3)
      goto bad_worker;
    worker_index = g_ascii_strtoll (parts[0], &end, 10);
    if (*end != '\0' || worker_index < 0)
      goto bad_worker;
    worker_rtsp_fd = g_ascii_strtoll (parts[1], &end, 10);
    if (*end != '\0' || worker_rtsp_fd < 0)
      goto bad_worker;
    worker_http_fd = g_ascii_strtoll (parts[2], &end, 10);
    if (*end != '\0' || worker_http_fd < -1)
      goto bad_worker;
  }
  return TRUE;

bad_worker:
  g_printerr ("gpustream-server: --worker is set by the server for its "
      "workers, not %s\n", opt_worker);
  return FALSE;
}

/* ---- listening sockets ---- */

/* A listening TCP socket on address:port (all addresses when NULL), or -1
 * and the reason in *reason. Not close-on-exec: workers inherit it. */
static int
bind_listener (const gchar * address, gint port, gint * bound_port,
    const gchar ** reason)
{
  struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
    .ai_family = AF_UNSPEC,.ai_socktype = SOCK_STREAM
  };
  struct addrinfo *res, *ai;
  gchar service[8];
  int fd = -1, one = 1, rc;

  g_snprintf (service, sizeof service, "%d", port);
  rc = getaddrinfo (address ? address : "0.0.0.0", service, &hints, &res);
  if (rc != 0) {
    *reason = gai_strerror (rc);
    return -1;
  }
  *reason = "no address";
  for (ai = res; ai != NULL; ai = ai->ai_next) {
    struct sockaddr_storage bound;
    socklen_t len = sizeof bound;

    fd = socket (ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      *reason = g_strerror (errno);
      continue;
    }
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind (fd, ai->ai_addr, ai->ai_addrlen) == 0
        && listen (fd, SOMAXCONN) == 0
        && getsockname (fd, (struct sockaddr *) &bound, &len) == 0) {
      *bound_port = ntohs (bound.ss_family == AF_INET6
          ? ((struct sockaddr_in6 *) &bound)->sin6_port
          : ((struct sockaddr_in *) &bound)->sin_port);
      break;
    }
    *reason = g_strerror (errno);
    close (fd);
    fd = -1;
  }
  freeaddrinfo (res);
  return fd;
}

static void
print_url (const gchar * scheme, const gchar * address, gint port)
{
  g_print ("%s://%s:%d/\n", scheme, address ? address : "0.0.0.0", port);
}

/* ---- the supervisor ---- */

typedef struct
{
  GPid pid;
  gint64 started_s;
  guint quick_deaths;
} WorkerSlot;

static GPid
start_worker (gchar ** worker_argv, const sigset_t * child_mask)
{
  pid_t parent = getpid ();
  pid_t pid = fork ();

  if (pid != 0)
    return pid;
  /* the worker: signals as the user's process had them, and stopped with
   * the supervisor whatever way it ends (no orphan serving on) */
  sigprocmask (SIG_SETMASK, child_mask, NULL);
  prctl (PR_SET_PDEATHSIG, SIGTERM);
  if (getppid () != parent)
    _exit (1);
  execv ("/proc/self/exe", worker_argv);
  fprintf (stderr, "gpustream-server: cannot start a worker: %s\n",
      strerror (errno));
  _exit (127);
}

static gchar *
describe_exit (int status)
{
  if (WIFSIGNALED (status))
    return g_strdup_printf ("killed by signal %d (%s)", WTERMSIG (status),
        g_strsignal (WTERMSIG (status)));
  return g_strdup_printf ("exited with status %d", WEXITSTATUS (status));
}

static void
stop_workers (WorkerSlot * slots, gint n)
{
  struct timespec grace = {.tv_sec = STOP_GRACE_S };
  gint64 deadline = g_get_monotonic_time () + STOP_GRACE_S * G_USEC_PER_SEC;
  gint alive = 0;

  for (gint i = 0; i < n; i++)
    if (slots[i].pid > 0 && kill (slots[i].pid, SIGTERM) == 0)
      alive++;
  while (alive > 0 && g_get_monotonic_time () < deadline) {
    int status;
    pid_t pid;
    sigset_t chld;

    sigemptyset (&chld);
    sigaddset (&chld, SIGCHLD);
    while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
      for (gint i = 0; i < n; i++)
        if (slots[i].pid == pid) {
          slots[i].pid = 0;
          alive--;
        }
    if (alive > 0)
      sigtimedwait (&chld, NULL, &grace);
  }
  for (gint i = 0; i < n; i++)
    if (slots[i].pid > 0) {
      kill (slots[i].pid, SIGKILL);
      waitpid (slots[i].pid, NULL, 0);
      slots[i].pid = 0;
    }
}

/* only [1] is the worker's own; the rest is the user's command line */
static void
free_worker_argv (gchar ** worker_argv)
{
  g_free (worker_argv[1]);
  g_free (worker_argv);
}

int
server_workers_supervise (gchar ** argv, const gchar * address, gint port,
    gboolean proxy)
{
  g_autofree WorkerSlot *slots = NULL;
  sigset_t wait_set, child_mask;
  gint rtsp_port = 0, http_port = 0;
  const gchar *reason;
  int rtsp_fd, http_fd = -1;
  guint argc = g_strv_length (argv);
  gchar **worker_argv;

  if (opt_worker != NULL || opt_workers <= 1)
    return -1;

  rtsp_fd = bind_listener (address, port, &rtsp_port, &reason);
  if (rtsp_fd < 0) {
    g_printerr ("gpustream-server: cannot listen on %s:%d: %s\n",
        address ? address : "0.0.0.0", port, reason);
    return 1;
  }
  if (opt_http_port >= 0) {
    http_fd = bind_listener (address, opt_http_port, &http_port, &reason);
    if (http_fd < 0) {
      g_printerr ("gpustream-server: cannot listen for HTTP on %s:%d: %s\n",
          address ? address : "0.0.0.0", opt_http_port, reason);
      return 1;
    }
  }

  /* the worker's command line: the user's, and which sockets are its */
  worker_argv = g_new0 (gchar *, argc + 2);
  worker_argv[0] = argv[0];
  worker_argv[1] = g_strdup_printf ("--worker=0,%d,%d", rtsp_fd, http_fd);
  for (guint i = 1; i < argc; i++)
    worker_argv[i + 1] = argv[i];

  sigemptyset (&wait_set);
  sigaddset (&wait_set, SIGCHLD);
  sigaddset (&wait_set, SIGINT);
  sigaddset (&wait_set, SIGTERM);
  sigaddset (&wait_set, SIGHUP);
  sigprocmask (SIG_BLOCK, &wait_set, &child_mask);

  print_url ("rtsp", address, rtsp_port);
  if (http_fd >= 0)
    print_url ("http", address, http_port);
  slots = g_new0 (WorkerSlot, opt_workers);
  for (gint i = 0; i < opt_workers; i++) {
    g_free (worker_argv[1]);
    worker_argv[1] = g_strdup_printf ("--worker=%d,%d,%d", i + 1, rtsp_fd,
        http_fd);
    slots[i].pid = start_worker (worker_argv, &child_mask);
    slots[i].started_s = g_get_monotonic_time () / G_USEC_PER_SEC;
    g_print ("worker %d: pid %d\n", i + 1, slots[i].pid);
  }
  fflush (stdout);

  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo (&wait_set, &info);
    int status;
    pid_t pid;

    if (sig < 0)
      continue;
    if (sig != SIGCHLD) {
      stop_workers (slots, opt_workers);
      free_worker_argv (worker_argv);
      return 0;
    }
    while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
      gint64 now_s = g_get_monotonic_time () / G_USEC_PER_SEC;
      g_autofree gchar *how = describe_exit (status);
      gint i;

      for (i = 0; i < opt_workers && slots[i].pid != pid; i++);
      if (i == opt_workers)
        continue;
      if (now_s - slots[i].started_s < QUICK_DEATH_S)
        slots[i].quick_deaths++;
      else
        slots[i].quick_deaths = 0;
      slots[i].pid = 0;
      if (slots[i].quick_deaths >= QUICK_DEATHS_MAX) {
        g_printerr ("gpustream-server: worker %d (pid %d) %s, the %d-th "
            "time within %d s of its start: stopping\n", i + 1, pid, how,
            QUICK_DEATHS_MAX, QUICK_DEATH_S);
        stop_workers (slots, opt_workers);
        free_worker_argv (worker_argv);
        return 1;
      }
      g_printerr ("gpustream-server: worker %d (pid %d) %s, starting it "
          "again\n", i + 1, pid, how);
      g_free (worker_argv[1]);
      worker_argv[1] = g_strdup_printf ("--worker=%d,%d,%d", i + 1, rtsp_fd,
          http_fd);
      slots[i].pid = start_worker (worker_argv, &child_mask);
      slots[i].started_s = now_s;
      g_print ("worker %d: pid %d\n", i + 1, slots[i].pid);
      fflush (stdout);
    }
  }
}

/* ---- a worker, or the one process: accepting clients ---- */

/* One descriptor held back for the moment the process has no other: a
 * client waiting on the listening socket then keeps it readable, and the
 * main loop would wake for it again and again (accept failing with EMFILE)
 * at full CPU until a descriptor is freed. */
static int spare_fd = -1;

static void
keep_spare_descriptor (void)
{
  if (spare_fd < 0)
    spare_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* TRUE when the process had no descriptor left for the client waiting:
 * it was taken with the spare one, told 503 and closed. */
static gboolean
refuse_when_out_of_descriptors (GSocket * listener)
{
  static const char busy[] = "RTSP/1.0 503 Service Unavailable\r\n"
      "Content-Length: 0\r\n\r\n";
  static gint64 said;
  int probe = fcntl (2, F_DUPFD_CLOEXEC, 0);
  int fd;

  if (probe >= 0) {
    close (probe);
    return FALSE;
  }
  if (errno != EMFILE && errno != ENFILE)
    return FALSE;
  if (spare_fd >= 0) {
    close (spare_fd);
    spare_fd = -1;
  }
  /* GSocket keeps its descriptor non-blocking: a client gone meanwhile
   * makes this fail, not wait */
  fd = accept4 (g_socket_get_fd (listener), NULL, NULL,
      SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd >= 0) {
    if (send (fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
      /* nothing to do: the connection is closed either way */
    }
    close (fd);
  }
  keep_spare_descriptor ();
  gint64 now = g_get_monotonic_time ();
  if (said == 0 || now - said > 10 * G_USEC_PER_SEC) {
    said = now;
    g_printerr ("gpustream-server: no file descriptor left: clients are "
        "refused (503) as they connect until some are freed\n");
  }
  return TRUE;
}

/* a client's first head is in (server_front.c): gst-rtsp-server takes it */
static void
hand_to_server (GSocket * socket, const gchar * ip, gint port,
    const gchar * head, gpointer server)
{
  gst_rtsp_server_transfer_connection (GST_RTSP_SERVER (server), socket, ip,
      port, head);
}

/* The listening RTSP socket, the one process's or a worker's share of the
 * supervisor's: of the workers woken for a client, those that find it taken
 * by another go back to waiting. The client's first request head is read
 * and measured (server_front.c), then its connection is handed to the
 * server (gst_rtsp_server_transfer_connection: the client object, its
 * thread, as gst-rtsp-server's own accept would). */
static gboolean
accept_rtsp_client (GSocket * listener, GIOCondition condition,
    gpointer server)
{
  GError *err = NULL;
  GSocket *client = g_socket_accept (listener, NULL, &err);
  g_autoptr (GSocketAddress) remote = NULL;
  g_autofree gchar *ip = NULL;
  gint port = 0;

  if (client == NULL && refuse_when_out_of_descriptors (listener))
    return G_SOURCE_CONTINUE;
  if (client == NULL) {
    if (!g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
      g_printerr ("gpustream-server: cannot accept an RTSP client: %s\n",
          err->message);
    g_clear_error (&err);
    return G_SOURCE_CONTINUE;
  }
  remote = g_socket_get_remote_address (client, NULL);
  if (G_IS_INET_SOCKET_ADDRESS (remote)) {
    ip = g_inet_address_to_string (g_inet_socket_address_get_address
        (G_INET_SOCKET_ADDRESS (remote)));
    port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (remote));
  }
  /* the server (or the shared sender's side of it) owns the client's
   * socket from here */
  if (server_direct_enabled ())
    server_direct_take (client, ip ? ip : "0.0.0.0", port);
  else
    server_front_take (client, ip ? ip : "0.0.0.0", port, NULL,
        hand_to_server, server);
  return G_SOURCE_CONTINUE;
}

/* Clients of the listening socket fd go to server; FALSE (said) when fd is
 * not a socket */
static gboolean
watch_rtsp_listener (GstRTSPServer * server, int fd)
{
  GError *err = NULL;
  GSocket *listener = g_socket_new_from_fd (fd, &err);
  GSource *source;

  if (listener == NULL) {
    g_printerr ("gpustream-server: RTSP socket %d: %s\n", fd, err->message);
    g_clear_error (&err);
    return FALSE;
  }
  keep_spare_descriptor ();
  source = g_socket_create_source (listener, G_IO_IN, NULL);
  g_source_set_callback (source, G_SOURCE_FUNC (accept_rtsp_client),
      g_object_ref (server), g_object_unref);
  g_source_attach (source, NULL);
  g_source_unref (source);
  g_object_unref (listener);
  return TRUE;
}

static gboolean
start_http (int fd, const gchar * root_real)
{
  GError *err = NULL;

  if (!server_http_start (fd, root_real, &err)) {
    g_printerr ("gpustream-server: %s\n", err->message);
    g_clear_error (&err);
    return FALSE;
  }
  return TRUE;
}

gboolean
server_workers_listen (GstRTSPServer * server, const gchar * address,
    gint port, const gchar * root_real)
{
  if (opt_worker != NULL) {
    if (!watch_rtsp_listener (server, worker_rtsp_fd))
      return FALSE;
    return worker_http_fd < 0 || start_http (worker_http_fd, root_real);
  }

  gint rtsp_port = 0;
  const gchar *why;
  int rtsp_fd = bind_listener (address, port, &rtsp_port, &why);

  if (rtsp_fd < 0) {
    g_printerr ("gpustream-server: cannot listen on %s:%d: %s\n",
        address ? address : "0.0.0.0", port, why);
    return FALSE;
  }
  if (!watch_rtsp_listener (server, rtsp_fd))
    return FALSE;
  print_url ("rtsp", address, rtsp_port);
  if (opt_http_port >= 0) {
    gint http_port = 0;
    const gchar *reason;
    int fd = bind_listener (address, opt_http_port, &http_port, &reason);

    if (fd < 0) {
      g_printerr ("gpustream-server: cannot listen for HTTP on %s:%d: %s\n",
          address ? address : "0.0.0.0", opt_http_port, reason);
      return FALSE;
    }
    if (!start_http (fd, root_real))
      return FALSE;
    print_url ("http", address, http_port);
  }
  fflush (stdout);
  return TRUE;
}
