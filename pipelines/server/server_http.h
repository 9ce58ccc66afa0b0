/* server_http.h: the HTTP path of gpustream-server: the files of its
 * directory as they are (whole, or byte ranges: DASH segments, progressive
 * download), sent with sendfile(2) from the page cache to the socket without
 * passing through user space. One non-blocking event loop (epoll) per
 * process, in a thread of its own. */
#ifndef GPUSTREAM_SERVER_HTTP_H
#define GPUSTREAM_SERVER_HTTP_H

#include <glib.h>

/* Serves root_real (a real path, as realpath() gives it) on listen_fd, a
 * listening TCP socket that other processes may share; returns at once */
gboolean server_http_start (int listen_fd, const gchar * root_real,
    GError ** err);

#endif /* GPUSTREAM_SERVER_HTTP_H */
