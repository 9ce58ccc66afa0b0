/* server_mpegts.c: the send schedule of an MPEG-TS file (server_mpegts.h) */
#include <string.h>

#include "gpsncframing.h"
#include "server_mpegts.h"

/* the PCR counts a 27 MHz clock modulo 2^33 * 300 */
#define PCR_HZ G_GUINT64_CONSTANT (27000000)
#define PCR_WRAP (G_GUINT64_CONSTANT (1) << 33) * 300
/* consecutive PCRs further apart than this (or going back) are a
 * discontinuity: the stream keeps the rate it had before it */
#define PCR_MAX_GAP (2 * PCR_HZ)

/* The PCR of the transport packet p (188 bytes, sync checked), or -1 */
static gint64
packet_pcr (const guint8 * p, guint16 * pid)
{
  guint adaptation = (p[3] >> 4) & 3;
  guint64 base;

  if ((adaptation & 2) == 0 || p[4] < 7 || (p[5] & 0x10) == 0)
    return -1;
  *pid = ((p[1] & 0x1f) << 8) | p[2];
  base = ((guint64) p[6] << 25) | ((guint64) p[7] << 17) |
      ((guint64) p[8] << 9) | ((guint64) p[9] << 1) | (p[10] >> 7);
  return base * 300 + (((p[10] & 1) << 8) | p[11]);
}

/* the PTS counts a 90 kHz clock modulo 2^33 */
#define PTS_WRAP (G_GINT64_CONSTANT (1) << 33)

/* The PTS of the PES that starts in transport packet p, or -1 */
static gint64
packet_pes_pts (const guint8 * p)
{
  guint adaptation = (p[3] >> 4) & 3;
  const guint8 *pes = p + 4;

  if ((p[1] & 0x40) == 0 || (adaptation & 1) == 0)
    return -1;
  if (adaptation & 2)
    pes += 1 + p[4];
  if (pes + 14 > p + SERVER_MPEGTS_PACKET || pes[0] != 0 || pes[1] != 0 ||
      pes[2] != 1 || (pes[7] & 0x80) == 0)
    return -1;
  return ((gint64) (pes[9] & 0x0e) << 29) | ((gint64) pes[10] << 22) |
      ((gint64) (pes[11] & 0xfe) << 14) | ((gint64) pes[12] << 7) |
      (pes[13] >> 1);
}

/* a PES start, for the random access points */
typedef struct
{
  guint packet;
  guint16 pid;
  gboolean random_access;
  /* 90 kHz ticks after the first PTS of the file (as it comes) */
  gint64 pts;
} PesStart;

/* The random access points of the file (server_mpegts.h) from its PES
 * starts */
static void
index_points (ServerMpegtsIndex * index, GArray * starts, gint64 pcr_pid,
    gint64 base_pts, gint64 min_pts, gint64 max_pts)
{
  gboolean marked = FALSE;
  guint n = 0;

  index->first_pts = -1;
  if (starts->len == 0)
    return;
  index->first_pts = ((base_pts + min_pts) % PTS_WRAP + PTS_WRAP) % PTS_WRAP;
  index->pts_span_ns = (guint64) (max_pts - min_pts) * 100000 / 9;
  for (guint i = 0; i < starts->len && !marked; i++)
    marked = g_array_index (starts, PesStart, i).random_access;
  index->point_packet = g_new (guint, starts->len);
  index->point_ns = g_new (guint64, starts->len);
  for (guint i = 0; i < starts->len; i++) {
    const PesStart *ps = &g_array_index (starts, PesStart, i);
    guint64 ns = (guint64) (ps->pts - min_pts) * 100000 / 9;

    /* without marks, any PES of the stream the clock is carried with
     * (the video, as muxers write it) */
    if (marked ? !ps->random_access : ps->pid != pcr_pid)
      continue;
    /* a point whose PTS goes back (reordered frames) is no later start */
    if (n > 0 && ns < index->point_ns[n - 1])
      continue;
    index->point_packet[n] = ps->packet;
    index->point_ns[n++] = ns;
  }
  index->n_points = n;
}

