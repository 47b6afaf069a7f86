"""``Tensor``: numpy storage, a dtype, a device, and autograd metadata.

A tensor that requires grad, or was computed from one while grad mode was on,
has an engine key and (unless it is a leaf) a ``Trace``: the recorded call
that produced it. Operators and methods are attached by ``tidu.ops``.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .core import dtypes
from .core import groups as _groups
from .core.aval import ShapeDtype, wrap_dim
from .core.deferred import PENDING as _PENDING
from .core.deferred import expose as _expose
from .core.deferred import flush as _flush
from .core.device import CPU
from .core.device import device as Device
from .core.grad_mode import _state as _grad_state
from .core.imports import module as _module
from .core.tape import fresh_key as _fresh_key


class VersionCounter:
    """Counts in-place writes to a storage; shared by a tensor and its views."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)

# Tensors with hooks or ``retain_grad``, by id: backward looks them up by their current key.
HOOKED: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
# The nodes (a group, for a grouped call's output) that made a hooked value: each keeps its
# tensors' hook dicts (``tensor_hooks``), so a hook lives as long as the node, not the tensor, as
# PyTorch's lives on grad_fn (``y = x * 2; y.register_hook(h); return y * 3``: ``h`` runs)
HOOK_NODES: weakref.WeakSet[Any] = weakref.WeakSet()
RETAINED: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
# Leaves with ``register_post_accumulate_grad_hook`` hooks, by id, and their hooks (by handle id)
POST_ACCUMULATE: weakref.WeakValueDictionary[int, Tensor] = weakref.WeakValueDictionary()
POST_ACCUMULATE_HOOKS: dict[int, dict[int, Any]] = {}
_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("hooks", "id")

    def __init__(self, hooks: dict[int, Any]) -> None:
        self.hooks = hooks
        self.id = next(_handle_ids)

    def remove(self) -> None:
        self.hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class ViewInfo:
    """How a view was made from its root base: ``fn(base)`` replays it with recorded ops.

    ``version`` is the storage version at which the view's place in the graph was last
    derived from the base; a write to the base after that makes it stale. ``no_grad``: the view
    (or a view it was made from, ``inherited``) was made with grad mode off, and refuses an
    in-place write with grad mode on that involves autograd (PyTorch's rule, ``inplace.assign_``).
    """

    __slots__ = ("base", "fn", "version", "no_grad")

    def __init__(self, base: Tensor, fn: Any, version: int, inherited: bool = False) -> None:
        self.base = base
        self.fn = fn
        self.version = version
        self.no_grad = inherited or not _grad_state.enabled


_NO_DATA: Any = object()  # ``Tensor()``: PyTorch's legacy empty tensor


