#!/usr/bin/env bash
# The paper's evaluation with kivi: C1–C8 minimal violating scales, topologies decided, time to
# the violation, the non-violation variants up to the confident size, beside the paper's and
# Kivi + SPIN's figures.
#
# Runs bench-configs/reproduce-paper.json and writes results/reproduce-paper.csv, results/reproduce-paper.md (machine
# facts, commit, tables) and its charts. Extra arguments go to `kivi bench`, e.g.
# `--repetitions 1` for a quick look or `--out-dir DIR`. KIVI=path/to/kivi uses a prebuilt
# binary (on a machine without the Rust toolchain); otherwise the release binary is built.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
exec "$KIVI" bench bench-configs/reproduce-paper.json "$@"
