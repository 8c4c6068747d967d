#!/usr/bin/env bash
# Thread sweep: 1, 2, 4, 8 and 16 threads, fast-find 0 and 2, over every case in scaling and
# full-sweep modes, the 1,644-topology sweeps and a 15-million-state single topology; speedup,
# efficiency and per-topology time percentiles, with charts. Thread counts above the machine's
# cores are left out (and listed in the result): run it on a 16-core machine for the full table.
#
# Runs bench-configs/thread-sweep.json and writes results/thread-sweep.csv, results/thread-sweep.md (machine
# facts, commit, tables) and its charts. Extra arguments go to `kivi bench`, e.g.
# `--repetitions 1` for a quick look or `--out-dir DIR`. KIVI=path/to/kivi uses a prebuilt
# binary (on a machine without the Rust toolchain); otherwise the release binary is built.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
exec "$KIVI" bench bench-configs/thread-sweep.json "$@"
