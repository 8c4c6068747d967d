#!/usr/bin/env bash
# Verdicts, violated intents, stored states and wall time under --semantics kivi and
# --semantics kubernetes (each under --tie-break lowest, one thread, bfs) of: every built-in
# case (single topology, both variants), every models/ example, and the node-failure
# topologies (bench-configs/models/c3-four-node-failures.json), and the state growth of the
# node-failure topologies with a ScheduleAnyway spread, with four and with two failed nodes
# (bench-configs/models/c3-{four,two}-node-failures-schedule-anyway.json at growing --topology),
# and that of the two-failure model under --tie-break any, with and without symmetry reduction.
# Writes results/semantics.csv and the tables between the markers of results/semantics.md.
# Each check runs under --timeout (a check cut short reads "incomplete").
# Usage: scripts/semantics-table.sh [KIVI] [TIMEOUT_SECS] [TOPOLOGY_TIMEOUT_SECS]
# (TABLE_ONLY=1 rewrites the tables from the CSV without checking again; ONLY=growth checks
# only the state-growth rows again and keeps the other rows of the CSV as they are; ONLY=growth-any
# the state-growth rows under --tie-break any; ONLY=main checks every other row again and keeps
# the state-growth rows of both kinds.)
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
    if "stats" in r:
        intents = r.get("violatedIntents") or []
        states, transitions = r["stats"]["states_stored"], r["stats"]["transitions"]
    else:  # a sweep: the states of every topology it checked, the intents of the minimal one
        intents = (r.get("minimal") or {}).get("intents") or []
        states = sum(row.get("states") or 0 for row in r["rows"])
        transitions = sum(row.get("transitions") or 0 for row in r["rows"])
    found = [r["verdict"], " ".join(intents), str(states)]
    transitions = str(transitions)
else:
    found = ["none", "", ""]
    transitions = ""
csv.writer(sys.stdout, lineterminator="\n").writerow(
    sys.argv[1:6] + found + [sys.argv[6], transitions])' \
    "$group" "$input" "$variant" "$semantics" "$rc" "${wall:-$secs}" >> "$csv"
}
both() { # group, input, variant, timeout, arguments...
  local group=$1 input=$2 variant=$3 secs=$4
  shift 4
  for semantics in kivi kubernetes; do
    row "$group" "$input" "$variant" "$semantics" "$secs" "$@"
  done
}
header="group,input,variant,semantics,exit,verdict,violated,states,wall_s,transitions"
check_all() {
  echo "$header" > "$csv"
  check_main
  check_growth
  check_growth_any
}
check_main() {
  for c in c1 c2 c3 c4 c5 c6 c7 c8; do
    both case "$c" original "$limit" --case "$c" --original
    both case "$c" non-violation "$limit" --case "$c" --original --non-violation
  done
  for m in c1-hpa-oscillation c2-apply-without-replicas c3-spread-hpa c5-descheduler-duplicates \
    c8-spot-spread-descheduler daemonset-starves-app daemonset-starves-app/fixed; do
    both model "models/$m" --original "$limit" "models/$m" --original
  done
  both model models/live-cluster-dump "as it runs" "$limit" models/live-cluster-dump
  both model models/shop-5000-nodes "--topology 2500,2500:1000,500,500" "$limit" \
    models/shop-5000-nodes --topology 2500,2500:1000,500,500
  both model models/shop-5000-nodes "as it runs" "$limit" models/shop-5000-nodes
  both model models/spread-after-node-failure "as it runs" "$limit" \
    models/spread-after-node-failure
  for m in preemption-of-critical-service preemption-of-critical-service/fixed \
    drain-blocked-by-pdb drain-blocked-by-pdb/fixed zone-upgrade-blocked zone-upgrade-blocked/fixed \
    autoscaler-zone-spread autoscaler-zone-spread/fixed pdb-blocks-descheduler low-utilization-loop; do
    both model "models/$m" --original "$limit" "models/$m" --original
  done
  for t in 2,2:6 3,3:12 4,4:12 4,4:24; do
    both node-failure bench-configs/models/c3-four-node-failures.json "$t" "$topology_limit" \
      bench-configs/models/c3-four-node-failures.json --topology "$t"
  done
}
growth_four=bench-configs/models/c3-four-node-failures-schedule-anyway.json
growth_two=bench-configs/models/c3-two-node-failures-schedule-anyway.json
kubernetes_finished() { # whether the last CSV row, under kubernetes, has a full verdict
  tail -n 1 "$csv" | grep -q ',kubernetes,[01],\(no_\)\?violation,'
}
growth() { # input, topologies (then larger ones of "+ ..." while kubernetes finishes)
  local input=$1 larger=
  shift
  for t in "$@"; do
    if [ "$t" = + ]; then larger=1; continue; fi
    if [ -n "$larger" ]; then kubernetes_finished || break; fi
    both growth "$input" "$t" "$topology_limit" "$input" --topology "$t"
  done
}
check_growth() {
  growth "$growth_four" 2,2:6 2,2:12 3,3:12 4,4:12 4,4:24 + 5,5:24
  growth "$growth_two" 2,2:6 2,2:9 2,2:12 3,3:6 3,3:12 4,4:24 + 5,5:24
}
# The two-failure model under --tie-break any, each topology with symmetry reduction (the
# default) and with --no-symmetry, under both semantics; the same topology limit.
check_growth_any() {
  for t in 2,2:6 2,2:9 2,2:12 3,3:6 3,3:12 4,4:24; do
    both growth-any "$growth_two" "$t symmetry" "$topology_limit" "$growth_two" --topology "$t" \
      --tie-break any
    both growth-any "$growth_two" "$t no-symmetry" "$topology_limit" "$growth_two" --topology "$t" \
      --tie-break any --no-symmetry
  done
}
keep_all_but() { # GROUP: the CSV's rows of every other group as they are (a missing transitions column added)
  python3 - "$csv" "$header" "$1" <<'PY'
import csv, sys
path, header, group = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
rows = [r for r in csv.DictReader(open(path)) if r["group"] != group]
with open(path, "w") as out:
    writer = csv.DictWriter(out, header, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
PY
}
check_growth_only() {
  keep_all_but growth
  check_growth
}
check_growth_any_only() {
  keep_all_but growth-any
  check_growth_any
}
check_main_only() { # the CSV's state-growth rows as they are, after every other row checked
  local kept
  kept=$(python3 - "$csv" "$header" <<'PY'
import csv, sys
path, header = sys.argv[1], sys.argv[2].split(",")
rows = [r for r in csv.DictReader(open(path)) if r["group"].startswith("growth")]
writer = csv.DictWriter(sys.stdout, header, restval="", lineterminator="\n")
writer.writerows(rows)
PY
)
  echo "$header" > "$csv"
  check_main
  if [ -n "$kept" ]; then printf '%s\n' "$kept" >> "$csv"; fi
}
if [ "${TABLE_ONLY:-}" != 1 ]; then
  case "${ONLY:-}" in
    growth) check_growth_only ;;
    growth-any) check_growth_any_only ;;
    main) check_main_only ;;
    *) check_all ;;
  esac
