#!/usr/bin/env bash
# The main job on the embedded default: a throwaway Prosody on 127.0.0.1, no account needed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prerequisites.sh demo
swift build --product xmpp-bridge
exec .build/debug/xmpp-bridge demo "$@"
