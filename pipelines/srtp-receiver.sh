#!/usr/bin/env bash
# SRTP receiver for srtp-sender.sh (or srtpenc): PORT (SRTP) and PORT+1
# (SRTCP) through gpusrtpdec, the raw video to an autovideosink (fakesink with
# SINK=fakesink). The key comes in the udpsrc caps, as srtpdec takes it.
# A frame arrives as one burst of about 240 KB, more than the default socket
# buffer (208 KB): the RTP socket asks for 4 MB, or the end of every frame,
# its marker with it, is lost.
#   pipelines/srtp-receiver.sh [PORT] [KEY_HEX]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
port=${1:-5004}
key=${2:-000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d}
srtp="srtp-key=(buffer)$key,srtp-cipher=(string)aes-128-icm,srtp-auth=(string)hmac-sha1-80,srtcp-cipher=(string)aes-128-icm,srtcp-auth=(string)hmac-sha1-80"
exec gst-launch-1.0 -e -m ${VERBOSE:+-v} gpusrtpdec name=dec \
  udpsrc port="$port" buffer-size=4194304 caps="application/x-srtp,media=(string)video,clock-rate=(int)90000,encoding-name=(string)RAW,sampling=(string)RGB,depth=(string)8,width=(string)320,height=(string)240,colorimetry=(string)SMPTE240M,payload=(int)96,ssrc=(uint)1111,$srtp" ! dec.rtp_sink \
  udpsrc port=$((port + 1)) caps="application/x-srtcp,$srtp" ! dec.rtcp_sink \
  dec.rtp_src ! rtpjitterbuffer ! rtpvrawdepay ! videoconvert ! ${SINK:-autovideosink} \
  dec.rtcp_src ! fakesink sync=false async=false
