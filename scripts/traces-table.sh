#!/usr/bin/env bash
# Counterexample lengths (#49): per case, the lines of steps `kivi check --case cN --original`
# prints for the intent Kivi reports, with the trace as found (--trace first) and shortest (the
# default), Kivi's own trace at that topology (cases/cN/expected.json, original.counterexample),
# and the check's wall time with and without shortening (median of --repetitions runs); the same
# for the eviction loops of C4 and C8 (--loop, one thread so that CNDFS's lasso is fixed; the
# lines of steps, as issue #49 counted them: 250 and 43 at 7c820a2). Safety rows also give the reported trace's steps and its point of no return
# (JSON `unavoidable_from`: the steps after which every run fails; "undecided" when the
# probe's allowance ran out).
#
# Usage: scripts/traces-table.sh [--repetitions N] [--out-dir DIR]   (KIVI=path/to/kivi)
# Results: DIR/traces.{csv,md} (default results/).
set -euo pipefail
cd "$(dirname "$0")/.."
repetitions=31
out_dir=results
while [ $# -gt 0 ]; do
  case "$1" in
    --repetitions) repetitions="$2"; shift 2 ;;
    --out-dir) out_dir="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
kivi="${KIVI:-target/release/kivi}"
[ -x "$kivi" ] || cargo build --release --quiet
mkdir -p "$out_dir"

# Median wall seconds of `kivi ARGS…` over $repetitions runs.
median_seconds() {
  for _ in $(seq "$repetitions"); do
    start=$(date +%s.%N)
    "$kivi" "$@" >/dev/null || true
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
  done | sort -g | awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] }'
}

# Lines of the counterexample of the intent Kivi reports for CASE (cases/CASE/expected.json)
# in `kivi check --case CASE --original ARGS…`.
step_lines() {
  local case="$1"
  shift
  { "$kivi" check --case "$case" --original --format json "$@" || true; } | python3 -c '
import json, sys
intent = json.load(open(sys.argv[1]))["original"]["violatedIntents"][0]
report = json.load(sys.stdin)
print(sum(len(c["kiviTrace"]) for c in report["counterexamples"] if c["intent"] == intent))
' "cases/$case/expected.json"
}

# "STEPS,POINT" of the counterexample of the intent Kivi reports for CASE: its steps and its
# point of no return.
no_return() {
  local case="$1"
  { "$kivi" check --case "$case" --original --format json || true; } | python3 -c '
import json, sys
intent = json.load(open(sys.argv[1]))["original"]["violatedIntents"][0]
report = json.load(sys.stdin)
c = next(c for c in report["counterexamples"] if c["intent"] == intent)
point = c.get("unavoidable_from")
print("%d,%s" % (len(c["steps"]), "undecided" if point is None else point))
' "cases/$case/expected.json"
}

csv="$out_dir/traces.csv"
echo "case,mode,lines_first,lines_shortest,kivi_lines,seconds_first,seconds_shortest,steps,unavoidable_from" >"$csv"
for case in c1 c2 c3 c4 c5 c6 c7 c8; do
  args=(check --case "$case" --original -q)
  first=$(step_lines "$case" --trace first)
  shortest=$(step_lines "$case")
  kivi_lines=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['original']['counterexample']))" "cases/$case/expected.json")
  echo "$case,safety,$first,$shortest,$kivi_lines,$(median_seconds "${args[@]}" --trace first),$(median_seconds "${args[@]}"),$(no_return "$case")" >>"$csv"
done
for case in c4 c8; do
  args=(check --case "$case" --original --loop --threads 1 -q)
  first=$({ "$kivi" "${args[@]}" --trace first || true; } | grep -c '^\[')
  shortest=$({ "$kivi" "${args[@]}" || true; } | grep -c '^\[')
  echo "$case,loop,$first,$shortest,,$(median_seconds "${args[@]}" --trace first),$(median_seconds "${args[@]}"),," >>"$csv"
done

{
  echo "# Counterexample lengths: as found and shortest (#49)"
  echo
  echo "\`scripts/traces-table.sh\` at $(git rev-parse --short HEAD), $(nproc) cores ($(uname -m)), load average $(cut -d' ' -f1 /proc/loadavg) at the end, median of $repetitions runs."
  echo "Safety rows count the lines of steps \`kivi check --case cN --original\` prints for the intent"
  echo "Kivi reports (C4 also violates a second one); loop rows count the lines of steps of the"
  echo "\`--loop --threads 1\` report (the stem and the cycle; issue #49 counted 250 and 43 at 7c820a2),"
  echo "without its three header lines and three lines of statistics. Kivi's column is its own counterexample at the same topology"
  echo "(\`cases/cN/expected.json\`). Times are the whole command's wall time: the safety checks take"
  echo "milliseconds, so their times are mostly process start-up and the machine's load. The default"
  echo "also marks the point of no return; its last column is the number of steps of the shortest trace"
  echo "after which every run fails (0: from the initial state; Kivi's scenarios script their events,"
  echo "so most of them fail whatever the controllers do)."
  echo
  echo "| case | mode | lines as found (--trace first) | lines shortest (default) | Kivi's lines | s as found | s shortest | shortening adds | unavoidable after (steps) |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$csv" | while IFS=, read -r case mode first shortest kivi_lines s_first s_short steps point; do
    added=$(echo "$s_first $s_short" | awk '{ if ($1 > 0) printf "%+.0f %%", 100 * ($2 - $1) / $1; else print "n/a" }')
    after="-"
    [ -n "$steps" ] && after="$point of $steps"
    echo "| $case | $mode | $first | $shortest | ${kivi_lines:--} | $s_first | $s_short | $added | $after |"
  done
} >"$out_dir/traces.md"
cat "$out_dir/traces.md"
