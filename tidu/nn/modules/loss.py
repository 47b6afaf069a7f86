"""Loss modules: ``MSELoss``, ``L1Loss``, ``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``, ``BCEWithLogitsLoss``,
``SmoothL1Loss``, ``HuberLoss``, ``KLDivLoss``, ``SoftMarginLoss``, ``MarginRankingLoss``, ``CosineEmbeddingLoss``,
``HingeEmbeddingLoss``, ``TripletMarginLoss``, ``GaussianNLLLoss``, ``PoissonNLLLoss``, ``MultiLabelSoftMarginLoss``,
``MultiMarginLoss``, ``MultiLabelMarginLoss``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .distance import PairwiseDistance
from .module import Module


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error, ``reduction='mean'|'sum'|'none'``.

    >>> import tidu
    >>> tidu.nn.MSELoss()(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 4.0]))
    tensor(2.)
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    >>> import tidu
    >>> tidu.nn.L1Loss(reduction="none")(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 4.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices given log-probabilities.

    >>> import tidu
    >>> tidu.nn.NLLLoss()(tidu.tensor([[-0.5, -1.0]]), tidu.tensor([1]))
    tensor(1.)
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities
    (``weight``, ``ignore_index``, ``reduction``, ``label_smoothing``).

    >>> import tidu
    >>> loss = tidu.nn.CrossEntropyLoss()
    >>> loss(tidu.tensor([[0.0, 0.0]]), tidu.tensor([1]))
    tensor(0.6931)
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities.

    >>> import tidu
    >>> tidu.nn.BCELoss()(tidu.tensor([0.5]), tidu.tensor([1.0]))
    tensor(0.6931)
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (``weight``, ``pos_weight``).

    >>> import tidu
    >>> tidu.nn.BCEWithLogitsLoss()(tidu.tensor([0.0]), tidu.tensor([1.0]))
    tensor(0.6931)
    """

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (``F.smooth_l1_loss``).

    >>> import tidu
    >>> tidu.nn.SmoothL1Loss(beta=2.0)(tidu.tensor([1.0, 4.0]), tidu.tensor([0.0, 0.0]))
    tensor(1.6250)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-sloped linear above (``F.huber_loss``).

    >>> import tidu
    >>> tidu.nn.HuberLoss(delta=2.0)(tidu.tensor([1.0, 4.0]), tidu.tensor([0.0, 0.0]))
    tensor(3.2500)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities from a target (``F.kl_div``).

    >>> import tidu
    >>> tidu.nn.KLDivLoss(reduction="batchmean", log_target=True)(tidu.zeros(1, 2), tidu.zeros(1, 2))
    tensor(0.)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss for targets of +-1 (``F.soft_margin_loss``).

    >>> import tidu
    >>> tidu.nn.SoftMarginLoss()(tidu.tensor([0.0]), tidu.tensor([1.0]))
    tensor(0.6931)
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y * (x1 - x2) + margin)`` (``F.margin_ranking_loss``).

    >>> import tidu
    >>> tidu.nn.MarginRankingLoss(0.5)(tidu.tensor([0.0]), tidu.tensor([0.0]), tidu.tensor([1.0]))
    tensor(0.5000)
    """

    def forward(self, input1: Any, input2: Any, target: Any) -> Any:
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos`` for similar pairs, ``max(0, cos - margin)`` for dissimilar ones
    (``F.cosine_embedding_loss``).

    >>> import tidu
    >>> tidu.nn.CosineEmbeddingLoss()(tidu.tensor([[1.0, 0.0]]), tidu.tensor([[0.0, 1.0]]), tidu.tensor([1.0]))
    tensor(1.)
    """

    def forward(self, input1: Any, input2: Any, target: Any) -> Any:
        return F.cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``x`` for ``y = 1``, ``max(0, margin - x)`` for ``y = -1`` (``F.hinge_embedding_loss``).

    >>> import tidu
    >>> tidu.nn.HingeEmbeddingLoss()(tidu.tensor([0.25]), tidu.tensor([-1.0]))
    tensor(0.7500)
    """

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class TripletMarginLoss(_MarginLoss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with the ``p``-norm distance (``F.triplet_margin_loss``).

    >>> import tidu
    >>> tidu.nn.TripletMarginLoss(eps=0.0)(tidu.zeros(1, 2), tidu.zeros(1, 2), tidu.ones(1, 2))
    tensor(0.)
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.p, self.eps, self.swap = p, eps, swap

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                     reduction=self.reduction)



class TripletMarginWithDistanceLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with any distance function
    (``F.triplet_margin_with_distance_loss``; default ``pairwise_distance``).

    >>> import tidu
    >>> loss = tidu.nn.TripletMarginWithDistanceLoss(distance_function=tidu.nn.PairwiseDistance(eps=0.0))
    >>> loss(tidu.zeros(1, 2), tidu.zeros(1, 2), tidu.tensor([[3.0, 4.0]]))
    tensor(0.)
    """

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (``F.ctc_loss``): ``log_probs (T, N, C)``,
    padded or concatenated targets, per-sample input and target lengths.

    >>> import tidu
    >>> log_probs = tidu.full((4, 1, 3), 1 / 3).log()
    >>> tidu.nn.CTCLoss(reduction="sum")(log_probs, tidu.tensor([[1, 2]]), [4], [2])
    tensor(1.6864)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any) -> Any:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)

class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with predicted variances (``F.gaussian_nll_loss``).

    >>> import tidu
    >>> tidu.nn.GaussianNLLLoss()(tidu.tensor([0.0]), tidu.tensor([0.0]), tidu.tensor([1.0]))
    tensor(0.)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Any, target: Any, var: Any) -> Any:  # noqa: A002
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood of counts (``F.poisson_nll_loss``).

    >>> import tidu
    >>> tidu.nn.PoissonNLLLoss()(tidu.tensor([0.0]), tidu.tensor([1.0]))
    tensor(1.)
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None, eps: float = 1e-8,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Any, target: Any) -> Any:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over the classes (``F.multilabel_soft_margin_loss``).

    >>> import tidu
    >>> tidu.nn.MultiLabelSoftMarginLoss()(tidu.zeros(1, 2), tidu.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (``F.multi_margin_loss``); ``weight`` is a buffer, as PyTorch's.

    >>> import tidu
    >>> tidu.nn.MultiMarginLoss(p=2, margin=0.5)(tidu.tensor([[0.1, 0.8, 0.4]]), tidu.tensor([1]))
    tensor(0.0033)
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Any = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss over listed and unlisted classes (``F.multilabel_margin_loss``).

    >>> import tidu
    >>> tidu.nn.MultiLabelMarginLoss()(tidu.tensor([[0.1, 0.2, 0.4, 0.8]]), tidu.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)
