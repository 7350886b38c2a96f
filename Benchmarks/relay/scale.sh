#!/usr/bin/env bash
# Many accounts in one bridge (issue 8, 21, 43 "Measure"): one server on 127.0.0.1 with
# ACCOUNTS accounts (registered as copies of one), one bridge with all of them, each with no
# resource of its own (the server names it; Bind 2 where offered). Phases, each timed from
# its start until `status` shows every account connected:
#   cold     the bridge starts on an empty state: every login a password login (SCRAM);
#   idle     60 s with nothing to do: the bridge's CPU (goal <= 5 % of one core);
#   restart  the server is stopped and started again under the connected bridge;
#   stop     SIGTERM: how long until every stream is closed and the bridge has exited;
#   warm     the bridge is started again on its state: the FAST tokens it kept log in
#            (HT-SHA-256, no SCRAM) where the server offers FAST.
# For each: time, the bridge's CPU seconds (per login), the server's, lines at warning or
# above; for cold and after idle, the RSS. Round trips per login from the "session established" lines.
# Goals (issue 43): 10,000 online within 60 s in <= 600 MB and <= 10 warnings; again within
# 30 s after a server restart; idle <= 5 % of a core.
#
# usage: Benchmarks/relay/scale.sh [ACCOUNTS=1000]
# environment:
#   RELAY_BENCH_SERVER  prosody (Prosody 0.12, default), prosody13 (13 with SASL2, Bind 2,
#                       FAST: prosody-modules) or ejabberd (24.12; needs root)
#   RELAY_BENCH_LOGIN   auto (default) or legacy (RFC 6120 only), the accounts' `login`
#   RELAY_BENCH_IDLE    seconds of the idle phase (default 60; 0 skips it)
#   RELAY_BENCH_LOGINS  the bridge's max_concurrent_logins (default: the bridge's own)
#   RELAY_BENCH_BIN     default .build/release/xmpp-bridge, built if missing
#   RELAY_BENCH_KEEP    set: keep the work folder (logs, state) and print its path
#   RELAY_BENCH_WRAP    a command the bridge is run under that execs it (the pid stays the
#                       bridge's), e.g. "env LD_PRELOAD=.../libheaptrack_preload.so ..."
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail
ACCOUNTS=${1:-1000}
SERVER=${RELAY_BENCH_SERVER:-prosody}
LOGIN=${RELAY_BENCH_LOGIN:-auto}
IDLE=${RELAY_BENCH_IDLE:-60}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
say() { printf '%s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
case "$SERVER" in
  prosody) ;;
  prosody13) export PROSODY_RELEASE=13 PROSODY_SASL2=1 ;;
  ejabberd) ;;
  *) die "RELAY_BENCH_SERVER must be prosody, prosody13 or ejabberd" ;;
esac
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
# shellcheck source=ejabberd.sh
. "$HERE/ejabberd.sh"

