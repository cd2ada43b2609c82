"""Issue 45: training on a cluster. train_many submits its ensembles to any concurrent.futures Executor; Dask's
``distributed`` is the tested engine (a LocalCluster of two worker processes here; the same client a reader points
at a real scheduler, by ``executor=`` or by ``DEEPNOTES_SCHEDULER``). The results are the local worker processes',
bit for bit: seeds belong to runs, not to workers, and every job trains in one thread on either."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

import deepnotes as dn
from deepnotes.core import cluster as dask_cluster
from deepnotes.core import ensembles, workers

distributed = pytest.importorskip("distributed")


def _runs():
    """Four small runs in two ensembles (two graphs), different seeds and rates: (models, trains)."""
    models = [dn.ModelConfig(n_layers=n, d_model=16, n_heads=2, d_ff=32, norm="pre") for n in (2, 2, 3, 3)]
    trains = [
        dn.TrainConfig(optimizer="adam", lr=lr, steps=5, batch_size=2, seq_len=8, seed=s, held_out=16)
        for s, lr in enumerate((1e-3, 3e-3, 1e-3, 3e-3))
    ]
    return models, trains


def _losses(hists) -> list[tuple]:
    return [(tuple(h.losses), h.held_out_loss) for h in hists]


@pytest.fixture(scope="module")
def cluster():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
        ) as local,
        distributed.Client(local) as client,
    ):
        yield local, client


def test_train_many_on_a_dask_cluster_equals_the_local_worker_processes_bit_for_bit(cluster, monkeypatch):
    local, client = cluster
    models, trains = _runs()
    task = dn.MarkovLanguage(16)
    here = ensembles.train_many(models, trains, task, workers=2)
    there = ensembles.train_many(models, trains, task, workers=2, executor=client.get_executor())
    assert _losses(there) == _losses(here)
    # the chapters' way: no code change, the scheduler's address in the environment
    monkeypatch.setenv(dask_cluster.SCHEDULER_VARIABLE, local.scheduler_address)
    try:
        assert _losses(ensembles.train_many(models, trains, task, workers=2)) == _losses(here)
    finally:
        dask_cluster.close_scheduler_clients()


def test_any_executor_gets_the_jobs_costliest_first_in_one_thread_each():
    import torch

    order = []

    def job(k):
        order.append(k)
        return k, torch.get_num_threads()

    before = torch.get_num_threads()
    with ThreadPoolExecutor(max_workers=1) as pool:
        out = workers.run_jobs(job, [(0,), (1,), (2,)], costs=[1, 3, 2], executor=pool)
    assert [k for k, _ in out] == [0, 1, 2] and order == [1, 2, 0]
    assert {threads for _, threads in out} == {1}
    assert torch.get_num_threads() == before  # the pool ran in this process: its thread count is given back


def test_a_scheduler_that_does_not_answer_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(dask_cluster, "SCHEDULER_TIMEOUT", 1)
    monkeypatch.setenv(dask_cluster.SCHEDULER_VARIABLE, "tcp://127.0.0.1:1")
    with pytest.raises(ValueError, match=r"DEEPNOTES_SCHEDULER='tcp://127.0.0.1:1': no Dask scheduler answers there"):
        workers.run_jobs(pow, [(2, 3)])
    monkeypatch.setenv(dask_cluster.SCHEDULER_VARIABLE, "  ")
    assert dask_cluster.scheduler_executor() is None and workers.run_jobs(pow, [(2, 3)]) == [8]


def test_on_a_cluster_each_ensemble_checks_its_memory_where_it_trains(cluster, monkeypatch):
    """With an executor the machine that trains checks the memory (once per ensemble), not the one that submits."""
    from deepnotes.core import config, train

    calls = []

    def counting(*args, **kwargs):
        calls.append(args[:2])
        return config.check_fits(*args, **kwargs)

    monkeypatch.setattr(ensembles, "check_fits", counting)  # where train_many checks, before any ensemble starts
    monkeypatch.setattr(train, "check_fits", counting)  # where a job checks, on the machine that trains it
    models, trains = _runs()
    with ThreadPoolExecutor(max_workers=1) as pool:  # in this process, so the count is seen
        ensembles.train_many(models, trains, dn.MarkovLanguage(16), executor=pool)
    assert sorted(members for _, members in calls) == [2, 2]  # two ensembles, each checked once, in its job
    with pytest.raises(ValueError, match="needs about .* GiB"):  # and a run too big for it is refused there
        too_big = [dn.ModelConfig(n_layers=4096, d_model=4096, n_heads=8, d_ff=16384)]
        ensembles.train_many(too_big, trains[:1], dn.MarkovLanguage(16), executor=_local_cluster_executor(cluster))


def _local_cluster_executor(cluster):
    return cluster[1].get_executor()
