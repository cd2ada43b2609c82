"""Bad input found by a fuzzer (Hypothesis): every public entry point below, called with whatever a strategy
draws (ints including bools and huge or negative ones; floats including NaN, ±inf, -0.0 and subnormals;
strings where numbers go; wrong containers), must either raise a ``ValueError``/``TypeError`` from
deepnotes' own code whose message names the argument, or return a valid result (finite numbers of the
right type). Anything else fails: a result with a NaN in it, a value silently coerced, an exception from
inside torch, numpy or Python, or no answer within ``HANG_SECONDS``.

    python tests/test_fuzz.py [examples]   # the longer run: tried / clear / valid / silent / unclear / hangs
"""

from __future__ import annotations

import math
import os
import signal
import sys
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

try:
    import hypothesis
except ImportError:  # requirements.txt installs it; CI must not skip the fuzzer silently
    if os.environ.get("CI"):
        pytest.fail("hypothesis is missing in CI: requirements.txt installs it", pytrace=False)
    pytest.skip("hypothesis is not installed (pip install -r requirements.txt)", allow_module_level=True)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# deepnotes' code, its tools, and the type check at the door of every annotated deepnotes function (beartype's
# wrapper, installed by ``deepnotes/__init__.py``; its messages name the parameter)
OURS = (str(ROOT / "deepnotes"), str(ROOT / "tools"), "<@beartype(deepnotes.")
HANG_SECONDS = 20
CI_EXAMPLES = 60  # per entry point in the test suite (seeded, so every run tries the same inputs)

# ---- strategies -----------------------------------------------------------------------------------------

INTS = st.one_of(st.booleans(), st.integers(-(2**70), 2**70), st.integers(-3, 40))
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 0.0, 5e-324, -5e-324, 1e308, math.nan, math.inf, -math.inf]),
    st.floats(0.0, 2.0),
)
WRONG = st.one_of(st.none(), st.text(max_size=4), st.lists(st.integers(0, 3), max_size=3), st.just(object()))
NUMBER = st.one_of(INTS, FLOATS, WRONG)


# ---- what an entry point may do -----------------------------------------------------------------------


class Silent(AssertionError):
    """The call returned something it should have refused."""


def _finite(value) -> bool:
    """Every number in ``value`` (a number, or a tuple/list/dict of them) is finite."""
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, (tuple, list)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def outcome(call: Callable[[], object], names: tuple[str, ...], valid: Callable[[object], bool] = _finite) -> str:
    """'clear' (a ValueError/TypeError from deepnotes naming one of ``names``) or 'valid' (a result ``valid``
    accepts: False for any result where the input should have been refused); raises ``Silent`` or
    ``AssertionError`` for anything else, with what happened."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        result = call()
    except _Hang:
        raise AssertionError(f"hang: no answer in {HANG_SECONDS} s") from None
    except (ValueError, TypeError) as err:
        frames = traceback.extract_tb(err.__traceback__)
        where = frames[-1].filename if frames else ""
        if not where.startswith(OURS):
            raise AssertionError(f"unclear: {type(err).__name__} raised in {where}: {err}") from err
        if not any(n in str(err) for n in names):
            raise AssertionError(f"unclear: the message names none of {names}: {err}") from err
        return "clear"
    except Exception as err:  # noqa: BLE001  (from torch, numpy, Python: not ours, not clear)
        raise AssertionError(
            f"unclear: {type(err).__name__} in {traceback.extract_tb(err.__traceback__)[-1].filename}: {err}"
        ) from err
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if not valid(result):
        raise Silent(f"silent: returned {result!r}")
    return "valid"


# ---- the entry points -----------------------------------------------------------------------------------

SEED_LIMIT = 2**63  # torch's generators take a seed below this


def _int(x, low: int = 1, high: int | None = None) -> bool:
    """An int (not a bool) in [low, high)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= low and (high is None or x < high)


