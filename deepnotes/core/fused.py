"""The engine's N blocks as compiled loops, where a C++ compiler is at hand (CPU, float32 and float64).

:mod:`deepnotes.core.stack_function` writes one block's forward and backward as PyTorch calls; at the
chapters' few dozen tokens per member each call computes for about a microsecond and costs several
to dispatch. ``kernels/blocks.cpp`` computes the same formulas (the docstring of
:mod:`~deepnotes.core.stack_function` writes them out) as plain loops: one call runs every layer of
every member, the members spread over ``torch.get_num_threads()`` threads, each member's arithmetic
on one thread in a fixed order (the same numbers for any thread count). The forward pass keeps each
layer's intermediates for the backward where they fit in :data:`KEEP_LIMIT_BYTES` (about 38 KB per
member and layer at the ``cpu`` sizes), else only each layer's input, from which the backward
recomputes the layer (the same bits either way). Where the optimizer offers it an :class:`AdamStep`
(:meth:`deepnotes.core.ensemble.EnsembleOptimizer.arm`), the backward steps each layer's θ, m, v with
Adam as soon as that layer's gradient is known, and leaves no block gradient behind.

The file is compiled on first use with the system's C++ compiler (``$CXX``, else ``c++``, ``g++`` or
``clang++``; about 3 s) into ``$DEEPNOTES_CACHE`` (default ``~/.cache/deepnotes``), keyed by the
source, the flags, the compiler and the CPU (it is built with ``-march=native``). Without a compiler,
or where compiling fails, one warning says so and the engine runs the PyTorch path, which computes
the same function. ``DEEPNOTES_FUSED=0`` turns the compiled path off, ``=all`` uses it for GELU stacks
too (see :func:`usable`). CUDA always runs the PyTorch path. ``tests/core/test_fused.py`` checks every
output and gradient against that path (float64, relative 1e-10) for every norm style and block kind.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

KERNELS = Path(__file__).with_name("kernels")
SOURCES = (KERNELS / "blocks.cpp", KERNELS / "adam.cpp")
HEADERS = (KERNELS / "flush_denormals.h", KERNELS / "adam_update.h")
FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math", "-fno-signed-zeros", "-fassociative-math",
         "-std=c++17", "-shared", "-fPIC", "-pthread")
ABI = 3                                  # deepnotes_blocks_abi() of the source this module speaks to
ENV_SWITCH = "DEEPNOTES_FUSED"          # "0": never use the compiled kernels; "all": wherever they can run
# the parameter slots of blocks.cpp, in its order (a stack without a piece passes a null pointer)
SLOTS = ("attn_norm_w", "attn_norm_b", "attn_gate", "qkv_w", "qkv_b", "out_w", "out_b",
         "ffn_norm_w", "ffn_norm_b", "ffn_gate", "fc1_w", "fc1_b", "fc2_w", "fc2_b")
_SUFFIX = {torch.float32: "f32", torch.float64: "f64"}
# the most memory one stack's forward pass keeps for its backward as intermediates; past it, only the
# layers' inputs (tests/core/test_fused.py runs both ways)
KEEP_LIMIT_BYTES = 1 << 30


class Layout(ctypes.Structure):
    """blocks.cpp's ``Layout``: the stack's sizes and switches."""
    _fields_ = [(name, ctypes.c_int64) for name in
                ("n_layers", "members", "tokens", "d", "d_ff", "seq", "heads", "attention", "causal", "gelu",
                 "threads", "kept")] + [("eps", ctypes.c_double)]


class AdamInBackward(ctypes.Structure):
    """blocks.cpp's ``AdamInBackward``: m and v per slot (null: not stepped), the members' rates, the
    constants."""
    _fields_ = [("m", ctypes.c_void_p * len(SLOTS)), ("v", ctypes.c_void_p * len(SLOTS)),
                ("lr", ctypes.POINTER(ctypes.c_double))] + [(name, ctypes.c_double) for name in
                                                            ("b1", "b2", "eps", "bc1", "bc2")]


@dataclass
class AdamStep:
    """One Adam step that the compiled backward pass may apply to block parameters as it computes
    their gradients (one pass over a layer's θ, m, v while its gradient is in cache, no gradient
    written to memory): ``states`` name → (θ, m, v); member k at rate ``lrs[k]``; step ``t`` ≥ 1.
    The optimizer attaches it to each θ as ``_adam_step`` before the backward pass
    (:meth:`deepnotes.core.ensemble.EnsembleOptimizer.arm`); :func:`backward` adds the names it
    stepped to ``done`` and leaves their gradient None."""
    states: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    lrs: list[float]
    betas: tuple[float, float]
    eps: float
    t: int
    done: set[str] = field(default_factory=set)


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$DEEPNOTES_CACHE``, else ``$XDG_CACHE_HOME/deepnotes``."""
    if os.environ.get("DEEPNOTES_CACHE"):
        return Path(os.environ["DEEPNOTES_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepnotes"


def _compiler() -> str | None:
    return os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)


def _machine_key() -> bytes:
    """What ``-march=native`` depends on: the architecture and, on Linux, the CPU's feature flags."""
    flags = b""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_bytes().splitlines() if line.startswith(b"flags")),
                     b"")
    except OSError:
        pass
    return platform.machine().encode() + flags


