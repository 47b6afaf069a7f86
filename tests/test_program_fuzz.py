"""Random programs against PyTorch: deferral, groups, the compiled backward and their caches.

Each program is a seeded list of instructions over a register file of square tensors: elementwise
ops (deferred and fused), reductions broadcast back, products, views, ``where``, detaching,
``no_grad`` work, in-place writes (which may make a later backward fail, as in PyTorch),
``retain_grad``, and a loss that is backpropagated (once, twice, term by term with gradients, for
some leaves only, or with ``create_graph``), differentiated twice, or given to ``autograd.grad``. It runs for
``STEPS`` steps on the same leaves, so a structure is seen often enough to be fused and its
backward step reused, while the values change (an SGD update, or gradients accumulated).

Every step compares, with PyTorch's: the loss, each leaf's ``.grad``, each retained gradient and
every register; where PyTorch raises, tidu must raise the same class at the same instruction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.backends.layout import storage
from tidu.core import deferred, dispatch, programs

N = 4  # every register is (N, N): transposes, products and broadcasts keep the shape
STEPS = 4  # a queue's structure fuses on its third flush (deferred.FUSE_AFTER)
LEAVES = 3
LARGE = 1e3  # a step whose values reach this is not compared (nor are later ones)
# how a step ends, with its odds: loss.backward(); the loss differentiated twice (a gradient with
# create_graph, then the backward of a loss of it); the backward of the loss's terms with their
# weights as gradients; loss.backward(retain_graph=True) then loss.backward(); autograd.grad of
# the loss in every leaf, allow_unused; loss.backward(inputs=[the first two leaves]);
# loss.backward(create_graph=True)
ENDS = {"backward": 0.3, "double": 0.15, "vector": 0.1, "twice": 0.1, "grad": 0.15, "inputs": 0.1, "create": 0.1}
TOL = {"float64": {"rtol": 1e-9, "atol": 1e-12}, "float32": {"rtol": 2e-4, "atol": 1e-5}}

UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "tanh": lambda lib, x: lib.tanh(x),
    "sin": lambda lib, x: lib.sin(x),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "relu": lambda lib, x: lib.relu(x),
    "exp_tanh": lambda lib, x: lib.exp(lib.tanh(x)),
    "neg": lambda lib, x: -x,
    "square": lambda lib, x: x * x,
    "t": lambda lib, x: x.t(),
    "reshape": lambda lib, x: x.reshape(-1).reshape(N, N),
    "row_mean": lambda lib, x: x - x.mean(1, keepdim=True),
    "col_sum": lambda lib, x: x * x.sum(0, keepdim=True),
    "clone": lambda lib, x: x.clone(),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, dim=1),
    "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, dim=0),
    "clamp": lambda lib, x: lib.clamp(x, -0.5, 0.5),
    "pow": lambda lib, x: (x * x + 0.5) ** 1.5,
    "all_sum": lambda lib, x: x * x.sum(),
    "expand": lambda lib, x: x[2].expand(N, N) * x,
    "max_dim": lambda lib, x: x.max(1, keepdim=True)[0] * x,
    "amax": lambda lib, x: x - x.amax(0, keepdim=True),
    # a sum of 48 values (above deferred.SUM_MIN): the GPU queues it in its input's loop, and the
    # 0-d work reading it is queued after it
    "norm_scale": lambda lib, x: x / ((x.repeat(3, 1) * x.repeat(3, 1)).sum() + 1.0).sqrt(),
    "flip": lambda lib, x: x.flip(0),
    "roll": lambda lib, x: x.roll(1, 1),
    "std": lambda lib, x: x * x.std(1, keepdim=True),
    "var": lambda lib, x: x + x.var(0, keepdim=True),
    "logsumexp": lambda lib, x: x - x.logsumexp(1, keepdim=True),
    "norm": lambda lib, x: x / (1.0 + x.norm()),
    "cumsum": lambda lib, x: x.cumsum(1),
    "prod": lambda lib, x: x * x.prod(0, keepdim=True),
    "mean_all": lambda lib, x: x - x.mean(),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (N,)),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "gelu_tanh": lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "sqrt": lambda lib, x: (x * x + 0.1).sqrt(),
    "rsqrt": lambda lib, x: (x * x + 0.1).rsqrt(),
    "log": lambda lib, x: (x * x + 0.5).log(),
    "log1p": lambda lib, x: (x * x).log1p(),
    "expm1": lambda lib, x: lib.expm1(x),
    "erf": lambda lib, x: lib.erf(x),
    "erfc": lambda lib, x: lib.erfc(x),
    "erfinv": lambda lib, x: lib.erfinv(lib.tanh(x) * 0.9),
    "lgamma": lambda lib, x: (x * x + 0.5).lgamma(),
    # no digamma: its gradient, PyTorch's trigamma, is off by up to 5e-10 in float64 (tidu's agrees
    # with mpmath), past this test's tolerance; tests/ops/test_special.py compares it at 1e-9
    "cumprod": lambda lib, x: x.cumprod(1),
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 0),
    "cummax": lambda lib, x: lib.cummax(x, 1).values,
    "reciprocal": lambda lib, x: (x * x + 0.5).reciprocal(),
    "cos": lambda lib, x: lib.cos(x),
    "abs": lambda lib, x: x.abs() * x,
    "floor": lambda lib, x: x + lib.floor(x * 3) * 0.1,
    "pow_int": lambda lib, x: x**3,
    "rpow": lambda lib, x: 2.0**x,
    "lerp": lambda lib, x: lib.lerp(x, x * 0.5, 0.3),
    "tril": lambda lib, x: x.tril(),
    "triu": lambda lib, x: x.triu(1),
    "gather": lambda lib, x: x.gather(1, lib.tensor([[1, 0, 3, 2]] * N, device=x.device)),
    "index_select": lambda lib, x: x.index_select(0, lib.tensor([3, 1, 1, 0], device=x.device)),
    "int_index": lambda lib, x: x[lib.tensor([2, 0, 1, 3], device=x.device)],
    "masked_fill": lambda lib, x: x.masked_fill(x > 0.3, 0.25),
    "step_slice": lambda lib, x: lib.cat([x[::2], x[1::2]], 0),
    "narrow": lambda lib, x: lib.cat([x.narrow(1, 0, 2), x.narrow(1, 2, 2)], 1),
    "chunk": lambda lib, x: lib.cat(list(reversed(x.chunk(2, 0))), 0),
    "unsqueeze": lambda lib, x: x.unsqueeze(0).squeeze(0) + x.unsqueeze(1).sum(1),
    "repeat": lambda lib, x: x[:2].repeat(2, 1),
    "mT": lambda lib, x: x.mT @ x,
    "einsum": lambda lib, x: lib.einsum("ij,jk->ik", x, x.t()),
    "bmm": lambda lib, x: lib.bmm(x.unsqueeze(0), x.unsqueeze(0)).squeeze(0),
    "softmax0": lambda lib, x: lib.softmax(x, 0),
    "mse": lambda lib, x: lib.nn.functional.mse_loss(x, x.t().detach()) * x,
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 0.5),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x * 4.0),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "normalize": lambda lib, x: lib.nn.functional.normalize(x, dim=1),
    "cosine": lambda lib, x: x * lib.nn.functional.cosine_similarity(x, x.flip(0), dim=1).unsqueeze(1),
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x.unsqueeze(0), 2).squeeze(0),
    "select": lambda lib, x: x * x.select(1, 2).unsqueeze(1),
    "unbind": lambda lib, x: lib.stack(x.unbind(0)[::-1]),
    "movedim": lambda lib, x: x.movedim(0, 1) * x,
    "interpolate": lambda lib, x: lib.nn.functional.interpolate(x[None, :, :2], size=N, mode="linear",
                                                                 align_corners=True)[0],
    "sinh": lambda lib, x: lib.sinh(x),
    "atan": lambda lib, x: lib.atan(x * 2.0),
    "asinh": lambda lib, x: lib.asinh(x * 3.0) * x,
    "logaddexp": lambda lib, x: lib.logaddexp(x, x.t()),
    "sort": lambda lib, x: x.sort(1, descending=True).values * x,
    "topk": lambda lib, x: lib.cat([x.topk(2, dim=0).values, x.topk(2, dim=0, largest=False).values], 0),
    "adaptive_pool": lambda lib, x: x - lib.nn.functional.adaptive_avg_pool1d(x[None], 3)[0].sum(1, keepdim=True),
    "diagonal": lambda lib, x: x * x.diagonal().unsqueeze(0),  # a view of the input
    "diag_embed": lambda lib, x: lib.diag_embed(x[0], 1)[:N, 1:] + x,
    "trace": lambda lib, x: x * lib.trace(x),
    "tile": lambda lib, x: x[:2].tile((2, 1)),
    "repeat_interleave": lambda lib, x: x[1:3].repeat_interleave(2, dim=0),
    "rot90": lambda lib, x: lib.rot90(x, 1),
    "diff": lambda lib, x: lib.diff(x, 1, 1, prepend=x[:, :1]),
    "masked_select": lambda lib, x: x * lib.masked_select(x, x > 0).sum(),
    "take_along": lambda lib, x: lib.take_along_dim(x, lib.tensor([[2], [0], [3], [1]], device=x.device), 1) * x,
    "unfold": lambda lib, x: x.unfold(1, 2, 2).sum(-1).repeat_interleave(2, dim=1),
    "logit": lambda lib, x: lib.logit(lib.sigmoid(x)),
    "xlogy": lambda lib, x: lib.xlogy(x, x * x + 1.0),
    "sinc": lambda lib, x: lib.sinc(x),
    "cdist": lambda lib, x: lib.cdist(x, x.flip(0) + 0.5),
    "kron": lambda lib, x: lib.kron(x[:2, :2], x[2:, 2:]),
    "linalg_norm": lambda lib, x: x / (1.0 + lib.linalg.matrix_norm(x, 1)),
    "median": lambda lib, x: x - x.median(1, keepdim=True).values,
    "quantile": lambda lib, x: x * lib.quantile(x, 0.3, dim=0, keepdim=True),
    "nanmean": lambda lib, x: x - lib.nanmean(x, 1, keepdim=True),
    "inv": lambda lib, x: lib.linalg.inv(x + 4.0 * lib.eye(N, dtype=x.dtype, device=x.device)),
    "pixel_shuffle": lambda lib, x: lib.nn.functional.pixel_shuffle(x.reshape(1, 4, 2, 2), 2).reshape(N, N),
    "grid_sample": lambda lib, x: lib.nn.functional.grid_sample(
        x[None, None], lib.stack([x, x.t()], -1)[None].tanh() * 0.9, align_corners=True).reshape(N, N),
}
BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda lib, x, y: x + y,
    "sub": lambda lib, x, y: x - y,
    "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / (1.0 + y * y),
    "matmul": lambda lib, x, y: (x @ y) * 0.5,
    "maximum": lambda lib, x, y: lib.maximum(x, y + 0.25),  # offset: no ties when x is y
    "where": lambda lib, x, y: lib.where(x > y, x, y * 0.5),
    "row": lambda lib, x, y: x + y[1],  # a row broadcast over the other's rows
    "cat": lambda lib, x, y: lib.cat([x[:1], y[1:]], 0),
    "stack_sum": lambda lib, x, y: lib.stack([x, y]).sum(0),
    "minimum": lambda lib, x, y: lib.minimum(x, y - 0.25),
    "outer": lambda lib, x, y: lib.outer(x[0], y[1]) + x,
    "lerp": lambda lib, x, y: lib.lerp(x, y, 0.25),
    "pow": lambda lib, x, y: (x * x + 0.5) ** (y * 0.5),
    "scatter_add": lambda lib, x, y: x.scatter_add(1, lib.tensor([[0, 1, 1, 3]] * N, device=x.device), y),
    "setitem": lambda lib, x, y: _setitem(x, y),
    "cross_entropy": lambda lib, x, y: lib.nn.functional.cross_entropy(x, lib.tensor([0, 3, 1, 2], device=x.device)) * y,
    "bce_logits": lambda lib, x, y: lib.nn.functional.binary_cross_entropy_with_logits(x, lib.sigmoid(y.detach())) * y,
    "attention": lambda lib, x, y: lib.nn.functional.scaled_dot_product_attention(
        x.unsqueeze(0), y.unsqueeze(0), x.unsqueeze(0)).squeeze(0),
    "linear": lambda lib, x, y: lib.nn.functional.linear(x, y, y[0]),
    "where_mul": lambda lib, x, y: lib.where(y > 0, x * y, -x),
    "atan2": lambda lib, x, y: lib.atan2(x, y + 2.0),  # away from the origin
    "hypot": lambda lib, x, y: lib.hypot(x + 2.0, y),
    "scatter": lambda lib, x, y: x.scatter(0, lib.tensor([[1, 0, 3, 2]], device=x.device), y[:1]),
    "index_add": lambda lib, x, y: x.index_add(1, lib.tensor([3, 0], device=x.device), y[:, :2], alpha=0.5),
    "index_copy": lambda lib, x, y: x.index_copy(0, lib.tensor([2], device=x.device), y[3:]),
    "addcdiv": lambda lib, x, y: lib.addcdiv(x, y, x * x + 1.0, value=0.5),
    "addmm": lambda lib, x, y: lib.addmm(x, x, y, beta=0.5),
    "tensordot": lambda lib, x, y: lib.tensordot(x, y, ([1], [1])),
    "fmax": lambda lib, x, y: lib.fmax(x, y + 0.25),
    "hstack": lambda lib, x, y: lib.hstack([x[:, :1], y[:, 1:]]),
    "cross": lambda lib, x, y: lib.cat([lib.linalg.cross(x[:, :3], y[:, 1:]), x[:, 3:]], 1),
}
SCALAR: dict[str, Callable[[Any, float], Any]] = {
    "mul": lambda x, c: x * c,
    "add": lambda x, c: x + c,
    "rsub": lambda x, c: c - x,
    "div": lambda x, c: x / c,
}
INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "mul_": lambda x, y: x.mul_(y),
    "add_": lambda x, y: x.add_(y),
    "row_add_": lambda x, y: x[1].add_(y[0]),  # through a view: the base's graph is rewritten
    "view_view_add_": lambda x, y: x.view(2, 8)[1, ::2].add_(y[0]),  # through a view of a view
    "t_mul_": lambda x, y: x.t().mul_(y),
    "sub_scaled_": lambda x, y: x.sub_(y, alpha=0.5),
    "div_": lambda x, y: x.div_(y * y + 1.0),
    "clamp_": lambda x, y: x.clamp_(-0.5, 0.6),
    "setitem_": lambda x, y: x.__setitem__((slice(0, 2), 1), y[0, :2]),
    "mask_set_": lambda x, y: x.__setitem__(x > 0.5, 0.0),
    "copy_": lambda x, y: x.copy_(y),
    "zero_row_": lambda x, y: x[2].zero_(),
    "fill_column_": lambda x, y: x[:, 1].fill_(0.5),
    "iadd": lambda x, y: x.__iadd__(y),
}


DETACHING = {"mse", "bce_logits"}  # ops with a detached operand
_CUBES: dict = {}


def cube(lib: Any) -> Any:
    """``x ** 3`` as a custom ``autograd.Function`` of ``lib`` (its saved input version-checked)."""
    if lib not in _CUBES:

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return g * 3 * x * x

        _CUBES[lib] = Cube
    return _CUBES[lib]


def _setitem(x: Any, y: Any) -> Any:
    z = x.clone()
    z[1:3, ::2] = y[:2, :2]
    return z


def _shares_memory(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    return storage(a._buf) is storage(b._buf)


def make_program(seed: int) -> dict:
    """A random program: instructions and how its step ends."""
    rng = np.random.default_rng(seed)
    count = LEAVES + 1  # the leaves and a constant input
    instrs: list[tuple] = []
    def pick() -> int:  # a register that exists now
        return int(rng.integers(count))

    for _ in range(int(rng.integers(6, 16))):
        r = int(rng.integers(100))
        if r < 2:  # a value read on the host mid-program (a flush), scaling the next register
            instrs.append(("item", pick(), pick()))
        elif r < 4:  # an op whose saved values pass through saved-tensor hooks
            instrs.append(("saved_hooks", str(rng.choice(list(BINARY))), pick(), pick()))
        elif r < 5:  # a leaf scaled in place under no_grad mid-program, as an optimizer would
            instrs.append(("leaf_update", int(rng.integers(LEAVES))))
            continue
        elif r < 7:  # an op checkpointed (use_reentrant=False): its saved values recomputed in the backward
            instrs.append(("checkpoint", str(rng.choice(list(UNARY))), pick()))
        elif r < 30:
            instrs.append(("unary", str(rng.choice(list(UNARY))), pick()))
        elif r < 60:
            instrs.append(("binary", str(rng.choice(list(BINARY))), pick(), pick()))
        elif r < 72:
            instrs.append(("scalar", str(rng.choice(list(SCALAR))), pick(), float(rng.choice([0.5, 2.0, -1.5]))))
        elif r < 77:
            instrs.append(("detach", pick()))
        elif r < 80:
            instrs.append(("no_grad", str(rng.choice(list(BINARY))), pick(), pick()))
        elif r < 81:  # grad mode switched back on inside no_grad
            instrs.append(("enable_grad", str(rng.choice(list(BINARY))), pick(), pick()))
        elif r < 82:
            instrs.append(("function", pick()))  # a custom autograd.Function
        elif r < 89:  # written in place: the register keeps its tensor, which now holds the result
            instrs.append(("inplace", str(rng.choice(list(INPLACE))), int(rng.integers(LEAVES, count)), pick()))
            continue
        elif r < 93:
            if rng.integers(2):  # on a temporary, gone before the backward: the hook must still run
                instrs.append(("hook_temp", pick(), bool(rng.integers(2))))
            else:
                instrs.append(("hook", pick()))
                continue
        elif r < 96:
            instrs.append(("leaf", pick()))  # detached, then a leaf of its own
        else:
            instrs.append(("retain", pick()))
            continue
        count += 1
    return {
        "instrs": instrs,
        "loss": [int(i) for i in rng.choice(count, size=min(count, 3), replace=False)],
        "end": str(rng.choice(list(ENDS), p=list(ENDS.values()))),
        "update": bool(rng.integers(2)),  # an SGD step between steps, else gradients accumulate
        "dtype": "float64" if rng.integers(4) else "float32",
        "data": rng.uniform(-1, 1, (LEAVES + 1 + 4, N, N)),
        # the loss through elementwise work of one element (queued until the backward reads it)
        "squash": bool(rng.integers(2)),
    }


def squashed(lib: Any, program: dict, loss: Any) -> Any:
    """The program's loss, or ``4 tanh(loss / 4)`` where the program squashes it: then the loss
    is queued work whose backward reads its saved output."""
    return lib.tanh(loss * 0.25) * 4.0 if program.get("squash") else loss


class Run:
    """One library's run of a program: leaves kept across steps, the result of each step."""

    def __init__(self, lib: Any, program: dict, device: str = "cpu") -> None:
        self.lib, self.program = lib, program
        dt = getattr(lib, program["dtype"])
        data = program["data"]
        self.leaves = [lib.tensor(data[i], dtype=dt, requires_grad=True, device=device) for i in range(LEAVES)]
        self.const = lib.tensor(data[LEAVES], dtype=dt, device=device)
        self.weights = [lib.tensor(data[LEAVES + 1 + k], dtype=dt, device=device) for k in range(3)]
        self.v = lib.tensor(data[-1], dtype=dt, device=device)

    def step(self) -> dict:
        """Run the program once: what it produced, or where and what it raised."""
        lib, program = self.lib, self.program
        regs = [*self.leaves, self.const]
        retained: list[Any] = []
        at = "loss"
        try:
            for at, instr in enumerate(program["instrs"]):  # noqa: B007 - ``at`` names the failing one
                regs_append = self._run(instr, regs, retained)
                if regs_append is not None:
                    regs.append(regs_append)
            at = "loss"
            loss = squashed(lib, program, sum((regs[i] * self.weights[k]).sum() for k, i in enumerate(program["loss"])))
            if not loss.requires_grad:
                return self._result(regs, retained, loss, None)
            at = "backward"
            end, given = program["end"], None
            if end == "double":
                (g,) = lib.autograd.grad(loss, self.leaves[0], create_graph=True)
                # every leaf in the second loss: PyTorch's gradient of relu(x) (say) requires grad,
                # with a zero derivative in x, where tidu's is a constant (docs/guides/pytorch-differences.md)
                ((g * self.v).sum() + sum((p * p).sum() for p in self.leaves)).backward()
            elif end == "vector":
                lib.autograd.backward([regs[i] for i in program["loss"]], self.weights[:len(program["loss"])])
            elif end == "twice":
                loss.backward(retain_graph=True)
                self._unalias(retained)
                loss.backward()
            elif end == "grad":
                given = lib.autograd.grad(loss, self.leaves, allow_unused=True)
            elif end == "inputs":
                loss.backward(inputs=self.leaves[:2])
            elif end == "create":
                loss.backward(create_graph=True)
            else:
                loss.backward()
            self._unalias(retained)
            result = self._result(regs, retained, loss, given)
            at = "update"
            self._update()
            return result
        except RuntimeError as e:
            return {"raised": (at, type(e).__name__), "message": str(e)}

    def _unalias(self, retained: list) -> None:
        """PyTorch 2.13 may store one buffer as two leaves' ``.grad`` (the rows of a stacked sum's
        broadcast gradient), so the next backward accumulates into both twice: its gradients are
        copied apart after each backward."""
        if self.lib is torch:
            for t in [*self.leaves, *retained]:
                if t.grad is not None:
                    t.grad = t.grad.clone()

    def _run(self, instr: tuple, regs: list, retained: list) -> Any:
        lib = self.lib
        kind = instr[0]
        if kind == "unary":
            return UNARY[instr[1]](lib, regs[instr[2]])
        if kind == "binary":
            return BINARY[instr[1]](lib, regs[instr[2]], regs[instr[3]])
        if kind == "scalar":
            return SCALAR[instr[1]](regs[instr[2]], instr[3])
        if kind == "detach":
            return regs[instr[1]].detach()
        if kind == "no_grad":
            with lib.no_grad():
                return BINARY[instr[1]](lib, regs[instr[2]], regs[instr[3]])
        if kind == "enable_grad":
            with lib.no_grad(), lib.enable_grad():
                return BINARY[instr[1]](lib, regs[instr[2]], regs[instr[3]])
        if kind == "function":
            return cube(lib).apply(regs[instr[1]])
        if kind == "inplace":
            target, source = regs[instr[2]], regs[instr[3]]
            # PyTorch refuses a write that reads what it writes (tidu reads it first), and fails
            # x.mul_(x) at backward (it saved the written x; tidu keeps the original)
            if _shares_memory(target, source):
                source = source.clone()
            INPLACE[instr[1]](target, source)
            return None
        if kind == "retain":
            t = regs[instr[1]]
            if t.requires_grad:
                t.retain_grad()
                retained.append(t)
            return None
        if kind == "hook":
            t = regs[instr[1]]
            if t.requires_grad:
                t.register_hook(lambda g: g * 2.0)
            return None
        if kind == "hook_temp":  # on a product, or on a view of the register
            t = regs[instr[1]].reshape(2, 2 * N) if instr[2] else regs[instr[1]] * 1.0
            if t.requires_grad:
                t.register_hook(lambda g: g * 2.0)
            return t.reshape(N, N) * 1.5
        if kind == "saved_hooks":
            with lib.autograd.graph.saved_tensors_hooks(lambda t: (t,), lambda packed: packed[0]):
                return BINARY[instr[1]](lib, regs[instr[2]], regs[instr[3]])
        if kind == "leaf_update":  # a value saved from the leaf now fails the backward, in both
            with lib.no_grad():
                self.leaves[instr[1]].mul_(0.75)
            return None
        if kind == "checkpoint":
            op = UNARY[instr[1]]
            return lib.utils.checkpoint.checkpoint(lambda t: op(lib, t), regs[instr[2]], use_reentrant=False)
        if kind == "item":
            return regs[instr[2]] * math.tanh(regs[instr[1]].sum().item())
        if kind == "leaf":
            t = regs[instr[1]].detach().clone().requires_grad_()
            retained.append(t)  # its .grad is compared with the retained gradients
            return t
        raise AssertionError(kind)

    def _result(self, regs: list, retained: list, loss: Any, given: Any) -> dict:
        """What a step produced; ``given``: the gradients ``autograd.grad`` returned, compared in
        place of the leaves' ``.grad``."""
        def arr(t: Any) -> Any:
            return None if t is None else t.detach().cpu().numpy().copy()

        return {
            "loss": arr(loss),
            "grads": [arr(g) for g in given] if given is not None else [arr(p.grad) for p in self.leaves],
            "retained": [arr(t.grad) for t in retained],
            "regs": [arr(t) for t in regs],
            "requires_grad": [t.requires_grad for t in regs],
        }

    def _update(self) -> None:
        if not self.program["update"]:
            return  # the next step's gradients accumulate into these
        with self.lib.no_grad():
            for p in self.leaves:
                if p.grad is not None:
                    p -= 0.1 * p.grad
                    p.grad = None


