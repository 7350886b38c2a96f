#!/usr/bin/env bash
# The Debian package's test (issue 42), part of scripts/test.sh: builds the .deb
# (scripts/package.sh, lintian without errors), installs it with apt-get, runs the
# installed binary (--version, `check` on the installed configuration as the service's
# user), verifies the installed unit (systemd-analyze verify), the man pages and the
# completions, then purges it and compares every file under /etc, /usr, /var and /run with
# the list taken before: nothing may be left behind. It installs a system package, so it
# refuses to run where xmpp-bridge is installed already (it would purge it).
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
# Anything of an installation here (the package, removed but not purged, or the files of
# an older install-service.sh) would be purged with the test's: refuse.
status=$(dpkg-query -W -f='${Status}' xmpp-bridge 2>/dev/null || true)
if [ -n "$status" ] && [ "$status" != "unknown ok not-installed" ] || [ -e /etc/xmpp-bridge ] || [ -e /var/lib/xmpp-bridge ]; then
  echo "xmpp-bridge is (or was) installed on this machine: the package test would purge it (purge it, or run the test elsewhere)" >&2
  exit 1
fi
work=$(mktemp -d)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "package test: $*" >&2; exit 1; }

# What is on the machine before: every path under /etc, /usr, /var and /run, except the
# package manager's own records and caches, logs, and the account files' backups that
# adding a system user rewrites (the user stays after a purge, as Debian does).
files() {
  $sudo find /etc /usr /var /run -xdev \
    \( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/cache -o -path /var/log -o -path /var/tmp \
       -o -path /run/user -o -path /var/lib/systemd/deb-systemd-helper-enabled -o -path /var/lib/ucf \) -prune -o -print 2>/dev/null |
    grep -vE '^/etc/(passwd|group|shadow|gshadow)-?$|^/etc/\.pwd\.lock$' | LC_ALL=C sort
}
deb=$(scripts/package.sh "$work" | tail -n1)
[ -f "$deb" ] || fail "scripts/package.sh made no package"
# Taken after the build, which installs its own tools (dpkg-dev, lintian) when missing.
files >"$work/before"
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB" >&2
echo "Depends: $(dpkg-deb -f "$deb" Depends)" >&2

start=$(date +%s.%N)
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$deb" >&2
# The configuration as shipped: one problem, the password file an administrator writes next.
set +e
shipped=$($sudo runuser -u xmpp-bridge -- xmpp-bridge check --config /etc/xmpp-bridge/bridge.toml 2>&1)
status=$?
set -e
[ $status -eq 2 ] || fail "check on the configuration as shipped exited $status: $shipped"
grep -q '^accounts.work.password_file: cannot read /etc/xmpp-bridge/work.password' <<<"$shipped" ||
  fail "check on the configuration as shipped: $shipped"
grep -q ': 1 problem$' <<<"$shipped" || fail "check found more than the password file: $shipped"
printf 'not-a-real-password\n' | $sudo install -m 0600 -o xmpp-bridge -g xmpp-bridge /dev/stdin /etc/xmpp-bridge/work.password
checked=$($sudo runuser -u xmpp-bridge -- xmpp-bridge check --config /etc/xmpp-bridge/bridge.toml 2>&1) ||
  fail "check on the installed configuration failed: $checked"
echo "$checked" >&2
# No warning, and the service's places: the state and the control socket where the unit
# lets it write.
if grep -q 'warning' <<<"$checked"; then fail "check warned: $checked"; fi
grep -q 'state /var/lib/xmpp-bridge/bridge.sqlite, control socket /run/xmpp-bridge/bridge.control' <<<"$checked" ||
  fail "check shows other places for the state or the control socket: $checked"
end=$(date +%s.%N)
echo "apt-get install to a passing check: $(awk "BEGIN { printf \"%.1f\", $end - $start }") s" >&2

version=$(xmpp-bridge --version)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]{7,}(-dirty)?\)$ ]] || fail "--version printed: $version"
echo "xmpp-bridge --version: $version" >&2
[ "$($sudo stat -c '%a %U %G' /etc/xmpp-bridge)" = "750 root xmpp-bridge" ] || fail "/etc/xmpp-bridge is $($sudo stat -c '%a %U %G' /etc/xmpp-bridge)"
[ "$($sudo stat -c '%a %U %G' /etc/xmpp-bridge/bridge.toml)" = "640 root xmpp-bridge" ] || fail "bridge.toml is $($sudo stat -c '%a %U %G' /etc/xmpp-bridge/bridge.toml)"
[ -d /run/xmpp-bridge ] || fail "tmpfiles.d made no /run/xmpp-bridge"
verify=$(systemd-analyze verify /usr/lib/systemd/system/xmpp-bridge.service 2>&1 || true)
if grep -q 'xmpp-bridge' <<<"$verify"; then fail "systemd-analyze verify: $verify"; fi

# The man pages render without a warning; the completions load.
for page in xmpp-bridge xmpp-bridge-route xmpp-bridge-route-add xmpp-bridge-check bridge.toml; do
  path=$(man -w "$page") || fail "no man page $page"
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$path" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man $page: $warnings"
done
man 5 bridge.toml | grep -q 'max_concurrent_logins' || fail "bridge.toml(5) lacks max_concurrent_logins"
bash -c 'source /usr/share/bash-completion/completions/xmpp-bridge && complete -p xmpp-bridge' >/dev/null ||
  fail "the bash completion does not load"
for file in /usr/share/zsh/vendor-completions/_xmpp-bridge /usr/share/fish/vendor_completions.d/xmpp-bridge.fish; do
  grep -q 'route' "$file" || fail "$file has no subcommands"
done

# An administrator enabled it (the link systemctl makes, with or without a running systemd):
# the purge takes that away too.
$sudo systemctl enable xmpp-bridge.service >&2
[ -L /etc/systemd/system/multi-user.target.wants/xmpp-bridge.service ] || fail "systemctl enable made no link"
DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq xmpp-bridge >&2
files >"$work/after"
left=$(LC_ALL=C comm -13 "$work/before" "$work/after")
[ -z "$left" ] || fail "the purge left files behind:
$left"
# Nothing else is gone either, but for empty *.wants folders under /etc/systemd/system:
# deb-systemd-helper's purge (every Debian package's) removes those.
removed=$(LC_ALL=C comm -23 "$work/before" "$work/after" | grep -vE '^/etc/systemd/system/[^/]+\.wants$' || true)
[ -z "$removed" ] || fail "the purge removed files it did not install:
$removed"
echo "package test: built, installed, checked and purged; nothing left behind" >&2
