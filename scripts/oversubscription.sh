#!/usr/bin/env bash
# Oversubscription: the node-failure topology and the counters model, depth-first and
# breadth-first, with --threads 2 and --threads 16 on this machine, the visited set growing from
# one page. A healthy engine is no slower with 16 threads than with 2 and keeps every core busy
# (cores busy = CPU time / wall time). Runs on any machine, a 2-core one included.
#
# Results: results/oversubscription.{csv,md} and a chart; see scripts/run-sweep.sh for options
# (KIVI=…, --repetitions, --out-dir).
exec "$(dirname "$0")/run-sweep.sh" oversubscription "$@"
