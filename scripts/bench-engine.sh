#!/usr/bin/env bash
# Engine scaling benchmark: the counters model (N counters 0..=K, (K+1)^N states) explored by
#   kivi          kivi's lock-free fingerprint table (`kivi bench engine`)
#   kivi-dashmap  kivi with a DashMap visited set (`--dashmap`), to justify the lock-free table
#   stateright    Stateright 0.31 (benches/peers/stateright-counters), its DFS checker
#   spin          SPIN's pan on the same model in Promela, -DHC4, -DNCORE=T for T > 1
# at each thread count, REPS times each, keeping the median run. Writes
#   ${OUT_PREFIX}.csv  tool, threads, states, time, throughput, bytes/state, speedup, efficiency
#   ${OUT_PREFIX}.md   the table, the machine, the commit and the ratios the targets ask for
#   ${OUT_PREFIX}.svg  throughput against threads, one line per tool (`kivi bench plot`)
#
# Needs the Rust toolchain, a C compiler and SPIN (installed with apt-get when missing).
# Environment (defaults in brackets):
#   THREADS ["1 2 4 8 16"]  VARS [7]  MAX [12] (62,748,517 states)  REPS [1] (each run of the
#   default size takes seconds to minutes: one pass over all tools and thread counts takes about
#   15-20 minutes on 16 cores if the peers scale, more if they do not; REPS multiplies that)
#   STRATEGY [dfs] (kivi's)  TOOLS ["kivi kivi-dashmap stateright spin"]
#   EXPECT_STATES [0]: kivi's --expect-states; 0 grows the visited set from one page, as the
#   peers grow theirs (give the state count to measure the search alone)
#   OUT_PREFIX [results/engine-scaling]  LABEL [] (a line put at the top of the .md)
#   CARGO_TARGET_DIR [target]  PEER_TARGET_DIR [$CARGO_TARGET_DIR/stateright-counters]
#   KIVI, STATERIGHT [built here]: prebuilt binaries, for a machine without the Rust toolchain
set -euo pipefail
# Decimal points in times, awk and sort whatever the locale.
export LC_ALL=C

cd "$(dirname "$0")/.."
ROOT=$(pwd)

THREADS=${THREADS:-"1 2 4 8 16"}
VARS=${VARS:-7}
MAX=${MAX:-12}
EXPECT_STATES=${EXPECT_STATES:-0}
REPS=${REPS:-1}
STRATEGY=${STRATEGY:-dfs}
TOOLS=${TOOLS:-"kivi kivi-dashmap stateright spin"}
OUT_PREFIX=${OUT_PREFIX:-results/engine-scaling}
LABEL=${LABEL:-}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
PEER_TARGET_DIR=${PEER_TARGET_DIR:-$TARGET_DIR/stateright-counters}
CC=${CC:-cc}

die() {
    echo "bench-engine: error: $*" >&2
    exit 1
}
note() { echo "bench-engine: $*" >&2; }

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
is_uint "$VARS" && ((VARS >= 1 && VARS <= 16)) || die "VARS=$VARS: use 1 to 16"
is_uint "$MAX" && ((MAX >= 1 && MAX <= 254)) || die "MAX=$MAX: use 1 to 254"
is_uint "$EXPECT_STATES" || die "EXPECT_STATES=$EXPECT_STATES: give a number of states (0: grow from one page)"
is_uint "$REPS" && ((REPS >= 1)) || die "REPS=$REPS: use a positive integer"
for t in $THREADS; do
    is_uint "$t" && ((t >= 1)) || die "THREADS='$THREADS': give positive integers"
done
for tool in $TOOLS; do
    case $tool in
        kivi | kivi-dashmap | stateright | spin) ;;
        *) die "TOOLS: unknown tool '$tool' (use kivi, kivi-dashmap, stateright, spin)" ;;
    esac
done
EXPECTED=$(awk -v k="$MAX" -v n="$VARS" 'BEGIN { printf "%.0f", (k + 1) ^ n }')
awk -v e="$EXPECTED" 'BEGIN { exit !(e < 2^53) }' || die "(MAX+1)^VARS is too large"
uses() { [[ " $TOOLS " == *" $1 "* ]]; }

