#!/usr/bin/env bash
# Thread sweep: 1, 2, 4, 8 and 16 threads, fast-find 0 and 2, over every case in scaling and
# full-sweep modes, the 1,644-topology sweeps and a 15-million-state single topology; speedup,
# efficiency and per-topology time percentiles, with charts. Thread counts above the machine's
# cores are left out (and listed in the result): run it on a 16-core machine for the full table.
#
# Results: results/thread-sweep.{csv,md} and charts; see scripts/run-sweep.sh for options (KIVI=…,
# --repetitions, --out-dir).
exec "$(dirname "$0")/run-sweep.sh" thread-sweep "$@"
