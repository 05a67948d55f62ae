#!/usr/bin/env bash
# Runs Apache Iceberg's REST Compatibility Kit, catalog tests only
# (org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests; views are not run), with the JUnit
# console launcher against a running REST catalog server, in one JVM.
#
# Usage: run_rck.sh URI WAREHOUSE_URI [REPORT_DIR]
#   URI            the server's base URI, e.g. http://127.0.0.1:8181/
#   WAREHOUSE_URI  the warehouse the client asks for, e.g. file:///tmp/wh (the RCK client writes
#                  manifests itself, so it must be a location this machine can write)
#   REPORT_DIR     where the JUnit XML reports and console.log go (default: a new temp folder)
# Environment:
#   RCK_TOKEN      optional bearer token (sent as Authorization: Bearer ...)
#   RCK_JAVA_OPTS  extra JVM flags, e.g. -Dheader.X-Foo=bar or -Drck.supports-names-with-dot=true
#
# The server must start with an empty catalog (no namespaces "ns" or "newdb"), and must accept
# table locations outside its warehouse: CatalogTests asks for file:/tmp/ns/tbl and the like.
# Prints the failed tests, then "N passed, N failed" (", N skipped" if any) as the last line.
# Exit 0 only when the run completed and every failure is listed in expected_failures.txt.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 URI WAREHOUSE_URI [REPORT_DIR]" >&2
  exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIB="$ROOT/.deps/rck/lib"
[ -d "$LIB" ] || { echo "$0: $LIB missing: run scripts/setup_java.sh" >&2; exit 2; }
uri=$1
warehouse=$2
reports=${3:-$(mktemp -d "${TMPDIR:-/tmp}/skade-rck.XXXXXX")}
mkdir -p "$reports"
reports=$(cd "$reports" && pwd)
rm -f "$reports"/TEST-*.xml "$reports"/console.log

# RCKUtils builds the client's properties from every CATALOG_* variable and every JVM system
# property. Drop CATALOG_* from the caller's environment (a reference server's settings, say)
# so only what is set here applies; the token goes through the environment, not argv.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^CATALOG_' || true)
if [ -n "${RCK_TOKEN:-}" ]; then
  export CATALOG_TOKEN="$RCK_TOKEN"
fi

# CatalogTests puts some tables at fixed locations, file:/tmp/<namespace>/<table> (namespaces
# "ns" and "newdb"), outside any warehouse, and never removes them. Remove those folders after
# the run when this run created them; warn when they already exist.
tmp_dirs=(/tmp/ns /tmp/newdb)
created=()
for d in "${tmp_dirs[@]}"; do
  if [ -e "$d" ]; then
    echo "rck: warning: $d exists before the run (left by an earlier RCK run?); it is kept" >&2
  else
    created+=("$d")
  fi
done
cleanup_tmp() { for d in "${created[@]}"; do rm -rf "$d"; done; }
trap cleanup_tmp EXIT

echo "rck: RESTCompatibilityKitCatalogTests against $uri (warehouse $warehouse), reports in $reports"
start=$(date +%s)
set +e
# rck.local=false: do not start the in-process reference server (it would take port 8181).
# shellcheck disable=SC2086
java -Xmx1g -XX:+UseSerialGC \
  -Drck.local=false \
  -Duri="$uri" -Dwarehouse="$warehouse" \
  -Drck.requires-namespace-create=true \
  -Drck.supports-serverside-retry=true \
  ${RCK_JAVA_OPTS:-} \
  -cp "$LIB/*" org.junit.platform.console.ConsoleLauncher execute \
  --disable-banner --disable-ansi-colors --details=tree \
  --select-class org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests \
  --reports-dir="$reports" >"$reports/console.log" 2>&1
launcher_rc=$?
set -e
elapsed=$(( $(date +%s) - start ))
echo "rck: JUnit console launcher exited $launcher_rc after ${elapsed}s (log: $reports/console.log)"
if [ "$launcher_rc" -gt 1 ]; then
  # 1 means "some test failed"; anything else is the launcher or the JVM failing.
  tail -n 30 "$reports/console.log" >&2
fi

set +e
python3 "$HERE/rck_report.py" "$reports" --expected-failures "$HERE/expected_failures.txt"
report_rc=$?
set -e
if [ "$report_rc" -ne 0 ]; then
  exit "$report_rc"
fi
# The reports may be complete while the launcher still failed (e.g. a container-level error).
if [ "$launcher_rc" -gt 1 ]; then
  exit "$launcher_rc"
fi
exit 0
