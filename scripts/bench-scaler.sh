#!/usr/bin/env bash
# Scaling-mode benchmark: the eight cases' sweeps to their minimal violating topology, the
# non-violation full sweeps, and a thread sweep of a large full sweep.
#
# Writes results/${OUT_PREFIX}scaler.csv and results/${OUT_PREFIX}scaler.md with the machine
# facts and the commit. Environment:
#   THREADS      thread counts for the thread sweep   (default "1 2 4 8 16")
#   CASES        cases to run                          (default "c1 c2 c3 c4 c5 c6 c7 c8")
#   REPS         repetitions, the median is reported   (default 3)
#   BIG_NODES    confident nodes per type of the thread sweep's full sweep (default 12)
#   OUT_PREFIX   prefix of the result files            (default "")
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-"1 2 4 8 16"}
CASES=${CASES:-"c1 c2 c3 c4 c5 c6 c7 c8"}
REPS=${REPS:-3}
BIG_NODES=${BIG_NODES:-12}
OUT_PREFIX=${OUT_PREFIX:-}
KIVI=${KIVI:-target/release/kivi}
ALL_CORES=$(nproc)

if [ "$KIVI" = target/release/kivi ]; then
  cargo build --release --quiet
fi
command -v python3 >/dev/null || { echo "bench-scaler.sh needs python3 to read kivi's JSON" >&2; exit 2; }

csv="results/${OUT_PREFIX}scaler.csv"
raw=$(mktemp)
report=$(mktemp)
trap 'rm -f "$raw" "$report"' EXIT

# run LABEL CASE THREADS ARGS...: REPS runs of kivi check, one JSON line each into $raw.
run() {
  local label=$1 case=$2 threads=$3
  shift 3
  for _ in $(seq "$REPS"); do
    local start end
    start=$(date +%s.%N)
    "$KIVI" check --case "$case" --format json --quiet --threads "$threads" "$@" >"$report" || true
    end=$(date +%s.%N)
    python3 - "$label" "$case" "$threads" "$start" "$end" "$report" >>"$raw" <<'PY'
import json, sys
label, case, threads, start, end, path = sys.argv[1:]
report = json.load(open(path))
minimal = report.get("minimal") or {}
print(json.dumps({
    "label": label, "case": case, "threads": int(threads),
    "wall_s": float(end) - float(start), "sweep_s": report["elapsed_s"],
    "verdict": report["verdict"], "candidates": report["candidates"],
    "decided": report["topologiesDecided"], "checks": report["checksFinished"],
    "minimal": minimal.get("kivi", ""),
    "states": sum(row["states"] for row in report["rows"]),
    "p50_ms": (report.get("checkTimes") or {}).get("p50_ms"),
    "p99_ms": (report.get("checkTimes") or {}).get("p99_ms"),
    "max_ms": (report.get("checkTimes") or {}).get("max_ms"),
}))
PY
  done
}

for case in $CASES; do
  run violation "$case" "$ALL_CORES"
  run non-violation "$case" "$ALL_CORES" --non-violation
done
for threads in $THREADS; do
  run "full-sweep-$BIG_NODES" c3 "$threads" --non-violation --scale "$BIG_NODES" --confident-nodes "$BIG_NODES"
done

python3 - "$raw" "$csv" "results/${OUT_PREFIX}scaler.md" "$REPS" <<'PY'
import json, os, statistics, subprocess, sys, datetime, platform
raw, csv_path, md_path, reps = sys.argv[1:]
rows = [json.loads(line) for line in open(raw)]
groups = {}
for row in rows:
    groups.setdefault((row["label"], row["case"], row["threads"]), []).append(row)
def median(values):
    return statistics.median(values) if values else None
table = []
for (label, case, threads), runs in groups.items():
    first = runs[0]
    table.append({
        "label": label, "case": case, "threads": threads,
        "sweep_s": median([r["sweep_s"] for r in runs]),
        "wall_s": median([r["wall_s"] for r in runs]),
        "verdict": first["verdict"], "candidates": first["candidates"],
        "decided": first["decided"], "checks": first["checks"], "minimal": first["minimal"],
        "states": first["states"], "p50_ms": first["p50_ms"], "p99_ms": first["p99_ms"],
        "max_ms": first["max_ms"],
    })
columns = ["label", "case", "threads", "verdict", "candidates", "decided", "checks", "minimal",
           "states", "sweep_s", "wall_s", "p50_ms", "p99_ms", "max_ms"]
with open(csv_path, "w") as out:
    out.write(",".join(columns) + "\n")
    for row in table:
        out.write(",".join('"%s"' % row[c] if c == "minimal" else str(row[c]) for c in columns) + "\n")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
lines = ["# Scaling-mode benchmark", "",
         f"- machine: {cpu}, {os.cpu_count()} cores, {int(mem)//1024//1024} GiB",
         f"- commit: {commit}", f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
         f"- median of {reps} runs; `sweep_s` is kivi's own sweep time, `wall_s` the whole process", ""]
viol = [r for r in table if r["label"] == "violation"]
if viol:
    total = sum(r["wall_s"] for r in viol)
    lines += [f"Eight scaling runs to the minimal violating topology: {total:.3f} s in all "
              f"(Kivi + SPIN on a 2-core machine: 297 s, i.e. {297/total:.0f}x).", ""]
lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
for row in table:
    lines.append("| " + " | ".join(str(row[c]) for c in columns) + " |")
big = sorted((r for r in table if r["label"].startswith("full-sweep")), key=lambda r: r["threads"])
if big:
    base = big[0]["sweep_s"]
    lines += ["", "Thread sweep (C3 non-violation, full sweep):", "",
              "| threads | sweep_s | speedup |", "|---|---|---|"]
    for r in big:
        lines.append(f"| {r['threads']} | {r['sweep_s']:.3f} | {base / r['sweep_s']:.2f} |")
open(md_path, "w").write("\n".join(lines) + "\n")
print(open(md_path).read())
PY
