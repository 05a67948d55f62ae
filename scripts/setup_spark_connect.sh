#!/usr/bin/env bash
# Installs Bifröst's Spark Connect peer (tests/bifrost/test_spark_connect.py, bench/), only what
# is missing: Debian's gRPC/protobuf for the generated C++ client, then a second pyspark in
# its own venv (.deps/spark4/venv), whose distribution bundles the Spark Connect server
# (the pyspark 3.5 of .venv does not, and spark-connect_2.12 3.5.x is not served to mvn),
# and, with mvn, Iceberg's Spark 4.0 runtime into .deps/spark4/jars.
# Runs after scripts/setup_java.sh (JDK and Maven).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
APT_PACKAGES=(libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

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
