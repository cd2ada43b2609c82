"""The chapter's answer, stated first: sentences written from the derivation (q = d·s² and the identity path's
weight ((1+v_att)(1+v_ffn))^{-L/2}, :func:`.experiments.identity_weight`) and from Experiment 1's encoder at
initialization (:func:`.experiments.sweep_probes`). Every number in them is computed here, and so is every
whether a measured cos(x_N, x_0) (seed 0's, said so) lies above the cosine of unrelated vectors at that width
(:func:`deepnotes.core.measure.unrelated_cosine_floor`); the sentences state no outcome (the verdicts on these
probes, over every seed, are the page's identity-weight rows). The first sentence
stands above the small figure (:func:`.figures.answer`), the rest under it."""

from __future__ import annotations

from deepnotes.chapters.bert_init.experiments import (
    BERT_DEPTH,
    BERT_STD,
    BERT_WIDTH,
    InitProbe,
    identity_weight,
    q_of,
    xavier_scale_std,
    xavier_std,
)
from deepnotes.core.measure import NOISE_SIGMAS, unrelated_cosine_floor
from deepnotes.core.validate import Count, Real
from deepnotes.show.say import Sentence, Statement


def keeps(cos: Real, width: Count) -> bool:
    """Whether a measured weight of x_0 (a mean cosine) is above what unrelated vectors of this width show."""
    return cos > unrelated_cosine_floor(width)


def _side(cos: Real, width: Count) -> str:
    """Where a measured cosine lies against the floor of unrelated vectors: "above" or "not above"."""
    return "above" if keeps(cos, width) else "not above"


def _num(x: Real) -> str:
    """Two decimals, or two significant digits below 0.01 but not 0; a minus sign, not a hyphen."""
    return (f"{x:.2f}" if abs(x) >= 0.01 or x == 0 else f"{x:.2g}").replace("-", "−")


def _cos(x: Real) -> str:
    """A measured mean cosine: two decimals ("0.00" where it cannot be told from 0 at that precision)."""
    return f"{x:.2f}".replace("-", "−")


def sentences(probes: dict[float, InitProbe]) -> list[str]:
    """Two sentences: the derived weight of the identity path after BERT-base's 12 Post-LN layers at 0.02 and at
    Xavier's scale (from q = d·s²), and what the encoder measured at 0.02 and at the swept std nearest Xavier's q;
    then the limits of both (FFN branches only, the derivation with the measured ρ, the noise floor of a cosine)."""
    if BERT_STD not in probes:
        raise ValueError(f"probes has no std {BERT_STD} (BERT's): got {sorted(probes)}")
    bert = probes[BERT_STD]
    w_bert, w_xav = identity_weight(BERT_STD, 0.0, BERT_DEPTH), identity_weight(xavier_std(), 0.0, BERT_DEPTH, False)
    first = (
        f"Only q = d s² matters: {BERT_STD:g} cut at ±2σ has q = {q_of(BERT_STD):.2f} at d = {BERT_WIDTH}, Xavier's "
        f"1/√{BERT_WIDTH} has q = {q_of(xavier_std(), False):.0f}, and after {BERT_DEPTH} Post-LN layers the identity "
        f"path's derived weight is {_num(w_bert)} against Xavier's {_num(w_xav)}. Measured on seed 0 over "
        f"{bert.depth} layers, std {BERT_STD:g} leaves cos(x_N, x_0) = {_cos(bert.cos_x0[-1])}, "
        f"{_side(bert.cos_x0[-1], bert.width)} the floor of unrelated vectors "
        f"({unrelated_cosine_floor(bert.width):.2f})"
    )
    other = xavier_scale_std(list(probes))
    if other is not None:
        o = probes[other]
        link = "while" if keeps(o.cos_x0[-1], o.width) != keeps(bert.cos_x0[-1], bert.width) else "and"
        first += (
            f" {link} std {other:g} (q = {q_of(other):.2f}) leaves {_cos(o.cos_x0[-1])}, "
            f"{_side(o.cos_x0[-1], o.width)} it"
        )
    first += "."
    shown = [BERT_STD] + ([other] if other is not None else [])
    second = (
        "The derived weights count the FFN branches only; with attention's share at the measured ρ the derivation "
        "gives "
        + " and ".join(f"{_num(probes[s].derived_cos[-1])} at std {s:g}" for s in shown)
        + f" for the encoder measured (width {bert.width}, BERT-equivalent stds s·√(768/d)), whose weight of x_0 is "
        f"the mean cos(x_N, x_0) over the probe's tokens; below {unrelated_cosine_floor(bert.width):.2f} "
        f"({NOISE_SIGMAS}/√d) a cosine cannot be told from that of unrelated vectors."
    )
    return [first, second]


def markdown(probes: dict[float, InitProbe]) -> Statement:
    """The headline shown above the answer's figure: the first of :func:`sentences`, after a bold lead."""
    return Statement([Sentence(sentences(probes)[0])], lead="The answer, from this page's derivation and runs.")


def details(probes: dict[float, InitProbe]) -> Statement:
    """The rest of :func:`sentences`, shown under the answer's figure."""
    return Statement([Sentence(s) for s in sentences(probes)[1:]])
