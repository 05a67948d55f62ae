"""What a skade process loads: the libraries it maps at start are what every command pays
(the dynamic linker relocating them, page faults, their exit handlers). libcurl and its TLS,
Kerberos and LDAP chain load only in a process that sends HTTP; the HTTP server's library
(libcpp-httplib with OpenSSL and brotli) only in skade-serve, which `skade serve` runs. Both
map their memory without transparent huge pages."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from skade_util import SKADE_BIN, Served
from test_lineage_http import Receiver, _append, _setup

# Loaded only by the commands that need them (matched on the file name's stem).
HTTP_CLIENT = ("libcurl", "libgnutls", "libssh2", "libldap", "libgssapi_krb5", "librtmp", "libnghttp2")
HTTP_SERVER = ("libcpp-httplib", "libssl", "libcrypto", "libbrotlienc")


def _stems(names) -> set[str]:
    return {re.sub(r"[.-][0-9].*$", "", Path(n).name.split(".so")[0]) for n in names}


def _loaded(skade, tmp_path: Path, *args) -> tuple[int, str, set[str]]:
    """Runs skade with the dynamic linker's log (LD_DEBUG=libs) in files: (rc, stderr, the stems
    of every library whose initialiser ran, at start or by dlopen)."""
    prefix = tmp_path / f"ld-{uuid.uuid4().hex}"
    env = {**os.environ, "LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(prefix)}
    rc, _, err = skade(*args, env=env)
    logs = list(tmp_path.glob(prefix.name + ".*"))
    assert logs, "the dynamic linker wrote no log"
    inits = [m.group(1) for log in logs for m in re.finditer(r"calling init: (\S+)", log.read_text())]
    assert any("libarrow" in p for p in inits), "the log names the libraries skade loads"
    return rc, err, _stems(inits)


def test_commands_that_send_no_http_load_no_http_library(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!")
    _append(skade, tmp_path, 1)
    for args in (("scan", "db.t", "--format", "none"), ("tables",), ("--help",)):
        rc, err, libs = _loaded(skade, tmp_path, *args)
        assert rc == 0, err
        assert not libs & set(HTTP_CLIENT + HTTP_SERVER), f"skade {args[0]} loaded {sorted(libs & set(HTTP_CLIENT + HTTP_SERVER))}"


def test_libcurl_loads_on_the_first_http_request_and_delivers(skade, tmp_path):
    receiver = Receiver()
    try:
        _setup(skade, f"http://127.0.0.1:{receiver.port}/")
        delivered = len(receiver.requests)
        rc, err, libs = _loaded(skade, tmp_path, "create", "db.t", "--schema", "id:long!")
        assert rc == 0 and err == "", err
        assert "libcurl" in libs
        assert len(receiver.requests) == delivered + 1
        assert receiver.requests[-1]["body"]["eventType"] == "COMPLETE"
        assert receiver.requests[-1]["body"]["outputs"][0]["facets"]["symlinks"]["identifiers"][0]["name"] == "db.t"
    finally:
        receiver.stop()


def _needed(binary: Path) -> set[str]:
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    return _stems(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


@pytest.mark.parametrize("name", ["skade", "skade-serve", "bifrost"])
def test_no_binary_links_libcurl_and_only_skade_serve_links_the_http_server(name):
    binary = Path(SKADE_BIN).parent / name
    assert binary.is_file(), f"{binary} is not built"
    needed = _needed(binary)
    assert "libarrow" in needed, needed  # readelf read the right thing
    assert "libcurl" not in needed
    assert ("libcpp-httplib" in needed) == (name == "skade-serve"), needed


def test_serve_without_skade_serve_beside_it_is_a_clear_error(warehouse, tmp_path):
    alone = tmp_path / "bin" / "skade"
    alone.parent.mkdir()
    alone.write_bytes(Path(SKADE_BIN).read_bytes())
    alone.chmod(0o755)
    p = subprocess.run([str(alone), "--warehouse", str(warehouse), "serve", "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p
    assert p.stderr.startswith("skade: error: cannot start ") and str(alone.parent / "skade-serve") in p.stderr, p.stderr
    assert len(p.stderr.splitlines()) == 1


def _thp_enabled(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"^THP_enabled:\s*(\d)", status, re.M)
    if not m:
        pytest.skip("this kernel reports no THP_enabled (Linux < 5.0)")
    return m.group(1)


def test_commands_and_the_server_run_without_huge_pages(skade, warehouse):
    """Memory touched once is cheaper in 4 KiB pages than in 2 MiB ones zeroed whole
    (main.cc): a short command and `skade serve` (exec'd into skade-serve) both turn them off."""
    if _thp_enabled(os.getpid()) == "0":
        pytest.skip("this test runs without huge pages already: a child inherits that either way")
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!")
    watcher = subprocess.Popen([SKADE_BIN, "--warehouse", str(warehouse), "watch"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)  # past main's first lines
        assert watcher.poll() is None, watcher.stderr.read()
        assert _thp_enabled(watcher.pid) == "0"
    finally:
        watcher.kill()
        watcher.wait()
    served = Served(warehouse)
    try:
        assert _thp_enabled(served.proc.pid) == "0"
    finally:
        assert served.stop() == 0


def test_a_process_refused_threads_starts_and_scans(tmp_path):
    """Threads are an optimisation. A process that may start no second one (RLIMIT_NPROC
    reached) scans in its own thread and formats text there, instead of aborting on the
    refused thread; one that needs threads says so."""
    if os.geteuid() != 0 or not (shutil.which("setpriv") and shutil.which("prlimit")):
        pytest.skip("needs root to run skade as another user under a process limit")
    # As nobody, whose processes count against the limit: one process, no second thread.
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if subprocess.run([*nobody, SKADE_BIN, "--help"], capture_output=True, timeout=60).returncode != 0:
        pytest.skip("nobody cannot run this build (its folders are private)")
    shared = Path(tempfile.mkdtemp(prefix="skade-nproc-"))
    try:
        shared.chmod(0o777)
        wh = shared / "wh"
        (shared / "a.csv").write_text("id,v\n1,a\n2,b\n3,c\n")
        (shared / "a.csv").chmod(0o644)

        def run(*args, limited=True):
            cmd = [*nobody, *(["prlimit", "--nproc=1:1"] if limited else []), SKADE_BIN, "--warehouse", str(wh), *args]
            return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

        for args in (("init",), ("create-namespace", "db"), ("create", "db.t", "--schema", "id:long!, v:string"),
                     ("append", "db.t", str(shared / "a.csv"))):
            p = run(*args, limited=False)
            assert p.returncode == 0, p.stderr
        p = run("--help")
        assert p.returncode == 0 and p.stdout.startswith("skade: an embedded Iceberg warehouse"), p.stderr
        outputs = {fmt: run("scan", "db.t", "--format", fmt) for fmt in ("jsonl", "csv", "none")}
        for fmt, p in outputs.items():
            assert p.returncode == 0, (fmt, p.stderr)
            assert "terminate called" not in p.stderr
        assert [json.loads(line) for line in outputs["jsonl"].stdout.splitlines()] == [
            {"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
        assert outputs["csv"].stdout.splitlines() == ["id,v", "1,a", "2,b", "3,c"]
        assert outputs["none"].stdout.strip() == "3 rows"
        p = run("scan", "db.t", "--where", "id >= 2", "--format", "jsonl")
        assert p.returncode == 0, p.stderr
        assert [json.loads(line)["id"] for line in p.stdout.splitlines()] == [2, 3]
        # A server cannot work in one thread: it says so and exits, nothing aborted.
        p = run("serve", "--listen", "127.0.0.1:0")
        assert p.returncode == 2, p.stderr
        assert "skade: error: cannot start a thread" in p.stderr and "terminate called" not in p.stderr, p.stderr
    finally:
        shutil.rmtree(shared, ignore_errors=True)
