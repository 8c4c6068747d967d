#!/usr/bin/env bash
# Clusters of real size: C3 at 1,000 and 5,000 nodes and the node-failure topology on one
# thread (bench-configs/real-sizes.json), written to results/real-sizes.{csv,md}. With
# BASE=path/to/an/older/kivi, the node-failure topology is also run by that binary and by this
# one, alternately, REPS times each [3], and the side-by-side times and peak memory are added
# to results/real-sizes.md (the speed-up is the ratio of the medians).
#
# KIVI=path/to/kivi uses a prebuilt binary; otherwise the release binary is built first.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
if [ -z "${KIVI:-}" ]; then
    cargo build --release --quiet
    KIVI=target/release/kivi
fi
"$KIVI" bench bench-configs/real-sizes.json "$@"
[ -n "${BASE:-}" ] || exit 0
[ -x "$BASE" ] || { echo "real-sizes: BASE=$BASE is not an executable" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "real-sizes: needs /usr/bin/time (GNU time)" >&2; exit 2; }
REPS=${REPS:-3}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for ((i = 1; i <= REPS; i++)); do
    for which in base current; do
        bin=$KIVI
        [ $which = base ] && bin=$BASE
        /usr/bin/time -f "$which %e %M" -a -o "$rows" "$bin" check \
            bench-configs/models/c3-four-node-failures.json --topology 4,4:24 --threads 1 >/dev/null
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base_s=$(awk '$1 == "base" { print $2 }' "$rows" | median)
current_s=$(awk '$1 == "current" { print $2 }' "$rows" | median)
base_kb=$(awk '$1 == "base" { print $3 }' "$rows" | median)
current_kb=$(awk '$1 == "current" { print $3 }' "$rows" | median)
{
    echo
    echo "## Side by side: the node-failure topology on one thread"
    echo
    echo "Both binaries alternately, $REPS runs each, medians (\`/usr/bin/time\`, whole process)."
    echo
    echo "| binary | wall (s) | peak memory (MB) |"
    echo "|---|---|---|"
    echo "| \`$BASE\` ($("$BASE" --version)) | $base_s | $(awk -v k="$base_kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') |"
    echo "| \`$KIVI\` ($("$KIVI" --version)) | $current_s | $(awk -v k="$current_kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') |"
    echo
    awk -v b="$base_s" -v c="$current_s" -v bk="$base_kb" -v ck="$current_kb" \
        'BEGIN { printf "Speed-up: %.2f×; peak memory: %.2f× the older binary'"'"'s.\n", b / c, ck / bk }'
    echo
    echo "All runs (binary, wall s, peak KiB):"
    echo
    sed 's/^/    /' "$rows"
} >>results/real-sizes.md
