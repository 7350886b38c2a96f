#!/usr/bin/env bash
# Several instances on one PostgreSQL state (issue 26, "Measure"): ACCOUNTS accounts on one
# Prosody, INSTANCES `xmpp-bridge run` processes (release build) sharing one throwaway
# PostgreSQL, all started at once.
#   1. start: how long until every account is online (each on exactly one instance),
#      and how the accounts are spread. Goal: 1,000 accounts on 3 instances online <= 60 s.
#   2. failover, KILLS times: kill -9 the instance that owns the most accounts, time until
#      every one of its accounts is online on another instance (lease_ttl plus the new
#      logins); then start it again and wait until it owns its share once more (a graceful
#      give-back by the others). Reports p50 and max.
#
# usage: Benchmarks/relay/cluster.sh [ACCOUNTS=1000] [INSTANCES=3] [KILLS=20]
# environment: RELAY_BENCH_BIN (default .build/release/xmpp-bridge, built if missing),
#   RELAY_BENCH_TTL (lease_ttl, default 10s: the configuration's default)
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail
ACCOUNTS=${1:-1000}
INSTANCES=${2:-3}
KILLS=${3:-20}
TTL=${RELAY_BENCH_TTL:-10s}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
# shellcheck source=postgres.sh
. "$HERE/postgres.sh"
bench_begin cluster
bench_bridge_binary
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
WORK=$(mktemp -d /tmp/relay-cluster.XXXXXX)
chmod 755 "$WORK"
declare -a PIDS=()
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do [ -n "$pid" ] && stop_pid "$pid"; done
  prosody_stop || true
  postgres_stop || true
  if [ "${RELAY_BENCH_KEEP:-0}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
  exit "$status"
}
trap cleanup EXIT INT TERM

postgres_start
prosody_start "$WORK/server" 0 >&2
say "registering $ACCOUNTS accounts (prosodyctl, 8 at a time)"
seq -f 's%04g' 1 "$ACCOUNTS" | xargs -P 8 -I{} prosodyctl --config "$WORK/server/prosody.cfg.lua" register {} "$XMPP_DOMAIN" pw >/dev/null
printf 'pw\n' > "$WORK/pw"
chmod 600 "$WORK/pw"
URL="postgresql://bridge@127.0.0.1:$PG_PORT/bridge"
for n in $(seq 1 "$INSTANCES"); do
  dir=$WORK/node-$n
  mkdir -p "$dir"
  {
    printf '[bridge]\nstate = "%s"\nstate_password_file = "%s"\ninstance = "node-%s"\nlease_ttl = "%s"\ncontrol_socket = "%s"\n' \
      "$URL" "$PG_PASSWORD_FILE" "$n" "$TTL" "$dir/bridge.control"
    for i in $(seq -f '%04g' 1 "$ACCOUNTS"); do
      printf '\n[accounts.s%s]\njid = "s%s@%s"\nresource = "bridge"\npassword_file = "%s"\nhost = "127.0.0.1"\nport = %s\nca_file = "%s"\n' \
        "$i" "$i" "$XMPP_DOMAIN" "$WORK/pw" "$C2S_PORT" "$CA_FILE"
    done
  } > "$dir/bridge.toml"
done

start_instance() {  # N
  local dir=$WORK/node-$1
  ( cd "$dir" && exec "$BIN" run --config "$dir/bridge.toml" --log-level warning >> "$dir/bridge.log" 2>&1 ) &
  PIDS[$1]=$!
}

