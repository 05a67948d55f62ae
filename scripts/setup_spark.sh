#!/usr/bin/env bash
# Installs the Spark peer (tests/spark/, the Spark demo job): pyspark comes from
# scripts/requirements.txt; this resolves the pinned jars Spark loads with `spark.jars`
# (Iceberg's Spark runtime, openlineage-spark, sqlite-jdbc for the JDBC catalog path) with mvn
# into .deps/spark/jars/, only when the list below changed since the last resolve.
# Runs after scripts/setup_java.sh (JDK and Maven).
set -euo pipefail
cd "$(dirname "$0")/.."

JARS=(
  org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.1
  io.openlineage:openlineage-spark_2.12:1.53.0
  org.xerial:sqlite-jdbc:3.50.3.0
)
DIR=.deps/spark/jars
STAMP=.deps/spark/.skade-jars
if [ -d "$DIR" ] && [ "$(printf '%s\n' "${JARS[@]}")" = "$(cat "$STAMP" 2>/dev/null)" ]; then
  exit 0
fi
echo "setup: resolving Spark's jars into $DIR"
rm -rf "$DIR.tmp"
mkdir -p "$DIR.tmp"
copy_jar() {
  mvn -B -q -Dstyle.color=never "$@" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    -Dartifact="$jar" -DoutputDirectory="$PWD/$DIR.tmp"
}
for jar in "${JARS[@]}"; do
  # Offline first: the local repository has them after the first resolve on this machine.
  copy_jar -o >/dev/null 2>&1 || copy_jar
done
rm -rf "$DIR"
mv "$DIR.tmp" "$DIR"
printf '%s\n' "${JARS[@]}" > "$STAMP"
