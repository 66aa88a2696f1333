"""The wave plans drawn, one panel per element count and width, for the wave-expansion notebook.

Two panels a row at about 850 px wide (the site's content column at a 1,400 px window, and a
JupyterLab notebook's), so the image is never scaled down and its titles read at their own
size: four panels a row at 1,500 px were shrunk until the titles were 5 px high.
"""

from __future__ import annotations

from kb_tools.memory.waves import plan_waves

COLUMNS = 2
PANEL_INCHES = (4.25, 2.3)  # width, height of one panel at matplotlib's 100 dpi
TITLE_POINTS = 11


def draw_wave_plans(counts: tuple[int, ...], widths: tuple[int, ...]):
    """A figure of the plan of each (n, d): each wave's read of mask bytes and write of output
    bytes on a log byte axis, the buffered final prefix in red. Rows of two panels."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    cases = [(n, d) for n in counts for d in widths]
    rows = -(-len(cases) // COLUMNS)
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(PANEL_INCHES[0] * COLUMNS, PANEL_INCHES[1] * rows), squeeze=False)
    for ax, (n, d) in zip(axes.flat, cases):
        plan = plan_waves(n, d)
        for i, wave in enumerate(plan):
            lo, hi = wave.read_bytes()
            wlo, whi = wave.write_bytes(d)
            ax.barh(i + 0.2, hi - lo, left=max(lo, 1), height=0.35, color="tab:blue")
            ax.barh(i - 0.2, whi - wlo, left=max(wlo, 1), height=0.35, color="tab:red" if wave.buffered else "tab:orange")
        ax.set_xscale("log")
        ax.invert_yaxis()
        ax.set_title(f"n={n:,}, d={d}: {len(plan)} waves", fontsize=TITLE_POINTS)
        ax.set_yticks(range(len(plan)))
        ax.set_ylabel("wave")
    for ax in axes.flat[len(cases):]:
        ax.set_visible(False)
    keys = [Patch(color=c) for c in ("tab:blue", "tab:orange", "tab:red")]
    fig.legend(keys, ["reads mask bytes", "writes output bytes", "writes the final prefix, read whole first"],
               loc="upper center", ncol=3, fontsize=10, frameon=False)
    fig.supxlabel("byte address (log)")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_size_inches()[1]))
    return fig
