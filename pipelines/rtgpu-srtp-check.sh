#!/usr/bin/env bash
# Two live RTP streams (two SSRCs, two request pads, two forwarder threads)
# protected by rtgpuqueue processor=srtp-protect, each into libsrtp's srtpdec
# (keyed from rtgpuqueue's source caps alone), depayloaded and counted: the
# script fails unless both streams arrive whole (byte counts of the
# depayloaded audio).
#   pipelines/rtgpu-srtp-check.sh [KEY_HEX]
# KEY_HEX: 30 bytes (master key || salt) for aes-128-icm / hmac-sha1-80.
# NUM_BUFFERS=n (default 100: 2 s of 20 ms audio packets per stream),
# CYCLE=ns (default 5 ms; each packet leaves within 3 x CYCLE + mu).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$here/run" env)"
key=${1:-000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d}
n=${NUM_BUFFERS:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gst-launch-1.0 -e rtgpuqueue name=q processor=srtp-protect \
  processor-config="srtp-protect, srtp-key=(buffer)$key, srtp-cipher=aes-128-icm, srtp-auth=hmac-sha1-80" \
  cycle="${CYCLE:-5000000}" pipelines=2 backend=cpu \
  audiotestsrc is-live=true num-buffers="$n" samplesperbuffer=160 ! \
  audio/x-raw,rate=8000,channels=1 ! rtpL16pay ssrc=1 ! q.sink_0 \
  audiotestsrc is-live=true num-buffers="$n" samplesperbuffer=160 wave=pink-noise ! \
  audio/x-raw,rate=8000,channels=1 ! rtpL16pay ssrc=2 ! q.sink_1 \
  q.src_0 ! srtpdec ! rtpL16depay ! filesink location="$tmp/1.raw" \
  q.src_1 ! srtpdec ! rtpL16depay ! filesink location="$tmp/2.raw" >"$tmp/log" 2>&1 || {
  cat "$tmp/log" >&2; exit 1; }
# 160 samples of S16 a buffer, one RTP packet each
want=$((n * 320))
b1=$(stat -c %s "$tmp/1.raw")
b2=$(stat -c %s "$tmp/2.raw")
echo "stream 1: $b1 / $want bytes decrypted by srtpdec; stream 2: $b2 / $want"
[ "$b1" -eq "$want" ] && [ "$b2" -eq "$want" ] || { echo "FAILED" >&2; exit 1; }
echo "OK"
