"""``Embedding`` and ``EmbeddingBag``."""

from __future__ import annotations

from typing import Any

from ... import ops
from ...core.grad_mode import no_grad
from ...core.inplace import assign_
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class _LookupTable(Module):
    """The ``weight`` table of ``Embedding`` and ``EmbeddingBag``: ``N(0, 1)`` at init, the
    ``padding_idx`` row zero."""

    _padding_error = "Padding_idx must be within num_embeddings"

    def _table(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None, max_norm: float | None,
               norm_type: float, scale_grad_by_freq: bool, sparse: bool, _weight: Any, _freeze: bool,
               dtype: Any) -> None:
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError(self._padding_error)
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(ops.empty(num_embeddings, embedding_dim, dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                row = (ops.arange(self.num_embeddings, device=self.weight.device) != self.padding_idx).reshape(-1, 1)
                assign_(self.weight, ops.where(row, self.weight, 0.0), op="Embedding")


class Embedding(_LookupTable):
    """A lookup table of ``num_embeddings`` rows of size ``embedding_dim`` (``N(0, 1)`` at init);
    the ``padding_idx`` row starts at zero and gets no gradient.

    >>> import tidu
    >>> emb = tidu.nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(tidu.tensor([[0, 4]])).shape
    tidu.Size([1, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self._table(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                    _weight, _freeze, dtype)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: int | None = None,
                        **kwargs: Any) -> Embedding:
        """An ``Embedding`` whose weight is ``embeddings`` (2-D), frozen by default."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze, **kwargs)


class EmbeddingBag(_LookupTable):
    """The sum, mean or max of the embeddings of each bag of indices (``F.embedding_bag``), without
    the per-index rows in between; ``weight`` as ``Embedding``'s.

    >>> import tidu
    >>> bag = tidu.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> bag(tidu.tensor([1, 2, 4, 5, 4]), tidu.tensor([0, 2])).shape
    tidu.Size([2, 3])
    """

    _padding_error = "padding_idx must be within num_embeddings"

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Any = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self._table(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                    _weight, False, dtype)
        self.mode = mode
        self.include_last_offset = include_last_offset

    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Any = None) -> Any:  # noqa: A002
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An ``EmbeddingBag`` whose weight is ``embeddings`` (2-D), frozen by default."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
