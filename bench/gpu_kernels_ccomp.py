"""tidu's CUDA kernels for dot_general, conv, gather/scatter_add, pad, rev and concatenate on a GPU.

    python bench/gpu_kernels_ccomp.py     # checks, then timings; the table is printed last

Checks every kernel against the CPU kernel (numpy) on medium sizes and layouts, and the large
cases against PyTorch; then times, median over rounds with tidu's and PyTorch's streams
synchronized: matmul 4096^3 float32 through ``dot_general`` vs cuBLAS called directly
(``blas.gemm``; the issue asks for >= 90%) vs ``torch.matmul``, fp32 and TF32; a transposed
and a batched product; conv2d (32, 64, 56, 56) x (64, 64, 3, 3) forward and both backward
convolutions vs PyTorch (cuDNN, TF32 off), each by every method (im2col, folded, direct);
grouped and depthwise convolutions; gather and scatter_add over 1M rows; pad, rev and
concatenate; the per-call cost of small operations. Each section runs even when another
fails; the exit status is non-zero if any check failed. ``--smoke``: tiny sizes, no PyTorch,
for the simulator.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
from gputiming import median_per_call

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tidu.backends.cuda import blas, synchronize  # noqa: E402
from tidu.backends.cuda.memory import CudaArray  # noqa: E402
from tidu.primitives.conv import conv_general_dilated  # noqa: E402
from tidu.primitives.gather import gather, scatter_add  # noqa: E402
from tidu.primitives.linalg import dot_general  # noqa: E402
from tidu.primitives.slicing import pad  # noqa: E402
from tidu.primitives.structural import concatenate, rev  # noqa: E402

RNG = np.random.default_rng(0)
SMOKE = "--smoke" in sys.argv  # tiny sizes, no PyTorch, large sections only: runs on the CUDA simulator
ROWS: list[tuple[str, str, str, str]] = []  # (case, tidu, reference, ratio)
FAILURES: list[str] = []

try:
    import torch
except ImportError:  # the checks against numpy still run
    torch = None
if SMOKE:
    torch = None


def size(real: int, smoke: int) -> int:
    return smoke if SMOKE else real


def sync() -> None:
    synchronize()
    if torch is not None:
        torch.cuda.synchronize()


def median_ms(fn: Callable[[], Any], repeat: int = 10, rounds: int = 5) -> float:
    return median_per_call(fn, sync, repeat=repeat, rounds=rounds) * 1e3


def tt(a: CudaArray) -> Any:
    """The tidu array as a torch tensor (zero-copy)."""
    return torch.as_tensor(a, device="cuda")


def array(shape: tuple, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-9, 10, shape).astype(dtype)


def close(got: np.ndarray, want: np.ndarray, dtype: Any) -> bool:
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if np.dtype(dtype).kind != "f":
        return bool(np.array_equal(got, want))
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    scale = max(float(np.linalg.norm(want)), 1e-30)
    return bool(np.linalg.norm(got.astype(np.float64) - want) / scale < tol) if want.size else True


def check(name: str, prim: Any, *arrays: np.ndarray, cuda_params: dict | None = None, **params: Any) -> None:
    want = np.asarray(prim.impls["cpu"](*arrays, **params))
    got = prim.impls["cuda"](*[CudaArray.from_host(a) for a in arrays], **params, **(cuda_params or {}))
    ok = close(got.copy_to_host(), want, want.dtype)
    if not ok:
        FAILURES.append(name)
    print(f"  {name:<72}{'ok' if ok else 'MISMATCH'}")


def section(fn: Callable[[], None]) -> None:
    print(f"\n== {fn.__name__}")
    try:
        fn()
    except Exception:  # keep going: one broken section must not hide the others
        traceback.print_exc()
        FAILURES.append(f"{fn.__name__} raised")


SCALES = {"TFLOP/s": 1e12, "TOP/s": 1e12, "GB/s": 1e9}  # rates; "ms" and "us" are times


def row(case: str, tidu_ms: float, ref_ms: float | None, ref_name: str, unit: str = "ms",
        work: float | None = None) -> None:
    """A timing row; ``work`` (FLOP or bytes) turns times into a rate in ``unit``."""
    value = (lambda ms: work / (ms * 1e-3) / SCALES[unit]) if work else (lambda ms: ms)
    ref = "-" if ref_ms is None else f"{value(ref_ms):9.2f} {unit} ({ref_name})"
    ratio = "-" if ref_ms is None else f"{ref_ms / tidu_ms:5.2f}"
    ROWS.append((case, f"{value(tidu_ms):9.2f} {unit}", ref, ratio))


# --- checks on medium sizes against the CPU kernels -------------------------------------------
def check_dot_general() -> None:
    cases = [
        ((257, 129), (129, 65), (((1,), (0,)), ((), ()))),
        ((129, 257), (129, 65), (((0,), (0,)), ((), ()))),
        ((257, 129), (65, 129), (((1,), (1,)), ((), ()))),
        ((7, 33, 65), (7, 65, 17), (((2,), (1,)), ((0,), (0,)))),
        ((33, 7, 65), (65, 7, 17), (((2,), (0,)), ((1,), (1,)))),
        ((6, 9, 10, 11), (11, 10, 12), (((2, 3), (1, 0)), ((), ()))),
        ((1000,), (1000,), (((0,), (0,)), ((), ()))),
        ((0, 5), (5, 3), (((1,), (0,)), ((), ()))),
        ((5, 0), (0, 3), (((1,), (0,)), ((), ()))),
    ]
    for dtype in ("float32", "float64", "int32", "int64"):
        for sa, sb, dims in cases:
            check(f"dot_general {sa} x {sb} {dims} {dtype}", dot_general, array(sa, dtype), array(sb, dtype),
                  dimension_numbers=dims)


CONVS = [
    ((4, 8, 17, 19), (16, 8, 3, 3), dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                                         rhs_dilation=(1, 1), feature_group_count=1, flip=False)),
    ((4, 8, 17, 19), (12, 4, 3, 2), dict(window_strides=(2, 1), padding=((0, 2), (1, -1)), lhs_dilation=(2, 1),
                                         rhs_dilation=(1, 2), feature_group_count=2, flip=True)),
    ((2, 32, 15, 15), (32, 1, 3, 3), dict(window_strides=(2, 2), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                                          rhs_dilation=(1, 1), feature_group_count=32, flip=False)),
    ((3, 6, 50), (5, 6, 4), dict(window_strides=(3,), padding=((2, 1),), lhs_dilation=(2,), rhs_dilation=(2,),
                                 feature_group_count=1, flip=True)),
]


def check_conv() -> None:
    for dtype in ("float32", "float64"):
        for sx, sw, params in CONVS:
            for method in ("auto", "im2col", "folded", "direct"):
                check(f"conv {sx} * {sw} g={params['feature_group_count']} {method} {dtype}", conv_general_dilated,
                      array(sx, dtype), array(sw, dtype), cuda_params={"method": method}, **params)


def check_index_and_structural() -> None:
    for dtype in ("float32", "float64", "int32", "int64", "bool"):
        x = array((300, 40, 7), dtype)
        index = RNG.integers(0, 40, (300, 90, 5))
        check(f"gather (300, 40, 7) axis 1 {dtype}", gather, x, index, axis=1)
        if dtype != "bool":
            check(f"scatter_add (300, 40, 7) axis 1 {dtype}", scatter_add, x, index, array((300, 90, 6), dtype),
                  axis=1)
        check(f"pad {dtype}", pad, x, padding_config=((1, 2, 0), (0, 3, 2), (4, 0, 1)))
        check(f"rev {dtype}", rev, x, dimensions=(0, 2))
        check(f"concatenate {dtype}", concatenate, x, x[:, :5].copy(), x[:, :1].copy(), dimension=1)


# --- large: checks against PyTorch, and timings ------------------------------------------------
def bench_matmul() -> None:
    n = size(4096, 64)
    a = CudaArray.from_host(RNG.standard_normal((n, n)).astype(np.float32))
    b = CudaArray.from_host(RNG.standard_normal((n, n)).astype(np.float32))
    mm = dot_general.impls["cuda"]
    nn = (((1,), (0,)), ((), ()))
    flops = 2 * n**3
    for tf32 in (False, True):
        blas.matmul.allow_tf32 = tf32
        mode = "tf32" if tf32 else "fp32"
        out = mm(a, b, dimension_numbers=nn)
        if torch is not None:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            want = torch.matmul(tt(a), tt(b))
            sync()
            err = float(torch.linalg.norm(tt(out) - want) / torch.linalg.norm(want))
            ok = err < (2e-3 if tf32 else 1e-5)
            print(f"  matmul {n}^3 {mode} vs torch.matmul: rel err {err:.2e} {'ok' if ok else 'MISMATCH'}")
            if not ok:
                FAILURES.append(f"matmul {mode}")
        ours = median_ms(lambda: mm(a, b, dimension_numbers=nn))
        direct = median_ms(lambda: blas.gemm(a, b))
        ratio = direct / ours
        print(f"  dot_general / direct cuBLAS throughput ({mode}): {ratio:.3f} ({'PASS' if ratio >= 0.9 else 'FAIL'}"
              " against >= 0.90)")
        row(f"matmul {n}^3 {mode} dot_general", ours, direct, "cuBLAS direct", "TFLOP/s", flops)
        if torch is not None:
            ta, tb = tt(a), tt(b)
            row(f"matmul {n}^3 {mode} dot_general", ours, median_ms(lambda: torch.matmul(ta, tb)), "torch",  # noqa: B023
                "TFLOP/s", flops)
    blas.matmul.allow_tf32 = False
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
    tn = (((0,), (0,)), ((), ()))  # a^T @ b: read through cuBLAS's transpose flag, no copy
    row(f"matmul {n}^3 fp32 a^T b", median_ms(lambda: mm(a, b, dimension_numbers=tn)),
        median_ms(lambda: torch.matmul(tt(a).T, tt(b))) if torch is not None else None, "torch", "TFLOP/s",
        flops)
    bsz, m = size(64, 2), size(512, 8)
    x = CudaArray.from_host(RNG.standard_normal((bsz, m, m)).astype(np.float32))
    bmm = (((2,), (1,)), ((0,), (0,)))
    row(f"bmm ({bsz}, {m}, {m})^2 fp32", median_ms(lambda: mm(x, x, dimension_numbers=bmm)),
        median_ms(lambda: torch.bmm(tt(x), tt(x))) if torch is not None else None, "torch", "TFLOP/s",
        2 * bsz * m**3)
    k = size(1024, 20)
    ints = CudaArray.from_host(RNG.integers(-9, 10, (k, k)).astype(np.int32))
    row(f"matmul {k}^3 int32 (tiled kernel)", median_ms(lambda: mm(ints, ints, dimension_numbers=nn), repeat=3),
        None, "", "TOP/s", 2 * k**3)


def _conv_calls(x: np.ndarray, w: np.ndarray) -> list[tuple[str, tuple, dict]]:
    """The forward convolution and the two of its backward pass, recorded from tidu's CPU ops."""
    import tidu

    calls: list[tuple[tuple, dict]] = []
    cpu = conv_general_dilated.impls["cpu"]

    def recorder(*arrays: Any, **params: Any) -> Any:
        calls.append((tuple(np.array(a) for a in arrays), dict(params)))
        return cpu(*arrays, **params)

    conv_general_dilated.impls["cpu"] = recorder
    try:
        tx, tw = tidu.tensor(x, requires_grad=True), tidu.tensor(w, requires_grad=True)
        tidu.nn.functional.conv2d(tx, tw, padding=1).sum().backward()
    finally:
        conv_general_dilated.impls["cpu"] = cpu
    # the forward pass, then the transposes: w.r.t. the input reads the kernel flipped, w.r.t. the weight not
    names = ["forward"] + ["backward (input)" if params["flip"] else "backward (weight)" for _, params in calls[1:]]
    return [(name, *call) for name, call in zip(names, calls)]


