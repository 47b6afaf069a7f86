"""tidu.save / tidu.load: round trips, interop with the safetensors package, and bad files."""

import collections
import io
import math

import numpy as np
import pytest
import safetensors.torch
import torch

import tidu


def round_trip(obj, tmp_path=None):
    if tmp_path is None:
        buffer = io.BytesIO()
        tidu.save(obj, buffer)
        buffer.seek(0)
        return tidu.load(buffer)
    path = tmp_path / "obj.safetensors"
    tidu.save(obj, path)
    return tidu.load(str(path))


def assert_same_tensor(a, b):
    assert isinstance(b, tidu.Tensor)
    assert a.dtype is b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("make", [
    lambda: tidu.randn(3, 4),
    lambda: tidu.randn(3, 4, dtype=tidu.float64),
    lambda: tidu.tensor([[1, -2], [3, 4]], dtype=tidu.int32),
    lambda: tidu.tensor([1, 2**40]),
    lambda: tidu.tensor([True, False]),
    lambda: tidu.tensor(2.5),
    lambda: tidu.zeros(0, 3),
    lambda: tidu.randn(4, 3).t(),
    lambda: tidu.randn(2, 2, requires_grad=True),
], ids=["f32", "f64", "i32", "i64", "bool", "0d", "empty", "noncontiguous", "requires_grad"])
def test_tensor_round_trip(make, tmp_path):
    t = make()
    assert_same_tensor(t, round_trip(t, tmp_path))
    loaded = round_trip(t)
    assert_same_tensor(t, loaded)
    assert loaded.is_leaf and loaded.detach().numpy().flags.writeable


def test_nested_structures_round_trip():
    shared = tidu.ones(2)
    obj = {
        "model": collections.OrderedDict([("fc.weight", tidu.randn(2, 3)), ("fc.bias", shared)]),
        1: [shared, None, True, "text", 3, 0.1, math.inf, (1, (2.5, "x"))],
        (2, "tuple-key"): {"nan": math.nan, "dtype": tidu.float64},
        "array": np.arange(6, dtype=np.uint8).reshape(2, 3),
        "scalar": np.float32(1.5),
        "empty": {},
    }
    back = round_trip(obj)
    assert list(back) == ["model", 1, (2, "tuple-key"), "array", "scalar", "empty"]
    assert type(back["model"]) is collections.OrderedDict and list(back["model"]) == ["fc.weight", "fc.bias"]
    assert_same_tensor(obj["model"]["fc.weight"], back["model"]["fc.weight"])
    assert back[1][0] is back["model"]["fc.bias"]  # one object saved twice stays one object
    assert back[1][1:] == [None, True, "text", 3, 0.1, math.inf, (1, (2.5, "x"))]
    assert type(back[1][5]) is float and type(back[1][4]) is int
    assert math.isnan(back[(2, "tuple-key")]["nan"]) and back[(2, "tuple-key")]["dtype"] is tidu.float64
    np.testing.assert_array_equal(back["array"], obj["array"])
    assert back["array"].dtype == np.uint8
    assert back["scalar"] == np.float32(1.5) and type(back["scalar"]) is np.float32
    assert back["empty"] == {}


def test_the_python_values_torch_load_accepts_round_trip_as_in_pytorch(tmp_path):
    """Sets, complex numbers, bytes and ``Size`` come back as themselves, as from PyTorch's
    ``save``/``load`` (weights-only; a frozenset is refused, by tidu's save and PyTorch's load)."""
    def saved(lib):
        obj = {"set": {1, "a"}, "c": 1 - 2j, "bytes": b"\x00ab", "size": lib.ones(2, 3).shape,
               "nested": ({3, 4}, [b"z"])}
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(obj, path)
        return lib.load(path)

    ours, theirs = saved(tidu), saved(torch)
    for key in theirs:
        assert ours[key] == theirs[key] and type(ours[key]).__name__ == type(theirs[key]).__name__, key
    assert type(ours["nested"][0]) is set
    with pytest.raises(TypeError, match="frozenset"):
        tidu.save({"f": frozenset()}, io.BytesIO())


@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.1, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9))])
def test_optimizer_state_dict_round_trip_resumes(name, kwargs, tmp_path):
    w = tidu.randn(3, requires_grad=True, dtype=tidu.float64)
    opt = getattr(tidu.optim, name)([w], **kwargs)
    for _ in range(3):
        w.grad = tidu.ones(3, dtype=tidu.float64)
        opt.step()
    tidu.save({"w": w, "opt": opt.state_dict()}, tmp_path / "ckpt.safetensors")
    ckpt = tidu.load(tmp_path / "ckpt.safetensors")
    w2 = ckpt["w"]
    opt2 = getattr(tidu.optim, name)([w2], lr=1.0)
    opt2.load_state_dict(ckpt["opt"])
    assert ckpt["opt"]["param_groups"] == opt.state_dict()["param_groups"]
    for o, p in ((opt, w), (opt2, w2)):
        p.grad = tidu.ones(3, dtype=tidu.float64)
        o.step()
    assert_same_tensor(w, w2)


