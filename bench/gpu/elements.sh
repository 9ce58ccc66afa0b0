#!/usr/bin/env bash
# The second half of ./run gpu-check, ON THE GPU MACHINE, from .gpurt/
# (pack-runtime.sh made it, here or on a build machine).
# Runs the element and library tests with the GStreamer runtime in .gpurt/: with a device there, backend=auto takes the GPU, and the tests
# that compare backend=gpu with backend=cpu run instead of skipping; then
# times dxtenc / gpusrtpenc pipelines and runs the scheduler benchmark on the
# GPU (bench_rtgpu --impl gpu). Logs to $OUT: elements.log, and each test's
# own log and rtgpu-gpu.jsonl in element-logs.tar.gz (few files to copy
# back).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rt="$here/.gpurt"
out=${OUT:-/tmp/gpu-out}
logs=/tmp/gpu-element-logs
mkdir -p "$out" "$logs"

export LD_LIBRARY_PATH="$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GST_PLUGIN_SYSTEM_PATH_1_0="$rt/gst"
export GST_PLUGIN_PATH_1_0="$rt/plugins"
export GST_PLUGIN_SCANNER_1_0="$rt/bin/gst-plugin-scanner"
export GST_REGISTRY_1_0=/tmp/gpurt-registry.bin
export CK_DEFAULT_TIMEOUT=300 GST_DEBUG_NO_COLOR=1 G_DEBUG=fatal-criticals

{
  echo "## elements seen"
  for e in gpusrtpenc gpusrtpdec dxtenc dxtdec ncencoder ncdecoder rtgpuqueue cudaupload srtpenc; do
    "$rt/bin/gst-inspect-1.0" "$e" >/dev/null 2>&1 && echo "$e: ok" || echo "$e: MISSING"
  done
  echo "## backend decisions (gpusrtpenc, dxtenc, ncencoder with backend=auto)"
  GST_DEBUG="gpustream*:4" "$rt/bin/gst-launch-1.0" -q videotestsrc num-buffers=2 \
    ! video/x-raw,format=RGBA,width=64,height=64 ! dxtenc ! fakesink 2>&1 |
    grep -E "backend|CUDA device|no GPU" | sed 's/^.*gpustream[a-z]* //' | head -5
} 2>&1 | tee "$out/elements.log"

fails=0
for t in libs-gpustream libs-gpssrtp libs-scheduler elements-srtp elements-dxt \
    elements-nc elements-rtpnc elements-rtgpuqueue; do
  start=$(date +%s%N)
  "$rt/bin/$t" >"$logs/$t.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || fails=$((fails + 1))
  printf '%-22s rc=%d %6dms  %s\n' "$t" $rc $((($(date +%s%N) - start) / 1000000)) \
    "$(grep -E '^[0-9]+%: Checks' "$logs/$t.log" | tail -1)" | tee -a "$out/elements.log"
  grep -E "skipped|:F:|:E:" "$logs/$t.log" | head -20 | tee -a "$out/elements.log"
done
echo "failed programs: $fails" | tee -a "$out/elements.log"

# Element throughput through gst-launch (no Python GStreamer there): one
# frame repeated by imagefreeze, so the source costs nothing; the wall time
# includes the pipeline's start (~0.1 s), amortised over the frames.
launch_fps () {
  local n=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  "$rt/bin/gst-launch-1.0" -q "$@" >/dev/null 2>&1 || { echo "failed"; return; }
  t1=$(date +%s%N)
  echo "$n $t0 $t1" | awk '{printf "%.1f fps (%.1f ms)", $1 / (($3 - $2) / 1e9), ($3 - $2) / 1e6}'
}
{
  echo "## dxtenc, 3840x2160 DXT1 fast, frames/s of the whole pipeline"
  for fmt in UYVY RGBA; do
    src="videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=$fmt,width=3840,height=2160,framerate=30/1 ! imagefreeze num-buffers"
    echo "$fmt system memory, backend=gpu: $(launch_fps 600 $src=600 ! dxtenc backend=gpu ! fakesink)"
    echo "$fmt system memory, backend=cpu: $(launch_fps 40 $src=40 ! dxtenc backend=cpu ! fakesink)"
    echo "$fmt cudaupload, backend=gpu:   $(launch_fps 600 $src=600 ! cudaupload ! 'video/x-raw(memory:CUDAMemory)' ! dxtenc backend=gpu ! fakesink)"
  done
} 2>&1 | tee -a "$out/elements.log"
{
  echo "## gpusrtpenc, AES_CM_128_HMAC_SHA1_80, rtpvrawpay lists of 1080p UYVY (about 1400-byte packets)"
  key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d
  n=300
  src="videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=UYVY,width=1920,height=1080,framerate=30/1 ! imagefreeze num-buffers=$n ! rtpvrawpay mtu=1400"
  pkts=$("$rt/bin/gst-launch-1.0" videotestsrc num-buffers=1 ! video/x-raw,format=UYVY,width=1920,height=1080,framerate=30/1 ! rtpvrawpay mtu=1400 ! fakesink silent=false -v 2>/dev/null | grep -c "chain")
  echo "packets per frame: $pkts"
  echo "payloader alone:     $(launch_fps $n $src ! fakesink)"
  for enc in "gpusrtpenc backend=gpu" "gpusrtpenc backend=gpu cycle=1000000" \
      "gpusrtpenc backend=cpu" "srtpenc"; do
    echo "$enc: $(launch_fps $n $src ! $enc key=$key ! fakesink)"
  done
  echo "gpusrtpenc backend=gpu, thread kernel forced: $(GS_SRTP_GPU_KERNEL=thread launch_fps $n $src ! gpusrtpenc backend=gpu key=$key ! fakesink)"
  echo "(frames/s; packets/s of the element = packets per frame x frames/s, less the payloader's share)"
} 2>&1 | tee -a "$out/elements.log"
{
  echo "## the real-time scheduler on the GPU (target: SRTP >= 40 Gbit/s, 10 ms deadline, no misses among admitted streams)"
  timeout 200 "$rt/bin/bench_rtgpu" --impl gpu --quick --json "$logs/rtgpu-gpu.jsonl"
  echo "bench_rtgpu rc=$?"
} 2>&1 | tee -a "$out/elements.log"
tar -C "$logs" -czf "$out/element-logs.tar.gz" .