# Every instance's `status --json`: accounts connected somewhere, connections in all, and
# "node-N:connected" per instance; one line.
census() {
  python3 - "$BIN" "$WORK" "$INSTANCES" <<'PY'
import json, subprocess, sys
binary, work, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
connected, seen = {}, set()
for n in range(1, count + 1):
    try:
        out = subprocess.run([binary, "status", "--json", "--config", f"{work}/node-{n}/bridge.toml"], capture_output=True, timeout=20).stdout
        view = json.loads(out)
    except Exception:
        continue  # killed, or still starting
    for t in view.get("transports", []) if isinstance(view, dict) else view:
        if t["connected"]:
            connected[n] = connected.get(n, 0) + 1
            seen.add(t["name"])
print(len(seen), sum(connected.values()), " ".join(f"node-{n}:{connected.get(n, 0)}" for n in range(1, count + 1)))
PY
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Until every account is connected exactly once (or `limit` ms pass); sets WAITED_MS and
# LAST_CENSUS.
wait_all_online() {  # START_MS LIMIT_MS
  local line unique total
  while :; do
    line=$(census)
    read -r unique total _ <<<"$line"
    if [ "$unique" -ge "$ACCOUNTS" ] && [ "$total" -eq "$unique" ]; then break; fi
    [ $(( $(now_ms) - $1 )) -lt "$2" ] || { say "not all online: $line"; break; }
    sleep 0.2
  done
  LAST_CENSUS=$line
  WAITED_MS=$(( $(now_ms) - $1 ))
}

say "starting $INSTANCES instances with $ACCOUNTS accounts (lease_ttl $TTL)"
started=$(now_ms)
for n in $(seq 1 "$INSTANCES"); do start_instance "$n"; done
wait_all_online "$started" 300000
online_ms=$WAITED_MS
read -r _ _ spread <<<"$LAST_CENSUS"
largest=$(tr ' ' '\n' <<<"$spread" | cut -d: -f2 | sort -n | tail -n 1)
printf 'cluster: %s accounts on %s instances (PostgreSQL %s, lease_ttl %s)\n' "$ACCOUNTS" "$INSTANCES" "$("$PG_BIN/postgres" --version | awk '{print $3}')" "$TTL"
printf '  all online      %.1f s after start   goal <= 60 s: %s\n' "$(awk -v m="$online_ms" 'BEGIN {print m / 1000}')" \
  "$(awk -v m="$online_ms" 'BEGIN {print (m <= 60000) ? "met" : "NOT met"}')"
printf '  spread          %s (largest %s%%)\n' "$spread" "$(( largest * 100 / ACCOUNTS ))"

failovers=()
for k in $(seq 1 "$KILLS"); do
  read -r _ _ spread <<<"$(census)"
  victim=$(tr ' ' '\n' <<<"$spread" | sort -t: -k2 -n | tail -n 1 | cut -d: -f1 | sed 's/node-//')
  kill -9 "${PIDS[$victim]}"
  killed=$(now_ms)
  wait "${PIDS[$victim]}" 2>/dev/null || true
  PIDS[$victim]=
  wait_all_online "$killed" 120000
  ms=$WAITED_MS
  failovers+=("$ms")
  say "kill $k: node-$victim; its accounts online elsewhere after $ms ms"
  start_instance "$victim"
  # Balanced again: the restarted instance runs some accounts, every account online once.
  back=$(now_ms)
  while :; do
    line=$(census)
    read -r unique total spread <<<"$line"
    mine=$(tr ' ' '\n' <<<"$spread" | grep "^node-$victim:" | cut -d: -f2)
    if [ "$unique" -ge "$ACCOUNTS" ] && [ "$total" -eq "$unique" ] && [ "${mine:-0}" -gt 0 ]; then break; fi
    [ $(( $(now_ms) - back )) -lt 180000 ] || { say "not balanced again: $line"; break; }
    sleep 0.5
  done
done
if [ "$KILLS" -gt 0 ]; then
  sorted=$(printf '%s\n' "${failovers[@]}" | sort -n)
  p50=$(sed -n "$(( (KILLS + 1) / 2 ))p" <<<"$sorted")
  max=$(tail -n 1 <<<"$sorted")
  printf '  failover        %s kills of the busiest instance: p50 %.1f s, max %.1f s (lease_ttl %s; all its accounts online elsewhere)\n' "$KILLS" \
    "$(awk -v m="$p50" 'BEGIN {print m / 1000}')" "$(awk -v m="$max" 'BEGIN {print m / 1000}')" "$TTL"
fi
for n in $(seq 1 "$INSTANCES"); do
  [ -n "${PIDS[$n]:-}" ] || continue
  printf '  node-%s          RSS %s MB, log lines at warning or above: %s\n' "$n" "$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/"${PIDS[$n]}"/status)" \
    "$(grep -c -E 'warning|error|critical' "$WORK/node-$n/bridge.log" || true)"
done
