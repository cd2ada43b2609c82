"""Each chapter records the verdicts it shows; the claims ledger page reads the records.

A chapter's setup cell calls :func:`record_verdicts` with its stem; from then on every verdict table
the notebook displays is appended to ``<folder>/<stem>.json`` (``_verdicts`` beside the notebook
while the book builds). The ledger page, built after every chapter, reads them back with
:func:`read_records`: its rows are the chapters' own verdict objects, never retyped."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from deepnotes.chapters import CHAPTERS
from deepnotes.core.validate import choice
from deepnotes.show import say
from deepnotes.show import verdicts as vd

RECORD_DIR = "_verdicts"  # relative to the notebook's folder, where the build runs it
RECORD_ENV = "DEEPNOTES_VERDICTS"  # overrides the folder


@dataclass(frozen=True)
class Record:
    """One verdict as a chapter showed it, and where: its chapter page and the row's HTML id."""

    chapter: str
    budget: str
    claim: str
    source: str
    claimed: str
    computed: str
    status: str
    reason: str
    anchor: str
    outcome: dict | None = None  # a training-outcome verdict's direction and measurement (verdicts.Outcome)
    # what it tests, as its chapter said (show.cite): {"subjects": [[seed, part, ref], ...], "paper": name}; a
    # record without it (written before issue 61) is listed by the ledger as naming no subject
    tested: dict | None = None


def record_dir(folder: str | os.PathLike | None = None) -> Path:
    """The folder the records go to: ``folder``, else $DEEPNOTES_VERDICTS, else ``_verdicts``."""
    return Path(folder or os.environ.get(RECORD_ENV) or RECORD_DIR)


def subjects_record(v: vd.Verdict) -> dict | None:
    """What ``v`` tests, as a record keeps it (see :attr:`Record.tested`)."""
    if v.tested is None:
        return None
    return {"subjects": [[c.seed, c.part, c.ref] for c in v.tested.subjects], "paper": v.tested.paper}


class _Recorder:
    def __init__(self, chapter: str, budget: str, path: Path):
        self.chapter, self.budget, self.path = chapter, budget, path
        self.rows: dict[str, dict] = {}
        self.sentences: dict[str, dict] = {}  # text → its recorded form (a statement shown twice is recorded once)

    def __call__(self, shown: list[vd.Verdict]) -> None:
        for v in shown:
            if v.tested is None:
                raise ValueError(
                    f"{self.chapter}: the verdict {v.claim!r} ({v.source}) names no subject: give its source as "
                    "cite(text, tests=...) or cite(text, paper=...) (deepnotes.show.cite)"
                )
            row = asdict(
                Record(
                    self.chapter,
                    self.budget,
                    v.claim,
                    v.source,
                    v.claimed,
                    v.computed,
                    v.status,
                    v.reason,
                    v.anchor,
                    asdict(v.outcome) if v.outcome else None,
                    subjects_record(v),
                )
            )
            self.rows[v.anchor] = row  # a table shown twice is recorded once
        self.write()

    def said(self, shown: list[say.Sentence]) -> None:
        """Record the sentences of a :class:`~deepnotes.show.say.Statement` the chapter shows (its answer)."""
        for s in shown:
            self.sentences[s.text] = {"text": s.text, "spans": [asdict(span) for span in s.spans]}
        self.write()

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "chapter": self.chapter,
            "budget": self.budget,
            "recorded_at": time.strftime("%Y-%m-%d %H:%M"),
            "verdicts": list(self.rows.values()),
            "sentences": list(self.sentences.values()),
        }
        self.path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")


def record_verdicts(chapter: str, budget, folder: str | os.PathLike | None = None) -> Path:
    """Start recording the verdict tables this kernel displays as chapter ``chapter``'s (one of the
    book's chapter stems), measured at ``budget`` (a Budget or its name); the chapter's earlier record
    is replaced. Returns the record's path."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {CHAPTERS}, got {chapter!r}")
    name = getattr(budget, "name", budget)
    if not isinstance(name, str):
        raise TypeError(f"budget must be a Budget or its name, got {budget!r}")
    from deepnotes.core.config import BUDGETS

    choice("budget", name, BUDGETS)
    recorder = _Recorder(chapter, name, record_dir(folder) / f"{chapter}.json")
    recorder.write()
    vd.on_display = recorder
    say.on_display = recorder.said
    return recorder.path


def stop_recording() -> None:
    """Record nothing more (tests; a kernel that leaves a chapter)."""
    vd.on_display = None
    say.on_display = None


@dataclass(frozen=True)
class ChapterRecord:
    chapter: str
    budget: str
    recorded_at: str
    verdicts: tuple[Record, ...]
    sentences: tuple[say.Sentence, ...] = ()  # the answer's sentences, each with the spans verdicts rendered

    def problems(self) -> list[str]:
        """Every sentence's problems against this chapter's rows (:func:`deepnotes.show.say.problems`)."""
        rows = {r.anchor: asdict(r) for r in self.verdicts}
        return [f"{self.chapter}: {p}" for s in self.sentences for p in say.problems(s, rows)]


def read_records(folder: str | os.PathLike | None = None) -> dict[str, ChapterRecord]:
    """Every chapter's record in ``folder`` (see :func:`record_dir`), by chapter stem, in the book's order."""
    out = {}
    for chapter in CHAPTERS:
        path = record_dir(folder) / f"{chapter}.json"
        if path.exists():
            out[chapter] = _read_record(path)
    return out


def _read_record(path: Path) -> ChapterRecord:
    """One chapter's record; a file that is not JSON or lacks a field is a ValueError naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ChapterRecord(
            data["chapter"],
            data["budget"],
            data["recorded_at"],
            tuple(Record(**row) for row in data["verdicts"]),
            tuple(
                say.Sentence(s["text"], tuple(say.Span(**span) for span in s["spans"]))
                for s in data.get("sentences", [])
            ),
        )
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not a verdict record (not valid JSON: {err.msg} at line {err.lineno})") from None
    except (KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a verdict record (a field is missing or unknown: {err})") from None
