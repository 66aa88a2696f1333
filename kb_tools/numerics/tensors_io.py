"""Load a saved tensor (.npy or .pt) for comparison, with one clear error for each way it fails."""

from __future__ import annotations

from pathlib import Path


class TensorFileError(ValueError):
    """A tensor file that cannot be used; the message names the path and the reason."""


def load(path) -> "object":
    """A torch tensor from ``path``: .npy via numpy (no pickles), .pt via torch.load(weights_only=True)."""
    import numpy as np
    import torch

    path = Path(path)
    if not path.exists():
        raise TensorFileError(f"{path}: no such file")
    if path.is_dir():
        raise TensorFileError(f"{path}: is a directory, expected a .npy or .pt file")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except Exception as exc:  # numpy raises ValueError/OSError/EOFError for bad files
            raise TensorFileError(f"{path}: not a readable .npy array ({type(exc).__name__}: {exc})") from None
        if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
            raise TensorFileError(f"{path}: holds dtype {array.dtype}, expected a numeric array")
        return torch.from_numpy(np.ascontiguousarray(array))
    if suffix in (".pt", ".pth"):
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many types for a bad or unsafe file
            raise TensorFileError(f"{path}: not a readable tensor file ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
        if not isinstance(obj, torch.Tensor):
            raise TensorFileError(f"{path}: holds a {type(obj).__name__}, expected one tensor")
        return obj
    raise TensorFileError(f"{path}: unknown extension {suffix or '(none)'!r}; expected .npy or .pt")
