"""A cache of what kbt derives from the KB's files, keyed by the content of those files.

Every ``kbt route`` or ``kbt select`` would otherwise re-parse and re-validate every page
(jsonschema's import alone costs several bare interpreter starts). An entry is named by a
SHA-256 over the bytes of every input file and the identity (size, modification time) of
the code that interprets them, so an edited page or an upgraded kbt never meets an old
entry; an entry that cannot be read or decoded is treated as absent and rebuilt. Nothing here ever stops a command: when the cache
directory cannot be used, kbt simply does the work again.

Where: ``$OPKB_CACHE_DIR`` (empty turns the cache off), else ``$XDG_CACHE_HOME/opkb``, else
``~/.cache/opkb``. Not ``build/`` of the KB: an installed KB (``share/opkb``, a pre-commit
environment) is read-only, and the keys are content hashes, so one place serves every
checkout.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from kb_tools.diagnostics import KbError
from kb_tools.files.text import read_bytes

CACHE_ENV = "OPKB_CACHE_DIR"
KEEP_PER_KIND = 8  # older entries of a kind are removed when a new one is written
_UNREADABLE = b"\x00unreadable"  # stands in for a file that parsing will report, not hash
_SEAL = 32  # bytes of SHA-256 at the end of every entry
# The largest entry (the search index) is a few megabytes; anything far past that is
# not ours, and is not read into memory to find out.
MAX_ENTRY_BYTES = 64 * 1024 * 1024


def cache_dir() -> Path | None:
    """The cache directory, or None when the user turned caching off."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit is not None:
        return Path(explicit) if explicit.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opkb"


def file_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file no larger than ``limit``; None for anything else (a FIFO,
    a device, a link loop, a directory): the loader reports those, the cache never reads them."""
    try:
        return read_bytes(path, limit=limit)
    except KbError:
        return None


@lru_cache(maxsize=None)
def code_digest(*module_files: str) -> bytes:
    """What identifies the modules whose logic shapes an entry: change one, and the key
    changes. Their size and modification time stand for their bytes (reading the sources
    on every start-up would cost more than the entry saves)."""
    package = Path(__file__).resolve().parents[1]  # module_files are named from kb_tools/
    digest = hashlib.sha256()
    for name in ("files/cache.py", *module_files):
        try:
            status = os.stat(package / name)
            digest.update(f"{name}\x00{status.st_size}\x00{status.st_mtime_ns}\x00".encode())
        except OSError:
            digest.update(f"{name}\x00missing\x00".encode())
    return digest.digest()


def content_key(named_bytes: list[tuple[str, bytes | None]], code: bytes) -> str:
    """One hex key over the names and bytes of the inputs, in order, and the code digest."""
    digest = hashlib.sha256(code)
    for name, data in named_bytes:
        payload = _UNREADABLE if data is None else data
        digest.update(f"{name}\x00{len(payload)}\x00".encode("utf-8", "surrogateescape"))  # a name that is not UTF-8 too
        digest.update(payload)
    return digest.hexdigest()


def entry_path(kind: str, key: str, suffix: str) -> Path | None:
    directory = cache_dir()
    return None if directory is None else directory / f"{kind}-{key}{suffix}"


def read_entry(kind: str, key: str, suffix: str = ".json") -> bytes | None:
    """The stored bytes, or None when there is no entry or it is not byte for byte what was
    written (each entry ends with the SHA-256 of its data: a cut, flipped or edited entry is
    rebuilt, never trusted)."""
    path = entry_path(kind, key, suffix)
    if path is None:
        return None
    raw = file_bytes(path, MAX_ENTRY_BYTES)  # a FIFO or a link to /dev/zero is no entry
    if raw is None:
        return None
    data, seal = raw[:-_SEAL], raw[-_SEAL:]
    return data if len(raw) > _SEAL and hashlib.sha256(data).digest() == seal else None


def write_entry(kind: str, key: str, data: bytes, suffix: str = ".json") -> Path | None:
    """Store ``data`` atomically (a reader never sees half an entry); None when the cache
    directory cannot be written, which only costs the next command the same work again."""
    path = entry_path(kind, key, suffix)
    if path is None:
        return None
    try:
        tmp = _fresh_temp(path)
        try:
            tmp.write_bytes(data + hashlib.sha256(data).digest())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError:
        return None
    prune(kind, suffix, keep=path)
    return path


def _fresh_temp(path: Path) -> Path:
    """A new empty file beside ``path``, created with the user's umask (mkstemp would force
    0600 on a file other tools in the user's group may be meant to read)."""
    _make_cache_folder(path.parent)
    for attempt in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{attempt}.tmp")
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(path)


def _make_cache_folder(folder: Path) -> None:
    """The cache folder, and its parent when that is missing (``~/.cache`` on a new
    account), but nothing above: a HOME that does not exist is not kbt's to create."""
    try:
        folder.mkdir(exist_ok=True)
    except FileNotFoundError:
        folder.parent.mkdir(exist_ok=True)
        folder.mkdir(exist_ok=True)


def prune(kind: str, suffix: str, keep: Path) -> None:
    """Remove all but the newest KEEP_PER_KIND entries of one kind."""
    try:
        entries = sorted(keep.parent.glob(f"{kind}-*{suffix}"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP_PER_KIND:]:
            if old != keep:
                old.unlink(missing_ok=True)
    except OSError:
        pass


class Memo:
    """A small map from content keys to JSON values, read once per process and written back
    once at exit with the newest ``max_items`` entries: for many small results (parsed
    specs) where a file per result would cost more than the result."""

    def __init__(self, kind: str, max_items: int):
        self.kind, self.max_items = kind, max_items
        self._stored: dict | None = None
        self._added: dict = {}

    def _entries(self) -> dict:
        if self._stored is None:
            import json

            raw = read_entry(self.kind, "memo")
            try:
                doc = json.loads(raw) if raw else {}
            except ValueError:  # damaged: start again
                doc = {}
            self._stored = doc if isinstance(doc, dict) else {}
        return self._stored

    def get(self, key: str):
        return self._added[key] if key in self._added else self._entries().get(key)

    def put(self, key: str, value) -> None:
        if not self._added:
            import atexit

            atexit.register(self.save)
        self._added[key] = value

    def save(self) -> None:
        import json

        if self._added:
            merged = {**self._entries(), **self._added}
            kept = dict(list(merged.items())[-self.max_items:])
            write_entry(self.kind, "memo", json.dumps(kept, ensure_ascii=False).encode())
            self._stored, self._added = kept, {}