class Tensor:
    """A multi-dimensional array that records operations for autodiff.

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "_buf", "_dtype", "_requires_grad", "_grad", "_key", "_trace", "_version",
        "_retains_grad", "_device", "_view", "_hooks", "__weakref__",
    )
    __array_priority__ = 1000

    def __init__(self, data: Any = _NO_DATA, dtype: Any = None, *size: Any, requires_grad: bool = False,
                 device: Any = CPU, _version: VersionCounter | None = None, **legacy: Any) -> None:
        # Two uses, told apart by the second argument: tidu's own ``Tensor(array, dtype)`` (a host
        # or CUDA array and a tidu dtype, positionally) wraps the array; anything else is
        # PyTorch's legacy constructor (``Tensor([1, 2])``, ``Tensor(2, 3)``), see tidu/legacy.py
        if dtype.__class__ is not dtypes.dtype:
            from .legacy import legacy_init

            legacy_init(self, data, dtype, size, requires_grad, device, _version, legacy)
            return
        self._buf = data
        self._dtype = dtype
        self._requires_grad = False
        self._grad: Tensor | None = None
        self._key: Any = None
        self._trace: Any = None
        self._version = _version if _version is not None else VersionCounter()
        self._retains_grad = False
        self._device = device
        self._view: ViewInfo | None = None
        self._hooks: dict[int, Any] | None = None
        if requires_grad:
            self.requires_grad = True

    @property
    def _data(self) -> Any:
        """The storage array, with any deferred work that writes it done (tidu/core/deferred.py);
        ``_buf`` is the same array for code that reads only its metadata."""
        if _PENDING:
            _flush()
        return self._buf

    @_data.setter
    def _data(self, array: Any) -> None:
        if _PENDING:
            _flush()
        self._buf = array

    # --- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._buf.shape)

    @property
    def dtype(self) -> dtypes.dtype:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._buf.ndim

    @property
    def aval(self) -> ShapeDtype:
        if self._device is CPU:
            return ShapeDtype(self._buf.shape, self._dtype)
        return ShapeDtype(self._buf.shape, self._dtype, self._device.type)

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    def dim(self) -> int:
        return self._buf.ndim

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._buf.shape)
        return self._buf.shape[wrap_dim(dim, self._buf.ndim)]

    def numel(self) -> int:
        return int(self._buf.size)

    def __len__(self) -> int:
        if self._buf.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._buf.shape[0]

    def _is_stale_view(self) -> bool:
        """A view whose base was written since its place in the graph was derived."""
        return self._view is not None and self._view.version != self._version.value

    @property
    def is_leaf(self) -> bool:
        if self._view is not None:
            self._refresh()
        return self._trace is None

    @property
    def grad_fn(self) -> Any:
        if self._view is not None:
            self._refresh()
        return self._trace

    def _refresh(self) -> None:
        """A view whose base was written in place since takes its new graph position (as the
        next op reading it would): PyTorch's view of a base that now requires grad does too."""
        view = self._view
        if view is not None and view.version != self._version.value:
            from .core import grad_mode
            from .core.dispatch import refresh_view

            if grad_mode.is_grad_enabled():
                refresh_view(self)

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient of a leaf (``None`` until a backward reaches it). Read on a
        non-leaf that does not ``retain_grad()``, it is ``None`` with PyTorch's warning."""
        grad = self._grad
        if grad is None and self._trace is not None and not self._retains_grad and not self.is_leaf:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._buf.shape != self._buf.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of size "
                    f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
            if value._dtype is not self._dtype:
                name = value.dtype.name
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{dtypes.C_TYPES.get(name, name)}' to a tensor with "
                    f"grad_dtype '{dtypes.TORCH_NAMES.get(self.dtype.name, self.dtype.name)}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype)."
                )
        self._grad = value

    @property
    def requires_grad(self) -> bool:
        if self._view is not None:
            self._refresh()
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if value and not self._dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not value and self._trace is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad``: every pass that differentiates it
        (``backward``, or ``autograd.grad`` with an input behind it) accumulates into it, as in
        PyTorch. Written in place, the tensor keeps retaining (its new value's gradient).

        >>> import tidu
        >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> y.retain_grad()
        >>> (y * y).sum().backward(retain_graph=True)
        >>> y.grad
        tensor([ 6., 12.])
        >>> _ = tidu.autograd.grad((y * y).sum(), x)  # a pass for x differentiates y too
        >>> y.grad
        tensor([12., 24.])
        """
        self._refresh()
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._trace is not None:
            self._retains_grad = True
            RETAINED[id(self)] = self

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.
        The hook belongs to the tensor's current value: written in place later, the tensor holds a
        new value, and the hook still sees the old one's gradient (PyTorch's rule). It lives as
        long as the call that made the value (PyTorch keeps it on ``grad_fn``), so it runs even
        when the tensor itself is gone by the backward.

        >>> import tidu
        >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 10)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([20., 40.])
        >>> h.remove()
        """
        self._refresh()
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._hooks is None:
            self._hooks = {}
        handle = RemovableHandle(self._hooks)
        # under this value's key: a later in-place write gives the tensor a new one, and the hook
        # keeps seeing the gradient of this value (PyTorch's rule)
        self._hooks[handle.id] = (self._ensure_key(), hook)
        HOOKED[id(self)] = self
        trace = self._trace
        if trace is not None:
            node = trace.group if trace.__class__ is _groups.GroupTrace else trace.node
            kept = getattr(node, "tensor_hooks", None)
            if kept is None:
                kept = node.tensor_hooks = []
                HOOK_NODES.add(node)
            if not any(hooks is self._hooks for hooks in kept):
                kept.append(self._hooks)
        return handle

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(tensor)`` after a backward pass has accumulated this leaf's ``.grad`` (an
        optimizer may step the parameter there, as in PyTorch's in-backward optimizers). Leaves only.

        >>> import tidu
        >>> w = tidu.tensor([1.0, 2.0], requires_grad=True)
        >>> h = w.register_post_accumulate_grad_hook(lambda p: print("grad", p.grad))
        >>> (w * w).sum().backward()
        grad tensor([2., 4.])
        >>> h.remove()
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = POST_ACCUMULATE_HOOKS.get(id(self))
        if hooks is None or POST_ACCUMULATE.get(id(self)) is not self:
            hooks = POST_ACCUMULATE_HOOKS[id(self)] = {}
            POST_ACCUMULATE[id(self)] = self
            weakref.finalize(self, POST_ACCUMULATE_HOOKS.pop, id(self), None)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    def is_inference(self) -> bool:
        """False: tidu makes no inference tensors (docs/guides/pytorch-differences.md)."""
        return False

    @property
    def output_nr(self) -> int:
        """Which output of the recorded op that made it this tensor is (0 for a leaf).

        >>> import tidu
        >>> a = tidu.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
        >>> values, vectors = tidu.linalg.eigh(a)
        >>> values.output_nr, vectors.output_nr, a.output_nr
        (0, 1, 0)
        """
        trace = self.grad_fn
        if trace is None:
            return 0
        keys = trace.node.primal_out_keys
        return keys.index(self._key) if self._key in keys else 0

    def _ensure_key(self) -> Any:
        key = self._key
        if key is None:
            key = self._key = _fresh_key()
        return key

    # --- conversion -----------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a numpy array sharing this tensor's memory; ``force=True`` first detaches
        and copies to the host (PyTorch's ``numpy(force=True)``), so it works on a tensor that
        requires grad or lives on ``cuda`` too."""
        if force:
            return self.detach().cpu().numpy()
        if self._device is not CPU:
            raise TypeError(
                f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                "to host memory first."
            )
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._dtype is dtypes.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")  # numpy has none (PyTorch's error)
        if _groups._open is not None:  # a read of values ends the open group (``_values``)
            _groups.close()
        data = self._data
        _expose(data)
        return data

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """Zero-copy export of a CUDA tensor (numba, CuPy and PyTorch read it)."""
        if self._device is CPU:
            raise AttributeError("a CPU tensor has no __cuda_array_interface__; use numpy() or .cuda()")
        if self._requires_grad:
            raise RuntimeError("Can't export a Tensor that requires grad; use tensor.detach() first")
        data = self._data
        _expose(data)
        return data.__cuda_array_interface__

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """Zero-copy export through DLPack (``numpy.from_dlpack``, ``torch.from_dlpack``, JAX):
        host tensors only; a CUDA tensor is exchanged through ``__cuda_array_interface__``."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if self._device is not CPU:
            raise BufferError(
                "tidu exports CUDA tensors through __cuda_array_interface__, not DLPack: read it with "
                "torch.as_tensor(t), cupy.asarray(t) or numba.cuda.as_cuda_array(t)"
            )
        data = self._data
        _expose(data)
        kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
                  if v is not None}
        return data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(1, 0)`` (DLPack's CPU) for a host tensor, ``(2, index)`` (CUDA) for a GPU one."""
        return (1, 0) if self._device is CPU else (2, self._device.index or 0)

    def _host(self) -> np.ndarray:
        """The data as a numpy array (a copy from the device for a CUDA tensor); a bfloat16
        tensor's is its storage, uint16 (``_values`` reads its values)."""
        return self._data if self._device is CPU else self._data.copy_to_host()

    def _values(self) -> np.ndarray:
        """The values as a host numpy array: ``_host``, but a bfloat16 tensor's widened to float32.
        A read of values (``item``, ``tolist``, ``bool``) ends the open group of recorded calls
        (core/groups.py): a step that ends with one never shares a group with the next."""
        if _groups._open is not None:
            _groups.close()
        host = self._host()
        return dtypes.to_float32(host, self._dtype) if self._dtype is dtypes.bfloat16 else host

    def item(self) -> Any:
        if self._buf.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._buf.size} elements cannot be converted to Scalar"
            )
        return self._values().reshape(()).item()

    def tolist(self) -> Any:
        return self._values().tolist()

    def apply_(self, callable: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        """Replace each element by ``callable(element)``, in place (CPU only, as PyTorch; slow).

        >>> import tidu
        >>> tidu.tensor([1.0, 2.0]).apply_(lambda v: v * 10)
        tensor([10., 20.])
        """
        return self._map_elements("apply_", callable, ())

    def map_(self, tensor: Tensor, callable: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        """Replace each element ``a`` by ``callable(a, b)``, ``b`` the element of ``tensor``
        (broadcast to this tensor's shape) at the same place, in place (CPU only, as PyTorch).

        >>> import tidu
        >>> tidu.tensor([1.0, 2.0]).map_(tidu.tensor([10.0]), lambda a, b: a + b)
        tensor([11., 12.])
        """
        return self._map_elements("map_", callable, (tensor.expand(tuple(self.shape)).detach()._values(),))

    def _map_elements(self, name: str, fn: Any, others: tuple) -> Tensor:
        if self._requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                               "instead.")
        if self._device is not CPU:
            raise TypeError(f"{name} is only implemented on CPU tensors")
        data = self._data
        values = self._values()  # a bfloat16 tensor's widened: its storage holds bits
        for index in np.ndindex(data.shape):
            data[index] = dtypes.cast(fn(values[index].item(), *[o[index].item() for o in others]), self._dtype)
        _module("tidu.core.inplace").written(self)
        return self

    def detach(self) -> Tensor:
        """A tensor sharing this one's storage, cut from the graph."""
        return Tensor(self._buf, self._dtype, device=self._device, _version=self._version)

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def _scalar(self) -> Any:
        """``item()`` for Python's conversions, which raise PyTorch's ``ValueError`` on a size other than 1."""
        if self._buf.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __bool__(self) -> bool:
        if self._buf.size != 1:
            many = "no values" if not self._buf.size else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {many} is ambiguous")
        return bool(self._values().reshape(()).item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._buf.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._host().reshape(()).item())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._device is not CPU or self._dtype is dtypes.bfloat16:
            self.numpy()  # PyTorch's TypeError
        data = self._data
        if dtype is None:
            _expose(data)
            return data
        return data.astype(dtype)

    def __hash__(self) -> int:
        return id(self)

    def __deepcopy__(self, memo: dict) -> Tensor:
        """A copy of a leaf's data, ``requires_grad`` and ``.grad`` (PyTorch copies leaves only)."""
        if self._trace is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
                "moment.  If you were attempting to deepcopy a module, this may be because of a computed tensor "
                "stored on it."
            )
        data = Tensor(self._data.copy(), self._dtype, device=self._device)
        new = data if type(self) is Tensor else type(self)(data, self._requires_grad)  # a Parameter
        new._requires_grad = self._requires_grad
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        return new

    def __reduce__(self) -> Any:
        """Pickled as host data, dtype, device and ``requires_grad``; it unpickles as a leaf (as
        PyTorch's does)."""
        return (_rebuild, (self._host().copy(), self._dtype, str(self._device), self._requires_grad))

    def __repr__(self) -> str:
        from .core.printing import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._buf.ndim == 0 and type(self) is Tensor:  # a scalar formats as its number: f"{loss:.4f}"
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __contains__(self, element: Any) -> bool:
        if not isinstance(element, Tensor | bool | int | float | complex | np.generic):
            raise RuntimeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
            )
        return bool((self == element).any().item())

    def __iter__(self) -> Any:
        if self._buf.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._buf.shape[0]))  # type: ignore[index]


