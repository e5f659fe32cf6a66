"""The rewrite engine: where a pattern applies in a model's raw SQL and the minimal edit there."""
from adegen.rewrite.context import ModelContext, requires_hold
from adegen.rewrite.engine import (
    Site, applies, apply_site, changed_tokens, check_parses, find_sites, revert_site, sites_for_model,
)
from adegen.rewrite.operators import OPERATORS

__all__ = ["ModelContext", "Site", "find_sites", "apply_site", "revert_site", "changed_tokens",
           "check_parses", "sites_for_model", "applies", "requires_hold", "OPERATORS"]
