/* server_workers.h: gpustream-server's worker processes (--workers N) and
 * its listening sockets (RTSP, and HTTP with --http-port).
 *
 * With --workers N > 1 the process that parses the command line serves
 * nothing: it binds the listening sockets, starts N workers (this program
 * again, given the sockets), restarts any that dies and stops them all when
 * it is stopped. Each worker initialises GStreamer for itself and accepts
 * clients on the sockets it inherited. */
#ifndef GPUSTREAM_SERVER_WORKERS_H
#define GPUSTREAM_SERVER_WORKERS_H

#include <gst/rtsp-server/rtsp-server.h>

/* --workers, --http-port (and the hidden option a worker is started with),
 * for the main group of the command line */
GOptionEntry *server_workers_option_entries (void);

/* After parsing: FALSE (and the reason on stderr) when these options are
 * out of range or do not fit the others */
gboolean server_workers_check_options (gboolean proxy);

/* In the process the user started, with --workers N > 1: supervises the
 * workers until SIGINT or SIGTERM and returns the exit status. Returns -1
 * where this process serves clients itself (one process, or a worker).
 * argv is the command line as it was before parsing. */
int server_workers_supervise (gchar ** argv, const gchar * address,
    gint port, gboolean proxy);

/* Starts accepting clients: on the sockets inherited by a worker, else
 * binding address:port itself (and --http-port). One process prints the
 * URLs it serves (the supervisor prints them for its workers). FALSE, the
 * reason on stderr, when it cannot listen. */
gboolean server_workers_listen (GstRTSPServer * server, const gchar * address,
    gint port, const gchar * root_real);

#endif /* GPUSTREAM_SERVER_WORKERS_H */