def _positive(x) -> bool:
    """A finite number > 0 (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _real(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _tolerances(rtol, approx) -> bool:
    return _real(rtol) and _real(approx) and 0 <= rtol <= approx


@dataclass(frozen=True)
class Entry:
    name: str
    strategy: st.SearchStrategy  # draws the arguments: a tuple
    call: Callable[..., object]
    names: tuple[str, ...]  # the argument names a clear message may name
    sensible: Callable[..., bool]  # the arguments are ones the entry point should accept
    valid: Callable[[object], bool] = _finite  # what an accepted call may return


def _scaling():
    from deepnotes.core import scaling

    return scaling


def _vd():
    from deepnotes.show import verdicts

    return verdicts


def _check_scaling(var_name: str):
    import sympy as sp

    n, m = sp.symbols("N M", positive=True)
    var = {"N": n, "M": m}.get(var_name, var_name)
    return _vd().check_scaling("c", "s", n**2, 3 * n**2, var)


def _generator(seed):
    from deepnotes.core import data

    return data.generator(seed).initial_seed()


def _train_config(seed, lr, steps):
    import deepnotes as dn

    return dn.TrainConfig(optimizer="adam", lr=lr, steps=steps, seed=seed)


def _new_figure(panels, height, width):
    from deepnotes.show import plots

    fig, axes = plots.new_figure(panels, height=height, width=width)
    return len(axes)


def _markov(vocab, seed, temperature):
    import deepnotes as dn

    task = dn.MarkovLanguage(vocab, seed=seed, temperature=temperature)
    return (task.entropy_rate(), task.unigram_entropy())


def _ensembles(n_models, n_trains, warmup):
    """The cost model's ensembles of n_models model configs and n_trains train configs (warmup steps of 20)."""
    import deepnotes as dn
    from deepnotes.cost import model

    runs = model.ensembles(
        [dn.ModelConfig(n_layers=2)] * n_models, [dn.TrainConfig(steps=20, warmup_steps=warmup)] * n_trains
    )
    return sum(r.members for r in runs)


def _update_panel(values):
    """update_curves over one diverged run with ``values`` beside a healthy one: the axis stays finite."""
    from deepnotes.core.train import History
    from deepnotes.show import plots

    bad = History(update_rms=list(values), diverged_at=len(values) if values else 0)
    good = History(update_rms=[0.1, 0.2, 0.3])
    fig, (ax,) = plots.new_figure(1)
    plots.update_curves(ax, {"post": bad, "pre": good})
    return list(ax.get_ylim())


