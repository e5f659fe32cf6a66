"""Measured facts about the tables a mutant changed: the SQL that measures them (`evidence`) and the typed
records prompts and the realism checks read (`measured`)."""
