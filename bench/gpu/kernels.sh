#!/usr/bin/env bash
# The first half of ./run gpu-check, ON THE GPU MACHINE. Where the machine
# has no Debian mirror, ./run gpu-check pack on one that has, and copy its
# .gpudeps/ into this checkout first.
# It unpacks .gpudeps/ (if any) into /tmp/gpudeps, builds the kernels without
# GStreamer (the machine may have none), runs every kernel test (each GPU kernel
# against its CPU reference, byte for byte) and the kernel benchmarks, and
# leaves in $OUT: the test log, the JSON lines and a markdown report
# (bench/bench_report.py) to commit under docs/benchmarks/.
# GS_GPU_ARCHS (default 90) picks the native code built (sm_90: H100/H200).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp/gpu-out}
mkdir -p "$out"
deps=/tmp/gpudeps
build=/tmp/gpubuild

mkdir -p "$deps"
for f in "$here"/.gpudeps/*.deb; do
  [ -e "$f" ] && dpkg -x "$f" "$deps"
done
# the .pc files say prefix=/usr (libsquish's an empty prefix): point them at
# the unpacked tree
for pc in "$deps"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
  [ -e "$pc" ] && sed -i "s|^prefix=\(/usr\)\{0,1\}\$|prefix=$deps/usr|" "$pc"
done
export PATH="$deps/usr/bin:/usr/local/cuda/bin:$PATH"
export PKG_CONFIG_PATH="$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CPATH="$deps/usr/include${CPATH:+:$CPATH}"
[ -x "$deps/usr/bin/pkgconf" ] && [ ! -e "$deps/usr/bin/pkg-config" ] &&
  ln -s pkgconf "$deps/usr/bin/pkg-config"

{
  echo "## machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  nvcc --version | tail -2 || true
  grep -m1 "model name" /proc/cpuinfo || true
  nproc
} 2>&1 | tee "$out/machine.txt"

export GS_OFFLINE=1 GS_BUILD_DIR=$build
export GS_MESON_ARGS="-Dplugins=disabled -Dcuda=enabled -Dcuda-archs=${GS_GPU_ARCHS:-90}"
"$here/run" tests 2>&1 | tee "$out/tests.log"
cp "$build/meson-logs/testlog.txt" "$out/testlog.txt" 2>/dev/null
"$here/run" bench kernels 2>&1 | tee "$out/bench.log"
cp "$build/bench/latest.jsonl" "$out/bench.jsonl" 2>/dev/null
python3 "$here/bench/bench_report.py" "$out/bench.jsonl" \
  --machine "$out/machine.txt" > "$out/report.md" && cat "$out/report.md"
