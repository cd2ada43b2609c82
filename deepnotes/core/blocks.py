"""The N blocks of a :class:`~deepnotes.core.engine.Stack` as one autograd node, its backward pass
written out per layer.

Autograd records every small operation of a thousand-block stack as a node and replays them one by
one; at a few dozen tokens per member each node costs more to dispatch than to compute. Here the
forward pass runs without a graph, keeping what the backward needs per layer, and the backward runs
the layers in reverse, writing each layer's gradients straight into the [N, K, ...] gradient tensors
(no per-layer gradient tensors stacked afterwards). One block, on x [K, M = B·T, d], per member k:

    u = LN_k(x) if pre_k else x                         (the sublayer's LayerNorm, per-member affine)
    f = F(u)                                            (attention or FFN)
    s = α_k·x + g_k·f                                   (g_k the ReZero gate if gated_k, else 1)
    y = LN_k(s) if post_k else s

Backward, given ∂L/∂y (LN's backward written out; γ, β per member):

    ∂L/∂s = LNᵀ(∂L/∂y) if post_k else ∂L/∂y,     ∂L/∂γ = Σ_m ∂L/∂y ⊙ ŝ,   ∂L/∂β = Σ_m ∂L/∂y
    ∂L/∂f = g_k·∂L/∂s,   ∂L/∂g_k = Σ ∂L/∂s ⊙ f,   ∂L/∂x = α_k·∂L/∂s + (LNᵀ(∂L/∂u) if pre_k else ∂L/∂u)
    FFN   h = u W₁ + b₁, a = φ(h), f = a W₂ + b₂:   ∂W₂ = aᵀ∂f, ∂a = ∂f W₂ᵀ, ∂h = φ'(h) ⊙ ∂a, ∂W₁ = uᵀ∂h, ∂u = ∂h W₁ᵀ
    attn  P = softmax(QKᵀ/√d_h + mask), Y = PV:     ∂P = ∂Y Vᵀ, ∂V = Pᵀ∂Y, ∂S = P ⊙ (∂P − rowsum(∂P ⊙ P)),
                                                     ∂Q = ∂S K/√d_h, ∂K = ∂Sᵀ Q/√d_h

Members that do not use a piece (a LayerNorm, a gate) see it masked out by a 0/1 blend, which
passes their gradient nothing: those slices stay exactly 0 and train to nothing.
``tests/core/test_engine.py`` checks every gradient against autograd on the same stack and against
the reference model (float64, relative 1e-10).

**The compiled kernels.** The functions above write one block's forward and backward as PyTorch calls;
at the chapters' few dozen tokens per member each call computes for about a microsecond and costs
several to dispatch. On the CPU, where a C++ compiler is at hand, :class:`BlocksFunction` hands the same
formulas to plain loops (``kernels/blocks.cpp``, built and loaded by the ``compiled_*`` functions below, with
Adam's update in ``kernels/adam.cpp``; float32 and float64), and the PyTorch functions are the specification
they are tested against and the path on CUDA or without a compiler. One call runs every layer of
every member, the members spread over ``torch.get_num_threads()`` threads, each member's arithmetic
on one thread in a fixed order (the same numbers for any thread count). The forward pass keeps each
layer's intermediates for the backward where they fit in :data:`KEEP_LIMIT_BYTES` (about 38 KB per
member and layer at the ``cpu`` sizes), else only each layer's input, from which the backward
recomputes the layer (the same bits either way). Where the optimizer offers it an :class:`AdamStep`
(:meth:`deepnotes.core.optim.EnsembleOptimizer.arm`), the backward steps each layer's θ, m, v with
Adam as soon as that layer's gradient is known, and leaves no block gradient behind.

The kernels are built for the CPU they run on (:mod:`deepnotes.core.kernels`: ``$DEEPNOTES_TARGET``,
``native`` by default; their vector width and tile shape follow that instruction set) and cached.
Without a compiler, or where compiling fails, one warning says so and the engine runs the PyTorch
path, which computes the same function. The engine takes the compiled path where it is the faster one
by a stated rule (:func:`compiled_wins`: blocks of at most :data:`COMPILED_LAYER_FLOPS`), ReLU and GELU
alike; ``DEEPNOTES_FUSED=0`` turns it off, ``=all`` takes it wherever it can run. CUDA always runs the
PyTorch path. ``tests/core/test_fused.py`` and ``tests/core/test_kernel_targets.py`` check every output
and gradient against that path (float64, relative 1e-10; float32 to its rounding) for every norm
style, block kind and target this machine runs.

**The PyTorch path's two forms** (:func:`block_form`). What the members' styles multiply (each LayerNorm's
γ·m and β·m at the pre and post positions, ReZero's gate blend) is computed once per step for all N layers
(:func:`coefficients`), so that a block pays no operation for the mix of styles. Then, on a GPU, where every
operator is a kernel launch, the ``gpu`` form takes PyTorch's fused attention (``scaled_dot_product_attention``,
its backward asked of autograd) and leaves every parameter's gradient to the end of the backward pass, one
``bmm`` or sum over all N·K layer-members at once (:func:`_bulk_gradients`, from what a :class:`Tape` kept):
65 ATen operators per block-step of the 1000-layer chapter's mixed ensemble against 141 before issue 62. On a
CPU the ``cpu`` form writes the softmax out and takes each layer's gradients while its tensors are in cache
(the same arithmetic as before issue 62, bit for bit); the ``gpu`` form ran 1.06–1.83× slower there.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import _get_current_dispatch_mode

from deepnotes.core import kernels
from deepnotes.core.validate import Count, NonNegativeCount, Positive

LN_EPS = 1e-5  # nn.LayerNorm's default, as in the reference
SOFTMAX_VECTOR = 16  # floats per vector of the CPU softmax kernel
PADDED_SOFTMAX_WIDTHS = range(7, SOFTMAX_VECTOR)  # row widths padded to one vector (see softmax)


Mask = "bool | tuple[torch.Tensor, torch.Tensor] | None"


@dataclass(frozen=True)
class Styles:
    """Each member's block, as data. A mask is None (no member has the piece), True (every member
    has it) or (m, 1 − m), two float [K, 1, 1] tensors of 0s and 1s: a blend a·(1 − m) + b·m picks
    a or b per member exactly (for finite values: a diverged member's NaN stays in its own slice),
    and costs less than ``torch.where`` on the CPU (2.5 against 10 µs at K = 14, M = 32, d = 32)."""

    alpha: torch.Tensor | None  # the skip weight α_k [K, 1, 1] (None: 1 for every member)
    pre: Mask  # LN on the sublayer's input (Pre-LN)
    post: Mask  # LN on the sum (Post-LN, DeepNorm)
    gated: Mask  # g_k is the member's trained gate (ReZero), else 1
    activation: str  # the FFN's φ: relu | gelu
    n_heads: Count
    causal: bool = True  # position i sees j ≤ i (the compiled path's score mask; here: bias)
    flags: dict | None = None  # per member, Python: alpha, pre, post, gated (the compiled path's data)
    scores: dict = field(default_factory=dict, compare=False)  # the written-out attention's score biases, per T


def mask_of(flags: list[bool], values: torch.Tensor) -> Mask:
    """A :class:`Styles` mask of per-member flags: ``flags`` (Python, to decide without reading the
    device) and the same as 0/1 ``values`` [K] in the parameters' dtype."""
    if not any(flags):
        return None
    if all(flags):
        return True
    m = values.view(-1, 1, 1)
    return m, 1 - m


def _linear(x, w, b):
    """x W + b per member: x [K, M, r], W [K, r, c], b [K, 1, c] (a ``bmm`` and an in-place add:
    ``baddbmm`` broadcasts b into its output first, 12 µs of 51 at K = 14, M = 32, 32 → 96)."""
    return torch.bmm(x, w).add_(b)


# ---- LayerNorm with a per-member affine, at a position some members use ------------------------


def norm_forward(x, w, b):
    """LN(x)·γ + β per member: x [K, M, d], γ and β [K, 1, d] → (y, (x, x̂, mean, rstd))."""
    xhat, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], None, None, LN_EPS)
    return torch.addcmul(b, xhat, w), (x, xhat, mean, rstd)