def bench_conv() -> None:
    nb, c, hw = size(32, 2), size(64, 3), size(56, 5)
    x = RNG.standard_normal((nb, c, hw, hw)).astype(np.float32)
    w = RNG.standard_normal((c, c, 3, 3)).astype(np.float32)
    flops = 2 * nb * c * hw * hw * c * 9
    conv = conv_general_dilated.impls["cuda"]
    calls = _conv_calls(x, w)
    if torch is not None:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    tx, tw = CudaArray.from_host(x), CudaArray.from_host(w)
    grad = CudaArray.from_host(np.ones(x.shape, np.float32))
    f = torch.nn.functional if torch is not None else None
    refs = {
        "forward": lambda: f.conv2d(tt(tx), tt(tw), padding=1),
        "backward (input)": lambda: torch.nn.grad.conv2d_input(x.shape, tt(tw), tt(grad), padding=1),
        "backward (weight)": lambda: torch.nn.grad.conv2d_weight(tt(tx), w.shape, tt(grad), padding=1),
    }
    for name, arrays, params in calls:
        dev = [CudaArray.from_host(a) for a in arrays]
        got = conv(*dev, **params)
        want = np.asarray(conv_general_dilated.impls["cpu"](*arrays, **params))
        ok = close(got.copy_to_host(), want, np.float32)
        print(f"  conv2d {name} {arrays[0].shape} * {arrays[1].shape} vs CPU: {'ok' if ok else 'MISMATCH'}")
        if not ok:
            FAILURES.append(f"conv {name}")
        ref = median_ms(refs[name], repeat=5) if torch is not None else None
        for method in ("auto", "im2col", "folded", "direct"):
            ours = median_ms(lambda: conv(*dev, **params, method=method), repeat=5 if method != "direct" else 1,  # noqa: B023
                             rounds=5 if method != "direct" else 2)
            row(f"conv2d {x.shape}*{w.shape} {name} [{method}]", ours, ref, "torch", "TFLOP/s", flops)


