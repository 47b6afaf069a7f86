"""The layers, activations and losses PyTorch also has at the top level (``torch.selu``,
``torch.dropout``, ``torch.layer_norm``...), with ATen's signatures, which differ from
``torch.nn.functional``'s: ``dropout(input, p, train)`` takes ``train`` positionally, the norms take
``cudnn_enabled``, ``batch_norm`` puts ``weight`` and ``bias`` first, losses take ``reduction`` as
an int (0 none, 1 mean, 2 sum; left out, it is 0, as PyTorch's binding reads ATen's default
``at::Reduction::Mean``: ``torch.kl_div(x, t)`` is not reduced), ``embedding`` takes the weight first. Each delegates to
``tidu.nn.functional``; the in-place forms (``selu_``, ``dropout_``...) write the result into
``input`` (``copy_``, recorded as any write in place).

>>> import tidu
>>> tidu.selu(tidu.tensor([-1.0, 1.0])), tidu.dropout(tidu.ones(2), 0.5, False)
(tensor([-1.1113,  1.0507]), tensor([1., 1.]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ops import conv as _conv
from . import functional as F  # noqa: N812 - PyTorch's name for it

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_", "avg_pool1d", "batch_norm",
    "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle", "constant_pad_nd",
    "convolution", "cosine_embedding_loss", "ctc_loss", "dropout", "dropout_", "embedding", "feature_alpha_dropout",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "group_norm", "hardshrink", "hinge_embedding_loss",
    "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices",
    "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "rrelu_", "selu", "selu_",
    "threshold", "threshold_", "triplet_margin_loss",
]

# the same signature at the top level as in nn.functional
adaptive_avg_pool1d = F.adaptive_avg_pool1d
bilinear = F.bilinear
channel_shuffle = F.channel_shuffle
hardshrink = F.hardshrink
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
prelu = F.prelu
rms_norm = F.rms_norm


def _in_place(input: Any, out: Any) -> Any:  # noqa: A002
    """``input`` holding ``out`` (nothing is written when ``out`` is ``input``)."""
    return input if out is input else input.copy_(out)


# --- activations ---------------------------------------------------------------------------
def selu(input: Any) -> Any:  # noqa: A002
    """``nn.functional.selu``.

    >>> import tidu
    >>> tidu.selu(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    return F.selu(input)


def selu_(input: Any) -> Any:  # noqa: A002
    """``selu`` in place.

    >>> import tidu
    >>> x = tidu.tensor([0.0, 1.0])
    >>> tidu.selu_(x) is x, x
    (True, tensor([0.0000, 1.0507]))
    """
    return _in_place(input, F.selu(input))


def celu(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """``nn.functional.celu``.

    >>> import tidu
    >>> tidu.celu(tidu.tensor([-1.0, 1.0]), 2.0)
    tensor([-0.7869,  1.0000])
    """
    return F.celu(input, alpha)


def celu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """``celu`` in place.

    >>> import tidu
    >>> x = tidu.tensor([-1.0])
    >>> tidu.celu_(x), x
    (tensor([-0.6321]), tensor([-0.6321]))
    """
    return _in_place(input, F.celu(input, alpha))


def threshold(input: Any, threshold: float, value: float) -> Any:  # noqa: A002
    """``input`` where ``input > threshold``, else ``value`` (``nn.functional.threshold``).

    >>> import tidu
    >>> tidu.threshold(tidu.tensor([1, 2, 3]), 2, 0)
    tensor([0, 0, 3])
    """
    return F.threshold(input, threshold, value)


def threshold_(input: Any, threshold: float, value: float) -> Any:  # noqa: A002
    """``threshold`` in place.

    >>> import tidu
    >>> x = tidu.tensor([1.0, 3.0])
    >>> tidu.threshold_(x, 2.0, -1.0), x
    (tensor([-1.,  3.]), tensor([-1.,  3.]))
    """
    return _in_place(input, F.threshold(input, threshold, value))


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          generator: Any = None) -> Any:
    """``nn.functional.rrelu``, its training slopes drawn from ``generator``.

    >>> import tidu
    >>> tidu.rrelu(tidu.tensor([-4.0, 2.0]), 0.25, 0.75)
    tensor([-2.,  2.])
    """
    return F._rrelu(input, lower, upper, training, generator)


def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
           generator: Any = None) -> Any:
    """``rrelu`` in place.

    >>> import tidu
    >>> x = tidu.tensor([-4.0, 2.0])
    >>> tidu.rrelu_(x, 0.25, 0.75) is x, x
    (True, tensor([-2.,  2.]))
    """
    return _in_place(input, F._rrelu(input, lower, upper, training, generator))


