"""Sentences that state an outcome, rendered from the verdicts they summarize (issue 61).

An answer at the top of a page ("He + ReLU keeps the second moment") is a reading of a verdict row, not a second
judgement beside it. :func:`say` turns one verdict into the clause its status allows (the caller writes one phrase per
status; the one for "not checkable here" may state no outcome), :func:`sentence` joins clauses and plain text into a
:class:`Sentence` that remembers which span came from which verdict, and :class:`Statement` shows sentences as
Markdown and, while a chapter records its verdicts (:func:`deepnotes.ledger.record.record_verdicts`), records them
beside its rows. :func:`problems` reads a recorded sentence against the page's rows: an outcome word outside every
verdict's clause, a clause whose verdict is not on the page or has another status there, and a single seed's value
quoted where the row gives the median of several are each a problem, named.

    v = claims.moment_verdicts(table)[0]
    s = sentence("He + ReLU ", say(v, holds="keeps E[x²] in expectation", wrong="does not keep E[x²]",
                                   undecided="cannot be judged from these draws"), ".")
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Callable

from deepnotes.core.validate import NonNegativeCount, choice
from deepnotes.show.verdict_words import APPROX, HOLDS, LARGE_VALUE, UNCHECKABLE, WRONG
from deepnotes.show.verdicts import Verdict

STATUSES = (HOLDS, APPROX, WRONG, UNCHECKABLE)

# Words that state how a claim or a run came out. A sentence may use them only inside a clause rendered from a verdict
# whose status is decided (holds, approximately or wrong); "cannot be judged", "not checkable" state none.
OUTCOME_WORDS = (
    "train",
    "trains",
    "trained",
    "diverge",
    "diverges",
    "diverged",
    "fall",
    "falls",
    "grow",
    "grows",
    "stay",
    "stays",
    "flat",
    "confirm",
    "confirms",
    "hold",
    "holds",
    "refute",
    "refutes",
    "keep",
    "keeps",
    "lose",
    "loses",
    "meet",
    "meets",
    "fail",
    "fails",
    "wrong",
    "decay",
    "decays",
    "explode",
    "explodes",
    "vanish",
    "vanishes",
    "follow",
    "follows",
    "match",
    "matches",
)
OUTCOME = re.compile(r"\b(" + "|".join(OUTCOME_WORDS) + r")\b", re.IGNORECASE)
# A run's recorded event, not a judgement: the step at which a seed's loss became NaN/inf (History.diverged_at), or
# "diverged" as the median of seeds' values (verdicts.seeds_text: "diverged (div., div., -0.05)")
_VALUE = r"(?:-?[\d.]+(?:e[+-]?\d+)?|div\.)"  # one seed's value as verdicts.seeds_text writes it
EVENT = re.compile(rf"\bdiverged at steps? \d+(?:, \d+)*|\bdiverged(?= \({_VALUE}(?:, {_VALUE})+\))")


@dataclass(frozen=True)
class Said:
    """One verdict's clause: the phrase its status chose, the row's anchor (its HTML id) and status."""

    text: str
    anchor: str
    status: str
    claim: str


def say(
    verdict: Verdict,
    *,
    holds: str,
    wrong: str,
    undecided: str,
    approx: str | None = None,
    value: str = "",
) -> Said:
    """The clause for ``verdict``'s status: ``holds``, ``approx`` (default: ``holds`` followed by "(approximately)"),
    ``wrong`` or ``undecided`` (not checkable here: it may state no outcome, :data:`OUTCOME_WORDS`; refused, naming
    the word, if it does). ``value``, where given, follows the phrase in brackets ("falls (0.53)")."""
    found = OUTCOME.search(undecided)
    if found:
        raise ValueError(
            f"undecided={undecided!r} states an outcome ({found[0]!r}) for a row that is not checkable here: "
            "say what cannot be decided instead"
        )
    phrase = {
        HOLDS: holds,
        APPROX: approx if approx is not None else f"{holds} (approximately)",
        WRONG: wrong,
        UNCHECKABLE: undecided,
    }[verdict.status]
    return Said(f"{phrase} ({value})" if value else phrase, verdict.anchor, verdict.status, verdict.claim)


def say_run(verdict: Verdict, run: str, *, trains: str, fails: str) -> Said:
    """One run of a training-outcome verdict (:func:`~deepnotes.show.verdicts.check_outcome`): ``trains`` where the
    run's median over its seeds reached the verdict's threshold, else ``fails``, followed by that median; the clause
    links to the row (whose status may differ: the row judges every run it names together)."""
    if verdict.outcome is None:
        raise ValueError(f"{verdict.claim!r} is not a training-outcome verdict: say_run reads check_outcome's rows")
    medians = dict(verdict.outcome.measured)
    if run not in medians:
        raise ValueError(f"{verdict.claim!r} has no run {run!r}; its runs: {list(medians)}")
    m = medians[run]  # two decimals, two significant digits where large (−1.7e+10), "diverged" where it did
    shown = "diverged" if m == float("-inf") else f"{m:.2f}" if abs(m) < LARGE_VALUE else f"{m:.2g}"
    phrase = trains if m >= verdict.outcome.threshold else fails
    return Said(f"{phrase} ({shown})", verdict.anchor, verdict.status, verdict.claim)


def link(verdict: Verdict, text: str) -> Said:
    """``text`` (a name that states no outcome: a setting, a claim's subject) as a link to ``verdict``'s row."""
    found = OUTCOME.search(text)
    if found:
        raise ValueError(f"link text {text!r} states an outcome ({found[0]!r}): render it with say(...) by status")
    return Said(text, verdict.anchor, verdict.status, verdict.claim)


@dataclass(frozen=True)
class Span:
    """Where a verdict's clause lies in its sentence's text (characters ``start`` to ``end``), and its row."""

    start: NonNegativeCount
    end: NonNegativeCount
    anchor: str
    status: str

    def __post_init__(self):
        if self.end < self.start:
            raise ValueError(f"a span's end ({self.end}) must not come before its start ({self.start})")
        choice("status", self.status, STATUSES)


@dataclass(frozen=True)
class Sentence:
    """A sentence's text and the spans of it that verdicts rendered."""

    text: str
    spans: tuple[Span, ...] = ()

    def __str__(self) -> str:
        return self.text


def sentence(*pieces: str | Said | Sentence) -> Sentence:
    """Plain text and verdicts' clauses (and other sentences) joined in order, each clause's span remembered."""
    text, spans = "", []
    for piece in pieces:
        if isinstance(piece, Said):
            spans.append(Span(len(text), len(text) + len(piece.text), piece.anchor, piece.status))
            text += piece.text
        elif isinstance(piece, Sentence):
            spans += [Span(s.start + len(text), s.end + len(text), s.anchor, s.status) for s in piece.spans]
            text += piece.text
        elif isinstance(piece, str):
            text += piece
        else:
            raise TypeError(f"a sentence is made of text and say(...) clauses, got {piece!r}")
    return Sentence(text, tuple(spans))


def joined(parts: list[str | Said | Sentence], word: str = "and", sep: str = ", ") -> Sentence:
    """``parts`` as one list in prose: "a", "a and b", "a, b and c" (``sep`` between all but the last two)."""
    if not parts:
        return Sentence("")
    last = f"{word} " if word[:1] in ",;" else f" {word} "  # "a; and b", "a and b"
    pieces: list = [parts[0]]
    for k, part in enumerate(parts[1:], start=1):
        pieces += [last if k == len(parts) - 1 else sep, part]
    return sentence(*pieces)


def grouped(
    rows: list[Verdict],
    name: Callable[[Verdict], str],
    *,
    holds: str,
    wrong: str,
    undecided: str,
    before: str = "",
    between: str = " ",
    word: str = "; and",
    sep: str = ", ",
) -> Sentence:
    """``rows`` read per status, in the order each status first appears: ``before``, the rows' names (``name(row)``,
    each linked to its row), ``between`` and the phrase that status chose (:func:`say` on the group's first row); the
    groups :func:`joined` by ``word`` and ``sep``. No rows: refused, naming what was expected."""
    if not rows:
        raise ValueError(f"grouped got no verdict rows to read (phrases {holds!r} / {wrong!r})")
    groups: dict[str, list[Verdict]] = {}
    for v in rows:
        groups.setdefault(v.status, []).append(v)
    clauses = [
        sentence(
            before,
            joined([link(v, name(v)) for v in members]),
            between,
            say(members[0], holds=holds, wrong=wrong, undecided=undecided),
        )
        for members in groups.values()
    ]
    return joined(clauses, word, sep=sep)


# Called with every Statement a notebook displays; deepnotes.ledger.record sets it to record the chapter's sentences.
on_display: Callable[[list[Sentence]], None] | None = None


def linked(s: Sentence) -> str:
    """``s`` as Markdown whose verdict clauses link to their rows (the row's HTML id; the link's title names the
    status), so a reader goes from the answer to the row it reads."""
    out, at = "", 0
    for span in sorted(s.spans, key=lambda x: x.start):
        title = html.escape(f"this page's verdict row: {span.status}", quote=True)
        out += s.text[at : span.start] + f'<a href="#{span.anchor}" title="{title}">{s.text[span.start : span.end]}</a>'
        at = span.end
    return out + s.text[at:]


class Statement:
    """Sentences shown as one Markdown paragraph (after an optional bold ``lead``), each verdict clause a link to its
    row; recorded while a chapter records its verdicts. ``sep`` joins them ("\n" for a list whose sentences begin
    "- ")."""

    def __init__(self, sentences: list[Sentence], lead: str = "", sep: str = " "):
        self.sentences = [s for s in sentences if s.text]
        self.lead = lead
        self.sep = sep

    @property
    def text(self) -> str:
        """The plain text (no links): what a test reads."""
        return self.sep.join([f"**{self.lead}**"] * bool(self.lead) + [s.text for s in self.sentences])

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        if on_display is not None:
            on_display(self.sentences)
        return self.sep.join([f"**{self.lead}**"] * bool(self.lead) + [linked(s) for s in self.sentences])


# "0.88 (0.10, 0.91, 0.88)": a row's median and its seeds' values (verdicts.seeds_text)
_SEEDS = re.compile(rf"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|diverged) \(({_VALUE}(?:, {_VALUE})+)\)")
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?![\w.]*\d)")
_SEED_LABEL = re.compile(r"seed \d+\D{0,12}$")


