"""Chapter "Training 1000 layers": book/thousand_layers.ipynb."""
