#!/usr/bin/env bash
# Verdicts, violated intents, stored states and wall time under --semantics kivi and
# --semantics kubernetes (each under --tie-break lowest, one thread, bfs) of: every built-in
# case (single topology, both variants), every models/ example, and the node-failure
# topologies (bench-configs/models/c3-four-node-failures.json). Writes results/semantics.csv
# and the tables between the markers of results/semantics.md. Each check runs under
# --timeout (a check cut short reads "incomplete").
# Usage: scripts/semantics-table.sh [KIVI] [TIMEOUT_SECS] [TOPOLOGY_TIMEOUT_SECS]
# (TABLE_ONLY=1 rewrites the tables from the CSV without checking again.)
set -euo pipefail
kivi=${1:-target/release/kivi}
limit=${2:-60}
topology_limit=${3:-120}
csv=results/semantics.csv
md=results/semantics.md
row() { # group, input, variant, semantics, timeout, kivi check arguments...
  local group=$1 input=$2 variant=$3 semantics=$4 secs=$5
  shift 5
  local flags=("$@" --threads 1 --strategy bfs --semantics "$semantics" --timeout "$secs"
    --format json -q)
  local out rc=0
  out=$( { /usr/bin/time -f 'wall %e' timeout $((secs + 30)) "$kivi" check "${flags[@]}"; } 2>&1 ) || rc=$?
  local json wall
  json=$(printf '%s\n' "$out" | grep '^{' || true)
  wall=$(printf '%s\n' "$out" | sed -n 's/^wall //p')
  printf '%s' "$json" | python3 -c '
import csv, json, sys
text = sys.stdin.read()
if text:
    r = json.loads(text)
    found = [r["verdict"], " ".join(r.get("violatedIntents") or []),
             str(r["stats"]["states_stored"])]
else:
    found = ["none", "", ""]
csv.writer(sys.stdout, lineterminator="\n").writerow(sys.argv[1:6] + found + [sys.argv[6]])' \
    "$group" "$input" "$variant" "$semantics" "$rc" "${wall:-$secs}" >> "$csv"
}
both() { # group, input, variant, timeout, arguments...
  local group=$1 input=$2 variant=$3 secs=$4
  shift 4
  for semantics in kivi kubernetes; do
    row "$group" "$input" "$variant" "$semantics" "$secs" "$@"
  done
}
check_all() {
  echo "group,input,variant,semantics,exit,verdict,violated,states,wall_s" > "$csv"
  for c in c1 c2 c3 c4 c5 c6 c7 c8; do
    both case "$c" original "$limit" --case "$c" --original
    both case "$c" non-violation "$limit" --case "$c" --original --non-violation
  done
  for m in c1-hpa-oscillation c2-apply-without-replicas c3-spread-hpa c5-descheduler-duplicates \
    c8-spot-spread-descheduler; do
    both model "models/$m" --original "$limit" "models/$m" --original
  done
  both model models/live-cluster-dump "as it runs" "$limit" models/live-cluster-dump
  both model models/shop-5000-nodes "--topology 2500,2500:1000,500,500" "$limit" \
    models/shop-5000-nodes --topology 2500,2500:1000,500,500
  both model models/spread-after-node-failure "as it runs" "$limit" \
    models/spread-after-node-failure
  for t in 2,2:6 3,3:12 4,4:12 4,4:24; do
    both node-failure bench-configs/models/c3-four-node-failures.json "$t" "$topology_limit" \
      bench-configs/models/c3-four-node-failures.json --topology "$t"
  done
}
[ "${TABLE_ONLY:-}" = 1 ] || check_all
tables=$(python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def cell(r):
    if r["verdict"] == "none":
        return "did not finish: killed after %s s (exit %s)" % (r["wall_s"], r["exit"])
    states = "{:,}".format(int(r["states"])) if r["states"] else "?"
    return "%s (%s); %s states; %s s" % (r["verdict"], r["violated"] or "none", states,
                                         r["wall_s"])
def same(k, s):
    if {k["verdict"], s["verdict"]} & {"none", "incomplete"}:
        return "unknown"
    return "yes" if (k["verdict"], k["violated"]) == (s["verdict"], s["violated"]) else "**no**"
titles = {"case": ("Built-in cases (`--case C --original`)", "case"),
          "model": ("`models/` examples", "model"),
          "node-failure": ("Node-failure topologies (`bench-configs/models/c3-four-node-failures.json`"
                           " at `--topology`)", "topology")}
out = []
for group, (title, what) in titles.items():
    mine = [r for r in rows if r["group"] == group]
    out.append("### " + title)
    out.append("")
    out.append("| %s | variant | kivi | kubernetes | same verdict |" % what)
    out.append("|---|---|---|---|---|")
    for i in range(0, len(mine), 2):
        k, s = mine[i], mine[i + 1]
        out.append("| %s | %s | %s | %s | %s |" % (k["input"], k["variant"], cell(k), cell(s),
                                                   same(k, s)))
    out.append("")
print("\n".join(out).rstrip())
PY
)
python3 - "$md" "$tables" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
start, end = "<!-- table: scripts/semantics-table.sh -->", "<!-- end of table -->"
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + start + "\n" + table + "\n" + end + tail)
PY
