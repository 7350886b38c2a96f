#!/usr/bin/env bash
# Room-to-room relay benchmark (issue 10, "Measure"): one Prosody on 127.0.0.1 with a MUC
# component (PROSODY_ROOMS=1 in prosody.sh; mod_muc_mam on by default), and against it,
# in this order:
#   direct   sender and receiver in one room (direct@MUC_DOMAIN)
#   bridge   sender in room a → xmpp-bridge (account `relay`, nick `bridge`, in both
#            rooms, durable SQLite queue) → receiver in room b
#   bot      the same with muc_relay_bot.py (minimal slixmpp MUC relay, same account)
# Every client joins without history (maxstanzas='0'); the first to join creates the room.
# Each path gets throughput runs (N messages as fast as the sender can hand them over;
# 3 by default, the report takes the median) and a latency run (N messages paced at
# R msg/s). Relay CPU comes from the relay process's own /proc/PID/stat (utime + stime)
# over the measured part of each run. The table is load.py's, as for run.sh.
#
# usage: Benchmarks/relay/rooms.sh [N] [R]      (defaults: N=2000, R=100)
# environment (as run.sh):
#   RELAY_BENCH_BIN    use this xmpp-bridge binary instead of building .build/release/xmpp-bridge
#   RELAY_BENCH_VENV   Python venv with slixmpp (default .build/relay-bench-venv; made if missing)
#   RELAY_BENCH_KEEP=1 keep the temporary folder (logs, configs, results.jsonl)
#   RELAY_BENCH_REPEAT throughput runs per path (default 3)
#   RELAY_BENCH_ONLY   space-separated subset of paths, e.g. "direct bot" (no bridge needed)
#   RELAY_BENCH_MAM    space-separated subset of "off on" for mod_muc_mam (default "on")
#   RELAY_BENCH_NAGLE=off  Prosody with TCP_NODELAY (default: Prosody's own default, Nagle
#                      on, under which a relay that receives its own reflections waits for
#                      delayed ACKs: see prosody.sh)
#
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail

N=${1:-2000}
R=${2:-100}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
REPEAT=${RELAY_BENCH_REPEAT:-3}
ONLY=${RELAY_BENCH_ONLY:-direct bridge bot}
MAMS=${RELAY_BENCH_MAM:-on}
cd "$ROOT"
# shellcheck disable=SC2034  # read by prosody.sh
PROSODY_ROOMS=1
# shellcheck disable=SC2034  # read by prosody.sh
case ${RELAY_BENCH_NAGLE:-on} in on) PROSODY_NAGLE=1 ;; off) PROSODY_NAGLE=0 ;; *) echo "rooms.sh: RELAY_BENCH_NAGLE: on or off" >&2; exit 1 ;; esac
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
ROOM_DIRECT=direct@$MUC_DOMAIN
ROOM_A=a@$MUC_DOMAIN
ROOM_B=b@$MUC_DOMAIN

say() { printf '%s\n' "$*" >&2; }
die() { say "rooms.sh: $*"; exit 1; }

for tool in prosody prosodyctl openssl lua5.4 python3; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install prosody openssl python3-venv)"
done

# ---------------------------------------------------------------- the bridge binary (bridge path only)
BIN=
if [[ " $ONLY " == *" bridge "* ]]; then bench_bridge_binary; fi

# ---------------------------------------------------------------- slixmpp
bench_slixmpp

# ---------------------------------------------------------------- cleanup
WORK=$(mktemp -d /tmp/relay-rooms.XXXXXX)
trap cleanup EXIT          # cleanup() is defined below
trap 'exit 130' INT TERM
RESULTS=$WORK/results.jsonl
BUILT_FROM=-
if [ -n "$BIN" ]; then
  # A private copy, so a rebuild by someone else during the run cannot swap the binary.
  cp "$BIN" "$WORK/xmpp-bridge"
  BUILT_FROM=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")
  [ -n "$(git -C "$ROOT" status --porcelain -- Sources Package.swift 2>/dev/null)" ] && BUILT_FROM="$BUILT_FROM+uncommitted changes"
  [ -n "${RELAY_BENCH_BIN:-}" ] && BUILT_FROM="RELAY_BENCH_BIN=$RELAY_BENCH_BIN"
  BIN=$WORK/xmpp-bridge
fi
RELAY_PID=
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [ -n "${RELAY_PID:-}" ] && stop_pid "$RELAY_PID"
  prosody_stop
  if [ "${RELAY_BENCH_KEEP:-0}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
  exit "$status"
}

# ---------------------------------------------------------------- helpers

