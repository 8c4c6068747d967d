#!/usr/bin/env bash
# Eviction-loop search (--loop) by threads: the parallel CNDFS search on the 15.9-million-state
# node-failure topology within a 1 GiB table, at 1 to 16 threads (above the machine's cores
# too: oversubscription), with speedup and cores busy.
#
# Results: results/eviction-loop.{csv,md}; see scripts/run-sweep.sh for options (KIVI=…,
# --repetitions, --out-dir).
exec "$(dirname "$0")/run-sweep.sh" eviction-loop "$@"
