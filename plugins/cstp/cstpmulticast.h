/* cstpmulticast: the socket options of CSTP streams sent to, or received
 * from, a multicast group (IPv4 or IPv6). */
#ifndef GST_CSTP_MULTICAST_H
#define GST_CSTP_MULTICAST_H

#include <sys/socket.h>
#include <glib.h>

G_BEGIN_DECLS

gboolean cstp_address_is_multicast (const struct sockaddr *addr);

/* A sending socket for a group: hop limit, loopback of its own datagrams,
 * and the interface (by name; NULL or "" lets the routing table choose). */
gboolean cstp_multicast_setup_sender (int fd, const struct sockaddr *group,
    gint ttl, gboolean loop, const gchar * iface, GError ** err);

/* A receiving socket bound to the group's port: joins the group on the
 * interface (by name; NULL or "" lets the routing table choose). */
gboolean cstp_multicast_join (int fd, const struct sockaddr *group,
    const gchar * iface, GError ** err);

G_END_DECLS

#endif /* GST_CSTP_MULTICAST_H */
