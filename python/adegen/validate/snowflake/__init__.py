"""Validation of Snowflake projects on the local fakesnow emulator (`--emulate-snowflake`)."""
