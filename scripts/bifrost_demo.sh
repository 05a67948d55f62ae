#!/usr/bin/env bash
# The graph part of `make demo`: maps the demo shop tables to a graph in the embedded
# FalkorDB, asks it a few questions, changes a row in skade and shows the graph follow.
# Usage: scripts/bifrost_demo.sh BUILD_DIR WAREHOUSE (after `skade demo` built WAREHOUSE).
set -euo pipefail
BUILD_DIR=${1:-build}
WH=${2:-demo-warehouse}
SKADE="$BUILD_DIR/bin/skade --warehouse $WH"
BIFROST="$BUILD_DIR/bin/bifrost --warehouse $WH"
MAPPING="$WH/shop-graph.yaml"
# `skade demo` rebuilds the tables, so the demo's graph and its ledger start over too.
rm -rf "$WH/.bifrost"

cat > "$MAPPING" <<'YAML'
graph: shop
tables:
  - table: shop.customers
    mode: cdc
    pipeline:
      - vertex: {label: Customer, id_column: id, properties: [name, country]}
  - table: shop.orders
    mode: cdc
    pipeline:
      - vertex: {label: Order, id_column: order_id, properties: [ts, amount, status]}
      - fk_edges: {type: PLACED_BY, src: {column: order_id, label: Order}, dst: {column: customer_id, label: Customer}}
  - table: shop.order_lines
    mode: incremental
    pipeline:
      - edge: {type: CONTAINS, src: {column: order_id, label: Order}, dst: {column: sku, label: Product, key: sku},
               key_column: line, properties: [qty, price]}
YAML

step() { printf '\n== %s\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

echo
echo "################ Bifröst: the shop tables as a graph ################"
step "the mapping compiles against the tables" $BIFROST validate --mapping "$MAPPING"
step "build the graph (embedded FalkorDB under $WH/.bifrost)" $BIFROST build --mapping "$MAPPING"
step "who ordered most" $BIFROST query --mapping "$MAPPING" \
  "MATCH (o:Order)-[:PLACED_BY]->(c:Customer) RETURN c.name AS customer, count(o) AS orders ORDER BY orders DESC, customer LIMIT 3"
step "products bought together with another product" $BIFROST query --mapping "$MAPPING" \
  "MATCH (p:Product)<-[:CONTAINS]-(:Order)-[:CONTAINS]->(q:Product) WHERE p.sku < q.sku RETURN p.sku AS a, q.sku AS b, count(*) AS together ORDER BY together DESC, a, b LIMIT 3"

id=$($BIFROST query --mapping "$MAPPING" "MATCH (c:Customer) RETURN c.id AS id ORDER BY id LIMIT 1" | sed 's/[^0-9]//g')
csv=$(mktemp --suffix=.csv)
printf 'id,name,country,signed_up\n%s,Renamed In Skade,SE,2024-01-01\n' "$id" > "$csv"
step "change customer $id in skade" $SKADE upsert shop.customers "$csv"
rm -f "$csv"
step "one more round: the change arrives through the changelog" $BIFROST build --mapping "$MAPPING"
step "the graph followed" $BIFROST query --mapping "$MAPPING" \
  "MATCH (c:Customer {id: $id}) OPTIONAL MATCH (o:Order)-[:PLACED_BY]->(c) RETURN c.name AS name, c.country AS country, count(o) AS orders"
