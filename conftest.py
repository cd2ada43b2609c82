"""Tests (unit tests and nbval over book/) run at the smoke budget; set before any kernel starts."""

import os

os.environ["DEEPNOTES_BUDGET"] = "smoke"

import pytest  # noqa: E402

# the slow part of the suite: the book's build and every test given the built book, the chapters run in Colab's
# pinned kernel, and the notebooks nbval runs. `pytest -m "not slow"` leaves them out.
SLOW_MODULES = {"test_book.py", "test_browser.py", "test_colab.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_MODULES or item.path.suffix == ".ipynb" or "built_book" in item.fixturenames:
            item.add_marker(pytest.mark.slow)
