"""Chapter "Initialization, parametrization and normalization" (book/initialization.ipynb; seed 002)."""
