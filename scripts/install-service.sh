#!/usr/bin/env bash
# Installs xmpp-bridge as a systemd service on this machine (Debian): builds the Debian
# package (scripts/package.sh) and installs it with apt-get, which brings the binary, the
# system user xmpp-bridge, the unit and /etc/xmpp-bridge/bridge.toml. Then edit that file
# and: sudo systemctl enable --now xmpp-bridge
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
deb=$(scripts/package.sh "$work" | tail -n1)
$sudo apt-get install -y "$deb"
echo "edit /etc/xmpp-bridge/bridge.toml (accounts; password files readable by group xmpp-bridge), then: sudo systemctl enable --now xmpp-bridge" >&2
