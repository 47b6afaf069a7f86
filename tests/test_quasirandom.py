"""``tidu.quasirandom.SobolEngine`` against PyTorch's: the direction numbers and the unscrambled
points bit for bit; scrambled points (drawn from tidu's generator, not PyTorch's stream) by the
balance properties a scrambled Sobol' net keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.quasirandom

import tidu
from tidu.quasirandom import SobolEngine, _polynomials


def test_direction_numbers_are_pytorchs() -> None:
    theirs = torch.zeros(SobolEngine.MAXDIM, SobolEngine.MAXBIT, dtype=torch.long)
    torch._sobol_engine_initialize_state_(theirs, SobolEngine.MAXDIM)
    assert np.array_equal(SobolEngine(SobolEngine.MAXDIM).sobolstate.numpy(), theirs.numpy())


def test_polynomials_are_the_primitive_ones_in_order() -> None:
    degrees = [p.bit_length() - 1 for p in _polynomials(SobolEngine.MAXDIM)[1:]]
    totient = [sum(math.gcd(k, 2**s - 1) == 1 for k in range(1, 2**s)) // s for s in range(1, 8)]
    assert [degrees.count(s) for s in range(1, 8)] == totient  # phi(2**s - 1) / s of each degree
    assert _polynomials(8)[:8] == (1, 3, 7, 11, 13, 19, 25, 37)


@pytest.mark.parametrize("dimension", [1, 2, 7, 40, 256])
def test_unscrambled_draws_are_pytorchs(dimension: int) -> None:
    ours, theirs = SobolEngine(dimension), torch.quasirandom.SobolEngine(dimension)
    for n in (1, 1, 5, 64, 3):
        assert np.array_equal(ours.draw(n).numpy(), theirs.draw(n).numpy())
    ours.fast_forward(1000)
    theirs.fast_forward(1000)
    assert np.array_equal(ours.draw(7, dtype=tidu.float64).numpy(), theirs.draw(7, dtype=torch.float64).numpy())
    assert ours.num_generated == theirs.num_generated
    ours.reset()
    theirs.reset()
    assert np.array_equal(ours.draw_base2(4).numpy(), theirs.draw_base2(4).numpy())


def test_fast_forward_from_the_start_and_out() -> None:
    ours, theirs = SobolEngine(3).fast_forward(5), torch.quasirandom.SobolEngine(3).fast_forward(5)
    out, tout = tidu.zeros(4, 3, dtype=tidu.float64), torch.zeros(4, 3, dtype=torch.float64)
    got = ours.draw(4, out=out)
    theirs.draw(4, out=tout)
    assert got is out and np.array_equal(out.numpy(), tout.numpy())
    with pytest.raises(RuntimeError, match="shape"):
        ours.draw(2, out=tidu.zeros(3, 3))


def test_errors_match_pytorchs() -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError, match="Supported range"):
            SobolEngine(bad)
        with pytest.raises(ValueError, match="Supported range"):
            torch.quasirandom.SobolEngine(bad)
    with pytest.raises(ValueError, match=r"\[1, 256\].*21201.*got 257"):
        SobolEngine(257)
    ours, theirs = SobolEngine(2), torch.quasirandom.SobolEngine(2)
    ours.draw(3)
    theirs.draw(3)
    with pytest.raises(ValueError) as mine:
        ours.draw_base2(2)
    with pytest.raises(ValueError) as torchs:
        theirs.draw_base2(2)
    assert str(mine.value) == str(torchs.value)
    with pytest.raises(TypeError, match="floating-point"):
        ours.draw(2, dtype=tidu.int64)


def test_repr_is_pytorchs() -> None:
    for args in ((3,), (3, True), (3, True, 7)):
        assert repr(SobolEngine(*args)) == repr(torch.quasirandom.SobolEngine(*args))


def _is_net(points: np.ndarray, m: int, dims: tuple[int, ...]) -> bool:
    """Whether the ``2**m`` points put exactly one point in every elementary box of volume
    ``2**-m`` over ``dims`` (a (0, m, len(dims))-net in base 2)."""
    cells = np.floor(points * 2**m).astype(np.int64)
    if len(dims) == 1:
        return sorted(cells[:, dims[0]].tolist()) == list(range(2**m))
    a, b = dims
    for k in range(m + 1):  # boxes of 2**-k by 2**-(m - k)
        boxes = (cells[:, a] >> (m - k)) * 2 ** (m - k) + (cells[:, b] >> k)
        if len(set(boxes.tolist())) != 2**m:
            return False
    return True


@pytest.mark.parametrize("engine", [SobolEngine, torch.quasirandom.SobolEngine], ids=["tidu", "torch"])
def test_scrambled_points_keep_the_nets_balance(engine) -> None:
    sobol = engine(5, scramble=True, seed=11)
    first = sobol.draw_base2(6).double().numpy()
    assert _is_net(first, 6, (0, 1))  # the first two Sobol' coordinates form a (0, m, 2)-net
    assert all(_is_net(first, 6, (d,)) for d in range(5))
    both = np.concatenate([first, sobol.draw_base2(6).double().numpy()])
    assert all(_is_net(both, 7, (d,)) for d in range(5))
    assert ((both >= 0) & (both < 1)).all() and abs(both.mean() - 0.5) < 0.05


def test_scrambling_follows_the_seed() -> None:
    a, b, c = (SobolEngine(4, scramble=True, seed=s).draw(16).numpy() for s in (3, 3, 4))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    unscrambled = SobolEngine(4).draw(16).numpy()
    assert not np.array_equal(a, unscrambled)
    tidu.manual_seed(0)
    d = SobolEngine(4, scramble=True).draw(4).numpy()
    tidu.manual_seed(0)
    assert np.array_equal(d, SobolEngine(4, scramble=True).draw(4).numpy())
    scrambled = SobolEngine(4, scramble=True, seed=3)
    assert scrambled.shift.dtype is tidu.int64 and int(scrambled.shift.max()) < 2**30
    assert scrambled.draw(1).numpy().tolist() == (scrambled.shift.numpy()[None] / 2**30).astype(np.float32).tolist()
