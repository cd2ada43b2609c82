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

Backward, given ∂L/∂y (LN backward as :mod:`deepnotes.core.norms` writes it; γ, β per member):

    ∂L/∂s = LNᵀ(∂L/∂y) if post_k else ∂L/∂y,     ∂L/∂γ = Σ_m ∂L/∂y ⊙ ŝ,   ∂L/∂β = Σ_m ∂L/∂y
    ∂L/∂f = g_k·∂L/∂s,   ∂L/∂g_k = Σ ∂L/∂s ⊙ f,   ∂L/∂x = α_k·∂L/∂s + (LNᵀ(∂L/∂u) if pre_k else ∂L/∂u)
    FFN   h = u W₁ + b₁, a = φ(h), f = a W₂ + b₂:   ∂W₂ = aᵀ∂f, ∂a = ∂f W₂ᵀ, ∂h = φ'(h) ⊙ ∂a, ∂W₁ = uᵀ∂h, ∂u = ∂h W₁ᵀ
    attn  P = softmax(QKᵀ/√d_h + mask), Y = PV:     ∂P = ∂Y Vᵀ, ∂V = Pᵀ∂Y, ∂S = P ⊙ (∂P − rowsum(∂P ⊙ P)),
                                                     ∂Q = ∂S K/√d_h, ∂K = ∂Sᵀ Q/√d_h

On the CPU, where a C++ compiler is at hand, :class:`BlocksFunction` hands the same formulas to
compiled loops (:mod:`deepnotes.core.fused`, ``kernels/blocks.cpp``); this module is then the
specification they are tested against, and the path on CUDA or without a compiler.

Members that do not use a piece (a LayerNorm, a gate) see it masked out by a 0/1 blend, which
passes their gradient nothing: those slices stay exactly 0 and train to nothing.
``tests/core/test_engine.py`` checks every gradient against autograd on the same stack and against
the reference model (float64, relative 1e-10).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from deepnotes.core import fused

LN_EPS = 1e-5                                   # nn.LayerNorm's default, as in the reference
SOFTMAX_VECTOR = 16                             # floats per vector of the CPU softmax kernel
PADDED_SOFTMAX_WIDTHS = range(7, SOFTMAX_VECTOR)   # row widths padded to one vector (see softmax)


Mask = "bool | tuple[torch.Tensor, torch.Tensor] | None"


@dataclass(frozen=True)
class Styles:
    """Each member's block, as data. A mask is None (no member has the piece), True (every member
    has it) or (m, 1 − m), two float [K, 1, 1] tensors of 0s and 1s: a blend a·(1 − m) + b·m picks
    a or b per member exactly (for finite values: a diverged member's NaN stays in its own slice),
    and costs less than ``torch.where`` on the CPU (2.5 against 10 µs at K = 14, M = 32, d = 32)."""
    alpha: torch.Tensor | None      # the skip weight α_k [K, 1, 1] (None: 1 for every member)
    pre: Mask                       # LN on the sublayer's input (Pre-LN)
    post: Mask                      # LN on the sum (Post-LN, DeepNorm)
    gated: Mask                     # g_k is the member's trained gate (ReZero), else 1
    activation: str                 # the FFN's φ: relu | gelu
    n_heads: int
    causal: bool = True             # position i sees j ≤ i (the compiled path's score mask; here: bias)
    flags: dict | None = None       # per member, Python: alpha, pre, post, gated (the compiled path's data)


def mask_of(flags: list[bool], values: torch.Tensor) -> Mask:
    """A :class:`Styles` mask of per-member flags: ``flags`` (Python, to decide without reading the
    device) and the same as 0/1 ``values`` [K] in the parameters' dtype."""
    if not any(flags):
        return None
    if all(flags):
        return True
    m = values.view(-1, 1, 1)
    return m, 1 - m


def _blend(mask: Mask, other, chosen):
    """chosen where the mask is 1, other where it is 0 (mask not None)."""
    if mask is True:
        return chosen
    m, keep = mask
    return torch.addcmul(other * keep, chosen, m)


