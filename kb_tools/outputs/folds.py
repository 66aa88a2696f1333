"""A table, and a figure beside it, shown folded under a one-line summary.

The review notebook shows every page's invariants and every check's evidence this way, as the
site's Markdown review folds each page's invariant table: read executed, a review is then one
line per page and per check (its verdict printed above), in JupyterLab and on the site alike,
and a reader opens only what they want to read. Native ``<details>``: no script, nothing to
trust.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass


@dataclass
class Folded:
    summary: str  # our own words, one line
    table: object  # a pandas DataFrame
    figure: bytes | None = None  # a PNG drawn for the table
    opened: bool = False  # shown open (something in it failed)

    def _repr_html_(self) -> str:
        image = (f'<img alt="{html.escape(self.summary)}" src="data:image/png;base64,{base64.b64encode(self.figure).decode()}">'
                 if self.figure else "")
        return (f'<details class="opkb-fold"{" open" if self.opened else ""}><summary>{html.escape(self.summary)}</summary>'
                f"{self.table.to_html(index=False)}{image}</details>")

    def __repr__(self) -> str:
        return f"{self.summary}\n{self.table.to_string(index=False)}"


def png_of(figure) -> bytes:
    """The figure as PNG bytes, closed afterwards so that the inline backend does not show it again."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()