def _norm_at(mask: Mask, x, w, b):
    """LN(x)·γ + β for the members of ``mask``, x for the rest, given γ·m and β·m (:func:`coefficients`):
    (γ·m) x̂ + β·m + (1 − m) x, which is the member's LN or x exactly (m ∈ {0, 1}, x̂ finite)."""
    y, saved = norm_forward(x, w, b)
    return (y if mask is True else y.addcmul_(x, mask[1])), saved


def _norm_at_backward(mask: Mask, dy, w, saved):
    """∂L/∂x of :func:`_norm_at` given ∂L/∂y: LNᵀ(∂L/∂y ⊙ γ·m) + (1 − m) ∂L/∂y. (Its γ and β gradients,
    Σ_m ∂L/∂y ⊙ x̂ and Σ_m ∂L/∂y, are summed for all layers at once: :func:`_bulk_gradients`.)"""
    x, _, mean, rstd = saved
    mask_in = [True, False, False]  # ∂L/∂x only
    dx = torch.ops.aten.native_layer_norm_backward(dy * w, x, x.shape[-1:], mean, rstd, None, None, mask_in)[0]
    return dx if mask is True else dx.addcmul_(dy, mask[1])


def coefficients(st: Styles, p: dict) -> dict[str, torch.Tensor]:
    """What each sublayer's blend multiplies, from the parameters ``p`` (one layer's [K, r, c] or all layers'
    [N, K, r, c]): ``{sub}_pre_w/_b`` and ``{sub}_post_w/_b``, the LayerNorm's γ·m and β·m at each position
    (m: the members with an LN there), and ``{sub}_gate``, g_k·m_k + (1 − m_k) (m: ReZero's members). Computed
    once per step for all N layers, so that a block pays no operation for the members' mix."""
    c = {}
    for sub in ("attn", "ffn"):
        if f"{sub}_norm_w" in p:
            for where, mask in (("pre", st.pre), ("post", st.post)):
                if mask is not None:
                    for part in ("w", "b"):
                        value = p[f"{sub}_norm_{part}"]
                        c[f"{sub}_{where}_{part}"] = value if mask is True else value * mask[0]
        if f"{sub}_gate" in p and st.gated is not None:
            gate = p[f"{sub}_gate"]
            c[f"{sub}_gate"] = gate if st.gated is True else torch.addcmul(st.gated[1], gate, st.gated[0])
    return c


# ---- the two branches ---------------------------------------------------------------------------


class Tape(dict):
    """What a backward pass hands to :func:`_bulk_gradients`, per key a list with one tensor per layer
    (appended from the last layer to the first): ``{w}:x`` and ``{w}:dy``, a matrix's input and the gradient
    of its output; ``{sub}_{pre|post}:x̂`` and ``:dy``; ``{sub}_gate:f`` and ``:ds``."""

    def __init__(self, st: Styles, owner: torch.Tensor):
        super().__init__()
        self.owner = owner  # the parameter that keeps the bulk gradients' buffers between steps
        # each LN position's members as bool [K, 1, 1] (None: every member), computed once per backward pass
        self.members = {w: (None if m is True else m[0] > 0) for w, m in (("pre", st.pre), ("post", st.post)) if m}

    def add(self, key: str, **tensors) -> None:
        for name, t in tensors.items():
            self.setdefault(f"{key}:{name}", []).append(t)


