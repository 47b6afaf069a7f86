"""What a tensor reports about itself (``tidu.ops.metadata``) against PyTorch."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_strides_offsets_and_sizes_match_torch(device: str) -> None:
    queries = [
        "x.stride()", "x.t().stride()", "x.stride(-1)", "x[1:, 1:].storage_offset()", "x.t()[1:].storage_offset()",
        "x.expand(2, 2, 3).stride()", "x[:, ::2].stride()", "x.unsqueeze(1).stride()", "x.nelement()", "x.ndimension()",
        "x.nbytes", "x.itemsize", "x.is_signed()", "L.tensor([True]).is_signed()", "L.is_tensor(x)", "L.is_tensor(1.0)",
        "L.is_floating_point(x)", "L.is_floating_point(L.arange(2))", "L.numel(x)", "x[1:].data_ptr() - x.data_ptr()",
        "L.arange(4, dtype=L.int32)[2:].storage_offset()",
    ]
    for query in queries:
        results = []
        for L, where in ((torch, "cpu"), (tidu, device)):  # noqa: N806 - the library
            x = L.arange(6.0, device=where).reshape(2, 3)  # noqa: F841 - read by the query
            results.append(eval(query))  # noqa: S307 - the queries above
        assert results[1] == results[0], query
    assert tidu.ones(1, device=device).get_device() == (-1 if device == "cpu" else 0)


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_can_cast_and_result_type_match_torch(a: str, b: str) -> None:
    assert tidu.can_cast(getattr(tidu, a), getattr(tidu, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))
    for shape_a, shape_b in [((2,), ()), ((), (2,)), ((), ()), ((2,), (2,))]:
        ours = tidu.result_type(tidu.ones(shape_a, dtype=getattr(tidu, a)), tidu.ones(shape_b, dtype=getattr(tidu, b)))
        ref = torch.result_type(torch.ones(shape_a, dtype=getattr(torch, a)), torch.ones(shape_b, dtype=getattr(torch, b)))
        assert str(ours).removeprefix("tidu.") == str(ref).removeprefix("torch."), (shape_a, shape_b)
    for number in (True, 300, 2.5):  # a Python number of a higher category only changes the result
        ours = tidu.result_type(tidu.ones(2, dtype=getattr(tidu, a)), number)
        assert str(ours).removeprefix("tidu.") == str(torch.result_type(torch.ones(2, dtype=getattr(torch, a)), number))\
            .removeprefix("torch.")


def test_finfo_and_iinfo_match_torch() -> None:
    for name in ("float32", "float64"):
        ours, ref = tidu.finfo(getattr(tidu, name)), torch.finfo(getattr(torch, name))
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(ours, field) == getattr(ref, field), (name, field)
        assert repr(ours) == repr(ref)
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        ours, ref = tidu.iinfo(getattr(tidu, name)), torch.iinfo(getattr(torch, name))
        assert (ours.bits, ours.max, ours.min, ours.dtype, repr(ours)) == (ref.bits, ref.max, ref.min, ref.dtype, repr(ref))
    assert tidu.finfo().eps == torch.finfo().eps  # the default dtype's
    for lib in (tidu, torch):
        with pytest.raises(TypeError, match="requires a floating point input type"):
            lib.finfo(lib.int64)
        with pytest.raises(TypeError, match="requires an integer input type"):
            lib.iinfo(lib.float32)
        with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
            lib.iinfo(lib.bool)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.is_nonzero(L.tensor([0.5])), lambda L: L.is_nonzero(L.tensor(0)), lambda L: L.tensor([[False]]).is_nonzero(),
    lambda L: L.is_same_size(L.zeros(2, 3), L.ones(2, 3)), lambda L: L.zeros(2).is_same_size(L.zeros(1, 2)),
    lambda L: L.is_signed(L.ones(1)), lambda L: L.is_signed(L.ones(1, dtype=L.bool)), lambda L: L.ones(1).is_signed(),
    lambda L: str(L.result_type(L.tensor([1, 2]), 1.0)), lambda L: str(L.result_type(2, 1.0)),
    lambda L: str(L.result_type(L.tensor([1], dtype=L.int32), L.tensor(1))),
    lambda L: str(L.result_type(L.tensor([True]), L.tensor([1.0], dtype=L.float64))),
    lambda L: [L.can_cast(a, b) for a in (L.bool, L.int32, L.int64, L.float32, L.float64)
               for b in (L.bool, L.int32, L.int64, L.float32, L.float64)],
    lambda L: (L.ones(2).is_cpu, L.ones(2).is_inference(), L.ones(2).output_nr),
])
def test_queries_match_torch(lib_fn: Any) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert (ours.removeprefix("tidu.") if isinstance(ours, str) else ours) == (
        ref.removeprefix("torch.") if isinstance(ref, str) else ref)


@pytest.mark.parametrize("call", [
    "L.is_nonzero(L.tensor([1, 2]))", "L.is_nonzero(L.tensor([]))", "L.is_same_size(L.ones(2), 2)",
])
def test_query_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_layout_and_backend_flags_are_false_as_for_a_dense_cpu_tensor() -> None:
    names = ["is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn", "is_mps", "is_xla",
             "is_xpu", "is_vulkan", "is_ipu", "is_maia", "is_mtia"]
    ours, ref = tidu.ones(2), torch.ones(2)
    assert [getattr(ours, n) for n in names] == [getattr(ref, n) for n in names] == [False] * len(names)
