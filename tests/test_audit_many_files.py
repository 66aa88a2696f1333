"""Issue 24, bad input: a folder of 10,000 files is audited whole, in one process of bounded
memory (no file's tree outlives its audit but the few import targets kept), and a wrapper's
helper imported from another module of the tree is still followed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES, PER_PACKAGE = 100, 99  # and an __init__.py each: 10,000 files
WRAPPERS_PER_PACKAGE = 10
# The interpreter with kb_tools imported holds about 25 MiB and the audit of these files
# about 25 MiB more at its peak; keeping every file's tree would take about 100 MiB more.
MAX_RSS_KIB = 100 * 1024

UTILS = "def to_fp32(x):\n    return x.float()\n"
WRAPPER = ("import triton\nfrom .utils import to_fp32\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
           "def w{i}_wrapper(x):\n    y = to_fp32(x)\n    k[(1,)](y)\n    return y\n")
PLAIN = "import math\n\n\ndef f{i}(x, n={i}):\n    return math.ceil(x / n) if n else x\n"
# kbt audit, then this process's peak resident memory on stderr: VmHWM, the peak of this
# program's own memory (getrusage's maxrss would include the pytest worker it was forked from)
AUDIT_AND_PEAK = ("import re, sys\nfrom kb_tools.cli import main\nrc = main(sys.argv[1:])\n"
                  "status = open('/proc/self/status').read()\n"
                  "print('peak-kib', re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1), file=sys.stderr)\nsys.exit(rc)\n")


def _write_tree(root: Path) -> None:
    for p in range(PACKAGES):
        pkg = os.path.join(root, f"pkg{p:03d}")
        os.mkdir(pkg)
        texts = {"__init__.py": "", "utils.py": UTILS}
        for i in range(PER_PACKAGE - 1):
            texts[f"m{i:02d}.py"] = (WRAPPER if i < WRAPPERS_PER_PACKAGE else PLAIN).format(i=i)
        for name, text in texts.items():
            with open(os.path.join(pkg, name), "w") as handle:
                handle.write(text)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="peak memory is read from /proc (Linux)")
def test_ten_thousand_files_are_all_audited_in_bounded_memory(tmp_path):
    _write_tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    run = subprocess.run([sys.executable, "-c", AUDIT_AND_PEAK, "audit", "--format", "json", "--jobs", "1", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=600)
    files = PACKAGES * (PER_PACKAGE + 1)
    assert files == 10_000 and run.returncode == 1, run.stderr[-2000:]
    summary = [line for line in run.stderr.splitlines() if line.startswith("kbt audit (policy strict)")]
    assert summary == [f"kbt audit (policy strict): {PACKAGES} findings, 0 suppressed, "
                       f"{PACKAGES * WRAPPERS_PER_PACKAGE} wrappers in {files} files"]
    # each package's helper line is one finding, reached from each of its ten wrappers
    found = json.loads(run.stdout)["findings"]
    assert {(Path(f["path"]).name, f["line"], f["code"], 1 + len(f.get("also", []))) for f in found} \
        == {("utils.py", 2, "WB101", WRAPPERS_PER_PACKAGE)} and len(found) == PACKAGES
    peak = int(run.stderr.rsplit("peak-kib ", 1)[1].split()[0])
    assert peak < MAX_RSS_KIB, f"peak resident memory {peak // 1024} MiB"