# --- Build -----------------------------------------------------------------------------------
# KIVI and STATERIGHT name prebuilt binaries (a machine without the Rust toolchain).
if [[ -n ${KIVI:-} ]]; then
    [[ -x $KIVI ]] || die "KIVI=$KIVI is not an executable"
else
    note "building kivi (release)"
    cargo build --release --quiet --target-dir "$TARGET_DIR" --bin kivi
    KIVI=$TARGET_DIR/release/kivi
fi
if uses stateright; then
    if [[ -n ${STATERIGHT:-} ]]; then
        [[ -x $STATERIGHT ]] || die "STATERIGHT=$STATERIGHT is not an executable"
    else
        note "building the Stateright peer (release)"
        cargo build --release --quiet --locked \
            --manifest-path benches/peers/stateright-counters/Cargo.toml \
            --target-dir "$PEER_TARGET_DIR"
        STATERIGHT=$PEER_TARGET_DIR/release/stateright-counters
    fi
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-engine.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# SPIN: the same model in Promela. One process; each `do` option increments one counter
# atomically while it is below K. The all-at-K state has no successor: pan -E does not report it
# as an invalid end state. pan stores exactly (K+1)^N states.
if uses spin; then
    if ! command -v spin >/dev/null; then
        note "installing SPIN with apt-get"
        if [[ $(id -u) == 0 ]]; then
            apt-get update -qq && apt-get install -y -qq spin >/dev/null
        elif command -v sudo >/dev/null; then
            sudo apt-get update -qq && sudo apt-get install -y -qq spin >/dev/null
        else
            die "SPIN is missing and apt-get needs root: install the 'spin' package"
        fi
    fi
    command -v "$CC" >/dev/null || die "no C compiler '$CC' (set CC) to build SPIN's pan"
    promela() { # K: the model with counters 0..=K
        echo "byte c[$VARS];"
        echo "active proctype counters() {"
        echo "  do"
        for ((i = 0; i < VARS; i++)); do
            echo "  :: atomic { c[$i] < $1 -> c[$i]++ }"
        done
        echo "  od"
        echo "}"
    }
    promela "$MAX" >"$WORK/counters.pml"
    (cd "$WORK" && spin -a counters.pml >/dev/null) || die "spin -a failed on the generated model"
    # SPIN 6.5's pan hashes with the 32-bit SuperFastHash when the table has at most 2^32 slots,
    # and then sets only the first word of the hash-compaction key: -DHC4 keeps 32 bits of a weak
    # hash and merges most states of this model (144,340 of 1,000,000 at N=6, K=9). Select the
    # 64-bit Jenkins hash that pan uses for larger tables, which fills the whole key.
    if grep -q 'if (ssize <= 32)	/\* 6.2.0 \*/' "$WORK/pan.c"; then
        sed -i 's|if (ssize <= 32)\t/\* 6.2.0 \*/|if (0)\t/* bench-engine: 64-bit hash */|' "$WORK/pan.c"
    else
        note "warning: pan.c has no 32-bit hash selection to patch; HC4 may merge states"
    fi
    # Multi-core pan copies states in frames of VMAX bytes: fit them to this model's state
    # vector, read from a single-core run of the same model with counters 0..1.
    mkdir "$WORK/probe"
    promela 1 >"$WORK/probe/counters.pml"
    (cd "$WORK/probe" && spin -a counters.pml >/dev/null && $CC -O2 -DSAFETY -o pan pan.c &&
        ./pan -E >pan.out 2>&1) || die "the SPIN probe run failed"
    VECTOR=$(sed -n 's/^State-vector \([0-9]*\) byte.*/\1/p' "$WORK/probe/pan.out")
    is_uint "$VECTOR" || die "cannot read the state-vector size from pan's output"
    SPIN_VMAX="-DVMAX=$(((VECTOR + 7) / 8 * 8))"
    # Hash table slots: the next power of two above the state count (-w).
    SPIN_W=$(awk -v e="$EXPECTED" 'BEGIN { w = 10; while (2 ^ w < e) w++; print (w > 32 ? 32 : w) }')
    # pan's memory limit (MB; multi-core pan reserves it as shared memory): twice what the
    # states (stored vector plus 20 bytes of node), the hash table and the work queues need,
    # at least pan's default of 2048 and at most half the machine's memory.
    SPIN_MEMLIM=$(awk -v e="$EXPECTED" -v v="$VECTOR" -v w="$SPIN_W" '
        /^MemTotal:/ { half = $2 / 2048 }
        END { need = 2 * (e * (v + 20) + 8 * 2 ^ w) / 1048576 + 1024
              if (need < 2048) need = 2048; if (need > half) need = half; printf "%d", need }' \
        /proc/meminfo)
    SPIN_FLAGS="-O2 -DSAFETY -DHC4 -DNOREDUCE -DMEMLIM=$SPIN_MEMLIM"
fi

# --- Runs ------------------------------------------------------------------------------------
# Each run prints one line: states_stored elapsed_s cpu_s [bytes_per_state]. elapsed_s is the
# tool's own search time; cpu_s is the user+system time of its whole process (with setup), which
# a loaded machine disturbs less than wall-clock time.

json_number() { # FILE FIELD: a top-level number field of a one-line JSON object
    grep -o "\"$2\":[-0-9.eE+]*" "$1" | head -n 1 | cut -d: -f2
}

timed() { # OUTPUT-FILE COMMAND...: runs COMMAND, output to the file; prints its CPU seconds
    local output=$1 TIMEFORMAT='%U %S'
    shift
    { time "$@" >"$output" 2>&1; } 2>"$WORK/time.txt" || return 1
    awk 'NF == 2 { cpu = $1 + $2 } END { printf "%.3f", cpu }' "$WORK/time.txt"
}

run_kivi() { # THREADS [--dashmap]
    local out=$WORK/kivi.json cpu
    cpu=$(timed "$out" "$KIVI" bench engine --model counters --vars "$VARS" --max "$MAX" \
        --threads "$1" --strategy "$STRATEGY" --expect-states "$EXPECT_STATES" --format json \
        ${2:+"$2"}) ||
        die "kivi failed at $1 threads: $(cat "$out")"
    echo "$(json_number "$out" states_stored) $(json_number "$out" elapsed_s) $cpu" \
        "$(json_number "$out" bytes_per_state)"
}

run_stateright() { # THREADS
    local out=$WORK/stateright.json cpu
    cpu=$(timed "$out" "$STATERIGHT" --vars "$VARS" --max "$MAX" --threads "$1" --strategy dfs) ||
        die "Stateright failed at $1 threads: $(cat "$out")"
    echo "$(json_number "$out" states_stored) $(json_number "$out" elapsed_s) $cpu"
}

build_pan() { # THREADS: compiles $WORK/pan-THREADS
    local flags=$SPIN_FLAGS
    if (($1 > 1)); then
        flags="$flags -DNCORE=$1 $SPIN_VMAX"
    fi
    # shellcheck disable=SC2086 # the flags are words
    (cd "$WORK" && $CC $flags -o "pan-$1" pan.c >"pan-$1.cc.log" 2>&1) ||
        die "compiling pan with '$flags' failed: $(cat "$WORK/pan-$1.cc.log")"
}

run_spin() { # THREADS
    local out=$WORK/pan.out cpu stored elapsed memory
    cpu=$(cd "$WORK" && timed "$out" "./pan-$1" -E "-w$SPIN_W") ||
        die "pan failed at $1 threads: $(cat "$out")"
    stored=$(awk '/states, stored/ { print $1; exit }' "$out")
    elapsed=$(sed -n 's/.*elapsed time \([0-9.e+]*\) seconds.*/\1/p' "$out" | tail -n 1)
    memory=$(awk '/total actual memory usage/ { print $1; exit }' "$out")
    [[ -n $stored && -n $elapsed ]] || die "cannot read pan's output at $1 threads: $(cat "$out")"
    echo "$stored $elapsed $cpu $(awk -v m="$memory" -v s="$stored" \
        'BEGIN { if (m != "" && s > 0) printf "%.1f", m * 1048576 / s }')"
}

measure() { # TOOL THREADS: REPS runs, prints the median run (by elapsed time)
    local runs=() rep line
    for ((rep = 1; rep <= REPS; rep++)); do
        case $1 in
            kivi) line=$(run_kivi "$2") ;;
            kivi-dashmap) line=$(run_kivi "$2" --dashmap) ;;
            stateright) line=$(run_stateright "$2") ;;
            spin) line=$(run_spin "$2") ;;
        esac
        runs+=("$line")
    done
    printf '%s\n' "${runs[@]}" | sort -g -k2,2 | sed -n "$(((REPS + 1) / 2))p"
}

