"""Tests (unit tests and nbval over book/) run at the smoke budget; set before any kernel starts."""

import os

os.environ["DEEPNOTES_BUDGET"] = "smoke"