ServerMpegtsIndex *
server_mpegts_index_new (const guint8 * data, gsize size, const gchar ** why)
{
  gsize n_packets = size / SERVER_MPEGTS_PACKET;
  /* per packet, 27 MHz ticks after the first PCR; -1 until known */
  g_autofree gint64 *ticks = NULL;
  gint64 pcr_pid = -1;
  gsize last_at = 0;
  guint64 last_pcr = 0, elapsed = 0;
  /* the rate between the last two PCRs, in ticks per packet (x 2^16) */
  guint64 ticks_per_packet = 0;
  ServerMpegtsIndex *index;
  g_autoptr (GArray) starts = g_array_new (FALSE, FALSE, sizeof (PesStart));
  gint64 base_pts = -1, min_pts = 0, max_pts = 0;

  if (n_packets == 0 || n_packets > G_MAXUINT / 2) {
    *why = "no transport packet, or more than an index holds";
    return NULL;
  }
  ticks = g_new (gint64, n_packets);
  for (gsize i = 0; i < n_packets; i++) {
    const guint8 *p = data + i * SERVER_MPEGTS_PACKET;
    guint16 pid = 0;
    gint64 pcr, pts;

    ticks[i] = -1;
    if (p[0] != 0x47) {
      *why = "a packet does not start with the sync byte (not 188-byte "
          "MPEG-TS)";
      return NULL;
    }
    pts = packet_pes_pts (p);
    if (pts >= 0) {
      PesStart ps = { i, ((p[1] & 0x1f) << 8) | p[2], FALSE, 0 };

      if (base_pts < 0)
        base_pts = pts;
      /* ticks after the first, either way round the wrap */
      ps.pts = ((pts - base_pts) % PTS_WRAP + PTS_WRAP) % PTS_WRAP;
      if (ps.pts >= PTS_WRAP / 2)
        ps.pts -= PTS_WRAP;
      ps.random_access = ((p[3] >> 4) & 2) != 0 && p[4] > 0 &&
          (p[5] & 0x40) != 0;
      min_pts = MIN (min_pts, ps.pts);
      max_pts = MAX (max_pts, ps.pts);
      g_array_append_val (starts, ps);
    }
    pcr = packet_pcr (p, &pid);
    if (pcr < 0 || (pcr_pid >= 0 && pid != pcr_pid))
      continue;
    if (pcr_pid < 0) {
      pcr_pid = pid;
      ticks[i] = 0;
    } else {
      guint64 delta = ((guint64) pcr + PCR_WRAP - last_pcr) % (PCR_WRAP);

      if (delta == 0 || delta > PCR_MAX_GAP)
        delta = (ticks_per_packet * (i - last_at)) >> 16;
      else
        ticks_per_packet = (delta << 16) / (i - last_at);
      elapsed += delta;
      ticks[i] = elapsed;
    }
    last_at = i;
    last_pcr = pcr;
  }
  if (pcr_pid < 0) {
    *why = "no clock reference (PCR) in the file";
    return NULL;
  }

  /* fill in between the PCRs: interpolation by bytes, the last rate after
   * them, 0 before the first */
  gsize prev = 0;
  gboolean seen = FALSE;
  for (gsize i = 0; i < n_packets; i++) {
    if (ticks[i] < 0)
      continue;
    if (seen) {
      for (gsize j = prev + 1; j < i; j++)
        ticks[j] = ticks[prev] + (ticks[i] - ticks[prev]) * (gint64) (j -
            prev) / (gint64) (i - prev);
    } else {
      for (gsize j = 0; j < i; j++)
        ticks[j] = 0;
    }
    prev = i;
    seen = TRUE;
  }
  for (gsize j = prev + 1; j < n_packets; j++)
    ticks[j] = ticks[prev] + (gint64) ((ticks_per_packet * (j - prev)) >> 16);

  index = g_new0 (ServerMpegtsIndex, 1);
  index->size = n_packets * SERVER_MPEGTS_PACKET;
  index->n_chunks = (n_packets + SERVER_MPEGTS_CHUNK_PACKETS - 1) /
      SERVER_MPEGTS_CHUNK_PACKETS;
  index->due_ns = g_new (guint64, index->n_chunks);
  for (guint c = 0; c < index->n_chunks; c++) {
    guint64 t = ticks[(gsize) c * SERVER_MPEGTS_CHUNK_PACKETS];

    index->due_ns[c] = t / 27 * 1000 + (t % 27) * 1000 / 27;
    if (c > 0 && index->due_ns[c] < index->due_ns[c - 1])
      index->due_ns[c] = index->due_ns[c - 1];
  }
  {
    guint64 t = ticks[n_packets - 1];
    index->duration_ns = t / 27 * 1000 + (t % 27) * 1000 / 27;
  }
  index_points (index, starts, pcr_pid, base_pts, min_pts, max_pts);
  return index;
}

