"""Chapter "Magnitude decomposition and the DeepNorm scalings" (book/magnitude_decomposition.ipynb; seeds 000
and 001)."""
