"""Load a saved tensor (.npy or .pt) for comparison, with one clear error for each way it fails.

Whatever numpy or torch can load is either returned as a dense CPU tensor of its own shape (a
0-d array stays 0-d) or refused with a TensorFileError that names the reason.
"""

from __future__ import annotations

from pathlib import Path

SUFFIXES = (".npy", ".pt", ".pth")


class TensorFileError(ValueError):
    """A tensor file that cannot be used; the message names the path and the reason."""


def check_path(path) -> Path:
    """The path, if it names a file with a tensor suffix; torch-free so the CLI checks it first."""
    path = Path(path)
    if not path.exists():
        raise TensorFileError(f"{path}: no such file")
    if path.is_dir():
        raise TensorFileError(f"{path}: is a directory, expected a .npy or .pt file")
    if path.suffix.lower() not in SUFFIXES:
        raise TensorFileError(f"{path}: unknown extension {path.suffix or '(none)'!r}; expected .npy or .pt")
    return path


def _from_npy(path: Path):
    import numpy as np
    import torch

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


def _from_pt(path: Path):
    import torch

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
    return obj.detach()


def load(path):
    """A torch tensor from ``path``: .npy via numpy (no pickles), .pt via torch.load(weights_only=True)."""
    path = check_path(path)
    return _from_npy(path) if path.suffix.lower() == ".npy" else _from_pt(path)
