#!/usr/bin/env bash
# HTTP ingress benchmark (issue 11, "Measure"): Alertmanager webhooks into xmpp-bridge's
# HTTP ingress and into prometheus-xmpp-alerts (PyPI; the baseline), both relaying to the
# same phone-side account on one throwaway Prosody (127.0.0.1, mod_mam off), same run:
#   load    N webhooks, C requests in flight
#   paced   N/2 webhooks at R requests/s (latency without queueing)
#   kill    N webhooks, C in flight, the relay killed (-9) by the load driver once N/4 were
#           accepted, and restarted at once (this script waits for it to die);
#           the sender retries refused requests and 5xx answers as Alertmanager does;
#           lost = answered 2xx, never arrived
# Each webhook carries one firing alert; the table is http_load.py's.
#
# usage: Benchmarks/relay/http.sh [N] [C] [R]     (defaults: N=1000, C=8, R=100)
# environment: RELAY_BENCH_BIN, RELAY_BENCH_VENV, RELAY_BENCH_KEEP=1 (as run.sh)
# Only 127.0.0.1 is used; only processes this script started are signalled, by pid.
set -euo pipefail

N=${1:-1000}
C=${2:-8}
R=${3:-100}
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
cd "$ROOT"
# shellcheck source=prosody.sh
. "$HERE/prosody.sh"

bench_begin http.sh
bench_bridge_binary
bench_slixmpp
if ! "$PY" -c 'import prometheus_xmpp, aiohttp' 2>/dev/null; then
  say "installing prometheus-xmpp-alerts into the venv"
  "$(dirname "$PY")/pip" install --quiet --disable-pip-version-check prometheus-xmpp-alerts aiohttp >&2
fi
PXA_VERSION=$("$PY" -c 'import importlib.metadata as m; print(m.version("prometheus-xmpp-alerts"))')

WORK=$(mktemp -d /tmp/relay-http.XXXXXX)
RESULTS=$WORK/results.jsonl
cp "$BIN" "$WORK/xmpp-bridge"
BIN=$WORK/xmpp-bridge
RELAY_PID=
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

prosody_start "$WORK/prosody" 0 phone:pw bridge:pw pxa:pw
printf 'pw\n' > "$WORK/pw"; chmod 600 "$WORK/pw"
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" > "$WORK/token"; chmod 600 "$WORK/token"
read -r HTTP_PORT PXA_PORT < <(_prosody_ports)

cat > "$WORK/bridge.toml" <<TOML
[bridge]
state = "bridge.sqlite"
control_socket = "bridge.control"

[accounts.bridge]
jid = "bridge@$XMPP_DOMAIN"
resource = "bench"
password_file = "pw"
host = "127.0.0.1"
port = $C2S_PORT
ca_file = "$CA_FILE"
catch_up = "off"

[local.web]
kind = "http"
listen = "127.0.0.1:$HTTP_PORT"
token_file = "token"

[channels.alerts]
format = "{body}"
members = [ { local = "web" }, { account = "bridge", jid = "phone@$XMPP_DOMAIN", direction = "out" } ]
TOML
cat > "$WORK/xmpp-alerts.yml" <<YAML
jid: pxa@$XMPP_DOMAIN/bench
password: pw
to_jid: phone@$XMPP_DOMAIN
listen_address: 127.0.0.1
listen_port: $PXA_PORT
YAML

start_bridge() {
  "$BIN" run --config "$WORK/bridge.toml" --log-level info >>"$WORK/bridge.log" 2>&1 &
  RELAY_PID=$!
  wait_for_line "$WORK/bridge.log" "http ingress listening" "$RELAY_PID" 30
  wait_for_line "$WORK/bridge.log" "] online" "$RELAY_PID" 30
}
start_pxa() {
  PXA_HOST=127.0.0.1 PXA_PORT=$C2S_PORT PXA_CA=$CA_FILE "$PY" "$HERE/pxa_run.py" --config "$WORK/xmpp-alerts.yml" >>"$WORK/pxa.log" 2>&1 &
  RELAY_PID=$!
  wait_for_line "$WORK/pxa.log" "Session started" "$RELAY_PID" 30
}
load() {  # LABEL URL TOKEN ARGS...
  local label=$1 url=$2 token=$3; shift 3
  say "run: $label"
  "$PY" "$HERE/http_load.py" run --label "$label" --url "$url" ${token:+--token "$token"} --port "$C2S_PORT" \
    --ca-file "$CA_FILE" --receiver "phone@$XMPP_DOMAIN" --receiver-password-file "$WORK/pw" --relay-pid "$RELAY_PID" "$@" >>"$RESULTS"
}
killer() {  # restart FUNCTION: once the load driver has killed the relay, start it again
  while _prosody_alive "$RELAY_PID"; do sleep 0.01; done
  say "relay $RELAY_PID killed; restarting"
  "$1"
}

for relay in bridge pxa; do
  if [ $relay = bridge ]; then
    start_bridge; URL=http://127.0.0.1:$HTTP_PORT/hooks/alertmanager/alerts; TOK=$TOKEN; START=start_bridge
  else
    start_pxa; URL=http://127.0.0.1:$PXA_PORT/alert; TOK=; START=start_pxa
  fi
  load "$relay load" "$URL" "$TOK" -n "$N" --concurrency "$C"
  load "$relay paced" "$URL" "$TOK" -n $((N / 2)) --concurrency "$C" --rate "$R"
  # The kill run: the restart happens in this shell (RELAY_PID must follow it).
  killer "$START" &
  KILLER=$!
  "$PY" "$HERE/http_load.py" run --label "$relay kill -9" --url "$URL" ${TOK:+--token "$TOK"} --port "$C2S_PORT" \
    --ca-file "$CA_FILE" --receiver "phone@$XMPP_DOMAIN" --receiver-password-file "$WORK/pw" \
    -n "$N" --concurrency "$C" --retry --idle-timeout 20 --relay-pid "$RELAY_PID" --kill-after $((N / 4)) >>"$RESULTS"
  wait "$KILLER"
  # The restarted relay is the killer's child: find it by its command line, ours only.
  if [ $relay = bridge ]; then pattern="$BIN run --config $WORK/bridge.toml"; else pattern="pxa_run.py --config $WORK/xmpp-alerts.yml"; fi
  RELAY_PID=$(pgrep -f -- "$pattern" | head -1 || true)
  stop_pid "$RELAY_PID"; RELAY_PID=
done

echo "HTTP ingress: Alertmanager webhooks (1 alert each) → relay → phone@ on Prosody $(dpkg-query -W -f='${Version}' prosody 2>/dev/null), N=$N, C=$C, paced at $R/s"
echo "bridge: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), release; baseline: prometheus-xmpp-alerts $PXA_VERSION (slixmpp $SLIXMPP_VERSION)"
"$PY" "$HERE/http_load.py" report "$RESULTS"