def check(seed: int, device: str = "cpu") -> None:
    """Program ``seed`` in tidu (on ``device``) against PyTorch (on the CPU)."""
    program = make_program(seed)
    runs = Run(tidu, program, device), Run(torch, program)
    tol = TOL[program["dtype"]]
    for step in range(STEPS):
        got, want = runs[0].step(), runs[1].step()
        where = f"program {seed}, step {step}: {program['instrs']}"
        if "raised" in want and "raised" not in got and "in-place" in want["message"].replace("inplace", "in-place"):
            # an in-place write PyTorch refuses and tidu differentiates (it keeps what the backward
            # reads: x.t().mul_(y) on a view of a no-grad base, a value saved before a write)
            if step == 0:
                check_by_differences(program, got, where)
            return
        if "raised" in want or "raised" in got:
            assert got.get("raised") == want.get("raised"), (
                f"{where}\ntidu: {got.get('raised')} {got.get('message', '')}\n"
                f"torch: {want.get('raised')} {want.get('message', '')}")
            return  # a failed backward leaves both graphs in states not worth comparing further
        if max(np.abs(r).max() for r in want["regs"]) > LARGE:
            return  # updates blew values up: rounding differences now decide sin(x) and the like
        assert got["requires_grad"] == want["requires_grad"], where
        for name in ("loss", "grads", "retained", "regs"):
            a, b = got[name], want[name]
            if name == "loss":
                a, b = [a], [b]
            assert len(a) == len(b), f"{where}: {name}"
            for k, (x, y) in enumerate(zip(a, b)):
                assert (x is None) == (y is None), f"{where}: {name}[{k}] is {x} in tidu, {y} in torch"
                if x is not None:
                    np.testing.assert_allclose(x, y, **tol, err_msg=f"{where}: {name}[{k}]")


