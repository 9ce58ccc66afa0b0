#!/bin/sh
# The scenario of paper 003: uncompressed HD video (UYVY, the paper's YUV422)
# sent as RTP raw video; a forwarder in the middle compresses it to DXT on the
# fly (dxtenc, HAP framing) and forwards it; the receiver decodes and counts.
#
#   sender    videotestsrc 1280x720 UYVY ! rtpvrawpay ! udpsink :$RAW_PORT
#   forwarder udpsrc :$RAW_PORT ! rtpvrawdepay ! dxtenc ! rtpgstpay ! udpsink :$DXT_PORT
#   receiver  udpsrc :$DXT_PORT ! rtpgstdepay ! dxtdec ! fakesink
#
# Usage: pipelines/dxt-forward.sh [frames] [dxtenc properties...]
#   FRAMES=100 by default; e.g. pipelines/dxt-forward.sh 200 format=ycocg-dxt5 batch-blocks=5760
# Environment: GST_PLUGIN_PATH_1_0 pointing at the build's plugins/ (./run sets it).
set -eu
FRAMES=${1:-100}
[ $# -gt 0 ] && shift
ENC_PROPS=${*:-"format=dxt1 hap=true snappy=false batch-blocks=2880"}
RAW_PORT=${RAW_PORT:-5510}
DXT_PORT=${DXT_PORT:-5512}
LAUNCH=${GST_LAUNCH:-gst-launch-1.0}
TMP=$(mktemp -d)
trap 'kill $RECV_PID $FWD_PID 2>/dev/null || true; rm -rf "$TMP"' EXIT

RAW_CAPS="application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=YCbCr-4:2:2,depth=(string)8,width=(string)1280,height=(string)720,colorimetry=BT601-5,payload=96"

# receiver: counts decoded frames (fakesink's last buffer = frame count)
$LAUNCH -q udpsrc port=$DXT_PORT buffer-size=8388608 \
    caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST,payload=96" ! \
    rtpgstdepay ! dxtdec name=dec ! video/x-raw,format=RGBA ! \
    fakesink name=sink signal-handoffs=false sync=false \
    > "$TMP/recv.log" 2>&1 &
RECV_PID=$!

# forwarder: the in-network DXT compression
$LAUNCH -q udpsrc port=$RAW_PORT buffer-size=33554432 caps="$RAW_CAPS" ! \
    rtpvrawdepay ! dxtenc $ENC_PROPS ! \
    rtpgstpay config-interval=1 mtu=1400 ! udpsink host=127.0.0.1 port=$DXT_PORT sync=false \
    > "$TMP/fwd.log" 2>&1 &
FWD_PID=$!
sleep 1

# sender: the paper's 20 fps HD source
$LAUNCH -q videotestsrc num-buffers="$FRAMES" pattern=smpte ! \
    video/x-raw,format=UYVY,width=1280,height=720,framerate=20/1 ! \
    rtpvrawpay mtu=1400 ! udpsink host=127.0.0.1 port=$RAW_PORT
sleep 1
kill -INT $FWD_PID $RECV_PID 2>/dev/null || true
sleep 0.5
echo "dxt-forward: $FRAMES UYVY 1280x720 frames sent through dxtenc $ENC_PROPS"
cat "$TMP/fwd.log" "$TMP/recv.log" | grep -iE "error|warn" || echo "dxt-forward: no errors"
