"""Shared machinery: what two or more chapters use, one module per job."""
