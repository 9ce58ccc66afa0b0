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
    elements-pools elements-nc elements-rtpnc elements-rtgpuqueue elements-cstp; do
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
# Frames/s of the element alone: two runs of n and 3n frames, so the start
# (the CUDA context, the first allocations) cancels out: 2n / (t(3n) - t(n)).
element_fps () {
  local n=$1; shift
  local t0 t1 t2
  t0=$(date +%s%N)
  "$rt/bin/gst-launch-1.0" -q "${@//@N@/$n}" >/dev/null 2>&1 || { echo "failed"; return; }
  t1=$(date +%s%N)
  "$rt/bin/gst-launch-1.0" -q "${@//@N@/$((3 * n))}" >/dev/null 2>&1 || { echo "failed"; return; }
  t2=$(date +%s%N)
  echo "$n $t0 $t1 $t2" | awk '{d = ($4 - $3) - ($3 - $2); if (d <= 0) print "n/a"; else printf "%.1f", 2 * $1 / (d / 1e9)}'
}
{
  # the kernel end to end from pinned host memory, back to back, in slices
  # of 23040 blocks over 3 streams (dxtenc's default): bench_dxt_gpu's
  # dxt_gpu_sliced rows; the element's figure beside it, as a ratio
  kjson=/tmp/gpu-element-logs/bench-dxt-gpu.jsonl
  timeout 300 "$rt/bin/bench_dxt_gpu" --json "$kjson" >/dev/null 2>&1 ||
    echo "bench_dxt_gpu failed: no kernel figures"
  kernel_fps () {
    grep '"bench":"dxt_gpu_sliced"' "$kjson" 2>/dev/null |
      grep "\"input\":\"$1\"" | grep "\"size\":\"$2\"" | grep '"batch_blocks":23040,' |
      sed 's/.*"fps_end_to_end":\([0-9.]*\).*/\1/' | head -1
  }
  echo "## dxtenc DXT1 fast, frames/s of the element (2n frames / (t(3n) - t(n)))"
  echo "## beside the kernel end to end from pinned host memory (bench_dxt_gpu, slices of 23040 blocks)"
  printf '%-5s %-9s %-34s %10s %10s %7s\n' input size path element kernel ratio
  for size in 1920x1080 3840x2160; do
    for fmt in RGBA UYVY; do
      w=${size%x*}; h=${size#*x}
      k=$(kernel_fps "$(echo $fmt | tr A-Z a-z)" "$size")
      src="videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=$fmt,width=$w,height=$h,framerate=30/1 ! imagefreeze num-buffers=@N@"
      # the frame in the pinned pool dxtenc offers; the same frame from a
      # buffer of videotestsrc's own (no pool: identity drops the query);
      # from CUDA memory (cudaupload, if this GStreamer has it)
      for path in pinned plain cuda cpu; do
        case $path in
          pinned) n=3000; f=$(element_fps $n $src ! dxtenc backend=gpu ! fakesink) ;;
          plain) n=500; f=$(element_fps $n $src ! identity drop-allocation=true ! dxtenc backend=gpu ! fakesink) ;;
          cuda) n=500; f=$(element_fps $n $src ! cudaupload ! 'video/x-raw(memory:CUDAMemory)' ! dxtenc backend=gpu ! fakesink) ;;
          cpu) n=20; f=$(element_fps $n $src ! dxtenc backend=cpu ! fakesink) ;;
        esac
        label=$(case $path in pinned) echo "system memory, pinned pool, gpu";;
          plain) echo "system memory, no pool, gpu";; cuda) echo "cudaupload (CUDA memory), gpu";;
          cpu) echo "system memory, cpu";; esac)
        r=$(echo "$f ${k:-0}" | awk '{if ($2 > 0 && $1 + 0 > 0) printf "%.2f", $1 / $2; else print "n/a"}')
        printf '%-5s %-9s %-34s %10s %10s %7s\n' $fmt $size "$label" "$f" "${k:-n/a}" "$r"
      done
    done
  done
  echo "(cudaupload's own upload of each frame is part of the cuda rows)"
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
  echo "## the real-time scheduler on the GPU (target: SRTP >= 40 Gbit/s at I = 10 ms, no misses among admitted streams)"
  bash "$here/bench/gpu/scheduler.sh"
} 2>&1 | tee -a "$out/elements.log"
tar -C "$logs" -czf "$out/element-logs.tar.gz" .
