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
