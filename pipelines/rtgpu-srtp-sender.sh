#!/usr/bin/env bash
# SRTP sender through the real-time scheduler: test video as raw RTP
# (rtpvrawpay) plus rtpbin's RTCP, both protected by one rtgpuqueue
# processor=srtp-protect (the RTCP stream's caps are application/x-rtcp, so it
# leaves as SRTCP), to HOST:PORT (SRTP) and PORT+1 (SRTCP). Receive with
# pipelines/srtp-receiver.sh (gpusrtpdec) or any srtpdec with the same key.
#   pipelines/rtgpu-srtp-sender.sh [HOST] [PORT] [KEY_HEX]
# Both streams declare the element's defaults: w = 1500 B, d = 50 ms,
# v = 8 MB/s (the video sends 6.9); with cycle 5 ms every packet leaves within
# 15.1 ms. rtpvrawpay sends each frame (about 238 KB) at once: police-burst
# 40 ms lets a frame's burst through at v (8 MB/s x 40 ms = 320 KB); the
# default, one cycle (41.5 KB), dropped most of every frame, its marker
# included. NUM_BUFFERS=n stops the video after n frames; Ctrl-C otherwise.
# GStreamer 1.22's rtpbin sometimes sends its RTCP BYE without the RTCP
# stream's end of stream (a race of its own, with or without our elements):
# gst-launch-1.0 then waits; a second Ctrl-C stops it (after NUM_BUFFERS, the
# first sends an end of stream that the ended video cannot carry: press twice).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
host=${1:-127.0.0.1}
port=${2:-5004}
key=${3:-000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d}
exec gst-launch-1.0 -e rtpbin name=rb \
  rtgpuqueue name=q processor=srtp-protect cycle=5000000 \
  processor-config="srtp-protect, srtp-key=(buffer)$key, srtp-cipher=aes-128-icm, srtp-auth=hmac-sha1-80" \
  pipelines=2 default-max-packet-size=1500 default-deadline=50000000 \
  default-max-rate=8000000 police-burst=40000000 \
  videotestsrc is-live=true num-buffers=${NUM_BUFFERS:--1} ! \
  video/x-raw,width=320,height=240,format=RGB,framerate=30/1 ! \
  rtpvrawpay ssrc=1111 mtu=1400 ! rb.send_rtp_sink_0 \
  rb.send_rtp_src_0 ! q.sink_0 \
  rb.send_rtcp_src_0 ! q.sink_1 \
  q.src_0 ! udpsink host="$host" port="$port" \
  q.src_1 ! udpsink host="$host" port=$((port + 1)) sync=false async=false
