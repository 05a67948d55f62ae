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
scripts/resolve_jars.sh .deps/spark/jars .deps/spark/.skade-jars "${JARS[@]}"