def _single_seed_values(computed: str) -> set[str]:
    """The values in ``computed`` that are only ever one seed's among several whose median the row gives (a value
    that is some run's median there too may be that median, quoted)."""
    found = _SEEDS.findall(computed)
    medians = {median for median, _ in found}
    return {v for _, each in found for v in each.split(", ") if v not in medians and v != "div."}


def problems(sentence: Sentence, rows: dict[str, dict]) -> list[str]:
    """What is wrong with a recorded ``sentence`` against its page's verdict ``rows`` (anchor → a row with "status",
    "computed"): an outcome word outside every verdict's clause; a clause whose verdict is not on the page, or whose
    status there differs; a clause of a not-checkable row stating an outcome; a number that is one seed's value where
    its row gives the median of several, unless "seed k" names it. A run's recorded event ("diverged at step 14",
    :data:`EVENT`) is a measurement, not an outcome claimed."""
    text, found = sentence.text, []
    inside = [(s.start, s.end) for s in sentence.spans] + [m.span() for m in EVENT.finditer(sentence.text)]
    for m in OUTCOME.finditer(text):
        if not any(a <= m.start() < b for a, b in inside):
            found.append(
                f"{m[0]!r} states an outcome that no verdict rendered: …{text[max(0, m.start() - 60) : m.end() + 30]}…"
            )
    for s in sentence.spans:
        row, clause = rows.get(s.anchor), text[s.start : s.end]
        if row is None:
            found.append(f"{clause!r} reads a verdict ({s.anchor}) that the page does not show")
            continue
        if row["status"] != s.status:
            found.append(f"{clause!r} was rendered as {s.status!r}, but the page's row is {row['status']!r}")
        if row["status"] == UNCHECKABLE and OUTCOME.search(clause):
            found.append(f"{clause!r} states an outcome over a row that is not checkable here")
    singles = {v for s in sentence.spans if s.anchor in rows for v in _single_seed_values(rows[s.anchor]["computed"])}
    for m in _NUMBER.finditer(text):
        value = m[0].replace("−", "-")
        if value in singles and not _SEED_LABEL.search(text[: m.start()]):
            found.append(
                f"{m[0]} is one seed's value where the row gives the median: …{text[max(0, m.start() - 50) : m.end()]}…"
            )
    return found


