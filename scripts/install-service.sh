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
# What this script installed before there was a package: the unit in /etc (it would
# override the package's) and the binary in /usr/local/bin. The configuration stays: the
# package keeps an existing /etc/xmpp-bridge/bridge.toml as it is (--force-confold).
if [ -f /etc/systemd/system/xmpp-bridge.service ] && grep -q '^ExecStart=/usr/local/bin/xmpp-bridge ' /etc/systemd/system/xmpp-bridge.service; then
  echo "replacing the unit and binary of an earlier install-service.sh" >&2
  $sudo rm -f /etc/systemd/system/xmpp-bridge.service /usr/local/bin/xmpp-bridge
fi
$sudo apt-get install -y -o Dpkg::Options::=--force-confold "$deb"
echo "edit /etc/xmpp-bridge/bridge.toml (accounts; password files readable by group xmpp-bridge), then: sudo systemctl enable --now xmpp-bridge" >&2
