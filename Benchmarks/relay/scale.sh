#!/usr/bin/env bash
# Many accounts in one bridge (issue 8, "Measure", scale): one Prosody on 127.0.0.1 with
# ACCOUNTS accounts (registered as copies of one), one bridge with all of them; reports how long until every
# account is online and the bridge's RSS then. Goals: 1,000 accounts online within 60 s in
# <= 300 MB (issue 8); 10,000 within 120 s in <= 1 GB, logins paced (issue 21).
# The routing-table part (CPU per message with 10,000 routes vs 10) is
#   RELAY_BENCH_ONLY=bridge RELAY_BENCH_MAM=off RELAY_BENCH_ROUTES=10000 Benchmarks/relay/run.sh
# against the same run with RELAY_BENCH_ROUTES=10.
#
# usage: Benchmarks/relay/scale.sh [ACCOUNTS=1000]
# environment: RELAY_BENCH_BIN (default .build/release/xmpp-bridge, built if missing)
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail
ACCOUNTS=${1:-1000}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
say() { printf '%s\n' "$*" >&2; }

BIN=${RELAY_BENCH_BIN:-$ROOT/.build/release/xmpp-bridge}
[ -x "$BIN" ] || "$ROOT/scripts/build-release.sh" >&2
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
WORK=$(mktemp -d /tmp/relay-scale.XXXXXX)
BRIDGE_PID=
cleanup() {
  [ -n "$BRIDGE_PID" ] && kill "$BRIDGE_PID" 2>/dev/null && wait "$BRIDGE_PID" 2>/dev/null || true
  prosody_stop || true
  rm -rf "$WORK"
}
trap cleanup EXIT

prosody_start "$WORK/server" 0 >&2
CFG_LUA=$WORK/server/prosody.cfg.lua
# The first account through prosodyctl; the others as copies of its stored credentials
# (SCRAM's salted keys do not depend on the user name), as the tests' fixture does: a Lua
# start per account made 10,000 take longer than the measurement (issue 43).
say "registering $ACCOUNTS accounts (prosodyctl once, then copies of its credentials)"
started=$(date +%s)
prosodyctl --config "$CFG_LUA" register s1 "$XMPP_DOMAIN" pw >/dev/null
# Prosody's file storage names: lower case, anything but letters and digits as %xx.
accounts_dir=$WORK/server/data/$(printf '%s' "$XMPP_DOMAIN" | python3 -c 'import sys; print("".join(c if c.isascii() and c.isalnum() else "%%%02x" % ord(c) for c in sys.stdin.read().lower()))')/accounts
[ -f "$accounts_dir/s1.dat" ] || { say "prosodyctl stored no $accounts_dir/s1.dat"; exit 1; }
for i in $(seq 2 "$ACCOUNTS"); do cp "$accounts_dir/s1.dat" "$accounts_dir/s$i.dat"; done
say "registered in $(( $(date +%s) - started )) s"
printf 'pw\n' > "$WORK/pw"
chmod 600 "$WORK/pw"
CFG=$WORK/bridge.toml
{
  printf '[bridge]\nstate = "%s"\ncontrol_socket = "%s"\n' "$WORK/bridge.sqlite" "$WORK/bridge.control"
  for i in $(seq 1 "$ACCOUNTS"); do
    printf '\n[accounts.s%s]\njid = "s%s@%s"\nresource = "bridge"\npassword_file = "%s"\nhost = "127.0.0.1"\nport = %s\nca_file = "%s"\n' \
      "$i" "$i" "$XMPP_DOMAIN" "$WORK/pw" "$C2S_PORT" "$CA_FILE"
  done
  printf '\n[channels.link]\nmembers = [\n  { account = "s1", jid = "x@%s" },\n  { account = "s2", jid = "y@%s" },\n]\n' "$XMPP_DOMAIN" "$XMPP_DOMAIN"
} > "$CFG"
start_ns=$(date +%s%N)
"$BIN" run --config "$CFG" --log-level warning > "$WORK/bridge.log" 2>&1 &
BRIDGE_PID=$!
online=0
while :; do
  # `status` answers 75 ("starting") while accounts are still connecting: under pipefail
  # that must not end the script (it used to die here, silently, at 10,000 accounts).
  online=$({ "$BIN" status --config "$CFG" --json 2>/dev/null || true; } | python3 -c 'import json,sys
try: print(sum(1 for x in json.load(sys.stdin) if x["connected"]))
except Exception: print(0)')
  elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
  [ "$online" -ge "$ACCOUNTS" ] && break
  [ "$elapsed_ms" -lt 300000 ] || break
  kill -0 "$BRIDGE_PID" 2>/dev/null || { say "bridge exited"; tail "$WORK/bridge.log" >&2; exit 1; }
  sleep 1
done
rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
# Where it is: anonymous (heap, stacks) vs file-backed (code, the memory-mapped ledgers and log).
anon=$(awk '/^RssAnon/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
file=$(awk '/^RssFile/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
shmem=$(awk '/^RssShmem/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
# RELAY_BENCH_SMAPS=FILE keeps the bridge's memory map with each mapping's RSS, to see where it is.
[ -z "${RELAY_BENCH_SMAPS:-}" ] || cp /proc/"$BRIDGE_PID"/smaps "$RELAY_BENCH_SMAPS"
threads=$(ls /proc/"$BRIDGE_PID"/task | wc -l)
printf 'scale: %s accounts in one bridge (%s threads)\n' "$ACCOUNTS" "$threads"
# Goals: issue 8 for up to 1,000 accounts (60 s, 300 MB); issue 21 for 10,000 (120 s, 1 GB).
goal_s=60 goal_mb=300
if [ "$ACCOUNTS" -ge 10000 ]; then goal_s=120 goal_mb=1024; fi
printf '  online        %s of %s after %.1f s   goal all within %s s: %s\n' "$online" "$ACCOUNTS" "$(awk -v m="$elapsed_ms" 'BEGIN {print m / 1000}')" "$goal_s" \
  "$(awk -v m="$elapsed_ms" -v o="$online" -v n="$ACCOUNTS" -v g="$goal_s" 'BEGIN {print (o >= n && m <= g * 1000) ? "met" : "NOT met"}')"
printf '  RSS           %s MB (%s KB per account)   goal <= %s MB: %s\n' "$rss" "$(awk -v r="$rss" -v n="$ACCOUNTS" 'BEGIN {printf "%.0f", r * 1024 / n}')" "$goal_mb" \
  "$(awk -v r="$rss" -v g="$goal_mb" 'BEGIN {print (r <= g) ? "met" : "NOT met"}')"
printf '  RSS by kind   anonymous %s MB, file-backed %s MB, shared memory %s MB\n' "$anon" "$file" "$shmem"
printf '  log lines at warning or above: %s\n' "$(grep -c -E 'warning|error|critical' "$WORK/bridge.log" || true)"