def unrendered(text: str) -> list[str]:
    """The outcome words of a sentence that was not rendered from verdicts at all (a page that records no spans)."""
    return problems(Sentence(text), {})


# One status group's words in a tally: (one row, several rows)
_TALLY_WORDS = {
    HOLDS: ("holds", "hold"),
    APPROX: ("holds approximately", "hold approximately"),
    WRONG: ("is wrong", "are wrong"),
    UNCHECKABLE: ("is not checkable here", "are not checkable here"),
}


def tally(rows: list[Verdict], what: str) -> Sentence:
    """``what`` summed up from its verdict ``rows`` so the words and the table cannot disagree: "the main text: all 9
    rows hold" when every row holds, else the count per status ("the main text: 7 rows hold, 1 is wrong and 1 is
    not checkable here"), each count a clause of its group's first row (wrong first, then approximate, holds, not
    checkable). No rows: refused (a tally of nothing states nothing)."""
    if not rows:
        raise ValueError(f"tally of {what!r} got no verdict rows: pass the rows the sentence sums up")
    order = (WRONG, APPROX, HOLDS, UNCHECKABLE)
    groups = {s: [v for v in rows if v.status == s] for s in order}
    if len(groups[HOLDS]) == len(rows):
        first = rows[0]
        return sentence(
            f"{what}: ", _said(first, f"all {len(rows)} rows hold" if len(rows) > 1 else "its one row holds")
        )
    parts = [
        _said(
            members[0], f"{len(members)} {'row' if len(members) == 1 else 'rows'} " + _TALLY_WORDS[s][len(members) > 1]
        )
        for s, members in groups.items()
        if members
    ]
    return sentence(f"{what}: ", joined(parts))