RAW=$WORK/raw.txt
: >"$RAW"
for t in $THREADS; do
    for tool in $TOOLS; do
        if [[ $tool == spin ]]; then build_pan "$t"; fi
        note "$tool, $t thread(s), $REPS run(s)"
        read -r stored elapsed cpu bytes < <(measure "$tool" "$t")
        [[ -n ${stored:-} && -n ${elapsed:-} && -n ${cpu:-} ]] ||
            die "$tool at $t threads gave no figures"
        if [[ $stored != "$EXPECTED" ]]; then
            note "warning: $tool at $t threads stored $stored states, not (K+1)^N = $EXPECTED"
        fi
        echo "$tool $t $stored $elapsed $cpu ${bytes:-}" >>"$RAW"
        note "  $stored states in ${elapsed}s (${cpu}s of CPU)"
    done
done

# --- Results ---------------------------------------------------------------------------------
mkdir -p "$(dirname "$OUT_PREFIX")"
CSV=$OUT_PREFIX.csv
MD=$OUT_PREFIX.md
SVG=$OUT_PREFIX.svg
awk '
    BEGIN { print "tool,threads,states_stored,elapsed_s,states_per_s,bytes_per_state,speedup,efficiency,cpu_s" }
    { tool[NR] = $1; t[NR] = $2; s[NR] = $3; e[NR] = $4; cpu[NR] = $5
      b[NR] = ($6 == "") ? "" : sprintf("%.1f", $6)
      # A run too short for the tool to time gets no throughput.
      rate[NR] = ($4 > 0) ? $3 / $4 : ""
      if ($2 == 1 && $4 > 0) base[$1] = $3 / $4 }
    END {
        for (i = 1; i <= NR; i++) {
            known = (tool[i] in base) && rate[i] != ""
            speedup = known ? sprintf("%.2f", rate[i] / base[tool[i]]) : ""
            efficiency = known ? sprintf("%.2f", rate[i] / base[tool[i]] / t[i]) : ""
            throughput = (rate[i] == "") ? "" : sprintf("%.0f", rate[i])
            printf "%s,%d,%d,%.3f,%s,%s,%s,%s,%.3f\n", tool[i], t[i], s[i], e[i], throughput, b[i], speedup, efficiency, cpu[i]
        }
    }' "$RAW" >"$CSV"

