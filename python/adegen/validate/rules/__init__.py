"""Backend-neutral validation rules: the Validator contract, the screening verdict, the proof rule, what a
verdict asks of a backend (`inspector`), ade-bench's equality oracle, and the stand-in validator."""
