"""Per-step and per-epoch metrics, the training history, and the callback protocol."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class StepMetrics:
    """One optimizer step: its epoch, its index in the epoch, and its loss.

    >>> from tidu.train import StepMetrics
    >>> StepMetrics(epoch=0, step=5, loss=0.25)
    StepMetrics(epoch=0, step=5, loss=0.25)
    """

    epoch: int
    step: int
    loss: float


@dataclass
class EpochStats:
    """One epoch: its index, the mean of its step losses, and how many steps it took.

    >>> from tidu.train import EpochStats
    >>> EpochStats(epoch=3, avg_loss=0.42, steps=100).steps
    100
    """

    epoch: int
    avg_loss: float
    steps: int


@dataclass
class TrainHistory:
    """The statistics of every epoch run by ``Trainer.train``.

    >>> from tidu.train import EpochStats, TrainHistory
    >>> h = TrainHistory()
    >>> h.final_loss() is None
    True
    >>> h.epochs.append(EpochStats(0, 2.5, 10)); h.final_loss()
    2.5
    """

    epochs: list[EpochStats] = field(default_factory=list)

    def final_loss(self) -> float | None:
        """The last epoch's average loss, or ``None`` if no epoch ran."""
        return self.epochs[-1].avg_loss if self.epochs else None

    def plot(self, path: str, step_losses: list[float] | None = None) -> str:
        """Save the loss curve as a PNG (needs matplotlib); see ``tidu.train.plot_loss``."""
        from .plot import plot_loss

        return plot_loss(path, history=self, step_losses=step_losses)


class MetricCallback:
    """Receives every step's ``StepMetrics`` and every epoch's ``EpochStats`` from the Trainer.

    Override ``on_step`` and/or ``on_epoch`` (both do nothing by default).

    >>> from tidu.train import EpochStats, MetricCallback
    >>> class Printer(MetricCallback):
    ...     def on_epoch(self, stats):
    ...         print(f"epoch {stats.epoch}: {stats.avg_loss:.3f}")
    >>> Printer().on_epoch(EpochStats(2, 0.1234, 10))
    epoch 2: 0.123
    """

    def on_step(self, metrics: StepMetrics) -> None:
        """Called after each optimizer step."""

    def on_epoch(self, stats: EpochStats) -> None:
        """Called after each epoch."""


class LossHistory(MetricCallback):
    """Collects the loss of every step in ``losses``.

    >>> from tidu.train import LossHistory, StepMetrics
    >>> h = LossHistory(); h.on_step(StepMetrics(0, 0, 1.5)); h.losses
    [1.5]
    """

    def __init__(self) -> None:
        self.losses: list[float] = []

    def on_step(self, metrics: StepMetrics) -> None:
        self.losses.append(metrics.loss)
