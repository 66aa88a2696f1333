"""`kbt build` over a synthetic catalog (1,000 specs, 300 pages) against parsing those pages
once, measured in the same run. Selection and usage writing should cost a small multiple of
parsing the KB, not more.

    python benchmarks/bench_build.py [--specs 1000] [--pages 300]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from kb_tools import vocabulary as V
from kb_tools.build import build_catalog
from kb_tools.pages import load_kb
from kb_tools.selection import select
from kb_tools.specs import load_spec, spec_files
from kb_tools.usage import merge_usage

ROOT = Path(__file__).resolve().parents[1]


def synthetic_kb(dest: Path, n_pages: int, rng: random.Random) -> None:
    """Clone the real pages under new ids with random routing until there are n_pages."""
    shutil.copy(ROOT / "ROUTER.md", dest / "ROUTER.md")
    (dest / "kb").mkdir()
    shutil.copy(ROOT / "kb" / "sources.yaml", dest / "kb" / "sources.yaml")
    real = sorted(page.path for page in load_kb(ROOT).pages.values())  # the pages that load today
    for sub in V.PAGE_KINDS.values():
        (dest / "kb" / sub).mkdir()
    for i in range(n_pages):
        src = real[i % len(real)]
        _, front, body = src.read_text().split("---\n", 2)
        meta = yaml.safe_load(front)
        meta["id"] = f"{src.stem}-{i:04d}"
        if "mandatory_for" not in meta["routing"] or i >= len(real):
            meta["routing"] = {"topologies": rng.sample(V.TOPOLOGIES, rng.randint(1, 3))}
            props = rng.sample(V.ROUTING_FACTS, rng.randint(0, 2))
            if props:
                meta["routing"]["properties"] = props
        text = "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n" + body
        (dest / "kb" / src.parent.name / f"{meta['id']}.md").write_text(text)


def synthetic_specs(dest: Path, n_specs: int, rng: random.Random) -> None:
    dest.mkdir()
    for i in range(n_specs):
        dtypes = rng.sample(V.DTYPES, rng.randint(1, 5))
        flags = rng.sample([k for k in V.PROPERTY_KEYS if k not in V.LIST_PROPERTY_KEYS], rng.randint(0, 4))
        lines = [f"op: op{i:04d}", f"topologies: [{', '.join(rng.sample(V.TOPOLOGIES, rng.randint(1, 2)))}]",
                 "properties:", f"  dtypes: [{', '.join(dtypes)}]", *(f"  {f}: true" for f in flags),
                 f"target: {rng.choice(V.TARGETS)}", "criteria:", *(f"  {d}: {rng.choice(V.CRITERIA)}" for d in dtypes)]
        (dest / f"op{i:04d}.yaml").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        synthetic_kb(tmp, args.pages, rng)
        synthetic_specs(tmp / "ops", args.specs, rng)
        start = time.perf_counter()
        kb = load_kb(tmp)
        t_parse = time.perf_counter() - start
        assert not kb.diagnostics, kb.diagnostics[:3]
        specs = [load_spec(p) for p in spec_files(tmp / "ops")]
        start = time.perf_counter()
        for spec in specs:
            merge_usage(select(kb, spec), None)
        t_route = time.perf_counter() - start
        start = time.perf_counter()
        rows, diags = build_catalog(kb, tmp / "ops", tmp / "build")
        t_build = time.perf_counter() - start
        assert not diags and len(rows) == args.specs, diags[:3]
    print(f"parse {len(kb.pages)} pages once:            {t_parse:7.2f} s")
    print(f"build {args.specs} specs (select + usage):  {t_build:7.2f} s  ({t_build / args.specs * 1000:.2f} ms per spec)")
    print(f"route {args.specs} specs in memory (select + usage skeleton, no files): {t_route:7.2f} s")
    print(f"ratio routing / parse: {t_route / t_parse:.2f}x")
    print(f"ratio build / parse:   {t_build / t_parse:.2f}x  (the rest is reading specs and writing {2 * args.specs} files)")


if __name__ == "__main__":
    main()
