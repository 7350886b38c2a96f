#!/usr/bin/env bash
# Archive search benchmark (issue 25, "Measure": `history --search` over 1,000,000 archived
# messages <= 100 ms). A state database's archive is filled with N chat-like messages
# (archive_fill.py: a Zipf vocabulary, three channels, one message a second), then the
# real command is timed, wall clock from exec to exit, R times per search (median, max):
# a rare word, a medium one, a frequent one, the most common one, two words, and a
# prefix; each ranked (best first, the command's order for a search) and, for the HTTP
# route's order, newest first. Twice: with no daemon (the command opens the database
# itself) and with the daemon running (through its control socket). Then `history`
# without a search, for comparison.
#
# usage: Benchmarks/relay/history.sh [N] [R]     (defaults: N=1000000, R=5)
# environment: RELAY_BENCH_BIN (as run.sh), RELAY_BENCH_KEEP=1 (keep the folder)
# Nothing listens on the network: the daemon has one socket local in the work folder.
set -euo pipefail

N=${1:-1000000}
R=${2:-5}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
BENCH_NAME=history.sh
command -v python3 >/dev/null || die "python3 not found"
bench_bridge_binary

WORK=$(mktemp -d /tmp/archive-history.XXXXXX)
RELAY_PID=
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [ -n "${RELAY_PID:-}" ] && stop_pid "$RELAY_PID"
  if [ "${RELAY_BENCH_KEEP:-0}" = 1 ]; then say "kept $WORK"; else rm -rf "$WORK"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cp "$BIN" "$WORK/xmpp-bridge"
BIN=$WORK/xmpp-bridge
cat > "$WORK/bridge.toml" <<TOML
[bridge]
state = "bridge.sqlite"
control_socket = "bridge.control"

[local.ops]
kind = "socket"
path = "ops.sock"

[channels.ops]
members = [ { local = "ops", direction = "inout" } ]
[channels.dev]
members = [ { local = "ops", direction = "inout" } ]
[channels.alerts]
members = [ { local = "ops", direction = "inout" } ]
TOML

start_daemon() {
  (cd "$WORK" && exec ./xmpp-bridge run --config bridge.toml --log-level info) > "$WORK/daemon.log" 2>&1 &
  RELAY_PID=$!
  wait_for_line "$WORK/daemon.log" "listening" "$RELAY_PID" 30 || { cat "$WORK/daemon.log" >&2; die "the daemon did not start"; }
  for _ in $(seq 100); do [ -S "$WORK/bridge.control" ] && return 0; sleep 0.1; done
  die "no control socket"
}

# The database with its tables (a daemon's first start makes them), then the archive.
start_daemon
stop_pid "$RELAY_PID"; RELAY_PID=
say "filling the archive with $N messages"
FILL=$(python3 "$HERE/archive_fill.py" "$WORK/bridge.sqlite" -n "$N")
say "  $FILL"
# The table: each search R times, wall clock of the whole command (exec to exit).
table() {  # TITLE
  python3 - "$R" "$WORK" "$FILL" "$1" <<'PY'
import json, statistics, subprocess, sys, time
runs, work, fill, title = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
hits = fill["hits"]
rows = [
    (f"--search {fill['rare']} (rare)", hits[fill["rare"]], ["--search", fill["rare"], "--limit", "20"]),
    (f"--search {fill['medium']} (medium)", hits[fill["medium"]], ["--search", fill["medium"], "--limit", "20"]),
    (f"--search {fill['frequent']} (frequent)", hits[fill["frequent"]], ["--search", fill["frequent"], "--limit", "20"]),
    (f"--search {fill['common']} (most common)", hits[fill["common"]], ["--search", fill["common"], "--limit", "20"]),
    ("--search 'disk full' (two words)", hits["disk"], ["--search", "disk full", "--limit", "20"]),
    (f"--search {fill['medium'][:4]}* (prefix)", "-", ["--search", fill["medium"][:4] + "*", "--limit", "20"]),
    (f"ops --search {fill['frequent']}", "-", ["ops", "--search", fill["frequent"], "--limit", "20"]),
    ("ops --since 1h (newest 100)", "-", ["ops", "--since", "1h"]),
    ("(newest 100)", "-", []),
]
print(f"\n{title}")
print(f"{'history …':<40} {'hits':>8} {'median ms':>10} {'max ms':>8} {'lines':>6}")
for label, count, args in rows:
    times, lines = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(["./xmpp-bridge", "history", "--config", "bridge.toml", *args], cwd=work, capture_output=True, text=True)
        times.append((time.perf_counter() - start) * 1000)
        if out.returncode != 0:
            sys.exit(f"history {args} failed: {out.stderr.strip()}")
        lines = len(out.stdout.splitlines())
    print(f"{label:<40} {count!s:>8} {statistics.median(times):>10.1f} {max(times):>8.1f} {lines:>6}")
PY
}

say "timing (no daemon: the command opens the database)"
table "no daemon running (N=$N, $R runs each; wall clock of the whole command)"
start_daemon
say "timing (daemon running: through its control socket)"
table "daemon running (N=$N, $R runs each; wall clock of the whole command)"
printf '\nmachine: %s CPUs, load %s; xmpp-bridge from %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")"
