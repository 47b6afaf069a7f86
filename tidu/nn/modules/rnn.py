"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells, with PyTorch's equations, gate
order (LSTM: input, forget, cell, output; GRU: reset, update, new), parameter names and
initialisation (every parameter ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``).

A layer projects the whole sequence's inputs with one product, then steps through time with one
product of the hidden state a step; the gradient comes from the recorded steps.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ... import ops
from ...core import autocast as _autocast
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(mode: str, xw: Any, h: Any, w_hh: Any, b_hh: Any) -> Any:
    """The next hidden state of a plain RNN from the input's projection ``xw`` (bias included)."""
    pre = xw + F.linear(h, w_hh, b_hh)
    return ops.tanh(pre) if mode == "RNN_TANH" else ops.relu(pre)


def _gru_step(xw: Any, h: Any, w_hh: Any, b_hh: Any) -> Any:
    hw = F.linear(h, w_hh, b_hh)
    x_r, x_z, x_n = xw.chunk(3, -1)
    h_r, h_z, h_n = hw.chunk(3, -1)
    r = ops.sigmoid(x_r + h_r)
    z = ops.sigmoid(x_z + h_z)
    n = ops.tanh(x_n + r * h_n)
    return (1.0 - z) * n + z * h


def _lstm_step(xw: Any, h: Any, c: Any, w_hh: Any, b_hh: Any, w_hr: Any) -> tuple[Any, Any]:
    gates = xw + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    h = ops.sigmoid(o) * ops.tanh(c)
    return (h if w_hr is None else F.linear(h, w_hr)), c


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: parameters per layer and direction, the
    sequence and hidden-state layouts, and the loop over layers, directions and time."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not isinstance(dropout, int | float) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        for arg, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{arg} should be of type bool, got: {type(value).__name__}")
        for arg, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{arg} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{arg} must be greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gates = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                layer_in = input_size if layer == 0 else out_size * directions
                shapes = {"weight_ih": (gates, layer_in), "weight_hh": (gates, out_size)}
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = [kind + suffix for kind in shapes]
                for name, shape in zip(names, shapes.values()):
                    self.register_parameter(name, Parameter(ops.empty(shape, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def _init_flat_weights(self) -> list[Any]:
        """Read every weight by its name (a parametrized, normed or pruned weight is an attribute
        computed or set by a hook, not a registered Parameter) into ``_flat_weights``."""
        self._flat_weights = [getattr(self, name) if hasattr(self, name) else None
                              for name in self._flat_weights_names]
        return self._flat_weights

    def __setattr__(self, name: str, value: Any) -> None:
        names = self.__dict__.get("_flat_weights_names")
        if names and name in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(name)] = value
        super().__setattr__(name, value)

    def _apply(self, fn: Any, recurse: bool = True) -> Module:
        result = super()._apply(fn, recurse)
        self._init_flat_weights()
        return result

    def flatten_parameters(self) -> None:
        """A no-op in tidu: PyTorch packs the weights into one cuDNN buffer; tidu's recurrent
        layers read each weight as it is."""

    @property
    def all_weights(self) -> list[list[Any]]:
        """The weights of each layer and direction: ``[w_ih, w_hh, (b_ih, b_hh,) (w_hr)]``."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _weights(self, layer: int, direction: int) -> tuple[Any, Any, Any, Any, Any]:
        """``(w_ih, w_hh, b_ih, b_hh, w_hr)`` of one layer and direction, from ``_flat_weights``
        (``None`` for those the layer has not)."""
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        flat = dict(zip(self._flat_weights_names, self._flat_weights))
        return tuple(flat.get(kind + suffix) for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _name(self) -> str:
        return {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)

    def check_input(self, input: Any, batch_sizes: Any) -> None:  # noqa: A002
        """PyTorch's checks of the input's dtype, dimensions and width (``batch_sizes``: a packed
        sequence's, whose data is 2-D)."""
        weight = self._flat_weights[0]
        if weight is not None and input.dtype != weight.dtype and not _autocast.ON:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def get_expected_hidden_size(self, input: Any, batch_sizes: Any) -> tuple[int, int, int]:  # noqa: A002
        """``(num_layers * directions, batch, proj_size or hidden_size)``."""
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.proj_size or self.hidden_size)

    def check_hidden_size(self, hx: Any, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Any, hidden: Any, batch_sizes: Any) -> None:  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Any) -> Any:
        """The batch entries of ``hx`` in the order ``permutation`` (a packed batch's sorted order)."""
        return hx if permutation is None else hx.index_select(1, permutation)

    def _unbatched_hidden(self, hx: Any, batched: bool) -> Any:
        """Check that ``hx`` has as many dimensions as the input; give an unbatched one its batch."""
        dims = 3 if batched else 2
        kind = "batched" if batched else "unbatched"
        if hx.ndim != dims:
            raise RuntimeError(f"For {kind} {dims}-D input, hx should also be {dims}-D but got {hx.ndim}-D tensor")
        return hx if batched else hx.unsqueeze(1)

    def _zero_hidden(self, input: Any, batch: int) -> Any:  # noqa: A002
        states = self.num_layers * (2 if self.bidirectional else 1)
        return ops.zeros((states, batch, self.proj_size or self.hidden_size), dtype=input.dtype, device=input.device)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        self._init_flat_weights()
        packed = isinstance(input, PackedSequence)
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes.tolist()]
            batched, batch = True, sizes[0]
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.ndim not in (2, 3):
                what = " tensor" if self._name() == "RNN" else ""
                raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got {input.ndim}D{what} instead")
            batched = input.ndim == 3
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                hx = self._unbatched_hidden(hx, batched)
            batch = input.shape[0] if self.batch_first else input.shape[1]
        if hx is None:
            hx = self._zero_hidden(input, batch)
        self.check_forward_args(input, hx, batch_sizes)
        hx = self.permute_hidden(hx, sorted_indices)
        if not packed:
            if self.batch_first:
                input = input.transpose(0, 1)
            if input.shape[0] == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            sizes = [batch] * input.shape[0]
        lstm = self.mode == "LSTM"
        h0, c0 = hx if lstm else (hx, None)
        directions = 2 if self.bidirectional else 1
        out_size = self.proj_size or self.hidden_size
        layer_input = input
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                w_ih, _, b_ih, _, _ = self._weights(layer, direction)
                projected = F.linear(layer_input, w_ih, b_ih)  # every time step's input at once
                steps = list(projected.split(sizes)) if packed else list(projected.unbind(0))
                hs, h, c = self._scan(layer, direction, steps, h0[index], c0[index] if lstm else None)
                if hs:
                    outputs.append(ops.cat(hs) if packed else ops.stack(hs))
                else:
                    outputs.append(layer_input.new_zeros((0, batch, out_size)))
                last_h.append(h)
                last_c.append(c)
            layer_input = outputs[0] if directions == 1 else ops.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input
        hidden = (ops.stack(last_h), ops.stack(last_c)) if lstm else ops.stack(last_h)
        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return output, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, hidden

    def _scan(self, layer: int, direction: int, steps: list[Any], h: Any, c: Any) -> tuple[list[Any], Any, Any]:
        """Run one layer and direction over the projected inputs of each time step; a step with
        fewer rows than the batch (a packed batch's ended sequences) updates only its first rows.
        Returns the step outputs in time order and the final states."""
        _, w_hh, _, b_hh, w_hr = self._weights(layer, direction)
        hs = []
        for x in (reversed(steps) if direction else steps):
            rows = x.shape[0]
            h_in, c_in = (h, c) if rows == h.shape[0] else (h[:rows], None if c is None else c[:rows])
            if self.mode == "LSTM":
                h_out, c_out = _lstm_step(x, h_in, c_in, w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                h_out, c_out = _gru_step(x, h_in, w_hh, b_hh), None
            else:
                h_out, c_out = _rnn_step(self.mode, x, h_in, w_hh, b_hh), None
            hs.append(h_out)
            if rows == h.shape[0]:
                h, c = h_out, c_out
            else:
                h = ops.cat([h_out, h[rows:]])
                c = None if c is None else ops.cat([c_out, c[rows:]])
        if direction:
            hs.reverse()
        return hs, h, c

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ``relu``).

    >>> import tidu
    >>> rnn = tidu.nn.RNN(3, 4, num_layers=2)
    >>> output, h_n = rnn(tidu.ones(5, 2, 3))
    >>> output.shape, h_n.shape
    (tidu.Size([5, 2, 4]), tidu.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, proj_size, device=device, dtype=dtype)


