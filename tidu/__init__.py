"""tidu (梯度, "gradient"): eager autodiff with PyTorch's API and JAX's derivative model.

Every operation runs at once on a Numba kernel and, when a gradient may be
needed, is recorded on the AD engine's tape; reverse mode linearizes the tape
with each primitive's JVP rule and runs the transpose.

>>> import tidu as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> (x.exp() * x).sum().backward()
>>> x.grad
tensor([ 5.4366, 22.1672])
"""

import gc as _gc
from math import e, inf, nan, pi

from . import (
    ad,
    eager,
    primitives,  # noqa: E402,I001 - registers every primitive
)
from .ad import ADRuleError, ADRuleKind
from .backends.cpu.threads import get_num_threads, set_num_threads
from .core.aval import ShapeDtype
from .core.determinism import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode,
    use_deterministic_algorithms,
)
from .core.device import device, get_default_device, set_default_device
from .core.dtypes import (
    bfloat16,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from .core.dtypes import (
    bool_ as bool,  # noqa: A004 - PyTorch's name
)
from .core.formats import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from .core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .core.primitive import Primitive, bind
from .eager import Recorder, try_backward
from .legacy import TYPES as _LEGACY_TYPES  # noqa: E402
from .ops import *  # noqa: E402,F403
from .ops import methods as _methods  # noqa: E402
from .tensor import Size, Tensor

_methods.install()
globals().update(_LEGACY_TYPES)  # FloatTensor, LongTensor, ...
globals().update(_methods.top_level_inplace())

from . import (  # noqa: E402
    amp,
    autograd,
    cuda,
    distributions,
    func,
    linalg,
    nn,
    optim,
    random,
    special,
    testing,
    train,
    utils,
)
from ._householder import geqrf, orgqr, ormqr  # noqa: E402
from ._linalg_ex import triangular_solve  # noqa: E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402
from ._lu import cholesky_inverse, cholesky_solve, lu_unpack  # noqa: E402
from ._lu import lu_legacy as lu  # noqa: E402
from ._lu import lu_solve_legacy as lu_solve  # noqa: E402
from .amp import GradScaler, autocast  # noqa: E402
from .compat import *  # noqa: E402,F403
from .func import linear_transpose, linearize, vmap  # noqa: E402
from .linalg import _cholesky as cholesky  # noqa: E402
from .linalg import _cross as cross  # noqa: E402
from .linalg import _frobenius_norm as frobenius_norm  # noqa: E402
from .linalg import _logdet as logdet  # noqa: E402
from .linalg import _nuclear_norm as nuclear_norm  # noqa: E402
from .linalg import _qr as qr  # noqa: E402
from .linalg import _slogdet as slogdet  # noqa: E402
from .linalg import _svd as svd  # noqa: E402
from .linalg import det, matrix_exp  # noqa: E402
from .linalg import inv as inverse  # noqa: E402

for _name, _fn in (("cross", cross), ("cholesky", cholesky), ("logdet", logdet), ("qr", qr), ("slogdet", slogdet),
                   ("svd", svd), ("det", det), ("inverse", inverse), ("matrix_exp", matrix_exp), ("lu", lu),
                   ("lu_solve", lu_solve), ("cholesky_solve", cholesky_solve), ("cholesky_inverse", cholesky_inverse)):
    setattr(Tensor, _name, _fn)
from .core.primitive import Var as _Var  # noqa: E402
from .distributions.gamma import _standard_gamma, _standard_gamma_grad  # noqa: E402
from .nn.functional import cosine_similarity, pairwise_distance  # noqa: E402
from .nn.toplevel import *  # noqa: E402,F403
from .ops import aliases as _aliases  # noqa: E402
from .serialization import load, save  # noqa: E402
from .storage import TypedStorage, UntypedStorage  # noqa: E402
from .streams import Event, Stream  # noqa: E402
from .utils.dlpack import from_dlpack  # noqa: E402

_aliases.install(globals(), (Tensor, _Var), (linalg, special))  # axis= for dim=, keepdims= for keepdim=

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

newaxis = None  # numpy's name, as torch.newaxis: x[:, tidu.newaxis] adds a dim

__version__ = "0.1.0"


def _take_out() -> None:
    """The namespace functions PyTorch gives ``out=`` take it (tidu/ops/outputs.py); an alias of
    one (``absolute`` of ``abs``) is the same wrapped function."""
    from .ops.outputs import OUT_NAMES, with_out

    names = globals()
    wrapped = {id(names[n]): with_out(names[n], n) for n in sorted(OUT_NAMES) if callable(names.get(n))}
    for name, value in list(names.items()):
        if id(value) in wrapped and callable(value):
            names[name] = wrapped[id(value)]


_take_out()

# PyTorch's submodules that scripts reach for now and then, imported at their first use so that
# ``import tidu`` does not pay for them
_LAZY_MODULES = frozenset({"accelerator", "compiler", "cpu", "distributed", "multiprocessing", "profiler",
                           "quasirandom"})


def __getattr__(name: str) -> object:
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The ~60k objects alive now (numpy's, numba's, tidu's) go to the collector's permanent generation:
# a training loop makes many short-lived objects, and every full collection would rescan these.
# Frozen objects are still freed when their last reference goes; only cycles among them are kept.
_gc.freeze()

from .backends.cpu.memory import collect_less, keep_freed_memory  # noqa: E402

keep_freed_memory()
collect_less()
