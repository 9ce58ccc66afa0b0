#!/usr/bin/env bash
# SRTP sender: test video as raw RTP (rtpvrawpay, buffer lists) plus RTCP from
# rtpbin, protected by gpusrtpenc, to HOST:PORT (RTP) and PORT+1 (RTCP).
#   pipelines/srtp-sender.sh [HOST] [PORT] [KEY_HEX]
# KEY_HEX: 30 bytes (master key || salt) for aes-128-icm / hmac-sha1-80, the
# same on the receiver (srtp-receiver.sh or any srtpdec). Runs until Ctrl-C;
# with NUM_BUFFERS=n it ends by itself after n frames (rtpbin sends its RTCP
# BYE at the video's end). GStreamer 1.22's rtpbin sometimes sends that BYE
# without the RTCP stream's end of stream (a race of its own, with or without
# our elements): gst-launch-1.0 then waits, and stops at the second Ctrl-C
# (the first sends an end of stream that the ended video cannot carry).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
host=${1:-127.0.0.1}
port=${2:-5004}
key=${3:-000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d}
exec gst-launch-1.0 -e rtpbin name=rb \
  videotestsrc is-live=true num-buffers=${NUM_BUFFERS:--1} ! \
  video/x-raw,width=320,height=240,format=RGB,framerate=30/1 ! \
  rtpvrawpay ssrc=1111 ! rb.send_rtp_sink_0 \
  rb.send_rtp_src_0 ! enc.rtp_sink_0 \
  rb.send_rtcp_src_0 ! enc.rtcp_sink_0 \
  gpusrtpenc name=enc key="$key" output-lists=true \
  enc.rtp_src_0 ! udpsink host="$host" port="$port" \
  enc.rtcp_src_0 ! udpsink host="$host" port=$((port + 1)) sync=false async=false
