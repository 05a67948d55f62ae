#!/usr/bin/env python3
"""Runs a command and writes its peak RSS (KiB) to a file: peak_rss.py OUT_FILE CMD [ARGS...]

The command's stdin, stdout and stderr are this process's; the exit status is the command's.
A child's ru_maxrss includes the memory of the process it was forked from (until it
execs), so a large caller (a test or benchmark holding data) would inflate the figure:
this small process forks the command instead, and adds nothing but itself (~10 MiB).
"""
import os
import subprocess
import sys

out, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd)
_, status, usage = os.wait4(p.pid, 0)
with open(out, "w") as f:
    f.write(f"{usage.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status))