fi
tables=$(python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def cell(r):
    if r["exit"] == "2":
        return "refused (exit 2): modelled under kubernetes only"
    if r["verdict"] == "none":
        return "did not finish: killed after %s s (exit %s)" % (r["wall_s"], r["exit"])
    states = "{:,}".format(int(r["states"])) if r["states"] else "?"
    return "%s (%s); %s states; %s s" % (r["verdict"], r["violated"] or "none", states,
                                         r["wall_s"])
def same(k, s):
    if "2" in (k["exit"], s["exit"]):
        return "n/a"
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
growth_table=$(python3 - "$csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["group"] == "growth"]
def number(text):
    return "{:,}".format(int(text)) if text else "?"
def cells(r):
    if r["verdict"] == "none":
        return ["killed (exit %s)" % r["exit"], "?", "?", r["wall_s"]]
    return [r["verdict"], number(r["states"]), number(r.get("transitions", "")), r["wall_s"]]
def ratio(k, s):
    """Kubernetes' states over kivi's; a lower bound ("> r") when only kubernetes was cut
    short, as the states it had stored are fewer than its whole state space."""
    if not (k["states"] and s["states"]) or k["verdict"] in ("none", "incomplete"):
        return "?"
    value = "{:,.1f}".format(int(s["states"]) / int(k["states"]))
    return "> " + value if s["verdict"] == "incomplete" else value
out = ["| model | topology | kivi verdict | kivi states | kivi transitions | kivi s "
       "| kubernetes verdict | kubernetes states | kubernetes transitions | kubernetes s "
       "| states kubernetes / kivi |",
       "|---|---|---|--:|--:|--:|---|--:|--:|--:|--:|"]
for i in range(0, len(rows), 2):
    k, s = rows[i], rows[i + 1]
    model = k["input"].rsplit("/", 1)[-1].removesuffix(".json")
    out.append("| " + " | ".join([model, k["variant"]] + cells(k) + cells(s) + [ratio(k, s)]) + " |")
print("\n".join(out))
PY
)
growth_any_table=$(python3 - "$csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["group"] == "growth-any"]
def cell(r):
    if r["verdict"] == "none":
        return "killed (exit %s)" % r["exit"]
    states = "{:,}".format(int(r["states"])) if r["states"] else "?"
    return "%s; %s states; %s s" % (r["verdict"].replace("_", " "), states, r["wall_s"])
def reduced(sym, plain):
    """States without symmetry over states with it; a lower bound ("> r") when only the check
    without it was cut short."""
    if not (sym["states"] and plain["states"]) or sym["verdict"] in ("none", "incomplete"):
        return "?"
    value = "{:,.1f}".format(int(plain["states"]) / int(sym["states"]))
    return "> " + value if plain["verdict"] == "incomplete" else value
by = {(r["variant"], r["semantics"]): r for r in rows}
topologies = list(dict.fromkeys(r["variant"].split()[0] for r in rows))
out = ["| topology | kivi, symmetry | kivi, no symmetry | kubernetes, symmetry "
       "| kubernetes, no symmetry | kubernetes states: no symmetry / symmetry |",
       "|---|---|---|---|---|--:|"]
for t in topologies:
    cells = [by[(t + " " + v, s)] for s in ("kivi", "kubernetes") for v in ("symmetry", "no-symmetry")]
    out.append("| " + " | ".join([t] + [cell(c) for c in cells] + [reduced(cells[2], cells[3])]) + " |")
print("\n".join(out))
PY
)
python3 - "$md" "$tables" "$growth_table" "$growth_any_table" <<'PY'
import sys
path, table, growth, growth_any = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
text = open(path).read()
def between(text, start, end, body):
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + start + "\n" + body + "\n" + end + tail
text = between(text, "<!-- table: scripts/semantics-table.sh -->", "<!-- end of table -->", table)
text = between(text, "<!-- growth table: scripts/semantics-table.sh -->",
               "<!-- end of growth table -->", growth)
text = between(text, "<!-- growth-any table: scripts/semantics-table.sh -->",
               "<!-- end of growth-any table -->", growth_any)
open(path, "w").write(text)
PY
