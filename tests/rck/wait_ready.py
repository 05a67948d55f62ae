#!/usr/bin/env python3
"""Waits until a REST catalog answers GET {uri}/v1/config with HTTP 200 (stdlib only).

Usage: wait_ready.py URI [--timeout SECONDS] [--pid PID]
Exit 0 when ready; 1 on timeout, or at once when --pid names a process that has exited.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.error
import urllib.request


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child has exited too
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def ready(uri: str, timeout: float = 60.0, pid: int | None = None) -> bool:
    url = uri.rstrip("/") + "/v1/config"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid is not None and not alive(pid):
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.25)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("uri")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--pid", type=int)
    a = ap.parse_args()
    if ready(a.uri, a.timeout, a.pid):
        return 0
    why = "exited" if a.pid is not None and not alive(a.pid) else f"did not answer within {a.timeout:g}s"
    print(f"wait_ready: {a.uri.rstrip('/')}/v1/config {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
