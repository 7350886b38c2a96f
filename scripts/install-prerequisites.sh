#!/usr/bin/env bash
# Installs the system packages xmpp-bridge needs (Debian/Ubuntu), for one use:
#   build  the build libraries (libxml2, OpenSSL 3, SQLite, libpq, libomemo-c) and pkg-config
#   package build + what scripts/package.sh uses to make the .deb (dpkg-dev, fakeroot,
#          lintian, python3)
#   demo   build + Prosody (the system's, 0.12 on Debian 12) and openssl: what
#          `scripts/demo.sh` runs
#   test   demo + package + ejabberd 24.12, Prometheus (promtool), Alertmanager, PostgreSQL, systemd and
#          python3-venv (for slixmpp, a test peer, from PyPI), and Prosody 13 beside the
#          system's 0.12 (in /opt/prosody-13): the full test suite's servers and tools (the
#          default; what CI runs)
# Debian 12 (bookworm) has ejabberd 24.12 and Prosody 13 in bookworm-backports only: for
# `test` that source is added (when missing). Its packages keep priority 100, so nothing
# else is taken from it: ejabberd (with the Erlang libraries it needs) is installed from it
# explicitly, and Prosody 13 is unpacked, not installed, so dpkg keeps Prosody 0.12:
# /opt/prosody-13/usr/bin/prosody and prosodyctl run 13 with its own modules and
# prosody-modules.
# Swift itself must already be on PATH. Nothing installed here starts at boot: the tests
# and the demo start their own servers on loopback, so the services these packages (and
# their dependencies) enable are disabled again.
set -euo pipefail

use=${1:-test}
packages=(libxml2-dev libssl-dev libsqlite3-dev libpq-dev libomemo-c-dev pkg-config)
backports=false
case "$use" in
  build) ;;
  package) packages+=(dpkg-dev fakeroot lintian python3 binutils xz-utils) ;;
  demo) packages+=(openssl prosody) ;;
  test)
    packages+=(dpkg-dev fakeroot lintian python3 binutils xz-utils)
    packages+=(openssl prosody prometheus prometheus-alertmanager postgresql systemd python3-venv sqlite3)
    backports=true
    ;;
  *) echo "usage: $0 [build|package|demo|test]" >&2; exit 2 ;;
esac
prosody13=/opt/prosody-13

# Whether a package is installed (at a version starting with $2, a regular expression).
installed() {
  dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | grep -q "^install ok installed ${2:-}"
}
missing=()
for package in "${packages[@]}"; do
  installed "$package" || missing+=("$package")
done
ejabberd=false
prosody13_missing=false
if $backports; then
  # ejabberd keeps its data in SQLite (erlang-p1-sqlite3), as its own start-up warning
  # recommends for small servers: its Mnesia archive loses its last writes to SIGKILL.
  { installed ejabberd '24\.12' && installed erlang-p1-sqlite3; } || ejabberd=true
  # The versions file is written last, once the scripts point at the unpacked tree.
  grep -qs '^prosody 13\.0\.' "$prosody13/versions" || prosody13_missing=true
fi
if [ ${#missing[@]} -eq 0 ] && ! $ejabberd && ! $prosody13_missing; then
  exit 0
fi

if $ejabberd; then missing+=("ejabberd 24.12 with erlang-p1-sqlite3 (bookworm-backports)"); fi
if $prosody13_missing; then missing+=("prosody 13 (bookworm-backports, into $prosody13)"); fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "installing: ${missing[*]}" >&2
policy=""
work=""
trap '$sudo rm -f ${policy:+"$policy"}; rm -rf ${work:+"$work"}' EXIT
if $backports && ! grep -qsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; then
  echo "adding bookworm-backports to apt's sources" >&2
  echo "deb http://deb.debian.org/debian bookworm-backports main" | $sudo tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
fi
$sudo apt-get update -qq
# The services are not started by the installation either (policy-rc.d, removed on any exit).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
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
apt_install() {
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" >&2
}
# From the system's release first (Prosody 0.12 among them); only then ejabberd from
# backports: -t raises every backports package, so it gets ejabberd alone.
plain=()
for package in "${missing[@]}"; do
  case "$package" in ejabberd* | prosody\ 13*) ;; *) plain+=("$package") ;; esac
