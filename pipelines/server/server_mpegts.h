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
  /* The presentation (PES) timeline: the earliest PTS of the file (90 kHz,
   * as written, modulo 2^33; -1 when no PES has one) and the span to the
   * latest */
  gint64 first_pts;
  guint64 pts_span_ns;
  /* Where a session may start after a seek: the first transport packet of
   * each PES marked a random access point (a keyframe), or, in a file
   * without such marks, of each PES of the clock reference's stream; its
   * PTS in nanoseconds after first_pts, nondecreasing */
  guint n_points;
  guint *point_packet;
  guint64 *point_ns;
} ServerMpegtsIndex;

/* The index of data (a whole file), or NULL when it is not a stream of
 * 188-byte transport packets with at least one PCR (*why says what) */
ServerMpegtsIndex *server_mpegts_index_new (const guint8 * data, gsize size,
    const gchar ** why);
void server_mpegts_index_free (ServerMpegtsIndex * index);

/* the first chunk due at or after ns (n_chunks when none) */
guint server_mpegts_index_seek (const ServerMpegtsIndex * index, guint64 ns);

/* The packet a seek to ns after first_pts starts at: the last random
 * access point at or before ns, packet 0 when none is (or the file has no
 * PTS: then the first chunk due at or after ns, in the clock's timeline);
 * *start_ns: where that is in the same timeline */
guint server_mpegts_index_seek_pts (const ServerMpegtsIndex * index,
    guint64 ns, guint64 * start_ns);


/* A network-coded session's generations (gpsncframing.h, the layout of
 * docs/elements/nc-wire-format.md section 5): each chunk is one BUFFER
 * record (timestamped with the chunk's due time), the records written back
 * to back across generations of m blocks of k bytes, and a CAPS record
 * before the first record that starts in each generation, so that a
 * session may start at any generation (after a seek too). What ncencoder
 * makes of tsparse's buffers, laid out once per file: any generation's
 * bytes are then written from the file directly. */
typedef struct
{
  guint m, k;
  guint n_generations;
  /* per generation: the chunk whose record holds its first byte, that
   * byte's offset in the chunk's record bytes (its CAPS record, header and
   * payload), and the prefix's first_record */
  guint *first_chunk;
  guint32 *chunk_offset;
  guint32 *first_record;
  /* the record bytes of all generations, prefixes left out */
  guint64 stream_length;
  /* per chunk: TRUE when a CAPS record comes before its own */
  guint8 *caps_before;
  gchar *caps;
  guint32 caps_length;
} ServerMpegtsGenerations;

/* The generations of index's chunks, or NULL when m * k cannot hold the
 * framing prefix and a record header */
ServerMpegtsGenerations *server_mpegts_generations_new (const
    ServerMpegtsIndex * index, guint m, guint k, const gchar * caps);
void server_mpegts_generations_free (ServerMpegtsGenerations * gens);

/* generation g's data_length: its real bytes, the prefix included */
guint32 server_mpegts_generation_length (const ServerMpegtsGenerations *
    gens, guint g);

/* Writes generation g's data_length bytes (prefix, then record bytes of
 * the file's data) into out and zero-pads it to a whole block */
void server_mpegts_generation_fill (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, const guint8 * data, guint g,
    guint8 * out);

/* when generation g is due: its first byte's chunk's time (ncencoder's
 * generation carries the time of the buffer that began it) */
guint64 server_mpegts_generation_due_ns (const ServerMpegtsGenerations *
    gens, const ServerMpegtsIndex * index, guint g);

/* the generation where chunk's record begins (n_generations when chunk is
 * n_chunks) */
guint server_mpegts_generations_seek (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, guint chunk);

#endif /* GPUSTREAM_SERVER_MPEGTS_H */
