#!/usr/bin/env bash
# Raw 4K video (3840x2160 I420, 12.4 MB a frame) over 4 parallel CSTP
# streams on this machine: cstpsrc listens on PORT..PORT+3 and writes the
# frames it decodes to OUT; cstpsink sends FRAMES frames of videotestsrc
# (pattern ball) with 5 % overhead, half of it pipe packets, each stream
# paced at 1 Gbit/s. It prints how many bytes arrived; OUT.receiver.log
# holds the receiver's messages.
#   pipelines/cstp-4k.sh [FRAMES] [PORT] [OUT]
# The receiver gives up after 120 s should frames never come.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
frames=${1:-10}
port=${2:-5100}
out=${3:-/tmp/cstp-4k.yuv}
caps=video/x-raw,format=I420,width=3840,height=2160,framerate=30/1

timeout 120 gst-launch-1.0 -q -m cstpsrc streams=4 port="$port" address=127.0.0.1 \
    latency=500000000 num-buffers="$frames" ! filesink location="$out" \
  > "$out.receiver.log" 2>&1 &
receiver=$!
sleep 1
gst-launch-1.0 -q videotestsrc pattern=ball num-buffers="$frames" ! "$caps" ! \
  cstpsink streams=4 host=127.0.0.1 port="$port" packet-size=1400 \
    overhead=0.05 pipe-width=0.5 rate=1000000000 sync=false
wait "$receiver"
echo "received $(stat -c %s "$out") bytes in $out"
