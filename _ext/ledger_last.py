"""Sphinx extension: read (and so execute) the claims ledger after every chapter.

MyST-NB executes a notebook when Sphinx reads it, and Sphinx reads in sorted order; the ledger page
reads the verdicts the chapters recorded while they ran (deepnotes.ledger.record), so it goes last."""

LEDGER = "book/ledger"


def _ledger_last(app, env, docnames):
    if LEDGER in docnames:
        docnames.remove(LEDGER)
        docnames.append(LEDGER)


def setup(app):
    app.connect("env-before-read-docs", _ledger_last)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
