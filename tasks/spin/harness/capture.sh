#!/usr/bin/env bash
# Rebuild spin-trace offline and recapture the committed traces data/traces/spin/seed-<N>.ndjson.
# Usage: tasks/spin/harness/capture.sh [OPS] [SEED...]   (defaults: 60 ops per thread, seeds 1-4)
# The traces come from real threads, so every capture differs from the last (see README.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/data/traces/spin"
ops="${1:-60}"
shift || true
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4)
cargo="${CARGO:-$(command -v cargo || echo /root/.cargo/bin/cargo)}"
(cd "$here" && "$cargo" build --release --offline --quiet)
mkdir -p "$out"
for s in "${seeds[@]}"; do
  "$here/target/release/spin-trace" --seed "$s" --ops "$ops" --out "$out/seed-$s.ndjson"
done
