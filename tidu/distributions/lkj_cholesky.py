"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, tiny


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim x dim`` correlation matrices:
    ``L @ L.mT`` has density proportional to ``det(L @ L.mT) ** (concentration - 1)`` (uniform at 1).

    ``sample`` uses the onion method (Lewandowski, Kurowicka and Joe, 2009, section 3.2) with tidu's
    random stream; there is no ``rsample``. Unlike PyTorch's for ``dim > 2``, its draws follow
    ``log_prob``: every correlation is ``2 B - 1`` with ``B ~ Beta(eta - 1 + dim / 2, same)``.

    >>> import tidu
    >>> from tidu.distributions import LKJCholesky
    >>> d = LKJCholesky(3, tidu.tensor(0.5))
    >>> d.log_prob(tidu.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]))
    tensor(-2.3079)
    >>> L = d.sample((2,))
    >>> L.shape, bool(((L @ L.mT).diagonal(dim1=-2, dim2=-1) - 1).abs().max() < 1e-6)
    (tidu.Size([2, 3, 3]), True)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._expanded(batch_shape, ("concentration",))
        new.dim = self.dim
        return new

    def _row_beta(self) -> Beta:
        """Row ``i``'s squared norm below the diagonal is Beta(i / 2, eta + (dim - 1 - i) / 2), the
        onion step from ``i`` to ``i + 1`` variables (row 0's draw is unused: it is the diagonal's 1).
        PyTorch takes Beta(i - 1 / 2, ...), which only agrees for ``dim == 2``."""
        offset = tidu.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = tidu.cat([offset.new_zeros((1,)), offset])
        marginal = self.concentration + 0.5 * (self.dim - 2)
        return Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset, validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Any:
        """Onion-method draws of shape ``sample_shape + batch_shape + (dim, dim)``."""
        with tidu.no_grad():
            y = self._row_beta().sample(tuple(sample_shape)).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            normal = tidu.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
            # a uniform direction per row below the diagonal; row 0 has none (0 / tiny stays 0)
            direction = normal / normal.norm(dim=-1, keepdim=True).clamp(min=tiny(normal))
            w = y.sqrt() * direction
            diagonal = (1 - (w ** 2).sum(-1)).clamp(min=tiny(w)).sqrt()
            return w + tidu.diag_embed(diagonal)

    def log_prob(self, value: Any) -> Any:
        # density of L: prod_i L_ii ** (2 (eta - 1) + dim - i) for rows i = 2..dim (one-based),
        # the Jacobian of L -> L L^T included; normalizer on page 1999 of the paper
        self._validate(value)
        c, dim = self.concentration, self.dim
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = 2 * (c - 1).unsqueeze(-1) + dim - tidu.arange(2, dim + 1, device=c.device)
        unnormalized = (order * diagonal.log()).sum(-1)
        alpha = c + 0.5 * (dim - 1)
        normalizer = (0.5 * (dim - 1) * math.log(math.pi) + tidu.mvlgamma(alpha - 0.5, dim - 1)
                      - tidu.lgamma(alpha) * (dim - 1))
        return unnormalized - normalizer
