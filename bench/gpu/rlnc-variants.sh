#!/usr/bin/env bash
# ON THE GPU MACHINE, after kernels.sh (it needs /tmp/gpubuild and /tmp/gpudeps):
# builds bench_rlnc_gpu with other constants of the product kernel (rows per
# thread, how a coefficient's bits pick the powers, blocks per SM) and runs
# each at m = 16, 64, 256, k = 4096, 64 generations a launch. Every variant's
# output is checked against rlnc_encode_ref by the benchmark itself. JSON
# lines in $OUT/rlnc-variants.jsonl.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp/gpu-out}
build=/tmp/gpubuild
deps=/tmp/gpudeps
mkdir -p "$out" /tmp/rlnc-variants
: > "$out/rlnc-variants.jsonl"
# default: 8 rows per thread, a uniform branch per coefficient bit
for v in "default:" "mask:-DGF256_MADD_MASK" \
    "rows16:-DRLNC_PRODUCT_ROWS=16 -DRLNC_GPU_MIN_BLOCKS=1" \
    "rows16-mask:-DRLNC_PRODUCT_ROWS=16 -DRLNC_GPU_MIN_BLOCKS=1 -DGF256_MADD_MASK" \
    "rows4:-DRLNC_PRODUCT_ROWS=4"; do
  name=${v%%:*} flags=${v#*:}
  exe=/tmp/rlnc-variants/bench_rlnc_gpu_$name
  # shellcheck disable=SC2086
  nvcc -gencode arch=compute_90,code=sm_90 -O3 -I "$here/kernels" $flags \
    -DRLNC_BENCH_VARIANT="\"$name\"" -o "$exe" "$here/kernels/bench/bench_rlnc_gpu.cu" \
    -Xlinker "$build/kernels/libgsrlnc.a" -Xlinker "$build/kernels/libgskcommon.a" \
    -L"$deps/usr/lib/x86_64-linux-gnu" -lisal -lm || { echo "variant $name: build failed"; continue; }
  LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$exe" --m-sweep --json /tmp/rlnc-variants/$name.jsonl
  cat /tmp/rlnc-variants/$name.jsonl >> "$out/rlnc-variants.jsonl"
done
