"""``tidu.save`` / ``tidu.load``: tensors and nested containers in the safetensors format.

A file is an ordinary safetensors file: every tensor (and numpy array) in the object is one
named entry, named by its path in the object (``"fc.weight"``, ``"state.0.exp_avg"``), so
other safetensors readers see a flat state dict. The structure around the tensors (dicts with
any simple keys, lists, tuples, sets, numbers, strings, bytes, ``None``, ``requires_grad`` flags) is JSON in
the header's metadata under ``"tidu"``. Loading parses JSON and raw arrays only: it never
executes code (no pickle).
"""

from __future__ import annotations

import base64
import collections
import io
import json
import os
import struct
from typing import Any

import numpy as np
import safetensors.numpy

from .core import dtypes
from .core.device import device as Device
from .tensor import Size, Tensor

_FORMAT_KEY = "tidu"
_FORMAT_VERSION = 1


class _Writer:
    """Walks an object, collecting arrays under unique path names and building its JSON."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.seen: dict[int, dict[str, Any]] = {}

    def _name(self, path: str) -> str:
        name, k = path or "tensor", 1
        while name in self.arrays:
            name, k = f"{path}#{k}", k + 1
        return name

    def _array(self, obj: Any, path: str, ref: dict[str, Any]) -> dict[str, Any]:
        if id(obj) in self.seen:  # the same object twice (tied weights): stored once
            return self.seen[id(obj)]
        name = self._name(path)
        data = obj._data if isinstance(obj, Tensor) else obj
        self.arrays[name] = data if data.flags.c_contiguous else data.copy(order="C")
        ref = {**ref, "name": name}
        self.seen[id(obj)] = ref
        return ref

    def encode(self, obj: Any, path: str) -> Any:
        if isinstance(obj, Tensor):
            ref = {"__tensor__": True}
            if obj.requires_grad:
                ref["requires_grad"] = True
            if type(obj).__name__ == "Parameter":
                ref["parameter"] = True
            if obj.dtype is dtypes.bfloat16:  # stored as its uint16 bits (safetensors' numpy side has no BF16)
                ref["dtype"] = "bfloat16"
            return self._array(obj, path, ref)
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biuf":
                raise TypeError(f"tidu.save: cannot store a numpy array of dtype {obj.dtype} (at {path or 'top'!r})")
            return self._array(obj, path, {"__ndarray__": True})
        if isinstance(obj, np.generic):
            return {"__npscalar__": obj.item(), "dtype": obj.dtype.str}
        if obj is None or isinstance(obj, bool | int | float | str):
            return obj
        if isinstance(obj, complex):
            return {"__complex__": [obj.real, obj.imag]}
        if isinstance(obj, bytes):
            return {"__bytes__": base64.b64encode(obj).decode("ascii")}
        if type(obj) is set:  # (not a frozenset: PyTorch's weights-only load refuses those)
            return {"__set__": [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]}
        if isinstance(obj, dtypes.dtype):
            return {"__dtype__": obj.name}
        if type(obj) is Device:
            return {"__device__": str(obj)}
        if isinstance(obj, dict):
            tag = ("__counter__" if isinstance(obj, collections.Counter) else
                   "__odict__" if isinstance(obj, collections.OrderedDict) else "__dict__")
            items = []
            for key, value in obj.items():
                if not (key is None or isinstance(key, bool | int | float | str | tuple)):
                    raise TypeError(f"tidu.save: cannot store a dict key of type {type(key).__name__} (at {path!r})")
                items.append([self.encode(key, path), self.encode(value, _join(path, key))])
            node: dict[str, Any] = {tag: items}
            metadata = getattr(obj, "_metadata", None)  # a state dict's module versions (Module.state_dict)
            if isinstance(metadata, dict):
                node["metadata"] = self.encode(metadata, path + "#metadata")
            return node
        if isinstance(obj, Size):
            return {"__size__": list(obj)}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, _join(path, i)) for i, v in enumerate(obj)]
        raise TypeError(
            f"tidu.save: cannot store an object of type {type(obj).__module__}.{type(obj).__qualname__} "
            f"(at {path or 'top'!r}); supported: tensors, numpy arrays, dicts, lists, tuples, sets, str, "
            "bytes, int, float, complex, bool and None"
        )


def _join(path: str, key: Any) -> str:
    key = "_".join(map(str, key)) if isinstance(key, tuple) else str(key)
    return f"{path}.{key}" if path else key


def save(obj: Any, f: str | os.PathLike | io.IOBase) -> None:
    """Save ``obj`` (a tensor, a state dict, or nested dicts/lists/tuples of tensors, numpy arrays,
    numbers, strings and ``None``: an optimizer's ``state_dict()`` too) to ``f``, a path or a
    binary file object, in the safetensors format. Dtypes and ``requires_grad`` are kept.

    >>> import io, tidu
    >>> buffer = io.BytesIO()
    >>> tidu.save({"w": tidu.tensor([1.0, 2.0]), "step": 3, "shape": (2, 1)}, buffer)
    >>> _ = buffer.seek(0)
    >>> tidu.load(buffer)
    {'w': tensor([1., 2.]), 'step': 3, 'shape': (2, 1)}
    """
    writer = _Writer()
    structure = writer.encode(obj, "")
    metadata = {_FORMAT_KEY: json.dumps({"version": _FORMAT_VERSION, "object": structure})}
    blob = safetensors.numpy.save(writer.arrays, metadata=metadata)
    if isinstance(f, str | os.PathLike):
        with open(f, "wb") as out:
            out.write(blob)
    else:
        f.write(blob)


def _read(f: str | os.PathLike | io.IOBase) -> tuple[bytes, str]:
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as source:
            return source.read(), os.fspath(f)
    return f.read(), getattr(f, "name", type(f).__name__)


def _header(blob: bytes, where: str) -> dict[str, Any]:
    def corrupt(reason: str) -> RuntimeError:
        hint = ""
        if blob[:4] == b"PK\x03\x04" or blob[:2] == b"\x80\x02":
            hint = (" It looks like a PyTorch pickle (torch.save); tidu.load reads only safetensors files "
                    "and never unpickles.")
        return RuntimeError(f"tidu.load: {where} is not a valid safetensors file: {reason}.{hint}")

    if len(blob) < 8:
        raise corrupt(f"it has {len(blob)} bytes, fewer than the 8-byte header length")
    (size,) = struct.unpack("<Q", blob[:8])
    if size > len(blob) - 8:
        raise corrupt(f"the header claims {size} bytes but the file has {len(blob) - 8} after the length")
    try:
        header = json.loads(blob[8 : 8 + size])
    except (UnicodeDecodeError, ValueError) as e:
        raise corrupt(f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise corrupt("the header is not a JSON object")
    try:
        end = max((int(e["data_offsets"][1]) for key, e in header.items() if key != "__metadata__"), default=0)
    except (KeyError, TypeError, IndexError, ValueError):
        raise corrupt("a tensor entry of the header has no valid data_offsets") from None
    if 8 + size + end > len(blob):
        raise corrupt(f"it is truncated: the tensors need {end} bytes of data, the file has {len(blob) - 8 - size}")
    return header


def load(f: str | os.PathLike | io.IOBase, map_location: Any = None, weights_only: bool = True, **kwargs: Any) -> Any:
    """Load an object saved by ``tidu.save`` (or any safetensors file: then a dict of tensors).

    Loading never executes code. A file that is not valid safetensors (corrupt, truncated, a
    ``torch.save`` pickle, ...) raises ``RuntimeError`` saying why. ``map_location`` moves the
    tensors (``'cpu'`` or a device); ``weights_only`` is accepted for compatibility (loading is
    always weights-only).

    >>> import io, tidu
    >>> buffer = io.BytesIO()
    >>> tidu.save(tidu.tensor([[1, 2]], dtype=tidu.int32), buffer)
    >>> _ = buffer.seek(0)
    >>> tidu.load(buffer)
    tensor([[1, 2]], dtype=tidu.int32)
    """
    blob, where = _read(f)
    header = _header(blob, where)
    try:
        arrays = safetensors.numpy.load(blob)
    except Exception as e:  # noqa: BLE001 - the package's SafetensorError and numpy's errors alike
        raise RuntimeError(f"tidu.load: {where} is not a valid safetensors file: {e}") from None
    metadata = header.get("__metadata__") or {}
    if _FORMAT_KEY not in metadata:
        # a foreign safetensors file (a checkpoint of another library): its flat dict of tensors
        obj: Any = {name: _to_tensor(arrays[name], name, where) for name in header if name != "__metadata__"}
    else:
        try:
            saved = json.loads(metadata[_FORMAT_KEY])
            obj = _Reader(arrays, where).decode(saved["object"])
        except (ValueError, KeyError, TypeError, IndexError) as e:
            raise RuntimeError(f"tidu.load: {where} has a damaged tidu structure in its metadata ({e!r})") from None
    if map_location is not None and str(map_location) != "cpu":
        obj = _move(obj, map_location)
    return obj


def _to_tensor(array: np.ndarray, name: str, where: str, bfloat16: bool = False) -> Tensor:
    try:
        dtype = dtypes.bfloat16 if bfloat16 and array.dtype == np.uint16 else dtypes.from_numpy_dtype(array.dtype)
    except TypeError:
        raise RuntimeError(f"tidu.load: tensor {name!r} in {where} has dtype {array.dtype}, which tidu does not support") from None
    if not array.flags.writeable:
        array = array.copy()
    return Tensor(array, dtype)


class _Reader:
    """Rebuilds the saved object from its JSON, making each stored tensor once."""

    def __init__(self, arrays: dict[str, np.ndarray], where: str) -> None:
        self.arrays = arrays
        self.where = where
        self.made: dict[str, Tensor] = {}

    def tensor(self, node: dict[str, Any]) -> Tensor:
        name = node["name"]
        if name not in self.made:
            tensor = _to_tensor(self.arrays[name], name, self.where, node.get("dtype") == "bfloat16")
            if node.get("parameter"):
                from . import nn

                tensor = nn.Parameter(tensor, requires_grad=bool(node.get("requires_grad")))
            elif node.get("requires_grad"):
                tensor.requires_grad_(True)
            self.made[name] = tensor
        return self.made[name]

    def decode(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "__tensor__" in node:
            return self.tensor(node)
        if "__ndarray__" in node:
            return self.arrays[node["name"]]
        if "__npscalar__" in node:
            return np.dtype(node["dtype"]).type(node["__npscalar__"])
        if "__dtype__" in node:
            return dtypes.as_dtype(node["__dtype__"])
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        if "__size__" in node:
            return Size(node["__size__"])
        if "__complex__" in node:
            return complex(*node["__complex__"])
        if "__bytes__" in node:
            return base64.b64decode(node["__bytes__"])
        if "__set__" in node:
            return {self.decode(v) for v in node["__set__"]}
        if "__device__" in node:
            return Device(node["__device__"])
        for tag, cls in (("__dict__", dict), ("__odict__", collections.OrderedDict), ("__counter__", collections.Counter)):
            if tag in node:
                out = cls(dict((self.decode(k), self.decode(v)) for k, v in node[tag]))  # (a Counter takes a mapping)
                if "metadata" in node and cls is collections.OrderedDict:
                    out._metadata = self.decode(node["metadata"])
                return out
        raise ValueError(f"unknown node {sorted(node)}")


def _move(obj: Any, device: Any) -> Any:
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return type(obj)((k, _move(v, device)) for k, v in obj.items())
    if isinstance(obj, list | tuple):
        return type(obj)(_move(v, device) for v in obj)
    return obj
