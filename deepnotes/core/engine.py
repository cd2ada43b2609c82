"""The stacked-weight engine: K independent residual stacks of N blocks, run as one graph.

:mod:`deepnotes.core.models` is the readable specification: one ``nn.Module`` per block, layers built
in a loop. At a thousand blocks that model spends its time dispatching tens of thousands of tiny
operations, not computing. :class:`Stack` computes the same function with

* every block parameter of all N layers stored as one tensor ``[N, K, ...]`` (``unbind`` once per
  forward, so the backward pass stacks the N gradients into one tensor instead of materializing a
  full-size gradient per layer);
* the query, key and value projections fused into one batched matmul;
* K independent *members* along a leading axis: every matmul is a ``bmm`` over the members, so K
  models (different seeds, α, β, init std, norm styles; different learning rates in
  :mod:`deepnotes.core.train`) cost one pass of dispatch;
* the norm style as per-member data (:class:`~deepnotes.core.blocks.Styles`: where the
  LayerNorms sit, α, whether a gate multiplies the branch), so Post-LN, Pre-LN, DeepNorm, ReZero and
  no norm at all train side by side in one graph;
* the N blocks as one autograd node whose backward is written out per layer
  (:mod:`deepnotes.core.blocks`) wherever gradients are wanted.

Member k of a :class:`Stack` built with the reference's weights gives the reference's loss and
gradients (``tests/core/test_engine.py``: float64, relative 1e-10, every norm style and block kind).
The block is the reference's, with the style per member k:

    post      x ← LN(x + F(x))          deepnorm  x ← LN(α_k·x + F(x))      pre   x ← x + F(LN(x))
    none      x ← x + F(x)              rezero    x ← x + g_k·F(x)          plain x ← F(x)  (α_k = 0)

all one formula, x ← [LN if post_k](α_k·x + g_k·F([LN if pre_k](x))). A member that does not use a
LayerNorm or a gate keeps that slice at 0 (it gets no gradient), so norms over a member's
parameters count only what its reference model has.

The bridge to the readable reference (the equivalence tests' oracle, and chapters that start a
member from a reference model's weights) says which tensor of a
:class:`~deepnotes.core.models.TransformerLM` (or of a list of :class:`~deepnotes.core.models.Block`)
each slice of a :class:`Stack` holds.

The engine keeps every tensor 2-D per member: a weight W [out, in] as Wᵀ [in, out], a vector as a
row [1, n], a gate as [1, 1]; q, k and v side by side in one [d, 3d] (their biases in one [1, 3d]).
``load_reference`` copies a reference model into member k (the equivalence tests); ``export_member``
builds the reference model that member k is, for probes written against ``models.py``;
``reference_layout`` gathers a reference's weights or gradients in the engine's layout ([N, r, c]
for block tensors) for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.core.blocks import MATRICES, Styles, block_forward, mask_of, norm_forward, run_blocks
from deepnotes.core.config import ModelConfig, check_fits
from deepnotes.core.data import generator
from deepnotes.core.models import Block, TransformerLM, check_tokens, trunc_normal_
from deepnotes.core.validate import Count, Finite, NonNegativeCount, Positive, positive_int
from deepnotes.core.validate import seed as seed_value

NORMED = ("post", "deepnorm", "pre")  # styles with a LayerNorm per sublayer
GATES = ("attn_gate", "ffn_gate")  # ReZero's gates


@dataclass(frozen=True)
class Slot:
    """Where a stacked parameter keeps its members, and how many reference tensors sit side by side
    in it. Every parameter is 2-D per member (vectors are rows [1, n], matrices are stored transposed,
    [in, out], so that x·Wᵀ is one ``baddbmm``); ``parts`` reference tensors are concatenated along
    the last dim (q, k and v: 3). LAMB's trust ratio and the per-tensor norms split them back."""

    member_axis: NonNegativeCount  # 1 for block tensors [N, K, r, c], 0 for the rest [K, r, c]
    parts: Count = 1


def graph_config(cfg: ModelConfig) -> ModelConfig:
    """What members must share to run as one graph: everything but α, β, the init std and the norm
    style (every style is per-member data; the returned config says ``none`` for all)."""
    return replace(cfg, alpha=None, beta=None, init_std=None, norm="none", gate=None)