# --- dropout -------------------------------------------------------------------------------
def _probability(p: float) -> None:
    """ATen's check, made whether or not in training (``nn.functional``'s raises ``ValueError``)."""
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def _features(input: Any, train: bool) -> None:  # noqa: A002
    if train and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")


def dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``nn.functional.dropout(input, p, training=train)``.

    >>> import tidu
    >>> tidu.dropout(tidu.ones(3), 0.5, False)
    tensor([1., 1., 1.])
    """
    _probability(p)
    return F.dropout(input, p, train)


def dropout_(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``dropout`` in place.

    >>> import tidu
    >>> x = tidu.ones(3)
    >>> tidu.dropout_(x, 1.0, True) is x, x
    (True, tensor([0., 0., 0.]))
    """
    return _in_place(input, dropout(input, p, train))


def feature_dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """Dropout of whole channels of ``(N, C, *)`` (one draw per sample and channel), as
    ``nn.functional.dropout2d`` for any rank of at least 2.

    >>> import tidu
    >>> y = tidu.feature_dropout(tidu.ones(4, 3, 5), 0.5, True)
    >>> all(len(set(ch.tolist())) == 1 for ch in y.reshape(12, 5))
    True
    """
    _probability(p)
    _features(input, train)
    return F._channel_dropout(input, p, train, 2)


