#!/usr/bin/env bash
# Runs the skade benchmarks (scan, export, append, upsert, CDC) against PyIceberg and pyarrow and writes
# bench/results/{scan,export,append,upsert,cdc}.json. Usage: scripts/bench.sh [BUILD_DIR] [run_bench.py args]
# Expects `make build` to have run (it builds build/bin/scan_bench, append_bench and upsert_bench,
# which need Google Benchmark's CMake package: libbenchmark-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
shift || true
for exe in scan_bench append_bench upsert_bench cdc_bench; do
  if [ ! -x "$BUILD_DIR/bin/$exe" ]; then
    echo "bench: $BUILD_DIR/bin/$exe is missing; run 'make build' (Google Benchmark must be found by CMake)" >&2
    exit 1
  fi
done
bench/lineage_bench.sh "$BUILD_DIR"
exec .venv/bin/python bench/run_bench.py --build-dir "$BUILD_DIR" --data-dir "$BUILD_DIR/bench-data" "$@"