class LSTM(RNNBase):
    """Long short-term memory; ``forward(input, (h_0, c_0))`` returns ``output, (h_n, c_n)``
    (``proj_size``: ``h`` projected by ``weight_hr``).

    >>> import tidu
    >>> lstm = tidu.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    >>> output, (h_n, c_n) = lstm(tidu.ones(2, 5, 3))
    >>> output.shape, h_n.shape, c_n.shape
    (tidu.Size([2, 5, 8]), tidu.Size([2, 2, 4]), tidu.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def get_expected_cell_size(self, input: Any, batch_sizes: Any) -> tuple[int, int, int]:  # noqa: A002
        """``(num_layers * directions, batch, hidden_size)``."""
        states, batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return states, batch, self.hidden_size

    def check_forward_args(self, input: Any, hidden: Any, batch_sizes: Any) -> None:  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Any) -> Any:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def _unbatched_hidden(self, hx: Any, batched: bool) -> Any:
        dims = 3 if batched else 2
        if hx[0].ndim != dims or hx[1].ndim != dims:
            raise RuntimeError(f"For {'batched' if batched else 'unbatched'} {dims}-D input, hx and cx should also "
                               f"be {dims}-D but got ({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
        return tuple(hx) if batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))

    def _zero_hidden(self, input: Any, batch: int) -> Any:  # noqa: A002
        c = ops.zeros((self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size),
                      dtype=input.dtype, device=input.device)
        return super()._zero_hidden(input, batch), c


class GRU(RNNBase):
    """Gated recurrent unit (reset, update and new gates, PyTorch's ``r * (W_hn h + b_hn)``).

    >>> import tidu
    >>> output, h_n = tidu.nn.GRU(3, 4)(tidu.ones(5, 3))  # unbatched
    >>> output.shape, h_n.shape
    (tidu.Size([5, 4]), tidu.Size([1, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)  # a proj_size raises, as in PyTorch


class RNNCellBase(Module):
    """One time step: ``weight_ih``, ``weight_hh`` (and biases), a batch ``(N, input_size)`` or
    one example ``(input_size,)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, gates: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(ops.empty((gates * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(ops.empty((gates * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ops.empty(gates * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(ops.empty(gates * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        RNNBase.reset_parameters(self)  # type: ignore[arg-type]
        if device is not None:
            self.to(device)

    def _prepare(self, input: Any, hx: Any) -> tuple[Any, Any, bool]:  # noqa: A002
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ops.zeros((input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        return input, hx, batched

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    """One step of ``RNN``.

    >>> import tidu
    >>> tidu.nn.RNNCell(3, 4)(tidu.ones(2, 3)).shape
    tidu.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        x, h, batched = self._prepare(input, hx)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rnn_step(mode, F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class GRUCell(RNNCellBase):
    """One step of ``GRU``.

    >>> import tidu
    >>> tidu.nn.GRUCell(3, 4)(tidu.ones(3)).shape
    tidu.Size([4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        x, h, batched = self._prepare(input, hx)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of ``LSTM``: ``forward(input, (h, c))`` returns ``(h', c')``.

    >>> import tidu
    >>> h, c = tidu.nn.LSTMCell(3, 4)(tidu.ones(2, 3))
    >>> h.shape, c.shape
    (tidu.Size([2, 4]), tidu.Size([2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        h0, c0 = (None, None) if hx is None else hx
        x, h, batched = self._prepare(input, h0)
        c = ops.zeros_like(h) if c0 is None else (c0 if batched else c0.unsqueeze(0))
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))
