"""`kbt build` over a synthetic catalog (1,000 specs, 300 pages) against parsing those pages
once, measured in the same run. Selection and usage writing should cost a small multiple of
parsing the KB, not more. The parse is a real one (cache off); the build is the command as a
user runs it again after the first time: the parsed KB in its content-keyed cache, and the
spec memo as a new process finds it on disk (it keeps 256 specs, so most of a 1,000-spec
catalog is parsed again). Each round times a parse, a build into an empty folder and a
rebuild over that folder's output; medians of the rounds are compared. Wall and CPU time
are both printed: on a machine whose disk others keep busy, the CPU ratio says what the code
costs and the wall ratio what the user waited.

    python benchmarks/bench_build.py [--specs 1000] [--pages 300] [--rounds 5] [--dir /dev/shm]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from kb_tools.cli import _skip_slow_optional_imports
from kb_tools.cli import main as main_cli
from kb_tools.contract import specs as spec_memo
from kb_tools.contract.selection import Router
from kb_tools.contract.specs import load_spec, spec_files
from kb_tools.contract.usage import fresh_usage
from kb_tools.files import cache
from kb_tools.kb import vocabulary as V
from kb_tools.kb.pages import load_kb

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


def as_a_new_process_finds_it() -> None:
    """Save this process's spec memo as ``kbt`` does at exit, then forget what it added, so
    the next build reads only what a new process would read."""
    spec_memo.MEMO.save()
    spec_memo.MEMO = cache.Memo(spec_memo.MEMO.kind, max_items=spec_memo.MEMO.max_items)


def build(tmp: Path, out: str) -> int:
    argv = ["--kb-root", str(tmp), "build", str(tmp / "ops"), "-o", str(tmp / out)]
    as_a_new_process_finds_it()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main_cli(argv)


def write_floor(files: dict[Path, bytes], dest: Path) -> None:
    """The file system's part of a build: the same bytes written the way any atomic writer
    must (a folder per operator, a new temporary file, a rename), with nothing computed."""
    for rel, data in files.items():
        folder = dest / rel.parent
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{rel.name}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.write(fd, data)
        os.close(fd)
        os.replace(tmp, dest / rel)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where the catalog and outputs go (default: the system's temporary "
                        "directory; /dev/shm takes the disk out of the measure)")
    args = parser.parse_args()
    rng = random.Random(0)
    _skip_slow_optional_imports()  # as `kbt` does
    times = {"parse": [], "route": [], "build": [], "floor": [], "rebuild": []}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = Path(tmp)
        synthetic_kb(tmp, args.pages, rng)
        synthetic_specs(tmp / "ops", args.specs, rng)
        os.environ["OPKB_CACHE_DIR"] = str(tmp / "cache")
        load_kb(ROOT)  # imports (YAML, jsonschema) paid here, outside every timing
        load_kb(tmp)  # the page cache as every build after the first finds it
        specs = [load_spec(p) for p in spec_files(tmp / "ops")]
        build(tmp, "warm-up")
        for i in range(args.rounds):
            os.environ["OPKB_CACHE_DIR"] = ""  # parsing once means parsing: no cache
            kb, *t = timed(lambda: load_kb(tmp))
            times["parse"].append(t)
            assert not kb.diagnostics, kb.diagnostics[:3]
            os.environ["OPKB_CACHE_DIR"] = str(tmp / "cache")
            router, skeletons = Router(kb), {}
            _, *t = timed(lambda: [fresh_usage(router.select(spec), skeletons) for spec in specs])
            times["route"].append(t)
            code, *t = timed(lambda: build(tmp, f"build{i}"))
            times["build"].append(t)
            assert code == 0 and len(list((tmp / f"build{i}").glob("*/KB_USAGE.json"))) == args.specs
            written = {p.relative_to(tmp / f"build{i}"): p.read_bytes() for p in (tmp / f"build{i}").rglob("*.json")}
            _, *t = timed(lambda: write_floor(written, tmp / f"floor{i}"))
            times["floor"].append(t)
            code, *t = timed(lambda: build(tmp, f"build{i}"))
            times["rebuild"].append(t)
            assert code == 0
    wall = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
    print(f"in {Path(tmp).parent}, medians of {args.rounds} rounds")
    print(f"parse {len(kb.pages)} pages once (no cache):            wall {wall['parse']:6.2f} s  cpu {cpu['parse']:6.2f} s")
    print(f"kbt build {args.specs} specs into an empty folder:    wall {wall['build']:6.2f} s  cpu {cpu['build']:6.2f} s  "
          f"(reads {args.specs} specs, writes {2 * args.specs} files)")
    print(f"the file system's floor: the same files written: wall {wall['floor']:6.2f} s  cpu {cpu['floor']:6.2f} s  "
          "(a folder, a temporary file and a rename each)")
    print(f"kbt build again over its own output:        wall {wall['rebuild']:6.2f} s  cpu {cpu['rebuild']:6.2f} s  "
          "(reads both files of each operator, writes none)")
    print(f"route {args.specs} specs in memory (no files, no specs read): wall {wall['route']:6.2f} s  cpu {cpu['route']:6.2f} s")
    for name, label in (("route", "routing"), ("rebuild", "rebuild"), ("build", "kbt build")):
        print(f"ratio {label} / parse: {' ' * (9 - len(label))}wall {wall[name] / wall['parse']:5.2f}x  "
              f"cpu {cpu[name] / cpu['parse']:5.2f}x" + (f"  (bound: {LIMIT:g}x)" if name == "build" else ""))
    print(f"ratio (kbt build - floor) / parse: wall {(wall['build'] - wall['floor']) / wall['parse']:5.2f}x  "
          f"cpu {(cpu['build'] - cpu['floor']) / cpu['parse']:5.2f}x  (what the code adds to writing the files)")


if __name__ == "__main__":
    main()
