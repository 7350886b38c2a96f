#!/usr/bin/env bash
# Builds the Debian package xmpp-bridge_VERSION_ARCH.deb (issue 42) into the current
# directory, or into the directory given as the first argument:
#   scripts/package.sh && sudo apt-get install ./xmpp-bridge_*.deb
# The binary is the release build (scripts/build-release.sh) with the Swift runtime linked
# statically, so the target needs no Swift toolchain; the C libraries (libxml2, OpenSSL 3,
# SQLite, libpq, libomemo-c) are Debian's, and the Depends line is computed from the binary
# (dpkg-shlibdeps). The package holds the systemd unit (contrib/systemd, ExecStart in
# /usr/bin), the system user (sysusers.d), /run/xmpp-bridge (tmpfiles.d),
# /etc/xmpp-bridge/bridge.toml as a conffile made from bridge.toml.example, the man pages
# xmpp-bridge(1) (from the argument parser, one page per subcommand) and bridge.toml(5)
# (from the example), completions for bash, zsh and fish (from the argument parser), and
# /usr/share/doc/xmpp-bridge (copyright with every statically linked dependency's licence,
# the examples, the Prometheus rules and the Grafana dashboard). lintian checks it last.
set -euo pipefail
umask 022
out=$(realpath "${1:-.}")
cd "$(dirname "$0")/.."
bash scripts/install-prerequisites.sh package
scratch=.build/package
# Linked with full RELRO (bind now), as Debian's hardening flags ask.
scripts/build-release.sh --static-swift-stdlib --scratch-path "$scratch" -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
binary=$scratch/release/xmpp-bridge
version=$("$binary" --version | cut -d' ' -f1)
arch=$(dpkg --print-architecture)
package=xmpp-bridge
maintainer="Seed 804ea2c3 maintainers <maintainers@users.noreply.a-seed-804ea2c3.example>"
# The date of the commit built (not of the build), so the same commit gives the same pages.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
epoch=$(git log -1 --format=%ct 2>/dev/null || date -u +%s)

# The argument parser's manual generator, built once from the checkout the package uses.
manual_tool=$scratch/generate-manual
if [ ! -x "$manual_tool/release/generate-manual" ]; then
  swift build -c release --package-path "$scratch/checkouts/swift-argument-parser" \
    --scratch-path "$manual_tool" --product generate-manual
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"
doc=$root/usr/share/doc/$package
install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/etc/xmpp-bridge" "$root/usr/lib/systemd/system" \
  "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d" "$root/usr/share/man/man1" "$root/usr/share/man/man5" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d" "$doc/examples"
install -m 0755 "$binary" "$root/usr/bin/xmpp-bridge"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/xmpp-bridge"

install -m 0644 contrib/systemd/xmpp-bridge.service "$root/usr/lib/systemd/system/xmpp-bridge.service"
install -m 0644 contrib/debian/xmpp-bridge.sysusers "$root/usr/lib/sysusers.d/xmpp-bridge.conf"
install -m 0644 contrib/debian/xmpp-bridge.tmpfiles "$root/usr/lib/tmpfiles.d/xmpp-bridge.conf"

# The configuration: the example, with the state and the control socket in the unit's
# StateDirectory= and RuntimeDirectory= (/etc is read-only to the service), named in the
# file so that `xmpp-bridge status` or `route` from a shell finds the running service's.
# The template it names goes beside it.
sed -e 's|^state = "bridge.sqlite"|state = "/var/lib/xmpp-bridge/bridge.sqlite"|' \
  -e 's|^control_socket = "bridge.control"|control_socket = "/run/xmpp-bridge/bridge.control"|' \
  bridge.toml.example >"$root/etc/xmpp-bridge/bridge.toml"
grep -q '^state = "/var/lib/xmpp-bridge/bridge.sqlite"' "$root/etc/xmpp-bridge/bridge.toml"
grep -q '^control_socket = "/run/xmpp-bridge/bridge.control"' "$root/etc/xmpp-bridge/bridge.toml"
chmod 0644 "$root/etc/xmpp-bridge/bridge.toml"
install -m 0644 contrib/alerts.mustache "$root/etc/xmpp-bridge/alerts.mustache"
# Readable by the service's group only once postinst has made the group (dpkg-statoverride);
# the file holds no secret itself (passwords are in files or the environment).
printf '/etc/xmpp-bridge/bridge.toml\n/etc/xmpp-bridge/alerts.mustache\n' >"$root/DEBIAN/conffiles"

