#!/usr/bin/env bash
# OMEMO benchmark (issue 41, "Measure"): FIFO -> account -> phone and the phone's replies
# back, `encryption = "required"` against `"none"` alternated in one run, against a
# throwaway Prosody (mod_pep) on 127.0.0.1. The phone is slixmpp-omemo (the tests' venv,
# made by scripts/test.sh). Prints one JSON line per part and run, then the table.
#
# usage: Benchmarks/relay/omemo.sh [N] [RUNS]    (defaults: N=500, RUNS=3)
# environment:
#   RELAY_BENCH_BIN   use this xmpp-bridge binary instead of building .build/release/xmpp-bridge
#   OMEMO_BENCH_PY    a Python with slixmpp-omemo (default .build/test-venv/bin/python)
#   OMEMO_BENCH_KEEP=1  keep the temporary folder (bridge logs, configs)
#   OMEMO_BENCH_LOG_LEVEL  the bridge's --log-level (default info; debug shows each delivery)
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail
N=${1:-500}
RUNS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
say() { printf '%s\n' "$*" >&2; }
die() { say "omemo.sh: $*"; exit 1; }
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"
PY=${OMEMO_BENCH_PY:-$ROOT/.build/test-venv/bin/python}
"$PY" -c 'import slixmpp_omemo' 2>/dev/null || die "$PY has no slixmpp-omemo (run scripts/test.sh once, or set OMEMO_BENCH_PY)"
command -v strace >/dev/null || die "strace not found (apt-get install strace)"
bench_bridge_binary
WORK=$(mktemp -d /tmp/omemo-bench.XXXXXX)
cleanup() {
  prosody_stop || true
  [ "${OMEMO_BENCH_KEEP:-0}" = 1 ] && say "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
PROSODY_PEP=1 prosody_start_with_passwords "$WORK/prosody" 0 home bob || die "prosody did not start"
cp "$WORK/prosody/home.password" "$WORK/prosody/bob.password" "$WORK/"
say "bridge: $BIN ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown))"
"$PY" "$HERE/omemo_bench.py" --bridge "$BIN" --dir "$WORK" --port "$C2S_PORT" --ca-file "$CA_FILE" -n "$N" --runs "$RUNS" --strace --server-pid "$PROSODY_PID" ${OMEMO_BENCH_ARGS:-}
