#!/usr/bin/env bash
# Scale-up: the largest single topology each case's non-violation variant verifies within
# 10 minutes, growing nodes and pods without the incremental scaler.
#
# Runs bench-configs/scale-up.json and writes results/scale-up.csv, results/scale-up.md (machine
# facts, commit, tables) and its charts. Extra arguments go to `kivi bench`, e.g.
# `--repetitions 1` for a quick look or `--out-dir DIR`. KIVI=path/to/kivi uses a prebuilt
# binary (on a machine without the Rust toolchain); otherwise the release binary is built.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
exec "$KIVI" bench bench-configs/scale-up.json "$@"
