"""The stacked-weight engine: K independent residual stacks of N blocks, run as one graph.

:mod:`deepnotes.core.models` is the readable specification: one ``nn.Module`` per block, layers built
in a loop. At a thousand blocks that model spends its time dispatching tens of thousands of tiny
operations, not computing. :class:`Stack` computes the same function with

* every block parameter of all N layers stored as one tensor ``[N, K, ...]`` (``unbind`` once per
  forward, so the backward pass stacks the N gradients into one tensor instead of materializing a
  full-size gradient per layer);
* the query, key and value projections fused into one batched matmul;
* K independent *members* along a leading axis: every matmul is a ``bmm`` over the members, so K
  models (different seeds, α, β, init std; different learning rates in
  :mod:`deepnotes.core.ensemble`) cost one pass of dispatch.

Member k of a :class:`Stack` built with the reference's weights gives the reference's loss and
gradients (``tests/core/test_engine.py``: float64, relative 1e-10, every norm style and block kind).
The block is the reference's, with α per member:

    post      x ← LN(x + F(x))          deepnorm  x ← LN(α_k·x + F(x))      pre   x ← x + F(LN(x))
    none      x ← x + F(x)              rezero    x ← x + g·F(x)            plain x ← F(x)
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.core.config import ModelConfig
from deepnotes.core.init import trunc_normal_
from deepnotes.core.rng import generator
from deepnotes.core.validate import positive_int

NORMED = ("post", "deepnorm", "pre")           # styles with a LayerNorm per sublayer
MATRICES = ("qkv_w", "out_w", "fc1_w", "fc2_w")  # the blocks' weight matrices (what DeepNet's analysis scales)
GATES = ("attn_gate", "ffn_gate")               # ReZero's gates
SOFTMAX_VECTOR = 16                             # floats per vector of the CPU softmax kernel
PADDED_SOFTMAX_WIDTHS = range(7, SOFTMAX_VECTOR)   # row widths padded to one vector (see Stack._softmax)
LN_EPS = 1e-5                                   # nn.LayerNorm's default, as in the reference


@dataclass(frozen=True)
class Slot:
    """Where a stacked parameter keeps its members, and how many reference tensors sit side by side
    in it. Every parameter is 2-D per member (vectors are rows [1, n], matrices are stored transposed,
    [in, out], so that x·Wᵀ is one ``baddbmm``); ``parts`` reference tensors are concatenated along
    the last dim (q, k and v: 3). LAMB's trust ratio and the per-tensor norms split them back."""
    member_axis: int      # 1 for block tensors [N, K, r, c], 0 for the rest [K, r, c]
    parts: int = 1


def graph_config(cfg: ModelConfig) -> ModelConfig:
    """What members must share to run as one graph: everything but α, β and the init std. Post-LN
    is DeepNorm at α = 1 (LN(1·x + F(x))), so Post-LN and DeepNorm members share one graph."""
    return replace(cfg, alpha=None, beta=None, init_std=None, norm="deepnorm" if cfg.norm == "post" else cfg.norm)


def xavier_std(fan_out: int, fan_in: int, gain: float = 1.0) -> float:
    """Xavier-normal std: gain·√(2/(fan_in + fan_out)) (``nn.init.xavier_normal_``)."""
    return gain * math.sqrt(2.0 / (fan_in + fan_out))


