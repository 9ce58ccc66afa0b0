/* cstpmulticast: the socket options of CSTP streams sent to, or received
 * from, a multicast group. One sender reaches every receiver that joined:
 * the same S streams can feed several cstpsrc (or several walls) at the
 * cost of one. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

#include <gst/gst.h>

#include "cstpmulticast.h"

gboolean
cstp_address_is_multicast (const struct sockaddr *addr)
{
  if (addr->sa_family == AF_INET)
    return IN_MULTICAST (ntohl (((const struct sockaddr_in *)
                addr)->sin_addr.s_addr));
  if (addr->sa_family == AF_INET6)
    return IN6_IS_ADDR_MULTICAST (&((const struct sockaddr_in6 *)
            addr)->sin6_addr);
  return FALSE;
}

/* 0 when iface is NULL or empty, else its index; FALSE when unknown */
static gboolean
iface_index (const gchar * iface, guint * index, GError ** err)
{
  *index = 0;
  if (iface == NULL || *iface == '\0')
    return TRUE;
  *index = if_nametoindex (iface);
  if (*index == 0) {
    g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "multicast-iface '%s': no such interface", iface);
    return FALSE;
  }
  return TRUE;
}

static gboolean
option_failed (GError ** err, const gchar * what)
{
  g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
      "cannot set %s: %s", what, g_strerror (errno));
  return FALSE;
}

gboolean
cstp_multicast_setup_sender (int fd, const struct sockaddr *group, gint ttl,
    gboolean loop, const gchar * iface, GError ** err)
{
  guint index;
  int hops = ttl, on = loop ? 1 : 0;

  if (!iface_index (iface, &index, err))
    return FALSE;
  if (group->sa_family == AF_INET) {
    unsigned char t = (unsigned char) ttl, l = (unsigned char) on;
    if (setsockopt (fd, IPPROTO_IP, IP_MULTICAST_TTL, &t, sizeof t) < 0)
      return option_failed (err, "the multicast TTL");
    if (setsockopt (fd, IPPROTO_IP, IP_MULTICAST_LOOP, &l, sizeof l) < 0)
      return option_failed (err, "multicast loopback");
    if (index) {
      struct ip_mreqn req = {.imr_ifindex = (int) index };
      if (setsockopt (fd, IPPROTO_IP, IP_MULTICAST_IF, &req, sizeof req) < 0)
        return option_failed (err, "the multicast interface");
    }
    return TRUE;
  }
  if (setsockopt (fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops,
          sizeof hops) < 0)
    return option_failed (err, "the multicast hop limit");
  if (setsockopt (fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &on, sizeof on) < 0)
    return option_failed (err, "multicast loopback");
  if (index && setsockopt (fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &index,
          sizeof index) < 0)
    return option_failed (err, "the multicast interface");
  return TRUE;
}

gboolean
cstp_multicast_join (int fd, const struct sockaddr *group,
    const gchar * iface, GError ** err)
{
  guint index;

  if (!iface_index (iface, &index, err))
    return FALSE;
  if (group->sa_family == AF_INET) {
    struct ip_mreqn req = {.imr_ifindex = (int) index };
    req.imr_multiaddr = ((const struct sockaddr_in *) group)->sin_addr;
    if (setsockopt (fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &req, sizeof req) < 0)
      return option_failed (err, "membership of the multicast group");
    return TRUE;
  }
  struct ipv6_mreq req6 = {.ipv6mr_interface = index };
  req6.ipv6mr_multiaddr = ((const struct sockaddr_in6 *) group)->sin6_addr;
  if (setsockopt (fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &req6, sizeof req6) < 0)
    return option_failed (err, "membership of the multicast group");
  return TRUE;
}