# Tensor types the ops' short paths take (``dispatch.bind_same`` and its kin): ``Tensor`` and the
# subclasses that change no op (``nn.Parameter`` adds itself); another subclass takes ``bind``
SHORT_PATH_TYPES: set[type] = {Tensor}


def wrap(array: Any, dtype: dtypes.dtype, device: Device) -> Tensor:
    """A new tensor of ``array`` (of ``dtype``, on ``device``), built without ``__init__``'s
    defaults and checks: the constructor of every bind's result."""
    t = _new(Tensor)
    t._buf = array
    t._dtype = dtype
    t._requires_grad = t._retains_grad = False
    t._grad = t._key = t._trace = t._view = t._hooks = None
    t._version = counter = _new(VersionCounter)
    counter.value = 0
    t._device = device
    return t


_new = object.__new__


def _rebuild(array: np.ndarray, dtype: dtypes.dtype, device: str, requires_grad: bool) -> Tensor:
    from .core.device import as_device

    out = placed(array, dtype, as_device(device))
    out.requires_grad = requires_grad
    return out


def of_array(array: np.ndarray) -> Tensor:
    """A host tensor wrapping ``array``, of its dtype (``Tensor(array)`` is PyTorch's legacy
    constructor, which copies into the default dtype)."""
    return Tensor(array, dtypes.from_numpy_dtype(array.dtype))


