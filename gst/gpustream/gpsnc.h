/* gpsnc.h: random linear network coding on the coder pool (gstgpustream.h),
 * the encoder side of Jin Zhao, Xinya Zhang, Xin Wang, "An Architecture
 * Design of GPU-Accelerated VoD Streaming Servers with Network Coding"
 * (2010): one generation of coded packets in the format of gpsncpacket.h,
 * as ncencoder sends them, and the scheduler processor "nc-encode"
 * (gpsprocessor.h) that turns each packet of a batch into its coded packets.
 *
 * A generation's life: new (the source packets written whole, the coded
 * ones allocated up to their payload), submit (the pool computes the coded
 * payloads in place, on the CPU or the GPU), finish (waits, writes the
 * headers and CRCs), then the packets are the caller's. */
#ifndef GPS_NC_H
#define GPS_NC_H

#include <gst/gst.h>
#include "gstgpustream.h"
#include "gpsncpacket.h"

G_BEGIN_DECLS

/* How a stream's generations are coded. */
typedef struct {
  guint m;                      /* blocks of a full generation, 1..NC_MAX_M */
  guint k;                      /* bytes per block, 1..NC_MAX_K */
  guint redundancy;             /* coded packets of a full generation beyond
                                 * its m; a partial one gets them in
                                 * proportion to its blocks */
  gboolean systematic;          /* the m source blocks sent first, uncoded */
  gboolean vector;              /* explicit coefficient vectors, not seeds */
  gboolean framed;              /* NC_FLAG_FRAMED (gpsncframing.h records) */
  guint32 session;              /* mixed into every packet's seed */
} GstGpuStreamNcParams;

typedef struct {
  /* the generation's header fields */
  guint32 id;
  guint m, k;
  guint32 data_length;
  GstClockTime pts;             /* the caller's (NONE at first): what its
                                 * packets are to carry */
  /* its packets in sending order: the n_packets - n_coded source packets,
   * then the coded ones; complete once finished (take them by stealing
   * the pointers: free unrefs what is left) */
  guint n_packets;
  guint n_coded;
  GstBuffer **packets;

  /*< private >*/
  gboolean vector, framed;
  guint8 *data;                 /* m * k source bytes, zero-padded */
  GstMapInfo *maps;             /* of the coded packets, until finished */
  guint8 *coefs;                /* n_coded x m */
  guint32 *seeds;
  const guint8 **src;
  guint8 **out;
  GstGpuStreamCoderJob *job;
} GstGpuStreamNcGeneration;

/* The coefficient seed of packet index of generation in session: every
 * input bit reaches every output bit, so that neighbouring packets get
 * unrelated coefficients. */
guint32 gst_gpustream_nc_seed (guint32 session, guint32 generation,
    guint32 index);

/* redundancy-percent of m, rounded up */
guint gst_gpustream_nc_redundancy_from_percent (guint m, guint percent);

/* Generation id of data_length bytes (1..m*k; data holds them zero-padded
 * to a whole block and is taken): ceil (data_length / k) blocks, the
 * stream's m or fewer for a partial generation (padding costs nothing on
 * the wire). */
GstGpuStreamNcGeneration *gst_gpustream_nc_generation_new (const
    GstGpuStreamNcParams * params, guint32 id, guint8 * data,
    guint32 data_length);
/* Hands the coded payloads to the coder pool (where and cuda_context as
 * gst_gpustream_coder_submit); nothing to do for a generation without
 * coded packets. */
void gst_gpustream_nc_generation_submit (GstGpuStreamNcGeneration * gen,
    GstGpuStreamBackend where, GstObject * cuda_context);
/* TRUE while the pool is still coding it (never blocks). */
gboolean gst_gpustream_nc_generation_is_busy (GstGpuStreamNcGeneration * gen);
/* Waits for the pool; FALSE when its job failed. */
gboolean gst_gpustream_nc_generation_wait (GstGpuStreamNcGeneration * gen);
/* Waits, then writes the headers of the coded packets: packets are then
 * complete. FALSE when the pool's job failed. */
gboolean gst_gpustream_nc_generation_finish (GstGpuStreamNcGeneration * gen);
/* Waits for a job still running (the pool writes into its memory). */
void gst_gpustream_nc_generation_free (GstGpuStreamNcGeneration * gen);

/* application/x-rlnc caps of a coded stream, with original-caps when given
 * (what the decoder restores). */
GstCaps *gst_gpustream_nc_caps_new (guint m, guint k, gboolean vector,
    const gchar * original_caps);

G_END_DECLS

#endif /* GPS_NC_H */
