#!/usr/bin/env bash
# Runs Apache Iceberg's reference REST catalog server (org.apache.iceberg.rest.RESTCatalogServer:
# Jetty + a JdbcCatalog on SQLite) in the foreground; the caller backgrounds it and waits with
#   tests/rck/wait_ready.py http://127.0.0.1:PORT/
# Usage: run_reference_server.sh PORT WAREHOUSE_DIR SQLITE_DB
# Jars come from .deps/rck/lib (scripts/setup_java.sh). Extra JVM flags: RCK_JAVA_OPTS.
# Note: the reference server binds PORT on every interface (it has no host setting).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 PORT WAREHOUSE_DIR SQLITE_DB" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB="$ROOT/.deps/rck/lib"
[ -d "$LIB" ] || { echo "$0: $LIB missing: run scripts/setup_java.sh" >&2; exit 2; }
port=$1
case "$port" in ''|*[!0-9]*) echo "$0: PORT must be a number: $port" >&2; exit 2 ;; esac
mkdir -p "$2" "$(dirname "$3")"
warehouse=$(cd "$2" && pwd)
db="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"

# The server reads its catalog properties from CATALOG_* (prefix stripped, _ -> ., __ -> -);
# drop any the caller's environment carries so only these three apply.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^CATALOG_' || true)
export CATALOG_REST_PORT="$port"
export CATALOG_WAREHOUSE="file://$warehouse"
export CATALOG_URI="jdbc:sqlite:$db"

# A small heap and the serial collector: this runs next to C++ builds on a 2-core machine.
# shellcheck disable=SC2086
exec java -Xmx512m -XX:+UseSerialGC ${RCK_JAVA_OPTS:-} -cp "$LIB/*" org.apache.iceberg.rest.RESTCatalogServer
