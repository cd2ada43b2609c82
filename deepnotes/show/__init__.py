"""Everything a reader sees that is not a number: figures, sliders, progress bars, verdict tables."""
