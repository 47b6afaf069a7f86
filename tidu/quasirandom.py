"""``tidu.quasirandom``: PyTorch's ``SobolEngine``, Sobol' low-discrepancy sequences.

The unscrambled points are PyTorch's, bit for bit: the same direction numbers (Joe and Kuo's,
``tidu/_sobol_numbers.py``), 30 bits, the same Gray-code order. tidu carries the initial numbers of
the first 256 dimensions (PyTorch's table has 21201); a higher ``dimension`` raises. Scrambled
points take their random matrices and shift from tidu's generator, whose stream is not PyTorch's,
so they differ from PyTorch's for the same seed (they are the same for the same seed in tidu).

>>> import tidu
>>> engine = tidu.quasirandom.SobolEngine(dimension=3)
>>> engine.draw(4)
tensor([[0.0000, 0.0000, 0.0000],
        [0.5000, 0.5000, 0.5000],
        [0.7500, 0.2500, 0.2500],
        [0.2500, 0.7500, 0.7500]])
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .core import dtypes
from .tensor import Tensor

__all__ = ["SobolEngine"]

MAXBIT = 30


def _order_is_full(poly: int, degree: int, factors: list[int]) -> bool:
    """Whether ``x`` has order ``2**degree - 1`` modulo ``poly`` over GF(2): then ``poly`` is
    primitive (a reducible polynomial's units are fewer than that)."""
    def power(e: int) -> int:  # x ** e mod poly
        result, base = 1, 2
        while e:
            if e & 1:
                result = _mulmod(result, base, poly, degree)
            base = _mulmod(base, base, poly, degree)
            e >>= 1
        return result

    order = 2**degree - 1
    return power(order) == 1 and all(power(order // q) != 1 for q in factors)


def _mulmod(a: int, b: int, poly: int, degree: int) -> int:
    product = 0
    while b:
        if b & 1:
            product ^= a
        b >>= 1
        a <<= 1
        if a >> degree & 1:
            a ^= poly
    return product


def _prime_factors(n: int) -> list[int]:
    found, p = [], 2
    while p * p <= n:
        if n % p == 0:
            found.append(p)
            while n % p == 0:
                n //= p
        p += 1
    return found + ([n] if n > 1 else [])


@functools.cache
def _polynomials(count: int) -> tuple[int, ...]:
    """The first ``count`` primitive polynomials over GF(2) in increasing order, as bit patterns
    (``x**3 + x + 1`` is ``0b1011``), after the first dimension's ``1``: Joe and Kuo's order."""
    found, degree = [1], 1
    while len(found) < count:
        factors = _prime_factors(2**degree - 1)
        for poly in range(2**degree + 1, 2 ** (degree + 1), 2):
            if len(found) < count and _order_is_full(poly, degree, factors):
                found.append(poly)
        degree += 1
    return tuple(found)


@functools.cache
def _direction_numbers() -> np.ndarray:
    """Every supported dimension's 30 direction numbers, scaled to 30 bits (PyTorch's
    ``sobolstate``), int64 of shape ``(MAX_DIMENSION, 30)``."""
    from ._sobol_numbers import INITIAL_NUMBERS, MAX_DIMENSION

    initial = iter(int(m) for m in INITIAL_NUMBERS.split())
    state = np.zeros((MAX_DIMENSION, MAXBIT), dtype=np.int64)
    state[0] = 1
    for d, poly in enumerate(_polynomials(MAX_DIMENSION)[1:], start=1):
        s = poly.bit_length() - 1
        m = [next(initial) for _ in range(s)]
        for j in range(s, MAXBIT):  # m_j = 2 a_1 m_{j-1} ^ 4 a_2 m_{j-2} ^ ... ^ 2**s m_{j-s} ^ m_{j-s}
            new = m[j - s]
            for k in range(s):
                if poly >> (s - 1 - k) & 1:
                    new ^= m[j - k - 1] << (k + 1)
            m.append(new)
        state[d] = m
    return state << np.arange(MAXBIT - 1, -1, -1, dtype=np.int64)


class SobolEngine:
    """Points of a Sobol' sequence in ``[0, 1)**dimension``, drawn in order: ``draw(n)`` gives
    the next ``n`` as an ``(n, dimension)`` tensor. With ``scramble=True`` the sequence is
    scrambled (a random lower-triangular binary matrix per dimension, and a random digital
    shift, from ``seed``), which keeps its balance: any ``2**m`` consecutive points from the
    start put one point in each interval ``[k / 2**m, (k + 1) / 2**m)`` of each coordinate.

    >>> import tidu
    >>> engine = tidu.quasirandom.SobolEngine(2, scramble=True, seed=0)
    >>> points = engine.draw_base2(3)
    >>> sorted((points[:, 0] * 8).floor().int().tolist())
    [0, 1, 2, 3, 4, 5, 6, 7]
    """

    MAXBIT = MAXBIT
    MAXDIM = 256  # the dimensions whose direction numbers tidu carries (PyTorch: 21201)

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)):
            raise TypeError(f"SobolEngine(): dimension must be an int, not {type(dimension).__name__}")
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}] (tidu "
                             f"carries Joe and Kuo's direction numbers for {self.MAXDIM} dimensions; PyTorch's "
                             f"go to 21201), got {dimension}")
        self.seed, self.scramble, self.dimension = seed, scramble, int(dimension)
        self._state = _direction_numbers()[: self.dimension].copy()
        self._shift = np.zeros(self.dimension, dtype=np.int64)
        if scramble:
            self._scramble()
        self.num_generated = 0

    def _scramble(self) -> None:
        from .ops import creation

        generator = None
        if self.seed is not None:
            generator = creation.Generator()
            generator.manual_seed(self.seed)
        bits = creation.randint(2, (self.dimension, MAXBIT), generator=generator).numpy()
        self._shift = bits @ (np.int64(1) << np.arange(MAXBIT, dtype=np.int64))
        lower = np.tril(creation.randint(2, (self.dimension, MAXBIT, MAXBIT), generator=generator).numpy())
        lower[:, np.arange(MAXBIT), np.arange(MAXBIT)] = 1
        # each direction number's bits, most significant first, times its dimension's matrix over GF(2):
        # bit i of the result depends on bits 0..i only, so the leading bits stay a net
        weights = np.int64(1) << np.arange(MAXBIT - 1, -1, -1, dtype=np.int64)
        digits = self._state[:, :, None] >> np.arange(MAXBIT - 1, -1, -1, dtype=np.int64) & 1  # (dim, col, bit)
        scrambled = np.einsum("dib,dcb->dci", lower, digits) & 1
        self._state = scrambled @ weights

    @property
    def sobolstate(self) -> Tensor:
        """The direction numbers, ``(dimension, 30)`` int64 (scrambled with ``scramble=True``)."""
        from .ops.creation import tensor

        return tensor(self._state)

    @property
    def shift(self) -> Tensor:
        """The digital shift, one 30-bit integer per dimension (zeros without ``scramble``)."""
        from .ops.creation import tensor

        return tensor(self._shift)

    def _points(self, first: int, n: int) -> np.ndarray:
        """Points ``first`` to ``first + n - 1`` as 30-bit integers: point ``k`` is the shift xor
        the direction numbers of the bits of ``k``'s Gray code."""
        index = np.arange(first, first + n, dtype=np.int64)
        gray = index ^ (index >> 1)
        out = np.broadcast_to(self._shift, (n, self.dimension)).copy()
        for bit in range(int(gray.max()).bit_length() if n else 0):
            on = (gray >> bit & 1).astype(bool)
            out[on] ^= self._state[:, bit]
        return out

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``n`` points, ``(n, dimension)``, in ``dtype`` (the default dtype if ``None``).

        >>> import tidu
        >>> engine = tidu.quasirandom.SobolEngine(1)
        >>> engine.draw(2).flatten().tolist(), engine.draw(2).flatten().tolist()
        ([0.0, 0.5], [0.75, 0.25])
        """
        from .ops.creation import tensor

        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise TypeError(f"draw(): n must be a non-negative int, got {n!r}")
        dt = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
        if not dt.is_floating_point:
            raise TypeError(f"draw(): dtype must be a floating-point dtype, got {dt}")
        if dt.is_half:
            raise dtypes.not_implemented("_sobol_engine_draw", dt)
        points = self._points(self.num_generated, int(n))
        values = points.astype(dt.np) * dt.np.type(2.0**-MAXBIT)
        self.num_generated += int(n)
        result = tensor(values, dtype=dt)
        if out is not None:
            if tuple(out.shape) != tuple(result.shape):
                raise RuntimeError(f"draw(): out must have shape {tuple(result.shape)} (tidu does not resize "
                                   f"tensors), got {tuple(out.shape)}")
            return out.copy_(result)
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``2**m`` points; the points drawn so far and these must number a power of 2
        (which keeps the sequence's balance), else a ``ValueError``.

        >>> import tidu
        >>> tidu.quasirandom.SobolEngine(2).draw_base2(2).shape
        tidu.Size([4, 2])
        """
        n = 2**m
        total = self.num_generated + n
        if total & (total - 1) != 0:
            raise ValueError("The balance properties of Sobol' points require n to be a power of 2. "
                             f"{self.num_generated} points have been previously generated, then: "
                             f"n={self.num_generated}+2**{m}={total}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Start the sequence again from its first point.

        >>> import tidu
        >>> engine = tidu.quasirandom.SobolEngine(1)
        >>> _ = engine.draw(3)
        >>> engine.reset().draw(1).item()
        0.0
        """
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip the next ``n`` points (as drawing them).

        >>> import tidu
        >>> tidu.quasirandom.SobolEngine(1).fast_forward(2).draw(1).item()
        0.75
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise TypeError(f"fast_forward(): n must be a non-negative int, got {n!r}")
        self.num_generated += int(n)
        return self

    def __repr__(self) -> str:
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"SobolEngine({', '.join(parts)})"
