"""A commit is durable only when what it refers to is: every file a write command creates
(data, delete, manifest, manifest list, metadata) has its contents synced, and the folder
holding its name synced after it, before the catalog's pointer moves (SQLite's sync).

Checked on the system calls of each command (strace -f -y): a power cut after the
catalog's sync must never leave a table pointing at a file the disk does not have.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from skade_util import Skade

SYNC = re.compile(r"\b(?:fsync|fdatasync)\(\d+<([^>]*)>")
TMP_SUFFIX = re.compile(r"\.[0-9a-f]{8}\.tmp$")  # the temporary name a metadata file is linked from


def synced_paths(cmd: list[str], log: Path) -> list[str]:
    """Runs cmd under strace; returns the paths it synced, in order."""
    assert shutil.which("strace"), "strace is not installed (scripts/setup.sh installs it)"
    p = subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", str(log), *cmd],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return [TMP_SUFFIX.sub("", m.group(1)) for line in log.read_text().splitlines() if (m := SYNC.search(line))]


def tree(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


@pytest.fixture
def wh(tmp_path, skade_bin):
    s = Skade(tmp_path / "wh", skade_bin)
    s.ok("init")
    s.ok("create-namespace", "d")
    s.ok("create", "d.t", "--schema", "id:long!, region:string, v:int", "--partition", "region",
         "--identifier", "id")
    return s


def check_durable(s: Skade, tmp_path: Path, *args: str) -> None:
    before = tree(s.warehouse)
    synced = synced_paths([s.binary, "--warehouse", str(s.warehouse), *args], tmp_path / "strace.log")
    created = sorted(tree(s.warehouse) - before)
    assert created, f"skade {' '.join(args)} created nothing"
    catalog = {str(s.warehouse / "catalog.db"), str(s.warehouse / "catalog.db-wal")}
    commit = max((i for i, p in enumerate(synced) if p in catalog), default=None)
    assert commit is not None, f"skade {' '.join(args)} never synced the catalog"
    for path in created:
        # A file's contents, then the folder holding its name; a new folder's name likewise.
        if os.path.isfile(path):
            own = [i for i, p in enumerate(synced[:commit]) if p == path]
            assert own, f"{path} was not synced before the commit ({' '.join(args)})"
            after = own[0]
        else:
            after = -1
        folder = str(Path(path).parent)
        assert folder in synced[after + 1:commit], \
            f"the folder of {path} was not synced after it and before the commit ({' '.join(args)})"


def test_every_write_command_syncs_what_it_commits(wh, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("id,region,v\n" + "".join(f"{i},{'north' if i % 2 else 'south'},{i}\n" for i in range(100)))
    check_durable(wh, tmp_path, "append", "d.t", str(src))
    up = tmp_path / "up.csv"
    up.write_text("id,region,v\n1,north,-1\n2,south,-2\n500,east,5\n")
    check_durable(wh, tmp_path, "upsert", "d.t", str(up))
    check_durable(wh, tmp_path, "delete", "d.t", "--where", "v = 3")
    check_durable(wh, tmp_path, "compact", "d.t")
    rows = wh.ok("scan", "d.t", "--format", "none")
    assert rows.strip() == "100 rows"  # 100 - 1 deleted + 1 inserted