# Man pages and completions, from the binary's own argument parser.
pages=$(mktemp -d "$root/../pages.XXXXXX")
trap 'rm -rf "$root" "$pages"' EXIT
"$manual_tool/release/generate-manual" "$binary" --multi-page --section 1 --date "$date" -o "$pages"
# A subcommand's page is named as git names its own: xmpp-bridge-route-add(1), "xmpp-bridge
# route add" in its synopsis (a name with spaces is no whatis entry); a blank line in a
# help text becomes a paragraph break.
for page in "$pages"/*.1; do
  name=$(basename "$page" .1)
  command=${name//./ }
  file=${name//./-}
  sed -e 's/^$/.Pp/' -e "s/^\.Nm \"$command\"\$/.Nm $file/" -e "s/^\.Nm\$/.Nm \"$command\"/" \
    -e ':dot' -e 's/^\(\.Xr xmpp-bridge[a-z-]*\)\./\1-/' -e 't dot' "$page" |
    gzip -9n >"$root/usr/share/man/man1/$file.1.gz"
done
python3 scripts/bridge-toml-manual.py bridge.toml.example "$version" "$date" | gzip -9n >"$root/usr/share/man/man5/bridge.toml.5.gz"
# bash-completion sources the file: no "#!" line.
"$binary" --generate-completion-script bash | sed '1{/^#!/d}' >"$root/usr/share/bash-completion/completions/xmpp-bridge"
"$binary" --generate-completion-script zsh >"$root/usr/share/zsh/vendor-completions/_xmpp-bridge"
"$binary" --generate-completion-script fish >"$root/usr/share/fish/vendor_completions.d/xmpp-bridge.fish"

# Documentation: the licences, the changelog, the examples.
python3 scripts/package-copyright.py "$scratch" >"$doc/copyright"
{
  echo "$package ($version) unstable; urgency=medium"
  echo
  echo "  * Built from commit $(git describe --always --dirty 2>/dev/null || echo unknown)."
  echo
  echo " -- $maintainer  $(date -u -R -d "@$epoch")"
} | gzip -9n >"$doc/changelog.gz"
install -m 0644 bridge.toml.example contrib/alerts.mustache "$doc/examples/"
install -m 0644 contrib/prometheus/xmpp-bridge.rules.yml "$doc/examples/"
if [ -e contrib/grafana/xmpp-bridge.json ]; then install -m 0644 contrib/grafana/xmpp-bridge.json "$doc/examples/"; fi

# Maintainer scripts and control.
install -m 0755 contrib/debian/postinst contrib/debian/prerm contrib/debian/postrm "$root/DEBIAN/"
mkdir -p "$root/debian"
touch "$root/debian/control"
depends=$(cd "$root" && dpkg-shlibdeps -O "usr/bin/xmpp-bridge" | sed -n 's/^shlibs:Depends=//p') || true
rm -r "$root/debian"
[ -n "$depends" ] || { echo "dpkg-shlibdeps found no libraries" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends, systemd
Section: net
Priority: optional
Description: relays XMPP accounts, rooms and local inputs to each other
 xmpp-bridge links XMPP accounts to each other and to the local machine: two
 accounts, rooms or servers; shell output, cron jobs and webhooks (Alertmanager,
 Grafana, curl) into chats on phones, with paging until someone acknowledges and
 OMEMO encryption. A durable queue keeps every message until it is delivered,
 once, across restarts of the bridge and of the servers.
EOF
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
find "$root" -type d -exec chmod 0755 {} +
find "$root" -newermt "@$epoch" -exec touch -h -d "@$epoch" {} +
deb="$out/${package}_${version}_${arch}.deb"
fakeroot dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
# lintian: errors fail the build; warnings are printed.
lintian --fail-on error --suppress-tags unstripped-binary-or-object "$deb" >&2