BIN=${RELAY_BENCH_BIN:-$ROOT/.build/release/xmpp-bridge}
[ -x "$BIN" ] || "$ROOT/scripts/build-release.sh" >&2
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
WORK=$(mktemp -d /tmp/relay-scale.XXXXXX)
BRIDGE_PID=
cleanup() {
  [ -n "$BRIDGE_PID" ] && kill "$BRIDGE_PID" 2>/dev/null && wait "$BRIDGE_PID" 2>/dev/null || true
  if [ "$SERVER" = ejabberd ]; then ejabberd_stop || true; else prosody_stop || true; fi
  if [ -n "${RELAY_BENCH_KEEP:-}" ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

say "registering $ACCOUNTS accounts on $SERVER (one, then copies of its stored credentials)"
started=$(date +%s)
if [ "$SERVER" = ejabberd ]; then
  ejabberd_start "$WORK/server" >&2
  ejabberd_register_copies "$ACCOUNTS"
  server_pids() { pgrep -f -- "-sname $EJABBERD_NODE" | tr '\n' ' '; }
  restart_server() { ejabberd_restart >&2; }
else
  prosody_start "$WORK/server" 0 >&2
  # SCRAM's salted keys do not depend on the user name: a Lua start per account made
  # 10,000 take longer than the measurement (issue 43).
  "$PROSODY_BIN/prosodyctl" --config "$WORK/server/prosody.cfg.lua" register s1 "$XMPP_DOMAIN" pw >/dev/null
  # Prosody's file storage names: lower case, anything but letters and digits as %xx.
  accounts_dir=$WORK/server/data/$(printf '%s' "$XMPP_DOMAIN" | python3 -c 'import sys; print("".join(c if c.isascii() and c.isalnum() else "%%%02x" % ord(c) for c in sys.stdin.read().lower()))')/accounts
  [ -f "$accounts_dir/s1.dat" ] || die "prosodyctl stored no $accounts_dir/s1.dat"
  for i in $(seq 2 "$ACCOUNTS"); do cp "$accounts_dir/s1.dat" "$accounts_dir/s$i.dat"; done
  server_pids() { printf '%s' "$PROSODY_PID"; }
  restart_server() { prosody_restart >&2; }
fi
say "registered in $(( $(date +%s) - started )) s"
printf 'pw\n' > "$WORK/pw"
chmod 600 "$WORK/pw"
CFG=$WORK/bridge.toml
{
  printf '[bridge]\nstate = "%s"\ncontrol_socket = "%s"\n' "$WORK/bridge.sqlite" "$WORK/bridge.control"
  [ -n "${RELAY_BENCH_LOGINS:-}" ] && printf 'max_concurrent_logins = %s\n' "$RELAY_BENCH_LOGINS"
  for i in $(seq 1 "$ACCOUNTS"); do
    printf '\n[accounts.s%s]\njid = "s%s@%s"\npassword_file = "%s"\nhost = "127.0.0.1"\nport = %s\nca_file = "%s"\nlogin = "%s"\n' \
      "$i" "$i" "$XMPP_DOMAIN" "$WORK/pw" "$C2S_PORT" "$CA_FILE" "$LOGIN"
  done
  printf '\n[channels.link]\nmembers = [\n  { account = "s1", jid = "x@%s" },\n  { account = "s2", jid = "y@%s" },\n]\n' "$XMPP_DOMAIN" "$XMPP_DOMAIN"
} > "$CFG"

ticks() {  # PIDS...: user + system clock ticks of these processes (and their threads)
  local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    total=$(( total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}') ))
  done
  printf '%s' "$total"
}
HZ=$(getconf CLK_TCK)
seconds() { awk -v t="$1" -v hz="$HZ" 'BEGIN {printf "%.2f", t / hz}'; }
online_count() {
  { "$BIN" status --config "$CFG" --json 2>/dev/null || true; } | python3 -c 'import json,sys
try: print(sum(1 for x in json.load(sys.stdin) if x["connected"]))
except Exception: print(0)'
}
start_bridge() {
  # shellcheck disable=SC2086
  ${RELAY_BENCH_WRAP:-} "$BIN" run --config "$CFG" --log-level info >> "$WORK/bridge.log" 2>&1 &
  BRIDGE_PID=$!
}
# PHASE: waits until every account is connected (at most 300 s); reports its time, CPU and
# the warnings it logged. Sets ELAPSED_S.
measure() {
  local phase=$1 start_ns=$2 log_from=$3 bridge_from=$4 server_from=$5 online elapsed_ms bridge_t server_t warnings
  while :; do
    online=$(online_count)
    elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
    [ "$online" -ge "$ACCOUNTS" ] && break
    [ "$elapsed_ms" -lt 300000 ] || break
    kill -0 "$BRIDGE_PID" 2>/dev/null || { say "bridge exited"; tail "$WORK/bridge.log" >&2; exit 1; }
    sleep 0.5
  done
  bridge_t=$(( $(ticks "$BRIDGE_PID") - bridge_from ))
  # shellcheck disable=SC2046
  server_t=$(( $(ticks $(server_pids)) - server_from ))
  warnings=$(tail -c +$((log_from + 1)) "$WORK/bridge.log" | grep -c -E '^[^ ]+ (warning|error|critical) ' || true)
  ELAPSED_S=$(awk -v m="$elapsed_ms" 'BEGIN {printf "%.1f", m / 1000}')
  printf '  %-8s %6s of %s online after %6s s   bridge CPU %7s s (%s ms/login)   server CPU %7s s (%s ms/login)   warnings %s\n' \
    "$phase" "$online" "$ACCOUNTS" "$ELAPSED_S" "$(seconds "$bridge_t")" "$(awk -v t="$bridge_t" -v hz="$HZ" -v n="$ACCOUNTS" 'BEGIN {printf "%.2f", t * 1000 / hz / n}')" \
    "$(seconds "$server_t")" "$(awk -v t="$server_t" -v hz="$HZ" -v n="$ACCOUNTS" 'BEGIN {printf "%.2f", t * 1000 / hz / n}')" "$warnings"
}
logins_summary() {  # LOG_FROM: how the logins since went, by their "login=" words
  tail -c +$(($1 + 1)) "$WORK/bridge.log" | grep 'session established' | grep -o 'login=[^[]*' | sed 's/ new-token//; s/ token-refused//' \
    | sort | uniq -c | sort -rn | head -5 | sed 's/^/             /'
}
log_size() { stat -c %s "$WORK/bridge.log" 2>/dev/null || echo 0; }

printf 'scale: %s accounts in one bridge, server %s, login = "%s"\n' "$ACCOUNTS" "$SERVER" "$LOGIN"
# shellcheck disable=SC2046
from_log=$(log_size) from_server=$(ticks $(server_pids)) start_ns=$(date +%s%N)
start_bridge
measure cold "$start_ns" "$from_log" 0 "$from_server"
cold_s=$ELAPSED_S
# The bridge's resident memory now, as a line; sets RSS (MB).
report_rss() {
  RSS=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
  local anon file
  anon=$(awk '/^RssAnon/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
  file=$(awk '/^RssFile/ {printf "%.1f", $2 / 1024}' /proc/"$BRIDGE_PID"/status)
  printf '           RSS %s MB (%s KB per account; anonymous %s MB, file-backed %s MB), %s threads\n' "$RSS" \
    "$(awk -v r="$RSS" -v n="$ACCOUNTS" 'BEGIN {printf "%.0f", r * 1024 / n}')" "$anon" "$file" "$(ls /proc/"$BRIDGE_PID"/task | wc -l)"
}
[ -z "${RELAY_BENCH_SMAPS:-}" ] || cp /proc/"$BRIDGE_PID"/smaps "$RELAY_BENCH_SMAPS"
report_rss
rss=$RSS
cold_warnings=$(grep -c -E '^[^ ]+ (warning|error|critical) ' "$WORK/bridge.log" || true)
logins_summary "$from_log"

if [ "$IDLE" -gt 0 ]; then
  from=$(ticks "$BRIDGE_PID")
  sleep "$IDLE"
  idle_t=$(( $(ticks "$BRIDGE_PID") - from ))
  printf '  idle     %s s: bridge CPU %s s = %s %% of one core\n' "$IDLE" "$(seconds "$idle_t")" "$(awk -v t="$idle_t" -v hz="$HZ" -v s="$IDLE" 'BEGIN {printf "%.2f", t * 100 / hz / s}')"
  # Accounts that read nothing for 10 to 20 s hold no XML parser (docs/operations.md).
  report_rss
fi

# shellcheck disable=SC2046
from_log=$(log_size) from_bridge=$(ticks "$BRIDGE_PID") start_ns=$(date +%s%N)
restart_server
# shellcheck disable=SC2046
measure restart "$start_ns" "$from_log" "$from_bridge" "$(ticks $(server_pids))"
restart_s=$ELAPSED_S
logins_summary "$from_log"

stop_ns=$(date +%s%N)
kill -TERM "$BRIDGE_PID"
wait "$BRIDGE_PID" 2>/dev/null || true
printf '  stop     every stream closed and the bridge gone %s s after SIGTERM\n' "$(awk -v n="$(( $(date +%s%N) - stop_ns ))" 'BEGIN {printf "%.1f", n / 1e9}')"
# shellcheck disable=SC2046
from_log=$(log_size) from_server=$(ticks $(server_pids)) start_ns=$(date +%s%N)
start_bridge
measure warm "$start_ns" "$from_log" 0 "$from_server"
logins_summary "$from_log"

goal() { awk -v v="$1" -v g="$2" 'BEGIN {print (v <= g) ? "met" : "NOT met"}'; }
printf 'goals (issue 43): cold start <= 60 s: %s; RSS <= 600 MB: %s; warnings <= 10: %s (%s); again after a server restart <= 30 s: %s\n' \
  "$(goal "$cold_s" 60)" "$(goal "$rss" 600)" "$(goal "$cold_warnings" 10)" "$cold_warnings" "$(goal "$restart_s" 30)"