done
if [ ${#plain[@]} -gt 0 ]; then
  apt_install "${plain[@]}" || status=$?
fi
# The pids of the running epmd daemons (Erlang's port mapper), sorted.
epmds() {
  local proc
  for proc in /proc/[0-9]*; do
    [ "$(cat "$proc/comm" 2>/dev/null)" = epmd ] && echo "${proc#/proc/}"
  done | LC_ALL=C sort
  return 0
}
if [ $status -eq 0 ] && $ejabberd; then
  # Upgrading from 23.01 runs its prerm's `ejabberdctl status`, which starts an epmd on every
  # interface (port 4369) and leaves it: the one that appears is stopped again.
  epmd_before=$(epmds)
  apt_install -t bookworm-backports ejabberd erlang-p1-sqlite3 || status=$?
  for pid in $(LC_ALL=C comm -13 <(printf '%s\n' "$epmd_before") <(epmds)); do
    echo "stopping the epmd the installation started (pid $pid)" >&2
    $sudo kill "$pid" 2>/dev/null || true
  done
  if [ $status -eq 0 ] && ! installed ejabberd '24\.12'; then
    echo "ejabberd is $(dpkg-query -W -f='${Version}' ejabberd), not 24.12" >&2
    status=1
  fi
fi
# Prosody 13 beside 0.12: prosody and prosody-modules from backports unpacked into one
# tree (no maintainer scripts, no service; the Lua libraries are 0.12's), its two scripts
# pointed at its code and modules. The tests give every server its own --config and
# data_path (without --config it reads the system's /etc/prosody, as 0.12 does).
if [ $status -eq 0 ] && $prosody13_missing; then
  work=$(mktemp -d)
  chmod 755 "$work"
  # apt downloads as _apt where it can write.
  [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1 && chown _apt "$work"
  (cd "$work" && apt-get download -qq prosody/bookworm-backports prosody-modules/bookworm-backports) >&2 || status=$?
  if [ $status -eq 0 ]; then
    $sudo rm -rf "$prosody13"
    $sudo mkdir -p "$prosody13"
    for deb in "$work"/prosody_*.deb "$work"/prosody-modules_*.deb; do
      $sudo dpkg-deb -x "$deb" "$prosody13"
    done
    for script in prosody prosodyctl; do
      $sudo sed -i \
        -e "s|^CFG_SOURCEDIR=.*|CFG_SOURCEDIR='$prosody13/usr/lib/prosody';|" \
        -e "s|^CFG_PLUGINDIR=.*|CFG_PLUGINDIR='$prosody13/usr/lib/prosody/modules/';|" \
        "$prosody13/usr/bin/$script"
    done
    for deb in "$work"/prosody_*.deb "$work"/prosody-modules_*.deb; do
      dpkg-deb -f "$deb" Package Version | paste -sd ' '
    done | sed 's/^Package: \(.*\) Version: /\1 /' | $sudo tee "$prosody13/versions.new" >/dev/null
    $sudo mv "$prosody13/versions.new" "$prosody13/versions"
    echo "prosody 13: $prosody13/usr/bin/prosody ($(head -n1 "$prosody13/versions"))" >&2
  fi
fi
# What the installation enabled for the next boot (the packages' own services and their
# dependencies', such as epmd for ejabberd) is undone: exactly the links it made.
while IFS= read -r link; do
  [ -n "$link" ] || continue
  echo "not starting at boot: $(basename "$link")" >&2
  $sudo rm -f "$link"
done < <(LC_ALL=C comm -13 <(printf '%s\n' "$before") <(links))
exit $status