def _build(compiler: str) -> Path:
    """The compiled library's path, compiling it first unless the cache has it."""
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60).stdout
    text = b"".join(path.read_bytes() for path in SOURCES + HEADERS)
    key = hashlib.sha256(text + " ".join(FLAGS).encode() + version.encode() + _machine_key()).hexdigest()[:16]
    target = cache_dir() / f"kernels-{key}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)     # worker processes may build at once
        os.close(fd)
        try:
            subprocess.run([compiler, *FLAGS, *map(str, SOURCES), "-o", tmp], check=True, capture_output=True,
                           text=True, timeout=600)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return target


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL | None:
    """The compiled blocks, or None (no compiler, or compiling failed: one warning)."""
    compiler = _compiler()
    if compiler is None:
        warnings.warn("no C++ compiler found (set CXX): the engine runs its blocks as PyTorch operations, "
                      "which is slower on the CPU but computes the same", RuntimeWarning, stacklevel=2)
        return None
    try:
        lib = ctypes.CDLL(str(_build(compiler)))
        if lib.deepnotes_blocks_abi() != ABI:
            raise OSError(f"ABI {lib.deepnotes_blocks_abi()} != {ABI}")
    except (OSError, subprocess.SubprocessError) as err:
        detail = getattr(err, "stderr", "") or err
        warnings.warn(f"compiling deepnotes/core/kernels/*.cpp with {compiler} failed ({str(detail)[:500]}): "
                      "the engine runs its blocks as PyTorch operations instead", RuntimeWarning, stacklevel=2)
        return None
    return lib


def _compiled(tensors) -> bool:
    """CPU, float32 or float64, contiguous tensors of one dtype, the compiled path on and built, and no
    PyTorch dispatch mode watching (a FLOP or operator counter, :mod:`deepnotes.core.cost`: it sees the
    PyTorch path's operations, which the compiled loops would hide from it)."""
    dtype = tensors[0].dtype
    return (dtype in _SUFFIX and all(t.device.type == "cpu" and t.dtype == dtype and t.is_contiguous()
                                     for t in tensors)
            and os.environ.get(ENV_SWITCH, "1") != "0" and _get_current_dispatch_mode() is None
            and library() is not None)


def usable(st, x: torch.Tensor, params) -> bool:
    """Whether the compiled blocks run this stack: per-member flags for its K members, what
    :func:`_compiled` asks, and a ReLU FFN unless ``DEEPNOTES_FUSED=all``. The kernels' GELU calls
    the C library's scalar erf, where PyTorch's is vectorized: measured on the BERT chapter's encoder
    (width 64, 1024 tokens per member, 4 members, 60 MLM steps, 2 threads), 15.7 s compiled against
    6.5 s on the PyTorch path, so GELU stacks take the PyTorch path by default (the kernels' GELU is
    still tested against it)."""
    if st.activation == "gelu" and os.environ.get(ENV_SWITCH) != "all":
        return False
    return (st.flags is not None and len(st.flags["alpha"]) == x.shape[0] and x.dim() == 3
            and x.device.type == "cpu" and x.dtype == params[0].dtype and _compiled(list(params)))  # x: any layout


