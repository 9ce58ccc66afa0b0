#!/usr/bin/env bash
# A display wall of 4 tiles on this machine: 4 cstpsrc receivers, each
# taking one of the 4 CSTP streams (PORT+i) and writing its tile (a band of
# 180 rows of the 1280x720 RGBA frame) to OUTDIR/tile-i.rgba, exchanging
# pipe packets and frame states with the others on PORT+4..PORT+7; one
# cstpsink sends FRAMES frames of videotestsrc (pattern ball) with 20 %
# overhead, half of it pipe packets. On a real wall each receiver runs on
# its own host: peers lists the hosts' addresses instead of 127.0.0.1. It
# prints the bytes of every tile; OUTDIR/tile-i.log holds each receiver's
# messages.
#   pipelines/cstp-wall.sh [FRAMES] [PORT] [OUTDIR]
# The receivers give up after 120 s should frames never come.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
frames=${1:-30}
port=${2:-5100}
out=${3:-/tmp/cstp-wall}
mkdir -p "$out"
caps=video/x-raw,format=RGBA,width=1280,height=720,framerate=30/1
peers=127.0.0.1:$((port + 4)),127.0.0.1:$((port + 5)),127.0.0.1:$((port + 6)),127.0.0.1:$((port + 7))

receivers=()
trap 'kill "${receivers[@]}" 2>/dev/null || true' EXIT
for i in 0 1 2 3; do
  timeout 120 gst-launch-1.0 -q -m cstpsrc streams=4 index=$i port="$port" \
      address=127.0.0.1 peers="$peers" latency=500000000 num-buffers="$frames" ! \
      filesink location="$out/tile-$i.rgba" > "$out/tile-$i.log" 2>&1 &
  receivers+=($!)
done
# every receiver listening (its peers' port bound) and heard by the others
for i in 0 1 2 3; do
  for _ in $(seq 300); do
    [ -n "$(ss -Hulnp "sport = :$((port + 4 + i))")" ] && break
    sleep 0.1
  done
done
sleep 0.5
# 1312-byte datagrams: 1280-byte symbols, so each tile is 720 whole symbols
gst-launch-1.0 -q videotestsrc pattern=ball num-buffers="$frames" ! "$caps" ! \
  cstpsink streams=4 host=127.0.0.1 port="$port" packet-size=1312 \
    overhead=0.2 pipe-width=0.5 rate=400000000 sync=false
status=0
for pid in "${receivers[@]}"; do
  wait "$pid" || status=1
done
receivers=()
for i in 0 1 2 3; do
  echo "tile $i: $(stat -c %s "$out/tile-$i.rgba") bytes in $out/tile-$i.rgba"
done
exit $status
