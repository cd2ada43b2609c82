"""Seeding in one place: a model built under :func:`seeded` gets the same weights from the same seed
whatever ran before, and the global RNG is left as it was."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's CPU RNG seeded by ``seed``; restore the global state afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def generator(seed: int, device=None) -> torch.Generator:
    """A generator seeded by ``seed`` (data streams, probe batches), on the CPU unless ``device``."""
    return torch.Generator(device=device if device is not None else "cpu").manual_seed(seed)