def check_by_differences(program: dict, got: dict, where: str) -> None:
    """tidu's first step against central differences of PyTorch's forward (float64, no grad),
    where PyTorch's backward refuses the program: the leaves' gradients of the loss. Not checked
    where a gradient is not the derivative of the values: a program with hooks, a detached value
    (differences see through it), or differentiated twice."""
    if program["end"] in ("double", "twice", "inputs") or any(
            instr[0] in ("hook", "hook_temp", "detach", "no_grad", "leaf", "leaf_update") or instr[1] in DETACHING for instr in program["instrs"]):
        return
    def loss_at(data: np.ndarray) -> float:
        run = Run(torch, {**program, "dtype": "float64", "data": data})
        with torch.no_grad():
            regs, retained = [*run.leaves, run.const], []
            for instr in program["instrs"]:
                value = run._run(instr, regs, retained)
                if value is not None:
                    regs.append(value)
            return float(squashed(torch, program, sum((regs[i] * run.weights[k]).sum()
                                                      for k, i in enumerate(program["loss"]))))

    eps = 1e-6 if program["dtype"] == "float64" else 1e-4
    for leaf, grad in enumerate(got["grads"]):
        numeric = np.zeros((N, N))
        for i in np.ndindex(N, N):
            up, down = program["data"].copy(), program["data"].copy()
            up[(leaf, *i)] += eps
            down[(leaf, *i)] -= eps
            numeric[i] = (loss_at(up) - loss_at(down)) / (2 * eps)
        if grad is None:
            grad = np.zeros((N, N))
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-5 if program["dtype"] == "float64" else 2e-3,
                                   err_msg=f"{where}: grads[{leaf}] against central differences")


