/* cstpcluster: the sending side of CSTP across hosts. One cstpsink per
 * stream (`index`, `peers`), each with its own sub-frame (its tile): a pipe
 * packet of stream s adds parts of other streams, which only their senders
 * can compute, so every sender sends its parts of the others' pipes to
 * them, and adds up the parts it receives into its own. A synchroniser
 * keeps the senders in step, as in Liu, Schulze, DeFanti, "CSTP: A parallel
 * data transfer protocol using cross-stream coding" (2011): every sender
 * tells the master (sender 0) it has frame f ("ready"), and the master
 * releases f to all once every sender has it, or without those that stay
 * silent for sync-timeout (reported, and waited for again once they are
 * back). The messages are docs/elements/cstp-code.md, section 8. */
#ifndef GST_CSTP_CLUSTER_H
#define GST_CSTP_CLUSTER_H

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _CstpCluster CstpCluster;

typedef struct
{
  guint streams;                /* S */
  guint index;                  /* this sender's stream */
  const gchar *peers;           /* host:port per stream, own entry bound */
  gint64 timeout_us;            /* the longest a frame waits for a sender */
  /* the code's draws, so that a part's pipe can be checked */
  gdouble overhead, pipe_width, all_share;
} CstpClusterConfig;

/* One frame as the exchange needs it: its geometry and every stream's
 * redundancy masks (S x red, stream-major), as cstpsink drew them. */
typedef struct
{
  guint32 frame_id;
  guint16 n, symbol_size;
  guint32 frame_len;
  guint32 red;
  const guint64 *masks;
} CstpClusterFrame;

/* The seed of redundancy packet r of stream s in frame frame_id: unique
 * per (stream, r) inside a frame, other coefficients every frame. */
guint32 cstp_redundancy_seed (guint32 frame_id, guint stream, guint32 r);

/* Opens the exchange socket (own entry of peers) and starts its thread;
 * NULL with err set. Messages go to element's bus. */
CstpCluster *cstp_cluster_new (GstElement * element,
    const CstpClusterConfig * cfg, GError ** err);
void cstp_cluster_free (CstpCluster * c);
/* While flushing, cstp_cluster_exchange returns FALSE at once. */
void cstp_cluster_set_flushing (CstpCluster * c, gboolean flushing);

/* Sends this sender's part of every other stream's pipe that adds it
 * (parts: S x red slots of symbol_size bytes, slot (s, r) the part for
 * stream s's packet r), tells the master it has the frame, waits for the
 * frame's release and for the parts of this sender's pipes (at most
 * sync-timeout each), adds every part that came into own (red slots, this
 * sender's own part already in each) and gives in carried[r] the streams
 * whose part packet r now holds. FALSE when flushing. */
gboolean cstp_cluster_exchange (CstpCluster * c, const CstpClusterFrame * f,
    const guint8 * parts, guint8 * own, guint64 * carried);
/* The exchange's counters, into s. */
void cstp_cluster_add_stats (CstpCluster * c, GstStructure * s);

G_END_DECLS

#endif /* GST_CSTP_CLUSTER_H */