def uses_norm(cfg: ModelConfig) -> bool:
    """Whether a member of this style has a LayerNorm in each sublayer."""
    return cfg.norm in NORMED


def member_flags(cfgs: Sequence[ModelConfig]) -> dict[str, list]:
    """Each member's block as data, one list entry per member: its skip weight α (0 for ``plain``, no
    skip path), and whether its LayerNorm sits on the sublayer's input (``pre``), on the sum (``post``),
    and whether a trained gate multiplies the branch (``gated``, ReZero)."""
    return {
        "alpha": [0.0 if c.norm == "plain" else c.skip_alpha for c in cfgs],
        "pre": [c.norm == "pre" for c in cfgs],
        "post": [c.norm in ("post", "deepnorm") for c in cfgs],
        "gated": [c.norm == "rezero" or c.gate is not None for c in cfgs],
    }


def xavier_std(fan_out: Count, fan_in: Count, gain: Positive = 1.0) -> float:
    """Xavier-normal std: gain·√(2/(fan_in + fan_out)) (``nn.init.xavier_normal_``)."""
    return gain * math.sqrt(2.0 / (fan_in + fan_out))


class Stack(nn.Module):
    """K residual stacks that share a graph (:func:`graph_config`), one per entry of ``cfgs``, each
    initialized from its own seed like :func:`deepnotes.core.models.build_model` would (same
    distributions; the draws are the engine's own). Its weights' memory is checked before anything is allocated
    (``config.check_fits``), unless ``memory_checked``: the caller checked the whole run's, weights included
    (:func:`~deepnotes.core.ensembles.train_many`, :func:`~deepnotes.core.train.train`: one check per ensemble)."""

    def __init__(
        self,
        cfgs: Sequence[ModelConfig],
        seeds: Sequence[int] | None = None,
        device=None,
        dtype: torch.dtype | None = None,
        *,
        memory_checked: bool = False,
    ):
        super().__init__()
        cfgs = list(cfgs)
        if not cfgs:
            raise ValueError("a Stack needs at least one member config, got none")
        shared = graph_config(cfgs[0])
        for i, cfg in enumerate(cfgs):
            if graph_config(cfg) != shared:
                raise ValueError(
                    f"member {i} does not share member 0's graph (only alpha, beta, init_std and "
                    f"the norm style may differ): {graph_config(cfg)} vs {shared}"
                )
        seeds = list(range(len(cfgs))) if seeds is None else [seed_value(f"seeds[{i}]", s) for i, s in enumerate(seeds)]
        if len(seeds) != len(cfgs):
            raise ValueError(f"{len(seeds)} seeds for {len(cfgs)} member configs")
        if not memory_checked:  # train_many and train check the whole run's memory before they build a Stack
            check_fits(shared, len(cfgs), where=device)  # before the first tensor is allocated
        self.cfg, self.cfgs, self.seeds = shared, tuple(cfgs), tuple(seeds)
        self.n_members, self.n_layers = len(cfgs), shared.n_layers
        self.mask_id = shared.vocab_size  # encoders: one extra token, [MASK]
        dtype = dtype or torch.get_default_dtype()
        self.flags = member_flags(cfgs)
        self.has_norm = any(uses_norm(c) for c in cfgs)  # the union of the members' pieces
        self.has_pre, self.has_gate = any(self.flags["pre"]), any(self.flags["gated"])
        self.slots: dict[str, Slot] = {}
        for name, shape, parts in self._block_shapes():
            self._add(name, (self.n_layers, self.n_members, *shape), Slot(1, parts), device, dtype)
        for name, shape, parts in self._top_shapes():
            self._add(name, (self.n_members, *shape), Slot(0, parts), device, dtype)
        self._styles: dict = {}
        self.register_buffer("alpha", torch.tensor(self.flags["alpha"], device=device, dtype=dtype))  # [K]
        for name in ("pre", "post", "gated"):
            self.register_buffer(name, torch.tensor(self.flags[name], device=device))  # [K] bool
        self.reset_parameters()

    @property
    def styles(self) -> Styles:
        """The members' blocks as data (see :mod:`deepnotes.core.blocks`), built once per device
        and dtype from the member configs (no device-to-host read per forward pass: a CUDA step stays
        free of synchronizations there)."""
        key = (self.alpha.device, self.alpha.dtype)
        if self._styles.get("key") != key:
            mask = lambda name: mask_of(self.flags[name], getattr(self, name).to(self.alpha.dtype))  # noqa: E731
            self._styles = {
                "key": key,
                "styles": Styles(
                    alpha=None if all(a == 1 for a in self.flags["alpha"]) else self.alpha.view(-1, 1, 1),
                    pre=mask("pre"),
                    post=mask("post"),
                    gated=mask("gated"),
                    activation=self.cfg.activation,
                    n_heads=self.cfg.n_heads,
                    causal=self.cfg.causal,
                    flags=self.flags,
                ),
            }
        return self._styles["styles"]

    def member_names(self, k: int) -> list[str]:
        """The parameters member k's reference model has (its style's LayerNorms and gates only)."""
        cfg = self.cfgs[k]
        drop = set()
        if not uses_norm(cfg):
            drop |= {n for n in self.slots if n.startswith(("attn_norm", "ffn_norm"))}
        if cfg.norm != "pre":
            drop |= {"final_norm_w", "final_norm_b"}
        if cfg.norm != "rezero" and cfg.gate is None:
            drop |= set(GATES)
        return [n for n in self.slots if n not in drop]

    # ---- layout -------------------------------------------------------------------------------
    def _block_shapes(self):
        """(name, per-member shape, parts) of the block tensors, in the order of the forward pass."""
        c = self.cfg
        d, f = c.d_model, c.d_ff
        shapes = []
        for sub in self.sublayer_names:
            if self.has_norm:
                shapes += [(f"{sub}_norm_w", (1, d), 1), (f"{sub}_norm_b", (1, d), 1)]
            if self.has_gate:
                shapes += [(f"{sub}_gate", (1, 1), 1)]
            if sub == "attn":
                shapes += [
                    ("qkv_w", (d, 3 * d), 3),
                    ("qkv_b", (1, 3 * d), 3),
                    ("out_w", (d, d), 1),
                    ("out_b", (1, d), 1),
                ]
            else:
                shapes += [("fc1_w", (d, f), 1), ("fc1_b", (1, f), 1), ("fc2_w", (f, d), 1), ("fc2_b", (1, d), 1)]
        return shapes

    def _top_shapes(self):
        c = self.cfg
        d, v = c.d_model, c.vocab_size
        shapes = [("embed", (v + (0 if c.causal else 1), d), 1)]
        if not c.causal:
            shapes += [("positions", (c.max_len, d), 1), ("embed_norm_w", (1, d), 1), ("embed_norm_b", (1, d), 1)]
        if self.has_pre:
            shapes += [("final_norm_w", (1, d), 1), ("final_norm_b", (1, d), 1)]
        if c.head_transform:
            shapes += [
                ("dense_w", (d, d), 1),
                ("dense_b", (1, d), 1),
                ("dense_norm_w", (1, d), 1),
                ("dense_norm_b", (1, d), 1),
            ]
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

    def beta_scaled(self) -> list[torch.Tensor]:
        """Views of the matrices DeepNet initializes with gain β (as ``Block.beta_scaled_weights``): v and
        out (transformer blocks), fc1, fc2; each [N, K, in, out]."""
        d = self.cfg.d_model
        attention = [self.qkv_w[..., 2 * d :], self.out_w] if "qkv_w" in self.slots else []
        return [*attention, self.fc1_w, self.fc2_w]

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
        1 (0 for a member without that LayerNorm), gates 0; embeddings N(0, 1) (``init_std``: like every
        matrix). Draws are float32 on the
        CPU, then cast, so a seed gives the same weights on every device, and member k's weights
        depend on its own config and seed only."""
        for k, (cfg, seed) in enumerate(zip(self.cfgs, self.seeds, strict=True)):
            gen, trunc = generator(seed), cfg.init_std is not None

            def fill(target: torch.Tensor, xavier_gain: Finite | None) -> None:
                """xavier_gain: the Xavier gain of a square-or-not [in, out] matrix; None: a table."""
                if trunc:
                    std = cfg.init_std
                elif xavier_gain is None:
                    std = 1.0  # unit-variance x_0, as the derivations assume
                else:
                    std = xavier_std(target.shape[-1], target.shape[-2], xavier_gain)
                draw = torch.empty(target.shape)
                target.copy_(
                    trunc_normal_(draw, std, generator=gen) if trunc else draw.normal_(0.0, std, generator=gen)
                )

            beta, d = cfg.branch_beta, cfg.d_model
            if cfg.block == "transformer":
                qkv = self.member("qkv_w", k)  # [N, d, 3d]: columns q | k | v
                for i, gain in enumerate((1.0, 1.0, beta)):
                    fill(qkv[..., i * d : (i + 1) * d], gain)
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
        for k in range(self.n_members):  # a style without a LayerNorm: its slice stays 0
            for name in set(self.slots) - set(self.member_names(k)):
                self.member(name, k).zero_()
            if self.cfgs[k].gate is not None:  # a gate that starts elsewhere than ReZero's 0
                for name in set(GATES) & set(self.slots):
                    self.member(name, k).fill_(self.cfgs[k].gate)

    # ---- forward ------------------------------------------------------------------------------
    @staticmethod
    def _norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """LayerNorm with member-wise affine: x [K, M, d], w and b [K, 1, d]."""
        return norm_forward(x, w, b)[0]

    def block(self, x: torch.Tensor, p: dict[str, torch.Tensor], batch: int) -> torch.Tensor:
        """One block on x [K, M = B·T, d] with layer parameters ``p`` (views [K, r, c]), recorded by
        autograd op by op (the probes that read the stream's gradients; the oracle of the
        hand-written backward)."""
        return block_forward(self.styles, x, p, batch)[0]

    def layers(self) -> list[dict[str, torch.Tensor]]:
        """Per layer l, the views {name: [K, r, c]} of its parameters (one ``unbind`` per tensor)."""
        names = self.block_names
        return [
            dict(zip(names, views, strict=True))
            for views in zip(*(getattr(self, n).unbind(0) for n in names), strict=True)
        ]

    def run_blocks(self, x: torch.Tensor, return_stream: bool = False):
        """The N blocks on x [K, B, T, d] → [K, B, T, d]; with ``return_stream`` also [x_0, …, x_N]."""
        k_, b, t, d = x.shape
        x = x.reshape(k_, b * t, d)
        if not return_stream:  # one autograd node, backward written out (blocks.BlocksFunction)
            names = self.block_names
            return run_blocks(self.styles, names, [getattr(self, n) for n in names], x, b).view(k_, b, t, d)
        stream = [x.view(k_, b, t, d)]  # each x_l is what the next block reads: a backward reaches it
        for p in self.layers():
            stream.append(self.block(stream[-1].view(k_, b * t, d), p, b).view(k_, b, t, d))
        return stream[-1], stream

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """x_0 [K, B, T, d] of tokens [K, B, T] (each member reads its own table)."""
        rows = self.embed.shape[1]  # V, or V + 1 with an encoder's [MASK]
        check_tokens(tokens, rows)
        if tokens.dim() != 3 or tokens.size(0) != self.n_members:
            raise ValueError(
                f"tokens must be [members={self.n_members}, batch, seq_len], got shape {tuple(tokens.shape)}"
            )
        k_, _, t = tokens.shape
        offsets = torch.arange(k_, device=tokens.device).view(k_, 1, 1) * rows
        x = F.embedding(tokens + offsets, self.embed.reshape(k_ * rows, -1))  # [K, B, T, d]
        if not self.cfg.causal:  # BERT: LN(token + position)
            x = x + self.positions[:, :t].unsqueeze(1)
            x = self._norm(x.flatten(1, 2), self.embed_norm_w, self.embed_norm_b).view_as(x)
        return x

    def hidden(self, tokens: torch.Tensor, return_stream: bool = False):
        """Final hidden states [K, B, T, d] of tokens [K, B, T]; with ``return_stream`` also the
        stream [x_0, …, x_N] (before the final LayerNorm of Pre-LN)."""
        x, stream = (
            self.run_blocks(self.embed_tokens(tokens), return_stream=True)
            if return_stream
            else (self.run_blocks(self.embed_tokens(tokens)), None)
        )
        if self.has_pre:  # Pre-LN members: a final LayerNorm
            normed = self._norm(x.flatten(1, 2), self.final_norm_w, self.final_norm_b).view_as(x)
            x = torch.where(self.pre.view(-1, 1, 1, 1), normed, x)
        return (x, stream) if return_stream else x

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits [K, B, T, V] of tokens [K, B, T]."""
        return self.head(self.hidden(tokens))

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """Logits [K, B, T, V] of final hidden states h [K, B, T, d]."""
        k_, b, t, d = h.shape
        h = h.reshape(k_, b * t, d)
        if self.cfg.head_transform:  # BERT: Dense → GELU → LN
            h = self._norm(F.gelu(torch.baddbmm(self.dense_b, h, self.dense_w)), self.dense_norm_w, self.dense_norm_b)
        if self.cfg.causal:
            logits = torch.baddbmm(self.head_b, h, self.head_w)
        else:  # tied: h·Eᵀ + b
            logits = torch.baddbmm(self.head_bias, h, self.embed[:, : self.cfg.vocab_size].transpose(1, 2))
        return logits.view(k_, b, t, -1)

    # ---- losses -------------------------------------------------------------------------------
    def next_token_losses(self, tokens: torch.Tensor) -> torch.Tensor:
        """Per member, −(1/(B(T−1))) Σ log p(x_{t+1} | x_{≤t}) in nats: [K] from tokens [K, B, T]."""
        self._check_next_token(tokens)
        return self._next_token_nll(self(tokens[..., :-1]), tokens)

    def _check_next_token(self, tokens: torch.Tensor) -> None:
        if tokens.dim() != 3 or tokens.size(0) != self.n_members or tokens.size(2) < 2:
            raise ValueError(
                f"next-token losses need tokens [members={self.n_members}, batch, seq_len >= 2], "
                f"got shape {tuple(tokens.shape)}"
            )

    def next_token_losses_and_stream(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """:meth:`next_token_losses` [K] and the stream [x_0, …, x_N] (each [K, B, T−1, d]) it was
        computed through, block by block, so that a backward pass reaches every x_l (``retain_grad``)."""
        self._check_next_token(tokens)
        h, stream = self.hidden(tokens[..., :-1], return_stream=True)
        return self._next_token_nll(self.head(h), tokens), stream

    def _next_token_nll(self, logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Per member, the mean next-token NLL [K] of logits [K, B, T−1, V] against tokens [K, B, T]."""
        nll = F.cross_entropy(logits.flatten(0, 2), tokens[..., 1:].flatten(), reduction="none")
        return nll.view(self.n_members, -1).mean(dim=1)

    def masked_losses(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per member, the masked-token cross-entropy (nats): hide ``mask`` [K, B, T] behind [MASK],
        predict the originals, average over each member's hidden positions: [K]."""
        if self.cfg.causal:
            raise ValueError("masked losses need an encoder: ModelConfig(causal=False)")
        logits = self(tokens.masked_fill(mask, self.mask_id))  # [K, B, T, V]
        nll = F.cross_entropy(logits.flatten(0, 2), tokens.flatten(), reduction="none").view_as(mask)
        return (nll * mask).flatten(1).sum(dim=1) / mask.flatten(1).sum(dim=1)

    # ---- per-block measurements ---------------------------------------------------------------
    @torch.no_grad()
    def block_sq_norms(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """Σ over block l's parameters of ‖t‖², for t in ``tensors`` (same layout as the block
        parameters): [K, N]."""
        total = sum(t.flatten(2).pow(2).sum(dim=2) for t in tensors.values())  # [N, K]
        return total.T

    @torch.no_grad()
    def block_grad_norms(self, names: Sequence[str] | None = None) -> torch.Tensor:
        """‖∂L/∂θ_l‖₂ over the parameters ``names`` of block l (default all): [K, N] (call after ``backward``)."""
        names = self.block_names if names is None else [n for n in names if n in self.block_names]
        return self.block_sq_norms(
            {n: getattr(self, n).grad for n in names if getattr(self, n).grad is not None}
        ).sqrt()


def build_stack(
    cfgs: ModelConfig | Sequence[ModelConfig],
    seeds: Sequence[int] | int = 0,
    device=None,
    dtype: torch.dtype | None = None,
) -> Stack:
    """A :class:`Stack`: one config for every member, or one per member; ``seeds`` an int (one member)
    or one per member."""
    if isinstance(seeds, int):
        seeds = [seeds]
    if isinstance(cfgs, ModelConfig):
        cfgs = [cfgs] * positive_int("members", len(seeds))
    return Stack(cfgs, seeds, device=device, dtype=dtype)


def _residual(block: Block, sub: str):
    return block.sublayers[0 if sub == "attn" or block.attn is None else 1]


# engine name → the reference tensors of one block, in the order they sit side by side
BLOCK_TENSORS: dict[str, Callable[[Block], list[torch.Tensor]]] = {
    "qkv_w": lambda b: [b.attn.q_proj.weight, b.attn.k_proj.weight, b.attn.v_proj.weight],
    "qkv_b": lambda b: [b.attn.q_proj.bias, b.attn.k_proj.bias, b.attn.v_proj.bias],
    "out_w": lambda b: [b.attn.out_proj.weight],
    "out_b": lambda b: [b.attn.out_proj.bias],
    "fc1_w": lambda b: [b.ffn.fc1.weight],
    "fc1_b": lambda b: [b.ffn.fc1.bias],
    "fc2_w": lambda b: [b.ffn.fc2.weight],
    "fc2_b": lambda b: [b.ffn.fc2.bias],
    **{
        f"{sub}_{kind}": (lambda b, sub=sub, get=get: [get(_residual(b, sub))])
        for sub in ("attn", "ffn")
        for kind, get in (
            ("norm_w", lambda r: r.norm.weight),
            ("norm_b", lambda r: r.norm.bias),
            ("gate", lambda r: r.gate),
        )
    },
}
# engine name → the reference tensor of the model outside its blocks
TOP_TENSORS: dict[str, Callable[[TransformerLM], torch.Tensor]] = {
    "embed": lambda m: m.embed.weight,
    "positions": lambda m: m.positions.weight,
    "embed_norm_w": lambda m: m.embed_norm.weight,
    "embed_norm_b": lambda m: m.embed_norm.bias,
    "final_norm_w": lambda m: m.final_norm.weight,
    "final_norm_b": lambda m: m.final_norm.bias,
    "dense_w": lambda m: m.head_transform[0].weight,
    "dense_b": lambda m: m.head_transform[0].bias,
    "dense_norm_w": lambda m: m.head_transform[2].weight,
    "dense_norm_b": lambda m: m.head_transform[2].bias,
    "head_w": lambda m: m.head.weight,
    "head_b": lambda m: m.head.bias,
    "head_bias": lambda m: m.head_bias,
}
TABLES = ("embed", "positions")  # kept as they are: [rows, d]
# every name a Stack's slot can have, whatever its config (what train_many's trainable / frozen may name)
SLOT_NAMES = frozenset(
    [f"{sub}_{part}" for sub in ("attn", "ffn") for part in ("norm_w", "norm_b", "gate")]
    + ["qkv_w", "qkv_b", "out_w", "out_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b"]
    + list(TOP_TENSORS)
)


def check_slot_names(name: str, names, empty_ok: bool) -> None:
    """``names`` is None (``trainable``: every slot) or a list, tuple or set of slot names, each one of
    :data:`SLOT_NAMES` exactly (one string is refused: "embed_norm_w" in "embed…"
    would match by substring), and not empty where that would train nothing."""
    if names is None and name == "trainable":
        return
    if not isinstance(names, (list, tuple, set, frozenset)) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{name} must be a list of parameter names (not one string), got {names!r}")
    unknown = sorted(set(names) - SLOT_NAMES)
    if unknown:
        raise ValueError(f"unknown {name} name(s) {unknown}; allowed: {', '.join(sorted(SLOT_NAMES))}")
    if not names and not empty_ok:
        raise ValueError(f"{name} is empty: nothing would train")


def to_engine(name: str, tensors: list[torch.Tensor]) -> torch.Tensor:
    """Reference tensors → the engine's 2-D slice: tables as they are, matrices transposed side by
    side, vectors and scalars in one row."""
    if name in TABLES:
        return tensors[0]
    if tensors[0].dim() == 2:
        return torch.cat([t.T for t in tensors], dim=1)
    return torch.cat([t.reshape(-1) for t in tensors]).view(1, -1)


def from_engine(name: str, value: torch.Tensor, tensors: list[torch.Tensor]) -> None:
    """Copy the engine's 2-D slice ``value`` back into the reference ``tensors``."""
    if name in TABLES:
        tensors[0].copy_(value)
    elif tensors[0].dim() == 2:
        for t, chunk in zip(tensors, value.chunk(len(tensors), dim=1), strict=True):
            t.copy_(chunk.T)
    else:
        for t, chunk in zip(tensors, value.reshape(-1).chunk(len(tensors)), strict=True):
            t.copy_(chunk.view_as(t))


def _blocks(model) -> nn.ModuleList | list[Block]:
    return model.blocks if isinstance(model, TransformerLM) else list(model)


def _pieces(stack: Stack, model, k: int) -> dict[str, list[list[torch.Tensor]]]:
    """name → per block (or once, outside the blocks) the list of reference tensors it holds, for
    the parameters member k's style has."""
    names = stack.member_names(k)
    out = {n: [BLOCK_TENSORS[n](b) for b in _blocks(model)] for n in stack.block_names if n in names}
    if isinstance(model, TransformerLM):
        out.update({n: [[TOP_TENSORS[n](model)]] for n in names if n not in stack.block_names})
    return out


def reference_layout(
    stack: Stack, model, of: Callable[[torch.Tensor], torch.Tensor] = lambda t: t.detach(), k: NonNegativeCount = 0
) -> dict[str, torch.Tensor]:
    """A reference model's tensors (``of``: the weight, or ``lambda t: t.grad``) in the engine's
    member layout: [N, r, c] for block tensors, [r, c] for the rest. ``model``: a TransformerLM, or
    a list of Blocks (block tensors only); the parameters member ``k``'s style has."""
    member_index(stack, k)
    out = {}
    for name, pieces in _pieces(stack, model, k).items():
        rows = [to_engine(name, [of(t) for t in piece]) for piece in pieces]
        out[name] = torch.stack(rows) if name in stack.block_names else rows[0]
    return out


def member_index(stack: Stack, k: NonNegativeCount) -> int:
    """``k`` if the stack has a member k (0 ≤ k < its members), else a ValueError naming k and the range."""
    if k >= stack.n_members:
        raise ValueError(
            f"member k={k} is not in this stack: it has {stack.n_members} member(s), k = 0..{stack.n_members - 1}"
        )
    return k


@torch.no_grad()
def load_reference(stack: Stack, k: NonNegativeCount, model) -> Stack:
    """Copy the reference ``model`` (a TransformerLM, or a list of Blocks) into member k."""
    for name, tensor in reference_layout(stack, model, k=k).items():
        member = stack.member(name, k)
        if member.shape != tensor.shape:
            raise ValueError(
                f"the model's {name} has shape {tuple(tensor.shape)} in the engine's layout, member k={k}'s has "
                f"{tuple(member.shape)}: the model must have the stack's depth and sizes"
            )
        member.copy_(tensor)
    return stack


@torch.no_grad()
def write_reference(stack: Stack, k: NonNegativeCount, model):
    """Copy member k into the reference ``model`` (a TransformerLM or a ModuleList of Blocks)."""
    member_index(stack, k)
    for name, pieces in _pieces(stack, model, k).items():
        target = stack.member(name, k)
        rows = target.unbind(0) if name in stack.block_names else [target]
        for piece, row in zip(pieces, rows, strict=True):
            from_engine(name, row, piece)
    return model


def export_member(stack: Stack, k: NonNegativeCount) -> TransformerLM:
    """The reference TransformerLM holding member k's current weights (on the stack's device and dtype)."""
    member_index(stack, k)
    ref = stack.embed
    return write_reference(stack, k, TransformerLM(stack.cfgs[k]).to(device=ref.device, dtype=ref.dtype))


def block_list(stack: Stack, k: NonNegativeCount) -> nn.ModuleList:
    """Member k's blocks as reference :class:`Block` modules (MLP-only stacks have no TransformerLM)."""
    member_index(stack, k)
    ref = stack.embed
    blocks = nn.ModuleList([Block(stack.cfgs[k]) for _ in range(stack.n_layers)])
    return write_reference(stack, k, blocks.to(device=ref.device, dtype=ref.dtype))


def stack_of(models: Sequence, seeds: Sequence[int], device=None, dtype: torch.dtype | None = None) -> Stack:
    """A :class:`Stack` whose member k holds reference model k's weights (each a TransformerLM of one
    graph): for chapters whose models start from a reference initialization of their own."""
    ref = next(models[0].parameters())
    stack = Stack([m.cfg for m in models], seeds=seeds, device=device or ref.device, dtype=dtype or ref.dtype)
    for k, model in enumerate(models):
        load_reference(stack, k, model)
    return stack
