"""Noise filter: accept, mask or reject each scored sample, with machine-readable reasons."""