@pytest.fixture(params=["cached", "uncached"])
def machinery(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """With deferral, groups and the compiled backward on (whatever the environment says), and
    with all three off: the same programs must give the same results."""
    on = request.param == "cached"
    monkeypatch.setattr(deferred, "ENABLED", on)
    monkeypatch.setattr(programs, "ENABLED", on)
    monkeypatch.setattr(dispatch, "GROUPED", on)
    return request.param


# PyTorch's advice on backward(create_graph=True) (the "create" end), not a finding
CREATE_GRAPH_ADVICE = "ignore:Using backward\\(\\) with create_graph=True:UserWarning"


@pytest.mark.filterwarnings(CREATE_GRAPH_ADVICE)
@pytest.mark.parametrize("seed", range(40))
def test_random_program_matches_torch(seed: int, machinery: str) -> None:
    check(seed)


@pytest.mark.filterwarnings(CREATE_GRAPH_ADVICE)
@pytest.mark.parametrize("seed", range(3))
def test_random_program_on_cuda_matches_torch(seed: int) -> None:
    """A few programs on the CUDA device (the simulator in CI; on a GPU, ``main`` runs many)."""
    check(seed, "cuda")


def main(argv: list[str]) -> int:
    """``python tests/test_program_fuzz.py FIRST LAST [cpu|cuda] [on|off|both]``: programs
    FIRST..LAST-1 with the machinery on, off or both; prints each failure, returns how many."""
    first, last = int(argv[0]), int(argv[1])
    device = argv[2] if len(argv) > 2 else "cpu"
    modes = {"on": [True], "off": [False], "both": [True, False]}[argv[3] if len(argv) > 3 else "both"]
    failures = 0
    for on in modes:
        deferred.ENABLED = programs.ENABLED = dispatch.GROUPED = on
        for seed in range(first, last):
            try:
                check(seed, device)
            except AssertionError as e:
                failures += 1
                print(f"FAIL (machinery {'on' if on else 'off'}) {e}", flush=True)
        print(f"{last - first} programs on {device}, machinery {'on' if on else 'off'}: {failures} failed so far")
    return failures


if __name__ == "__main__":
    import sys

    sys.exit(1 if main(sys.argv[1:]) else 0)
