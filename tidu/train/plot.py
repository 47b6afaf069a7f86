"""The loss curve as a PNG, through matplotlib when it is installed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

MISSING = "plotting the loss needs matplotlib: pip install matplotlib (or pip install 'tidu[examples]')"


def plot_loss(path: str | os.PathLike, history: Any = None, step_losses: Sequence[float] | None = None,
              title: str = "training loss") -> str:
    """Save the loss curve to ``path`` (PNG): step losses (e.g. ``LossHistory.losses``) and/or
    the epoch averages of a ``TrainHistory``. Returns the path.

    Raises ``ImportError`` with an install hint when matplotlib is missing.

    >>> import tempfile, os
    >>> from tidu.train import EpochStats, TrainHistory, plot_loss
    >>> h = TrainHistory([EpochStats(0, 2.0, 4), EpochStats(1, 1.0, 4)])
    >>> path = plot_loss(os.path.join(tempfile.mkdtemp(), "loss.png"), h, [2.5, 2.0, 1.8, 1.7, 1.2, 1.0, 0.9, 0.9])
    >>> os.path.getsize(path) > 0
    True
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(MISSING) from None
    fig = Figure(figsize=(6.4, 4.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if step_losses:
        ax.plot(range(1, len(step_losses) + 1), list(step_losses), lw=0.8, alpha=0.6, label="step loss")
    if history is not None and history.epochs:
        ends, total = [], 0
        for stats in history.epochs:
            total += stats.steps
            ends.append(total)
        ax.plot(ends, [s.avg_loss for s in history.epochs], "o-", label="epoch average")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=100)
    return os.fspath(path)
