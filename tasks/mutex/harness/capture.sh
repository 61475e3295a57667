#!/usr/bin/env bash
# Rebuild mutex-trace offline and recapture the committed traces data/traces/mutex/seed-<N>.ndjson.
# Usage: tasks/mutex/harness/capture.sh [OPS] [SEED...]   (defaults: 60 ops per thread, seeds 1-4)
# The traces come from real threads, so every capture differs from the last (see README.md).
# A capture in which some action, or the UnlockFair hand-offs, the UnlockFair releases while a
# thread waits, or the TryLock wins while a thread waits, occur fewer than MIN_EACH (default 5)
# times is not written (mutex-trace exits 3) and is retried, at most ATTEMPTS (default 10) times.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/data/traces/mutex"
ops="${1:-60}"
shift || true
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4)
min_each="${MIN_EACH:-5}"
attempts="${ATTEMPTS:-10}"
cargo="${CARGO:-$(command -v cargo || echo /root/.cargo/bin/cargo)}"
(cd "$here" && "$cargo" build --release --offline --quiet)
mkdir -p "$out"
for s in "${seeds[@]}"; do
  for ((i = 1; ; i++)); do
    rc=0
    "$here/target/release/mutex-trace" --seed "$s" --ops "$ops" --min-each "$min_each" \
      --out "$out/seed-$s.ndjson" || rc=$?
    [ "$rc" -eq 0 ] && break
    if [ "$rc" -ne 3 ] || [ "$i" -ge "$attempts" ]; then
      echo "capture.sh: seed $s failed (exit $rc, attempt $i)" >&2
      exit "$rc"
    fi
  done
done
