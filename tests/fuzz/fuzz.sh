#!/usr/bin/env bash
# fuzz.sh [--bounded] [TARGET|all] [SECONDS]: builds the libFuzzer targets in
# build-fuzz/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer, CUDA
# off) and runs one target, or all, for SECONDS each (default 60): first
# every committed regression input once, then libFuzzer from the seed corpus
# (tests/fuzz/corpus/TARGET) and what earlier runs found
# (build-fuzz/fuzz-corpus/TARGET, where new inputs go). Prints execs/s,
# coverage and corpus size per target; exits non-zero when a target
# crashes, leaks or breaks one of its checks (the input is kept in
# build-fuzz/fuzz-artifacts/), 77 when clang or libFuzzer is missing.
# --bounded: the test suite's short run, 4 seconds a target.
# `./run fuzz` is the way in; GS_FUZZ_BUILD_DIR picks another build dir,
# GS_FUZZ_CORPUS_DIR another place for the inputs found (an empty one runs
# from the seed corpus alone, as `./run bench reliability` does).
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fb=${GS_FUZZ_BUILD_DIR:-$src/build-fuzz}
all_targets=(ncpacket ncframing srtp fountain cstpmeta cstpsrc cstpwall cstpcluster hap serverpath
  serverhttp)

bounded=0
if [ "${1:-}" = --bounded ]; then
  bounded=1
  shift
fi
target=${1:-all}
secs=${2:-60}
[ $bounded = 1 ] && secs=4
case "$target" in
  all) targets=("${all_targets[@]}") ;;
  *)
    [[ " ${all_targets[*]} " == *" $target "* ]] ||
      { echo "fuzz: no target '$target' (${all_targets[*]}, all)" >&2; exit 2; }
    targets=("$target")
    ;;
esac
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] ||
  { echo "fuzz: SECONDS must be a positive number, not '$secs'" >&2; exit 2; }

if ! command -v clang >/dev/null ||
    ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
      clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
  echo "fuzz: needs clang with libFuzzer (Debian: clang libclang-rt-14-dev); not run" >&2
  exit 77
fi

if [ ! -f "$fb/build.ninja" ]; then
  # sanitizer runtimes beside GStreamer's plugins: no -z defs (b_lundef);
  # no alignment check: GStreamer's GST_READ_UINT32_BE reads unaligned words
  # on x86 by design
  CC=clang CXX=clang++ meson setup "$fb" "$src" -Dcuda=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    "-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-sanitize=alignment" \
    >"$fb.setup.log" 2>&1 || { cat "$fb.setup.log" >&2; exit 1; }
  rm -f "$fb.setup.log"
fi
ninja -C "$fb" fuzzers >"$fb/fuzz-build.log" 2>&1 || { cat "$fb/fuzz-build.log" >&2; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# GLib's slice allocator would hide GStreamer buffers from the leak checker
export G_SLICE=always-malloc
export GST_REGISTRY_1_0="$fb/fuzz-registry.bin"
export GST_PLUGIN_SYSTEM_PATH_1_0=""

rc=0
summary=()
for t in "${targets[@]}"; do
  exe="$fb/tests/fuzz/fuzz-$t"
  if [ ! -x "$exe" ]; then
    echo "fuzz: $t not built (its plugin is disabled in this build)" >&2
    continue
  fi
  seeds="$src/tests/fuzz/corpus/$t"
  regressions="$src/tests/fuzz/regressions/$t"
  corpus="${GS_FUZZ_CORPUS_DIR:-$fb/fuzz-corpus}/$t"
  artifacts="$fb/fuzz-artifacts"
  log="$fb/fuzz-$t.log"
  mkdir -p "$corpus" "$artifacts"

  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    if ! "$exe" "$regressions"/* >"$fb/fuzz-$t-regressions.log" 2>&1; then
      echo "fuzz: $t: a regression input fails again:" >&2
      tail -40 "$fb/fuzz-$t-regressions.log" >&2
      rc=1
      continue
    fi
  fi
  if [ "$t" = srtp ]; then
    # the kernels' seeded mutation test, here under the sanitizers
    if ! "$fb/kernels/tests/fuzz_srtp" >"$fb/fuzz-srtp-mutations.log" 2>&1; then
      echo "fuzz: srtp: kernels/tests/fuzz_srtp failed:" >&2
      grep -v '^ok' "$fb/fuzz-srtp-mutations.log" | tail -40 >&2
      rc=1
    fi
  fi

  echo "fuzz: $t for ${secs} s" >&2
  if "$exe" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$artifacts/$t-" \
      "$corpus" "$seeds" >"$log" 2>&1; then
    result=ok
  else
    result=CRASH
    rc=1
    echo "fuzz: $t crashed; input kept as:" >&2
    grep -E "Test unit written to|artifact_prefix" "$log" >&2 || true
    grep -E "ERROR: |check failed|SUMMARY" "$log" | head -5 >&2 || true
  fi
  # libFuzzer's last status line (cov: edges, corp: units/bytes) and stats
  last=$(grep -a -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
  execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+=("$(printf '%-10s %-6s %10s %10s %6s %12s %6s' "$t" "$result" \
    "${runs:-?}" "${execs:-?}" "${cov:-?}" "${corp:-?}" \
    "$(ls "$seeds" | wc -l)")")
done

printf '%-10s %-6s %10s %10s %6s %12s %6s\n' target result execs execs/s cov \
  corpus seeds
printf '%s\n' "${summary[@]}"
echo "(cov: edges covered; corpus: inputs/bytes kept; logs: $fb/fuzz-TARGET.log)"
exit $rc
