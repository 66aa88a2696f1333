"""The strict readers against the plain ones, in the same run: ``load_json`` (lines kept,
duplicates, nesting and NaN refused) against ``json.loads``, and ``load_yaml`` (lines kept,
duplicates, aliases and nesting refused) against PyYAML's own C loader. Medians of CPU time
over repeats; the ratio is what strictness costs, and on hostile input what it saves.

    python benchmarks/bench_strict_load.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from kb_tools.contract.selection import select
from kb_tools.contract.specs import load_spec
from kb_tools.contract.usage import merge_usage
from kb_tools.diagnostics import KbError
from kb_tools.files.jsonio import MAX_JSON_BYTES, load_json
from kb_tools.files.yamlio import load_yaml
from kb_tools.kb.pages import load_kb, split_front_matter

ROOT = Path(__file__).resolve().parents[1]


def cpu_median(fn, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def json_cases(tmp: Path) -> dict[str, Path]:
    kb = load_kb(ROOT)
    doc, _ = merge_usage(select(kb, load_spec(ROOT / "ops" / "softmax.yaml")), None)
    cases = {"softmax KB_USAGE skeleton": json.dumps(doc, indent=2, ensure_ascii=False)}
    cases["1 MiB of keys, one per line"] = "{" + ",\n".join(f'"k{i}": 1' for i in range(MAX_JSON_BYTES // 14)) + "}"
    cases["1 MiB of escaped keys, one line"] = "{" + ",".join(f'"\\u006b{i}": 1' for i in range(MAX_JSON_BYTES // 18)) + "}"
    paths = {}
    for i, (name, text) in enumerate(cases.items()):
        paths[name] = tmp / f"case{i}.json"
        paths[name].write_text(text)
    return paths


def billion_laughs(levels: int) -> str:
    lines = ["l0: &l0 [" + ",".join(["lol"] * 9) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def refused(text: str) -> None:
    try:
        load_yaml(text, "bomb.yaml")
    except KbError:
        return
    raise AssertionError("the alias bomb was accepted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in json_cases(Path(tmp)).items():
            text = path.read_text()
            ours = cpu_median(lambda: load_json(path), args.repeats)
            floor = cpu_median(lambda: json.loads(path.read_text()), args.repeats)
            rows.append((f"JSON {name} ({len(text) // 1024} KiB)", ours, "json.loads", floor))
    fronts = [split_front_matter(p.read_text(), p)[0] for p in sorted((ROOT / "kb").glob("*/*.md")) if p.name != "README.md"]
    fronts += [p.read_text() for p in sorted((ROOT / "ops").glob("*.yaml"))]
    ours = cpu_median(lambda: [load_yaml(t, "x") for t in fronts], args.repeats)
    peer = cpu_median(lambda: [yaml.load(t, Loader=yaml.CSafeLoader) for t in fronts], args.repeats)
    rows.append((f"YAML every page front matter and spec ({len(fronts)} files)", ours, "yaml CSafeLoader", peer))
    bomb = billion_laughs(6)  # 9**6 strings expanded: the peer's cost grows 9x per level; 9 levels took 2 GB
    ours = cpu_median(lambda: refused(bomb), args.repeats)
    peer = cpu_median(lambda: json.dumps(yaml.load(bomb, Loader=yaml.CSafeLoader)), 3)
    rows.append((f"YAML alias bomb, 6 levels ({len(bomb)} bytes)", ours, "CSafeLoader + json.dumps", peer))
    for name, ours, peer_name, peer in rows:
        print(f"{name}\n    strict {ours * 1000:9.2f} ms cpu   {peer_name} {peer * 1000:9.2f} ms cpu   "
              f"ratio strict/plain {ours / peer:7.3f}x")


if __name__ == "__main__":
    main()
