#!/usr/bin/env bash
# Lineage benchmark (bench/lineage_bench.cc): emission overhead, OpenLineage ingest rate and
# downstream queries, all measured in one run; writes bench/results/lineage.json.
# Usage: bench/lineage_bench.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
if [ ! -x "$BUILD_DIR/bin/lineage_bench" ]; then
  echo "bench: $BUILD_DIR/bin/lineage_bench is missing; run 'make build' (Google Benchmark must be found by CMake)" >&2
  exit 1
fi
mkdir -p bench/results
"$BUILD_DIR/bin/lineage_bench" --dir "$BUILD_DIR/bench-data/lineage" > bench/results/lineage.json.tmp
mv bench/results/lineage.json.tmp bench/results/lineage.json
.venv/bin/python - <<'PY'
import json
r = json.load(open("bench/results/lineage.json"))
e, i, g = r["emission"], r["ingest"], r["graph"]
print(f"lineage emission: {e['commits']} single-row commits, {e['lineage_off_ms_per_commit']:.2f} ms off vs "
      f"{e['lineage_on_ms_per_commit']:.2f} ms with the warehouse sink: x{e['on_over_off']:.3f}")
print(f"lineage ingest: {i['ingest_events_per_s']:,.0f} RunEvents/s stored ({i['parse_events_per_s']:,.0f}/s parsed)")
print(f"lineage graph: {g['datasets']} datasets, {g['edges']} edges, build {g['build_ms']:.1f} ms, "
      f"downstream depth 5 {g['downstream_depth5_ms'] * 1000:.0f} us")
PY
