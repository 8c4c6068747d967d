#!/usr/bin/env bash
# Breadth-first search, this binary against an older one, side by side: the node-failure
# topology (bench-configs/models/c3-four-node-failures.json --topology 4,4:24, 15.3 M states)
# with --strategy bfs on 1, 2 and 16 threads, the two binaries alternately, REPS runs each [3].
# Writes results/bfs-side-by-side.md: medians of wall time, CPU time (user + system), cores
# busy (CPU / wall) and peak memory per binary and thread count, the ratios, and every run.
#
# Usage: BASE=path/to/older/kivi scripts/bfs-side-by-side.sh
# KIVI=path/to/kivi uses a prebuilt binary; otherwise the release binary is built first.
# THREADS="1 2 16" chooses the thread counts; BASE_NAME and KIVI_NAME name the binaries in the
# results (e.g. their commits; default: their --version).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
[ -n "${BASE:-}" ] && [ -x "$BASE" ] || { echo "bfs-side-by-side: set BASE to an older kivi binary" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "bfs-side-by-side: needs /usr/bin/time (GNU time)" >&2; exit 2; }
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
REPS=${REPS:-3}
THREADS=${THREADS:-1 2 16}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for t in $THREADS; do
    for ((i = 1; i <= REPS; i++)); do
        for which in base current; do
            bin=$KIVI
            [ $which = base ] && bin=$BASE
            /usr/bin/time -f "$which $t %e %U %S %M" -a -o "$rows" "$bin" check -q \
                bench-configs/models/c3-four-node-failures.json --topology 4,4:24 \
                --strategy bfs --threads "$t" >/dev/null
        done
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# column: 3 wall, 4+5 CPU, 6 peak KiB; cores busy is taken per run, then its median.
stat() { awk -v w="$1" -v t="$2" -v c="$3" '$1 == w && $2 == t {
    if (c == "cpu") print $4 + $5; else if (c == "busy") print ($4 + $5) / $3; else print $c }' "$rows" | median; }
out=results/bfs-side-by-side.md
{
    echo "# Breadth-first search, side by side"
    echo
    echo "The node-failure topology (\`bench-configs/models/c3-four-node-failures.json --topology 4,4:24\`,"
    echo "15,266,507 states) with \`--strategy bfs\`, both binaries alternately, $REPS runs each,"
    echo "medians (\`/usr/bin/time\`, whole process). \`scripts/bfs-side-by-side.sh\`, $(date -u '+%Y-%m-%d %H:%M UTC'),"
    echo "$(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo))."
    echo
    echo "- base: \`$BASE\` (${BASE_NAME:-$("$BASE" --version)})"
    echo "- current: \`$KIVI\` (${KIVI_NAME:-$("$KIVI" --version)})"
    echo
    echo "| threads | binary | wall (s) | CPU (s) | cores busy | peak memory (MB) |"
    echo "|---|---|---|---|---|---|"
    for t in $THREADS; do
        for which in base current; do
            printf '| %s | %s | %s | %.2f | %.2f | %.0f |\n' "$t" "$which" "$(stat $which "$t" 3)" \
                "$(stat $which "$t" cpu)" "$(stat $which "$t" busy)" "$(awk -v k="$(stat $which "$t" 6)" 'BEGIN { print k * 1024 / 1e6 }')"
        done
    done
    echo
    echo "| threads | wall: base / current | peak memory: current / base |"
    echo "|---|---|---|"
    for t in $THREADS; do
        awk -v t="$t" -v b="$(stat base "$t" 3)" -v c="$(stat current "$t" 3)" \
            -v bk="$(stat base "$t" 6)" -v ck="$(stat current "$t" 6)" \
            'BEGIN { printf "| %s | %.2f× | %.2f× |\n", t, b / c, ck / bk }'
    done
    echo
    echo "All runs (binary, threads, wall s, user s, system s, peak KiB):"
    echo
    sed 's/^/    /' "$rows"
} >"$out"
echo "bfs-side-by-side: wrote $out"
