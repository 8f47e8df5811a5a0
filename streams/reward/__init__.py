"""Reward: type-strict correctness from the trusted channel and versioned multi-dimensional scoring."""
