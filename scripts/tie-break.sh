#!/usr/bin/env bash
# Verdicts, violated intents and stored states of every case (both variants), every models/
# example and the node-failure model under --tie-break lowest and any (with and without symmetry), as a
# Markdown table on stdout: the source of results/tie-break.md.
# Usage: scripts/tie-break.sh [KIVI] [TIMEOUT_SECS]
set -euo pipefail
kivi=${1:-target/release/kivi}
limit=${2:-120}
run() { # label, then kivi check arguments
  local label=$1; shift
  local row=()
  for flags in "" "--tie-break any --no-symmetry" "--tie-break any"; do
    out=$( { /usr/bin/time -f 'wall %e' timeout "$limit" "$kivi" check "$@" $flags --format json -q; } 2>&1 || true)
    json=$(printf '%s\n' "$out" | grep '^{' || true)
    wall=$(printf '%s\n' "$out" | sed -n 's/^wall //p')
    if [ -z "$json" ]; then row+=("timeout ${limit} s"); continue; fi
    row+=("$(printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
v = ", ".join(r.get("violatedIntents") or []) or "none"
print("%s (%s); {:,} states".format(r["stats"]["states_stored"]) % (r["verdict"], v))')")
    row[-1]+="; ${wall} s"
  done
  echo "| $label | ${row[0]} | ${row[1]} | ${row[2]} |"
}
echo "| input | lowest | any, --no-symmetry | any (symmetry) |"
echo "|---|---|---|---|"
for c in c1 c2 c3 c4 c5 c6 c7 c8; do
  run "$c" --case "$c" --original --threads 1 --strategy bfs
  run "$c non-violation" --case "$c" --original --non-violation --threads 1 --strategy bfs
done
for m in c1-hpa-oscillation c2-apply-without-replicas c3-spread-hpa c5-descheduler-duplicates \
  c8-spot-spread-descheduler; do
  run "models/$m" "models/$m" --original --threads 1 --strategy bfs
done
run "models/live-cluster-dump" models/live-cluster-dump --threads 1 --strategy bfs
run "models/shop-5000-nodes 2500,2500:1000,500,500" models/shop-5000-nodes \
  --topology 2500,2500:1000,500,500 --threads 2
m=bench-configs/models/c3-four-node-failures.json
for t in 2,2:8 2,2:12 3,3:18 4,4:24; do
  run "node failure $t" "$m" --topology "$t" --threads 2
done
