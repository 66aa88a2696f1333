"""Load a saved tensor (.npy or .pt) for comparison, with one clear error for each way it fails.

Whatever numpy or torch can load is either returned as a dense CPU tensor of its own shape (a
0-d array stays 0-d) or refused with a TensorFileError that names the reason. What a file
declares is checked before its data is read: a .npy header's element count against the bytes
after it and against the machine's memory, a .pt archive's data records against the memory,
and a loaded tensor's element count (an expanded, stride-0 tensor declares far more elements
than its storage holds) against the memory, before anything walks those elements.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kb_tools.limits import LIMITS, setting

SUFFIXES = (".npy", ".pt", ".pth")
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class TensorFileError(ValueError):
    """A tensor file that cannot be used; the message names the path and the reason."""


def machine_memory() -> int:
    """Bytes of physical memory: no tensor larger than this can be compared here."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_path(path) -> Path:
    """The path, if it names a regular file with a tensor suffix; torch-free so the CLI checks it
    first. A FIFO or a device would block or never end when read, so only regular files pass."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise TensorFileError(f"{path}: no such file") from None
    except OSError as exc:  # permission, a symlink loop, a name too long
        raise TensorFileError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if stat.S_ISDIR(mode):
        raise TensorFileError(f"{path}: is a directory, expected a .npy or .pt file")
    if path.suffix.lower() not in SUFFIXES:
        raise TensorFileError(f"{path}: unknown extension {path.suffix or '(none)'!r}; expected .npy or .pt")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise TensorFileError(f"{path}: is {kind}, expected a regular .npy or .pt file")
    return path


def _declared(path: Path, elements: int, itemsize: int, dtype, held: int | None) -> None:
    """Refuse ``elements`` of ``itemsize`` bytes that the file's data (``held`` bytes) or the
    machine cannot hold."""
    need = elements * itemsize
    if held is not None and need > held:
        raise TensorFileError(f"{path}: declares {elements} elements of {dtype} ({need} bytes) but holds only "
                              f"{held} bytes of data")
    _fits(path, f"declares {elements} elements of {dtype} ({need} bytes)", need)


TENSOR_SETTING = "OPKB_MAX_TENSOR_BYTES"  # one tensor, as loaded: 2 GiB unless set
MAX_INFLATION = 16  # torch.save stores its records; a deflated one inflating more than this is a bomb


def max_tensor_bytes() -> int:
    """The most bytes one loaded tensor may take: OPKB_MAX_TENSOR_BYTES (read on each call; a
    malformed one is refused at the command line, kb_tools.limits), else 2 GiB and never
    more than a quarter of the memory (a compare holds two or three tensors and their work)."""
    chosen = setting(TENSOR_SETTING)
    if chosen is not None:
        return min(chosen, machine_memory())
    return min(LIMITS[TENSOR_SETTING].default, machine_memory() // 4)


def _fits(path: Path, what: str, need: int) -> None:
    limit = max_tensor_bytes()
    if need > limit:
        raise TensorFileError(f"{path}: {what}, over the {limit}-byte limit of one tensor "
                              "(OPKB_MAX_TENSOR_BYTES raises it, up to this machine's memory)")


def _npy_header(path: Path):
    """(shape, dtype) from a .npy header, after checking that the bytes behind it hold them."""
    import math

    import numpy as np

    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(f)
            held = os.fstat(f.fileno()).st_size - f.tell()
    except Exception as exc:  # numpy raises ValueError/OSError/EOFError/... for a bad header
        raise TensorFileError(f"{path}: not a readable .npy array ({type(exc).__name__}: {exc})") from None
    if not dtype.hasobject:  # pickled objects are refused by np.load itself
        _declared(path, math.prod(shape), dtype.itemsize, dtype, held)
    return shape, dtype


def _from_npy(path: Path):
    import numpy as np
    import torch

    _npy_header(path)
    try:
        array = np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError/OSError/EOFError/... for bad files
        raise TensorFileError(f"{path}: not a readable .npy array ({type(exc).__name__}: {exc})") from None
    if not isinstance(array, np.ndarray):
        raise TensorFileError(f"{path}: holds a {type(array).__name__}, expected one array")
    if array.dtype.kind not in "biuf" or array.dtype.fields is not None:
        raise TensorFileError(f"{path}: holds dtype {array.dtype}, expected a numeric array")
    # Native byte order, C order, shape kept (ascontiguousarray would turn 0-d into shape (1,)).
    array = array.astype(array.dtype.newbyteorder("="), order="C", copy=False)
    try:
        return torch.from_numpy(array)
    except TypeError as exc:
        raise TensorFileError(f"{path}: dtype {array.dtype} has no torch equivalent ({exc})") from None


def _pt_records(path: Path) -> None:
    """Refuse a .pt archive whose data records together exceed the machine's memory, from the zip
    directory alone. torch itself checks each record against the size its pickle declares."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            records = [info for info in archive.infolist() if "/data/" in info.filename]
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not an archive (torch's legacy format, or junk): torch.load decides
    _fits(path, f"holds {sum(info.file_size for info in records)} bytes of tensor data", sum(info.file_size for info in records))
    for info in records:
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_INFLATION * max(info.compress_size, 4096):
            raise TensorFileError(f"{path}: record {info.filename} inflates from {info.compress_size} to {info.file_size} bytes "
                                  f"(over {MAX_INFLATION}x); torch.save never compresses, so this file is refused unread")


def _from_pt(path: Path):
    import torch

    _pt_records(path)
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a bad or unsafe file
        first = (str(exc).splitlines() or [""])[0]
        raise TensorFileError(f"{path}: not a readable tensor file ({type(exc).__name__}: {first})") from None
    if not isinstance(obj, torch.Tensor):
        raise TensorFileError(f"{path}: holds a {type(obj).__name__}, expected one tensor")
    if obj.layout != torch.strided:
        raise TensorFileError(f"{path}: holds a {obj.layout} tensor, expected a dense one")
    if obj.is_quantized:
        raise TensorFileError(f"{path}: holds a quantized {obj.dtype} tensor; save its int_repr() or dequantize() it")
    if obj.is_meta:
        raise TensorFileError(f"{path}: holds a meta tensor (a shape without data)")
    _declared(path, obj.numel(), obj.element_size(), str(obj.dtype).removeprefix("torch."), None)
    if obj.numel() * obj.element_size() > obj.untyped_storage().nbytes():  # expanded: elements share storage
        obj = obj.contiguous()
    return obj.detach()


def load(path):
    """A torch tensor from ``path``: .npy via numpy (no pickles), .pt via torch.load(weights_only=True)."""
    path = check_path(path)
    return _from_npy(path) if path.suffix.lower() == ".npy" else _from_pt(path)
