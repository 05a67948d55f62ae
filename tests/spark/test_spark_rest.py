"""Spark through `skade serve` (Iceberg's REST catalog)."""
from __future__ import annotations

from skade_util import assert_same_rows
from spark_peer import collect


def test_spark_insert_read_by_skade(spark, skade):
    skade.ok("create-namespace", "shop")
    spark.sql("CREATE TABLE shop.t (id bigint, s string) USING iceberg")
    spark.sql("INSERT INTO shop.t VALUES (1, 'a'), (2, 'b')")
    assert_same_rows(skade.rows("shop.t"), collect(spark, "SELECT * FROM shop.t"), what="insert")
