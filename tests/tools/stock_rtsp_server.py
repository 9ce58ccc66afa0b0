#!/usr/bin/env python3
"""A stock gst-rtsp-server serving MPEG-TS files, the peer gpustream-server
is measured against: one unshared GstRTSPMediaFactory per file, mounted at
/<file name>, each client playing

  ( filesrc location=FILE ! tsparse set-timestamps=true ! rtpmp2tpay name=pay0 )

(the clients here ask for UDP), the pipeline gpustream-server builds for the plain mount of an
MPEG-TS file; for an MP4 or Matroska file of H.264 video, its demuxer, h264parse and
rtph264pay. Nothing else is configured: gst-rtsp-server's defaults.

  stock_rtsp_server.py [--port 0] [--address 127.0.0.1] FILE...

prints rtsp://ADDRESS:PORT/ once it listens (port 0: a free one), and serves
until it is stopped."""

import argparse
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


# the H.264 video of an MP4 or Matroska file, as gpustream-server's plain
# mounts of those files send it
DEMUXERS = {".mp4": "qtdemux", ".mov": "qtdemux", ".mkv": "matroskademux"}


def launch_line(path):
    quoted = path.replace('"', '\\"')
    demux = DEMUXERS.get(os.path.splitext(path)[1].lower())
    if demux is None:
        return ('( filesrc location="%s" ! tsparse set-timestamps=true ! '
                'rtpmp2tpay name=pay0 )' % quoted)
    return ('( filesrc location="%s" ! %s ! h264parse ! rtph264pay name=pay0 '
            'pt=96 config-interval=-1 )' % (quoted, demux))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address(a.address)
    server.set_service(str(a.port))
    mounts = server.get_mount_points()
    for path in a.files:
        if not os.path.isfile(path):
            print("stock_rtsp_server: not a file: %s" % path, file=sys.stderr)
            return 2
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch_line(path))
        factory.set_shared(False)
        mounts.add_factory("/" + os.path.basename(path), factory)
    if server.attach(None) == 0:
        print("stock_rtsp_server: cannot listen on %s:%d" % (a.address, a.port),
              file=sys.stderr)
        return 1
    print("rtsp://%s:%d/" % (a.address, server.get_bound_port()), flush=True)
    GLib.MainLoop().run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
