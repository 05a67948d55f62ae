// iceberg-js against skade serve: list, create, load and drop through the REST
// catalog, printing what it saw as one JSON line for the test to check.
import { IcebergRestCatalog } from "iceberg-js";

const [baseUrl, warehouse] = process.argv.slice(2);
const catalog = new IcebergRestCatalog({ baseUrl, warehouse, auth: { type: "none" } });
const out = {};
out.namespaces = (await catalog.listNamespaces()).namespaces;
out.tables = (await catalog.listTables({ namespace: ["js"] })).identifiers;
const loaded = await catalog.loadTable({ namespace: ["js"], name: "from_cli" });
out.loaded = { location: loaded.location, fields: loaded.schemas[0].fields.map((f) => f.name) };
await catalog.createNamespace({ namespace: ["js", "made"] }, { properties: { by: "iceberg-js" } });
await catalog.createTable(
  { namespace: ["js", "made"] },
  { name: "t", schema: { type: "struct", fields: [{ id: 1, name: "a", type: "long", required: true }] } },
);
out.exists = await catalog.tableExists({ namespace: ["js", "made"], name: "t" });
out.missing = await catalog.tableExists({ namespace: ["js", "made"], name: "nope" });
try {
  await catalog.loadTable({ namespace: ["js"], name: "nope" });
} catch (e) {
  out.error = { status: e.status, type: e.icebergType };
}
console.log(JSON.stringify(out));
