#!/usr/bin/env bash
# A network-coding relay: receives coded RTP on IN_PORT, re-mixes the packets of each
# generation without decoding them (ncencoder fed with application/x-rlnc), sends to HOST:OUT_PORT.
#   pipelines/nc-relay.sh [IN_PORT] [HOST] [OUT_PORT]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
exec gst-launch-1.0 -e udpsrc port="${1:-5000}" buffer-size=4194304 \
  caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-RLNC" ! \
  rtpncdepay ! ncencoder redundancy=4 ! rtpncpay ! \
  udpsink host="${2:-127.0.0.1}" port="${3:-5002}" sync=false
