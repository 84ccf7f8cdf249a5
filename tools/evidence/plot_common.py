"""What every evidence plot shares: the figure frame, the "not computable" notice, the log count axis and the
deterministic PNG writer.

Figures use ``matplotlib.figure.Figure`` with an explicit Agg canvas and never pyplot, so no global backend or
figure registry is touched and worker threads can render. Output bytes are deterministic for identical input:
fixed size and dpi, and no "Software" PNG chunk (it names the version).
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator

from tools import atomic

DPI = 100
SIZE = (6.4, 4.8)  # inches: 640x480 px, about 30-50 KB per PNG
PNG_METADATA: dict[str, str | None] = {"Software": None}
# Matplotlib documents itself as not thread-safe (shared font caches, text layout); separate Figures are
# mostly fine, but one lock (renders queue for a few tenths of a second each) removes the question entirely.
RENDER_LOCK = threading.Lock()


def new_figure(title: str, subtitle: str) -> Figure:
    figure = Figure(figsize=SIZE, dpi=DPI)
    FigureCanvasAgg(figure)  # attaches itself as figure.canvas
    # Fixed margins rather than a layout engine: constrained layout redraws several times (slow, ~0.1 s).
    figure.subplots_adjust(left=0.13, right=0.97, bottom=0.11, top=0.87)
    figure.suptitle(f"{title}\n{subtitle}", fontsize=10, y=0.98)
    return figure


def not_computable(figure: Figure, why: str) -> None:
    # Figure coordinates, not an axes: the fixed margins would push an axes-centred text off the middle.
    figure.text(0.5, 0.5, f"not computable\n\n{why}", ha="center", va="center", fontsize=11)


def plain_log_counts(axes: Axes, tallest: float | None = None) -> None:
    """Plain "1,000" labels and no minor ticks: the default 10^k labels go through mathtext (~0.2 s a plot). Ticks
    at 1, 2 and 5 of each decade, so counts within one decade still get several; with `tallest` (the highest
    count), headroom above it for the legend, so the legend never sits on the bars or the lines' labels."""
    axes.minorticks_off()
    axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=15))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    if tallest is not None:
        axes.set_ylim(bottom=0.8, top=max(tallest, 1.0) * LEGEND_HEADROOM)


LEGEND_HEADROOM = 60.0  # on a log axis, ~1.8 decades above the tallest bar: room for a four-line legend


def save_png(figure: Figure, path: Path) -> None:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata=PNG_METADATA)
    atomic.write_atomically(path, buffer.getvalue())
