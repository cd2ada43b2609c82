"""The bridge between the engine and the readable reference: which tensor of a
:class:`~deepnotes.core.models.TransformerLM` (or of a list of :class:`~deepnotes.core.models.Block`)
each slice of a :class:`~deepnotes.core.engine.Stack` holds.

The engine keeps every tensor 2-D per member: a weight W [out, in] as Wᵀ [in, out], a vector as a
row [1, n], a gate as [1, 1]; q, k and v side by side in one [d, 3d] (their biases in one [1, 3d]).
``load_reference`` copies a reference model into member k (the equivalence tests); ``export_member``
builds the reference model that member k is, for probes written against ``models.py``;
``reference_layout`` gathers a reference's weights or gradients in the engine's layout ([N, r, c]
for block tensors) for comparison.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from deepnotes.core.engine import Stack
from deepnotes.core.models import Block, TransformerLM


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
    **{f"{sub}_{kind}": (lambda b, sub=sub, get=get: [get(_residual(b, sub))])
       for sub in ("attn", "ffn")
       for kind, get in (("norm_w", lambda r: r.norm.weight), ("norm_b", lambda r: r.norm.bias),
                         ("gate", lambda r: r.gate))},
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
TABLES = ("embed", "positions")     # kept as they are: [rows, d]


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
        for t, chunk in zip(tensors, value.chunk(len(tensors), dim=1)):
            t.copy_(chunk.T)
    else:
        for t, chunk in zip(tensors, value.reshape(-1).chunk(len(tensors))):
            t.copy_(chunk.view_as(t))


def _blocks(model) -> Sequence[Block]:
    return model.blocks if isinstance(model, TransformerLM) else list(model)


def _pieces(stack: Stack, model, k: int) -> dict[str, list[list[torch.Tensor]]]:
    """name → per block (or once, outside the blocks) the list of reference tensors it holds, for
    the parameters member k's style has."""
    names = stack.member_names(k)
    out = {n: [BLOCK_TENSORS[n](b) for b in _blocks(model)] for n in stack.block_names if n in names}
    if isinstance(model, TransformerLM):
        out.update({n: [[TOP_TENSORS[n](model)]] for n in names if n not in stack.block_names})
    return out


def reference_layout(stack: Stack, model, of: Callable[[torch.Tensor], torch.Tensor] = lambda t: t.detach(),
                     k: int = 0) -> dict[str, torch.Tensor]:
    """A reference model's tensors (``of``: the weight, or ``lambda t: t.grad``) in the engine's
    member layout: [N, r, c] for block tensors, [r, c] for the rest. ``model``: a TransformerLM, or
    a list of Blocks (block tensors only); the parameters member ``k``'s style has."""
    out = {}
    for name, pieces in _pieces(stack, model, k).items():
        rows = [to_engine(name, [of(t) for t in piece]) for piece in pieces]
        out[name] = torch.stack(rows) if name in stack.block_names else rows[0]
    return out


@torch.no_grad()
def load_reference(stack: Stack, k: int, model) -> Stack:
    """Copy the reference ``model`` (a TransformerLM, or a list of Blocks) into member k."""
    for name, tensor in reference_layout(stack, model, k=k).items():
        stack.member(name, k).copy_(tensor)
    return stack


@torch.no_grad()
def write_reference(stack: Stack, k: int, model):
    """Copy member k into the reference ``model`` (a TransformerLM or a ModuleList of Blocks)."""
    for name, pieces in _pieces(stack, model, k).items():
        target = stack.member(name, k)
        rows = target.unbind(0) if name in stack.block_names else [target]
        for piece, row in zip(pieces, rows):
            from_engine(name, row, piece)
    return model


def export_member(stack: Stack, k: int) -> TransformerLM:
    """The reference TransformerLM holding member k's current weights (on the stack's device and dtype)."""
    ref = stack.embed
    return write_reference(stack, k, TransformerLM(stack.cfgs[k]).to(device=ref.device, dtype=ref.dtype))


def block_list(stack: Stack, k: int) -> nn.ModuleList:
    """Member k's blocks as reference :class:`Block` modules (MLP-only stacks have no TransformerLM)."""
    ref = stack.embed
    blocks = nn.ModuleList([Block(stack.cfgs[k]) for _ in range(stack.n_layers)])
    return write_reference(stack, k, blocks.to(device=ref.device, dtype=ref.dtype))
