#!/usr/bin/env bash
# The full test suite: pure, EmbeddedChannel and real-Prosody tiers.
# With CI=true a missing prerequisite fails the run instead of skipping tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prerequisites.sh
# slixmpp (PyPI), a second client implementation the tests read our vCard with, and
# slixmpp-omemo, the OMEMO phone of issue 41: in their own venv under .build, made once, at
# the versions the tests were written against.
venv=.build/test-venv
slixmpp=1.17.0
slixmpp_omemo=2.2.0
if [ "$("$venv/bin/python" -c 'import slixmpp, slixmpp_omemo; print(slixmpp.__version__, slixmpp_omemo.__version__)' 2>/dev/null)" != "$slixmpp $slixmpp_omemo" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "slixmpp==$slixmpp" "slixmpp-omemo==$slixmpp_omemo"
fi
export XMPP_BRIDGE_TEST_PYTHON=$PWD/$venv/bin/python
# The Prometheus alert rules shipped in contrib/ (issue 42): valid, and each alert firing
# when it should and quiet when it should not (promtool comes with Debian's prometheus).
promtool check rules contrib/prometheus/xmpp-bridge.rules.yml
promtool test rules contrib/prometheus/xmpp-bridge.rules.test.yml
# Every import must be a declared dependency of its target (the layers in Package.swift).
swift build --build-tests --explicit-target-dependency-import-check error
# At most this many test cases at once (6 unless XMPP_BRIDGE_TEST_WIDTH says otherwise).
# Unbounded, swift-testing starts every test at once: on a 2-core machine a hundred
# integration tests, each with its servers, daemons and clients, then shared the CPU, and
# tests with bounded waits failed for want of it. The fault matrix, one test at a time,
# holds one slot for the whole run; the others share the rest.
width=(--experimental-maximum-parallelization-width "${XMPP_BRIDGE_TEST_WIDTH:-6}")
# CI keeps only the end of the output, where a failure would be one line among thousands:
# a failed run repeats its failing tests' lines last.
run_tests() {
  local log status=0
  log=$(mktemp)
  swift test --skip-build "${width[@]}" "$@" 2>&1 | tee "$log" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "== what failed (repeated from above) =="
    grep -a -A4 "✘" "$log" | tail -120
  fi
  rm -f "$log"
  return "$status"
}
run_tests "$@"
# The whole suite ran its Prosody tiers on Prosody 0.12 (Debian oldstable; the fault matrix
# runs both releases itself): the same tests again on Prosody 13 (Debian stable), the one
# fixture's other release. ejabberd's tests and the matrix have run already.
if [ $# -eq 0 ]; then
  # The Debian package: built (lintian without errors), installed, checked and purged.
  scripts/test-package.sh
  XMPP_BRIDGE_TEST_PROSODY=13 run_tests --filter 'BridgeDaemonTests|XMPPIntegrationTests' --skip 'FaultMatrixIntegrationTests|[Ee]jabberd'
fi
