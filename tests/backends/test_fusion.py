"""Fusion (tidu/backends/cpu/fusion.py): fused programs compute exactly what the unfused ones do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bench.fusion import Builder, w3_chain
from tidu.backends.cpu import fusion
from tidu.backends.cuda.memory import CudaArray
from tidu.core import instructions
from tidu.core.aval import ShapeDtype
from tidu.core.dtypes import bool_, float32, float64, int8, int16, int32, int64, uint8
from tidu.core.instructions import Instr
from tidu.core.primitive import REGISTRY
from tidu.primitives import creation, reduce, structural
from tidu.primitives import elementwise as ew

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FLOAT_UNARY = [ew.exp, ew.tanh, ew.logistic, ew.sin, ew.neg, ew.abs, ew.log, ew.sqrt, ew.floor]
FLOAT_BINARY = [ew.add, ew.sub, ew.mul, ew.div, ew.maximum, ew.minimum, ew.pow, ew.remainder]
INT_UNARY = [ew.neg, ew.abs, ew.sign]
INT_BINARY = [ew.add, ew.sub, ew.mul, ew.maximum, ew.minimum, ew.bitwise_and, ew.bitwise_xor, ew.bitwise_left_shift,
              ew.bitwise_right_shift]
BOOL_BINARY = [ew.bitwise_and, ew.bitwise_or, ew.bitwise_xor, ew.eq, ew.ne, ew.add]
COMPARE = [ew.lt, ew.le, ew.eq, ew.ne]


@pytest.fixture(autouse=True)
def fusion_on(monkeypatch, tmp_path_factory):
    monkeypatch.setattr(fusion, "ENABLED", True)
    cache = tmp_path_factory.getbasetemp() / "fusion-cache"
    monkeypatch.setattr(fusion, "cache_dir", lambda: str(cache))


def with_free_lists(program: list[Instr], keep: set[int], inputs: set[int]) -> list[Instr]:
    """Free every slot that is neither kept nor an input after its last use."""
    last: dict[int, int] = {}
    for k, instr in enumerate(program):
        for s in (*instr.ins, *instr.outs):
            last[s] = k
    frees: list[list[int]] = [[] for _ in program]
    for s, k in last.items():
        if s not in keep and s not in inputs:
            frees[k].append(s)
    return [instr._replace(free=tuple(f)) for instr, f in zip(program, frees)]


def check_free_lists(program: list[Instr], keep: set[int], inputs: set[int]) -> None:
    live = set(inputs)
    for instr in program:
        assert live.issuperset(instr.ins), f"{instr.parts or instr.app} reads a freed or missing slot"
        live.update(instr.outs)
        assert not keep.intersection(instr.free)
        assert live.issuperset(instr.free)
        live.difference_update(instr.free)
    assert live.issuperset(keep)


def random_chain(seed: int, dt, n_ops: int = 14, device: str = "cpu") -> tuple[Builder, list[int], set[int]]:
    """A random straight-line program over one shape (``(5,)``; the kernels do not depend on it)
    mixing elementwise work of dtype ``dt`` with reductions that broadcast back (a fusion barrier)."""
    rng = np.random.default_rng(seed)
    b = Builder()
    shape = (5,)
    on = {} if device == "cpu" else {"device": device}  # ``full``'s device is a param
    inputs = [b.input(ShapeDtype(shape, dt, device)) for _ in range(3)]
    pool = list(inputs)
    preds: list[int] = []
    floats = dt.is_floating_point
    for _ in range(n_ops):
        pick = rng.integers(8)
        x, y = (pool[i] for i in rng.integers(len(pool), size=2))
        if pick == 0:
            full = b.emit(creation.full, shape=(), value=float(rng.integers(1, 4)), dtype=dt, **on)
            out = b.emit(structural.broadcast_in_dim, full, shape=shape, broadcast_dimensions=())
        elif pick == 1 and dt is not bool_:
            total = b.emit(reduce.reduce_sum, x, axes=(0,))
            out = b.emit(structural.broadcast_in_dim, total, shape=shape, broadcast_dimensions=())
        elif pick == 2:
            preds.append(b.emit(COMPARE[rng.integers(len(COMPARE))], x, y))
            continue
        elif pick == 3 and preds:
            out = b.emit(ew.select, preds[rng.integers(len(preds))], x, y)
        elif pick == 4 and dt is not bool_:
            other = {float32: float64, float64: float32, int32: float64, int64: int32, uint8: int8, int8: float32,
                     int16: uint8}[dt]
            out = b.emit(structural.convert_element_type, b.emit(structural.convert_element_type, x, new_dtype=other),
                         new_dtype=dt)
        elif pick == 5 and floats:
            out = b.emit(creation.full, shape=shape, value=0.25, dtype=dt, **on)
            out = b.emit(ew.mul, out, x)
        elif pick % 2 == 0 and dt is not bool_:
            unary = FLOAT_UNARY if floats else INT_UNARY
            out = b.emit(unary[rng.integers(len(unary))], x)
        else:
            binary = FLOAT_BINARY if floats else (INT_BINARY if dt is not bool_ else BOOL_BINARY)
            op = binary[rng.integers(len(binary))]
            out = b.emit(op, x, y)
            if b.avals[out].dtype is not dt:
                out = b.emit(ew.select, out, x, y)
        pool.append(out)
    keep = {pool[-1], *(int(s) for s in rng.choice(pool[3:], size=2))}
    return b, inputs, keep


def values(dt, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if dt is bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.is_floating_point:
        return rng.uniform(-3, 3, shape).astype(dt.np)
    if dt.itemsize < 4:  # the whole positive range: sums and products wrap, as PyTorch's do
        return rng.integers(1, np.iinfo(dt.np).max, shape, endpoint=True).astype(dt.np)
    return rng.integers(1, 5, shape).astype(dt.np)  # positive: floor_divide's zero check never fires


def run_both(program: list[Instr], fused: list[Instr], n_slots: int, inputs: dict[int, np.ndarray],
             keep: set[int], device: str = "cpu") -> None:
    results = []
    for prog in (program, fused):
        slots: list = [None] * n_slots
        for s, v in inputs.items():
            slots[s] = v if device == "cpu" else CudaArray.from_host(v)
        with np.errstate(all="ignore"):
            instructions.run(prog, slots)
        results.append([v.copy_to_host() if isinstance(v, CudaArray) else v for v in slots])
    for s in keep:
        assert results[1][s].dtype == results[0][s].dtype
        assert results[1][s].shape == results[0][s].shape
        np.testing.assert_array_equal(results[1][s], results[0][s])


@pytest.mark.parametrize("device", ["cpu", "cuda"])  # cuda: generated numba.cuda kernels (the simulator in CI)
@pytest.mark.parametrize("dt", [float32, float64, int64, int32, int16, int8, uint8, bool_], ids=lambda d: d.name)
@pytest.mark.parametrize("seed", [0, 1])
def test_random_chains_match_unfused(dt, seed: int, device: str) -> None:
    b, inputs, keep = random_chain(seed, dt, device=device)
    program = with_free_lists(b.program, keep, set(inputs))
    fused = fusion.fuse(program, keep)
    assert len(fused) < len(program)
    check_free_lists(fused, keep, set(inputs))
    for shape in [(5,), (0,), (3000,) if device == "cpu" else (300,)]:
        rng = np.random.default_rng(seed)
        at_shape = _reshaped(program, shape)
        fused = fusion.fuse(at_shape, keep)
        run_both(at_shape, fused, len(b.avals), {s: values(dt, shape, rng) for s in inputs}, keep, device)


def test_a_repeated_cuda_group_on_whole_operands_launches_prepared(monkeypatch) -> None:
    """A fused CUDA group run again on whole operands (C-contiguous, of the result's size) launches
    through a launch prepared once for that size (``Kernel.fixed``): the unfused program's values
    on each run, the launch prepared on the second run and reused after."""
    from tidu.backends.cuda import launch

    prepared = []
    fixed = launch.Kernel.fixed
    monkeypatch.setattr(launch.Kernel, "fixed", lambda self, *a: prepared.append(a[0]) or fixed(self, *a))
    b = Builder()
    x, y = (b.input(ShapeDtype((300,), float32, "cuda")) for _ in range(2))
    out = b.emit(ew.tanh, b.emit(ew.mul, b.emit(ew.exp, x), y))  # no add after a multiply: no FMA to tell apart
    fused = fusion.fuse(b.program, {out})
    assert len(fused) == 1
    rng = np.random.default_rng(4)
    for run in range(3):
        run_both(b.program, fused, len(b.avals), {x: values(float32, (300,), rng), y: values(float32, (300,), rng)},
                 {out}, "cuda")
        assert prepared == ([] if run == 0 else [300])


def _reshaped(program: list[Instr], shape: tuple[int, ...]) -> list[Instr]:
    """``program`` rebuilt for ``shape`` (every (5,) becomes ``shape``)."""
    b = Builder()
    b.avals = [None] * (1 + max(s for instr in program for s in (*instr.ins, *instr.outs)))
    for instr in program:
        for s in instr.ins:
            if b.avals[s] is None:
                b.avals[s] = ShapeDtype(shape, _input_dtype(program, s), instr.app.in_avals[0].device)
        params = {k: (shape if k == "shape" and v == (5,) else v) for k, v in instr.app.params}
        out = b.emit(instr.app.prim, *instr.ins, **params)
        b.program[-1] = b.program[-1]._replace(outs=instr.outs, free=instr.free)
        b.avals[instr.outs[0]] = b.avals[out]
    return b.program


def _input_dtype(program: list[Instr], slot: int):  # noqa: ANN202
    for instr in program:
        if slot in instr.ins:
            return instr.app.in_avals[instr.ins.index(slot)].dtype
    raise AssertionError(slot)


@pytest.mark.parametrize("dt", [float32, float64, int32, int64, int16, int8, uint8, bool_], ids=lambda d: d.name)
def test_every_elementwise_primitive_fuses_exactly(dt) -> None:
    """One group per dtype holding every ``unary``/``binary`` primitive that takes it."""
    b = Builder()
    x, y = (b.input(ShapeDtype((7,), dt)) for _ in range(2))
    u = b.emit(ew.neg, x) if dt is not bool_ else b.emit(ew.eq, x, y)  # read by every member
    outs = set()
    for prim in REGISTRY.values():
        if getattr(prim, "scalar_fns", None) is None:
            continue
        unary = "float32" in prim.scalar_fns  # only unary primitives have a float32 variant
        try:
            outs.add(b.emit(prim, u, *(() if unary else (y,))))
        except (TypeError, RuntimeError):  # a dtype the primitive does not take (nothing emitted)
            continue
    fused = fusion.fuse(b.program, outs)
    assert len(fused) < len(b.program)
    rng = np.random.default_rng(3)
    run_both(b.program, fused, len(b.avals), {x: values(dt, (7,), rng), y: values(dt, (7,), rng)}, outs)


def test_zero_dim_group() -> None:
    b = Builder()
    x, y = (b.input(ShapeDtype((), float32)) for _ in range(2))
    out = b.emit(ew.tanh, b.emit(ew.add, b.emit(ew.mul, x, y), x))
    fused = fusion.fuse(b.program, {out})
    assert len(fused) == 1 and fused[0].outs == (out,)
    rng = np.random.default_rng(0)
    run_both(b.program, fused, len(b.avals), {x: values(float32, (), rng), y: values(float32, (), rng)}, {out})


def test_kept_intermediates_are_outputs_and_others_vanish() -> None:
    b = Builder()
    x = b.input(ShapeDtype((4,), float64))
    e = b.emit(ew.exp, x)
    t = b.emit(ew.tanh, e)
    out = b.emit(ew.mul, t, x)
    fused = fusion.fuse(b.program, {e, out})
    assert [f.outs for f in fused] == [(e, out)]
    assert [p.app.prim for p in fused[0].parts] == [ew.exp, ew.tanh, ew.mul]
    run_both(b.program, fused, len(b.avals), {x: np.linspace(-1, 1, 4)}, {e, out})


def test_values_read_outside_the_group_are_produced() -> None:
    b = Builder()
    x = b.input(ShapeDtype((6,), float32))
    e = b.emit(ew.exp, x)
    total = b.emit(reduce.reduce_sum, e, axes=(0,))  # reads e: not fusable, between the group's members
    back = b.emit(structural.broadcast_in_dim, total, shape=(6,), broadcast_dimensions=())
    out = b.emit(ew.div, b.emit(ew.sin, e), back)  # must not fuse with exp: reduce_sum sits between
    fused = fusion.fuse(b.program, {out})
    check_free_lists(fused, {out}, {x})
    run_both(b.program, fused, len(b.avals), {x: np.linspace(-1, 1, 6, dtype=np.float32)}, {out})


def test_environment_switch(monkeypatch) -> None:
    import importlib.util

    for value, enabled in (("0", False), ("1", True)):
        monkeypatch.setenv("TIDU_FUSION", value)
        spec = importlib.util.find_spec("tidu.backends.cpu.fusion")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.ENABLED is enabled


def test_groups_of_one_and_unfusable_work_stay() -> None:
    b = Builder()
    x, y = (b.input(ShapeDtype((4,), int64)) for _ in range(2))
    q = b.emit(ew.floor_divide, x, y)  # its integer kernel checks the divisor first: never fused
    s = b.emit(reduce.reduce_sum, b.emit(ew.neg, q), axes=(0,))
    fused = fusion.fuse(b.program, {s})
    assert [f.fn for f in fused] == [i.fn for i in b.program]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        instructions.run(fused, [np.arange(4), np.zeros(4, np.int64), None, None, None])


def test_switch_off_returns_program_unchanged(monkeypatch) -> None:
    b, _, slot = w3_chain(16)
    monkeypatch.setattr(fusion, "ENABLED", False)
    assert fusion.fuse(b.program, {slot["dx"]}) == b.program


def test_w3_backward_is_one_kernel_and_matches() -> None:
    b, forward, slot = w3_chain(1000)
    keep = {slot["dx"]}
    fused = fusion.fuse(b.program, keep)
    assert len(fused) == 1 and fused[0].outs == (slot["dx"],)
    rng = np.random.default_rng(0)
    x, w = (rng.uniform(-1, 1, 1000).astype(np.float32) for _ in range(2))
    slots: list = [None] * len(b.avals)
    slots[slot["x"]], slots[slot["w"]] = x, w
    instructions.run(forward, slots)
    inputs = {s: v for s, v in enumerate(slots) if v is not None} | {slot["seed"]: np.ones((), np.float32)}
    run_both(b.program, fused, len(b.avals), inputs, keep)


@pytest.mark.parametrize("n", [1000, 2 * (1 << 18) + 3], ids=["one-thread", "chunked"])
def test_a_one_element_operand_is_read_once_by_either_loop(n: int) -> None:
    """A seed other than one (a one-element operand, passed to the loop as its value): the
    one-thread loop and the chunked one compute what the unfused program does, and the
    gradient scales with the seed."""
    b, forward, slot = w3_chain(n)
    keep = {slot["dx"]}
    fused = fusion.fuse(b.program, keep)
    assert len(fused) == 1
    rng = np.random.default_rng(2)
    slots: list = [None] * len(b.avals)
    slots[slot["x"]], slots[slot["w"]] = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(2))
    instructions.run(forward, slots)
    inputs = {s: v for s, v in enumerate(slots) if v is not None}
    run_both(b.program, fused, len(b.avals), inputs | {slot["seed"]: np.array(2.5, np.float32)}, keep)
    dx = {}
    for seed in (1.0, 2.5):
        fused_slots = [None] * len(b.avals)
        for s, v in (inputs | {slot["seed"]: np.array(seed, np.float32)}).items():
            fused_slots[s] = v
        instructions.run(fused, fused_slots)
        dx[seed] = fused_slots[slot["dx"]]
    np.testing.assert_allclose(dx[2.5], 2.5 * dx[1.0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "row", "col", "one value", "strided"])
def test_a_fused_instruction_reads_operands_of_every_layout(layout: str) -> None:
    """A fused instruction's loop is called on C-contiguous operands as they are, and on others
    as ``layout_of`` says (in place, or copied first): the results are the unfused program's in
    every case, the operands are left unchanged, and the variant writing a result into given
    rows writes those rows only."""
    b = Builder()
    x, y = b.input(ShapeDtype((6, 5), float32)), b.input(ShapeDtype((6, 5), float32))
    s = b.emit(ew.tanh, b.emit(ew.mul, x, y))
    out = b.emit(ew.add, s, x)
    fused = fusion.fuse(b.program, {s, out})
    assert len(fused) == 1 and fused[0].app is None
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((6, 5)).astype(np.float32)
    other = {"contiguous": rng.standard_normal((6, 5)).astype(np.float32),
             "transposed": rng.standard_normal((5, 6)).astype(np.float32).T,
             "row": np.broadcast_to(rng.standard_normal(5).astype(np.float32), (6, 5)),
             "col": np.broadcast_to(rng.standard_normal((6, 1)).astype(np.float32), (6, 5)),
             "one value": np.broadcast_to(np.float32(0.75), (6, 5)),
             "strided": rng.standard_normal((6, 10)).astype(np.float32)[:, ::2]}[layout]
    assert other.flags.c_contiguous == (layout == "contiguous")
    before = other.copy()
    run_both(b.program, fused, len(b.avals), {x: dense, y: other}, {s, out})
    np.testing.assert_array_equal(other, before)
    values = [{x: dense, y: other}[i] for i in fused[0].ins]
    j = fused[0].outs.index(out)
    results = fused[0].fn(*values)
    np.testing.assert_allclose(results[j], np.tanh(dense * other) + dense, rtol=1e-6, atol=1e-6)
    # written into rows 6:12 of a given array (``stacking.stacks_in_place``), the rest untouched
    into = np.full((18, 5), np.nan, np.float32)
    placed = fused[0].fn.into_block(j, 6, 12)(*values, into)
    assert np.shares_memory(placed[j], into)
    for k, result in enumerate(results):
        np.testing.assert_array_equal(placed[k], result)
    np.testing.assert_array_equal(into[6:12], results[j])
    assert np.isnan(into[:6]).all() and np.isnan(into[12:]).all()


def test_large_arrays_run_chunked_on_threads() -> None:
    import tidu
    from tidu.backends.cpu import threads

    n = 2 * threads.PARALLEL_MIN + 3
    b = Builder()
    x = b.input(ShapeDtype((n,), float32))
    out = b.emit(ew.logistic, b.emit(ew.tanh, x))
    fused = fusion.fuse(b.program, {out})
    data = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    before = tidu.get_num_threads()
    try:
        tidu.set_num_threads(3)
        run_both(b.program, fused, len(b.avals), {x: data}, {out})
    finally:
        tidu.set_num_threads(before)


def test_no_cycle_through_an_outside_instruction() -> None:
    b = Builder()
    x = b.input(ShapeDtype((3,), float64))
    a = b.emit(ew.exp, x)
    m = b.emit(ew.neg, x)
    s = b.emit(reduce.reduce_sum, a, axes=(0,))
    back = b.emit(structural.broadcast_in_dim, s, shape=(3,), broadcast_dimensions=())
    out = b.emit(ew.add, b.emit(ew.mul, back, m), a)
    fused = fusion.fuse(b.program, {out})
    run_both(b.program, fused, len(b.avals), {x: np.arange(3.0)}, {out})


def test_no_cycle_through_another_group(monkeypatch) -> None:
    """h -> reduce_sum -> z1 and z2 -> h's consumer: z1 and z2 fused into one group Z (through
    z3) would make h's group and Z wait for each other if that consumer joined h's group."""
    sealed = fusion._group_sealed
    b = Builder()
    x = b.input(ShapeDtype((3,), float64))
    y0 = b.input(ShapeDtype((), float64))
    h = b.emit(ew.exp, x)
    z1 = b.emit(ew.neg, b.emit(reduce.reduce_sum, h, axes=(0,)))
    z2 = b.emit(ew.exp, y0)
    z3 = b.emit(ew.add, z1, z2)
    out = b.emit(ew.mul, h, b.emit(structural.broadcast_in_dim, z2, shape=(3,), broadcast_dimensions=()))
    keep = {out, z3}
    calls = []
    monkeypatch.setattr(fusion, "_group_sealed", lambda *a: calls.append(1) or sealed(*a))
    fused = fusion.fuse(b.program, keep)
    assert calls  # the greedy groups wait on each other here: fuse fell back to sealed groups
    check_free_lists(fused, keep, {x, y0})
    run_both(b.program, fused, len(b.avals), {x: np.arange(3.0), y0: np.array(0.5)}, keep)


@pytest.mark.parametrize("dt", [float32, int64, bool_], ids=lambda d: d.name)
def test_fused_programs_are_well_ordered(dt) -> None:
    for seed in range(100, 200):
        b, inputs, keep = random_chain(seed, dt, n_ops=30)
        check_free_lists(fusion.fuse(with_free_lists(b.program, keep, set(inputs)), keep), keep, set(inputs))


def test_unwritable_cache_dir_falls_back_to_temp(monkeypatch, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(fusion, "cache_dir", lambda: str(blocker / "fusion"))
    path = fusion._write("fused_test_fallback.py", "x = 1\n")
    assert os.path.dirname(path) != str(blocker / "fusion")
    with open(path) as f:
        assert f.read() == "x = 1\n"


@pytest.mark.slow
def test_second_process_loads_kernel_from_disk(tmp_path) -> None:
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {ROOT!r})
        from bench.fusion import w3_chain
        from tidu.backends.cpu import fusion
        fusion.cache_dir = lambda: {str(tmp_path)!r}
        b, forward, slot = w3_chain(8, "float64")
        fused = fusion.fuse(b.program, {{slot["dx"]}})
        import numpy as np
        fused[0].fn(*[np.ones(8)] * 3, np.ones(()))
        stats = [k.stats for k in fusion._kernels.values()]
        print(sum(sum(s.cache_hits.values()) for s in stats), sum(sum(s.cache_misses.values()) for s in stats))
    """)
    env = {**os.environ, "TIDU_FUSION": "1"}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.split() == ["0", "1"]  # compiled (a fresh cache directory)
    assert runs[1].stdout.split() == ["1", "0"]  # loaded from disk