def _said(verdict: Verdict, text: str) -> Said:
    """``text``, chosen by the caller from ``verdict``'s status, as that row's clause."""
    return Said(text, verdict.anchor, verdict.status, verdict.claim)


def tallies(rows: list[Verdict], main: str = "The main text", annotated: str = "the annotated derivations") -> dict:
    """A derivation table summed up twice for the prose (glue keys ``main_tally`` and ``annotated_tally``): the rows
    that test the articles' main text and those that test only their appended annotated derivations
    (:attr:`~deepnotes.show.verdicts.Verdict.annotated`), each through :func:`tally`; a kind with no rows is left
    out."""
    kinds = {
        "main_tally": (main, [v for v in rows if not v.annotated]),
        "annotated_tally": (annotated, [v for v in rows if v.annotated]),
    }
    return {key: tally(members, what) for key, (what, members) in kinds.items() if members}


# A verdict typed into a chapter's prose by hand: the words that state a row's status
VERDICT_WORDS = re.compile(
    r"\b(holds?|is wrong|are wrong|is right|are right|borne out|as predicted|confirm(?:s|ed)?|refute(?:s|d)?)\b",
    re.IGNORECASE,
)
# Not a verdict: a glued value, math, code; a status named as a word (*holds*, "holds"); a rule's condition
_NOT_PROSE = re.compile(r"\{glue:text\}`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", re.DOTALL)
_CONDITION = re.compile(r"\s+(?:only\s+)?(?:when|where|if|while|whenever|for (?:a|every|any))\b", re.IGNORECASE)


def typed_verdicts(markdown: str) -> list[str]:
    """The verdicts a chapter's Markdown states by hand (:data:`VERDICT_WORDS` outside glued values, math and code;
    a status named as a word, ``*holds*`` or ``"holds"``, and a rule's condition, "holds only where …", are not
    verdicts): each such outcome belongs in a glued sentence rendered from its rows."""
    text = _NOT_PROSE.sub(lambda m: " " * len(m[0]), markdown)
    found = []
    for m in VERDICT_WORDS.finditer(text):
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        if before in "*\"'“" and before or after in "*\"'”" and after or _CONDITION.match(text, m.end()):
            continue
        found.append(f"{m[0]!r} states a verdict by hand: …{text[max(0, m.start() - 70) : m.end() + 30]}…")
    return found
