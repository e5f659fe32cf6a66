"""Stage 2: proposals. Candidates (model x pattern x site), ranking, novelty, siblings and pairs, the
one-invocation compile check of every mutant, and the Proposal a build shows, stores and realises."""