load() {  # LABEL MODE SENDER_ROOM RECEIVER_ROOM
  local label=$1 mode=$2 line
  line=$("$PY" "$HERE/load.py" run --variant "$VARIANT" --label "$label" --mode "$mode" -n "$N" --rate "$R" \
    --sender-room "$3" --receiver-room "$4" --host 127.0.0.1 --port "$C2S_PORT" --ca-file "$CA_FILE" \
    --sender "sender@$XMPP_DOMAIN/load" --sender-password-file "$DIR/sender.password" \
    --receiver "receiver@$XMPP_DOMAIN/load" --receiver-password-file "$DIR/receiver.password" \
    ${RELAY_PID:+--relay-pid "$RELAY_PID"} --server-pid "$PROSODY_PID") || true
  [ -n "$line" ] || line="{\"variant\": \"$VARIANT\", \"label\": \"$label\", \"mode\": \"$mode\", \"n\": $N, \"rooms\": true, \"error\": \"load.py printed nothing\"}"
  printf '%s\n' "$line" >> "$RESULTS"
  say "  $line"
}

measure() {  # LABEL SENDER_ROOM RECEIVER_ROOM: REPEAT throughput runs, then the paced run
  local _
  for _ in $(seq "$REPEAT"); do load "$1" throughput "$2" "$3"; done
  load "$1" latency "$2" "$3"
}

bridge_config() {  # FILE
  cat > "$1" <<TOML
# Generated by Benchmarks/relay/rooms.sh: one account in two rooms, relaying a → b.
[bridge]
state = "bridge.sqlite"
control_socket = "bridge.control"

[accounts.relay]
jid = "relay@$XMPP_DOMAIN"
resource = "bridge"
password_file = "relay.password"
host = "127.0.0.1"
port = $C2S_PORT
ca_file = "$CA_FILE"

[channels.rooms]
format = "{nick}: {body}"
members = [
  { account = "relay", room = "$ROOM_A", nick = "bridge", direction = "in" },
  { account = "relay", room = "$ROOM_B", nick = "bridge", direction = "out" },
]
TOML
}

run_bridge() {
  local cfg=$DIR/bridge.toml out extra
  bridge_config "$cfg"
  out=$("$BIN" check --config "$cfg" 2>&1) || { say "$out"; die "generated configuration rejected by xmpp-bridge check"; }
  "$BIN" run --config "$cfg" --log-level info > "$DIR/bridge.log" 2>&1 &
  RELAY_PID=$!
  # "online" is the account; the warm-up of each load.py run waits until the rooms relay.
  wait_for_line "$DIR/bridge.log" "online" "$RELAY_PID" 30 || die "bridge did not come online"
  measure bridge "$ROOM_A" "$ROOM_B"
  stop_pid "$RELAY_PID"
  RELAY_PID=
  extra=$(grep -c -E 'warning|error|critical' "$DIR/bridge.log" || true)
  [ "$extra" = 0 ] || { say "  bridge log has $extra warning/error lines:"; grep -E 'warning|error|critical' "$DIR/bridge.log" | head -n 5 >&2; }
}

run_bot() {
  "$PY" "$HERE/muc_relay_bot.py" --jid "relay@$XMPP_DOMAIN/bot" --password-file "$DIR/relay.password" \
    --source "$ROOM_A" --target "$ROOM_B" --nick bot \
    --host 127.0.0.1 --port "$C2S_PORT" --ca-file "$CA_FILE" > "$DIR/bot.log" 2>&1 &
  RELAY_PID=$!
  wait_for_line "$DIR/bot.log" "online" "$RELAY_PID" 30 || die "muc_relay_bot.py did not come online"
  measure bot "$ROOM_A" "$ROOM_B"
  stop_pid "$RELAY_PID"
  RELAY_PID=
}

# ---------------------------------------------------------------- the runs
say "room relay benchmark: N=$N, paced rate $R msg/s; Prosody Nagle ${RELAY_BENCH_NAGLE:-on}; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); prosody $(dpkg-query -W -f '${Version}' prosody 2>/dev/null || echo "?"); slixmpp $SLIXMPP_VERSION; xmpp-bridge from $BUILT_FROM; work dir $WORK"
for VARIANT in $MAMS; do
  case $VARIANT in on) MAM=1 ;; off) MAM=0 ;; *) die "RELAY_BENCH_MAM: off or on, not $VARIANT" ;; esac
  DIR=$WORK/muc-mam-$VARIANT
  mkdir -p "$DIR"
  prosody_start_with_passwords "$DIR" "$MAM" sender receiver relay || die "Prosody did not start"
  say "mod_muc_mam $VARIANT: Prosody pid $PROSODY_PID on 127.0.0.1:$C2S_PORT, rooms on $MUC_DOMAIN"
  for path in $ONLY; do
    say " $path"
    case $path in
      direct) RELAY_PID= ; measure direct "$ROOM_DIRECT" "$ROOM_DIRECT" ;;
      bridge) run_bridge ;;
      bot) run_bot ;;
      *) die "unknown path $path (direct, bridge, bot)" ;;
    esac
  done
  prosody_stop
done

"$PY" "$HERE/load.py" report "$RESULTS"
