#!/usr/bin/env bash
# Idle cost of the bridge (issue 8, "Measure"): one Prosody on 127.0.0.1, ACCOUNTS bridge
# accounts each linked to a contact, the bridge left alone for SECONDS once every account
# is online. Reports, over that window, how often the bridge's threads ran (the
# timeslices of /proc/PID/task/*/schedstat), its context switches and CPU time, and its
# RSS at the end. Keepalive pings (one per account per 60 s of silence) are expected.
#
# usage: Benchmarks/relay/idle.sh [ACCOUNTS=10] [SECONDS=60]
# environment: RELAY_BENCH_BIN (default .build/release/xmpp-bridge, built if missing)
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail
ACCOUNTS=${1:-10}
[ "$ACCOUNTS" -ge 2 ] || { echo "idle.sh: at least 2 accounts (each is linked to the next)" >&2; exit 2; }
WINDOW=${2:-60}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
say() { printf '%s\n' "$*" >&2; }

BIN=${RELAY_BENCH_BIN:-$ROOT/.build/release/xmpp-bridge}
if [ ! -x "$BIN" ]; then
  say "building: scripts/build-release.sh"
  "$ROOT/scripts/build-release.sh" >&2
fi
WORK=$(mktemp -d /tmp/relay-idle.XXXXXX)
BRIDGE_PID=
cleanup() {
  [ -n "$BRIDGE_PID" ] && kill "$BRIDGE_PID" 2>/dev/null && wait "$BRIDGE_PID" 2>/dev/null || true
  prosody_stop || true
  rm -rf "$WORK"
}
trap cleanup EXIT

users=()
for i in $(seq 1 "$ACCOUNTS"); do
  for user in "a$i" "c$i"; do
    printf 'pw\n' > "$WORK/$user.password"
    chmod 600 "$WORK/$user.password"
    users+=("$user:pw")
  done
done
prosody_start "$WORK/server" 0 "${users[@]}" >&2
CFG=$WORK/bridge.toml
{
  printf '[bridge]\nstate = "%s"\ncontrol_socket = "%s"\n' "$WORK/bridge.sqlite" "$WORK/bridge.control"
  for i in $(seq 1 "$ACCOUNTS"); do
    printf '\n[accounts.a%s]\njid = "a%s@%s"\nresource = "bridge"\npassword_file = "%s"\nhost = "127.0.0.1"\nport = %s\nca_file = "%s"\n' \
      "$i" "$i" "$XMPP_DOMAIN" "$WORK/a$i.password" "$C2S_PORT" "$CA_FILE"
  done
  for i in $(seq 1 "$ACCOUNTS"); do
    next=$(( i % ACCOUNTS + 1 ))
    printf '\n[channels.link%s]\nmembers = [\n  { account = "a%s", jid = "c%s@%s" },\n  { account = "a%s", jid = "c%s@%s" },\n]\n' \
      "$i" "$i" "$i" "$XMPP_DOMAIN" "$next" "$i" "$XMPP_DOMAIN"
  done
} > "$CFG"
"$BIN" run --config "$CFG" --log-level warning > "$WORK/bridge.log" 2>&1 &
BRIDGE_PID=$!
deadline=$(( $(date +%s) + 60 ))
until "$BIN" status --config "$CFG" --json 2>/dev/null | python3 -c 'import json,sys; t=json.load(sys.stdin); sys.exit(0 if t and all(x["connected"] for x in t) else 1)' 2>/dev/null; do
  [ "$(date +%s)" -lt "$deadline" ] || { say "not all accounts online"; tail "$WORK/bridge.log" >&2; exit 1; }
  sleep 0.5
done
sleep 2   # let start-up work (roster fetches, presence) settle

# Context switches and wakeups of every thread, also ones that come and go (perf counts
# them; summing /proc/PID/task/* would miss exited threads).
read -r t0 < <(awk '{print $14 + $15}' /proc/"$BRIDGE_PID"/stat)
perf stat -x, -e context-switches,cpu-migrations,task-clock -p "$BRIDGE_PID" -o "$WORK/perf.txt" -- sleep "$WINDOW" 2>/dev/null
read -r t1 < <(awk '{print $14 + $15}' /proc/"$BRIDGE_PID"/stat)
switches=$(awk -F, '/context-switches/ {print $1}' "$WORK/perf.txt")
rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
threads=$(ls /proc/"$BRIDGE_PID"/task | wc -l)
ticks=$(getconf CLK_TCK)
pings=$(( ACCOUNTS * (WINDOW / 60) ))
cpu_ms=$(( (t1 - t0) * 1000 / ticks ))
printf 'idle bridge: %s accounts, %s s window, %s threads\n' "$ACCOUNTS" "$WINDOW" "$threads"
printf '  context switches (all threads)      %s   (keepalive pings expected: %s)\n' "$switches" "$pings"
printf '  CPU                                 %s ms\n' "$cpu_ms"
printf '  RSS at the end                      %s MB   goal <= 25 MB: %s\n' "$rss" "$(awk -v r="$rss" 'BEGIN {print (r <= 25) ? "met" : "NOT met"}')"
