/* cstppeers: see cstppeers.h. */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>
#include <gst/gst.h>

#include "cstppeers.h"

gboolean
cstp_peers_open (CstpPeers * peers, const gchar * list, guint count,
    guint own, const gchar * bind_address, gint buffer_size,
    const gchar * whose, GError ** err)
{
  gchar **entries = g_strsplit (list ? list : "", ",", -1);
  gboolean ok = g_strv_length (entries) == count;
  peers->count = count;
  peers->fd = -1;
  peers->addr = g_new0 (struct sockaddr_storage, count);
  peers->addrlen = g_new0 (socklen_t, count);
  if (!ok)
    g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "peers has %u entries, streams is %u (one host:port per stream, the "
        "%s of stream i at entry i)", g_strv_length (entries), count, whose);
  for (guint p = 0; ok && p < count; p++) {
    gchar *entry = g_strstrip (entries[p]);
    gchar *colon = strrchr (entry, ':');
    gchar *end = NULL;
    gint64 port = colon ? g_ascii_strtoll (colon + 1, &end, 10) : -1;
    if (colon == NULL || colon == entry || !end || *end || port < 1
        || port > 65535) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
          "peers entry %u '%s' is not host:port", p, entry);
      ok = FALSE;
      break;
    }
    *colon = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM,.ai_family = AF_INET
    }, *ai = NULL;
    int rc = getaddrinfo (entry, colon + 1, &hints, &ai);
    if (rc != 0 || ai == NULL || ai->ai_addrlen > sizeof (struct
            sockaddr_storage)) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "peers entry %u: cannot resolve '%s': %s", p, entry,
          rc ? gai_strerror (rc) : "no address");
      if (ai)
        freeaddrinfo (ai);
      ok = FALSE;
      break;
    }
    memcpy (&peers->addr[p], ai->ai_addr, ai->ai_addrlen);
    peers->addrlen[p] = ai->ai_addrlen;
    freeaddrinfo (ai);
    if (p != own)
      continue;
    struct addrinfo h2 = {.ai_socktype = SOCK_DGRAM,.ai_family =
          AF_INET,.ai_flags = AI_PASSIVE
    }, *local = NULL;
    rc = getaddrinfo (bind_address, colon + 1, &h2, &local);
    int fd = rc == 0 && local ? socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC,
        0) : -1;
    if (fd < 0 || bind (fd, local->ai_addr, local->ai_addrlen) < 0) {
      g_set_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
          "cannot bind the peers' port %s:%s: %s",
          bind_address ? bind_address : "*", colon + 1,
          rc ? gai_strerror (rc) : g_strerror (errno));
      if (fd >= 0)
        close (fd);
      ok = FALSE;
    } else {
      /* a frame's exchange comes in bursts, like the streams' packets */
      int size = buffer_size;
      if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
        setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
      if (setsockopt (fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0)
        setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
      peers->fd = fd;
    }
    if (local)
      freeaddrinfo (local);
  }
  g_strfreev (entries);
  return ok;
}

void
cstp_peers_close (CstpPeers * peers)
{
  if (peers->fd >= 0)
    close (peers->fd);
  peers->fd = -1;
  g_clear_pointer (&peers->addr, g_free);
  g_clear_pointer (&peers->addrlen, g_free);
  peers->count = 0;
}

gboolean
cstp_same_address (const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
  if (a->ss_family != b->ss_family)
    return FALSE;
  if (a->ss_family == AF_INET) {
    const struct sockaddr_in *x = (const void *) a, *y = (const void *) b;
    return x->sin_port == y->sin_port
        && x->sin_addr.s_addr == y->sin_addr.s_addr;
  }
  if (a->ss_family == AF_INET6) {
    const struct sockaddr_in6 *x = (const void *) a, *y = (const void *) b;
    return x->sin6_port == y->sin6_port
        && memcmp (&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
  }
  return FALSE;
}
