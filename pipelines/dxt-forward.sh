#!/bin/sh
# The scenario of Kim, Yoo, Kim and Kim, "In-network Processing of the
# GPU-based Real-time DXT Compression" (2011): uncompressed HD video (UYVY, the
# paper's YUV422) sent as RTP raw video; a forwarder in the middle compresses
# it to DXT on the fly (dxtenc, HAP framing) and forwards it; the receiver
# decodes and counts.
#
#   sender    videotestsrc 1280x720 UYVY ! rtpvrawpay ! udpsink :$RAW_PORT
#   forwarder udpsrc :$RAW_PORT ! rtpvrawdepay ! dxtenc ! rtpgstpay ! udpsink :$DXT_PORT
#   receiver  udpsrc :$DXT_PORT ! rtpgstdepay ! dxtdec ! fakesink
#
# The forwarder runs in pipelines/dxt_forwarder.py, which prints how many
# frames it depayloaded and sent on, and the per-frame latency through it:
# first RTP packet in -> last RTP packet out (p50/p99/max). The script then
# prints the frames the receiver decoded out of those sent (and the frames
# dxtdec dropped as corrupt), the host's UDP receive-buffer overruns during
# the run, and any error or warning of the forwarder or the receiver.
#
# Usage: pipelines/dxt-forward.sh [frames] [dxtenc properties...]
#   FRAMES=100 by default; e.g. pipelines/dxt-forward.sh 200 format=ycocg-dxt5 batch-blocks=5760
# The script loads the build's environment itself (./run env). PYTHON: default
# /usr/bin/python3, with GStreamer's GI bindings. It exits 1 when the receiver
# decoded fewer frames than were sent.
set -eu
eval "$("$(cd "$(dirname "$0")/.." && pwd)/run" env)"
FRAMES=${1:-100}
[ $# -gt 0 ] && shift
ENC_PROPS=${*:-"format=dxt1 hap=true snappy=false batch-blocks=2880"}
RAW_PORT=${RAW_PORT:-5510}
DXT_PORT=${DXT_PORT:-5512}
LAUNCH=${GST_LAUNCH:-gst-launch-1.0}
PYTHON=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'kill $RECV_PID $FWD_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT

RAW_CAPS="application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=YCbCr-4:2:2,depth=(string)8,width=(string)1280,height=(string)720,colorimetry=BT601-5,payload=96"

# receiver: with -v, fakesink silent=false logs a "last-message = chain" line
# for every decoded frame it gets, which is how the frames are counted
$LAUNCH -v udpsrc port="$DXT_PORT" buffer-size=8388608 \
    caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST,payload=96" ! \
    rtpgstdepay ! dxtdec name=dec ! video/x-raw,format=RGBA ! \
    fakesink name=sink silent=false sync=false \
    > "$TMP/recv.log" 2>&1 &
RECV_PID=$!

# forwarder: the in-network DXT compression, per-frame latency measured
# shellcheck disable=SC2086
"$PYTHON" "$HERE/dxt_forwarder.py" --raw-port "$RAW_PORT" --dxt-port "$DXT_PORT" \
    --frames "$FRAMES" --caps "$RAW_CAPS" $ENC_PROPS > "$TMP/fwd.log" 2>&1 &
FWD_PID=$!
for _ in $(seq 50); do grep -q ready "$TMP/fwd.log" 2>/dev/null && break; sleep 0.1; done
sleep 0.5

# UDP receive-buffer overruns on this host (all sockets; Linux), to tell
# packets dropped by the kernel from frames lost elsewhere
rcvbuf_errors() { awk '/^Udp:/ { getline; print $6; exit }' /proc/net/snmp 2>/dev/null || echo 0; }
RCVBUF0=$(rcvbuf_errors)

# sender: the paper's 20 fps HD source
$LAUNCH -q videotestsrc num-buffers="$FRAMES" pattern=smpte ! \
    video/x-raw,format=UYVY,width=1280,height=720,framerate=20/1 ! \
    rtpvrawpay mtu=1400 ! udpsink host=127.0.0.1 port="$RAW_PORT"
sleep 1
kill -INT $FWD_PID $RECV_PID 2>/dev/null || true
wait $FWD_PID 2>/dev/null || true
wait $RECV_PID 2>/dev/null || true
echo "dxt-forward: $FRAMES UYVY 1280x720 frames sent through dxtenc $ENC_PROPS"
grep "^dxt-forwarder: [0-9]\|latency" "$TMP/fwd.log" || echo "dxt-forward: no latency figures"
DECODED=$(grep -c "GstFakeSink:sink: last-message = chain" "$TMP/recv.log" || true)
CORRUPT=$(grep -c "Corrupt DXT / HAP frame" "$TMP/recv.log" || true)
echo "dxt-forward: receiver decoded $DECODED of $FRAMES frames ($CORRUPT dropped by dxtdec as corrupt, $((FRAMES - DECODED)) lost in all)"
echo "dxt-forward: UDP receive buffer overruns during the run (host-wide): $(( $(rcvbuf_errors) - RCVBUF0 ))"
cat "$TMP/fwd.log" "$TMP/recv.log" | grep -v "last-message = " | grep -iE "error|warn" ||
    echo "dxt-forward: no errors"
[ "$DECODED" -eq "$FRAMES" ]
