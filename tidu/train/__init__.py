"""Training loops with meganeura's API, in eager Python.

``build_session(model, loss_fn)`` gives a ``Session`` (one forward + backward + update per
``step()``); a ``Trainer`` runs epochs over a loader (meganeura's array ``DataLoader`` or any
iterable of ``(inputs, labels)``, e.g. ``tidu.utils.data.DataLoader``), calling
``MetricCallback``s and returning a ``TrainHistory``.

>>> import tidu
>>> from tidu.train import DataLoader, Optimizer, TrainConfig, Trainer, build_session
>>> w = tidu.zeros(2, 1, requires_grad=True)
>>> session = build_session(lambda x: x @ w, lambda o, y: ((o - y) ** 2).mean(), params=[w])
>>> data = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0]
>>> loader = DataLoader(data, [3.0, -1.0, 2.0, 5.0], sample_size=2, label_size=1, batch_size=4)
>>> config = TrainConfig(optimizer=Optimizer.adam(0.1), log_interval=0)
>>> history = Trainer(session, config).train(loader, epochs=300)
>>> [round(v, 2) for v in w.reshape(2).tolist()]
[3.0, -1.0]
"""

from .config import Optimizer, TrainConfig
from .loader import Batch, DataLoader
from .metrics import EpochStats, LossHistory, MetricCallback, StepMetrics, TrainHistory
from .plot import plot_loss
from .session import Session, build_session
from .trainer import Trainer

__all__ = [
    "Batch", "DataLoader", "EpochStats", "LossHistory", "MetricCallback", "Optimizer", "Session", "StepMetrics",
    "TrainConfig", "TrainHistory", "Trainer", "build_session", "plot_loss",
]
