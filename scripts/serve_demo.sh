#!/usr/bin/env bash
# The network part of `make demo`: serves the demo warehouse with `skade serve`, reads a demo
# table through PyIceberg's RestCatalog, posts one OpenLineage event, runs one Spark job through
# the server with openlineage-spark posting to it, shows both in skade's lineage. On a terminal it keeps serving (the system map at the printed URL) until Ctrl-C;
# otherwise (CI, pipes) it checks the map's page loads and stops.
# Usage: scripts/serve_demo.sh BUILD_DIR WAREHOUSE (after `skade demo` built WAREHOUSE).
set -euo pipefail
BUILD_DIR=${1:-build}
WH=${2:-demo-warehouse}
SKADE="$BUILD_DIR/bin/skade --warehouse $WH"
PORT=8181
# 8181 is the REST catalog's usual port; when something else holds it, any free one does.
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then PORT=0; fi
LOG=$(mktemp)
$SKADE serve --listen "127.0.0.1:$PORT" >"$LOG" 2>&1 &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -f "$LOG"' EXIT
for _ in $(seq 100); do grep -q "serving" "$LOG" && break; sleep 0.1; done
URL=$(grep -o 'http://[^ ]*' "$LOG" | head -n1)
URL=${URL%/}
[ -n "$URL" ] || { echo "serve-demo: skade serve did not start:"; cat "$LOG"; exit 1; }
echo
echo "== skade serve on $URL: PyIceberg's RestCatalog reads shop.orders, then an OpenLineage event is posted"
.venv/bin/python - "$URL" "$(cd "$WH" && pwd)" <<'PY'
import json, sys, urllib.request, uuid
from pyiceberg.catalog import load_catalog
url, wh = sys.argv[1], sys.argv[2]
cat = load_catalog("demo", type="rest", uri=url, warehouse=f"file://{wh}")
print("namespaces:", cat.list_namespaces())
orders = cat.load_table("shop.orders").scan(limit=3).to_arrow()
print(f"shop.orders through REST: {orders.num_rows} rows shown, columns {orders.column_names}")
event = {"eventType": "COMPLETE", "eventTime": "2026-12-01T09:00:00Z", "producer": "https://example.invalid/demo",
         "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
         "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "airflow", "name": "export_orders"},
         "inputs": [{"namespace": "file", "name": f"{wh}/shop.db/orders"}],
         "outputs": [{"namespace": "s3://exports", "name": "orders.csv"}]}
req = urllib.request.Request(url + "/api/v1/lineage", data=json.dumps(event).encode(), method="POST",
                             headers={"Content-Type": "application/json"})
print("POST /api/v1/lineage ->", urllib.request.urlopen(req).status)
PY
$SKADE lineage downstream shop.orders
echo
echo "== a Spark job through skade serve: reads shop.orders and shop.customers, writes shop.revenue_by_country;"
echo "   openlineage-spark posts its lineage to the same server"
# One short Spark session (the peer settings of tests/spark): CTAS through the REST catalog.
.venv/bin/python - "$URL" "$(cd "$WH" && pwd)" <<'PY'
import sys, time
sys.path.insert(0, "tests/spark")
from spark_peer import spark_session
url, wh = sys.argv[1], sys.argv[2]
started = time.monotonic()
spark = spark_session(wh, rest_uri=url, openlineage_url=url, app_name="demo_report")
spark.sql("DROP TABLE IF EXISTS shop.revenue_by_country")
spark.sql("""CREATE TABLE shop.revenue_by_country USING iceberg AS
             SELECT c.country, count(*) AS orders, sum(o.amount) AS revenue
             FROM shop.orders o JOIN shop.customers c ON o.customer_id = c.id GROUP BY c.country""")
for r in spark.sql("SELECT * FROM shop.revenue_by_country ORDER BY revenue DESC").collect():
    print(f"  {r.country or '-':3} {r.orders:3} orders  {r.revenue}")
spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)  # openlineage-spark has posted
spark.stop()
print(f"Spark job done in {time.monotonic() - started:.0f} s")
PY
echo "upstream of shop.revenue_by_country (Spark's lineage, tied to skade's tables):"
$SKADE lineage upstream shop.revenue_by_country
if [ -t 0 ] && [ -t 1 ]; then
  echo
  echo "The system map: $URL/   (Ctrl-C stops the server)"
  wait $SERVER || true
else
  if [ -f web/dist/index.html ]; then
    .venv/bin/python -c "import sys, urllib.request; sys.exit(b'<html' not in urllib.request.urlopen(sys.argv[1]).read().lower())" \
      "$URL/" && echo "the system map's page loads at $URL/"
  fi
fi
