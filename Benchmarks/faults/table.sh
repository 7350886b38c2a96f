#!/usr/bin/env bash
# The fault table (issue 39, "Measure"): runs the fault matrix (FaultMatrixIntegrationTests:
# every path users run × every server fault × Prosody 0.12, Prosody 13 and ejabberd 24.12,
# with and without the server's uptime/version modules) RUNS times and prints, per (path,
# fault) and server, the worst of the runs: lost by the bridge (+ lost by the server, where
# its archive shows it) / twice / seconds until the bridge was online again / seconds until
# the last message arrived.
#
# usage: Benchmarks/faults/table.sh [RUNS] [FILTER]   (defaults: 3, every cell)
#   FILTER narrows the test filter, e.g. 'prosody13' or 'ejabberd\('.
# The lines of each run are kept in bench-results/faults-N.log (earlier runs' are removed).
# TEST_BINARY=path/to/xmpp-bridgePackageTests.xctest runs a copy of a built test bundle
# (with the xmpp-bridge binary beside it) instead of building: the tree can change meanwhile.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
filter="FaultMatrixIntegrationTests${2:+/$2}"
mkdir -p bench-results
rm -f bench-results/faults-*.log
[ -n "${TEST_BINARY:-}" ] || swift build --build-tests >&2
for run in $(seq 1 "$runs"); do
  echo "run $run of $runs" >&2
  if [ -n "${TEST_BINARY:-}" ]; then
    "$TEST_BINARY" --testing-library swift-testing --filter "$filter" 2>&1 | grep '^\[fault-matrix\] server=' > "bench-results/faults-$run.log" || true
  else
    swift test --skip-build --filter "$filter" 2>&1 | grep '^\[fault-matrix\] server=' > "bench-results/faults-$run.log" || true
  fi
done
cat bench-results/faults-*.log | python3 -c '
import re, sys
cells = {}
order = {"fifo": 0, "link": 1, "rooms": 2}
faults = ["streams_closed", "TCP_dropped", "killed_-9", "stopped_and_started"]
servers = []
for line in sys.stdin:
    f = dict(re.findall(r"(\S+?)=(\S+)", line))
    server = f["server"].replace("_", " ") + (" (no uptime/version)" if f.get("info") == "off" else "")
    if server not in servers: servers.append(server)
    key = (f["path"], f["fault"], server)
    seconds = lambda v: float("inf") if v == "never" else float(v)
    old = cells.get(key, (0, 0, 0.0, 0.0, 0, 0))
    cells[key] = (max(old[0], int(f["lost"])), max(old[1], int(f["twice"])), max(old[2], seconds(f["online"])), max(old[3], seconds(f["last"])), old[4] + 1, max(old[5], int(f.get("server-lost", 0))))
print("| path | fault | " + " | ".join(servers) + " |")
print("| --- | --- | " + " | ".join("---" for _ in servers) + " |")
rows = sorted({(p, fl) for (p, fl, _) in cells}, key=lambda k: (order.get(k[0], 9), faults.index(k[1]) if k[1] in faults else 9))
fmt = lambda s: "never" if s == float("inf") else "%.1f s" % s
for path, fault in rows:
    out = []
    for server in servers:
        c = cells.get((path, fault, server))
        if c is None:
            out.append("-")
            continue
        lost = "%d" % c[0] + (" (+%d by the server)" % c[5] if c[5] else "")
        out.append("%s / %d / %s / %s" % (lost, c[1], fmt(c[2]), fmt(c[3])))
    print("| %s | %s | %s |" % (path, fault.replace("_", " "), " | ".join(out)))
runs = sorted({c[4] for c in cells.values()})
print("\n(lost by the bridge (+ lost by the server) / twice / online again / last message; the worst of %s run(s) per cell)" % "-".join(map(str, runs)))
'
