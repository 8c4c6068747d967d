#!/usr/bin/env bash
# Verdicts, violated intents and stored states of every built-in case (single topology, both
# variants) under --semantics kivi and --semantics kubernetes, each under --tie-break lowest:
# writes results/semantics.csv and the table between the markers of results/semantics.md.
# Usage: scripts/semantics-table.sh [KIVI] [TIMEOUT_SECS]
set -euo pipefail
kivi=${1:-target/release/kivi}
limit=${2:-300}
csv=results/semantics.csv
md=results/semantics.md
echo "case,variant,semantics,exit,verdict,violated,states,wall_s" > "$csv"
one() { # case, variant, semantics
  local flags=(--case "$1" --original --threads 1 --strategy bfs --semantics "$3" --format json -q)
  [ "$2" = non-violation ] && flags+=(--non-violation)
  local out rc=0
  out=$( { /usr/bin/time -f 'wall %e' timeout "$limit" "$kivi" check "${flags[@]}"; } 2>&1 ) || rc=$?
  local json wall
  json=$(printf '%s\n' "$out" | grep '^{' || true)
  wall=$(printf '%s\n' "$out" | sed -n 's/^wall //p')
  if [ -z "$json" ]; then
    echo "$1,$2,$3,$rc,none,,,${wall:-$limit}" >> "$csv"
    return
  fi
  printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
v = " ".join(r.get("violatedIntents") or [])
print("%s,%s,%s,%s,%s,%s,%s,%s" % (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
      r["verdict"], v, r["stats"]["states_stored"], sys.argv[5]))' "$1" "$2" "$3" "$rc" "$wall" >> "$csv"
}
for c in c1 c2 c3 c4 c5 c6 c7 c8; do
  for variant in original non-violation; do
    for semantics in kivi kubernetes; do
      one "$c" "$variant" "$semantics"
    done
  done
done
table=$(python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cell = lambda r: "%s (%s); %s states" % (r["verdict"], r["violated"] or "none",
                                        "{:,}".format(int(r["states"])) if r["states"] else "?")
print("| case | variant | kivi | kubernetes | same verdict |")
print("|---|---|---|---|---|")
for i in range(0, len(rows), 2):
    k, s = rows[i], rows[i + 1]
    same = "yes" if (k["verdict"], k["violated"]) == (s["verdict"], s["violated"]) else "**no**"
    print("| %s | %s | %s | %s | %s |" % (k["case"], k["variant"], cell(k), cell(s), same))
PY
)
python3 - "$md" "$table" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
start, end = "<!-- table: scripts/semantics-table.sh -->", "<!-- end of table -->"
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + start + "\n" + table + "\n" + end + tail)
PY
