"""``Trainer``: epochs of batches through a ``Session``, with logging, callbacks and a progress bar."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .config import TrainConfig
from .loader import Batch
from .metrics import EpochStats, MetricCallback, StepMetrics, TrainHistory
from .session import Session

logger = logging.getLogger("tidu.train")


def _batches(loader: Any, epoch: int) -> Iterator[tuple[Any, Any]]:
    """An epoch of ``(inputs, labels)``: meganeura's loader is shuffled by epoch and rewound;
    any other iterable is iterated (it shuffles itself, like ``tidu.utils.data.DataLoader``)."""
    if hasattr(loader, "next_batch"):
        loader.shuffle(epoch)
        loader.reset()
        while (batch := loader.next_batch()) is not None:
            yield batch.data, batch.labels
        return
    for item in loader:
        if isinstance(item, Batch):
            yield item.data, item.labels
        else:
            inputs, labels = item
            yield inputs, labels


def _num_batches(loader: Any) -> int | None:
    if hasattr(loader, "num_batches"):
        return loader.num_batches()
    return len(loader) if hasattr(loader, "__len__") else None


def _progress_bar(show: bool | None, total: int | None, epoch: int) -> Any:
    if show is False or (show is None and not sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=f"epoch {epoch}", unit="step", leave=False, file=sys.stderr, dynamic_ncols=True)


class Trainer:
    """Drives the epoch -> batch -> step loop over a ``Session`` (meganeura's Trainer).

    Each epoch: shuffle (meganeura's loader, by epoch number) and rewind the loader; for each
    batch set the session's ``config.data_input`` / ``config.label_input``, step with the
    configured optimizer, read the loss, log it every ``config.log_interval`` steps (logger
    ``tidu.train``, level INFO) and call every callback's ``on_step``; then ``on_epoch``.

    >>> import tidu
    >>> from tidu.train import DataLoader, LossHistory, TrainConfig, Trainer, build_session
    >>> w = tidu.zeros(1, requires_grad=True)
    >>> session = build_session(lambda x: x * w, lambda o, y: ((o - y) ** 2).mean(), params=[w])
    >>> loader = DataLoader([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], 1, 1, batch_size=2)
    >>> losses = LossHistory()
    >>> history = Trainer(session, TrainConfig(learning_rate=0.05)).train(loader, epochs=20, callbacks=[losses])
    >>> len(losses.losses), history.final_loss() < 1e-3, round(w.item(), 3)
    (40, True, 2.0)
    """

    def __init__(self, session: Session, config: TrainConfig | None = None) -> None:
        self._session = session
        self.config = config if config is not None else TrainConfig()

    def session(self) -> Session:
        """The session being trained."""
        return self._session

    session_mut = session

    def into_session(self) -> Session:
        """The session (meganeura API parity: Python has no move)."""
        return self._session

    def train(self, loader: Iterable[Any], epochs: int,
              callbacks: Sequence[MetricCallback] = ()) -> TrainHistory:
        """Run ``epochs`` passes over ``loader``; returns every epoch's statistics."""
        history = TrainHistory()
        for epoch in range(epochs):
            stats = self.train_epoch(loader, epoch, callbacks)
            logger.info("epoch %d: avg_loss = %.4f (%d steps)", stats.epoch, stats.avg_loss, stats.steps)
            history.epochs.append(stats)
        return history

    def train_epoch(self, loader: Iterable[Any], epoch: int,
                    callbacks: Sequence[MetricCallback] = ()) -> EpochStats:
        """Run one pass over ``loader``; returns its average loss and step count."""
        config, session = self.config, self._session
        optimizer = config.resolved_optimizer()
        if optimizer.kind == "adam":
            session.set_adam(optimizer.learning_rate, optimizer.beta1, optimizer.beta2, optimizer.epsilon)
        else:
            session.set_sgd(optimizer.learning_rate)
        bar = _progress_bar(config.progress, _num_batches(loader), epoch)
        total, steps = 0.0, 0
        try:
            for inputs, labels in _batches(loader, epoch):
                session.set_input(config.data_input, inputs)
                session.set_input(config.label_input, labels)
                session.step()
                session.wait()
                loss = session.read_loss()
                total += loss
                if config.log_interval > 0 and steps % config.log_interval == 0:
                    logger.info("  epoch %d step %d: loss = %.4f", epoch, steps, loss)
                metrics = StepMetrics(epoch, steps, loss)
                for callback in callbacks:
                    callback.on_step(metrics)
                steps += 1
                if bar is not None:
                    bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        stats = EpochStats(epoch, total / steps if steps else 0.0, steps)
        for callback in callbacks:
            callback.on_epoch(stats)
        return stats
