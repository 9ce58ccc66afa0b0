/* server_direct.h: gpustream-server's RTSP clients of MPEG-TS files,
 * served by the shared sender (server_sender.h) instead of a pipeline per
 * session.
 *
 * A new connection's first request (read by server_front.c) decides: a request for a mount
 * served here (plain, and SRTP and network-coded unless the server keeps
 * them on pipelines) of a 188-byte MPEG-TS file with clock references
 * stays here, every other connection (other containers, the proxy, RTSP
 * over HTTP) goes to gst-rtsp-server with what was read of it.
 * Here, one thread answers every connection's requests (GstRTSPWatch) and
 * keeps the sessions in gst-rtsp-server's session pool, the one the other
 * clients use: --max-sessions, --session-timeout and the expiry of
 * silent sessions count them all. */
#ifndef GPUSTREAM_SERVER_DIRECT_H
#define GPUSTREAM_SERVER_DIRECT_H

#include <gio/gio.h>
#include <gst/rtsp-server/rtsp-server.h>

#include "gstgpustream.h"
#include "server_sender.h"

/* Serves plain MPEG-TS sessions of the files under root_real from now on,
 * SRTP ones too when srtp (protected on backend) and network-coded ones
 * when nc is given (coded on backend), sending from address (NULL: all);
 * FALSE and err when the sender cannot start */
gboolean server_direct_start (GstRTSPServer * server, const gchar * root_real,
    const gchar * address, guint session_timeout, gboolean srtp,
    const ServerSenderNc * nc, GstGpuStreamBackend backend, GError ** err);

/* TRUE when server_direct_start was called */
gboolean server_direct_enabled (void);

/* Takes a client just accepted (socket: transfer full): served here, or
 * handed to gst-rtsp-server, once its first request head came */
void server_direct_take (GSocket * socket, const gchar * ip, gint port);

/* Closes every connection served here, their sessions ended (what each
 * says when it ends is said); returns how many sessions there were. 0
 * when not started. */
guint server_direct_stop (void);

#endif /* GPUSTREAM_SERVER_DIRECT_H */
