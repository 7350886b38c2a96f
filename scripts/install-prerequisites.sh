#!/usr/bin/env bash
# Installs the system packages xmpp-bridge needs (Debian/Ubuntu), for one use:
#   build  the build libraries (libxml2, OpenSSL 3, SQLite, libpq) and pkg-config
#   demo   build + Prosody and openssl: what `scripts/demo.sh` runs
#   test   demo + ejabberd, Prometheus (promtool), Alertmanager, PostgreSQL, systemd and python3-venv
#          (for slixmpp, a test peer, from PyPI): the full test
#          suite's servers and tools (the default; what CI runs)
# Swift itself must already be on PATH. Nothing installed here starts at boot: the tests
# and the demo start their own servers on loopback, so the services these packages (and
# their dependencies) enable are disabled again.
set -euo pipefail

use=${1:-test}
packages=(libxml2-dev libssl-dev libsqlite3-dev libpq-dev pkg-config)
case "$use" in
  build) ;;
  demo) packages+=(openssl prosody) ;;
  test) packages+=(openssl prosody ejabberd prometheus prometheus-alertmanager postgresql systemd python3-venv) ;;
  *) echo "usage: $0 [build|demo|test]" >&2; exit 2 ;;
esac

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
# The services are not started by the installation either (policy-rc.d, removed on any exit).
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  trap '$sudo rm -f "$policy"' EXIT
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
fi
# Debian's postgresql would make a cluster of its own ("main") that nothing uses: the
# tests make theirs.
if [[ " ${missing[*]} " == *" postgresql "* ]]; then
  $sudo mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.d/xmpp-bridge.conf >/dev/null
fi
# Every symlink under /etc/systemd/system (wants, requires, aliases), sorted.
links() { { find /etc/systemd/system -type l 2>/dev/null || true; } | LC_ALL=C sort; }
before=$(links)
status=0
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || status=$?
# What the installation enabled for the next boot (the packages' own services and their
# dependencies', such as epmd for ejabberd) is undone: exactly the links it made.
while IFS= read -r link; do
  [ -n "$link" ] || continue
  echo "not starting at boot: $(basename "$link")" >&2
  $sudo rm -f "$link"
done < <(LC_ALL=C comm -13 <(printf '%s\n' "$before") <(links))
exit $status
