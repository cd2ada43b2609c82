"""magnitude_decomposition"""
