/* server_sender.h: the shared sender of gpustream-server's plain MPEG-TS
 * sessions.
 *
 * One thread and one pair of UDP sockets (RTP, RTCP) send every such
 * session of the process: each session is a position in a file of the
 * content cache and a destination, not a pipeline. On each wake the thread
 * sends every session's packets that are due, all of them in one sendmmsg
 * call per 256, each packet its RTP header and a pointer into the file's
 * mapping (no copy). A session interleaved in its RTSP connection (RTP over
 * TCP) is written to that connection instead. Threads and descriptors do
 * not grow with the sessions.
 *
 * After Jin Zhao, Xinya Zhang, Xin Wang, "An Architecture Design of
 * GPU-Accelerated VoD Streaming Servers with Network Coding", 2010 (one
 * sending engine for all sessions) and Woo-Yeong Jeong, Youngjae Lee,
 * Jin-Soo Kim, "A High-Performance Media Streaming Architecture based on
 * KVM", 2018 (zero-copy delivery from one content cache). */
#ifndef GPUSTREAM_SERVER_SENDER_H
#define GPUSTREAM_SERVER_SENDER_H

#include <netinet/in.h>
#include <glib.h>

#include "gstgpustream.h"
#include "server_cache.h"
#include "server_mpegts.h"

/* RTP/MP2T, RFC 3551 */
#define SERVER_SENDER_PT 33
/* network-coded: X-RLNC, dynamic (rtpncpay's in the pipeline path) */
#define SERVER_SENDER_NC_PT 96

typedef struct _ServerSender ServerSender;
typedef struct _ServerSenderMedia ServerSenderMedia;
typedef struct _ServerSenderSession ServerSenderSession;

/* The process's sender, started on first use with its sockets bound on
 * address (NULL: all), or NULL and err. Its SRTP sessions are protected on
 * backend: the GPU (AUTO, GPU, HYBRID) where a device is usable, else the
 * CPU. */
ServerSender *server_sender_get (const gchar * address,
    GstGpuStreamBackend backend, GError ** err);
/* where generations are coded: cpu, gpu or hybrid */
const gchar *server_sender_backend (ServerSender * sender);
/* where the last SRTP batch was protected: cpu or gpu */
const gchar *server_sender_srtp_backend (ServerSender * sender);
/* the RTP port of its sockets; RTCP is the next one */
guint server_sender_rtp_port (ServerSender * sender);
/* the RTCP socket, where the clients' receiver reports come (read by the
 * caller) */
int server_sender_rtcp_fd (ServerSender * sender);

/* A file and its send schedule (and network-coded generations, laid out
 * at the first such session), shared by the sessions playing it, or NULL
 * and err (not a file, not 188-byte MPEG-TS with clock references) */
ServerSenderMedia *server_sender_media_get (const gchar * path,
    GError ** err);
ServerSenderMedia *server_sender_media_ref (ServerSenderMedia * media);
void server_sender_media_unref (ServerSenderMedia * media);
guint64 server_sender_media_duration (const ServerSenderMedia * media);
/* its schedule and random access points (server_mpegts.h) */
const ServerMpegtsIndex *server_sender_media_index (const ServerSenderMedia *
    media);

/* Writes one interleaved frame (the 4-byte header included) to an RTSP
 * connection, taking data; FALSE when the connection cannot take it now
 * (the session then waits and tries again, it loses nothing) */
typedef gboolean (*ServerSenderWrite) (gpointer user_data, guint8 * data,
    gsize size);

/* An SRTP session's SSRC and master key (AES_CM_128_HMAC_SHA1_80, key then
 * salt), the same for RTP and RTCP */
typedef struct
{
  guint32 ssrc;
  guint8 key[30];
} ServerSenderKey;

/* A network-coded session's coding (ncencoder's generation-size,
 * block-size and redundancy-percent): its packets are those of ncencoder
 * fed by tsparse, wire-compatible with rtpncdepay ! ncdecoder and with a
 * relay, each session coded with seeds of its own on the process's coder
 * pool, every round's generations of all sessions submitted together */
typedef struct
{
  guint m, k;
  guint redundancy_percent;
} ServerSenderNc;

/* the caps of the records of its network-coded sessions (tsparse's) */
#define SERVER_SENDER_NC_CAPS \
  "video/mpegts, systemstream=(boolean)true, packetsize=(int)188"

/* Lays out the media's generations for nc (once: every session of a
 * process codes alike); FALSE when m * k cannot carry the framing */
gboolean server_sender_media_prepare_nc (ServerSenderMedia * media,
    const ServerSenderNc * nc);

/* key NULL: plain RTP; nc not NULL: network-coded (then key is NULL, and
 * the media was prepared for nc) */
ServerSenderSession *server_sender_session_new_udp (ServerSender * sender,
    ServerSenderMedia * media, const ServerSenderKey * key,
    const ServerSenderNc * nc, const struct sockaddr_in *rtp_to,
    const struct sockaddr_in *rtcp_to);
ServerSenderSession *server_sender_session_new_tcp (ServerSender * sender,
    ServerSenderMedia * media, const ServerSenderKey * key,
    const ServerSenderNc * nc, guint8 rtp_channel, ServerSenderWrite write,
    gpointer user_data);
guint32 server_sender_session_ssrc (ServerSenderSession * session);
/* Stops it at transport packet from_packet of the file (where it is when
 * from_packet < 0; the end, then a BYE once started, past the last), and
 * says the sequence number and RTP time of the next packet and the clock's
 * time it is at (the Range and RTP-Info of the PLAY answer). A plain or
 * SRTP session starts at that packet, the first it sends marked a
 * discontinuity (the continuity counters jump there); a network-coded one
 * at the generation that holds its chunk. */
void server_sender_session_seek (ServerSenderSession * session,
    gint64 from_packet, guint16 * seq, guint32 * rtptime, guint64 * start_ns);
/* plays from there, at the file's pace from now */
void server_sender_session_start (ServerSenderSession * session);
void server_sender_session_pause (ServerSenderSession * session);
/* RTP packets and payload bytes it sent, and the generations coded when
 * network-coded */
void server_sender_session_counts (ServerSenderSession * session,
    guint32 * packets, guint32 * octets, guint32 * generations);
/* stops it and frees it: nothing is sent for it once this returns */
void server_sender_session_free (ServerSenderSession * session);

#endif /* GPUSTREAM_SERVER_SENDER_H */
