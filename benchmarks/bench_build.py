"""`kbt build` over a synthetic catalog (1,000 specs, 300 pages) against parsing those pages
once, measured in the same run. Selection and usage writing should cost a small multiple of
parsing the KB, not more. The parse is a real one (cache off); the build is the command as a
user runs it again after the first time, with the parsed KB in its content-keyed cache.
Wall and CPU time are both printed: on a machine whose disk others keep busy, the CPU ratio
says what the code costs and the wall ratio what the user waited.

    python benchmarks/bench_build.py [--specs 1000] [--pages 300]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from kb_tools import vocabulary as V
from kb_tools.cli import _skip_slow_optional_imports
from kb_tools.cli import main as main_cli
from kb_tools.pages import load_kb
from kb_tools.selection import select
from kb_tools.specs import load_spec, spec_files
from kb_tools.usage import merge_usage

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 3.0  # the bound on kbt build / parse


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


def timed(fn):
    """(result, wall seconds, CPU seconds of this process): the CPU time leaves out waiting
    for a disk that other work on the machine keeps busy."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--dir", default=None, help="where the catalog and outputs go (default: the system's temporary "
                        "directory; /dev/shm takes the disk out of the measure)")
    args = parser.parse_args()
    rng = random.Random(0)
    _skip_slow_optional_imports()  # as `kbt` does
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = Path(tmp)
        synthetic_kb(tmp, args.pages, rng)
        synthetic_specs(tmp / "ops", args.specs, rng)
        os.environ["OPKB_CACHE_DIR"] = str(tmp / "cache")
        load_kb(ROOT)  # imports (YAML, jsonschema) paid here, outside both timings
        os.environ["OPKB_CACHE_DIR"] = ""  # parsing once means parsing: no cache
        kb, t_parse, c_parse = timed(lambda: load_kb(tmp))
        assert not kb.diagnostics, kb.diagnostics[:3]
        os.environ["OPKB_CACHE_DIR"] = str(tmp / "cache")
        load_kb(tmp)  # the page cache as every build after the first finds it
        specs = [load_spec(p) for p in spec_files(tmp / "ops")]
        _, t_route, c_route = timed(lambda: [merge_usage(select(kb, spec), None) for spec in specs])
        argv = ["--kb-root", str(tmp), "build", str(tmp / "ops"), "-o", str(tmp / "build")]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code, t_build, c_build = timed(lambda: main_cli(argv))
        assert code == 0 and len(list((tmp / "build").glob("*/KB_USAGE.json"))) == args.specs
    print(f"in {Path(tmp).parent}")
    print(f"parse {len(kb.pages)} pages once (no cache):        wall {t_parse:6.2f} s  cpu {c_parse:6.2f} s")
    print(f"kbt build {args.specs} specs (KB cache warm):     wall {t_build:6.2f} s  cpu {c_build:6.2f} s  "
          f"({t_build / args.specs * 1000:.2f} ms per spec; reads {args.specs} specs, writes {2 * args.specs} files)")
    print(f"route {args.specs} specs in memory (no files):     wall {t_route:6.2f} s  cpu {c_route:6.2f} s")
    print(f"ratio routing / parse:   wall {t_route / t_parse:5.2f}x  cpu {c_route / c_parse:5.2f}x")
    print(f"ratio kbt build / parse: wall {t_build / t_parse:5.2f}x  cpu {c_build / c_parse:5.2f}x  (bound: {LIMIT:g}x)")


if __name__ == "__main__":
    main()
