#!/usr/bin/env bash
# Installs xmpp-bridge as a systemd service (run as root from the repository):
# builds the release binary, installs it as /usr/local/bin/xmpp-bridge, creates the
# system user and group xmpp-bridge, /etc/xmpp-bridge (with bridge.toml.example as
# bridge.toml if none exists) and the unit. Then: systemctl enable --now xmpp-bridge
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root (sudo $0)" >&2; exit 1; }
bash scripts/install-prerequisites.sh build
scripts/build-release.sh
install -m 0755 "$(swift build -c release --show-bin-path)/xmpp-bridge" /usr/local/bin/xmpp-bridge
getent group xmpp-bridge >/dev/null || groupadd --system xmpp-bridge
getent passwd xmpp-bridge >/dev/null ||
  useradd --system --gid xmpp-bridge --home-dir /var/lib/xmpp-bridge --no-create-home --shell /usr/sbin/nologin xmpp-bridge
install -d -m 0750 -g xmpp-bridge /etc/xmpp-bridge
if [ ! -e /etc/xmpp-bridge/bridge.toml ]; then
  install -m 0640 -g xmpp-bridge bridge.toml.example /etc/xmpp-bridge/bridge.toml
  echo "edit /etc/xmpp-bridge/bridge.toml (accounts, password files readable by group xmpp-bridge), then:" >&2
fi
install -m 0644 contrib/systemd/xmpp-bridge.service /etc/systemd/system/xmpp-bridge.service
systemctl daemon-reload 2>/dev/null || true
echo "systemctl enable --now xmpp-bridge" >&2
