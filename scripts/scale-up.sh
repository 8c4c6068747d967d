#!/usr/bin/env bash
# Scale-up: the largest single topology each case's non-violation variant verifies within
# 10 minutes, growing nodes and pods without the incremental scaler.
#
# Results: results/scale-up.{csv,md} and charts; see scripts/run-sweep.sh for options (KIVI=…,
# --repetitions, --out-dir).
exec "$(dirname "$0")/run-sweep.sh" scale-up "$@"
