"""SQL text: the one lexer for dbt model SQL (shared by the dbt macros and the rewrite engine), the SQL
features and complexity score, and identifier and literal quoting."""
