"""Numerics of seed 000 and seed 004: the golden cast policy, TTK's criteria and metrics,
integer semantics, and the statistics used to accept a random operator."""