def softmax(scores: torch.Tensor) -> torch.Tensor:
    """softmax over the last dim. On the CPU in float32, rows of 7 to 15 entries are padded with
    −inf to 16 (exp(−inf) = 0 leaves every value as it was): PyTorch's CPU kernel takes a slow path
    for rows narrower than one 16-float vector. Measured on a 2-core CPU, [112, 8, 8]: 132 µs plain,
    20 µs padded; at 16 and in float64 padding does not pay."""
    t = scores.shape[-1]
    if scores.device.type == "cpu" and scores.dtype == torch.float32 and t in PADDED_SOFTMAX_WIDTHS:
        return torch.softmax(F.pad(scores, (0, SOFTMAX_VECTOR - t), value=float("-inf")), dim=-1)[..., :t]
    return torch.softmax(scores, dim=-1)


def _linear(x, w, b):
    """x W + b per member: x [K, M, r], W [K, r, c], b [K, 1, c] (a ``bmm`` and an in-place add:
    ``baddbmm`` broadcasts b into its output first, 12 µs of 51 at K = 14, M = 32, 32 → 96)."""
    return torch.bmm(x, w).add_(b)


def _linear_backward(dy, x, w, gw, gb):
    """∂L/∂x = ∂L/∂y Wᵀ; ∂L/∂W = xᵀ ∂L/∂y and ∂L/∂b = Σ_m ∂L/∂y written into gw, gb."""
    torch.bmm(x.transpose(1, 2), dy, out=gw)
    torch.sum(dy, 1, keepdim=True, out=gb)
    return torch.bmm(dy, w.transpose(1, 2))


# ---- LayerNorm with a per-member affine ---------------------------------------------------------

def norm_forward(x, w, b):
    """LN(x)·γ + β per member: x [K, M, d], γ and β [K, 1, d] → (y, (x, x̂, mean, rstd))."""
    xhat, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], None, None, LN_EPS)
    return torch.addcmul(b, xhat, w), (x, xhat, mean, rstd)


def _norm_backward(dy, w, saved, gw, gb, accumulate: bool):
    """∂L/∂x of LN; ∂L/∂γ = Σ_m ∂L/∂y ⊙ x̂ and ∂L/∂β = Σ_m ∂L/∂y into gw, gb [K, 1, d] (added where
    ``accumulate``). ``dy`` is already zero for members without this LN."""
    x, xhat, mean, rstd = saved
    if accumulate:
        gw.add_((dy * xhat).sum(1, keepdim=True))
        gb.add_(dy.sum(1, keepdim=True))
    else:
        torch.sum(dy * xhat, 1, keepdim=True, out=gw)
        torch.sum(dy, 1, keepdim=True, out=gb)
    return torch.ops.aten.native_layer_norm_backward(dy * w, x, x.shape[-1:], mean, rstd, None, None,
                                                     [True, False, False])[0]


# ---- the two branches ---------------------------------------------------------------------------

def _ffn_forward(st: Styles, u, p):
    """φ(u W₁ + b₁) W₂ + b₂ on u [K, M, d]."""
    h = _linear(u, p["fc1_w"], p["fc1_b"])                                             # [K, M, d_ff]
    a = torch.relu(h) if st.activation == "relu" else F.gelu(h)
    return _linear(a, p["fc2_w"], p["fc2_b"]), (u, h if st.activation == "gelu" else None, a)


def _ffn_backward(st: Styles, df, p, g, saved):
    u, h, a = saved
    da = _linear_backward(df, a, p["fc2_w"], g["fc2_w"], g["fc2_b"])                    # [K, M, d_ff]
    dh = torch.ops.aten.threshold_backward(da, a, 0) if h is None else torch.ops.aten.gelu_backward(da, h)
    return _linear_backward(dh, u, p["fc1_w"], g["fc1_w"], g["fc1_b"])                  # [K, M, d]


