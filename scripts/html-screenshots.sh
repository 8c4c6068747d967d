#!/usr/bin/env bash
# The HTML report (--html) of C3 and C5, rendered in a real headless browser (Debian's
# chromium) and saved as the screenshots the README shows: docs/c3-timeline.{html,png} and
# docs/c5-timeline.{html,png}.
#
# Usage: scripts/html-screenshots.sh [OUT_DIR]   (KIVI=path/to/kivi to use a built binary;
# CHROMIUM=path to use another browser). Needs chromium: apt-get install chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs}"
kivi="${KIVI:-target/release/kivi}"
chromium="${CHROMIUM:-chromium}"
[ -x "$kivi" ] || cargo build --release
command -v "$chromium" >/dev/null || { echo "no $chromium: apt-get install chromium" >&2; exit 2; }
mkdir -p "$out"
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
# case, window width, window height: wide enough for every column of the timeline.
for shot in "c3 1000 700" "c5 1400 760"; do
    set -- $shot
    page="$out/$1-timeline.html"
    # Exit code 1: the case's intent is violated, as expected.
    "$kivi" check --case "$1" --original --quiet --html "$page" >/dev/null || [ $? -eq 1 ]
    # The flags keep chromium off the network (this machine has none) and out of the way.
    "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size="$2,$3" \
        --screenshot="$out/$1-timeline.png" "file://$(realpath "$page")" 2>/dev/null
    echo "$out/$1-timeline.png"
done
