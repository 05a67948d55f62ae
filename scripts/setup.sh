#!/usr/bin/env bash
# Installs what skade needs on Debian 12, only what is missing: apt packages,
# then the .venv with pyarrow (Arrow C++ for the build), PyIceberg and fastavro,
# then the web app's npm packages and its bundle (web/dist).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config python3-venv
  libsqlite3-dev sqlite3 zlib1g-dev libsnappy-dev libzstd-dev nlohmann-json3-dev
  libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev libcurl4-openssl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  chromium strace)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js for the web app: Debian's when the machine has none.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

REQS=scripts/requirements.txt
STAMP=.venv/.skade-requirements
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if ! cmp -s "$REQS" "$STAMP" 2>/dev/null; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -r "$REQS"
  cp "$REQS" "$STAMP"
fi

# Bifröst: the graph server (Valkey 8 + FalkorDB module), hiredis, yaml-cpp, promtool.
scripts/setup_graph.sh
# Bifröst's custom steps: clang + lld and the example WASM guests.
scripts/setup_transforms.sh

# The web app: npm ci when package-lock.json changed since the last install, then the bundle.
WEB_LOCK=web/package-lock.json
WEB_STAMP=web/node_modules/.skade-package-lock
if ! cmp -s "$WEB_LOCK" "$WEB_STAMP" 2>/dev/null; then
  echo "setup: installing the web app's npm packages"
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
  cp "$WEB_LOCK" "$WEB_STAMP"
fi
(cd web && npm run --silent build >/dev/null)

# iceberg-js, the JavaScript REST client the server tests run against.
JS_DIR=tests/server/iceberg_js
if ! cmp -s "$JS_DIR/package-lock.json" "$JS_DIR/node_modules/.skade-package-lock" 2>/dev/null; then
  echo "setup: installing iceberg-js for the server tests"
  (cd "$JS_DIR" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$JS_DIR/package-lock.json" "$JS_DIR/node_modules/.skade-package-lock"
fi

# The Iceberg REST compatibility kit and reference server (tests/rck/): JDK, Maven, jars in .deps/rck/lib.
scripts/setup_java.sh

# Spark (pyspark from requirements.txt) and the jars it loads: tests/spark/ and the demo's Spark job.
scripts/setup_spark.sh

# Bifröst's Spark Connect source: gRPC/protobuf for its client, a Spark 4 with the Connect server.
scripts/setup_spark_connect.sh

# Airflow 3 (its own venv under .deps/airflow): the peer of tests/bifrost/test_airflow_events.py.
scripts/setup_airflow.sh
