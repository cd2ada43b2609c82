"""Paths and tables of contents the book tests share."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
PARTS = {part["caption"]: [entry["file"] for entry in part["chapters"]] for part in TOC["parts"]}
CHAPTERS = PARTS["Chapters"]  # pages with experiments, figures and sliders
APPENDIX = PARTS["Appendix"]  # the claims ledger
