#!/usr/bin/env bash
# Issue #15's 1,000-node target: four node failures in a cluster of 1,000 nodes and 3,000
# replicas under --tie-break any (symmetry on), `kivi check
# bench-configs/models/c3-four-node-failures.json --topology 500,500:3000 --tie-break any`,
# on every core of this machine. Runs KIVI (and BASE, if given, alternating with it, for a
# side-by-side ratio) RUNS times each and prints a Markdown table on stdout: verdict, states,
# transitions, wall and CPU seconds, cores busy ((user + sys) / wall) and peak memory, then
# the median wall time of each binary.
# With CSV=FILE, also writes the rows to FILE (binary, run, verdict, states, transitions,
# wall_s, cpu_s, cores_busy, peak_mb).
# Usage: [CSV=FILE] scripts/thousand-nodes.sh [KIVI] [RUNS] [BASE] [TIMEOUT_SECS]
set -euo pipefail
kivi=${1:-target/release/kivi}
runs=${2:-3}
base=${3:-}
limit=${4:-300}
csv=${CSV:-}
[ -n "$csv" ] && echo "binary,run,verdict,states,transitions,wall_s,cpu_s,cores_busy,peak_mb" > "$csv"
model=bench-configs/models/c3-four-node-failures.json
binaries=("$kivi")
[ -n "$base" ] && binaries+=("$base")
declare -A walls
echo "| binary | run | verdict | states | transitions | wall s | CPU s | cores busy | peak MB |"
echo "|---|---|---|---|---|---|---|---|---|"
for run in $(seq 1 "$runs"); do
  for bin in "${binaries[@]}"; do
    out=$( { /usr/bin/time -f 'time %e %U %S %M' "$bin" check "$model" --topology 500,500:3000 \
      --tie-break any --timeout "$limit" --format json -q; } 2>&1 || true)
    json=$(printf '%s\n' "$out" | grep '^{')
    read -r wall user sys peak < <(printf '%s\n' "$out" | sed -n 's/^time //p')
    read -r verdict states transitions < <(printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
s = r["stats"]
print(r["verdict"], s["states_stored"], s["transitions"])')
    busy=$(python3 -c "print(f'{($user + $sys) / $wall:.2f}')")
    cpu=$(python3 -c "print(f'{$user + $sys:.1f}')")
    commas() { python3 -c "print(f'{$1:,}')"; }
    echo "| $(basename "$bin") | $run | $verdict | $(commas "$states") | $(commas "$transitions") | $wall | $cpu | $busy | $((peak / 1024)) |"
    [ -n "$csv" ] && echo "$(basename "$bin"),$run,$verdict,$states,$transitions,$wall,$cpu,$busy,$((peak / 1024))" >> "$csv"
    walls[$bin]+="$wall "
  done
done
echo
for bin in "${binaries[@]}"; do
  median=$(printf '%s\n' ${walls[$bin]} | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "- $(basename "$bin"): median wall ${median} s over $runs run(s)"
done
