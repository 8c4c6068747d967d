#!/usr/bin/env bash
# States stored against cluster size for the node-failure model
# (bench-configs/models/c3-four-node-failures.json: four failures) under --tie-break any, with
# and without symmetry: topologies n,n:2 and n,n:n for n = 2 … 5 (the source of
# results/symmetry-states.{csv,svg}), then large clusters at a few replicas, 16,16:2, 64,64:2,
# 500,500:2 and 500,500:8 (results/symmetry-large.csv). Each run has TIMEOUT seconds on 2
# threads; a run that hits it reports the states stored so far, a lower bound (column
# `complete` = false).
# Usage: scripts/symmetry-states.sh [KIVI] [TIMEOUT_SECS] [OUT_DIR]
set -euo pipefail
kivi=${1:-target/release/kivi}
limit=${2:-30}
out=${3:-results}
model=bench-configs/models/c3-four-node-failures.json
header="nodes_per_type,nodes,replicas,setting,line,verdict,states,seconds,complete"

# Checks one topology under one setting and appends its row to a CSV file.
row() { # topology, setting (symmetry|no-symmetry), line label, CSV file
  local topology=$1 setting=$2 shape=$3 csv=$4 flags="--tie-break any"
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
}

csv="$out/symmetry-states.csv"
echo "$header" > "$csv"
for n in 2 3 4 5; do
  for replicas in $( [ "$n" = 2 ] && echo 2 || echo "2 $n" ); do
    [ "$replicas" = 2 ] && shape="2 replicas" || shape="N replicas"
    for setting in symmetry no-symmetry; do
      row "$n,$n:$replicas" "$setting" "$shape" "$csv"
    done
  done
done
"$kivi" bench plot --csv "$csv" --x nodes --y states --series line --log-y \
  --title "Node-failure model under --tie-break any: states stored by nodes" \
  --out "$out/symmetry-states.svg"

large="$out/symmetry-large.csv"
echo "$header" > "$large"
for topology in 16,16:2 64,64:2 500,500:2 500,500:8; do
  for setting in symmetry no-symmetry; do
    row "$topology" "$setting" "${topology#*:} replicas" "$large"
  done
done
