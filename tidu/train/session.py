"""``Session``: a model, its loss and the optimizer state, stepped one batch at a time."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import optim
from ..core import dtypes
from ..core.inplace import written
from ..serialization import load, save
from ..tensor import Tensor, of_array

_CHECKPOINT_FORMAT = "tidu.train.Session/1"


def _named_parameters(model: Any, params: Iterable[Any] | None) -> list[tuple[str, Tensor]]:
    if params is not None:
        items = list(params.items()) if isinstance(params, dict) else list(enumerate(params))
    elif hasattr(model, "named_parameters"):
        items = list(model.named_parameters())
    elif hasattr(model, "parameters"):
        items = list(enumerate(model.parameters()))
    else:
        raise TypeError(
            f"build_session: cannot find the parameters of {type(model).__name__}: give a module with "
            "parameters()/named_parameters(), or pass params=[...]"
        )
    named = [(str(name), p) for name, p in items]
    if not named:
        raise ValueError("build_session: the model has no parameters to train")
    for name, p in named:
        if not isinstance(p, Tensor) or not p.requires_grad:
            raise ValueError(f"build_session: parameter {name!r} must be a tensor that requires grad")
    return named


class Session:
    """Owns a model, its loss and the optimizer state; ``step()`` runs one training step.

    A step is: forward ``loss_fn(model(inputs[data_input]), inputs[label_input])``, backward,
    and the optimizer update (SGD at learning rate 0.01 until ``set_learning_rate`` /
    ``set_adam``). The backward programs are built once per operation form and reused from
    step to step (tidu's program cache).

    >>> import tidu
    >>> from tidu.train import build_session
    >>> w = tidu.zeros(2, requires_grad=True)
    >>> model = lambda x: x @ w
    >>> mse = lambda out, y: ((out - y) ** 2).mean()
    >>> s = build_session(model, mse, params={"w": w})
    >>> s.set_learning_rate(0.1)
    >>> s.set_input("x", [[1.0, 0.0], [0.0, 1.0]]); s.set_input("labels", [1.0, -1.0])
    >>> s.step(); s.read_loss()
    1.0
    >>> s.read_param("w")
    array([ 0.1, -0.1], dtype=float32)
    """

    def __init__(self, model: Callable[[Any], Any], loss_fn: Callable[[Any, Any], Any], *,
                 params: Iterable[Any] | None = None, data_input: str = "x", label_input: str = "labels") -> None:
        self.model = model
        self.loss_fn = loss_fn
        self.data_input = data_input
        self.label_input = label_input
        self._params = dict(_named_parameters(model, params))
        self._inputs: dict[str, Tensor] = {}
        self._loss: float | None = None
        self.step_count = 0
        self.optimizer: optim.Optimizer = optim.SGD(list(self._params.values()), lr=0.01)

    # --- inputs and the step -----------------------------------------------------------------
    def set_input(self, name: str, value: Any) -> None:
        """Set a named input. Arrays and lists become tensors (floats in the default dtype)."""
        if not isinstance(value, Tensor):
            array = np.asarray(value)
            if array.dtype.kind == "f":
                array = array.astype(dtypes.get_default_dtype().np, copy=False)
            value = of_array(np.array(array))
        self._inputs[name] = value

    def _input(self, name: str) -> Tensor:
        if name not in self._inputs:
            raise KeyError(f"session input {name!r} is not set: call set_input({name!r}, ...) (set: {sorted(self._inputs)})")
        return self._inputs[name]

    def step(self) -> None:
        """Forward, backward and the optimizer update on the current inputs."""
        inputs, labels = self._input(self.data_input), self._input(self.label_input)
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.model(inputs), labels)
        if not isinstance(loss, Tensor) or loss.numel() != 1:
            shape = tuple(loss.shape) if isinstance(loss, Tensor) else type(loss).__name__
            raise RuntimeError(f"Session.step: the loss must be a one-element tensor, got {shape}")
        loss.backward()
        self.optimizer.step()
        self._loss = float(loss.item())
        self.step_count += 1

    def wait(self) -> None:
        """Nothing to wait for: tidu's CPU steps are synchronous (meganeura API parity)."""

    def read_loss(self) -> float:
        """The loss of the last ``step()``."""
        if self._loss is None:
            raise RuntimeError("Session.read_loss: no step has run yet")
        return self._loss

    # --- parameters ----------------------------------------------------------------------------
    def param_names(self) -> list[str]:
        return list(self._params)

    def _param(self, name: str) -> Tensor:
        if name not in self._params:
            raise KeyError(f"no parameter named {name!r}; parameters: {list(self._params)}")
        return self._params[name]

    def read_param(self, name: str) -> np.ndarray:
        """A copy of a parameter's values."""
        return self._param(name)._data.copy()

    def read_param_grad(self, name: str) -> np.ndarray | None:
        """A copy of a parameter's gradient from the last step (``None`` if it got none)."""
        grad = self._param(name).grad
        return None if grad is None else grad._data.copy()

    def set_parameter(self, name: str, value: Any) -> None:
        """Overwrite a parameter's values in place (same shape)."""
        p = self._param(name)
        array = np.asarray(value._values() if isinstance(value, Tensor) else value)
        if array.shape != p._buf.shape:
            raise RuntimeError(
                f"set_parameter: size mismatch for {name}: got {tuple(array.shape)}, the parameter is {tuple(p.shape)}"
            )
        p._data[...] = dtypes.cast(array, p.dtype)  # a bfloat16 parameter's storage holds bits
        written(p)

    # --- optimizer -----------------------------------------------------------------------------
    def set_learning_rate(self, lr: float) -> None:
        """Set the learning rate of the current optimizer (SGD unless ``set_adam`` was called)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def set_sgd(self, lr: float) -> None:
        """Use plain SGD at ``lr`` (switching back from Adam drops Adam's moments)."""
        if not isinstance(self.optimizer, optim.SGD):
            self.optimizer = optim.SGD(list(self._params.values()), lr=lr)
        self.set_learning_rate(lr)

    def set_adam(self, lr: float, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8) -> None:
        """Use Adam with these hyperparameters; its moments persist across calls."""
        if not isinstance(self.optimizer, optim.Adam):
            self.optimizer = optim.Adam(list(self._params.values()), lr=lr, betas=(beta1, beta2), eps=epsilon)
        for group in self.optimizer.param_groups:
            group.update(lr=lr, betas=(beta1, beta2), eps=epsilon)

    # --- checkpoints ---------------------------------------------------------------------------
    def save_checkpoint(self, path: str | os.PathLike) -> None:
        """Save parameters, optimizer kind and state, and the step counter (safetensors)."""
        save({
            "format": _CHECKPOINT_FORMAT,
            "step": self.step_count,
            "params": {name: p.detach() for name, p in self._params.items()},
            "optimizer": {"kind": type(self.optimizer).__name__, "state": self.optimizer.state_dict()},
        }, path)

    def load_checkpoint(self, path: str | os.PathLike) -> None:
        """Restore a ``save_checkpoint`` file into this session (same parameter names and shapes)."""
        ckpt = load(path)
        if not isinstance(ckpt, dict) or ckpt.get("format") != _CHECKPOINT_FORMAT:
            raise RuntimeError(f"load_checkpoint: {os.fspath(path)} is not a tidu.train session checkpoint")
        saved = ckpt["params"]
        missing = [n for n in self._params if n not in saved]
        unexpected = [n for n in saved if n not in self._params]
        errors = []
        if missing:
            errors.append(f"Missing parameter(s) in checkpoint: {missing}.")
        if unexpected:
            errors.append(f"Unexpected parameter(s) in checkpoint: {unexpected}.")
        for name, p in self._params.items():
            if name in saved and tuple(saved[name].shape) != tuple(p.shape):
                errors.append(
                    f"size mismatch for {name}: copying a param with shape {tuple(saved[name].shape)} from "
                    f"checkpoint, the shape in current model is {tuple(p.shape)}."
                )
        if errors:
            raise RuntimeError(f"Error(s) in loading checkpoint {os.fspath(path)}:\n\t" + "\n\t".join(errors))
        for name, p in self._params.items():
            p._data[...] = saved[name]._data
            written(p)
        kind = ckpt["optimizer"]["kind"]
        params = list(self._params.values())
        self.optimizer = optim.Adam(params) if kind == "Adam" else optim.SGD(params, lr=0.01)
        self.optimizer.load_state_dict(ckpt["optimizer"]["state"])
        self.step_count = int(ckpt["step"])


def build_session(model: Callable[[Any], Any], loss_fn: Callable[[Any, Any], Any], **kwargs: Any) -> Session:
    """A training ``Session`` for ``model`` and ``loss_fn(output, labels)`` (meganeura's entry point).

    Keywords: ``params`` (a list or name->tensor dict, when ``model`` has no ``parameters()``),
    ``data_input`` / ``label_input`` (input names, default ``"x"`` / ``"labels"``).

    >>> import tidu
    >>> from tidu.train import build_session
    >>> w = tidu.ones(1, requires_grad=True)
    >>> build_session(lambda x: x * w, lambda o, y: ((o - y) ** 2).sum(), params=[w]).param_names()
    ['0']
    """
    return Session(model, loss_fn, **kwargs)
