#!/usr/bin/env bash
# Breadth-first search, this binary against an older one, side by side: the node-failure
# topology (bench-configs/models/c3-four-node-failures.json --topology 4,4:24, 15.3 M states)
# with --strategy bfs on 1, 2 and 16 threads, the two binaries alternately, REPS runs each [3]
# (scripts/side-by-side.sh). Writes results/bfs-side-by-side.md.
#
# Usage: BASE=path/to/older/kivi scripts/bfs-side-by-side.sh
# KIVI=path/to/kivi uses a prebuilt binary; otherwise the release binary is built first.
# THREADS="1 2 16" chooses the thread counts; BASE_NAME and KIVI_NAME name the binaries in the
# results (e.g. their commits; default: their --version).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=()
for t in ${THREADS:-1 2 16}; do
    rows+=("bfs-${t}t=bench-configs/models/c3-four-node-failures.json --topology 4,4:24 --strategy bfs --threads $t")
done
exec scripts/side-by-side.sh results/bfs-side-by-side.md "Breadth-first search, side by side" \
    "The node-failure topology (\`bench-configs/models/c3-four-node-failures.json --topology 4,4:24\`, 15,266,507 states) with \`--strategy bfs\` on each thread count." \
    "${rows[@]}"
