#!/usr/bin/env bash
# Network-coded RTP receiver: PORT to FILE. Every lost generation is printed as
# it happens (-m shows the decoder's nc-generations-lost messages with their
# counts, and its warnings); Ctrl-C ends the file and prints its size.
#   pipelines/nc-receiver.sh [FILE] [PORT]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
file=${1:-received.ts}
port=${2:-5000}
gst-launch-1.0 -e -m udpsrc port="$port" buffer-size=4194304 \
  caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC,payload=96" ! \
  rtpncdepay ! ncdecoder name=dec ! filesink location="$file"
echo "nc-receiver: $(stat -c %s "$file") bytes in $file"
