"""Writing a worked example's saved legs: the files ``kbt review`` and ``tensors_io.load`` read.

Each example's ``make_tensors.py`` runs its legs per dtype; this module is the one place that
says how they are stored — ``<out>/<dtype>/<leg>.npy``, bfloat16 (which numpy cannot hold)
as ``.pt`` — and the command line every such script shares.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def save(tensor, stem: Path) -> Path:
    """``stem`` + ``.npy`` (or ``.pt`` for bfloat16), written from a contiguous copy."""
    import numpy as np
    import torch

    path = Path(stem).with_suffix(".pt" if tensor.dtype == torch.bfloat16 else ".npy")
    if tensor.dtype == torch.bfloat16:
        torch.save(tensor.contiguous(), path)
    else:
        np.save(path, tensor.contiguous().numpy())
    return path


def write_legs(run_legs, dtypes, default_out: Path, description: str, argv=None) -> int:
    """``make_tensors.py [--out DIR]``: every leg ``run_legs(dtype)`` returns, saved per dtype."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=str(default_out), help=f"folder to write (default: {default_out})")
    args = parser.parse_args(argv)
    for dtype in dtypes:
        folder = Path(args.out) / dtype
        folder.mkdir(parents=True, exist_ok=True)
        for leg, tensor in run_legs(dtype).items():
            print(save(tensor, folder / leg))
    return 0