def placed(array: np.ndarray, dtype: dtypes.dtype | None, device: Device) -> Tensor:
    """A tensor on ``device`` holding the host ``array``'s values."""
    if dtype is None:
        dtype = dtypes.from_numpy_dtype(array.dtype)
    if device is CPU:
        return Tensor(array, dtype)
    return Tensor(_module("tidu.backends.cuda.memory").CudaArray.from_host(np.asarray(array)), dtype, device=device)


class Size(tuple):
    """A tensor's shape: a tuple of ints (PyTorch's ``torch.Size``). Slices, sums and repeats of
    it are sizes too.

    >>> import tidu
    >>> s = tidu.ones(2, 3, 4).shape
    >>> s[1:], s + (5,), (1,) + s
    (tidu.Size([3, 4]), tidu.Size([2, 3, 4, 5]), tidu.Size([1, 2, 3, 4]))
    """

    __slots__ = ()

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        return Size(item) if type(index) is slice else item

    def __add__(self, other: Any) -> Any:
        joined = tuple.__add__(self, other)
        return joined if joined is NotImplemented else Size(joined)

    def __radd__(self, other: Any) -> Any:
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n: Any) -> Any:
        repeated = tuple.__mul__(self, n)
        return repeated if repeated is NotImplemented else Size(repeated)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"tidu.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