def _layout(st, params: dict, x: torch.Tensor, batch: int) -> Layout:
    from deepnotes.core.stack_function import LN_EPS      # the PyTorch path's ε (it imports this module)
    k_, m, d = x.shape
    n = params["fc1_w"].shape[0]
    return Layout(n_layers=n, members=k_, tokens=m, d=d, d_ff=params["fc1_w"].shape[-1], seq=m // batch,
                  heads=st.n_heads, attention=int("qkv_w" in params), causal=int(st.causal),
                  gelu=int(st.activation == "gelu"), threads=torch.get_num_threads(), eps=LN_EPS)


def _pointers(tensors: dict) -> ctypes.Array:
    return (ctypes.c_void_p * len(SLOTS))(*(tensors[s].data_ptr() if s in tensors else None for s in SLOTS))


def _members(st, like: torch.Tensor):
    """(α [K] in x's dtype, pre, post, gated as uint8 [K]) from the styles' per-member flags."""
    flags = st.flags
    alpha = torch.tensor(flags["alpha"], dtype=like.dtype)
    return (alpha, *(torch.tensor(flags[name], dtype=torch.uint8) for name in ("pre", "post", "gated")))


def _kept_entries(layout: Layout, members) -> int:
    """Entries of one layer's intermediates for the most demanding member (blocks.cpp's Member::each_kept)."""
    _, pre, post, gated = members
    count = library().deepnotes_blocks_kept_entries
    count.restype = ctypes.c_int64
    return max(count(ctypes.byref(layout), ctypes.c_uint8(a), ctypes.c_uint8(b), ctypes.c_uint8(c))
               for a, b, c in zip(pre.tolist(), post.tolist(), gated.tolist()))


def forward(st, names, params, x: torch.Tensor, batch: int, keep: bool):
    """x_N [K, M, d] of x_0 through the N blocks; with ``keep`` also what the backward pass needs:
    every layer's intermediates [N, K, kept] where they fit in :data:`KEEP_LIMIT_BYTES` (the
    backward then only reads them), else every layer's input [N, K, M, d] (the backward recomputes
    each layer from it: the same numbers, the forward computed twice, a tenth of the memory)."""
    tensors = dict(zip(names, params))
    layout = _layout(st, tensors, x, batch)
    y = x.detach().contiguous().clone()
    members = _members(st, x)
    saved = None
    if keep:
        kept = _kept_entries(layout, members)
        if layout.n_layers * layout.members * kept * x.element_size() <= KEEP_LIMIT_BYTES:
            layout.kept = kept
            saved = _reused(params[0], "_fused_kept", (layout.n_layers, layout.members, kept), x.dtype)
        else:
            saved = _reused(params[0], "_fused_kept", (layout.n_layers, *x.shape), x.dtype)
    getattr(library(), f"deepnotes_blocks_forward_{_SUFFIX[x.dtype]}")(
        ctypes.byref(layout), _pointers(tensors), *(ctypes.c_void_p(t.data_ptr()) for t in members),
        ctypes.c_void_p(y.data_ptr()), ctypes.c_void_p(saved.data_ptr() if keep else None))
    return y, (layout, members, saved)


def _storage_count(t: torch.Tensor) -> int | None:
    """PyTorch's (private) count of the references to t's memory; None where it is missing."""
    count = getattr(torch._C, "_storage_Use_Count", None)
    if count is None:
        return None
    storage = t.untyped_storage()                # held while counting
    return count(storage._cdata)


_ALONE = _storage_count(torch.empty(1))          # the count of a tensor that shares its memory with none


