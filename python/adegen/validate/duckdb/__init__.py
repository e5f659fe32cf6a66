"""The DuckDB validator: the intact build (baseline), screening, proof states and trials, the fast and full
proof strategies, the user's own tables as a baseline, the clock and determinism checks."""
