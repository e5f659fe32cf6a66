"""What every stage uses: errors, settings, paths, atomic writes, lock owners, SQL quoting, drop reasons
and the command-line plumbing (one error boundary, one exit)."""
