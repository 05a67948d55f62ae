"""skade's lineage as OpenLineage: exported RunEvents validate against the OpenLineage JSON
Schemas (spec 2-0-2 and the facet schemas, copied under data/openlineage-spec) and load into the
openlineage-python client's RunEvent classes without losing a field; exported events ingested
again are the same events."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import attr
import pyarrow as pa
from jsonschema import Draft202012Validator
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    RunFacet,
    dataset_version_dataset,
    lifecycle_state_change_dataset,
    output_statistics_output_dataset,
    schema_dataset,
    storage_dataset,
    symlinks_dataset,
)
from openlineage.client.serde import Serde
from referencing import Registry, Resource

from skade_util import write_parquet

SPEC = Path(__file__).parent / "data" / "openlineage-spec"
CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json"


def _registry():
    """Every schema under its `$id`, so references resolve offline; facet name → schema id."""
    resources, facet_schemas = [], {}
    for path in [SPEC / "OpenLineage.json", *sorted((SPEC / "facets").glob("*.json"))]:
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
        for key in schema.get("properties", {}):
            facet_schemas[key] = schema["$id"]
    return Registry().with_resources(resources), facet_schemas


REGISTRY, FACET_SCHEMAS = _registry()


def _validate(ref: str, instance) -> None:
    Draft202012Validator({"$ref": ref}, registry=REGISTRY).validate(instance)


def assert_valid_run_event(event: dict) -> None:
    _validate(CORE + "#/$defs/RunEvent", event)
    datetime.fromisoformat(event["eventTime"])  # date-time, which jsonschema does not check by itself

    def facets(group: dict, base: str):
        for key, facet in (group or {}).items():
            if key in FACET_SCHEMAS:
                _validate(FACET_SCHEMAS[key], {key: facet})
            else:  # skade's own facet: a well-formed custom facet of its kind
                _validate(CORE + "#/$defs/" + base, facet)

    facets(event["run"].get("facets"), "RunFacet")
    facets(event["job"].get("facets"), "JobFacet")
    for d in event.get("inputs", []):
        facets(d.get("facets"), "DatasetFacet")
    for d in event.get("outputs", []):
        facets(d.get("facets"), "DatasetFacet")
        facets(d.get("outputFacets"), "OutputDatasetFacet")


@attr.define
class SkadeRunFacet(RunFacet):
    eventId: str  # noqa: N815
    actor: str
    operation: str
    commitSeq: int | None = attr.field(default=None)  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return "https://github.com/skade-warehouse/skade/blob/main/docs/lineage.md#skade-run-facet"


def _base(f: dict) -> dict:
    # The classes set `_schemaURL` themselves: comparing with what skade sent checks skade's.
    return {"producer": f["_producer"]}


def _dataset_facets(facets: dict) -> dict:
    out = {}
    for key, f in facets.items():
        if key == "version":
            out[key] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=f["datasetVersion"], **_base(f))
        elif key == "schema":
            fields = [schema_dataset.SchemaDatasetFacetFields(name=x["name"], type=x.get("type"), fields=None) for x in f["fields"]]
            out[key] = schema_dataset.SchemaDatasetFacet(fields=fields, **_base(f))
        elif key == "symlinks":
            ids = [symlinks_dataset.Identifier(namespace=i["namespace"], name=i["name"], type=i["type"])
                   for i in f["identifiers"]]
            out[key] = symlinks_dataset.SymlinksDatasetFacet(identifiers=ids, **_base(f))
        elif key == "storage":
            out[key] = storage_dataset.StorageDatasetFacet(storageLayer=f["storageLayer"], fileFormat=f.get("fileFormat"),
                                                           **_base(f))
        elif key == "lifecycleStateChange":
            prev = f.get("previousIdentifier")
            out[key] = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
                lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange(f["lifecycleStateChange"]),
                previousIdentifier=lifecycle_state_change_dataset.PreviousIdentifier(**prev) if prev else None,
                **_base(f))
        else:
            raise AssertionError(f"skade emitted a dataset facet this test does not know: {key}")
    return out


def to_client_event(event: dict) -> RunEvent:
    """The openlineage-python RunEvent for an exported event (its classes validate as they build)."""
    run_facets = {}
    for key, f in event["run"].get("facets", {}).items():
        assert key == "skade", key
        run_facets[key] = SkadeRunFacet(eventId=f["eventId"], actor=f["actor"], operation=f["operation"],
                                        commitSeq=f.get("commitSeq"), **_base(f))
    inputs = [InputDataset(namespace=d["namespace"], name=d["name"], facets=_dataset_facets(d.get("facets", {})),
                           inputFacets=None) for d in event["inputs"]]
    outputs = []
    for d in event["outputs"]:
        out_facets = {}
        if "outputFacets" in d:
            s = d["outputFacets"]["outputStatistics"]
            out_facets["outputStatistics"] = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=s.get("rowCount"), size=s.get("size"), fileCount=s.get("fileCount"), **_base(s))
        outputs.append(OutputDataset(namespace=d["namespace"], name=d["name"],
                                     facets=_dataset_facets(d.get("facets", {})), outputFacets=out_facets or None))
    return RunEvent(eventType=RunState(event["eventType"]), eventTime=event["eventTime"],
                    run=Run(runId=event["run"]["runId"], facets=run_facets),
                    job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"]),
                    producer=event["producer"], inputs=inputs, outputs=outputs)


def _pipeline(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.raw", "--schema", "id:long!, v:string, ts:timestamptz", "--partition", "day(ts)")
    skade.ok("create", "db.clean", "--schema", "id:long!, v:string", "--identifier", "id")
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"],
                     "ts": pa.array([0, 86_400_000_000, 2 * 86_400_000_000], pa.timestamp("us", "UTC"))})
    skade.ok("append", "db.raw", write_parquet(rows, tmp_path / "raw.parquet"), "--input", "kafka:orders")
    skade.ok("upsert", "db.clean", write_parquet(rows.select(["id", "v"]), tmp_path / "c.parquet"),
             "--actor", "cleaner", "--input", "db.raw")
    skade.ok("overwrite", "db.clean", write_parquet(rows.select(["id", "v"]).slice(0, 1), tmp_path / "o.parquet"))
    skade.ok("alter", "db.clean", "add-column", "note", "string")
    skade.ok("rename", "db.clean", "db.cleaned")
    skade.ok("drop", "db.cleaned")


def _export(skade) -> list[dict]:
    return [json.loads(line) for line in skade.ok("lineage", "export").splitlines() if line.strip()]


def test_exported_run_events_follow_the_spec_and_load_into_the_python_client(skade, tmp_path):
    _pipeline(skade, tmp_path)
    exported = _export(skade)
    assert len(exported) == 8
    for event in exported:
        assert_valid_run_event(event)
        client_event = to_client_event(event)
        assert Serde.to_dict(client_event) == event, "the client's classes hold every field skade sent"

    append = next(e for e in exported if e["run"]["facets"]["skade"]["operation"] == "append")
    (out,) = append["outputs"]
    assert out["namespace"] == "file" and out["name"].endswith("/db.db/raw")
    assert out["facets"]["symlinks"]["identifiers"][0]["name"] == "db.raw"
    assert out["facets"]["storage"]["storageLayer"] == "iceberg"
    assert [f["name"] for f in out["facets"]["schema"]["fields"]] == ["id", "v", "ts"]
    snapshot = skade.jsonl("snapshots", "db.raw")[-1]
    assert out["facets"]["version"]["datasetVersion"] == str(snapshot["snapshot_id"])
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == 3
    assert out["outputFacets"]["outputStatistics"]["fileCount"] == 3  # one file per day partition
    assert append["inputs"] == [{"namespace": "kafka", "name": "orders", "facets": {}}]
    lifecycle = [e["outputs"][0]["facets"].get("lifecycleStateChange", {}).get("lifecycleStateChange")
                 for e in exported]
    assert lifecycle.count("CREATE") == 2 and lifecycle.count("DROP") == 1 and lifecycle.count("RENAME") == 1


def test_exported_events_ingest_back_as_the_same_events(skade, tmp_path):
    _pipeline(skade, tmp_path)
    before = [json.loads(line) for line in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
    f = tmp_path / "export.jsonl"
    f.write_text(skade.ok("lineage", "export"))
    out = skade.ok("lineage", "ingest", f)
    assert "ingested 8 events" in out
    after = [json.loads(line) for line in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
    assert after == before, "the same event ids: nothing was added twice"


def test_ingested_spark_event_exports_unchanged_and_validates(skade, tmp_path):
    spark = {"eventType": "COMPLETE", "eventTime": "2026-02-01T12:30:00.5+01:00",
             "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": "0190c0de-0000-7000-8000-0000000000bb"},
             "job": {"namespace": "spark-prod", "name": "revenue_app.insert.gold_revenue"},
             "inputs": [{"namespace": "s3://landing", "name": "events"}],
             "outputs": [{"namespace": "hive://metastore:9083", "name": "gold.revenue"}]}
    assert_valid_run_event(spark)
    f = tmp_path / "spark.jsonl"
    f.write_text(json.dumps(spark) + "\n")
    skade.ok("lineage", "ingest", f)
    (exported,) = _export(skade)
    assert exported == spark
