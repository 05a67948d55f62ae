"""Real Spark (pyspark 3.5 + Iceberg's Spark runtime 1.10.1 + openlineage-spark) as a peer of skade.

`spark_session` builds the one SparkSession of this Python process against a skade warehouse,
either through `skade serve` (Iceberg's REST catalog) or through Iceberg's JDBC catalog on the
warehouse's `catalog.db`. The Spark catalog is named `skade` (CATALOG) in both cases: Iceberg's
JDBC catalog files its tables under its own name, and skade's rows carry `catalog_name='skade'`.
Jars come from .deps/spark/jars (scripts/setup_spark.sh); a missing jar is a failure.
"""
from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
JARS_DIR = ROOT / ".deps" / "spark" / "jars"
JARS = ("iceberg-spark-runtime-3.5_2.12-1.10.1.jar", "openlineage-spark_2.12-1.53.0.jar", "sqlite-jdbc-3.50.3.0.jar")
CATALOG = "skade"


def jdbc_catalog_conf(catalog_db: Path, warehouse: Path) -> dict[str, str]:
    """The settings of Iceberg's JDBC catalog on skade's catalog file (README, "Spark")."""
    p = f"spark.sql.catalog.{CATALOG}"
    return {
        p: "org.apache.iceberg.spark.SparkCatalog",
        f"{p}.type": "jdbc",
        f"{p}.uri": f"jdbc:sqlite:{catalog_db}",
        f"{p}.warehouse": f"file://{warehouse}",
        # skade creates the catalog tables (with the V1 schema: views column included)
        f"{p}.jdbc.schema-version": "V1",
        f"{p}.jdbc.init-catalog-tables": "false",
        # every load reads the catalog, so commits by skade are seen at once
        f"{p}.cache-enabled": "false",
    }


def rest_catalog_conf(rest_uri: str, warehouse: Path, catalog: str = CATALOG) -> dict[str, str]:
    """The settings of Iceberg's REST catalog on `skade serve` (README, "Spark"), as Spark
    catalog `catalog`."""
    p = f"spark.sql.catalog.{catalog}"
    return {
        p: "org.apache.iceberg.spark.SparkCatalog",
        f"{p}.type": "rest",
        f"{p}.uri": rest_uri,
        f"{p}.warehouse": f"file://{warehouse}",
        f"{p}.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
        # a long-lived session loads the table on every query, so it sees skade's commits
        f"{p}.cache-enabled": "false",
    }


def spark_session(warehouse: Path, *, rest_uri: str | None = None, jdbc_catalog: Path | None = None,
                  openlineage_url: str | None = None, app_name: str = "skade_peer",
                  conf: dict[str, str] | None = None):
    """A SparkSession (local[2], UI off, loopback only) whose default catalog `skade` is the
    warehouse, through `rest_uri` (skade serve) or `jdbc_catalog` (a catalog.db); exactly one.
    With `openlineage_url` (a server base URL) openlineage-spark posts its events to
    `<openlineage_url>/api/v1/lineage`. `conf` adds or overrides Spark settings.
    Stop it with `.stop()` before building another one in the same process."""
    if (rest_uri is None) == (jdbc_catalog is None):
        raise ValueError("spark_session: give exactly one of rest_uri and jdbc_catalog")
    missing = [j for j in JARS if not (JARS_DIR / j).is_file()]
    if missing:
        raise FileNotFoundError(f"Spark jars missing in {JARS_DIR}: {', '.join(missing)} (run scripts/setup_spark.sh)")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    warehouse = Path(warehouse).resolve()
    settings = {
        "spark.jars": ",".join(str(JARS_DIR / j) for j in JARS),
        "spark.driver.memory": "2g",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.defaultCatalog": CATALOG,
    }
    settings.update(rest_catalog_conf(rest_uri, warehouse) if rest_uri is not None
                    else jdbc_catalog_conf(Path(jdbc_catalog).resolve(), warehouse))
    if openlineage_url is not None:
        settings.update({
            "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",
            "spark.openlineage.transport.type": "http",
            "spark.openlineage.transport.url": openlineage_url.rstrip("/"),
            "spark.openlineage.transport.endpoint": "/api/v1/lineage",
            "spark.openlineage.namespace": app_name,
            "spark.openlineage.columnLineage.datasetLineageEnabled": "true",
        })
    settings.update(conf or {})
    builder = SparkSession.builder.master("local[2]").appName(app_name)
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def collect(spark, sql: str) -> list[dict]:
    """The rows of a Spark SQL query as dicts (nested rows as dicts too). Top-level `timestamp`
    (with time zone) values come back as aware UTC datetimes, as pyarrow reads skade's, where
    pyspark gives naive ones in the Python process's local time."""
    from pyspark.sql.types import TimestampType

    df = spark.sql(sql)
    tz_cols = [f.name for f in df.schema.fields if isinstance(f.dataType, TimestampType)]
    rows = []
    for r in df.collect():
        d = r.asDict(recursive=True)
        for c in tz_cols:
            if d[c] is not None:
                d[c] = d[c].astimezone(dt.timezone.utc)
        rows.append(d)
    return rows
