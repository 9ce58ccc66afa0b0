#!/usr/bin/env bash
# Network-coded client of gpustream-server: plays rtsp://HOST:PORT/nc/<file>
# and writes the recovered bytes (the served file itself) to OUT, then prints
# its size. rtspsrc negotiates X-RLNC from the server's SDP; rtpncdepay and
# ncdecoder give the original bytes back; lost generations are printed (-m).
#   pipelines/server-nc-client.sh URL [OUT] [tcp|udp]
# tcp (RTP interleaved in the RTSP connection) loses nothing; udp relies on
# the server's --nc-redundancy-percent to repair losses.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
url=${1:?usage: server-nc-client.sh rtsp://HOST:PORT/nc/FILE [OUT] [tcp|udp]}
out=${2:-received.ts}
protocols=${3:-tcp}
gst-launch-1.0 -e -m rtspsrc location="$url" protocols="$protocols" udp-buffer-size=4194304 \
  ! rtpncdepay ! ncdecoder name=dec ! filesink location="$out"
echo "server-nc-client: $(stat -c %s "$out") bytes in $out"
