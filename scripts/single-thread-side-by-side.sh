#!/usr/bin/env bash
# Single-thread speed, this binary against an older one, side by side (issue #43's criterion:
# within 5 % of 7c820a2): the node-failure model (bench-configs/models/c3-four-node-failures.json)
# at three topologies with the default depth-first search on one thread, under Kivi's
# semantics, the two binaries alternately, REPS runs each [5] (scripts/side-by-side.sh).
# Writes results/single-thread-side-by-side.md.
#
# Usage: BASE=path/to/older/kivi scripts/single-thread-side-by-side.sh
# KIVI=path/to/kivi uses a prebuilt binary; otherwise the release binary is built first.
# BASE_NAME and KIVI_NAME name the binaries in the results (e.g. their commits).
set -euo pipefail
cd "$(dirname "$0")/.."
model=bench-configs/models/c3-four-node-failures.json
rows=()
for topology in 3,3:3 3,3:4 4,4:24; do
    rows+=("dfs-1t-${topology}=$model --topology $topology --strategy dfs --threads 1")
done
REPS=${REPS:-5} exec scripts/side-by-side.sh results/single-thread-side-by-side.md \
    "Single-thread speed, side by side" \
    "The node-failure model (\`$model\`) at three topologies, depth-first on one thread under the model's default semantics, Kivi's (1,336,946, 2,232,740 and 15,266,507 states)." \
    "${rows[@]}"
