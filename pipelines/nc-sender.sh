#!/usr/bin/env bash
# Network-coded RTP sender: an MPEG-TS file (default: a fresh test one) to
# HOST:PORT, in real time: tsparse timestamps the stream and udpsink syncs on
# them (udpsink's max-bitrate would do nothing here, it needs timestamps too).
#   pipelines/nc-sender.sh [FILE] [HOST] [PORT]
# Pair with nc-receiver.sh; put nc-relay.sh or tools/udp_impair.py between them.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
file=${1:-}
host=${2:-127.0.0.1}
port=${3:-5000}
if [ -z "$file" ]; then
  file=$(mktemp --suffix=.ts)
  gst-launch-1.0 -q videotestsrc num-buffers=300 ! video/x-raw,width=640,height=360 \
    ! x264enc speed-preset=ultrafast bitrate=2000 ! mpegtsmux ! filesink location="$file"
fi
exec gst-launch-1.0 filesrc location="$file" ! tsparse set-timestamps=true ! \
  ncencoder generation-size=32 block-size=1316 redundancy-percent=30 ! \
  rtpncpay ! udpsink host="$host" port="$port" sync=true