def feature_dropout_(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``feature_dropout`` in place.

    >>> import tidu
    >>> x = tidu.ones(2, 2)
    >>> tidu.feature_dropout_(x, 1.0, True) is x, x.sum().item()
    (True, 0.0)
    """
    return _in_place(input, feature_dropout(input, p, train))


def alpha_dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``nn.functional.alpha_dropout(input, p, training=train)``.

    >>> import tidu
    >>> tidu.alpha_dropout(tidu.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    _probability(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``alpha_dropout`` in place.

    >>> import tidu
    >>> x = tidu.ones(2)
    >>> tidu.alpha_dropout_(x, 1.0, True) is x, x
    (True, tensor([0., 0.]))
    """
    return _in_place(input, alpha_dropout(input, p, train))


def feature_alpha_dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``nn.functional.feature_alpha_dropout(input, p, training=train)``.

    >>> import tidu
    >>> tidu.feature_alpha_dropout(tidu.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    _probability(p)
    _features(input, train)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """``feature_alpha_dropout`` in place.

    >>> import tidu
    >>> x = tidu.ones(1, 2)
    >>> tidu.feature_alpha_dropout_(x, 1.0, True) is x, x
    (True, tensor([[0., 0.]]))
    """
    return _in_place(input, feature_alpha_dropout(input, p, train))


# --- normalization -------------------------------------------------------------------------
def layer_norm(input: Any, normalized_shape: Sequence[int], weight: Any = None, bias: Any = None,  # noqa: A002
               eps: float = 1e-5, cudnn_enable: bool = True) -> Any:
    """``nn.functional.layer_norm`` (``cudnn_enable`` is ignored, as on PyTorch's CPU).

    >>> import tidu
    >>> tidu.layer_norm(tidu.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5,  # noqa: A002
               cudnn_enabled: bool = True) -> Any:
    """``nn.functional.group_norm`` (``cudnn_enabled`` is ignored).

    >>> import tidu
    >>> tidu.group_norm(tidu.tensor([[[1.0, 3.0], [0.0, 4.0]]]), 2)
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,  # noqa: A002
               training: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Any:
    """``nn.functional.batch_norm`` with ATen's order of arguments (``weight`` and ``bias``
    first), all of them required.

    >>> import tidu
    >>> tidu.batch_norm(tidu.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 1e-5, False)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,  # noqa: A002
                  use_input_stats: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Any:
    """``nn.functional.instance_norm`` with ATen's order of arguments, all of them required.

    >>> import tidu
    >>> tidu.instance_norm(tidu.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1, 1e-5, False)
    tensor([[[-1.0000,  1.0000]]])
    """
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight: Any, indices: Any, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Any:
    """Rows of ``weight`` picked by ``indices`` (``nn.functional.embedding`` with the weight
    first); ``padding_idx`` below 0 is none.

    >>> import tidu
    >>> tidu.embedding(tidu.tensor([[0.0, 1.0], [2.0, 3.0]]), tidu.tensor([1, 1]))
    tensor([[2., 3.],
            [2., 3.]])
    """
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# --- losses --------------------------------------------------------------------------------
def _reduction(reduction: Any, op: str, position: int) -> str:
    """ATen's reduction enum as ``nn.functional``'s name: 1 mean, 2 sum, any other int none (the
    top-level losses default to 0: what PyTorch's binding makes of ATen's default, see above)."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{op}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def kl_div(input: Any, target: Any, reduction: int = 0, *, log_target: bool = False) -> Any:  # noqa: A002
    """``nn.functional.kl_div`` with ``reduction`` an int (1, the mean, averages every element).

    >>> import tidu
    >>> tidu.kl_div(tidu.tensor([0.0, 0.0]), tidu.tensor([1.0, 0.5]), 2)
    tensor(-0.3466)
    >>> tidu.kl_div(tidu.tensor([0.0, 0.0]), tidu.tensor([1.0, 0.5]))
    tensor([ 0.0000, -0.3466])
    """
    return F.kl_div(input, target, reduction=_reduction(reduction, "kl_div", 3), log_target=log_target)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = 0) -> Any:
    """``nn.functional.cosine_embedding_loss`` with ``reduction`` an int.

    >>> import tidu
    >>> tidu.cosine_embedding_loss(tidu.tensor([[1.0, 0.0]]), tidu.tensor([[0.0, 1.0]]), tidu.tensor([1]))
    tensor([1.])
    """
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss", 5))


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, reduction: int = 0) -> Any:  # noqa: A002
    """``nn.functional.hinge_embedding_loss`` with ``reduction`` an int.

    >>> import tidu
    >>> tidu.hinge_embedding_loss(tidu.tensor([0.5, 2.0]), tidu.tensor([1.0, -1.0]), 1.0, 0)
    tensor([0.5000, 0.0000])
    """
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction, "hinge_embedding_loss", 4))


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = 0) -> Any:
    """``nn.functional.margin_ranking_loss`` with ``reduction`` an int.

    >>> import tidu
    >>> tidu.margin_ranking_loss(tidu.tensor([1.0]), tidu.tensor([2.0]), tidu.tensor([1.0]))
    tensor([1.])
    """
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss", 5))


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Any:
    """``nn.functional.triplet_margin_loss`` with ``reduction`` an int.

    >>> import tidu
    >>> a = tidu.tensor([[0.0, 0.0]])
    >>> tidu.triplet_margin_loss(a, a, a + 1.0, eps=0.0)
    tensor([0.])
    """
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss", 8))


