/* server_mpegts.h: when each packet of an MPEG-TS file is due, from the
 * file's clock references (PCR), for the shared sender (server_sender.h).
 *
 * A file is cut into chunks of up to SERVER_MPEGTS_CHUNK_PACKETS transport
 * packets, one RTP packet each (RFC 2250, as rtpmp2tpay cuts them at the
 * default MTU). A chunk is due when the PCR clock, interpolated linearly in
 * bytes between the PCRs around it, reaches its first packet; chunks before
 * the first PCR are due at once, and those after the last follow the last
 * interval's rate. This is what tsparse set-timestamps=true gives the
 * pipeline path. */
#ifndef GPUSTREAM_SERVER_MPEGTS_H
#define GPUSTREAM_SERVER_MPEGTS_H

#include <glib.h>

#define SERVER_MPEGTS_PACKET 188
#define SERVER_MPEGTS_CHUNK_PACKETS 7
#define SERVER_MPEGTS_CHUNK (SERVER_MPEGTS_PACKET * SERVER_MPEGTS_CHUNK_PACKETS)

typedef struct
{
  guint n_chunks;
  /* nanoseconds after the first PCR at which each chunk is due,
   * nondecreasing */
  guint64 *due_ns;
  /* the file's bytes that are whole transport packets */
  gsize size;
  guint64 duration_ns;
} ServerMpegtsIndex;

/* The index of data (a whole file), or NULL when it is not a stream of
 * 188-byte transport packets with at least one PCR (*why says what) */
ServerMpegtsIndex *server_mpegts_index_new (const guint8 * data, gsize size,
    const gchar ** why);
void server_mpegts_index_free (ServerMpegtsIndex * index);

/* the first chunk due at or after ns (n_chunks when none) */
guint server_mpegts_index_seek (const ServerMpegtsIndex * index, guint64 ns);

#endif /* GPUSTREAM_SERVER_MPEGTS_H */
