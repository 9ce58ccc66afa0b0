/* cstppeers: the exchange sockets of a CSTP cluster: one UDP address per
 * stream ("host:port,..."), the peer of stream i at entry i, and this
 * node's own socket bound on its entry's port. cstpsrc's display wall and
 * cstpsink's sending cluster both use it. */
#ifndef GST_CSTP_PEERS_H
#define GST_CSTP_PEERS_H

#include <sys/socket.h>
#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  guint count;
  struct sockaddr_storage *addr;        /* count entries */
  socklen_t *addrlen;
  gint fd;                              /* own exchange socket, or -1 */
} CstpPeers;

/* Parses list (count entries; "whose" names a node in errors: "receiver",
 * "sender"), resolves every entry (IPv4) and binds own's port on
 * bind_address with buffers of buffer_size bytes. FALSE with err set. */
gboolean cstp_peers_open (CstpPeers * peers, const gchar * list, guint count,
    guint own, const gchar * bind_address, gint buffer_size,
    const gchar * whose, GError ** err);
void cstp_peers_close (CstpPeers * peers);

gboolean cstp_same_address (const struct sockaddr_storage *a,
    const struct sockaddr_storage *b);

G_END_DECLS

#endif /* GST_CSTP_PEERS_H */
