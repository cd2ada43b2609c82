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
LN_EPS = 1e-5                                   # nn.LayerNorm's default, as in the reference


@dataclass(frozen=True)
class Slot:
    """Where a stacked parameter keeps its members, and how many trailing dims make one reference
    tensor (LAMB's trust ratio and the per-tensor norms are taken over those)."""
    member_axis: int      # 1 for block tensors [N, K, ...], 0 for the rest [K, ...]
    tensor_dims: int      # 2 for a weight matrix, 1 for a bias or norm vector, 0 for a gate


def graph_config(cfg: ModelConfig) -> ModelConfig:
    """What members must share to run as one graph: everything but α, β and the init std."""
    return replace(cfg, alpha=None, beta=None, init_std=None)


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
                raise ValueError(f"member {i} does not share member 0's graph (only alpha, beta and init_std may "
                                 f"differ): {graph_config(cfg)} vs {shared}")
        seeds = list(range(len(cfgs))) if seeds is None else [int(s) for s in seeds]
        if len(seeds) != len(cfgs):
            raise ValueError(f"{len(seeds)} seeds for {len(cfgs)} member configs")
        self.cfg, self.cfgs, self.seeds = shared, tuple(cfgs), tuple(seeds)
        self.n_members, self.n_layers = len(cfgs), shared.n_layers
        self.mask_id = shared.vocab_size                       # encoders: one extra token, [MASK]
        dtype = dtype or torch.get_default_dtype()
        self.slots: dict[str, Slot] = {}
        for name, shape, dims in self._block_shapes():
            self._add(name, (self.n_layers, self.n_members, *shape), Slot(1, dims), device, dtype)
        for name, shape, dims in self._top_shapes():
            self._add(name, (self.n_members, *shape), Slot(0, dims), device, dtype)
        self.register_buffer("alpha", torch.tensor([c.skip_alpha for c in cfgs], device=device, dtype=dtype))  # [K]
        self.reset_parameters()

    # ---- layout -------------------------------------------------------------------------------
    def _block_shapes(self):
        c = self.cfg
        d, f, s = c.d_model, c.d_ff, self.n_sublayers
        shapes = []
        if c.block == "transformer":
            shapes += [("qkv_w", (3, d, d), 2), ("qkv_b", (3, d), 1), ("out_w", (d, d), 2), ("out_b", (d,), 1)]
        shapes += [("fc1_w", (f, d), 2), ("fc1_b", (f,), 1), ("fc2_w", (d, f), 2), ("fc2_b", (d,), 1)]
        if c.norm in NORMED:
            shapes += [("norm_w", (s, d), 1), ("norm_b", (s, d), 1)]
        if c.norm == "rezero":
            shapes += [("gate", (s,), 0)]
        return shapes

    def _top_shapes(self):
        c = self.cfg
        d, v = c.d_model, c.vocab_size
        shapes = [("embed", (v + (0 if c.causal else 1), d), 2)]
        if not c.causal:
            shapes += [("positions", (c.max_len, d), 2), ("embed_norm_w", (d,), 1), ("embed_norm_b", (d,), 1)]
        if c.norm == "pre":
            shapes += [("final_norm_w", (d,), 1), ("final_norm_b", (d,), 1)]
        if c.head_transform:
            shapes += [("dense_w", (d, d), 2), ("dense_b", (d,), 1), ("dense_norm_w", (d,), 1), ("dense_norm_b", (d,), 1)]
        shapes += [("head_w", (v, d), 2), ("head_b", (v,), 1)] if c.causal else [("head_bias", (v,), 1)]
        return shapes

    def _add(self, name, shape, slot, device, dtype):
        self.register_parameter(name, nn.Parameter(torch.empty(shape, device=device, dtype=dtype)))
        self.slots[name] = slot

    @property
    def n_sublayers(self) -> int:
        return 2 if self.cfg.block == "transformer" else 1

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
        fc2 (gain 1 on q, k), or BERT's N(0, std²) cut at ±2σ with ``init_std``; biases 0, norms 1,
        gates 0; embeddings N(0, 1) (``init_std``: like every matrix). Draws are float32 on the CPU,
        then cast, so a seed gives the same weights on every device."""
        for k, (cfg, seed) in enumerate(zip(self.cfgs, self.seeds)):
            gen = generator(seed)

            def draw(shape, std, trunc):
                t = torch.empty(shape)
                return trunc_normal_(t, std, generator=gen) if trunc else t.normal_(0.0, std, generator=gen)

            def matrix(name, fan_out, fan_in, gain=1.0, *, prefix=()):
                std = cfg.init_std if cfg.init_std is not None else xavier_std(fan_out, fan_in, gain)
                target = self.member(name, k)[prefix] if prefix else self.member(name, k)
                target.copy_(draw(target.shape, std, cfg.init_std is not None))

            d, f, beta = cfg.d_model, cfg.d_ff, cfg.branch_beta
            if cfg.block == "transformer":
                qkv = self.member("qkv_w", k)                    # [N, 3, d, d]
                for i, gain in enumerate((1.0, 1.0, beta)):
                    std = cfg.init_std if cfg.init_std is not None else xavier_std(d, d, gain)
                    qkv[:, i].copy_(draw(qkv[:, i].shape, std, cfg.init_std is not None))
                matrix("out_w", d, d, beta)
            matrix("fc1_w", f, d, beta)
            matrix("fc2_w", d, f, beta)
            table_std = cfg.init_std if cfg.init_std is not None else 1.0
            for name in ("embed", "positions"):
                if name in self.slots:
                    t = self.member(name, k)
                    t.copy_(draw(t.shape, table_std, cfg.init_std is not None))
            if "dense_w" in self.slots:
                matrix("dense_w", d, d)
            if "head_w" in self.slots:
                matrix("head_w", cfg.vocab_size, d)
        for name in self.slots:
            if name.endswith("norm_w"):
                getattr(self, name).fill_(1.0)
            elif not name.endswith("_w") and name not in ("embed", "positions"):
                getattr(self, name).zero_()                      # biases, norm shifts, gates

    # ---- forward ------------------------------------------------------------------------------
    @staticmethod
    def _norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """LayerNorm with member-wise affine: x [K, M, d], w and b [K, d]."""
        return torch.addcmul(b.unsqueeze(1), F.layer_norm(x, x.shape[-1:], eps=LN_EPS), w.unsqueeze(1))

    def _attention(self, x: torch.Tensor, p: dict, batch: int) -> torch.Tensor:
        """softmax(QKᵀ/√d_h)·V per head, then the out-projection; x [K, M = B·T, d]."""
        k_, m, d = x.shape
        h = self.cfg.n_heads
        qkv = torch.baddbmm(p["qkv_b"].reshape(k_, 1, 3 * d), x, p["qkv_w"].reshape(k_, 3 * d, d).transpose(1, 2))
        q, k, v = qkv.view(k_ * batch, m // batch, 3, h, d // h).permute(2, 0, 3, 1, 4).unbind(0)  # [KB, h, T, d/h]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.cfg.causal)                   # [KB, h, T, d/h]
        y = y.transpose(1, 2).reshape(k_, m, d)                                                   # [K, M, d]
        return torch.baddbmm(p["out_b"].unsqueeze(1), y, p["out_w"].transpose(1, 2))

    def _ffn(self, x: torch.Tensor, p: dict) -> torch.Tensor:
        """φ(x W₁ᵀ + b₁) W₂ᵀ + b₂; x [K, M, d]."""
        h = torch.baddbmm(p["fc1_b"].unsqueeze(1), x, p["fc1_w"].transpose(1, 2))                # [K, M, d_ff]
        h = F.gelu(h) if self.cfg.activation == "gelu" else torch.relu(h)
        return torch.baddbmm(p["fc2_b"].unsqueeze(1), h, p["fc2_w"].transpose(1, 2))              # [K, M, d]

    def _sublayer(self, x: torch.Tensor, branch: Callable, p: dict, s: int) -> torch.Tensor:
        style = self.cfg.norm
        if style == "post":
            return self._norm(x + branch(x), p["norm_w"][:, s], p["norm_b"][:, s])
        if style == "deepnorm":
            return self._norm(torch.addcmul(branch(x), self.alpha.view(-1, 1, 1), x), p["norm_w"][:, s], p["norm_b"][:, s])
        if style == "pre":
            return x + branch(self._norm(x, p["norm_w"][:, s], p["norm_b"][:, s]))
        if style == "rezero":
            return torch.addcmul(x, p["gate"][:, s].view(-1, 1, 1), branch(x))
        if style == "plain":
            return branch(x)
        return x + branch(x)

    def layers(self) -> list[dict[str, torch.Tensor]]:
        """Per layer l, the views {name: [K, ...]} of its parameters (one ``unbind`` per tensor)."""
        names = self.block_names
        return [dict(zip(names, views)) for views in zip(*(getattr(self, n).unbind(0) for n in names))]

    def run_blocks(self, x: torch.Tensor, return_stream: bool = False):
        """The N blocks on x [K, B, T, d] → [K, B, T, d]; with ``return_stream`` also [x_0, …, x_N]."""
        k_, b, t, d = x.shape
        x = x.reshape(k_, b * t, d)
        stream = [x.view(k_, b, t, d)] if return_stream else None
        for p in self.layers():
            if self.cfg.block == "transformer":
                x = self._sublayer(x, lambda y: self._attention(y, p, b), p, 0)
            x = self._sublayer(x, lambda y: self._ffn(y, p), p, self.n_sublayers - 1)
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
            h = F.gelu(torch.baddbmm(self.dense_b.unsqueeze(1), h, self.dense_w.transpose(1, 2)))
            h = self._norm(h, self.dense_norm_w, self.dense_norm_b)
        if self.cfg.causal:
            logits = torch.baddbmm(self.head_b.unsqueeze(1), h, self.head_w.transpose(1, 2))
        else:                                                        # tied: h·Eᵀ + b
            logits = torch.baddbmm(self.head_bias.unsqueeze(1), h, self.embed[:, :self.cfg.vocab_size].transpose(1, 2))
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
