/* server_mpegts.c: the send schedule of an MPEG-TS file (server_mpegts.h) */
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

  if (n_packets == 0 || n_packets > G_MAXUINT / 2) {
    *why = "no transport packet, or more than an index holds";
    return NULL;
  }
  ticks = g_new (gint64, n_packets);
  for (gsize i = 0; i < n_packets; i++) {
    const guint8 *p = data + i * SERVER_MPEGTS_PACKET;
    guint16 pid = 0;
    gint64 pcr;

    ticks[i] = -1;
    if (p[0] != 0x47) {
      *why = "a packet does not start with the sync byte (not 188-byte "
          "MPEG-TS)";
      return NULL;
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
  return index;
}

void
server_mpegts_index_free (ServerMpegtsIndex * index)
{
  if (index == NULL)
    return;
  g_free (index->due_ns);
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