def _ffn_forward(st: Styles, u, p):
    """φ(u W₁ + b₁) W₂ + b₂ on u [K, M, d]."""
    h = _linear(u, p["fc1_w"], p["fc1_b"])  # [K, M, d_ff]
    a = torch.relu(h) if st.activation == "relu" else F.gelu(h)
    return _linear(a, p["fc2_w"], p["fc2_b"]), (u, h if st.activation == "gelu" else None, a)


def _ffn_backward(st: Styles, df, p, saved, tape: Tape):
    u, h, a = saved
    tape.add("fc2", x=a, dy=df)
    da = torch.bmm(df, p["fc2_wT"])  # [K, M, d_ff]
    dh = torch.ops.aten.threshold_backward(da, a, 0) if h is None else torch.ops.aten.gelu_backward(da, h)
    tape.add("fc1", x=u, dy=dh)
    return torch.bmm(dh, p["fc1_wT"])  # [K, M, d]


FORM_SWITCH = "DEEPNOTES_BLOCK_FORM"  # "gpu" or "cpu": the PyTorch path's form on every device (tests, op counts)


def block_form(device: torch.device) -> str:
    """The form the PyTorch path takes on ``device``, the same function either way (``tests/core/test_engine.py``):

    * ``gpu``, the fewest operators, each a kernel launch on a GPU: attention by PyTorch's fused
      ``scaled_dot_product_attention`` (one operator forward, one backward), and every parameter's gradient
      summed for all N layers at once at the end of the backward pass (one ``bmm`` over N·K per matrix);
    * ``cpu``, what a CPU's caches favour: the softmax written out (:func:`softmax`, ``bmm``), each layer's
      gradients computed while its backward's tensors are in cache. Measured on a 2-core CPU (RESULTS.md,
      2026-11-29), the fused attention's CPU kernel took 0.48 ms a backward call at 16 tokens per sequence,
      and the all-layer gradients read back from memory what the per-layer ones find in cache: the ``gpu``
      form ran a training step 1.06–1.83× slower there (three shapes, two rounds each).

    ``$DEEPNOTES_BLOCK_FORM`` names one for every device; else ``gpu`` on CUDA, ``cpu`` elsewhere."""
    chosen = os.environ.get(FORM_SWITCH)
    if chosen in ("gpu", "cpu"):
        return chosen
    return "gpu" if device.type == "cuda" else "cpu"


def softmax(scores: torch.Tensor) -> torch.Tensor:
    """softmax over the last dim. On the CPU in float32, rows of 7 to 15 entries are padded with
    −inf to 16 (exp(−inf) = 0 leaves every value as it was): PyTorch's CPU kernel takes a slow path
    for rows narrower than one 16-float vector. Measured on a 2-core CPU, [112, 8, 8]: 132 µs plain,
    20 µs padded; at 16 and in float64 padding does not pay."""
    t = scores.shape[-1]
    if scores.device.type == "cpu" and scores.dtype == torch.float32 and t in PADDED_SOFTMAX_WIDTHS:
        return torch.softmax(F.pad(scores, (0, SOFTMAX_VECTOR - t), value=float("-inf")), dim=-1)[..., :t]
    return torch.softmax(scores, dim=-1)


def _score_bias(st: Styles, t: Count, like: torch.Tensor) -> torch.Tensor:
    """[T, T]: −inf above the diagonal for a causal model (position i sees j ≤ i), else 0; made once per stack
    (its :class:`Styles`), device, dtype and T."""
    key = (t, like.device, like.dtype)
    if key not in st.scores:
        bias = torch.zeros(t, t, device=like.device, dtype=like.dtype)
        causal = torch.ones_like(bias, dtype=torch.bool).triu(1)
        st.scores[key] = bias.masked_fill_(causal, float("-inf")) if st.causal else bias
    return st.scores[key]


def _fused_attention(st: Styles, qkv, batch: int, keep: bool):
    """softmax(QKᵀ/√d_h + mask)·V by ``scaled_dot_product_attention`` on qkv [K, M, 3d] → ([K, M, d], saved).
    With ``keep`` autograd records it from a leaf copy of q, k, v, whose gradient the backward asks of it."""
    k_, m, d3 = qkv.shape
    h, t, d = st.n_heads, m // batch, d3 // 3
    with torch.enable_grad() if keep else contextlib.nullcontext():
        leaf = qkv.detach().requires_grad_() if keep else qkv
        q, k, v = leaf.view(k_ * batch, t, 3, h, d // h).permute(2, 0, 3, 1, 4).unbind(0)  # each [KB, h, T, d/h]
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=st.causal)  # [KB, h, T, d/h]
    y = heads.transpose(1, 2).reshape(k_, m, d)  # [K, M, d]
    return (y.detach(), (leaf, heads)) if keep else (y, None)


def _fused_attention_backward(dy, saved):
    leaf, heads = saved
    kb, h, t, dh = heads.shape
    return torch.autograd.grad(heads, leaf, dy.view(kb, t, h, dh).transpose(1, 2))[0]  # [K, M, 3d]


