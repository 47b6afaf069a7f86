"""``Dropout``, ``Dropout1d``, ``Dropout2d``, ``Dropout3d``, ``AlphaDropout`` and ``FeatureAlphaDropout``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module


class Dropout(Module):
    """Zero elements with probability ``p`` in training (scaling the rest by ``1/(1-p)``);
    the identity in eval mode.

    >>> import tidu
    >>> drop = tidu.nn.Dropout(0.5).eval()
    >>> drop(tidu.ones(3))
    tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` in training (``F.dropout1d``).

    >>> import tidu
    >>> tidu.nn.Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.dropout1d(input, self.p, self.training)


class Dropout2d(Dropout):
    """Zero whole channels of ``(N, C, H, W)`` in training (``F.dropout2d``).

    >>> import tidu
    >>> tidu.nn.Dropout2d().eval()(tidu.ones(1, 1, 1, 2))
    tensor([[[[1., 1.]]]])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.dropout2d(input, self.p, self.training)


class Dropout3d(Dropout):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` in training (``F.dropout3d``).

    >>> import tidu
    >>> tidu.nn.Dropout3d()
    Dropout3d(p=0.5, inplace=False)
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.dropout3d(input, self.p, self.training)


class AlphaDropout(Dropout):
    """Dropout that keeps zero mean and unit variance, for SELU networks (``F.alpha_dropout``).

    >>> import tidu
    >>> tidu.nn.AlphaDropout(0.2).eval()(tidu.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels (``F.feature_alpha_dropout``).

    >>> import tidu
    >>> tidu.nn.FeatureAlphaDropout()
    FeatureAlphaDropout(p=0.5, inplace=False)
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.feature_alpha_dropout(input, self.p, self.training)