void
server_mpegts_index_free (ServerMpegtsIndex * index)
{
  if (index == NULL)
    return;
  g_free (index->due_ns);
  g_free (index->point_packet);
  g_free (index->point_ns);
  g_free (index);
}

guint
server_mpegts_index_seek (const ServerMpegtsIndex * index, guint64 ns)
{
  guint lo = 0, hi = index->n_chunks;

  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;

    if (index->due_ns[mid] < ns)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

guint
server_mpegts_index_seek_pts (const ServerMpegtsIndex * index, guint64 ns,
    guint64 * start_ns)
{
  guint lo = 0, hi = index->n_points;

  if (index->n_points == 0) {
    guint chunk = server_mpegts_index_seek (index, ns);

    *start_ns = chunk < index->n_chunks ? index->due_ns[chunk] :
        index->duration_ns;
    return MIN ((gsize) chunk * SERVER_MPEGTS_CHUNK_PACKETS,
        index->size / SERVER_MPEGTS_PACKET);
  }
  /* the first point after ns */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;

    if (index->point_ns[mid] <= ns)
      lo = mid + 1;
    else
      hi = mid;
  }
  /* before the first point: the whole file, its tables first */
  if (lo <= 1) {
    *start_ns = 0;
    return 0;
  }
  *start_ns = index->point_ns[lo - 1];
  return index->point_packet[lo - 1];
}

/* ---- network-coded: the chunks as framed generations ---- */

static guint32
chunk_length (const ServerMpegtsIndex * index, guint c)
{
  return MIN (SERVER_MPEGTS_CHUNK, index->size - (gsize) c *
      SERVER_MPEGTS_CHUNK);
}

/* the record bytes a generation holds after its prefix */
static guint64
generation_capacity (guint m, guint k)
{
  return (guint64) m * k - NC_FRAMING_PREFIX_SIZE;
}

/* a chunk's record bytes: its CAPS record if any, its header, its payload */
static guint32
record_bytes (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, guint c)
{
  return (gens->caps_before[c] ? NC_RECORD_HEADER_SIZE + gens->caps_length :
      0) + NC_RECORD_HEADER_SIZE + chunk_length (index, c);
}

ServerMpegtsGenerations *
server_mpegts_generations_new (const ServerMpegtsIndex * index, guint m,
    guint k, const gchar * caps)
{
  guint64 capacity = generation_capacity (m, k);
  g_autoptr (GArray) first_chunk = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) chunk_offset = g_array_new (FALSE, FALSE,
      sizeof (guint32));
  g_autoptr (GArray) first_record = g_array_new (FALSE, FALSE,
      sizeof (guint32));
  ServerMpegtsGenerations *gens;
  guint64 pos = 0;
  gint64 last_with_record = -1;

  if ((guint64) m * k <= NC_FRAMING_PREFIX_SIZE + NC_RECORD_HEADER_SIZE)
    return NULL;
  gens = g_new0 (ServerMpegtsGenerations, 1);
  gens->m = m;
  gens->k = k;
  gens->caps = g_strdup (caps);
  gens->caps_length = strlen (caps);
  gens->caps_before = g_new0 (guint8, index->n_chunks);
  for (guint c = 0; c < index->n_chunks; c++) {
    guint64 g = pos / capacity;
    guint64 end;

    /* the first record to start in a generation: the caps come first */
    if ((gint64) g != last_with_record)
      gens->caps_before[c] = TRUE;
    end = pos + record_bytes (gens, index, c);
    /* the generations that begin inside this chunk's record bytes */
    for (guint64 start = ((pos + capacity - 1) / capacity) * capacity;
        start < end; start += capacity) {
      guint32 offset = start - pos;
      guint32 none = NC_FRAMING_NO_RECORD;

      g_array_append_val (first_chunk, c);
      g_array_append_val (chunk_offset, offset);
      g_array_append_val (first_record, none);
    }
    if ((gint64) g != last_with_record) {
      g_array_index (first_record, guint32, g) =
          pos - g * capacity + NC_FRAMING_PREFIX_SIZE;
      last_with_record = g;
    }
    pos = end;
  }
  gens->n_generations = first_chunk->len;
  gens->stream_length = pos;
  gens->first_chunk = (guint *) g_array_free (g_steal_pointer (&first_chunk),
      FALSE);
  gens->chunk_offset = (guint32 *) g_array_free (g_steal_pointer
      (&chunk_offset), FALSE);
  gens->first_record = (guint32 *) g_array_free (g_steal_pointer
      (&first_record), FALSE);
  return gens;
}

