"""Tests of ``tidu.nn`` against PyTorch; the helpers below copy a torch module's weights into
the matching tidu module and compare forward values and every gradient."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import tidu

TOL = {"float32": {"rtol": 1e-4, "atol": 1e-5}, "float64": {"rtol": 1e-10, "atol": 1e-12}}
DTYPES = {"float32": (tidu.float32, torch.float32), "float64": (tidu.float64, torch.float64)}


def to_tidu(t: torch.Tensor) -> tidu.Tensor:
    return tidu.tensor(t.detach().numpy().copy())


def copy_weights(src: torch.nn.Module, dst: tidu.nn.Module) -> None:
    """Load ``src``'s state dict into ``dst`` (the keys must match exactly)."""
    dst.load_state_dict({k: to_tidu(v) for k, v in src.state_dict().items()})


def close(out: Any, ref: Any, dtype: str, what: str = "output") -> None:
    assert isinstance(out, tidu.Tensor), f"{what}: got {type(out).__name__}"
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
    assert str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1], f"{what}: {out.dtype} vs {ref.dtype}"
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), err_msg=what, equal_nan=True,
                               **TOL[dtype])


def check_module(
    make_torch: Callable[[], torch.nn.Module],
    make_tidu: Callable[[], tidu.nn.Module],
    inputs: Sequence[Any],
    dtype: str = "float32",
    *,
    seed: int = 0,
    train: bool = True,
    call: Callable[[Any, list], Any] | None = None,
) -> tuple[tidu.nn.Module, torch.nn.Module]:
    """Same weights, same inputs: outputs, parameter gradients and input gradients agree.

    ``inputs`` holds shapes (float inputs that get gradients) or ready numpy arrays (used as is,
    e.g. integer indices). ``call(module, args)`` overrides ``module(*args)``; it returns the
    output tensor (or a tuple whose first item is compared and differentiated).
    """
    torch.manual_seed(seed)
    ref_mod = make_torch().to(DTYPES[dtype][1])
    mod = make_tidu().to(DTYPES[dtype][0])
    assert list(mod.state_dict()) == list(ref_mod.state_dict()), "state_dict keys differ from torch's"
    copy_weights(ref_mod, mod)
    mod.train(train)
    ref_mod.train(train)
    rng = np.random.default_rng(seed)
    data = [rng.uniform(-1.5, 1.5, size=s).astype(dtype) if isinstance(s, tuple) else s for s in inputs]
    args = [tidu.tensor(d, requires_grad=d.dtype.kind == "f") for d in data]
    ref_args = [torch.tensor(d, requires_grad=d.dtype.kind == "f") for d in data]
    call = call or (lambda m, a: m(*a))
    out, ref = call(mod, args), call(ref_mod, ref_args)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    for i, (o, r) in enumerate(zip(outs, refs)):
        if r is None:
            assert o is None, f"output {i}: torch gives None"
            continue
        close(o, r, dtype, what=f"output {i}")
    w = rng.uniform(-1, 1, size=tuple(refs[0].shape)).astype(dtype)
    (outs[0] * tidu.tensor(w)).sum().backward()
    (refs[0] * torch.tensor(w)).sum().backward()
    params = dict(mod.named_parameters())
    for name, p in ref_mod.named_parameters():
        if p.grad is None:
            assert params[name].grad is None, f"grad of {name}: torch has none"
            continue
        assert params[name].grad is not None, f"grad of {name}: missing"
        close(params[name].grad, p.grad, dtype, what=f"grad of {name}")
    for i, (a, r) in enumerate(zip(args, ref_args)):
        if r.requires_grad:
            assert a.grad is not None, f"grad of input {i}: missing"
            close(a.grad, r.grad, dtype, what=f"grad of input {i}")
    return mod, ref_mod
