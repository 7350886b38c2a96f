#!/usr/bin/env bash
# libFuzzer over every parser of peer or user input (issue 13): the XML stream with
# stanza decoding, JIDs, DNS SRV answers, SCRAM server messages, bridge.toml, socket lines.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   defaults: 10 s each (what .ci/run does), every target; e.g. `scripts/fuzz.sh 1800 xml`
#   for a long run. Seeds: Fuzz/corpus/TARGET (read only); what a run finds is kept in
#   .build-fuzz/corpus/TARGET; a crash leaves its input in .build-fuzz/crashes and fails.
# environment: FUZZ_RUNS=N stops each target after N inputs instead of after the time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prerequisites.sh build
seconds=${1:-10}
shift || true
targets=${*:-xml jid dns scram config socket}

# The whole bridge built with libFuzzer and AddressSanitizer: the FUZZING flag swaps its
# `main` for libFuzzer's entry point (Sources/Bridge/Fuzzing).
swift build --scratch-path .build-fuzz -c release --product xmpp-bridge \
  -Xswiftc -DFUZZING -Xswiftc -parse-as-library -Xswiftc -sanitize=fuzzer,address >&2
binary=.build-fuzz/release/xmpp-bridge
mkdir -p .build-fuzz/crashes
status=0
for target in $targets; do
  [ -d "Fuzz/corpus/$target" ] || { echo "fuzz.sh: unknown target $target" >&2; exit 2; }
  found=.build-fuzz/corpus/$target
  mkdir -p "$found"
  log=.build-fuzz/$target.log
  limit=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
  # bridge.toml goes through TOMLKit's C++ toml++ and Foundation's file reading, both of
  # which leak a little per parse (their allocations, not ours): leaks are not checked there.
  asan=${ASAN_OPTIONS:-}
  if [ "$target" = config ]; then
    limit+=(-detect_leaks=0)
    asan="detect_leaks=0${asan:+:$asan}"
  fi
  if ASAN_OPTIONS=$asan XMPP_BRIDGE_FUZZ=$target "$binary" "${limit[@]}" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix=".build-fuzz/crashes/$target-" "$found" "Fuzz/corpus/$target" >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
    tail -n 40 "$log" >&2
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  echo "fuzz $target: $result, ${runs:-?} executions (${rate:-?}/s), corpus $(ls "$found" | wc -l) new inputs"
done
exit $status
