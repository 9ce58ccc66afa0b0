/* server_cache.h: the one content cache of gpustream-server. A media file is
 * mapped read-only and shared (MAP_SHARED), so that its bytes live once, in
 * the kernel's page cache, whatever the number of sessions playing it and the
 * number of worker processes serving it; the gpscachesrc element hands
 * pieces of that mapping downstream as buffers, without copying them.
 * After Woo-Yeong Jeong, Youngjae Lee, Jin-Soo Kim, "A High-Performance Media
 * Streaming Architecture based on KVM", 2018 (one shared content cache). */
#ifndef GPUSTREAM_SERVER_CACHE_H
#define GPUSTREAM_SERVER_CACHE_H

#include <gst/gst.h>

/* what the media pipelines of the server read files with */
#define SERVER_CACHE_SRC "gpscachesrc"

/* seconds a mapping nobody plays stays mapped, so that the next session of
 * the same file (the next client of a popular file, the next segment
 * request) finds it mapped */
#define SERVER_CACHE_LINGER_S 30

typedef struct _ServerCacheFile ServerCacheFile;

/* A reference on the mapping of path (made on first use), or NULL and err */
ServerCacheFile *server_cache_open (const gchar * path, GError ** err);
void server_cache_file_unref (ServerCacheFile * file);
const guint8 *server_cache_file_data (const ServerCacheFile * file);
gsize server_cache_file_size (const ServerCacheFile * file);

/* Registers gpscachesrc in this process, ranked above filesrc for file://
 * URIs, so that the pipelines built from URIs read through the cache too;
 * and the SIGBUS handler that keeps a truncated file from killing it */
gboolean server_cache_register (void);

#endif /* GPUSTREAM_SERVER_CACHE_H */
