#!/usr/bin/env bash
# Relay benchmark (issue 4, "Measure"): one Prosody on 127.0.0.1 per mod_mam setting
# (off, then on), and against it, in this order:
#   direct         sender → receiver
#   bridge         sender → xmpp-bridge (account `relay`, durable SQLite queue) → receiver
#   bot            sender → relay_bot.py (minimal slixmpp relay, same account) → receiver
#   bridge-memory  the bridge again with state = ":memory:" (no durable queue on disk)
#   bridge-ping    the bridge with stream_management = false: deliveries confirmed by a
#                  ping round trip instead of XEP-0198 acknowledgements
#   bridge-noarchive  the bridge with archive = false on its channel: what the local
#                  archive (issue 25; on in every other bridge path) costs
#   bridge-postgres  the bridge with its state in PostgreSQL (issue 26; a throwaway server,
#                  postgres.sh) instead of SQLite: run it beside `bridge`, e.g.
#                  RELAY_BENCH_ONLY="bridge bridge-postgres bridge bridge-postgres"
#   direct+sm      the direct path with a receiver that enables stream management: what the
#                  server's resend queue costs per message (issue 43)
#   direct+LETTERS the direct path, each message carrying elements a relayed copy may carry
#                  (R relay marker, O origin-id, Q receipt request, M markable, S store
#                  hint; e.g. direct+RO): what each costs the server (issue 43)
#   archive-pair   two bridges at the same time, archive on (accounts sender, relay,
#                  receiver) and off (sender2, relay2, receiver2), each loaded by its own
#                  load.py at once: a slow spell of the machine falls on both sides of the
#                  ratio (labels pair-archive and pair-noarchive)
# Each path gets throughput runs (N messages as fast as the sender can hand them over;
# 3 by default, the report takes the median) and a latency run (N messages paced at
# R msg/s). Relay CPU comes from the relay process's own /proc/PID/stat (utime + stime)
# over the measured part of each run.
#
# usage: Benchmarks/relay/run.sh [N] [R]      (defaults: N=2000, R=100)
# environment:
#   RELAY_BENCH_BIN    use this xmpp-bridge binary instead of building .build/release/xmpp-bridge
#   RELAY_BENCH_VENV   Python venv with slixmpp (default .build/relay-bench-venv; made if missing)
#   RELAY_BENCH_KEEP=1 keep the temporary folder (logs, configs, results.jsonl)
#   RELAY_BENCH_PERF=F record the bridge (durable, mam off, throughput run) with
#                      `perf record -g` and write `perf report` to F
#   RELAY_BENCH_PERF_MODE=latency  record a paced run instead of a throughput run
#   RELAY_BENCH_PERF_FREQ=4999     sampling frequency (default 999)
#   RELAY_BENCH_PERF_CALLGRAPH=dwarf  unwind with DWARF (through libsqlite3 and libc, which
#                  have no frame pointers; default fp)
#   RELAY_BENCH_ARCHIVE=false      the bridge paths without the local archive (default true);
#                  with archive-pair, both bridges without it: how far apart two equal
#                  bridges run (an A/A check of that path)
#   RELAY_BENCH_PERF_MAM=on        record with mod_mam on instead of off
#   RELAY_BENCH_PERF_EVENTS="raw_syscalls:sys_enter sched:sched_switch"  count these
#                      events (perf record -e) instead of sampling call graphs
#   RELAY_BENCH_REPEAT throughput runs per path (default 3; the report shows the median and range)
#   RELAY_BENCH_ONLY   space-separated subset of paths, e.g. "direct bridge"
#   RELAY_BENCH_MAM    space-separated subset of "off on"
#   RELAY_BENCH_BUSY=1 keep every CPU busy with one lowest-priority busy loop each (nice 19),
#                      so no CPU goes idle between paced messages: what a paced message costs
#                      once the machine's wake-from-idle cost is taken out (see docs/performance.md)
#   RELAY_BENCH_ROUTES extra channels in the bridge's routing table (two idle contacts
#                      each), to measure the cost of a large table (default 0)
#
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail

N=${1:-2000}
R=${2:-100}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
REPEAT=${RELAY_BENCH_REPEAT:-3}
ONLY=${RELAY_BENCH_ONLY:-direct bridge bot bridge-memory bridge-ping bridge-noarchive}
MAMS=${RELAY_BENCH_MAM:-off on}
cd "$ROOT"
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
# shellcheck source=postgres.sh
. "$HERE/postgres.sh"

say() { printf '%s\n' "$*" >&2; }
die() { say "run.sh: $*"; exit 1; }

for tool in prosody prosodyctl openssl lua5.4 python3 swift; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install prosody openssl python3-venv; Swift on PATH)"
done

# ---------------------------------------------------------------- the bridge binary
bench_bridge_binary

# ---------------------------------------------------------------- slixmpp
bench_slixmpp

# ---------------------------------------------------------------- cleanup
WORK=$(mktemp -d /tmp/relay-bench.XXXXXX)
trap cleanup EXIT          # cleanup() is defined below
trap 'exit 130' INT TERM
RESULTS=$WORK/results.jsonl
# A private copy, so a rebuild by someone else during the run cannot swap the binary.
cp "$BIN" "$WORK/xmpp-bridge"
BUILT_FROM=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")
[ -n "$(git -C "$ROOT" status --porcelain -- Sources Package.swift 2>/dev/null)" ] && BUILT_FROM="$BUILT_FROM+uncommitted changes"
[ -n "${RELAY_BENCH_BIN:-}" ] && BUILT_FROM="RELAY_BENCH_BIN=$RELAY_BENCH_BIN"
BIN=$WORK/xmpp-bridge
RELAY_PID=
PERF_PID=
BUSY_PIDS=
BRIDGE_PIDS=
PAIR_LOADS=
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  local busy
  for busy in $BUSY_PIDS; do kill -KILL "$busy" 2>/dev/null || true; done
  [ -n "${PERF_PID:-}" ] && stop_pid "$PERF_PID"
  [ -n "${RELAY_PID:-}" ] && stop_pid "$RELAY_PID"
  # A pair's loads: each is a subshell running load.py, its only child.
  for pid in ${PAIR_LOADS:-}; do pkill -TERM -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
  for pid in ${BRIDGE_PIDS:-}; do stop_pid "$pid"; done
  prosody_stop
  postgres_stop
  if [ "${RELAY_BENCH_KEEP:-0}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
  exit "$status"
}

# ---------------------------------------------------------------- helpers

load() {  # LABEL MODE TARGET [ACCOUNT SUFFIX] [RELAY PID]; LOAD_ARGS: more load.py options
  local label=$1 mode=$2 target=$3 suffix=${4:-} pid=${5:-${RELAY_PID:-}} line
  # shellcheck disable=SC2086
  line=$("$PY" "$HERE/load.py" run --variant "$VARIANT" --label "$label" --mode "$mode" -n "$N" --rate "$R" ${LOAD_ARGS:-} \
    --target "$target" --host 127.0.0.1 --port "$C2S_PORT" --ca-file "$CA_FILE" \
    --sender "sender$suffix@$XMPP_DOMAIN/load" --sender-password-file "$DIR/sender$suffix.password" \
    --receiver "receiver$suffix@$XMPP_DOMAIN/load" --receiver-password-file "$DIR/receiver$suffix.password" \
    ${pid:+--relay-pid "$pid"} --server-pid "$PROSODY_PID") || true
  [ -n "$line" ] || line="{\"variant\": \"$VARIANT\", \"label\": \"$label\", \"mode\": \"$mode\", \"n\": $N, \"error\": \"load.py printed nothing\"}"
  printf '%s\n' "$line" >> "$RESULTS"
  say "  $line"
}

throughput() {  # LABEL TARGET: REPEAT throughput runs (the report uses the median)
  local _
  for _ in $(seq "$REPEAT"); do load "$1" throughput "$2"; done
}

