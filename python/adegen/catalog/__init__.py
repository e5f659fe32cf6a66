"""The bug-pattern catalog: pattern files (`patterns`), the symptom and assertion vocabularies, the one
SQL lexer and feature table, and the dbt macros generated from them (`macro`)."""
