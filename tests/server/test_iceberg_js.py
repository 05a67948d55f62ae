"""iceberg-js (the JavaScript Iceberg REST client, from npm) lists, loads and creates
tables through `skade serve`, with a warehouse name (so it resolves a prefix) and without."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "iceberg_js"


@pytest.mark.parametrize("warehouse_name", ["skade", None])
def test_iceberg_js_lists_and_loads(served, skade, warehouse_name):
    assert (HERE / "node_modules" / "iceberg-js").is_dir(), "the set-up installs tests/server/iceberg_js (npm ci)"
    skade.ok("create-namespace", "js")
    skade.ok("create", "js.from_cli", "--schema", "id:long!, name:string")
    args = ["node", str(HERE / "check.mjs"), served.url] + ([warehouse_name] if warehouse_name else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert {"namespace": ["js"]} in out["namespaces"] or ["js"] in out["namespaces"]
    assert out["tables"] == [{"namespace": ["js"], "name": "from_cli"}]
    assert out["loaded"]["fields"] == ["id", "name"] and out["loaded"]["location"].endswith("/js.db/from_cli")
    assert out["exists"] is True and out["missing"] is False
    assert out["error"] == {"status": 404, "type": "NoSuchTableException"}
    assert skade.ok("tables", "js.made").split()[-1] == "js.made.t"
