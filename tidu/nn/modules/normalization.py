"""``LayerNorm``, ``BatchNorm1d/2d/3d``, ``GroupNorm``, ``RMSNorm``, ``InstanceNorm1d/2d/3d``,
``LocalResponseNorm``."""

from __future__ import annotations

import warnings
from typing import Any

from ... import ops
from ...autograd.function import Function
from ...core import dtypes
from ...core.grad_mode import no_grad
from ...core.inplace import assign_
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin, materialize_all
from .module import Module


def _affine_parameters(module: Module, shape: tuple[int, ...], affine: bool, bias: bool, dtype: Any) -> None:
    """A normalization's ``weight`` (ones) and ``bias`` (zeros) of ``shape``, or ``None`` for those
    it has not."""
    module.register_parameter("weight", Parameter(ops.ones(shape, dtype=dtype)) if affine else None)
    module.register_parameter("bias", Parameter(ops.zeros(shape, dtype=dtype)) if affine and bias else None)


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims, then ``* weight + bias``
    (``elementwise_affine``; ones and zeros at init).

    >>> import tidu
    >>> norm = tidu.nn.LayerNorm(2)
    >>> norm
    LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> norm(tidu.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<layer_norm_affine>)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, shape, elementwise_affine, bias, dtype)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()
    _version = 2  # version 2 added num_batches_tracked

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(ops.ones(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(ops.zeros(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", ops.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ops.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", ops.tensor(0, dtype=dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str]) -> None:
        """A checkpoint older than version 2 (or without metadata) may lack ``num_batches_tracked``:
        the module keeps its own, as PyTorch's."""
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                               else ops.tensor(0, dtype=dtypes.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _check_input_dim(self, input: Any) -> None:  # noqa: A002
        if input.ndim not in self._dims:
            expected = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {expected} input (got {input.ndim}D input)")

    def forward(self, input: Any) -> Any:  # noqa: A002
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                assign_(self.num_batches_tracked, self.num_batches_tracked + 1, op="BatchNorm")
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                            self.weight, self.bias, training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` input over the batch (and length):
    batch statistics and a running-average update in training, running statistics in eval.

    >>> import tidu
    >>> bn = tidu.nn.BatchNorm1d(2)
    >>> _ = bn(tidu.tensor([[1.0, 2.0], [3.0, 6.0]]))
    >>> bn.running_mean, bn.running_var, bn.num_batches_tracked
    (tensor([0.2000, 0.4000]), tensor([1.1000, 1.7000]), tensor(1))
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` input per channel.

    >>> import tidu
    >>> tidu.nn.BatchNorm2d(3)
    BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    _dims = (4,)



class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)`` input per channel.

    >>> import tidu
    >>> bn = tidu.nn.BatchNorm3d(2)
    >>> _ = bn(tidu.arange(16.0).reshape(2, 2, 2, 2, 1))
    >>> bn.running_mean
    tensor([0.5500, 0.9500])
    """

    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over any ``(N, C, ...)`` input whose statistics, in PyTorch, are
    synchronized across the processes of a distributed group. tidu runs one process, so it
    normalizes as ``BatchNorm`` does, which is what PyTorch's does without an initialized
    process group. ``convert_sync_batchnorm`` swaps a model's BatchNorm layers for it.

    >>> import tidu
    >>> net = tidu.nn.Sequential(tidu.nn.Conv1d(2, 3, 1), tidu.nn.BatchNorm1d(3))
    >>> tidu.nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]
    SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Any) -> None:  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Any) -> Any:  # noqa: A002
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Replace every BatchNorm layer in ``module`` (``module`` itself too) by a
        ``SyncBatchNorm`` sharing its parameters and running statistics."""
        module_output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return module_output

class GroupNorm(Module):
    """Normalize (N, C, *) over groups of channels, then ``* weight + bias`` per channel
    (``affine``; ones and zeros at init).

    >>> import tidu
    >>> tidu.nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape`` dims, then ``* weight``
    (``elementwise_affine``; ones at init). ``eps=None``: the dtype's machine epsilon.

    >>> import tidu
    >>> tidu.nn.RMSNorm(2)
    RMSNorm((2,), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        weight = Parameter(ops.ones(self.normalized_shape, dtype=dtype)) if elementwise_affine else None
        self.register_parameter("weight", weight)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _InstanceNorm(_BatchNorm):
    _unbatched = 0  # the rank of an input without a batch dim

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input: Any) -> Any:  # noqa: A002
        self._check_input_dim(input)
        channel_dim = input.ndim - self._unbatched
        if input.shape[channel_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={channel_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[channel_dim]}.")
            warnings.warn(f"input's size at dim={channel_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          UserWarning, stacklevel=2)
        batched = input.ndim != self._unbatched
        out = F.instance_norm(input if batched else input.unsqueeze(0), self.running_mean, self.running_var,
                              self.weight, self.bias, self.training or not self.track_running_stats,
                              0.1 if self.momentum is None else self.momentum, self.eps)
        return out if batched else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Normalize each channel of each sample of ``(N, C, L)`` or ``(C, L)`` over its length
    (``F.instance_norm``); ``affine`` and ``track_running_stats`` off by default.

    >>> import tidu
    >>> tidu.nn.InstanceNorm1d(2)(tidu.tensor([[1.0, 3.0], [0.0, 4.0]]))
    tensor([[-1.0000,  1.0000],
            [-1.0000,  1.0000]])
    """

    _dims = (2, 3)
    _unbatched = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalize each channel of each sample of ``(N, C, H, W)`` or ``(C, H, W)`` over its plane.

    >>> import tidu
    >>> tidu.nn.InstanceNorm2d(3, affine=True)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)
    """

    _dims = (3, 4)
    _unbatched = 3



class InstanceNorm3d(_InstanceNorm):
    """Normalize each channel of each sample of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` over its volume.

    >>> import tidu
    >>> tidu.nn.InstanceNorm3d(2)
    InstanceNorm3d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _dims = (4, 5)
    _unbatched = 4


class _LazyNormBase(LazyModuleMixin):
    """What the lazy batch and instance norms share: ``num_features`` from the input's dim 1
    (PyTorch reads dim 1 for unbatched input too)."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = ops.tensor(0, dtype=dtypes.int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            shape = (self.num_features,)
            materialize_all(self, {"weight": shape, "bias": shape, "running_mean": shape, "running_var": shape})
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm1d`` whose ``num_features`` comes from its first input.

    >>> import tidu
    >>> bn = tidu.nn.LazyBatchNorm1d()
    >>> _ = bn(tidu.tensor([[1.0, 2.0, 3.0], [3.0, 6.0, 3.0]]))
    >>> bn
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> bn.running_mean
    tensor([0.2000, 0.4000, 0.3000])
    """

    cls_to_become = BatchNorm1d
    _dims = BatchNorm1d._dims


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm2d`` whose ``num_features`` comes from its first input.

    >>> import tidu
    >>> bn = tidu.nn.LazyBatchNorm2d(affine=False)
    >>> bn(tidu.ones(2, 3, 4, 4)).shape, bn.running_var.shape, bn.weight
    (tidu.Size([2, 3, 4, 4]), tidu.Size([3]), None)
    """

    cls_to_become = BatchNorm2d
    _dims = BatchNorm2d._dims


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm3d`` whose ``num_features`` comes from its first input.

    >>> import tidu
    >>> bn = tidu.nn.LazyBatchNorm3d()
    >>> bn(tidu.ones(2, 3, 1, 2, 2)).shape, bn.running_mean.shape, type(bn).__name__
    (tidu.Size([2, 3, 1, 2, 2]), tidu.Size([3]), 'BatchNorm3d')
    """

    cls_to_become = BatchNorm3d
    _dims = BatchNorm3d._dims


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm1d`` whose ``num_features`` comes from its first input; as PyTorch's, it
    defaults to ``affine=True, track_running_stats=True`` (``InstanceNorm1d`` to ``False``).

    >>> import tidu
    >>> norm = tidu.nn.LazyInstanceNorm1d()
    >>> norm(tidu.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]], grad_fn=<add>)
    >>> norm
    InstanceNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    cls_to_become = InstanceNorm1d
    _dims, _unbatched = InstanceNorm1d._dims, InstanceNorm1d._unbatched


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm2d`` whose ``num_features`` comes from its first input (defaults as
    ``LazyInstanceNorm1d``).

    >>> import tidu
    >>> norm = tidu.nn.LazyInstanceNorm2d(affine=False)
    >>> norm(tidu.ones(1, 3, 2, 2)).shape, norm.running_mean.shape
    (tidu.Size([1, 3, 2, 2]), tidu.Size([3]))
    """

    cls_to_become = InstanceNorm2d
    _dims, _unbatched = InstanceNorm2d._dims, InstanceNorm2d._unbatched

class LocalResponseNorm(Module):
    """Each channel divided by ``(k + alpha * mean of squares over size neighbouring channels) ** beta``
    (``F.local_response_norm``).

    >>> import tidu
    >>> tidu.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _band(channels: int, first: Any, last: Any) -> Any:
    """The ``(C, C)`` 0/1 matrix whose row ``c`` marks the channels ``first(c)`` to ``last(c)``."""
    c = ops.arange(channels).reshape(-1, 1)
    j = ops.arange(channels).reshape(1, -1)
    return ((j >= first(c)) & (j <= last(c))).to(dtypes.float64)


class _CrossMapLRN2dFunction(Function):
    """PyTorch's legacy ``CrossMapLRN2d`` function, quirks kept: its forward keeps channel 0 in
    the window of every channel from ``(size - 1) // 2 + 1`` on, and its backward takes windows of
    its own, not the gradient of that forward."""

    @staticmethod
    def forward(ctx: Any, input: Any, size: int, alpha: float, beta: float, k: float) -> Any:  # noqa: A002
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        channels = input.shape[1]
        pre = (size - 1) // 2 + 1
        window = _band(channels, lambda c: c - pre + 1, lambda c: c + pre - 1)
        window[pre:, 0] = 1.0  # the legacy update never drops channel 0
        squares = ops.einsum("cj,njhw->nchw", window.to(input.dtype), input * input)
        scale = squares * (alpha / size) + k
        output = input * scale ** -beta
        ctx.save_for_backward(input, output)
        ctx.scale, ctx.size, ctx.alpha, ctx.beta = scale, size, alpha, beta
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> tuple[Any, None, None, None, None]:
        input, output = ctx.saved_tensors  # noqa: A001
        size = ctx.size
        offset = (size + 1) // 2
        window = _band(input.shape[1], lambda c: c - offset, lambda c: c + size - 1 - offset).to(input.dtype)
        ratio = ops.einsum("cj,njhw->nchw", window, grad_output * output / ctx.scale)
        grad = ctx.scale ** -ctx.beta * grad_output - (2 * ctx.alpha * ctx.beta / size) * input * ratio
        return grad, None, None, None, None


class CrossMapLRN2d(Module):
    """PyTorch's legacy (Lua Torch) local response normalization across channels of ``(N, C, H, W)``
    input, with its quirks kept (see ``LocalResponseNorm`` for the usual one).

    >>> import tidu
    >>> tidu.nn.CrossMapLRN2d(3)
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Any) -> Any:  # noqa: A002
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm3d`` whose ``num_features`` comes from its first input (defaults as
    ``LazyInstanceNorm1d``).

    >>> import tidu
    >>> norm = tidu.nn.LazyInstanceNorm3d(affine=False)
    >>> norm(tidu.ones(1, 3, 2, 2, 2)).shape, norm.running_mean.shape
    (tidu.Size([1, 3, 2, 2, 2]), tidu.Size([3]))
    """

    cls_to_become = InstanceNorm3d
    _dims, _unbatched = InstanceNorm3d._dims, InstanceNorm3d._unbatched
