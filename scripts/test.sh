#!/usr/bin/env bash
# The full test suite: pure, EmbeddedChannel and real-Prosody tiers.
# With CI=true a missing prerequisite fails the run instead of skipping tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prerequisites.sh
swift build --build-tests
swift test --skip-build "$@"
