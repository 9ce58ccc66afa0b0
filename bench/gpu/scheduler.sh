#!/usr/bin/env bash
# ON THE GPU MACHINE, from .gpurt/ (elements.sh runs it; it can run alone):
# the real-time scheduler with SRTP protect on the GPU (bench_rtgpu --impl
# gpu): N = 8, 64 and 1 pipelines at a cycle of 10 ms, then N = 8 at 5 and
# 2 ms; each run offers 100, 150 and 200 % of the calibrated B_I with
# admission on and off. Target on an H100: >= 40 Gbit/s at I = 10 ms with no
# deadline miss among admitted streams. JSON lines in $OUT/rtgpu-gpu.jsonl.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rt="$here/.gpurt"
out=${OUT:-/tmp/gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GST_PLUGIN_SYSTEM_PATH_1_0="$rt/gst" GST_PLUGIN_PATH_1_0="$rt/plugins"
export GST_PLUGIN_SCANNER_1_0="$rt/bin/gst-plugin-scanner"
export GST_REGISTRY_1_0=/tmp/gpurt-registry.bin
: > "$out/rtgpu-gpu.jsonl"
rc=0
run () {
  echo "### bench_rtgpu --impl gpu $*"
  timeout "${GS_RTGPU_TIMEOUT:-150}" "$rt/bin/bench_rtgpu" --impl gpu --quick \
    --calibrations 1 --json /tmp/rtgpu-run.jsonl "$@"
  local r=$?
  cat /tmp/rtgpu-run.jsonl >> "$out/rtgpu-gpu.jsonl" 2>/dev/null
  echo "bench_rtgpu $* rc=$r"
  [ $r -eq 0 ] || rc=$r
}
# the target's cycle first, for every N, then the shorter cycles
run --pipelines 8 --cycle-ms 10
run --pipelines 64 --cycle-ms 10
run --pipelines 1 --cycle-ms 10
run --pipelines 8 --cycle-ms 5
run --pipelines 8 --cycle-ms 2
exit $rc