void
server_mpegts_generations_free (ServerMpegtsGenerations * gens)
{
  if (gens == NULL)
    return;
  g_free (gens->first_chunk);
  g_free (gens->chunk_offset);
  g_free (gens->first_record);
  g_free (gens->caps_before);
  g_free (gens->caps);
  g_free (gens);
}

guint32
server_mpegts_generation_length (const ServerMpegtsGenerations * gens,
    guint g)
{
  guint64 capacity = generation_capacity (gens->m, gens->k);

  return NC_FRAMING_PREFIX_SIZE + MIN (capacity, gens->stream_length -
      (guint64) g * capacity);
}

guint64
server_mpegts_generation_due_ns (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, guint g)
{
  return index->due_ns[gens->first_chunk[g]];
}

void
server_mpegts_generation_fill (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, const guint8 * data, guint g,
    guint8 * out)
{
  guint32 length = server_mpegts_generation_length (gens, g);
  guint32 padded = (length + gens->k - 1) / gens->k * gens->k;
  guint8 *p = out + NC_FRAMING_PREFIX_SIZE;
  guint8 *end = out + length;
  guint32 offset = gens->chunk_offset[g];

  nc_framing_prefix_write (out, gens->first_record[g],
      server_mpegts_generation_due_ns (gens, index, g));
  for (guint c = gens->first_chunk[g]; p < end; c++, offset = 0) {
    /* the chunk's headers, then its payload from the file */
    guint8 head[2 * NC_RECORD_HEADER_SIZE + 256];
    g_autofree guint8 *big_head = NULL;
    guint8 *h = head;
    guint32 head_length = NC_RECORD_HEADER_SIZE + (gens->caps_before[c] ?
        NC_RECORD_HEADER_SIZE + gens->caps_length : 0);
    guint32 payload = chunk_length (index, c);
    NcRecordHeader rh = { NC_RECORD_BUFFER, 0, payload, index->due_ns[c],
      GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE
    };

    if (head_length > sizeof head)
      h = big_head = g_malloc (head_length);
    if (gens->caps_before[c]) {
      NcRecordHeader ch = { NC_RECORD_CAPS, 0, gens->caps_length,
        GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE
      };

      nc_record_header_write (h, &ch);
      memcpy (h + NC_RECORD_HEADER_SIZE, gens->caps, gens->caps_length);
    }
    nc_record_header_write (h + head_length - NC_RECORD_HEADER_SIZE, &rh);
    if (offset < head_length) {
      guint32 n = MIN (head_length - offset, (guint32) (end - p));

      memcpy (p, h + offset, n);
      p += n;
      offset = head_length;
    }
    if (p < end) {
      guint32 n = MIN (head_length + payload - offset, (guint32) (end - p));

      memcpy (p, data + (gsize) c * SERVER_MPEGTS_CHUNK + (offset -
              head_length), n);
      p += n;
    }
  }
  memset (end, 0, padded - length);
}

guint
server_mpegts_generations_seek (const ServerMpegtsGenerations * gens,
    const ServerMpegtsIndex * index, guint chunk)
{
  guint lo = 0, hi = gens->n_generations;

  if (chunk >= index->n_chunks)
    return gens->n_generations;
  /* the last generation that begins before the chunk's record or with it */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;

    if (gens->first_chunk[mid] < chunk || (gens->first_chunk[mid] == chunk
            && gens->chunk_offset[mid] == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 0 ? lo - 1 : 0;
}
