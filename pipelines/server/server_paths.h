/* server_paths.h: how gpustream-server maps the path of an RTSP request to
 * a mount and to a file of its directory (or to the origin's URL with
 * --proxy). Apart from the server so that the fuzz target of the request
 * paths (tests/fuzz/fuzz_serverpath.c) runs the very code the server does. */
#ifndef GPUSTREAM_SERVER_PATHS_H
#define GPUSTREAM_SERVER_PATHS_H

#include <glib.h>
#include <gst/rtsp/gstrtspurl.h>

/* the URL prefixes of the network-coded and the SRTP mounts */
#define NC_PREFIX "/nc"
#define SRTP_PREFIX "/srtp"

typedef enum
{
  MOUNT_PLAIN,
  MOUNT_NC,
  MOUNT_SRTP,
} MountKind;

gchar *media_dir_resolve (const gchar * root_real, const gchar * abspath,
    MountKind * kind);
gchar *strip_stream_control (const gchar * abspath);
/* abspath starts with '/' */
gboolean path_is_canonical (const gchar * abspath);
gchar *request_source (const gchar * root_real, const gchar * proxy_base,
    const GstRTSPUrl * uri, gchar ** mount_path, MountKind * kind);

#endif /* GPUSTREAM_SERVER_PATHS_H */
