#!/usr/bin/env bash
# The 5,000-node example under its default --semantics kubernetes, where each scheduler step
# is one kube-scheduler cycle over the snapshot of the state (issue #44): `kivi check
# models/shop-5000-nodes --topology 2500,2500:1000,500,500` under --tie-break lowest (the
# default) and any, each stopped by --timeout, and the default sweep `kivi check
# models/shop-5000-nodes`. Runs KIVI (and BASE, if given, alternating with it) and prints a
# Markdown table on stdout: exit status, verdict, states, transitions, states per second of
# the check, wall and CPU seconds, peak memory.
# Usage: scripts/shop-5000-nodes.sh [KIVI] [BASE] [TIMEOUT_SECS]
set -euo pipefail
kivi=${1:-target/release/kivi}
base=${2:-}
limit=${3:-60}
model=models/shop-5000-nodes
binaries=("$kivi")
[ -n "$base" ] && binaries+=("$base")
echo "| binary | run | exit | verdict | states | transitions | states/s | wall s | CPU s | peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row() { # label, then kivi check arguments (the binary first)
  local label=$1 bin=$2
  shift 2
  set +e
  out=$( { /usr/bin/time -f 'time %e %U %S %M' timeout $((limit * 3)) "$bin" check "$@" \
    --format json -q; } 2>&1)
  local rc=$?
  set -e
  json=$(printf '%s\n' "$out" | grep '^{' || echo '{}')
  read -r wall user sys peak < <(printf '%s\n' "$out" | sed -n 's/^time //p')
  cells=$(printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
if "checksFinished" in r:  # a sweep: its answer and how many topologies it checked
    found = "violation" if r.get("minimal") else "incomplete" if r.get("interrupted") else "-"
    print("%s, %d topologies in %.1f s | - | - | -" % (found, r["checksFinished"], r["elapsed_s"]))
    sys.exit()
s = r.get("stats", {})
rate = "{:,.0f}".format(s["states_per_s"]) if "states_per_s" in s else "-"
print("%s | {:,} | {:,} | %s".format(s.get("states_stored", 0), s.get("transitions", 0))
      % (r.get("verdict", "-"), rate))')
  cpu=$(python3 -c "print(f'{$user + $sys:.1f}')")
  echo "| $(basename "$bin") | $label | $rc | $cells | $wall | $cpu | $((peak / 1024)) |"
}
for bin in "${binaries[@]}"; do
  row "lowest" "$bin" "$model" --topology 2500,2500:1000,500,500 --timeout "$limit"
done
for bin in "${binaries[@]}"; do
  row "any" "$bin" "$model" --topology 2500,2500:1000,500,500 --tie-break any \
    --timeout "$limit"
done
for bin in "${binaries[@]}"; do
  row "sweep" "$bin" "$model" --timeout "$((limit * 2))"
done