def bench_grouped_conv() -> None:
    """Grouped (8 channels a group) and depthwise 3x3 convolutions, forward, every method."""
    nb, c, hw = size(32, 2), size(256, 4), size(28, 5)
    conv = conv_general_dilated.impls["cuda"]
    for groups in (c // 8 if c >= 8 else 1, c):
        x = CudaArray.from_host(RNG.standard_normal((nb, c, hw, hw)).astype(np.float32))
        w = CudaArray.from_host(RNG.standard_normal((c, c // groups, 3, 3)).astype(np.float32))
        params = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1), rhs_dilation=(1, 1),
                      feature_group_count=groups, flip=False)
        flops = 2 * nb * c * hw * hw * (c // groups) * 9
        ref = None
        if torch is not None:
            want = torch.nn.functional.conv2d(tt(x), tt(w), padding=1, groups=groups)
            got = conv(x, w, **params)
            sync()
            err = float(torch.linalg.norm(tt(got) - want) / torch.linalg.norm(want))
            print(f"  conv2d groups={groups} vs torch: rel err {err:.1e} {'ok' if err < 1e-5 else 'MISMATCH'}")
            if err >= 1e-5:
                FAILURES.append(f"conv groups={groups}")
            ref = median_ms(lambda: torch.nn.functional.conv2d(tt(x), tt(w), padding=1, groups=groups))  # noqa: B023
        for method in ("auto", "im2col", "folded", "direct"):
            ours = median_ms(lambda: conv(x, w, **params, method=method), repeat=3)  # noqa: B023
            row(f"conv2d {(nb, c, hw, hw)} groups={groups} [{method}]", ours, ref, "torch", "TFLOP/s", flops)


def bench_index() -> None:
    n, d = size(1 << 20, 64), size(32, 3)
    x = CudaArray.from_host(RNG.standard_normal((n, d)).astype(np.float32))
    hidx = RNG.integers(0, n, (n, d))
    idx = CudaArray.from_host(hidx)
    src = CudaArray.from_host(RNG.standard_normal((n, d)).astype(np.float32))
    g = gather.impls["cuda"](x, idx, axis=0)
    ok = np.array_equal(g.copy_to_host(), np.take_along_axis(x.copy_to_host(), hidx, 0))
    zeros = CudaArray.from_host(np.zeros((n, d), np.float32))
    s = scatter_add.impls["cuda"](zeros, idx, src, axis=0).copy_to_host()
    ref = np.zeros((n, d), np.float64)
    np.add.at(ref, (hidx, np.arange(d)[None, :]), src.copy_to_host().astype(np.float64))
    ok_s = bool(np.allclose(s, ref, rtol=1e-5, atol=1e-5))
    print(f"  gather 1M rows: {'ok' if ok else 'MISMATCH'}; scatter_add 1M rows: {'ok' if ok_s else 'MISMATCH'}")
    FAILURES.extend(name for name, good in (("gather 1M", ok), ("scatter_add 1M", ok_s)) if not good)
    moved = n * d * (4 + 8 + 4)  # read index and value, write the result
    ours = median_ms(lambda: gather.impls["cuda"](x, idx, axis=0))
    ref = median_ms(lambda: torch.gather(tt(x), 0, tt(idx))) if torch is not None else None
    row(f"gather ({n}, {d}) float32 axis 0", ours, ref, "torch", "GB/s", moved)
    ours = median_ms(lambda: scatter_add.impls["cuda"](zeros, idx, src, axis=0))
    ref = median_ms(lambda: tt(zeros).scatter_add(0, tt(idx), tt(src))) if torch is not None else None
    row(f"scatter_add ({n}, {d}) float32 axis 0", ours, ref, "torch", "GB/s", moved + n * d * 8)


def bench_structural() -> None:
    shape = (size(64, 2), size(256, 3), size(1024, 8))
    x = CudaArray.from_host(RNG.standard_normal(shape).astype(np.float32))
    moved = 2 * 4 * x.size
    cfg = ((0, 0, 0), (2, 2, 0), (3, 3, 0))
    ours = median_ms(lambda: pad.impls["cuda"](x, padding_config=cfg))
    ref = median_ms(lambda: torch.nn.functional.pad(tt(x), (3, 3, 2, 2))) if torch is not None else None
    row(f"pad {shape} float32", ours, ref, "torch", "GB/s", moved)
    ours = median_ms(lambda: rev.impls["cuda"](x, dimensions=(2,)))
    ref = median_ms(lambda: torch.flip(tt(x), (2,))) if torch is not None else None
    row(f"rev {shape} last dim float32", ours, ref, "torch", "GB/s", moved)
    ours = median_ms(lambda: concatenate.impls["cuda"](x, x, dimension=1))
    ref = median_ms(lambda: torch.cat([tt(x), tt(x)], 1)) if torch is not None else None
    row(f"concatenate 2 x {shape} dim 1 float32", ours, ref, "torch", "GB/s", 2 * moved)


def bench_small() -> None:
    """Per-call cost of small operations (launch overhead dominated), in microseconds."""
    us = lambda fn: median_ms(fn, repeat=size(200, 2), rounds=size(5, 1)) * 1e3  # noqa: E731
    a = CudaArray.from_host(RNG.standard_normal((64, 64)).astype(np.float32))
    x = CudaArray.from_host(RNG.standard_normal((8, 128)).astype(np.float32))
    idx = CudaArray.from_host(RNG.integers(0, 128, (8, 16)))
    img = CudaArray.from_host(RNG.standard_normal((1, 4, 8, 8)).astype(np.float32))
    ker = CudaArray.from_host(RNG.standard_normal((4, 4, 3, 3)).astype(np.float32))
    cp = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1), rhs_dilation=(1, 1),
              feature_group_count=1, flip=False)
    cases = [
        ("matmul 64x64x64", lambda: dot_general.impls["cuda"](a, a, dimension_numbers=(((1,), (0,)), ((), ()))),
         lambda: torch.matmul(tt(a), tt(a))),
        ("gather (8, 128) -> (8, 16)", lambda: gather.impls["cuda"](x, idx, axis=1),
         lambda: torch.gather(tt(x), 1, tt(idx))),
        ("scatter_add (8, 16) -> (8, 128)", lambda: scatter_add.impls["cuda"](x, idx, x, axis=1),
         lambda: tt(x).scatter_add(1, tt(idx), tt(x))),
        ("pad (8, 128) by 1", lambda: pad.impls["cuda"](x, padding_config=((1, 1, 0), (1, 1, 0))),
         lambda: torch.nn.functional.pad(tt(x), (1, 1, 1, 1))),
        ("rev (8, 128)", lambda: rev.impls["cuda"](x, dimensions=(1,)), lambda: torch.flip(tt(x), (1,))),
        ("concatenate 2 x (8, 128)", lambda: concatenate.impls["cuda"](x, x, dimension=0),
         lambda: torch.cat([tt(x), tt(x)])),
        ("conv2d (1, 4, 8, 8) * (4, 4, 3, 3)", lambda: conv_general_dilated.impls["cuda"](img, ker, **cp),
         lambda: torch.nn.functional.conv2d(tt(img), tt(ker), padding=1)),
    ]
    for name, ours, ref in cases:
        row(f"small: {name}", us(ours), us(ref) if torch is not None else None, "torch", "us")


def main() -> int:
    checks = () if SMOKE else (check_dot_general, check_conv, check_index_and_structural)
    for fn in (*checks, bench_matmul, bench_conv, bench_grouped_conv, bench_index, bench_structural, bench_small):
        section(fn)
    print(f"\n{'case':<64}{'tidu':>16}  {'reference':<34}{'ref/tidu time':>14}")
    for case, ours, ref, ratio in ROWS:
        print(f"{case:<64}{ours:>16}  {ref:<34}{ratio:>14}")
    print(f"\nchecks: {'all ok' if not FAILURES else 'FAILED: ' + ', '.join(FAILURES)}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