def _written_attention(st: Styles, qkv, batch: int, keep: bool):
    """The same as :func:`_fused_attention`, the softmax written out: P = softmax(QKᵀ/√d_h + mask), Y = PV."""
    k_, m, d3 = qkv.shape
    h, t, d = st.n_heads, m // batch, d3 // 3
    heads = qkv.view(k_ * batch, t, 3, h, d // h).permute(2, 0, 3, 1, 4).reshape(3, -1, t, d // h)  # [3, KBh, T, d/h]
    q, k, v = heads.unbind(0)
    bias = _score_bias(st, t, qkv)
    probs = softmax(torch.baddbmm(bias, q, k.transpose(1, 2), alpha=(d // h) ** -0.5))  # [KBh, T, T]
    y = torch.bmm(probs, v).view(k_, batch, h, t, d // h).permute(0, 1, 3, 2, 4).reshape(k_, m, d)  # [K, M, d]
    return y, ((heads, probs, batch) if keep else None)


def _written_attention_backward(dy, saved):
    """∂L/∂qkv [K, M, 3d] given ∂L/∂Y [K, M, d]: ∂P = ∂Y Vᵀ, ∂V = Pᵀ∂Y, ∂S = P ⊙ (∂P − rowsum(∂P ⊙ P)),
    ∂Q = ∂S K/√d_h, ∂K = ∂Sᵀ Q/√d_h."""
    heads, probs, batch = saved
    k_, m, d = dy.shape
    kbh, t, dh = heads.shape[1:]
    h = kbh // (k_ * batch)
    q, k, v = heads.unbind(0)
    dyh = dy.view(k_, batch, t, h, dh).permute(0, 1, 3, 2, 4).reshape(-1, t, dh)  # [KBh, T, d/h]
    dheads = torch.empty_like(heads)  # [3, KBh, T, d/h]
    dp = torch.bmm(dyh, v.transpose(1, 2))  # [KBh, T, T]
    torch.bmm(probs.transpose(1, 2), dyh, out=dheads[2])
    # softmax backward as P ⊙ (∂P − rowsum(∂P ⊙ P)): 16 µs against 55 for ATen's kernel on rows of 8
    ds = dp.sub_((dp * probs).sum(-1, keepdim=True)).mul_(probs)
    scale = dh**-0.5
    torch.baddbmm(dheads[0], ds, k, beta=0, alpha=scale, out=dheads[0])
    torch.baddbmm(dheads[1], ds.transpose(1, 2), q, beta=0, alpha=scale, out=dheads[1])
    return dheads.view(3, k_ * batch, h, t, dh).permute(1, 3, 0, 2, 4).reshape(k_, m, 3 * d)  # [K, M, 3d]


_ATTENTION = {  # per form: the attention core and its backward
    "gpu": (_fused_attention, _fused_attention_backward),
    "cpu": (_written_attention, _written_attention_backward),
}


def _attention_forward(st: Styles, u, p, batch: int, keep: bool):
    """softmax(QKᵀ/√d_h + mask)·V per head (the core of the device's :func:`block_form`), then the
    out-projection, on u [K, M = B·T, d]."""
    core = block_form(u.device)
    qkv = _linear(u, p["qkv_w"], p["qkv_b"])  # [K, M, 3d]
    y, saved = _ATTENTION[core][0](st, qkv, batch, keep)  # [K, M, d]
    return _linear(y, p["out_w"], p["out_b"]), (u, core, saved, y)


def _attention_backward(st: Styles, df, p, saved, tape: Tape):
    u, core, inner, y = saved
    tape.add("out", x=y, dy=df)
    dy = torch.bmm(df, p["out_wT"])  # [K, M, d]
    dqkv = _ATTENTION[core][1](dy, inner)  # [K, M, 3d]
    tape.add("qkv", x=u, dy=dqkv)
    return torch.bmm(dqkv, p["qkv_wT"])  # [K, M, d]


# ---- one sublayer, one block --------------------------------------------------------------------


def _sublayer_forward(st: Styles, x, c, sub: str, branch, keep: bool):
    """y of one residual sublayer (the module docstring's four lines) and what its backward needs; ``c``:
    the layer's :func:`coefficients`."""
    u, pre = x, None
    if st.pre is not None:
        u, pre = _norm_at(st.pre, x, c[f"{sub}_pre_w"], c[f"{sub}_pre_b"])
    f, inner = branch(u)
    gate = c.get(f"{sub}_gate")
    if gate is not None:
        s = torch.addcmul(x if st.alpha is None else x * st.alpha, gate, f)
    else:
        s = x + f if st.alpha is None else x * st.alpha + f  # not addcmul: its CPU kernel fuses a·b + c (FMA)
    y, post = s, None
    if st.post is not None:
        y, post = _norm_at(st.post, s, c[f"{sub}_post_w"], c[f"{sub}_post_b"])
    return y, ((pre, inner, f, gate, post) if keep else None)


def _sublayer_backward(st: Styles, dy, c, sub: str, branch_backward, saved, tape: Tape):
    """∂L/∂x of one sublayer given ∂L/∂y; what its parameters' gradients need goes on the tape."""
    pre, inner, f, gate, post = saved
    ds = dy
    if post is not None:
        tape.add(f"{sub}_post", xhat=post[1], dy=dy)
        ds = _norm_at_backward(st.post, dy, c[f"{sub}_post_w"], post)
    if gate is not None:
        tape.add(f"{sub}_gate", f=f, ds=ds)
    du = branch_backward(ds if gate is None else ds * gate, inner, tape)
    if pre is not None:
        tape.add(f"{sub}_pre", xhat=pre[1], dy=du)
        du = _norm_at_backward(st.pre, du, c[f"{sub}_pre_w"], pre)
    return du + ds if st.alpha is None else (ds * st.alpha).add_(du)  # rounded as the forward's α·x + f


def sequence_length(x: torch.Tensor, batch: Count) -> int:
    """T of a stream x [K, M = B·T, d] holding ``batch`` = B sequences; a ValueError naming ``batch`` where B does
    not divide M (the attention and the compiled kernels would read the rows as sequences of the wrong length)."""
    rows = x.shape[1] if x.dim() == 3 else None
    if rows is None or rows % batch:
        raise ValueError(
            f"batch={batch} must divide the stream's rows M = B·T (x [K, M, d], got shape {tuple(x.shape)}): "
            "give the number of sequences the rows hold"
        )
    return rows // batch


def block_forward(st: Styles, x, p: dict, batch: Count, keep: bool = False, c: dict | None = None):
    """One block on x [K, M, d] with layer parameters ``p`` (views [K, r, c]) and their
    :func:`coefficients` ``c`` (computed here when not given); ``keep``: also return what
    :func:`block_backward` needs."""
    sequence_length(x, batch)
    c = coefficients(st, p) if c is None else c
    saved = {}
    if "qkv_w" in p:
        x, saved["attn"] = _sublayer_forward(
            st, x, c, "attn", lambda u: _attention_forward(st, u, p, batch, keep), keep
        )
    x, saved["ffn"] = _sublayer_forward(st, x, c, "ffn", lambda u: _ffn_forward(st, u, p), keep)
    return x, saved


def block_backward(st: Styles, dy, p: dict, c: dict, saved: dict, tape: Tape):
    """∂L/∂x of one block given ∂L/∂y [K, M, d]; what its parameters' gradients need goes on ``tape``."""
    dx = _sublayer_backward(st, dy, c, "ffn", lambda df, s, tape: _ffn_backward(st, df, p, s, tape), saved["ffn"], tape)
    if "attn" in saved:
        dx = _sublayer_backward(
            st, dx, c, "attn", lambda df, s, tape: _attention_backward(st, df, p, s, tape), saved["attn"], tape
        )
    return dx


def _stacked(tape: Tape, key: str) -> torch.Tensor:
    """The tape's tensors under ``key`` as one [N, K, M, c], layer 0 first, in a buffer reused from step to
    step (:func:`_reused`); one layer's as it is, [K, M, c]."""
    layers = tape[key][::-1]
    if len(layers) == 1:
        return layers[0]
    return torch.stack(layers, out=_scratch(tape, key, (len(layers), *layers[0].shape)))


def _product(tape: Tape, key: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a ⊙ b, for all layers [N, K, M, c] in a buffer reused from step to step."""
    return torch.mul(a, b, out=_scratch(tape, f"{key}:product", a.shape)) if a.dim() == 4 else a * b


def _scratch(tape: Tape, key: str, shape: tuple) -> torch.Tensor:
    """A buffer for ``key`` kept on the tape's owner (a parameter) between steps: at a thousand blocks these
    are hundreds of MB, which a new allocation each step gets from the OS page by page on the CPU."""
    return _reused(tape.owner, f"_tape_{key}", tuple(shape), tape.owner.dtype)


def _bulk_gradients(st: Styles, tape: Tape, grads: dict) -> None:
    """Every block parameter's gradient, for the N layers on the tape at once, into ``grads`` ([N, K, r, c];
    one layer's, [K, r, c], where the tape holds one):

    ∂L/∂W = xᵀ ∂L/∂y (one ``bmm`` over N·K),  ∂L/∂b = Σ_m ∂L/∂y,
    ∂L/∂γ = Σ_m ∂L/∂y ⊙ x̂ and ∂L/∂β = Σ_m ∂L/∂y at the members' LN position (0 for a member without it),
    ∂L/∂g = Σ ∂L/∂s ⊙ f for ReZero's members (0 for the rest)."""
    for w in ("qkv", "out", "fc1", "fc2"):
        if f"{w}:x" in tape:
            x, dy = _stacked(tape, f"{w}:x"), _stacked(tape, f"{w}:dy")  # [(N,) K, M, r], [(N,) K, M, c]
            m, r = x.shape[-2:]
            gw = grads[f"{w}_w"]
            torch.bmm(x.view(-1, m, r).transpose(1, 2), dy.view(-1, m, dy.shape[-1]), out=gw.view(-1, r, gw.shape[-1]))
            torch.sum(dy, -2, keepdim=True, out=grads[f"{w}_b"])
    for sub in ("attn", "ffn"):
        _norm_gradients(tape, sub, grads)
        if f"{sub}_gate:f" in tape:
            ds, f = _stacked(tape, f"{sub}_gate:ds"), _stacked(tape, f"{sub}_gate:f")
            g = torch.sum(_product(tape, f"{sub}_gate", ds, f), (-2, -1), keepdim=True, out=grads[f"{sub}_gate"])
            if st.gated is not True:
                g.mul_(st.gated[0])


def _norm_gradients(tape: Tape, sub: str, grads: dict) -> None:
    """∂L/∂γ = Σ_m ∂L/∂y ⊙ x̂ and ∂L/∂β = Σ_m ∂L/∂y of ``sub``'s LayerNorm, each member's from the position
    (pre or post) where its LN sits, 0 for a member without one."""
    parts = {}
    for where, members in tape.members.items():
        if f"{sub}_{where}:dy" in tape:
            dy, xhat = _stacked(tape, f"{sub}_{where}:dy"), _stacked(tape, f"{sub}_{where}:xhat")
            parts[where] = (members, _product(tape, f"{sub}_{where}", dy, xhat), dy)
    gw, gb = grads.get(f"{sub}_norm_w"), grads.get(f"{sub}_norm_b")
    if len(parts) == 1 and next(iter(parts.values()))[0] is None:  # every member's LN sits here: straight in
        _, products, dy = next(iter(parts.values()))
        torch.sum(products, -2, keepdim=True, out=gw)
        torch.sum(dy, -2, keepdim=True, out=gb)
    elif parts:
        _at_positions([(members, products.sum(-2, keepdim=True)) for members, products, _ in parts.values()], gw)
        _at_positions([(members, dy.sum(-2, keepdim=True)) for members, _, dy in parts.values()], gb)


def _at_positions(pieces: list, out: torch.Tensor) -> None:
    """``out`` ← per member the value of its position: ``pieces`` [(members, value [N, K, 1, d])], members a
    bool [K, 1, 1], disjoint; a member in none gets 0 (it has no LayerNorm there, and its slice
    trains to nothing)."""
    (members, value), *others = pieces
    rest = value.new_zeros(())
    for other, other_value in others:
        rest = torch.where(other, other_value, rest)
    torch.where(members, value, rest, out=out)


# the blocks' weight matrices, stored [.., in, out] (what DeepNet's analysis scales)
MATRICES = ("qkv_w", "out_w", "fc1_w", "fc2_w")


def _layers(names, tensors) -> list[dict[str, torch.Tensor]]:
    """Per layer l, {name: tensor[l]} (one ``unbind`` per tensor)."""
    return [dict(zip(names, views, strict=True)) for views in zip(*(t.unbind(0) for t in tensors), strict=True)]


class BlocksFunction(torch.autograd.Function):
    """x_N of x_0 [K, M, d] through the N blocks whose parameters are ``params`` ([N, K, r, c], in
    the order of ``names``); one autograd node, backward per layer as the module docstring writes it,
    the parameters' gradients summed per layer or for all layers at once at its end (:func:`block_form`)."""

    @staticmethod
    def forward(ctx, st: Styles, names: tuple, batch: int, x, *params):
        ctx.names = names
        if compiled_usable(st, names, x, params):  # the same formulas, compiled
            y, ctx.fused = compiled_forward(st, names, params, x, batch, keep=True)
            ctx.params = params
            return y
        ctx.fused = None
        layers = _layers(names, params)
        ctx.stacked = dict(zip(names, params, strict=True))
        every = coefficients(st, ctx.stacked)  # [N, K, ...] each, once per step
        coeffs = _layers(tuple(every), every.values()) if every else [{} for _ in layers]
        saved = []
        for p, c in zip(layers, coeffs, strict=True):
            x, s = block_forward(st, x, p, batch, keep=True, c=c)
            saved.append(s)
        ctx.st, ctx.layers, ctx.coeffs, ctx.saved = st, layers, coeffs, saved
        ctx.shapes = [(t.shape, t.dtype, t.device) for t in params]
        return x

    @staticmethod
    def backward(ctx, dx):
        if ctx.fused is not None:
            dx, grads = compiled_backward(ctx.names, ctx.params, ctx.fused, dx)
            ctx.fused = ctx.params = None
            return (None, None, None, dx, *grads)
        tape = Tape(ctx.st, ctx.stacked[ctx.names[0]])
        dx = dx.contiguous()
        grads = {n: torch.empty(s, dtype=dt, device=dev) for n, (s, dt, dev) in zip(ctx.names, ctx.shapes, strict=True)}
        per_layer = block_form(dx.device) == "cpu"  # each layer's gradients while its tensors are in cache
        layer_grads = _layers(ctx.names, grads.values()) if per_layer else None
        matrices = [n for n in ctx.names if n in MATRICES]
        transposed = _layers([f"{n}T" for n in matrices], [ctx.stacked[n].transpose(2, 3) for n in matrices])
        for i in reversed(range(len(ctx.layers))):
            p = {**ctx.layers[i], **transposed[i]}  # Wᵀ of every layer: one transpose per step, not per block
            dx = block_backward(ctx.st, dx, p, ctx.coeffs[i], ctx.saved[i], tape)
            ctx.saved[i] = None  # what the tape does not hold of layer i is freed
            if per_layer:
                _bulk_gradients(ctx.st, tape, layer_grads[i])
                tape.clear()
        if not per_layer:
            one = len(ctx.layers) == 1  # the tape holds each tensor as it is, unstacked
            _bulk_gradients(ctx.st, tape, _layers(ctx.names, grads.values())[0] if one else grads)  # all written
        return (None, None, None, dx, *(grads[n] for n in ctx.names))


def run_blocks(st: Styles, names: Sequence[str], params: list, x: torch.Tensor, batch: Count) -> torch.Tensor:
    """x_N of x_0 [K, M, d]: one autograd node where gradients are wanted, else the plain forward."""
    sequence_length(x, batch)
    if torch.is_grad_enabled() and (x.requires_grad or any(t.requires_grad for t in params)):
        return BlocksFunction.apply(st, tuple(names), batch, x, *params)
    if compiled_usable(st, names, x, params):
        return compiled_forward(st, names, params, x, batch, keep=False)[0]
    with torch.no_grad():
        for p in _layers(names, params):
            x, _ = block_forward(st, x, p, batch)
    return x


ENV_SWITCH = "DEEPNOTES_FUSED"  # "0": never the compiled kernels; "all": wherever they can run; else where they win
# the parameter slots of blocks.cpp, in its order (a stack without a piece passes a null pointer)
SLOTS = (
    "attn_norm_w",
    "attn_norm_b",
    "attn_gate",
    "qkv_w",
    "qkv_b",
    "out_w",
    "out_b",
    "ffn_norm_w",
    "ffn_norm_b",
    "ffn_gate",
    "fc1_w",
    "fc1_b",
    "fc2_w",
    "fc2_b",
)
_SUFFIX = {torch.float32: "f32", torch.float64: "f64"}
# the most memory one stack's forward pass keeps for its backward as intermediates; past it, only the
# layers' inputs (tests/core/test_fused.py runs both ways)
KEEP_LIMIT_BYTES = 1 << 30


class Layout(ctypes.Structure):
    """blocks.cpp's ``Layout``: the stack's sizes and switches."""

    _fields_ = [
        (name, ctypes.c_int64)
        for name in (
            "n_layers",
            "members",
            "tokens",
            "d",
            "d_ff",
            "seq",
            "heads",
            "attention",
            "causal",
            "gelu",
            "threads",
            "kept",
        )
    ] + [("eps", ctypes.c_double)]


class AdamInBackward(ctypes.Structure):
    """blocks.cpp's ``AdamInBackward``: m and v per slot (null: not stepped), the members' rates, the
    constants."""

    _fields_ = [
        ("m", ctypes.c_void_p * len(SLOTS)),
        ("v", ctypes.c_void_p * len(SLOTS)),
        ("lr", ctypes.POINTER(ctypes.c_double)),
    ] + [(name, ctypes.c_double) for name in ("b1", "b2", "eps", "bc1", "bc2")]


@dataclass
class AdamStep:
    """One Adam step that the compiled backward pass may apply to block parameters as it computes
    their gradients (one pass over a layer's θ, m, v while its gradient is in cache, no gradient
    written to memory): ``states`` name → (θ, m, v); member k at rate ``lrs[k]``; step ``t`` ≥ 1.
    The optimizer attaches it to each θ as ``_adam_step`` before the backward pass
    (:meth:`deepnotes.core.optim.EnsembleOptimizer.arm`); :func:`backward` adds the names it
    stepped to ``done`` and leaves their gradient None."""

    states: dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    lrs: list[float]
    betas: tuple[float, float]
    eps: Positive
    t: NonNegativeCount
    done: set[str] = field(default_factory=set)


def _compiled(tensors) -> bool:
    """CPU, float32 or float64, contiguous tensors of one dtype, the compiled path on and built, and no
    PyTorch dispatch mode watching (a FLOP or operator counter, :mod:`deepnotes.cost.model`: it sees the
    PyTorch path's operations, which the compiled loops would hide from it)."""
    dtype = tensors[0].dtype
    return (
        dtype in _SUFFIX
        and all(t.device.type == "cpu" and t.dtype == dtype and t.is_contiguous() for t in tensors)
        and os.environ.get(ENV_SWITCH, "1") != "0"
        and _get_current_dispatch_mode() is None
        and kernels.library() is not None
    )


# The compiled path's limit (benchmarks/bench_kernel_shapes.py; RESULTS.md, 2026-11-27): the forward's matrix-product
# FLOPs of one member's layer, 2·M·(4d² + 2d·d_ff) with attention. Below it a layer's products are small enough
# that PyTorch's per-operation dispatch costs more than the kernels' register tiles lose to its BLAS; past it the
# BLAS of the PyTorch path wins (at 1024 tokens of width 64 and d_ff 256, BERT's MLM runs, 1.0e8, it is 15–29 %
# faster on an AVX2 build). Measured on x86-64-v3 and native (AVX-512) builds over 127 shapes (120 of 24 blocks:
# 8–1024 tokens, widths 16–128, 1–16 members, ReLU and GELU; and the chapters' own): at or below 6·10⁷ the
# compiled path was nowhere more than 10 % slower (the measurements' spread), and up to 18× faster.
COMPILED_LAYER_FLOPS = 6e7


def layer_flops(tokens: Count, d: Count, d_ff: Count, attention: bool) -> int:
    """The forward's matrix-product FLOPs of one member's block: 2·M·(4d² + 2·d·d_ff) with attention
    (Q, K, V and the output projection), 2·M·2·d·d_ff without."""
    return 2 * tokens * ((4 * d * d if attention else 0) + 2 * d * d_ff)


def compiled_wins(tokens: Count, d: Count, d_ff: Count, attention: bool) -> bool:
    """Whether the compiled blocks are the faster path for blocks of this shape: :func:`layer_flops`
    at most :data:`COMPILED_LAYER_FLOPS`. A rule stated here, not a timing taken at run time, so that
    results do not depend on the machine's load."""
    return layer_flops(tokens, d, d_ff, attention) <= COMPILED_LAYER_FLOPS


def compiled_usable(st, names: Sequence[str], x: torch.Tensor, params) -> bool:
    """Whether the compiled blocks run this stack (parameters ``params`` named ``names``, x [K, M, d]):
    per-member flags for its K members, what :func:`_compiled` asks, and blocks small enough that the
    kernels are the faster path (:func:`compiled_wins`) unless ``DEEPNOTES_FUSED=all`` asks for them
    wherever they can run."""
    tensors = dict(zip(names, params, strict=True))
    if x.dim() != 3 or "fc1_w" not in tensors:
        return False
    k_, m, d = x.shape
    small = compiled_wins(m, d, tensors["fc1_w"].shape[-1], "qkv_w" in tensors)
    if os.environ.get(ENV_SWITCH) != "all" and not small:
        return False
    return (
        st.flags is not None
        and len(st.flags["alpha"]) == k_
        and x.device.type == "cpu"
        and x.dtype == params[0].dtype
        and _compiled(list(params))
    )  # x: any layout


def _layout(st, params: dict, x: torch.Tensor, batch: int) -> Layout:
    k_, m, d = x.shape
    n = params["fc1_w"].shape[0]
    return Layout(
        n_layers=n,
        members=k_,
        tokens=m,
        d=d,
        d_ff=params["fc1_w"].shape[-1],
        seq=sequence_length(x, batch),
        heads=st.n_heads,
        attention=int("qkv_w" in params),
        causal=int(st.causal),
        gelu=int(st.activation == "gelu"),
        threads=torch.get_num_threads(),
        eps=LN_EPS,
    )


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
    count = kernels.library().deepnotes_blocks_kept_entries
    count.restype = ctypes.c_int64
    return max(
        count(ctypes.byref(layout), ctypes.c_uint8(a), ctypes.c_uint8(b), ctypes.c_uint8(c))
        for a, b, c in zip(pre.tolist(), post.tolist(), gated.tolist(), strict=True)
    )


def compiled_forward(st, names, params, x: torch.Tensor, batch: Count, keep: bool):
    """x_N [K, M, d] of x_0 through the N blocks; with ``keep`` also what the backward pass needs:
    every layer's intermediates [N, K, kept] where they fit in :data:`KEEP_LIMIT_BYTES` (the
    backward then only reads them), else every layer's input [N, K, M, d] (the backward recomputes
    each layer from it: the same numbers, the forward computed twice, a tenth of the memory)."""
    tensors = dict(zip(names, params, strict=True))
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
    getattr(kernels.library(), f"deepnotes_blocks_forward_{_SUFFIX[x.dtype]}")(
        ctypes.byref(layout),
        _pointers(tensors),
        *(ctypes.c_void_p(t.data_ptr()) for t in members),
        ctypes.c_void_p(y.data_ptr()),
        ctypes.c_void_p(saved.data_ptr() if keep else None),
    )
    return y, (layout, members, saved)


def _storage_count(t: torch.Tensor) -> int | None:
    """PyTorch's (private) count of the references to t's memory; None where it is missing."""
    count = getattr(torch._C, "_storage_Use_Count", None)
    if count is None:
        return None
    storage = t.untyped_storage()  # held while counting
    return count(storage._cdata)


_ALONE = _storage_count(torch.empty(1))  # the count of a tensor that shares its memory with none


def _reused(owner: torch.Tensor, attr: str, shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    """An uninitialized tensor of this shape: the one kept on ``owner`` under ``attr`` by the last call
    where nothing else holds it any more and its shape matches, else a new one (kept there in turn).
    Hundreds of MB allocated anew each step come from the OS page by page."""
    buffer = getattr(owner, attr, None)
    if (
        buffer is None
        or buffer.shape != shape
        or buffer.dtype != dtype
        or _ALONE is None
        or _storage_count(buffer) != _ALONE
    ):
        buffer = torch.empty(shape, dtype=dtype, device=owner.device)
        setattr(owner, attr, buffer)
    return buffer.view_as(buffer)


def _gradient_buffer(p: torch.Tensor) -> torch.Tensor:
    """A tensor for p's gradient: p's buffer from the last backward pass where nothing holds that
    pass's gradient any more (p.grad is None and no view of the buffer is alive), else a new one.

    A thousand-block stack's gradients fill hundreds of MB; a new allocation each step comes from the
    OS page by page (measured: 1.0 s of a 2.4 s backward pass at N = 1000, 14 members). The buffer is
    handed to autograd as a fresh view, which autograd adopts as p.grad without copying it."""
    if p.grad is not None:  # autograd adds to an existing gradient: a new tensor
        return torch.empty_like(p)
    return _reused(p, "_fused_grad", p.shape, p.dtype)


def _armed(tensors: dict) -> tuple[AdamStep | None, list[str]]:
    """The AdamStep attached to these parameters and the names it can step here (same dtype, contiguous)."""
    step = next((getattr(p, "_adam_step", None) for p in tensors.values() if getattr(p, "_adam_step", None)), None)
    if step is None:
        return None, []
    names = [
        n
        for n, p in tensors.items()
        if getattr(p, "_adam_step", None) is step
        and n in step.states
        and step.states[n][0] is p
        and _compiled([p, *step.states[n][1:]])
    ]
    return step, names


def _adam_in_backward(step: AdamStep, names: list[str]) -> tuple[AdamInBackward, ctypes.Array]:
    b1, b2 = step.betas
    lr = (ctypes.c_double * len(step.lrs))(*step.lrs)
    states = {n: step.states[n] for n in names}
    return AdamInBackward(
        _pointers({n: m for n, (_, m, _) in states.items()}),
        _pointers({n: v for n, (_, _, v) in states.items()}),
        ctypes.cast(lr, ctypes.POINTER(ctypes.c_double)),
        b1,
        b2,
        step.eps,
        1 - b1**step.t,
        1 - b2**step.t,
    ), lr


def compiled_backward(names, params, saved, dy: torch.Tensor):
    """(∂L/∂x_0, the parameters' gradients in ``names`` order) given ∂L/∂x_N [K, M, d] and what
    :func:`forward` kept. Parameters carrying an :class:`AdamStep` are stepped in place instead and
    their gradient is None."""
    layout, members, inputs = saved
    tensors = dict(zip(names, params, strict=True))
    step, stepped = _armed(tensors)
    grads = {name: _gradient_buffer(p) for name, p in tensors.items() if name not in stepped}  # every entry written
    adam, lr = _adam_in_backward(step, stepped) if stepped else (None, None)
    dx = dy.detach().contiguous().clone()
    getattr(kernels.library(), f"deepnotes_blocks_backward_{_SUFFIX[dy.dtype]}")(
        ctypes.byref(layout),
        _pointers(tensors),
        _pointers(grads),
        ctypes.byref(adam) if adam else None,
        *(ctypes.c_void_p(t.data_ptr()) for t in members),
        ctypes.c_void_p(inputs.data_ptr()),
        ctypes.c_void_p(dx.data_ptr()),
    )
    del lr  # kept alive through the call
    if step is not None:
        step.done.update(stepped)
    return dx, [grads.get(name) for name in names]


def compiled_adam_usable(p: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> bool:
    """Whether :func:`compiled_adam` can step this tensor (what :func:`_compiled` asks)."""
    return _compiled([p, g, m, v])


def compiled_adam(
    p: torch.Tensor,
    g: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    lrs: list[float],
    member_axis: NonNegativeCount,
    betas: tuple[float, float],
    eps: Positive,
    t: NonNegativeCount,
) -> None:
    """One Adam step of p [.., K, ...] in place (m, v too), member k at rate ``lrs[k]``, step ``t`` ≥ 1:
    m ← m + (1 − β1)(g − m), v ← β2 v + (1 − β2) g², θ ← θ − η_k/(1 − β1^t) · m/(√v/√(1 − β2^t) + ε)."""
    rows = p.shape[0] * p.shape[1] if member_axis == 1 else p.shape[0]  # row i: member i % K
    b1, b2 = betas
    lr = (ctypes.c_double * len(lrs))(*lrs)
    getattr(kernels.library(), f"deepnotes_adam_{_SUFFIX[p.dtype]}")(
        ctypes.c_int64(rows),
        ctypes.c_int64(p.numel() // rows),
        ctypes.c_int64(len(lrs)),
        *(ctypes.c_void_p(t_.data_ptr()) for t_ in (p, g, m, v)),
        lr,
        ctypes.c_double(b1),
        ctypes.c_double(b2),
        ctypes.c_double(eps),
        ctypes.c_double(1 - b1**t),
        ctypes.c_double(1 - b2**t),
        ctypes.c_int64(torch.get_num_threads()),
    )
