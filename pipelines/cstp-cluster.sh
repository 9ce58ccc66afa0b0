#!/usr/bin/env bash
# A sending cluster of 4 on this machine: 4 cstpsink senders, each with its
# own source (videotestsrc pattern=ball, 1280x720 RGBA, cropped to its band
# of 180 rows: its tile), sending its CSTP stream to PORT+i and exchanging
# the parts of its pipe packets with the others on PORT+4..PORT+7; sender 0
# releases each frame once all four have it. One cstpsrc puts the frames
# back together (the senders announce 1280x720, four bands tall) and writes
# them to OUT. On a real cluster each sender runs on its own host: peers
# lists the hosts' addresses instead of 127.0.0.1. It prints whether each
# sender met a warning (a silent peer, a frame left unsynchronised);
# OUT.sender-i.log holds its messages.
#   pipelines/cstp-cluster.sh [FRAMES] [PORT] [OUT]
# The receiver gives up after 120 s should frames never come.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
frames=${1:-30}
port=${2:-5100}
out=${3:-/tmp/cstp-cluster.rgba}
caps=video/x-raw,format=RGBA,width=1280,height=720,framerate=30/1
peers=127.0.0.1:$((port + 4)),127.0.0.1:$((port + 5)),127.0.0.1:$((port + 6)),127.0.0.1:$((port + 7))

timeout 120 gst-launch-1.0 -q cstpsrc streams=4 port="$port" address=127.0.0.1 \
    latency=500000000 num-buffers="$frames" ! filesink location="$out" &
receiver=$!
senders=()
trap 'kill "$receiver" "${senders[@]}" 2>/dev/null || true' EXIT
for _ in $(seq 300); do
  [ -n "$(ss -Hulnp "sport = :$port")" ] && break
  sleep 0.1
done
for i in 0 1 2 3; do
  # the first frame waits (up to 5 s) for every sender; later ones leave
  # together, each stream with the other senders' parts in its pipes
  timeout 120 gst-launch-1.0 -m videotestsrc pattern=ball num-buffers="$frames" ! \
    "$caps" ! videocrop top=$((180 * i)) bottom=$((540 - 180 * i)) ! \
    cstpsink name=sink streams=4 index=$i peers="$peers" host=127.0.0.1 \
      port="$port" overhead=0.2 rate=100000000 sync=false \
    > "$out.sender-$i.log" 2>&1 &
  senders+=($!)
done
status=0
for pid in "${senders[@]}"; do
  wait "$pid" || status=1
done
senders=()
wait "$receiver" || status=1
for i in 0 1 2 3; do
  if grep -q "WARNING\|ERROR" "$out.sender-$i.log"; then
    echo "sender $i: $(grep -c "WARNING\|ERROR" "$out.sender-$i.log") warnings or errors in $out.sender-$i.log"
  else
    echo "sender $i: sent its $frames tiles, no warning"
  fi
done
echo "$(stat -c %s "$out") bytes of frames in $out"
exit $status
