#!/usr/bin/env bash
# fresh_seeds.sh BUILD_DIR: writes a fresh seed corpus from the built
# plugins with fuzz-make-seeds, as docs/reliability.md shows it, and replays
# it through every target's replay build: the encoders' current output
# passes every check of the harnesses.
set -euo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/tests/fuzz/fuzz-make-seeds" "$out" >/dev/null
for dir in "$out"/*; do
  t=$(basename "$dir")
  echo "$t: $("$build/tests/fuzz/fuzz-$t-replay" "$dir")"
done
