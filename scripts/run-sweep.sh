#!/usr/bin/env bash
# Runs the sweep definition bench-configs/NAME.json with `kivi bench`, which writes
# results/NAME.csv, results/NAME.md (machine facts, commit, tables) and its charts.
#
# Usage: scripts/run-sweep.sh NAME [kivi bench options, e.g. --repetitions 1, --out-dir DIR]
# KIVI=path/to/kivi uses a prebuilt binary (on a machine without the Rust toolchain);
# otherwise the release binary is built first.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/run-sweep.sh NAME [kivi bench options]}
shift
[ -f "bench-configs/$name.json" ] || { echo "run-sweep: no bench-configs/$name.json" >&2; exit 2; }
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
exec "$KIVI" bench "bench-configs/$name.json" "$@"
