"""Rewrite sites of the models a proposal run enumerates: the model's context for the rewrite
engine (with a reader of the other models' SQL, each file read once), its sites per pattern,
computed lazily per model, and applying one."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

# Sites a candidate (model x pattern) keeps: the selection tries them in text order.
MAX_SITES_PER_PAIR = 3


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def encode(text: str) -> bytes:
    """`decode`'s inverse: the file's bytes again, line endings and stray bytes as they were."""
    return text.encode("utf-8", errors="surrogateescape")


def endings_of(original: str, text: str) -> str:
    """`text` (an edit of `original`) with `original`'s line endings: in a file whose every line ends
    with CRLF, the lines an edit adds get CRLF too (bare LF lines among CRLF ones point at the edit in
    the agent's sandbox). Any other file: `text` as it is."""
    if "\r\n" not in original or original.count("\r\n") != original.count("\n"):
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def read_as_is(path: Path) -> str:
    """A project file's text exactly as on disk: CRLF line endings kept (read_text would make them
    LF, and a patch made from that text no longer applies to the user's file)."""
    return decode(path.read_bytes())


def model_context(model: dict, discovery: dict, model_sql: Callable[[str], str | None] | None = None):
    from adegen.rewrite import ModelContext  # type: ignore

    return ModelContext.from_discovery(model, discovery, model_sql)


def model_sql_reader(project_dir: Path, discovery: dict, cache: dict) -> Callable[[str], str | None]:
    """Model name -> its raw SQL, each file read once into `cache` (None: no such model, unreadable)."""
    paths = {m["name"]: m.get("path", "") for m in discovery.get("models", [])}

    def read(name: str) -> str | None:
        if name not in cache:
            path = paths.get(name)
            try:
                cache[name] = decode((project_dir / path).read_bytes()) if path else None
            except OSError:
                cache[name] = None
        return cache[name]
    return read


def sites_for(raw: str, model: dict, patterns: list, scope: Any) -> dict[str, list]:
    """pattern id -> [Site] for one model (`adegen.rewrite.sites_for_model`); `scope` (a
    proposals.Scope) gives the discovery, the database type and the other models' SQL."""
    from types import SimpleNamespace

    from adegen.rewrite import sites_for_model  # type: ignore

    read = model_sql_reader(scope.project_dir, scope.discovery, scope.sql_cache)
    ctx = model_context(model, scope.discovery, read)
    res = sites_for_model(raw, SimpleNamespace(patterns=list(patterns)), ctx, scope.db_type)
    return {str(getattr(k, "id", k)): list(v) for k, v in res.items()}


def apply_site(raw: str, site) -> str:
    from adegen.rewrite import apply_site as _apply  # type: ignore

    return _apply(raw, site)


def storied_mutant(c, si: int) -> tuple[str, Any]:
    """Site `si` of candidate `c` applied inside the story that fits it (adegen.rewrite.stories), and
    the story; the plain mutant and None where no story fits or the story's text did not compile
    (the compile check compiles both: `c.story_results`)."""
    site = c.sites[si]
    plain = apply_site(c.raw, site)
    if getattr(c, "origin", None) is not None:
        return plain, None  # a diff candidate (history, --bug-command) is a commit already: as it came
    text, story = tell_for(c, site)
    if story is None or getattr(c.story_results.get(si), "ok", None) is False:
        return plain, None
    return text, story


def tell_for(c, site) -> tuple[str, Any]:
    """`rewrite.stories.tell` for a site of candidate `c`: where its model lives, and the one story
    kind a candidate made for it asks for (`Candidate.story_only`: adegen.propose.moves)."""
    from adegen.rewrite.stories import tell

    return tell(c.raw, site, c.model["name"], getattr(c, "where", None), only=getattr(c, "story_only", None))


def added_files(story) -> tuple[tuple[str, str, str], ...]:
    """The files a story adds as the screening takes a change's other files: (unique_id, path, text),
    the unique_id empty (a model the project does not have yet)."""
    return tuple(("", path, text) for path, text in getattr(story, "files", None) or ())


def story_files(c, site) -> tuple[tuple[str, str, str], ...]:
    """`added_files` of the story site `site` of candidate `c` is told in (() for none)."""
    if site not in c.sites:
        return ()
    return added_files(storied_mutant(c, c.sites.index(site))[1])


class LazySites:
    """Rewrite sites of one model for its matched patterns, computed on first use.

    Performance: `ModelContext.from_discovery` + `sites_for_model` cost O(models) each (sibling
    ranking over every model), so computing them for every model of a 5,000-model project is
    quadratic. Ranking needs no sites, and only the candidates a selection actually reaches are
    realised, so sites are computed for those models only. By the rewrite contract (find_sites is
    non-empty only when the macro matched the pattern) no site is missed; a pair without one is skipped."""

    __slots__ = ("raw", "model", "patterns", "scope", "warn", "_sites")

    def __init__(self, raw: str, model: dict, patterns: list, scope: Any, warn: Callable[[str], None]):
        self.raw, self.model, self.patterns, self.scope, self.warn = raw, model, patterns, scope, warn
        self._sites: dict[str, list] | None = None

    def get(self, pattern_id: str) -> list:
        if self._sites is None:
            try:
                self._sites = sites_for(self.raw, self.model, self.patterns, self.scope)
            except Exception as exc:  # noqa: BLE001 - one model's rewrite problem must not end the run
                self.warn(f"{self.model['name']}: could not compute rewrite sites "
                          f"({exc.__class__.__name__}: {exc})")
                self._sites = {}
        return self.all(pattern_id)[:MAX_SITES_PER_PAIR]

    def all(self, pattern_id: str) -> list:
        """Every site of the pattern in this model (`get` keeps the first MAX_SITES_PER_PAIR)."""
        if self._sites is None:
            self.get(pattern_id)
        return list(self._sites.get(pattern_id) or [])


def added_models(story) -> list[str]:
    """The models a story adds (their files' stems, as dbt names them). test_setup rebuilds them
    first: a fix made in the new model's file (not by undoing the move) counts without a `dbt run`
    of its own; once a solution removes the file, dbt warns that the name selects nothing."""
    return [path.rsplit("/", 1)[-1].removesuffix(".sql") for _, path, _ in added_files(story)]