bridge_config() {  # FILE STATE [STREAM_MANAGEMENT] [ARCHIVE] [ACCOUNT SUFFIX]
  local suffix=${5:-}
  cat > "$1" <<TOML
# Generated by Benchmarks/relay/run.sh: one account, relaying sender → receiver.
[bridge]
state = "$2"
$(case $2 in postgresql://*) echo "state_password_file = \"$PG_PASSWORD_FILE\"" ;; esac)
control_socket = "bridge$suffix.control"

[accounts.relay]
jid = "relay$suffix@$XMPP_DOMAIN"
resource = "bridge"
password_file = "relay$suffix.password"
host = "127.0.0.1"
port = $C2S_PORT
ca_file = "$CA_FILE"
stream_management = ${3:-true}

[channels.relay]
format = "[{channel}] {nick}: {body}"
type = "chat"
archive = ${4:-${RELAY_BENCH_ARCHIVE:-true}}
members = [
  { account = "relay", jid = "sender$suffix@$XMPP_DOMAIN", direction = "in" },
  { account = "relay", jid = "receiver$suffix@$XMPP_DOMAIN", direction = "out" },
]
TOML
  local k
  for k in $(seq 1 "${RELAY_BENCH_ROUTES:-0}"); do
    printf '\n[channels.idle%s]\nmembers = [\n  { account = "relay", jid = "u%s@%s" },\n  { account = "relay", jid = "v%s@%s" },\n]\n' \
      "$k" "$k" "$XMPP_DOMAIN" "$k" "$XMPP_DOMAIN"
  done >> "$1"
}

start_bridge() {  # LABEL STATE STREAM_MANAGEMENT ARCHIVE [ACCOUNT SUFFIX]: sets STARTED_PID, kept in BRIDGE_PIDS
  local label=$1 cfg=$DIR/$1.toml out
  bridge_config "$cfg" "$2" "$3" "$4" "${5:-}"
  if out=$("$BIN" check --config "$cfg" 2>&1); then
    :
  elif grep -qi "unexpected argument\|unknown subcommand\|Usage:" <<<"$out" && ! grep -q "problem" <<<"$out"; then
    say "  (xmpp-bridge check unavailable; not checked)"
  else
    say "$out"; die "generated configuration rejected by xmpp-bridge check"
  fi
  "$BIN" run --config "$cfg" --log-level info > "$DIR/$label.log" 2>&1 &
  STARTED_PID=$!
  BRIDGE_PIDS="$BRIDGE_PIDS $STARTED_PID"
  wait_for_line "$DIR/$label.log" "online" "$STARTED_PID" 30 || die "$label did not come online"
}

stop_bridge() {  # PID: stopped, and no longer in BRIDGE_PIDS (a pid may be reused later)
  stop_pid "$1"
  BRIDGE_PIDS=$(tr ' ' '\n' <<<"$BRIDGE_PIDS" | grep -vx "$1" | tr '\n' ' ' || true)
}

run_bridge() {  # LABEL STATE [STREAM_MANAGEMENT] [ARCHIVE]
  local label=$1
  start_bridge "$label" "$2" "${3:-true}" "${4:-${RELAY_BENCH_ARCHIVE:-true}}"
  RELAY_PID=$STARTED_PID
  throughput "$label" "relay@$XMPP_DOMAIN"
  if [ -n "${RELAY_BENCH_PERF:-}" ] && [ "$label" = bridge ] && [ "$VARIANT" = "${RELAY_BENCH_PERF_MAM:-off}" ]; then
    if [ -n "${RELAY_BENCH_PERF_EVENTS:-}" ]; then
      # Counted events instead of samples (e.g. "raw_syscalls:sys_enter sched:sched_switch"):
      # a count per message that does not depend on the machine's noise.
      events=()
      for event in $RELAY_BENCH_PERF_EVENTS; do events+=(-e "$event"); done
      perf record "${events[@]}" -p "$RELAY_PID" -o "$WORK/perf.data" 2>"$WORK/perf.log" &
    else
      perf record --call-graph "${RELAY_BENCH_PERF_CALLGRAPH:-fp}" -F ${RELAY_BENCH_PERF_FREQ:-999} -p "$RELAY_PID" -o "$WORK/perf.data" 2>"$WORK/perf.log" &
    fi
    PERF_PID=$!
    sleep 0.5
    load "$label-perf" "${RELAY_BENCH_PERF_MODE:-throughput}" "relay@$XMPP_DOMAIN"
    kill -INT "$PERF_PID" 2>/dev/null || true
    wait "$PERF_PID" 2>/dev/null || true
    PERF_PID=
    {
      echo "# xmpp-bridge, ${RELAY_BENCH_PERF_MODE:-throughput} run: inclusive time per function (perf report --children)"
      perf report -i "$WORK/perf.data" --stdio --children --sort sym -g none --percent-limit 1 2>/dev/null \
        | { if command -v swift >/dev/null; then swift demangle --simplified; else cat; fi; }
      echo "# self time by library"
      perf report -i "$WORK/perf.data" --stdio --no-children --sort dso -g none --percent-limit 0.5 2>/dev/null
    } > "$RELAY_BENCH_PERF" || true
    say "  perf report written to $RELAY_BENCH_PERF"
  fi
  load "$label" latency "relay@$XMPP_DOMAIN"
  stop_bridge "$RELAY_PID"
  RELAY_PID=
  local extra; extra=$(grep -c -E 'warning|error|critical' "$DIR/$label.log" || true)
  [ "$extra" = 0 ] || { say "  $label log has $extra warning/error lines:"; grep -E 'warning|error|critical' "$DIR/$label.log" | head -n 5 >&2; }
}

pair_loads() {  # MODE LABEL-SUFFIX ON-SUFFIX ON-PID OFF-SUFFIX OFF-PID: both loads at once, until both end
  local load_pid
  PAIR_LOADS=
  load "pair-archive$2" "$1" "relay$3@$XMPP_DOMAIN" "$3" "$4" 2>"$DIR/pair-archive.err" &
  PAIR_LOADS="$PAIR_LOADS $!"
  load "pair-noarchive$2" "$1" "relay$5@$XMPP_DOMAIN" "$5" "$6" 2>"$DIR/pair-noarchive.err" &
  PAIR_LOADS="$PAIR_LOADS $!"
  for load_pid in $PAIR_LOADS; do wait "$load_pid" || true; done
  PAIR_LOADS=
  cat "$DIR/pair-archive.err" "$DIR/pair-noarchive.err" >&2
}

run_pair() {  # the archive on and off at the same time, each with its own accounts and load
  # Two rounds: the archive on the first accounts (its bridge started first), then on the
  # second (started second). What one side gains from its accounts or its place falls on
  # both ratios.
  local round on_suffix off_suffix on_pid off_pid mode _
  for round in 1 2; do
    if [ "$round" = 1 ]; then
      on_suffix=""; off_suffix=2
      start_bridge pair-archive "pair-archive-$round.sqlite" true "${RELAY_BENCH_ARCHIVE:-true}" "$on_suffix"; on_pid=$STARTED_PID
      start_bridge pair-noarchive "pair-noarchive-$round.sqlite" true false "$off_suffix"; off_pid=$STARTED_PID
    else
      on_suffix=2; off_suffix=""
      start_bridge pair-noarchive "pair-noarchive-$round.sqlite" true false "$off_suffix"; off_pid=$STARTED_PID
      start_bridge pair-archive "pair-archive-$round.sqlite" true "${RELAY_BENCH_ARCHIVE:-true}" "$on_suffix"; on_pid=$STARTED_PID
    fi
    if [ -n "${RELAY_BENCH_PERF:-}" ] && [ "$round" = 1 ]; then
      # Both bridges in one recording, over one throughput run of each at once.
      perf record --call-graph "${RELAY_BENCH_PERF_CALLGRAPH:-fp}" -F "${RELAY_BENCH_PERF_FREQ:-999}" -p "$on_pid,$off_pid" \
        -o "$WORK/pair-perf.data" 2>"$WORK/perf.log" &
      PERF_PID=$!
      sleep 0.5
      pair_loads throughput -perf "$on_suffix" "$on_pid" "$off_suffix" "$off_pid" 2>/dev/null
      kill -INT "$PERF_PID" 2>/dev/null || true
      wait "$PERF_PID" 2>/dev/null || true
      PERF_PID=
      say "  perf data of both bridges (pids $on_pid with the archive, $off_pid without): $WORK/pair-perf.data"
    fi
    for mode in $(for _ in $(seq "$REPEAT"); do echo throughput; done) latency; do
      pair_loads "$mode" "" "$on_suffix" "$on_pid" "$off_suffix" "$off_pid"
    done
    stop_bridge "$on_pid"; stop_bridge "$off_pid"
  done
}

run_bot() {
  "$PY" "$HERE/relay_bot.py" --jid "relay@$XMPP_DOMAIN/bot" --password-file "$DIR/relay.password" \
    --source "sender@$XMPP_DOMAIN" --target "receiver@$XMPP_DOMAIN" \
    --host 127.0.0.1 --port "$C2S_PORT" --ca-file "$CA_FILE" > "$DIR/bot.log" 2>&1 &
  RELAY_PID=$!
  wait_for_line "$DIR/bot.log" "online" "$RELAY_PID" 30 || die "relay_bot.py did not come online"
  throughput bot "relay@$XMPP_DOMAIN"
  load bot latency "relay@$XMPP_DOMAIN"
  stop_pid "$RELAY_PID"
  RELAY_PID=
}

# ---------------------------------------------------------------- the runs
if [ "${RELAY_BENCH_BUSY:-0}" = 1 ]; then
  for _ in $(seq "$(nproc)"); do
    nice -n 19 bash -c 'while :; do :; done' &
    BUSY_PIDS="$BUSY_PIDS $!"
  done
  say "RELAY_BENCH_BUSY: $(nproc) busy loops at nice 19 (pids$BUSY_PIDS)"
fi
say "relay benchmark: N=$N, paced rate $R msg/s; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); prosody $(dpkg-query -W -f '${Version}' prosody 2>/dev/null || echo "?"); slixmpp $SLIXMPP_VERSION; xmpp-bridge from $BUILT_FROM; work dir $WORK"
for VARIANT in $MAMS; do
  case $VARIANT in on) MAM=1 ;; off) MAM=0 ;; *) die "RELAY_BENCH_MAM: off or on, not $VARIANT" ;; esac
  DIR=$WORK/mam-$VARIANT
  mkdir -p "$DIR"
  prosody_start_with_passwords "$DIR" "$MAM" sender receiver relay sender2 receiver2 relay2 || die "Prosody did not start"
  say "mod_mam $VARIANT: Prosody pid $PROSODY_PID on 127.0.0.1:$C2S_PORT"
  for path in $ONLY; do
    say " $path"
    case $path in
      direct) RELAY_PID= ; throughput direct "receiver@$XMPP_DOMAIN"; load direct latency "receiver@$XMPP_DOMAIN" ;;
      direct+sm) RELAY_PID= ; LOAD_ARGS=--receiver-sm throughput "$path" "receiver@$XMPP_DOMAIN" ;;
      direct+[ROQMS]*) RELAY_PID= ; LOAD_ARGS="--elements ${path#direct+}" throughput "$path" "receiver@$XMPP_DOMAIN" ;;
      bridge) run_bridge bridge "bridge.sqlite" ;;
      bot) run_bot ;;
      bridge-memory) run_bridge bridge-memory ":memory:" ;;
      bridge-ping) run_bridge bridge-ping "bridge-ping.sqlite" false ;;
      bridge-noarchive) run_bridge bridge-noarchive "bridge-noarchive.sqlite" true false ;;
      bridge-postgres)
        [ -n "${PG_PID:-}" ] || { postgres_start || die "PostgreSQL did not start"; say "PostgreSQL pid $PG_PID on 127.0.0.1:$PG_PORT"; }
        [ -n "${PG_DATABASE:-}" ] && [ "$PG_DATABASE_VARIANT" = "$VARIANT" ] || { PG_DATABASE=$(postgres_database "bench_$VARIANT"); PG_DATABASE_VARIANT=$VARIANT; }
        run_bridge bridge-postgres "$PG_DATABASE" ;;
      archive-pair) run_pair ;;
      *) die "unknown path $path" ;;
    esac
  done
  prosody_stop
done

"$PY" "$HERE/load.py" report "$RESULTS"
