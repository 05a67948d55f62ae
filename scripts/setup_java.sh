#!/usr/bin/env bash
# Installs what the REST catalog compatibility tests (tests/rck/) need on Debian 12, only what
# is missing: a JDK and Maven from apt, then, when tests/rck/pom.xml changed since the last
# resolve, the jars of Apache Iceberg's REST Compatibility Kit, its reference server
# (RESTCatalogServer: Jetty + sqlite-jdbc) and the JUnit console launcher into .deps/rck/lib/.
# Maven uses its default configured repository and its default local repository (~/.m2), which
# lives outside the clone, so a fresh clone on the same machine resolves offline.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
# Any JDK 17+ on PATH will do (javac marks a JDK, not just a JRE); otherwise Debian's default.
if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
  installed default-jdk-headless || missing+=(default-jdk-headless)
fi
command -v mvn >/dev/null || installed maven || missing+=(maven)
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Iceberg 1.10 and Jetty 11 need Java 11 or newer.
java_major=$(java -XshowSettings:properties -version 2>&1 | awk -F' = ' '/java.specification.version/ { print $2 }')
if [ -z "$java_major" ] || [ "${java_major%%.*}" -lt 11 ] 2>/dev/null; then
  echo "setup: java on PATH is version ${java_major:-unknown}; the RCK needs Java 11 or newer" >&2
  exit 1
fi

POM=tests/rck/pom.xml
LIB=.deps/rck/lib
STAMP=.deps/rck/.skade-pom
if cmp -s "$POM" "$STAMP" 2>/dev/null && [ -d "$LIB" ]; then
  exit 0
fi
echo "setup: resolving the Iceberg REST compatibility kit's jars into $LIB"
rm -rf "$LIB.tmp"
mkdir -p "$LIB.tmp"
copy_deps() {
  mvn -B -q -Dstyle.color=never "$@" -f "$POM" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$PWD/$LIB.tmp"
}
# Offline first: everything is in the local repository after the first resolve on this machine.
if ! copy_deps -o >/dev/null 2>&1; then
  copy_deps
fi
# The console launcher bundles JUnit; a second copy of JUnit on the path would clash.
if ls "$LIB.tmp" | grep -E '^junit-(jupiter|platform)-' | grep -qv console-standalone; then
  echo "setup: unexpected JUnit jars next to junit-platform-console-standalone in $LIB" >&2
  exit 1
fi
rm -rf "$LIB"
mv "$LIB.tmp" "$LIB"
cp "$POM" "$STAMP"