"$KIVI" bench plot --csv "$CSV" --x threads --y states_per_s --series tool --out "$SVG" \
    --title "Counters model, $VARS counters 0..$MAX ($EXPECTED states): states/s by threads"

COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    COMMIT="$COMMIT (with uncommitted changes)"
fi
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
CORES=$(nproc)
MEM_GIB=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
TMAX=$(tr ' ' '\n' <<<"$THREADS" | sort -n | tail -n 1)

rate_of() { # TOOL THREADS
    awk -F, -v tool="$1" -v t="$2" '$1 == tool && $2 == t { print $5 }' "$CSV"
}
cpu_of() { # TOOL THREADS: CPU seconds
    awk -F, -v tool="$1" -v t="$2" '$1 == tool && $2 == t { print $9 }' "$CSV"
}
ratio() { # A B: A/B with two decimals, or "n/a"
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'
}
verdict() { # VALUE OP TARGET
    awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
        if (v == "n/a" || v == "") { print "not measured"; exit }
        ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0)
        print (ok ? "met" : "NOT met") }'
}
K1=$(rate_of kivi 1)
KMAX=$(rate_of kivi "$TMAX")
SPEEDUP=$(ratio "$KMAX" "$K1")
SR1=$(ratio "$K1" "$(rate_of stateright 1)")
SRMAX=$(ratio "$KMAX" "$(rate_of stateright "$TMAX")")
SPIN1=$(ratio "$K1" "$(rate_of spin 1)")
DASH=$(ratio "$KMAX" "$(rate_of kivi-dashmap "$TMAX")")
BYTES=$(awk -F, '$1 == "kivi" && $6 != "" { b = $6 } END { print (b == "" ? "n/a" : b) }' "$CSV")