def test_files_are_plain_safetensors_both_ways(tmp_path):
    state = {"fc.weight": tidu.randn(2, 3), "fc.bias": tidu.zeros(2, dtype=tidu.float64)}
    tidu.save(state, tmp_path / "ours.safetensors")
    theirs = safetensors.torch.load_file(tmp_path / "ours.safetensors")
    assert sorted(theirs) == sorted(state)
    for k, v in state.items():
        np.testing.assert_array_equal(theirs[k].numpy(), v.numpy())
    safetensors.torch.save_file({"a": torch.arange(4, dtype=torch.int32), "b": torch.ones(2, 2)},
                                tmp_path / "foreign.safetensors")
    foreign = tidu.load(tmp_path / "foreign.safetensors")
    assert sorted(foreign) == ["a", "b"]
    assert foreign["a"].dtype is tidu.int32 and foreign["a"].tolist() == [0, 1, 2, 3]
    assert foreign["b"].dtype is tidu.float32


def _blob(obj):
    buffer = io.BytesIO()
    tidu.save(obj, buffer)
    return buffer.getvalue()


class _Exploit:
    def __reduce__(self):
        return (open, ("/tmp/tidu_load_must_not_run_this", "w"))


@pytest.mark.parametrize("data,match", [
    (b"", "fewer than the 8-byte header length"),
    (b"\x00" * 3, "fewer than the 8-byte"),
    (_blob({"w": tidu.ones(100)})[:-40], "truncated"),
    (_blob({"w": tidu.ones(2)})[:30], "the header claims"),
    (b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!", "not JSON"),
    (b"\x04\x00\x00\x00\x00\x00\x00\x00[12]", "not a JSON object"),
    (b"hello world, this is a text file", "header claims"),
])
def test_corrupt_files_raise_runtime_error(data, match):
    with pytest.raises(RuntimeError, match=match):
        tidu.load(io.BytesIO(data))


def test_a_torch_pickle_is_refused_without_running_it(tmp_path):
    import os

    path = tmp_path / "exploit.pt"
    torch.save({"x": _Exploit()}, path)
    with pytest.raises(RuntimeError, match="PyTorch pickle"):
        tidu.load(path)
    assert not os.path.exists("/tmp/tidu_load_must_not_run_this")


def test_damaged_metadata_and_unsupported_objects():
    blob = bytearray(_blob({"w": tidu.ones(2)}))
    i = blob.index(b"__tensor__")
    blob[i : i + 10] = b"__tensxr__"
    with pytest.raises(RuntimeError, match="damaged tidu structure"):
        tidu.load(io.BytesIO(bytes(blob)))
    with pytest.raises(TypeError, match="cannot store an object of type builtins.object"):
        tidu.save({"a": object()}, io.BytesIO())
    with pytest.raises(TypeError, match="dict key of type frozenset"):
        tidu.save({frozenset(): 1}, io.BytesIO())


def test_foreign_dtype_is_a_clear_error():
    import safetensors.numpy

    blob = safetensors.numpy.save({"bits": np.zeros(2, np.uint16)})
    with pytest.raises(RuntimeError, match="tensor 'bits' in BytesIO has dtype uint16, which tidu does not support"):
        tidu.load(io.BytesIO(blob))


def test_a_counter_and_a_device_round_trip_so_multisteplr_resumes(tmp_path):
    """``MultiStepLR.milestones`` is a ``Counter``: loaded as a dict, ``step(epoch)`` failed."""
    opt = tidu.optim.SGD([tidu.nn.Parameter(tidu.ones(1))], lr=1.0)
    sched = tidu.optim.lr_scheduler.MultiStepLR(opt, [2, 4], 0.5)
    back = round_trip({"sched": sched.state_dict(), "device": tidu.device("cpu"), "c": collections.Counter({1: 2})})
    assert type(back["c"]) is collections.Counter and back["c"] == collections.Counter({1: 2})
    assert back["device"] == tidu.device("cpu")
    resumed = tidu.optim.lr_scheduler.MultiStepLR(opt, [1], 0.1)
    resumed.load_state_dict(back["sched"])
    with pytest.warns(UserWarning):
        resumed.step(4)
    assert opt.param_groups[0]["lr"] == 0.25
