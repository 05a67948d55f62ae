#!/usr/bin/env bash
# Installs Bifröst's Spark Connect peer (tests/bifrost/test_spark_connect.py, bench/), only what
# is missing (Debian's gRPC/protobuf for the generated C++ client are in setup.sh's apt list):
# a second pyspark in its own venv (.deps/spark4/venv), whose distribution bundles the Spark
# Connect server (the pyspark 3.5 of .venv does not, and spark-connect_2.12 3.5.x is not served
# to mvn), and, with mvn, Iceberg's Spark 4.0 runtime into .deps/spark4/jars.
# Runs after scripts/setup_java.sh (JDK and Maven).
set -euo pipefail
cd "$(dirname "$0")/.."

PYSPARK=pyspark==4.0.4
JARS=(org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.1)
ROOT=.deps/spark4
VENV=$ROOT/venv
if [ "$PYSPARK" != "$(cat "$ROOT/.skade-pyspark" 2>/dev/null)" ] || [ ! -x "$VENV/bin/spark-submit" ]; then
  echo "setup: installing $PYSPARK into $VENV (the Spark Connect server)"
  rm -rf "$VENV"
  mkdir -p "$ROOT"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "$PYSPARK"
  echo "$PYSPARK" > "$ROOT/.skade-pyspark"
fi

scripts/resolve_jars.sh "$ROOT/jars" "$ROOT/.skade-jars" "${JARS[@]}"
