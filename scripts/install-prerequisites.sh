#!/usr/bin/env bash
# Installs the system packages xmpp-bridge builds and tests against (Debian/Ubuntu).
# Swift itself must already be on PATH.
set -euo pipefail

packages=(libxml2-dev libssl-dev libsqlite3-dev pkg-config openssl prosody ejabberd prometheus prometheus-alertmanager systemd)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
# The tests start their own servers on loopback: the packages' system services (Prosody,
# ejabberd on 5222 and more) are not started by the installation.
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
fi
status=0
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || status=$?
[ -n "$policy" ] && $sudo rm -f "$policy"
exit $status
