"""Fused elementwise groups on the GPU: one generated numba.cuda kernel per group.

The grouping and the per-element statements are the CPU pass's
(tidu/backends/cpu/fusion.py, ``loop_body``); here they become a grid-stride kernel
whose scalar functions are compiled as device functions, launched through ``Kernel``.
One-element operands stay on the device (read as ``s[0]`` in the kernel, never copied
to the host). One launch replaces a launch per member.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from ...core.instructions import Instr
from .copy import numba_name
from .elementwise import repeated
from .launch import Kernel, dense_like
from .memory import CudaArray
from .reduce import SIM_THREADS, block_threads

_loops: dict[str, Callable[..., None]] = {}  # source digest -> the kernel's Python function
_kernels: dict[tuple, Kernel] = {}  # (digest, dtypes) -> the compiled kernel


UNROLL = 4  # elements a thread per pass (tidu/backends/cuda/elementwise.py says why)


def _unrolled(reads: list[str], lines: list[str], stores: list[str]) -> list[str]:
    """The grid-stride loop's main part: ``UNROLL`` elements a thread per pass (``i``, ``i + s``,
    ...), every element's operands read before any is computed or stored; copy ``u`` of the
    per-element statements names its values ``x{k}_u``/``v{j}_u`` and its index ``i_u``."""

    def copy(line: str, u: int) -> str:
        line = re.sub(r"\b([xv]\d+)\b", rf"\1_{u}", line)
        return re.sub(r"\[i\b", f"[i_{u}", line)

    out = [f"    while i + {UNROLL - 1} * s < n:"]
    out += [f"        i_{u} = i + {u} * s" for u in range(UNROLL)]
    out += [copy(line, u) for line in reads for u in range(UNROLL)]
    out += [copy(line, u) for u in range(UNROLL) for line in (*lines, *stores)]
    out.append(f"        i += {UNROLL} * s")
    return out


def fused_into(parts: list[Instr], outs: list[int], along: dict[int, str] | None = None,
               total: int | None = None) -> tuple[Callable[..., None], Any]:
    """``(into, body)``: ``into(results, values)`` launches one kernel computing ``parts`` and
    storing the slots ``outs`` into the preallocated ``results``; ``values`` are the device
    arrays of the slots ``body.ins`` (the CPU generator's contract, ``fused_loop``, ``along``
    included: a ``"row"`` slot is read at the column, a ``"col"`` slot at the row).

    ``total``: a slot the parts compute, also summed (``reduce_sum`` of every axis) into a
    one-element result after ``outs``'s. The kernel is then one block, whose threads stride over
    the elements and fold their float64 totals in shared memory as the rows reduction does for
    one row (``reduce._monoid_rows``, with its block size): the same sum, bit for bit."""
    from ..cpu.fusion import ALONG_INDEX, loop_body

    along = along or {}

    body = loop_body(parts, outs, scalar="s{}[0]")
    summed = None if total is None else body.locals[total]  # the total's value (``v{j}``), stored only if held
    n_out, n_arr, n_sc, n_c = len(outs), len(body.arrays), len(body.scalars), len(body.consts)
    params = [*(f"o{k}" for k in range(n_out)), *(["osum"] if total is not None else []),
              *(f"a{k}" for k in range(n_arr)), *(f"s{k}" for k in range(n_sc)), *(f"c{k}" for k in range(n_c))]

    def loop_for(whole: tuple[bool, ...]) -> tuple[Callable[..., None], str]:
        """The kernel's Python function and digest: operand ``k`` read at ``i`` where ``whole[k]``
        (an array of the result's size), at ``i % p{k}`` where it repeats (a broadcast)."""
        reads = [f"        x{k} = a{k}[{ALONG_INDEX.get(along.get(slot, ''), 'i' if whole[k] else f'i % p{k}')}]"
                 for k, slot in enumerate(body.arrays)]
        element = [*(["        r = i // cols", "        c = i - r * cols"] if along else []), *reads, *body.lines,
                   *body.stores]
        if summed is None:
            loop_lines = [
                "    s = cuda.gridsize(1)",
                "    i = cuda.grid(1)",
                *([] if along else _unrolled(reads, body.lines, body.stores)),
                "    while i < n:",
                *element,
                "        i += s",
            ]
        else:  # one block: reduce._monoid_rows's order (its threads, its tree)
            loop_lines = [
                "    sh = cuda.shared.array(BLOCK, float64)",
                "    tid = cuda.threadIdx.x",
                "    bd = cuda.blockDim.x",
                "    acc = 0.0",
                "    i = tid",
                "    while i < n:",
                *element,
                f"        acc = acc + {summed}",
                "        i += bd",
                "    sh[tid] = acc",
                "    cuda.syncthreads()",
                "    fold(sh, tid, bd)",
                "    if tid == 0:",
                "        osum[0] = sh[0]",
            ]
        source = "\n".join([
            "# generated by tidu.backends.cuda.fusion",
            "import numpy as np",
            "from numba import cuda",
            *(["from numba import float64", "from tidu.backends.cuda.reduce import BLOCK, TREES",
               "fold = TREES['sum']"] if summed is not None else []),
            *body.imports,
            *(f"{alias} = cuda.jit(device=True)({alias})" for alias in body.functions),
            "",
            "",
            f"def loop(n, cols, {', '.join([*params, *(f'p{k}' for k in range(n_arr))])}):",
            *loop_lines,
            "",
        ])
        digest = hashlib.sha256((source + repr(body.tokens)).encode()).hexdigest()[:20]
        loop = _loops.get(digest)
        if loop is None:
            namespace: dict[str, Any] = {}
            exec(compile(source, f"<tidu fused kernel {digest}>", "exec"), namespace)  # noqa: S102 - our own source
            loop = _loops[digest] = namespace["loop"]
        return loop, digest

    ins = body.ins
    array_at = [ins.index(s) for s in body.arrays]
    scalar_at = [ins.index(s) for s in body.scalars]
    consts = [c.item() for c in body.consts]
    const_types = [numba_name(c.dtype) for c in body.consts]

    operands = list(zip(body.arrays, array_at))
    by_dtypes: dict[tuple, Kernel] = {}  # this group's kernels by operand dtypes and whole operands
    # the launch where every array operand is whole (C-contiguous, the result's size), once met:
    # (kernel, the operands' positions in ``values``, their dtypes, whether each must be whole,
    # its launches prepared by size: ``Kernel.fixed``)
    whole_launch: list[Any] = [None]

    # every stored (and the summed) value's shape
    shape = next(p.app.out_avals[0].shape for p in parts if p.outs[0] == (outs[0] if outs else total))
    size = math.prod(shape)
    threads = block_threads(size) if total is not None else 0

    def into(results: Sequence[CudaArray], values: Sequence[CudaArray]) -> None:
        n = size
        if not n:
            if total is not None:  # pragma: no cover - a queued sum has SUM_MIN elements or more
                raise RuntimeError("internal error: an empty fused sum")
            return
        known = whole_launch[0]
        if known is not None:
            kernel, at, expected, whole_at, by_size = known
            args = [values[k] for k in at]
            for v, dtype, whole in zip(args, expected, whole_at):
                if v.dtype is not dtype or whole and (v.size != n or not v.is_c_contiguous):
                    break
            else:
                launch = by_size.get(n)
                if launch is None:  # the launch of this size prepared once: only pointers packed a call
                    if len(by_size) >= 64:
                        by_size.clear()
                    flat = [dense_like((n if whole else 1,), dtype) for dtype, whole in zip(expected, whole_at)]
                    stores = [dense_like((n if k < n_out else 1,), r.dtype) for k, r in enumerate(results)]
                    if total is None:
                        launch = kernel.fixed(n, n, 1, *stores, *flat, *consts, *[n] * n_arr)
                    else:
                        launch = kernel.fixed_shaped(1, threads, n, 1, *stores, *flat, *consts, *[n] * n_arr)
                    by_size[n] = launch
                launch(*results, *args)
                return
        cols = shape[-1] if shape else 1
        arrays, periods = [], []
        for slot, k in operands:  # broadcast operands are read in place
            v = values[k]
            kind = along.get(slot) if along else None
            if kind is None:
                vector, period = (v, v.size) if v.is_c_contiguous else repeated(v)  # element i at i % period
            else:
                period = cols if kind == "row" else (n // cols if cols else 0)
                vector = v.view((period,), (v.dtype.itemsize,))
            arrays.append(vector)
            periods.append(period or 1)
        scalars = [values[k] for k in scalar_at]
        # a 64-bit remainder a read costs the loop its bandwidth: whole arrays are read at i
        whole = tuple(p == n for p in periods)
        dtypes = (*(a.dtype for a in arrays), *(s.dtype for s in scalars), *whole)
        kernel = by_dtypes.get(dtypes)
        if kernel is None:
            loop, digest = loop_for(whole)
            key = (digest, *dtypes)
            kernel = _kernels.get(key)
            if kernel is None:
                sig = ", ".join(["int64", "int64", *(f"{numba_name(r.dtype)}[::1]" for r in results),
                                 *(f"{numba_name(a.dtype)}[::1]" for a in arrays),
                                 *(f"{numba_name(s.dtype)}[::1]" for s in scalars), *const_types,
                                 *(["int64"] * len(arrays))])
                kernel = _kernels[key] = Kernel(loop, f"void({sig})",
                                                **({} if total is None else {"sim_threads": SIM_THREADS}))
            by_dtypes[dtypes] = kernel
            if not along and all(whole):
                at = [*array_at, *scalar_at]
                whole_launch[0] = (kernel, at, [values[k].dtype for k in at], [True] * n_arr + [False] * n_sc, {})
        if total is None:
            kernel(n, n, cols or 1, *results, *arrays, *scalars, *consts, *periods)
        else:
            kernel.launch(1, threads, n, cols or 1, *results, *arrays, *scalars, *consts, *periods)

    return into, body

