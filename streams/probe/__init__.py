"""Probe plans: the inputs that tell a program that computes its answers from one that recalls them."""