def poisson_nll_loss(input: Any, target: Any, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int) -> Any:
    """``nn.functional.poisson_nll_loss`` with every argument required and ``reduction`` an int.

    >>> import tidu
    >>> tidu.poisson_nll_loss(tidu.tensor([0.0]), tidu.tensor([1.0]), True, False, 1e-8, 1)
    tensor(1.)
    """
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss", 6))


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, pos_weight: Any = None,  # noqa: A002
                                     reduction: int = 0) -> Any:
    """``nn.functional.binary_cross_entropy_with_logits`` with ``reduction`` an int.

    >>> import tidu
    >>> tidu.binary_cross_entropy_with_logits(tidu.tensor([0.0]), tidu.tensor([1.0]), reduction=1)
    tensor(0.6931)
    """
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                              reduction=_reduction(reduction, "binary_cross_entropy_with_logits", 5))


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Any:
    """``nn.functional.ctc_loss`` with ``reduction`` an int.

    >>> import tidu
    >>> log_probs = tidu.zeros(2, 1, 2).log_softmax(2)
    >>> tidu.ctc_loss(log_probs, tidu.tensor([[1]]), [2], [1], 0, 2)
    tensor(0.2877)
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction, "ctc_loss", 6), zero_infinity)


# --- pooling, padding, convolution ---------------------------------------------------------
def max_pool1d(input: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Any:
    """``nn.functional.max_pool1d`` (``stride=()`` is the kernel size).

    >>> import tidu
    >>> tidu.max_pool1d(tidu.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Any, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Any, Any]:
    """``max_pool1d`` and the positions of the maxima along the last dim.

    >>> import tidu
    >>> tidu.max_pool1d_with_indices(tidu.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True) -> Any:
    """``nn.functional.avg_pool1d`` (``stride=()`` is the kernel size).

    >>> import tidu
    >>> tidu.avg_pool1d(tidu.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[2., 1.]])
    """
    return F.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def adaptive_max_pool1d(input: Any, output_size: Any) -> tuple[Any, Any]:  # noqa: A002
    """``nn.functional.adaptive_max_pool1d`` with the indices: ATen's returns both.

    >>> import tidu
    >>> tidu.adaptive_max_pool1d(tidu.tensor([[1.0, 5.0, 2.0, 0.0]]), 2)
    (tensor([[5., 2.]]), tensor([[1, 2]]))
    """
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input: Any, pad: Sequence[int], value: float = 0) -> Any:  # noqa: A002
    """``nn.functional.pad(input, pad, 'constant', value)``: negative sizes crop.

    >>> import tidu
    >>> tidu.constant_pad_nd(tidu.tensor([1, 2]), [1, -1], 7)
    tensor([7, 1])
    """
    return F.pad(input, pad, "constant", value)


def _int_list(value: Any, name: str, position: int) -> list[int]:
    if not isinstance(value, list | tuple):
        raise TypeError(f"convolution(): argument '{name}' (position {position}) must be tuple of ints, not "
                        f"{type(value).__name__}")
    return [int(v) for v in value]


def convolution(input: Any, weight: Any, bias: Any, stride: Sequence[int], padding: Sequence[int],  # noqa: A002
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int) -> Any:
    """ATen's one convolution: ``conv1d/2d/3d`` (or ``conv_transpose1d/2d/3d`` when
    ``transposed``), picked by the weight's rank; the sizes are lists of ints (one value is used
    for every dim).

    >>> import tidu
    >>> tidu.convolution(tidu.ones(1, 1, 4), tidu.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1)
    tensor([[[2., 2., 2.]]])
    """
    stride, padding = _int_list(stride, "stride", 4), _int_list(padding, "padding", 5)
    dilation, output_padding = _int_list(dilation, "dilation", 6), _int_list(output_padding, "output_padding", 8)
    n = weight.ndim - 2
    if n < 1:
        raise RuntimeError("weight should have at least three dimensions")
    if n > 3:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size {list(input.shape)} "
                           "instead (tidu convolves 1 to 3 dims)")
    stride, padding, dilation, output_padding = (v[0] if len(v) == 1 else v for v in
                                                 (stride, padding, dilation, output_padding))
    if transposed:
        fn = (_conv.conv_transpose1d, _conv.conv_transpose2d, _conv.conv_transpose3d)[n - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (_conv.conv1d, _conv.conv2d, _conv.conv3d)[n - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)