ENTRIES = [
    Entry(
        "scaling.deepnorm_coefficients(n)",
        st.tuples(NUMBER),
        lambda n: _scaling().deepnorm_coefficients(n),
        ("n_layers", "N"),
        lambda n: _int(n),
    ),
    Entry(
        "scaling.su_coefficients(n, optimizer)",
        st.tuples(NUMBER, st.sampled_from(["sgd", "adam", "lamb", "Adam", "", "x"])),
        lambda n, o: _scaling().su_coefficients(n, o),
        ("n_layers", "optimizer"),
        lambda n, o: _int(n) and o in ("sgd", "adam", "lamb"),
    ),
    Entry(
        "scaling.branch_weight(alpha, lam)",
        st.tuples(NUMBER, NUMBER),
        lambda a, lam: _scaling().branch_weight(a, lam),
        ("alpha", "lam", "λ", "α"),
        lambda a, lam: _positive(a) and _positive(lam) and math.isfinite(lam * lam / a),
    ),
    Entry(
        "scaling.warmup_start_lr(lr, n)",
        st.tuples(NUMBER, NUMBER),
        lambda lr, n: _scaling().warmup_start_lr(lr, n),
        ("lr", "n_layers"),
        lambda lr, n: _positive(lr) and _int(n),
    ),
    Entry(
        "scaling.linear_warmup_factor(step, warmup)",
        st.tuples(NUMBER, NUMBER),
        lambda s, w: _scaling().linear_warmup_factor(s, w),
        ("step", "warmup"),
        lambda s, w: _int(s, 0) and _int(w, 0),
    ),
    Entry(
        "verdicts.check_number(claimed, computed, rtol, approx_rtol)",
        st.tuples(NUMBER, NUMBER, FLOATS, FLOATS),
        lambda c, v, r, a: _vd().check_number("c", "s", c, v, rtol=r, approx_rtol=a),
        ("claimed", "computed", "rtol", "approx_rtol"),
        lambda c, v, r, a: _real(c) and _real(v) and _tolerances(r, a),
        valid=lambda v: v.status in ("holds", "holds approximately", "wrong"),
    ),
    Entry(
        "verdicts.check_scaling(var)",
        st.tuples(st.sampled_from(["N", "M", "n", ""])),
        _check_scaling,
        ("var",),
        lambda var: var == "N",
        valid=lambda v: v.status in ("holds", "holds approximately", "wrong"),
    ),
    Entry("data.generator(seed)", st.tuples(NUMBER), _generator, ("seed",), lambda seed: _int(seed, 0, SEED_LIMIT)),
    Entry(
        "TrainConfig(seed, lr, steps)",
        st.tuples(NUMBER, NUMBER, NUMBER),
        _train_config,
        ("seed", "lr", "steps"),
        lambda seed, lr, steps: _int(seed, 0, SEED_LIMIT) and _positive(lr) and _int(steps),
        valid=lambda cfg: True,
    ),
    Entry(
        "plots.new_figure(panels, height, width)",
        st.tuples(NUMBER, NUMBER, st.one_of(st.none(), NUMBER)),
        _new_figure,
        ("panels", "height", "width"),
        lambda p, h, w: _int(p, 1, 25) and _positive(h) and h <= 12 and (w is None or (_positive(w) and w <= 6)),
    ),
    Entry(
        "MarkovLanguage(vocab_size, seed, temperature)",
        st.tuples(st.one_of(st.integers(-2, 40), INTS), st.integers(0, 3), st.one_of(st.floats(0.05, 3), FLOATS)),
        _markov,
        ("vocab_size", "seed", "temperature"),
        lambda v, seed, t: _int(v, 2, 513) and _positive(t) and t >= 1e-300,  # a cold chain is a chain
    ),
    Entry(
        "cost.model.ensembles(model_cfgs, train_cfgs of another length, warmup_steps)",
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.one_of(st.integers(-2, 40), INTS)),
        _ensembles,
        ("model_cfgs", "train_cfgs", "warmup_steps"),
        lambda m, t, w: m == t and _int(w, 0, 21),
        valid=lambda members: True,
    ),
    Entry(
        "plots.update_curves(a diverged run's values)",
        st.tuples(st.lists(FLOATS, max_size=6)),
        _update_panel,
        ("update_rms",),
        lambda values: True,
    ),
]


def _run(entry: Entry, args: tuple) -> str:
    import matplotlib.pyplot as plt

    accept = entry.sensible(*args)
    try:
        return outcome(lambda: entry.call(*args), entry.names, lambda r: accept and entry.valid(r))
    finally:
        plt.close("all")


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_an_entry_point_refuses_nonsense_clearly_or_returns_something_valid(entry):
    @settings(
        max_examples=CI_EXAMPLES,
        derandomize=True,  # the suite tries the same inputs on every run
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(entry.strategy)
    def check(args):
        _run(entry, args)

    check()


def tally(examples: int) -> Counter:
    """Every entry point against ``examples`` random draws: tried / clear / valid / silent / unclear / hangs."""
    counts: Counter = Counter()
    for entry in ENTRIES:
        for _ in range(examples):
            args = entry.strategy.example()
            counts["tried"] += 1
            try:
                counts[_run(entry, args)] += 1
            except Silent as err:
                counts["silent"] += 1
                print(f"{entry.name}{args!r}: {err}")
            except AssertionError as err:
                counts["hangs" if str(err).startswith("hang") else "unclear"] += 1
                print(f"{entry.name}{args!r}: {err}")
    return counts


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore", category=hypothesis.errors.NonInteractiveExampleWarning)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    counts = tally(n)
    print(" / ".join(f"{k} {counts[k]}" for k in ("tried", "clear", "valid", "silent", "unclear", "hangs")))
