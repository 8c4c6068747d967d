#!/usr/bin/env bash
# This kivi binary against an older one, side by side: each row's `kivi check` run with both
# binaries alternately, REPS runs each [3]. Writes OUT: medians of wall time, CPU time (user +
# system), cores busy (CPU / wall) and peak memory per row and binary, the ratios, the states
# each binary stored (which must agree), and every run.
#
# Usage: BASE=path/to/older/kivi scripts/side-by-side.sh OUT TITLE ABOUT ROW...
#   OUT    the Markdown file to write (e.g. results/symmetry-side-by-side.md)
#   TITLE  its heading
#   ABOUT  a sentence or two on what is measured (Markdown)
#   ROW    LABEL=ARGS: a row's label (no spaces) and the arguments of `kivi check` (split at
#          spaces)
# KIVI=path/to/kivi uses a prebuilt binary; otherwise the release binary is built first.
# BASE_NAME and KIVI_NAME name the binaries in the results (e.g. their commits; default: their
# --version).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
[ -n "${BASE:-}" ] && [ -x "$BASE" ] || { echo "side-by-side: set BASE to an older kivi binary" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "side-by-side: needs /usr/bin/time (GNU time)" >&2; exit 2; }
out=$1 title=$2 about=$3
shift 3
for row in "$@"; do
    label=${row%%=*}
    [[ $row == *=* && -n $label && $label != *" "* ]] ||
        { echo "side-by-side: row '$row' is not LABEL=ARGS with a label without spaces" >&2; exit 2; }
done
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
REPS=${REPS:-3}
rows=$(mktemp)
report=$(mktemp)
trap 'rm -f "$rows" "$report"' EXIT
for row in "$@"; do
    label=${row%%=*}
    read -r -a args <<<"${row#*=}"
    for ((i = 1; i <= REPS; i++)); do
        for which in base current; do
            bin=$KIVI
            [ $which = base ] && bin=$BASE
            status=0
            /usr/bin/time -f "%e %U %S %M" -o "$report" "$bin" check -q "${args[@]}" \
                >"$report.out" || status=$?
            # 0 no violation, 1 violation, 3 incomplete: each a measured run; 2 is a usage error.
            [ $status -ne 2 ] || { cat "$report.out" >&2; rm -f "$report.out"; exit 2; }
            states=$(sed -n 's/.*States: \([0-9]*\) stored.*/\1/p' "$report.out")
            rm -f "$report.out"
            echo "$which $label $(tail -n 1 "$report") ${states:-?} $status" >>"$rows"
        done
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# column: 3 wall, 4+5 CPU, 6 peak KiB, 7 states; cores busy is taken per run, then its median.
stat() { awk -v w="$1" -v l="$2" -v c="$3" '$1 == w && $2 == l {
    if (c == "cpu") print $4 + $5; else if (c == "busy") print ($3 > 0 ? ($4 + $5) / $3 : 0); else print $c }' "$rows" | median; }
states() { awk -v w="$1" -v l="$2" '$1 == w && $2 == l { print $7 }' "$rows" | sort -u | paste -sd/; }
{
    echo "# $title"
    echo
    echo "$about"
    echo
    echo "Both binaries alternately, $REPS runs each, medians (\`/usr/bin/time\`, whole process)."
    echo "\`scripts/side-by-side.sh\`, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores"
    echo "($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo))."
    echo
    echo "- base: \`$BASE\` (${BASE_NAME:-$("$BASE" --version)})"
    echo "- current: \`$KIVI\` (${KIVI_NAME:-$("$KIVI" --version)})"
    echo
    echo "| run | binary | states | wall (s) | CPU (s) | cores busy | peak memory (MB) |"
    echo "|---|---|---|---|---|---|---|"
    for row in "$@"; do
        label=${row%%=*}
        for which in base current; do
            printf '| %s | %s | %s | %s | %.2f | %.2f | %.0f |\n' "$label" "$which" \
                "$(states $which "$label")" "$(stat $which "$label" 3)" "$(stat $which "$label" cpu)" \
                "$(stat $which "$label" busy)" "$(awk -v k="$(stat $which "$label" 6)" 'BEGIN { print k * 1024 / 1e6 }')"
        done
    done
    echo
    echo "| run | wall: base / current | CPU: base / current | peak memory: current / base |"
    echo "|---|---|---|---|"
    for row in "$@"; do
        label=${row%%=*}
        awk -v l="$label" -v b="$(stat base "$label" 3)" -v c="$(stat current "$label" 3)" \
            -v bc="$(stat base "$label" cpu)" -v cc="$(stat current "$label" cpu)" \
            -v bk="$(stat base "$label" 6)" -v ck="$(stat current "$label" 6)" \
            'function ratio(x, y) { return y > 0 ? sprintf("%.2f×", x / y) : "–" }
             BEGIN { printf "| %s | %s | %s | %s |\n", l, ratio(b, c), ratio(bc, cc), ratio(ck, bk) }'
    done
    echo
    echo "Runs (\`kivi check -q\` and these arguments):"
    echo
    for row in "$@"; do
        echo "- $row" | sed 's/=/: `/; s/$/`/'
    done
    echo
    echo "All runs (binary, run, wall s, user s, system s, peak KiB, states, exit code):"
    echo
    sed 's/^/    /' "$rows"
} >"$out"
echo "side-by-side: wrote $out"
