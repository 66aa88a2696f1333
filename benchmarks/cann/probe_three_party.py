"""Write a copy of labelled ops-math folders whose legacy golden also runs as a three-party case.

Usage: python benchmarks/cann/probe_three_party.py REPO OUT [--labels FILE]
(default golden-labels-ops-math-unseen-3-probe.yaml beside this script). For each operator in
the labels, REPO/<op> is copied to OUT/<op> (OUT outside this repository) and a spec class is
appended to its golden.py: its ``golden`` calls the legacy function of the first "kernel" key,
with a cross_check tolerance, so the three-party rules judge a body nobody wrote for them.
The original lines keep their numbers. Then: score_golden.py OUT --labels FILE.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import sys
from pathlib import Path

import yaml

GOLDEN = Path("tests") / "assets" / "golden.py"
PROBE = '''

class _ProbeThreePartySpec:
    def golden(*args, **kwargs):
        return {func}(*args, **kwargs)

    tolerance = {{"float16": {{"standard": "cross_check"}}, "bfloat16": {{"standard": "cross_check"}},
                 "float32": {{"standard": "cross_check"}}}}


__spec__ = {{"{key}": "_ProbeThreePartySpec"}}
'''


def kernel_entry(text: str) -> tuple[str, str] | None:
    """(key, function name) of the first entry under ``__golden__["kernel"]``, read statically."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__golden__" for t in node.targets):
            table = node.value
            if not isinstance(table, ast.Dict):
                return None
            for k, v in zip(table.keys, table.values):
                if isinstance(k, ast.Constant) and k.value == "kernel" and isinstance(v, ast.Dict):
                    for kk, vv in zip(v.keys, v.values):
                        if isinstance(kk, ast.Constant) and isinstance(vv, ast.Constant):
                            return kk.value, vv.value
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("out")
    parser.add_argument("--labels", default=str(Path(__file__).with_name("golden-labels-ops-math-unseen-3-probe.yaml")))
    args = parser.parse_args(argv)
    repo, out = Path(args.repo), Path(args.out)
    if Path.cwd().resolve() in out.resolve().parents or out.resolve() == Path.cwd().resolve():
        print(f"{out}:1: write the probe copy outside this repository", file=sys.stderr)
        return 2
    try:
        operators = yaml.safe_load(Path(args.labels).read_text(encoding="utf-8"))["operators"]
    except (OSError, yaml.YAMLError, TypeError, KeyError) as exc:
        mark = getattr(exc, "problem_mark", None)
        print(f"{args.labels}:{mark.line + 1 if mark else 1}: labels not readable ({type(exc).__name__})", file=sys.stderr)
        return 2
    for op in operators:
        target = out / op
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(repo / op, target, symlinks=True)
        text = (target / GOLDEN).read_text(encoding="utf-8")
        found = kernel_entry(text)
        if found is None:
            print(f"{repo / op / GOLDEN}:1: no __golden__['kernel'] entry; not probed", file=sys.stderr)
            continue
        (target / GOLDEN).write_text(text.rstrip("\n") + "\n" + PROBE.format(key=found[0], func=found[1]), encoding="utf-8")
        print(f"{op}: {found[0]} -> {found[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
