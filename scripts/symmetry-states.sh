#!/usr/bin/env bash
# States stored against cluster size for the node-failure model
# (bench-configs/models/c3-four-node-failures.json: four failures) at topologies n,n:2 and
# n,n:n for n = 2 … 5
# under --tie-break any, with and without symmetry: the source of
# results/symmetry-states.{csv,svg}. Each run has TIMEOUT seconds on 2 threads; a run that hits
# it reports the states stored so far, a lower bound (column `complete` = false).
# Usage: scripts/symmetry-states.sh [KIVI] [TIMEOUT_SECS] [OUT_DIR]
set -euo pipefail
kivi=${1:-target/release/kivi}
limit=${2:-30}
out=${3:-results}
model=bench-configs/models/c3-four-node-failures.json
csv="$out/symmetry-states.csv"
echo "nodes_per_type,nodes,replicas,setting,line,verdict,states,seconds,complete" > "$csv"
for n in 2 3 4 5; do
  for replicas in $( [ "$n" = 2 ] && echo 2 || echo "2 $n" ); do
    topology="$n,$n:$replicas"
    [ "$replicas" = 2 ] && shape="2 replicas" || shape="N replicas"
    for setting in symmetry no-symmetry; do
      flags="--tie-break any"
      [ "$setting" = no-symmetry ] && flags+=" --no-symmetry"
      json=$("$kivi" check "$model" --topology "$topology" $flags --threads 2 \
        --timeout "$limit" --format json -q || true)
      printf '%s' "$json" | python3 -c '
import json, sys
topology, setting, shape = sys.argv[1:4]
r = json.load(sys.stdin)
nodes, replicas = topology.split(":")
s = r["stats"]
print(",".join(str(v) for v in [nodes.split(",")[0], sum(map(int, nodes.split(","))), replicas, setting,
      setting + " (" + shape + ")", r["verdict"], s["states_stored"], round(s["elapsed_s"], 2),
      str(r["verdict"] != "incomplete").lower()]))' "$topology" "$setting" "$shape" >> "$csv"
    done
  done
done
"$kivi" bench plot --csv "$csv" --x nodes --y states --series line --log-y \
  --title "Node-failure model under --tie-break any: states stored by nodes" \
  --out "$out/symmetry-states.svg"
