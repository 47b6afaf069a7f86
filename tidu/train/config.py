"""Optimizer selection and training configuration (meganeura's ``Optimizer`` and ``TrainConfig``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Optimizer:
    """Which update the session applies: SGD or Adam, with its hyperparameters.

    ``Optimizer()`` is SGD with learning rate 0.01 (meganeura's default).

    >>> from tidu.train import Optimizer
    >>> Optimizer.adam(1e-3)
    Optimizer(kind='adam', learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08)
    >>> Optimizer().kind, Optimizer().learning_rate
    ('sgd', 0.01)
    """

    kind: str = "sgd"
    learning_rate: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8

    def __post_init__(self) -> None:
        if self.kind not in ("sgd", "adam"):
            raise ValueError(f"Optimizer kind must be 'sgd' or 'adam', got {self.kind!r}")

    @classmethod
    def sgd(cls, lr: float) -> Optimizer:
        """Stochastic gradient descent with learning rate ``lr``."""
        return cls("sgd", lr)

    @classmethod
    def adam(cls, lr: float, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8) -> Optimizer:
        """Adam with learning rate ``lr`` and the standard defaults (0.9, 0.999, 1e-8)."""
        return cls("adam", lr, beta1, beta2, epsilon)


@dataclass
class TrainConfig:
    """Training options.

    Args:
        optimizer: the update rule; when ``None``, SGD with ``learning_rate``.
        learning_rate: meganeura's alias for SGD's rate (used when ``optimizer`` is ``None``).
        log_interval: log the loss every this many steps (0: no step logging).
        data_input, label_input: the session input names of a batch's samples and labels.
        progress: a tqdm progress bar per epoch; ``None`` shows it only when stderr is a
            terminal (and tqdm is installed), ``False`` never, ``True`` always (if installed).

    >>> from tidu.train import TrainConfig
    >>> TrainConfig(learning_rate=0.1).resolved_optimizer()
    Optimizer(kind='sgd', learning_rate=0.1, beta1=0.9, beta2=0.999, epsilon=1e-08)
    """

    optimizer: Optimizer | None = None
    learning_rate: float = 0.01
    log_interval: int = 100
    data_input: str = "x"
    label_input: str = "labels"
    progress: bool | None = None

    def resolved_optimizer(self) -> Optimizer:
        """``optimizer``, or SGD at ``learning_rate`` when it is not set."""
        return self.optimizer if self.optimizer is not None else Optimizer.sgd(self.learning_rate)