def _attention_forward(st: Styles, u, p, batch: int, bias):
    """softmax(QKᵀ/√d_h + mask)·V per head, then the out-projection, on u [K, M = B·T, d]."""
    k_, m, d = u.shape
    h, t = st.n_heads, m // batch
    qkv = _linear(u, p["qkv_w"], p["qkv_b"])                                           # [K, M, 3d]
    heads = qkv.view(k_ * batch, t, 3, h, d // h).permute(2, 0, 3, 1, 4).reshape(3, -1, t, d // h)  # [3, KBh, T, d/h]
    q, k, v = heads.unbind(0)
    probs = softmax(torch.baddbmm(bias, q, k.transpose(1, 2), alpha=(d // h) ** -0.5))  # [KBh, T, T]
    y = torch.bmm(probs, v).view(k_, batch, h, t, d // h).permute(0, 1, 3, 2, 4).reshape(k_, m, d)  # [K, M, d]
    return _linear(y, p["out_w"], p["out_b"]), (u, heads, probs, y)


def _attention_backward(st: Styles, df, p, g, saved):
    u, heads, probs, y = saved
    k_, m, d = u.shape
    h, dh = st.n_heads, d // st.n_heads
    kb, t = heads.shape[1] // h, heads.shape[2]
    q, k, v = heads.unbind(0)
    dy = _linear_backward(df, y, p["out_w"], g["out_w"], g["out_b"])                    # [K, M, d]
    dyh = dy.view(k_, kb // k_, t, h, dh).permute(0, 1, 3, 2, 4).reshape(-1, t, dh)    # [KBh, T, d/h]
    dheads = torch.empty_like(heads)                                                    # [3, KBh, T, d/h]
    dp = torch.bmm(dyh, v.transpose(1, 2))                                              # [KBh, T, T]
    torch.bmm(probs.transpose(1, 2), dyh, out=dheads[2])
    # softmax backward as P ⊙ (∂P − rowsum(∂P ⊙ P)): 16 µs against 55 for ATen's kernel on rows of 8
    ds = dp.sub_((dp * probs).sum(-1, keepdim=True)).mul_(probs)
    scale = dh ** -0.5
    torch.baddbmm(dheads[0], ds, k, beta=0, alpha=scale, out=dheads[0])
    torch.baddbmm(dheads[1], ds.transpose(1, 2), q, beta=0, alpha=scale, out=dheads[1])
    dqkv = dheads.view(3, kb, h, t, dh).permute(1, 3, 0, 2, 4).reshape(k_, m, 3 * d)    # [K, M, 3d]
    return _linear_backward(dqkv, u, p["qkv_w"], g["qkv_w"], g["qkv_b"])                # [K, M, d]


# ---- one sublayer, one block --------------------------------------------------------------------

def _sublayer_forward(st: Styles, x, p, sub: str, branch, keep: bool):
    """y of one residual sublayer (the module docstring's four lines) and what its backward needs."""
    u, pre = x, None
    if st.pre is not None:
        normed, pre = norm_forward(x, p[f"{sub}_norm_w"], p[f"{sub}_norm_b"])
        u = _blend(st.pre, x, normed)
    f, inner = branch(u)
    gate = None
    if st.gated is True:
        gate = p[f"{sub}_gate"]
    elif st.gated is not None:                                      # g_k·m_k + (1 − m_k): 1 off ReZero
        gate = torch.addcmul(st.gated[1], p[f"{sub}_gate"], st.gated[0])
    skip = x if st.alpha is None else x * st.alpha
    s = torch.addcmul(skip, gate, f) if gate is not None else skip + f
    y, post = s, None
    if st.post is not None:
        normed, post = norm_forward(s, p[f"{sub}_norm_w"], p[f"{sub}_norm_b"])
        y = _blend(st.post, s, normed)
    return y, ((pre, inner, f, gate, post) if keep else None)


def _masked(mask: Mask, dy):
    """(the part of ∂L/∂y that goes through the LN, the part that passes by)."""
    if mask is True:
        return dy, None
    return dy * mask[0], dy * mask[1]


def _sublayer_backward(st: Styles, dy, p, g, sub: str, branch_backward, saved):
    pre, inner, f, gate, post = saved
    w, gw, gb = p.get(f"{sub}_norm_w"), g.get(f"{sub}_norm_w"), g.get(f"{sub}_norm_b")
    ds = dy
    if post is not None:
        through, past = _masked(st.post, dy)
        ds = _norm_backward(through, w, post, gw, gb, False)
        if past is not None:
            ds = ds.add_(past)
    if gate is not None:
        dg = torch.sum(ds * f, (1, 2), keepdim=True, out=g[f"{sub}_gate"])
        if st.gated is not True:
            dg.mul_(st.gated[0])
    dx = ds if st.alpha is None else ds * st.alpha
    du = branch_backward(ds if gate is None else ds * gate, p, g, inner)
    if pre is not None:
        through, past = _masked(st.pre, du)
        dln = _norm_backward(through, w, pre, gw, gb, post is not None)
        du = dln if past is None else dln.add_(past)
    return dx.add_(du) if dx is not dy else dx + du


def block_forward(st: Styles, x, p: dict, batch: int, bias, keep: bool = False):
    """One block on x [K, M, d] with layer parameters ``p`` (views [K, r, c]); ``keep``: also return
    what :func:`block_backward` needs."""
    saved = {}
    if "qkv_w" in p:
        x, saved["attn"] = _sublayer_forward(st, x, p, "attn", lambda u: _attention_forward(st, u, p, batch, bias),
                                             keep)
    x, saved["ffn"] = _sublayer_forward(st, x, p, "ffn", lambda u: _ffn_forward(st, u, p), keep)
    return x, saved


def block_backward(st: Styles, dy, p: dict, g: dict, saved: dict):
    """∂L/∂x of one block given ∂L/∂y [K, M, d]; its parameter gradients written into ``g``."""
    dx = _sublayer_backward(st, dy, p, g, "ffn", lambda df, p, g, s: _ffn_backward(st, df, p, g, s), saved["ffn"])
    if "attn" in saved:
        dx = _sublayer_backward(st, dx, p, g, "attn", lambda df, p, g, s: _attention_backward(st, df, p, g, s),
                                saved["attn"])
    return dx


def _layers(names, tensors) -> list[dict[str, torch.Tensor]]:
    """Per layer l, {name: tensor[l]} (one ``unbind`` per tensor)."""
    return [dict(zip(names, views)) for views in zip(*(t.unbind(0) for t in tensors))]


class BlocksFunction(torch.autograd.Function):
    """x_N of x_0 [K, M, d] through the N blocks whose parameters are ``params`` ([N, K, r, c], in
    the order of ``names``); one autograd node, backward per layer as the module docstring writes it."""

    @staticmethod
    def forward(ctx, st: Styles, names: tuple, batch: int, bias, x, *params):
        ctx.names = names
        if fused.usable(st, x, params):          # the same formulas, compiled
            y, ctx.fused = fused.forward(st, names, params, x, batch, keep=True)
            ctx.params = params
            return y
        ctx.fused = None
        layers = _layers(names, params)
        saved = []
        for p in layers:
            x, s = block_forward(st, x, p, batch, bias, keep=True)
            saved.append(s)
        ctx.st, ctx.names, ctx.layers, ctx.saved = st, names, layers, saved
        ctx.shapes = [(t.shape, t.dtype, t.device) for t in params]
        return x

    @staticmethod
    def backward(ctx, dx):
        if ctx.fused is not None:
            dx, grads = fused.backward(ctx.names, ctx.params, ctx.fused, dx)
            ctx.fused = ctx.params = None
            return (None, None, None, None, dx, *grads)
        grads = [torch.empty(s, dtype=dt, device=dev) for s, dt, dev in ctx.shapes]
        glayers = _layers(ctx.names, grads)
        dx = dx.contiguous()
        for i in reversed(range(len(ctx.layers))):
            dx = block_backward(ctx.st, dx, ctx.layers[i], glayers[i], ctx.saved[i])
            ctx.saved[i] = None                                      # free layer i's activations
        return (None, None, None, None, dx, *grads)


def run_blocks(st: Styles, names: tuple, params: list, x: torch.Tensor, batch: int, bias) -> torch.Tensor:
    """x_N of x_0 [K, M, d]: one autograd node where gradients are wanted, else the plain forward."""
    if torch.is_grad_enabled() and (x.requires_grad or any(t.requires_grad for t in params)):
        return BlocksFunction.apply(st, tuple(names), batch, bias, x, *params)
    if fused.usable(st, x, params):
        return fused.forward(st, names, params, x, batch, keep=False)[0]
    with torch.no_grad():
        for p in _layers(names, params):
            x, _ = block_forward(st, x, p, batch, bias)
    return x
