"""Synthetic tasks from a seeded generator; nothing is downloaded.

``MarkovLanguage``: a random first-order Markov chain over V tokens. Predicting token t+1 from the
tokens up to t can do no better than the chain's entropy rate

    H = −Σ_i π_i Σ_j P_ij log P_ij       (nats per token, π the stationary distribution),

so every loss curve has an exact floor. A model that ignores its context can reach only the
entropy of π, ``unigram_entropy``: the plateau a stuck deep model sits on.

Seeding lives here too: a model built under :func:`seeded` gets the same weights from the same seed
whatever ran before (the global RNG is left as it was); data streams and probe batches draw from a
:func:`generator` of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import torch

from deepnotes.core.config import check_allocation
from deepnotes.core.validate import (
    AtLeastThree,
    AtLeastTwo,
    Count,
    Positive,
    Probability,
    Seed,
)


def seeded(seed: Seed) -> AbstractContextManager[None]:
    """Run the block with torch's CPU RNG seeded by ``seed``; restore the global state afterwards. The seed is
    checked when this is called, not when the block is entered."""
    return _seeded(seed)


@contextmanager
def _seeded(seed: int) -> Iterator[None]:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def generator(seed: Seed, device=None) -> torch.Generator:
    """A generator seeded by ``seed`` (data streams, probe batches), on the CPU unless ``device``."""
    return torch.Generator(device=device if device is not None else "cpu").manual_seed(seed)


PROBE_SEED_OFFSET = 100  # probe batches of seed s come from generator(100 + s), apart from the training streams
# The chain's π is an eigendecomposition of the V × V matrix (V³ time) and its masked floor a V³ tensor of
# float64 (1.1 GB at 512); the book's languages have 8 to 32 tokens.
MAX_VOCAB = 512
MIN_TEMPERATURE = 1e-300  # Z / temperature must stay a float (|Z| < 40 for any draw of the book's sizes)
MAX_TEMPERATURE = 1e6  # hotter is uniform to float64's precision (and tiny logits stall the eigensolver)


class MarkovLanguage:
    def __init__(self, vocab_size: AtLeastTwo = 16, seed: Seed = 0, temperature: Positive = 0.5):
        """Transition matrix P = softmax(Z / temperature), Z ~ N(0, 1) from a generator seeded ``seed``.

        A lower temperature makes the next token more predictable (a lower floor).
        """
        if vocab_size > MAX_VOCAB:
            raise ValueError(
                f"vocab_size must be at most {MAX_VOCAB} (π is an eigendecomposition, V³ time; the masked floor a "
                f"V³ tensor, {8 * vocab_size**3 / 1e9:.3g} GB at this size), got {vocab_size!r}"
            )
        if not MIN_TEMPERATURE <= temperature <= MAX_TEMPERATURE:
            raise ValueError(
                f"temperature must be in [{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}] (colder overflows Z / temperature, "
                f"hotter is the uniform chain), got {temperature!r}"
            )
        self.vocab_size = vocab_size
        gen = generator(seed)
        logits = torch.randn(vocab_size, vocab_size, generator=gen, dtype=torch.float64)
        self.transition = torch.softmax(logits / temperature, dim=-1)  # [V, V], rows sum to 1
        self.stationary = _stationary(self.transition)  # [V]

    def entropy_rate(self) -> float:
        """H = −Σ_i π_i Σ_j P_ij log P_ij, the loss floor in nats."""
        p = self.transition
        row_entropy = -torch.special.xlogy(p, p).sum(dim=1)  # [V]; 0·log 0 = 0 (a cold chain has zeros)
        return float((self.stationary * row_entropy).sum())

    def unigram_entropy(self) -> float:
        """−Σ_i π_i log π_i: the loss of the best context-free predictor."""
        pi = self.stationary
        return float(-torch.special.xlogy(pi, pi).sum())

    def masked_entropy(self) -> float:
        """The floor of masked-token prediction when a masked token's two neighbours are visible:
        H(X_t | X_{t−1}, X_{t+1}) = −Σ_{a,x,b} π_a P_ax P_xb · log(P_ax P_xb / Σ_y P_ay P_yb)."""
        p, pi = self.transition, self.stationary
        joint = pi[:, None, None] * p[:, :, None] * p[None, :, :]  # [a, x, b]
        cond = joint / joint.sum(dim=1, keepdim=True)  # p(x | a, b)
        return float(-(joint * cond.clamp_min(1e-300).log()).sum())

    def sample(self, batch_size: Count, seq_len: Count, generator: torch.Generator) -> torch.Tensor:
        """Token sequences [batch_size, seq_len] (int64), the first token drawn from π."""
        check_allocation(2 * batch_size * seq_len, {"batch_size": batch_size, "seq_len": seq_len}, bytes_each=8)
        pi = self.stationary.float()
        p = self.transition.float()
        tokens = torch.empty(batch_size, seq_len, dtype=torch.long)
        tokens[:, 0] = torch.multinomial(pi.expand(batch_size, -1), 1, generator=generator)[:, 0]
        for t in range(1, seq_len):
            tokens[:, t] = torch.multinomial(p[tokens[:, t - 1]], 1, generator=generator)[:, 0]
        return tokens


def _stationary(p: torch.Tensor) -> torch.Tensor:
    """π with π P = π, Σπ = 1: the left eigenvector of P for eigenvalue 1 (float64)."""
    vals, vecs = torch.linalg.eig(p.T)
    k = torch.argmin((vals - 1).abs())
    pi = vecs[:, k].real
    pi = pi / pi.sum()
    return pi.clamp_min(0) / pi.clamp_min(0).sum()


def mask_positions(
    batch_size: Count, seq_len: AtLeastThree, prob: Probability, generator: torch.Generator
) -> torch.Tensor:
    """A boolean mask [batch_size, seq_len] of positions to hide for masked-language modelling:
    interior positions only (1..T−2), each chosen with probability ``prob``, never two adjacent,
    so every hidden token has both neighbours visible and :meth:`MarkovLanguage.masked_entropy`
    is the exact loss floor."""
    if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0 < prob < 1:
        raise ValueError(f"prob must be in (0, 1), got {prob!r}")
    check_allocation(2 * batch_size * seq_len, {"batch_size": batch_size, "seq_len": seq_len})  # draw, mask
    draw = torch.rand(batch_size, seq_len, generator=generator) < prob  # [B, T]
    draw[:, 0] = draw[:, -1] = False
    for t in range(2, seq_len - 1):  # drop a pick next to a kept one
        draw[:, t] &= ~draw[:, t - 1]
    if not draw.any():  # a batch with nothing to predict has no loss: hide one interior token instead
        row = int(torch.randint(batch_size, (1,), generator=generator))
        col = int(torch.randint(1, seq_len - 1, (1,), generator=generator))
        draw[row, col] = True
    return draw


def probe_generator(seed: Seed = 0) -> torch.Generator:
    """The generator of probe batch ``seed`` (a probe may draw more from it, e.g. a mask)."""
    return generator(PROBE_SEED_OFFSET + seed)


def probe_batch(task: MarkovLanguage, batch_size: Count, seq_len: Count, seed: Seed = 0, device=None) -> torch.Tensor:
    """The fixed batch [batch_size, seq_len] that probes at initialization measure on: ``task``'s
    sequences from :func:`probe_generator` (``seed``)."""
    return task.sample(batch_size, seq_len, probe_generator(seed)).to(device)
