"""Ensembles on a cluster: with ``DEEPNOTES_SCHEDULER`` set to a Dask scheduler's address (``tcp://host:8786``),
every :func:`~deepnotes.core.ensembles.train_many` submits its ensembles there through Dask's ``distributed``
client (:func:`scheduler_executor`), the chapters included, with no change to their code; each ensemble trains in
one thread, the same numbers as the local worker processes, bit for bit. ``train_many(..., executor=...)`` takes
any :class:`concurrent.futures.Executor` the same way."""

from __future__ import annotations

import asyncio
import atexit
import os
from concurrent.futures import Executor

SCHEDULER_VARIABLE = "DEEPNOTES_SCHEDULER"  # a Dask scheduler's address: every train_many submits its ensembles there
SCHEDULER_TIMEOUT = 10  # seconds to wait for the scheduler to answer


_CLIENTS: dict = {}  # scheduler address → its Dask client, kept for the process (close_scheduler_clients)


def _client_executor(address: str) -> Executor:
    """The executor of a Dask client of the scheduler at ``address``, one client per address."""
    if address in _CLIENTS and _CLIENTS[address].status == "running":
        return _CLIENTS[address].get_executor()
    try:
        from distributed import Client
    except ImportError as e:
        raise ValueError(
            f"{SCHEDULER_VARIABLE}={address!r} asks for a Dask cluster, but Dask's distributed is not installed "
            "(pip install distributed)"
        ) from e
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT, set_as_default=False)  # the reader's dask stays local
    except (OSError, ValueError, TypeError, asyncio.TimeoutError) as e:  # an unreachable or malformed address
        raise ValueError(
            f"{SCHEDULER_VARIABLE}={address!r}: no Dask scheduler answers there within {SCHEDULER_TIMEOUT} s ({e}); "
            "give a scheduler's address, such as tcp://host:8786, or unset it to train here"
        ) from e
    if not _CLIENTS:
        atexit.register(close_scheduler_clients)
    _CLIENTS[address] = client
    return client.get_executor()


def close_scheduler_clients() -> None:
    """Close the Dask clients :func:`scheduler_executor` opened (before their cluster goes away)."""
    while _CLIENTS:
        _CLIENTS.popitem()[1].close()


def scheduler_executor() -> Executor | None:
    """The executor of the Dask scheduler named by ``DEEPNOTES_SCHEDULER`` (one client per address, kept until
    :func:`close_scheduler_clients`), or
    None where the variable is unset or empty (train here, on :func:`run_jobs`' worker processes)."""
    address = os.environ.get(SCHEDULER_VARIABLE, "").strip()
    return _client_executor(address) if address else None
