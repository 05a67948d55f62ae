#!/usr/bin/env python3
"""Summarises the JUnit XML reports of an RCK run (stdlib only).

Usage: rck_report.py REPORT_DIR [--expected-failures FILE] [--write-passes FILE]

Prints each failed test with the first line of its message, then, last and alone on its line,
"N passed, N failed" (", N skipped" appended when some were skipped). Failures count
<failure> and <error>.

Exit status: 0 when the reports hold at least one test, no test container failed (console.log's
summary) and every failure is listed in the expected-failures file (one test name per line;
'#' starts a comment, e.g. the reason); 1 otherwise; 2 when there is no report to read.
"""
from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Results:
    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # name -> first line of the message
    skipped: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed) + len(self.skipped)

    def summary(self) -> str:
        line = f"{len(self.passed)} passed, {len(self.failed)} failed"
        if self.skipped:
            line += f", {len(self.skipped)} skipped"
        return line


def report_files(report_dir: Path) -> list[Path]:
    """The legacy JUnit XML files the console launcher writes (TEST-junit-*.xml)."""
    return sorted(Path(report_dir).glob("TEST-*.xml"))


def test_name(case: ET.Element) -> str:
    # The console launcher names a case after the method ("testFoo()", and
    # "testBar(int)[2]" for a parameterized invocation); the class is in classname.
    return case.get("name", "?")


def first_line(el: ET.Element) -> str:
    text = (el.get("message") or el.text or el.get("type") or "").strip()
    return text.splitlines()[0][:300] if text else ""


def read_results(report_dir: Path) -> Results:
    files = report_files(report_dir)
    if not files:
        raise FileNotFoundError(f"no TEST-*.xml report in {report_dir}")
    r = Results()
    for f in files:
        for case in ET.parse(f).getroot().iter("testcase"):
            name = test_name(case)
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            if bad is not None:
                r.failed[name] = first_line(bad)
            elif case.find("skipped") is not None:
                r.skipped.append(name)
            else:
                r.passed.append(name)
    return r


def failed_containers(report_dir: Path) -> int:
    """Containers (the test class, a parameterized method) that failed, e.g. in @BeforeAll,
    from the console launcher's summary in console.log; 0 when there is no log."""
    log = Path(report_dir) / "console.log"
    if not log.is_file():
        return 0
    m = re.search(r"\[\s*(\d+) containers failed\s*\]", log.read_text(errors="replace"))
    return int(m.group(1)) if m else 0


def read_name_list(path: Path) -> list[str]:
    """Test names, one a line; '#' starts a comment; blank lines ignored."""
    names = []
    for line in Path(path).read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.append(name)
    return names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report_dir", type=Path)
    ap.add_argument("--expected-failures", type=Path)
    ap.add_argument("--write-passes", type=Path, help="write the sorted names of the passed tests here")
    ap.add_argument("--header", help="comment lines to start --write-passes' file with")
    a = ap.parse_args()
    try:
        r = read_results(a.report_dir)
    except (FileNotFoundError, ET.ParseError) as e:
        print(f"rck_report: {e}", file=sys.stderr)
        print("0 passed, 0 failed")
        return 2

    expected = set()
    if a.expected_failures and a.expected_failures.is_file():
        expected = set(read_name_list(a.expected_failures))
    unexpected = [n for n in sorted(r.failed) if n not in expected]

    if r.failed:
        print("failed tests:")
        for name in sorted(r.failed):
            tag = "  (expected)" if name in expected else ""
            print(f"  {name}{tag}: {r.failed[name]}")
    now_passing = sorted(expected & set(r.passed))
    if now_passing:
        print("listed in expected failures but passed (remove them from the list):")
        for name in now_passing:
            print(f"  {name}")
    if a.write_passes:
        header = a.header.replace("\\n", "\n") if a.header else ""
        if header and not header.endswith("\n"):
            header += "\n"
        a.write_passes.write_text(header + "".join(f"{n}\n" for n in sorted(r.passed)))
    if r.total == 0:
        print("rck_report: the reports hold no test", file=sys.stderr)
    containers = failed_containers(a.report_dir)
    if containers:
        print(f"rck_report: {containers} test container(s) failed (see console.log)", file=sys.stderr)
    print(r.summary())
    return 0 if r.total and not unexpected and not containers else 1


if __name__ == "__main__":
    sys.exit(main())
