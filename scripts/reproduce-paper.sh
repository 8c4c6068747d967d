#!/usr/bin/env bash
# The paper's evaluation with kivi: C1–C8 minimal violating scales, topologies decided, time to
# the violation, the non-violation variants up to the confident size, beside the paper's and
# Kivi + SPIN's figures.
#
# Results: results/reproduce-paper.{csv,md} and charts; see scripts/run-sweep.sh for options (KIVI=…,
# --repetitions, --out-dir).
exec "$(dirname "$0")/run-sweep.sh" reproduce-paper "$@"
