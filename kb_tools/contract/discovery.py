"""Finding the operator spec a command needs, the way a user expects (issue 41).

One order for every command: ``--spec``; a ``KB_SELECTION.json`` beside the path or above
it (its ``op`` names the spec among the ``ops/*.yaml`` above); ``ops/*.yaml`` in the folder
or one above it, when exactly one of them fits the code; a CANN operator folder. When none
or several are found the answer is one line that names the flag to pass, never a guess.
The search is bounded: a few folders up, a capped number of files per folder, and a symlink
loop or an unreadable folder ends it with that same line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from kb_tools.contract.specs import OpSpec, load_spec
from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError, KbErrors

MAX_LEVELS = 8  # folders searched upwards from the path
MAX_ENTRIES = 2000  # entries read from one ops/ folder before the search gives up
MAX_SPECS = 64  # specs loaded to find the one that fits the code
MAX_SELECTION_BYTES = 1 << 20
SELECTION = "KB_SELECTION.json"
CODE = "SP040"
_AFFIXES = (("test_", ""), ("", "_test"), ("", "_golden"), ("golden_", ""), ("", "_wrapper"), ("", "_impl"),
            ("", "_kernel"), ("", "_third_party"))


def op_candidates(path: Path) -> list[str]:
    """Operator names a file may belong to, most specific first."""
    names = []
    for stem in (path.stem, path.parent.name, path.parent.parent.name):
        for prefix, suffix in _AFFIXES:
            if stem.startswith(prefix) and stem.endswith(suffix) and len(stem) > len(prefix) + len(suffix):
                names.append(stem[len(prefix):len(stem) - len(suffix)] if suffix else stem[len(prefix):])
        names.append(stem)
    return list(dict.fromkeys(n for n in names if n and n.isidentifier()))


@dataclass(frozen=True)
class Found:
    """A spec and the way it was found (for a note a user can check)."""

    spec: OpSpec
    how: str


def _stop(where: Path | str, why: str, flag: str) -> KbError:
    return KbError(Diagnostic(str(where), None, CODE, f"{why}; pass {flag}"), EXIT_USAGE)


def discover(path: Path | str, flag: str = "--spec ops/<op>.yaml") -> Found:
    """The spec for ``path`` (a file of the operator's code or its folder), or a KbError of
    one line naming ``flag``."""
    start = Path(path)
    try:
        here = start.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        raise _stop(start, "cannot resolve the path (a symlink loop?) to search for the operator's spec", flag) from None
    folder = here if _is_dir(here) else here.parent
    code = None if folder == here else here
    for level, current in enumerate(_upwards(folder)):
        found = _from_selection(current, flag)
        if found is None:
            found = _from_ops(current, code, flag)
        if found is None and level == 0:
            found = _from_cann(current)
        if found is not None:
            return found
    cann = (f" (its op_host/ registers no output dtype opkb reads; kbt spec {start} says what was not read)"
            if _is_dir(folder / "op_host") else "")
    raise _stop(start, f"no operator spec found: no {SELECTION} and no ops/*.yaml in this folder or "
                f"{MAX_LEVELS - 1} above it{cann}", flag)


def holds_no_spec(folder: Path, clear: set[str] | None = None) -> bool:
    """True when ``discover`` finds nothing for any file in ``folder`` (resolved): no selection
    and no ``ops/*.yaml`` in it or the folders above it, and it is no CANN operator folder. It
    depends on the folder alone, so a run over many files can ask it once per folder. False
    whenever something is there or cannot be read (the full search then says what).
    ``clear``: folders a run found holding neither (added to here), so that siblings do not
    look again at the folders above them."""
    try:
        for current in _upwards(folder):
            key = str(current)
            if clear is not None and key in clear:
                continue
            if (current / SELECTION).is_file() or any(_specs_in(current / "ops", "")):
                return False
            if clear is not None:
                clear.add(key)
    except (OSError, KbError):
        return False
    return _from_cann(folder) is None


def _upwards(folder: Path):
    for _ in range(MAX_LEVELS):
        yield folder
        if folder.parent == folder:
            return
        folder = folder.parent


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _from_selection(folder: Path, flag: str) -> Found | None:
    """A selection names its op; the spec is the ``ops/*.yaml`` above it that declares it."""
    path = folder / SELECTION
    try:
        if not path.is_file():
            return None
        too_large = path.stat().st_size > MAX_SELECTION_BYTES
        data = None if too_large else json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        raise _stop(path, "cannot be read as JSON to name the operator", flag) from None
    if too_large:
        raise _stop(path, f"is over {MAX_SELECTION_BYTES} bytes, too large to name the operator", flag)
    op = data.get("op") if isinstance(data, dict) else None
    if not isinstance(op, str):
        raise _stop(path, "names no op", flag)
    class_id = data.get("class_id", ".")
    for current in _upwards(folder):
        specs = [s for s in _specs_in(current / "ops", flag)[0] if s.op == op and s.class_id == class_id]
        if len(specs) == 1:
            return Found(specs[0], f"op {op!r} named by {path}")
        if len(specs) > 1:
            raise _stop(path, f"op {op!r} is declared by {len(specs)} specs ({_names(specs)})", flag)
    cann = _from_cann(folder) if _is_dir(folder / "op_host") else None
    if cann is not None and cann.spec.op == op:  # written into a CANN folder: the folder is the spec
        return Found(cann.spec, f"op {op!r} named by {path}, {cann.how}")
    raise _stop(path, f"names op {op!r}, but no ops/*.yaml above it declares it", flag)


def _from_ops(folder: Path, code: Path | None, flag: str) -> Found | None:
    specs, broken = _specs_in(folder / "ops", flag)
    if not specs and len(broken) == 1:
        raise broken[0]  # the user's own spec, with its mistake and line
    if not specs and broken:
        raise _stop(folder / "ops", f"none of its {len(broken)} specs loads (`kbt lint` names each mistake)", flag)
    if not specs:
        return None
    if len(specs) == 1:
        return Found(specs[0], f"the only spec in {folder / 'ops'}")
    fitting = [s for s in specs if code is not None and _fits(s, code, folder)]
    if len(fitting) == 1:
        return Found(fitting[0], f"the spec in {folder / 'ops'} that names {code.name}")
    shown = fitting or specs
    raise _stop(folder / "ops", f"{len(shown)} specs could be this operator's ({_names(shown)})", flag)


def _fits(spec: OpSpec, code: Path, folder: Path) -> bool:
    """The spec names this file as its wrapper, or the file or its folder is named after the op."""
    try:
        if spec.wrapper and (folder / spec.wrapper).resolve() == code:
            return True
    except (OSError, RuntimeError):  # the wrapper's path meets a symlink loop: it names no file
        pass
    return spec.op in op_candidates(code)


def _specs_in(ops: Path, flag: str) -> tuple[list[OpSpec], list[Exception]]:
    """The specs that load in ``ops`` and the errors of those that do not, bounded in
    entries read and specs loaded."""
    names = []
    try:
        if not ops.is_dir():
            return [], []
        with os.scandir(ops) as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_ENTRIES:
                    raise _stop(ops, f"holds over {MAX_ENTRIES} entries; the search for the spec stops there", flag)
                if entry.name.endswith(".yaml") and entry.is_file():
                    names.append(entry.name)
    except OSError as exc:
        raise _stop(ops, f"cannot be read ({exc.strerror or exc}) to search for the operator's spec", flag) from None
    if len(names) > MAX_SPECS:
        raise _stop(ops, f"holds {len(names)} specs, over {MAX_SPECS} to search", flag)
    specs, broken = [], []
    for name in sorted(names):
        try:
            specs.append(load_spec(ops / name))
        except (KbError, KbErrors) as exc:
            broken.append(exc)
    return specs, broken


def _from_cann(folder: Path) -> Found | None:
    """A CANN operator folder (op_host/) read as its spec (``kb_tools.contract.cann_spec``);
    None when it is not one or registers no output dtype opkb reads."""
    from kb_tools.contract.cann_spec import as_spec

    try:
        spec = as_spec(folder)
    except (KbError, KbErrors, OSError, ValueError):  # a folder it cannot read: the fallback message says so
        return None
    return Found(spec, f"the CANN operator folder {folder}") if spec is not None else None


def _names(specs: list[OpSpec]) -> str:
    return ", ".join(str(s.path) for s in specs[:4]) + (", ..." if len(specs) > 4 else "")


def spec_for(argument: str | None, spec_flag: str | None, flag: str = "--spec ops/<op>.yaml") -> Found:
    """What a command's arguments name: ``--spec`` or a positional ``.yaml`` loads as given;
    a positional folder or code file (default: the current folder) is searched from."""
    given = spec_flag or (argument if argument and argument.endswith((".yaml", ".yml")) else None)
    if given:
        return Found(load_spec(Path(given)), "given")
    return discover(Path(argument or "."), flag)