def _reused(owner: torch.Tensor, attr: str, shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialized tensor of this shape: the one kept on ``owner`` under ``attr`` by the last call
    where nothing else holds it any more and its shape matches, else a new one (kept there in turn).
    Hundreds of MB allocated anew each step come from the OS page by page."""
    buffer = getattr(owner, attr, None)
    if (buffer is None or buffer.shape != shape or buffer.dtype != dtype or _ALONE is None
            or _storage_count(buffer) != _ALONE):
        buffer = torch.empty(shape, dtype=dtype)
        setattr(owner, attr, buffer)
    return buffer.view_as(buffer)


def _gradient_buffer(p: torch.Tensor) -> torch.Tensor:
    """A tensor for p's gradient: p's buffer from the last backward pass where nothing holds that
    pass's gradient any more (p.grad is None and no view of the buffer is alive), else a new one.

    A thousand-block stack's gradients fill hundreds of MB; a new allocation each step comes from the
    OS page by page (measured: 1.0 s of a 2.4 s backward pass at N = 1000, 14 members). The buffer is
    handed to autograd as a fresh view, which autograd adopts as p.grad without copying it."""
    if p.grad is not None:                       # autograd adds to an existing gradient: a new tensor
        return torch.empty_like(p)
    return _reused(p, "_fused_grad", p.shape, p.dtype)


def _armed(tensors: dict) -> tuple[AdamStep | None, list[str]]:
    """The AdamStep attached to these parameters and the names it can step here (same dtype, contiguous)."""
    step = next((getattr(p, "_adam_step", None) for p in tensors.values() if getattr(p, "_adam_step", None)), None)
    if step is None:
        return None, []
    names = [n for n, p in tensors.items() if getattr(p, "_adam_step", None) is step and n in step.states
             and step.states[n][0] is p and _compiled([p, *step.states[n][1:]])]
    return step, names


def _adam_in_backward(step: AdamStep, names: list[str]) -> tuple[AdamInBackward, ctypes.Array]:
    b1, b2 = step.betas
    lr = (ctypes.c_double * len(step.lrs))(*step.lrs)
    states = {n: step.states[n] for n in names}
    return AdamInBackward(_pointers({n: m for n, (_, m, _) in states.items()}),
                          _pointers({n: v for n, (_, _, v) in states.items()}),
                          ctypes.cast(lr, ctypes.POINTER(ctypes.c_double)), b1, b2, step.eps,
                          1 - b1 ** step.t, 1 - b2 ** step.t), lr


def backward(names, params, saved, dy: torch.Tensor):
    """(∂L/∂x_0, the parameters' gradients in ``names`` order) given ∂L/∂x_N [K, M, d] and what
    :func:`forward` kept. Parameters carrying an :class:`AdamStep` are stepped in place instead and
    their gradient is None."""
    layout, members, inputs = saved
    tensors = dict(zip(names, params))
    step, stepped = _armed(tensors)
    grads = {name: _gradient_buffer(p) for name, p in tensors.items() if name not in stepped}   # every entry written
    adam, lr = _adam_in_backward(step, stepped) if stepped else (None, None)
    dx = dy.detach().contiguous().clone()
    getattr(library(), f"deepnotes_blocks_backward_{_SUFFIX[dy.dtype]}")(
        ctypes.byref(layout), _pointers(tensors), _pointers(grads), ctypes.byref(adam) if adam else None,
        *(ctypes.c_void_p(t.data_ptr()) for t in members), ctypes.c_void_p(inputs.data_ptr()),
        ctypes.c_void_p(dx.data_ptr()))
    del lr                                                                # kept alive through the call
    if step is not None:
        step.done.update(stepped)
    return dx, [grads.get(name) for name in names]


def adam_usable(p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> bool:
    """Whether :func:`adam` can step this tensor (see :func:`usable`)."""
    return _compiled([p, g, m, v])


def adam(p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor, lrs: list[float], member_axis: int,
         betas: tuple[float, float], eps: float, t: int) -> None:
    """One Adam step of p [.., K, ...] in place (m, v too), member k at rate ``lrs[k]``, step ``t`` ≥ 1:
    m ← m + (1 − β1)(g − m), v ← β2 v + (1 − β2) g², θ ← θ − η_k/(1 − β1^t) · m/(√v/√(1 − β2^t) + ε)."""
    rows = p.shape[0] * p.shape[1] if member_axis == 1 else p.shape[0]              # row i: member i % K
    b1, b2 = betas
    lr = (ctypes.c_double * len(lrs))(*lrs)
    getattr(library(), f"deepnotes_adam_{_SUFFIX[p.dtype]}")(
        ctypes.c_int64(rows), ctypes.c_int64(p.numel() // rows), ctypes.c_int64(len(lrs)),
        *(ctypes.c_void_p(t_.data_ptr()) for t_ in (p, g, m, v)), lr, ctypes.c_double(b1), ctypes.c_double(b2),
        ctypes.c_double(eps), ctypes.c_double(1 - b1 ** t), ctypes.c_double(1 - b2 ** t),
        ctypes.c_int64(torch.get_num_threads()))