class Stack(nn.Module):
    """K residual stacks that share a graph (:func:`graph_config`), one per entry of ``cfgs``, each
    initialized from its own seed like :func:`deepnotes.core.models.build_model` would (same
    distributions; the draws are the engine's own)."""

    def __init__(self, cfgs: Sequence[ModelConfig], seeds: Sequence[int] | None = None, device=None,
                 dtype: torch.dtype | None = None):
        super().__init__()
        cfgs = list(cfgs)
        if not cfgs:
            raise ValueError("a Stack needs at least one member config, got none")
        shared = graph_config(cfgs[0])
        for i, cfg in enumerate(cfgs):
            if graph_config(cfg) != shared:
                raise ValueError(f"member {i} does not share member 0's graph (only alpha, beta, init_std and "
                                 f"post vs deepnorm may differ): {graph_config(cfg)} vs {shared}")
        seeds = list(range(len(cfgs))) if seeds is None else [int(s) for s in seeds]
        if len(seeds) != len(cfgs):
            raise ValueError(f"{len(seeds)} seeds for {len(cfgs)} member configs")
        self.cfg, self.cfgs, self.seeds = shared, tuple(cfgs), tuple(seeds)
        self.n_members, self.n_layers = len(cfgs), shared.n_layers
        self.mask_id = shared.vocab_size                       # encoders: one extra token, [MASK]
        dtype = dtype or torch.get_default_dtype()
        self.slots: dict[str, Slot] = {}
        for name, shape, parts in self._block_shapes():
            self._add(name, (self.n_layers, self.n_members, *shape), Slot(1, parts), device, dtype)
        for name, shape, parts in self._top_shapes():
            self._add(name, (self.n_members, *shape), Slot(0, parts), device, dtype)
        self._compiled_block, self._compile_works = None, False
        self._bias_cache: dict = {}
        self.register_buffer("alpha", torch.tensor([c.skip_alpha for c in cfgs], device=device, dtype=dtype))  # [K]
        self.reset_parameters()

    # ---- layout -------------------------------------------------------------------------------
    def _block_shapes(self):
        """(name, per-member shape, parts) of the block tensors, in the order of the forward pass."""
        c = self.cfg
        d, f = c.d_model, c.d_ff
        shapes = []
        for sub in self.sublayer_names:
            if c.norm in NORMED:
                shapes += [(f"{sub}_norm_w", (1, d), 1), (f"{sub}_norm_b", (1, d), 1)]
            if c.norm == "rezero":
                shapes += [(f"{sub}_gate", (1, 1), 1)]
            if sub == "attn":
                shapes += [("qkv_w", (d, 3 * d), 3), ("qkv_b", (1, 3 * d), 3), ("out_w", (d, d), 1), ("out_b", (1, d), 1)]
            else:
                shapes += [("fc1_w", (d, f), 1), ("fc1_b", (1, f), 1), ("fc2_w", (f, d), 1), ("fc2_b", (1, d), 1)]
        return shapes

    def _top_shapes(self):
        c = self.cfg
        d, v = c.d_model, c.vocab_size
        shapes = [("embed", (v + (0 if c.causal else 1), d), 1)]
        if not c.causal:
            shapes += [("positions", (c.max_len, d), 1), ("embed_norm_w", (1, d), 1), ("embed_norm_b", (1, d), 1)]
        if c.norm == "pre":
            shapes += [("final_norm_w", (1, d), 1), ("final_norm_b", (1, d), 1)]
        if c.head_transform:
            shapes += [("dense_w", (d, d), 1), ("dense_b", (1, d), 1), ("dense_norm_w", (1, d), 1),
                       ("dense_norm_b", (1, d), 1)]
        shapes += [("head_w", (d, v), 1), ("head_b", (1, v), 1)] if c.causal else [("head_bias", (1, v), 1)]
        return shapes

    def _add(self, name, shape, slot, device, dtype):
        self.register_parameter(name, nn.Parameter(torch.empty(shape, device=device, dtype=dtype)))
        self.slots[name] = slot

    @property
    def sublayer_names(self) -> tuple[str, ...]:
        return ("attn", "ffn") if self.cfg.block == "transformer" else ("ffn",)

    @property
    def matrix_names(self) -> list[str]:
        """The blocks' weight matrices (what DeepNet's analysis scales): q, k, v, out, fc1, fc2."""
        return [n for n in MATRICES if n in self.slots]

    @property
    def block_names(self) -> list[str]:
        return [n for n, s in self.slots.items() if s.member_axis == 1]

    def member(self, name: str, k: int, grad: bool = False) -> torch.Tensor:
        """Member k's slice of parameter ``name`` (``grad``: of its gradient): [N, ...] for block
        tensors, [...] otherwise."""
        t = getattr(self, name)
        return (t.grad if grad else t).select(self.slots[name].member_axis, k)

    # ---- initialization -----------------------------------------------------------------------
    @torch.no_grad()
    def reset_parameters(self) -> None:
        """Draw every member's weights from its own seed: Xavier-normal with gain β on v, out, fc1,
        fc2 (gain 1 on q, k), or BERT's N(0, std²) cut at ±2σ with ``init_std``; biases 0, norm gains
        1, gates 0; embeddings N(0, 1) (``init_std``: like every matrix). Draws are float32 on the
        CPU, then cast, so a seed gives the same weights on every device, and member k's weights
        depend on its own config and seed only."""
        for k, (cfg, seed) in enumerate(zip(self.cfgs, self.seeds)):
            gen, trunc = generator(seed), cfg.init_std is not None

            def fill(target: torch.Tensor, xavier_gain: float | None) -> None:
                """xavier_gain: the Xavier gain of a square-or-not [in, out] matrix; None: a table."""
                if trunc:
                    std = cfg.init_std
                elif xavier_gain is None:
                    std = 1.0                                    # unit-variance x_0, as the derivations assume
                else:
                    std = xavier_std(target.shape[-1], target.shape[-2], xavier_gain)
                draw = torch.empty(target.shape)
                target.copy_(trunc_normal_(draw, std, generator=gen) if trunc else draw.normal_(0.0, std, generator=gen))

            beta, d = cfg.branch_beta, cfg.d_model
            if cfg.block == "transformer":
                qkv = self.member("qkv_w", k)                    # [N, d, 3d]: columns q | k | v
                for i, gain in enumerate((1.0, 1.0, beta)):
                    fill(qkv[..., i * d:(i + 1) * d], gain)
                fill(self.member("out_w", k), beta)
            fill(self.member("fc1_w", k), beta)
            fill(self.member("fc2_w", k), beta)
            for name in ("embed", "positions"):
                if name in self.slots:
                    fill(self.member(name, k), None)
            for name in ("dense_w", "head_w"):
                if name in self.slots:
                    fill(self.member(name, k), 1.0)
        for name in self.slots:
            if name.endswith("norm_w"):
                getattr(self, name).fill_(1.0)
            elif name.endswith(("_b", "_bias", "_gate")):
                getattr(self, name).zero_()

    # ---- forward ------------------------------------------------------------------------------
    @staticmethod
    def _norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """LayerNorm with member-wise affine: x [K, M, d], w and b [K, 1, d]."""
        return torch.addcmul(b, F.layer_norm(x, x.shape[-1:], eps=LN_EPS), w)

    def _attention(self, x: torch.Tensor, p: dict, batch: int) -> torch.Tensor:
        """softmax(QKᵀ/√d_h + mask)·V per head, then the out-projection; x [K, M = B·T, d]. Three
        batched matmul-sized ops (scores with the causal mask as the ``baddbmm`` input, softmax, AV).
        Measured on a 2-core CPU at T = 16, 2 heads, d = 32, no grad: 28 µs against 63 µs for
        ``scaled_dot_product_attention`` with one member, 315 against 379 µs with eight."""
        k_, m, d = x.shape
        h, t = self.cfg.n_heads, m // batch
        qkv = torch.baddbmm(p["qkv_b"], x, p["qkv_w"])                                          # [K, M, 3d]
        q, k, v = qkv.view(k_ * batch, t, 3, h, d // h).permute(2, 0, 3, 1, 4).reshape(3, -1, t, d // h)  # [KBh, T, d/h]
        scores = torch.baddbmm(self._score_bias(t, x), q, k.transpose(1, 2), alpha=(d // h) ** -0.5)  # [KBh, T, T]
        y = torch.bmm(self._softmax(scores), v)                                                 # [KBh, T, d/h]
        y = y.view(k_, batch, h, t, d // h).permute(0, 1, 3, 2, 4).reshape(k_, m, d)           # [K, M, d]
        return torch.baddbmm(p["out_b"], y, p["out_w"])

    @staticmethod
    def _softmax(scores: torch.Tensor) -> torch.Tensor:
        """softmax over the last dim. On the CPU in float32, rows of 7 to 15 entries are padded with
        −inf to 16 (exp(−inf) = 0 leaves every value as it was): PyTorch's CPU kernel takes a slow path
        for rows narrower than one 16-float vector. Measured on a 2-core CPU, forward + backward of
        [288, 15, 15] (eight members' T − 1 = 15): 0.91 ms plain, 0.25 ms padded; at 16 and in float64
        padding does not pay."""
        t = scores.shape[-1]
        if scores.device.type == "cpu" and scores.dtype == torch.float32 and t in PADDED_SOFTMAX_WIDTHS:
            return torch.softmax(F.pad(scores, (0, SOFTMAX_VECTOR - t), value=float("-inf")), dim=-1)[..., :t]
        return torch.softmax(scores, dim=-1)

    def _score_bias(self, t: int, like: torch.Tensor) -> torch.Tensor:
        """[T, T]: −inf above the diagonal for a causal model (position i sees j ≤ i), else 0."""
        key = (t, like.device, like.dtype)
        if key not in self._bias_cache:
            bias = torch.zeros(t, t, device=like.device, dtype=like.dtype)
            self._bias_cache[key] = bias.masked_fill_(torch.ones_like(bias, dtype=torch.bool).triu(1), float("-inf")) \
                if self.cfg.causal else bias
        return self._bias_cache[key]

    def _ffn(self, x: torch.Tensor, p: dict) -> torch.Tensor:
        """φ(x W₁ᵀ + b₁) W₂ᵀ + b₂; x [K, M, d]."""
        h = torch.baddbmm(p["fc1_b"], x, p["fc1_w"])                                            # [K, M, d_ff]
        h = F.gelu(h) if self.cfg.activation == "gelu" else torch.relu(h)
        return torch.baddbmm(p["fc2_b"], h, p["fc2_w"])                                         # [K, M, d]

    def _sublayer(self, x: torch.Tensor, branch: Callable, p: dict, sub: str) -> torch.Tensor:
        style = self.cfg.norm
        if style in NORMED:
            w, b = p[f"{sub}_norm_w"], p[f"{sub}_norm_b"]
        if style == "post":
            return self._norm(x + branch(x), w, b)
        if style == "deepnorm":
            return self._norm(torch.addcmul(branch(x), self.alpha.view(-1, 1, 1), x), w, b)
        if style == "pre":
            return x + branch(self._norm(x, w, b))
        if style == "rezero":
            return torch.addcmul(x, p[f"{sub}_gate"], branch(x))
        if style == "plain":
            return branch(x)
        return x + branch(x)

    def block(self, x: torch.Tensor, p: dict[str, torch.Tensor], batch: int) -> torch.Tensor:
        """One block on x [K, M = B·T, d] with layer parameters ``p`` (views [K, r, c])."""
        if self.cfg.block == "transformer":
            x = self._sublayer(x, lambda y: self._attention(y, p, batch), p, "attn")
        return self._sublayer(x, lambda y: self._ffn(y, p), p, "ffn")

    def compile_blocks(self, enabled: bool = True) -> Stack:
        """Run :meth:`block` through ``torch.compile`` (inductor). Measured on a 2-core CPU at N = 1000,
        d = 32, five members, batch 8 × 16: 2.6 → 1.71 s per Adam step after a first step of 22 s,
        so it pays off after about 20 steps; ``benchmarks/bench_engine.py --compile`` measures other
        shapes. Where compiling fails (no C compiler, an unsupported platform), the first call warns
        once and the stack runs eagerly: same function, same results up to rounding."""
        self._compiled_block = torch.compile(self.block, dynamic=False) if enabled else None
        self._compile_works = False
        return self

    def _run_block(self, x: torch.Tensor, p: dict[str, torch.Tensor], batch: int) -> torch.Tensor:
        """One block, compiled where :meth:`compile_blocks` asked for it. Compiling happens at the
        first call; if that call fails, compiling is turned off with a warning and the block runs
        eagerly (the block is a pure function, so nothing is left half done)."""
        if self._compiled_block is not None:
            try:
                y = self._compiled_block(x, p, batch)
                self._compile_works = True
                return y
            except Exception as err:          # inductor's failures share no type: any first-call failure means eager
                if self._compile_works:
                    raise
                first = str(err).splitlines()[0] if str(err) else ""
                warnings.warn(f"torch.compile failed ({type(err).__name__}: {first}); the engine runs eagerly",
                              RuntimeWarning, stacklevel=2)
                self._compiled_block = None
        return self.block(x, p, batch)

    def layers(self) -> list[dict[str, torch.Tensor]]:
        """Per layer l, the views {name: [K, r, c]} of its parameters (one ``unbind`` per tensor)."""
        names = self.block_names
        return [dict(zip(names, views)) for views in zip(*(getattr(self, n).unbind(0) for n in names))]

    def run_blocks(self, x: torch.Tensor, return_stream: bool = False):
        """The N blocks on x [K, B, T, d] → [K, B, T, d]; with ``return_stream`` also [x_0, …, x_N]."""
        k_, b, t, d = x.shape
        x = x.reshape(k_, b * t, d)
        stream = [x.view(k_, b, t, d)] if return_stream else None
        for p in self.layers():
            x = self._run_block(x, p, b)
            if return_stream:
                stream.append(x.view(k_, b, t, d))
        x = x.view(k_, b, t, d)
        return (x, stream) if return_stream else x

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """x_0 [K, B, T, d] of tokens [K, B, T] (each member reads its own table)."""
        k_, _, t = tokens.shape
        rows = self.embed.shape[1]
        offsets = torch.arange(k_, device=tokens.device).view(k_, 1, 1) * rows
        x = F.embedding(tokens + offsets, self.embed.reshape(k_ * rows, -1))     # [K, B, T, d]
        if not self.cfg.causal:                                                   # BERT: LN(token + position)
            x = x + self.positions[:, :t].unsqueeze(1)
            x = self._norm(x.flatten(1, 2), self.embed_norm_w, self.embed_norm_b).view_as(x)
        return x

    def hidden(self, tokens: torch.Tensor, return_stream: bool = False):
        """Final hidden states [K, B, T, d] of tokens [K, B, T]; with ``return_stream`` also the
        stream [x_0, …, x_N] (before the final LayerNorm of Pre-LN)."""
        x, stream = self.run_blocks(self.embed_tokens(tokens), return_stream=True) if return_stream else \
            (self.run_blocks(self.embed_tokens(tokens)), None)
        if self.cfg.norm == "pre":
            x = self._norm(x.flatten(1, 2), self.final_norm_w, self.final_norm_b).view_as(x)
        return (x, stream) if return_stream else x

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits [K, B, T, V] of tokens [K, B, T]."""
        h = self.hidden(tokens)
        k_, b, t, d = h.shape
        h = h.reshape(k_, b * t, d)
        if self.cfg.head_transform:                                  # BERT: Dense → GELU → LN
            h = self._norm(F.gelu(torch.baddbmm(self.dense_b, h, self.dense_w)), self.dense_norm_w, self.dense_norm_b)
        if self.cfg.causal:
            logits = torch.baddbmm(self.head_b, h, self.head_w)
        else:                                                        # tied: h·Eᵀ + b
            logits = torch.baddbmm(self.head_bias, h, self.embed[:, :self.cfg.vocab_size].transpose(1, 2))
        return logits.view(k_, b, t, -1)

    # ---- losses -------------------------------------------------------------------------------
    def next_token_losses(self, tokens: torch.Tensor) -> torch.Tensor:
        """Per member, −(1/(B(T−1))) Σ log p(x_{t+1} | x_{≤t}) in nats: [K] from tokens [K, B, T]."""
        if tokens.dim() != 3 or tokens.size(0) != self.n_members or tokens.size(2) < 2:
            raise ValueError(f"next-token losses need tokens [members={self.n_members}, batch, seq_len >= 2], "
                             f"got shape {tuple(tokens.shape)}")
        logits = self(tokens[..., :-1])                                           # [K, B, T-1, V]
        nll = F.cross_entropy(logits.flatten(0, 2), tokens[..., 1:].flatten(), reduction="none")
        return nll.view(self.n_members, -1).mean(dim=1)

    def masked_losses(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per member, the masked-token cross-entropy (nats): hide ``mask`` [K, B, T] behind [MASK],
        predict the originals, average over each member's hidden positions: [K]."""
        if self.cfg.causal:
            raise ValueError("masked losses need an encoder: ModelConfig(causal=False)")
        logits = self(tokens.masked_fill(mask, self.mask_id))                    # [K, B, T, V]
        nll = F.cross_entropy(logits.flatten(0, 2), tokens.flatten(), reduction="none").view_as(mask)
        return (nll * mask).flatten(1).sum(dim=1) / mask.flatten(1).sum(dim=1)

    # ---- per-block measurements ---------------------------------------------------------------
    @torch.no_grad()
    def block_sq_norms(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """Σ over block l's parameters of ‖t‖², for t in ``tensors`` (same layout as the block
        parameters): [K, N]."""
        total = sum(t.flatten(2).pow(2).sum(dim=2) for t in tensors.values())    # [N, K]
        return total.T

    @torch.no_grad()
    def block_grad_norms(self) -> torch.Tensor:
        """‖∂L/∂θ_l‖₂ over all parameters of block l: [K, N] (call after ``backward``)."""
        return self.block_sq_norms({n: getattr(self, n).grad for n in self.block_names
                                    if getattr(self, n).grad is not None}).sqrt()


def build_stack(cfgs: ModelConfig | Sequence[ModelConfig], seeds: Sequence[int] | int = 0, device=None,
                dtype: torch.dtype | None = None) -> Stack:
    """A :class:`Stack`: one config for every member, or one per member; ``seeds`` an int (one member)
    or one per member."""
    if isinstance(seeds, int):
        seeds = [seeds]
    if isinstance(cfgs, ModelConfig):
        cfgs = [cfgs] * positive_int("members", len(seeds))
    return Stack(cfgs, seeds, device=device, dtype=dtype)
