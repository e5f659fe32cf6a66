"""What every stage uses: errors, settings, paths, atomic writes, lock owners, the project graph, drop
reasons and the command-line plumbing (one error boundary, one exit)."""
