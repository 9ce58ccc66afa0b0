#!/usr/bin/env bash
# Network-coded RTP receiver: PORT to FILE; prints the decoder's stats at the end (Ctrl-C).
#   pipelines/nc-receiver.sh [FILE] [PORT]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
file=${1:-received.ts}
port=${2:-5000}
exec gst-launch-1.0 -e -m udpsrc port="$port" buffer-size=4194304 \
  caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC" ! \
  rtpncdepay ! ncdecoder name=dec ! filesink location="$file"