{
    echo "# Engine scaling: counters model"
    echo
    [[ -n $LABEL ]] && echo "$LABEL" && echo
    echo "Written by \`scripts/bench-engine.sh\`."
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| model | counters: $VARS counters 0..$MAX, (K+1)^N = $EXPECTED states |"
    echo "| threads | $THREADS |"
    echo "| repetitions | $REPS per point, median by elapsed time |"
    echo "| machine | $CPU; $CORES cores (nproc); $MEM_GIB GiB memory |"
    echo "| load average when done | $LOAD |"
    echo "| commit | $COMMIT |"
    echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
    echo "| kivi | \`kivi bench engine --model counters --strategy $STRATEGY\` (fingerprint table; \`--dashmap\` for kivi-dashmap) |"
    if uses stateright; then
        echo "| Stateright | 0.31, \`spawn_dfs\`, same model and state type (benches/peers/stateright-counters) |"
    fi
    if uses spin; then
        echo "| SPIN | $(spin -V 2>/dev/null | head -n 1); pan built with \`$CC $SPIN_FLAGS\`, plus \`-DNCORE=T ${SPIN_VMAX}\` for T > 1; run as \`pan -E -w$SPIN_W\`; 64-bit hash selected (see the script) |"
    fi
    echo
    echo "## Results"
    echo
    echo "| tool | threads | states stored | elapsed (s) | states/s | bytes/state | speedup | efficiency | CPU (s) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
    echo
    echo "elapsed: each tool's own search time (states/s = states stored / elapsed). CPU: user +"
    echo "system time of the tool's whole process, setup included. bytes/state: kivi's visited set;"
    echo "SPIN's total memory (hash table, stored states, stack) over the stored states; Stateright"
    echo "does not say."
    echo
    echo "## Targets"
    echo
    echo "| target | measured | |"
    echo "|---|---:|---|"
    if ((TMAX > 1)); then
        echo "| kivi ${TMAX}T / 1T throughput >= 12 (at 16 threads) | $SPEEDUP | $(if ((TMAX >= 16)); then verdict "$SPEEDUP" ">=" 12; else echo "needs 16 threads"; fi) |"
        echo "| kivi / Stateright at ${TMAX}T >= 3 (at 16 threads) | $SRMAX | $(if ((TMAX >= 16)); then verdict "$SRMAX" ">=" 3; else echo "needs 16 threads"; fi) |"
    fi
    echo "| kivi / Stateright at 1T >= 1.5 | $SR1 | $(verdict "$SR1" ">=" 1.5) |"
    echo "| kivi / SPIN pan at 1T >= 1 | $SPIN1 | $(verdict "$SPIN1" ">=" 1) |"
    echo "| kivi bytes per stored state <= 16 | $BYTES | $(verdict "$BYTES" "<=" 16) |"
    echo "| (no target) kivi / kivi-dashmap at ${TMAX}T | $DASH | |"
    echo "| (no target) kivi / Stateright, CPU time, 1T | $(ratio "$(cpu_of stateright 1)" "$(cpu_of kivi 1)") | |"
    echo "| (no target) kivi / SPIN pan, CPU time, 1T | $(ratio "$(cpu_of spin 1)" "$(cpu_of kivi 1)") | |"
    echo
    echo "Plot: \`$(basename "$SVG")\`."
} >"$MD"

note "wrote $CSV, $MD and $SVG"
cat "$MD"
