#!/usr/bin/env bash
# Installs what Bifröst needs on Debian 12, only what is missing: Valkey 8 from
# bookworm-backports (FalkorDB 4.16 refuses Debian's Redis 7.0), hiredis, yaml-cpp,
# promtool, and the FalkorDB module from npm into .deps/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
BACKPORTS=/etc/apt/sources.list.d/bookworm-backports.sources
# The backports suite comes from the same mirror as the machine's own bookworm entry,
# so no host is named here.
debian_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: the URIs line of the stanza whose Suites include plain "bookworm".
    uri=$(awk 'BEGIN { RS = ""; FS = "\n" } {
      uris = ""; plain = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^URIs:/) { split($i, w, /[ \t]+/); uris = w[2] }
        if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == "bookworm") plain = 1 }
      }
      if (plain && uris != "") { print uris; exit }
    }' "$f")
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' "$f")
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
}
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || { echo "setup: no apt entry for Debian bookworm found to take the mirror from" >&2; exit 1; }
  echo "setup: adding bookworm-backports from $mirror"
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" | $SUDO tee "$BACKPORTS" >/dev/null
  $SUDO apt-get update -qq
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in libhiredis-dev libyaml-cpp-dev prometheus; do installed "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! installed valkey-server; then
  echo "setup: installing valkey-server from bookworm-backports"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports valkey-server >/dev/null
fi
# The Debian packages start system services; Bifröst and the tests run their own servers,
# and only promtool is wanted from prometheus.
for service in valkey-server prometheus; do
  if command -v systemctl >/dev/null && systemctl is-active -q "$service" 2>/dev/null; then
    $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
  fi
done

FALKOR_PKG="@falkordblite/linux-x64@8.2.3-falkordb.4.16.3"
if [ ! -f .deps/falkordb/falkordb.so ]; then
  command -v npm >/dev/null || { echo "setup: npm is required (Node.js)" >&2; exit 1; }
  echo "setup: installing FalkorDB module ($FALKOR_PKG) from npm"
  mkdir -p .deps/npm .deps/falkordb
  npm install --silent --no-audit --no-fund --prefix .deps/npm "$FALKOR_PKG" >/dev/null
  so=$(find .deps/npm/node_modules -name falkordb.so -type f | head -n1)
  [ -n "$so" ] || { echo "setup: falkordb.so not found in $FALKOR_PKG" >&2; exit 1; }
  cp "$so" .deps/falkordb/falkordb.so
fi
