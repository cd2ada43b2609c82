"""Ensembles on a GPU hold no more members than fit in a share of its memory (the 1000-layer chapter's
map at the gpu budget put 44 members of 1000 blocks in one ensemble: 138 GB, out of memory on an H200)."""

from deepnotes.core import ensembles as ensemble
from deepnotes.core.config import FLOAT_BYTES, STATE_COPIES, ModelConfig, TrainConfig, stack_bytes


def _cfgs(n, depth=1000, d=128):
    return (
        [ModelConfig(n_layers=depth, d_model=d, n_heads=4, d_ff=4 * d, vocab_size=16) for _ in range(n)],
        [TrainConfig(optimizer="adam", lr=1e-3, steps=3, batch_size=4, seq_len=16, seed=s) for s in range(n)],
    )


def test_a_limit_cuts_a_group_into_pieces_and_the_cpu_has_none():
    models, trains = _cfgs(10)
    assert ensemble.ensemble_groups(models, trains) == [list(range(10))]
    pieces = ensemble.ensemble_groups(models, trains, limit=lambda m, t: 4)
    assert pieces == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert ensemble.member_limit(models[0], trains[0], "cpu") is None


def test_a_members_training_bytes_count_adams_state_per_parameter():
    models, trains = _cfgs(1, depth=1000, d=128)
    weights = 1000 * (4 * 128**2 + 2 * 128 * 512)
    assert stack_bytes(models[0], 1, trains[0]) >= FLOAT_BYTES * STATE_COPIES * weights
    assert stack_bytes(models[0], 1, trains[0]) < 1.3 * FLOAT_BYTES * STATE_COPIES * weights


def test_every_ensemble_has_its_memory_checked_once(monkeypatch):
    """Issue 45: train_many checks every ensemble's memory before any starts, train checks its run's, and neither
    checks again when it builds and trains the Stack (a Stack built directly still checks its weights)."""
    import deepnotes as dn
    from deepnotes.core import config, engine, ensembles, train

    calls = []

    def counting(*args, **kwargs):
        calls.append(args[:2])
        return config.check_fits(*args, **kwargs)

    for module in (engine, train, ensembles):
        monkeypatch.setattr(module, "check_fits", counting)
    models = [dn.ModelConfig(n_layers=n, d_model=8, n_heads=1, d_ff=8) for n in (1, 1, 2)]
    trains = [dn.TrainConfig(steps=1, batch_size=1, seq_len=4, seed=s, held_out=0) for s in range(3)]
    ensembles.train_many(models, trains, dn.MarkovLanguage(16))
    assert [members for _, members in calls] == [2, 1]  # two ensembles (two graphs), one check each
    calls.clear()
    dn.train(models[0], trains[0])
    assert len(calls) == 1
    calls.clear()
    engine.Stack(models[:2])
    assert len(calls) == 1
