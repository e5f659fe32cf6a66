"""Two whole reports in one message (a compound task's two slips, each reported as its own task would
report it), joined the way a person sends two findings at once: a join of the bank (banks/asks.yaml
`two_reports`) none of the run's texts used, the second report mostly carried as an aside of the
first ("Also, the amount in ..."). Pure functions."""
from __future__ import annotations

import re

from adegen.prompts import phrases
from adegen.prompts.render import _ENGLISH_START, _NO_LEAD_IN, rotated


def two_reports(first: str, second: str, seed: str, said: tuple = ()) -> tuple[str, str]:
    """One message holding two whole reports (a compound task's two slips, each reported as its
    own task would report it), joined by a frame of the bank in the order `seed` gives, and the
    frame used. A frame in `said` (the frames the run used) or whose own words a text of `said` has
    (normalised, padded with spaces: "Also," under another report) comes after every fresh one:
    no join repeats in a run. Most frames carry the second as an aside of the first (`aside`)."""
    v: dict[str, str] = {"first_report": first.strip(), "second_report": second.strip(),
                         "second_aside": aside(second.strip())}
    order = rotated(phrases.TWO_REPORTS, seed, "two_reports")
    texts = tuple(t for t in said if t not in phrases.TWO_REPORTS)
    fresh = [t for t in order if t not in said and not _join_worn(t, texts)]
    frame = (fresh or order)[0]
    return frame.format(**v), frame


def _join_worn(frame: str, texts: tuple) -> bool:
    """Whether a join's own words ("also", "one more") stand in one of `texts` (normalised)."""
    own = " ".join(re.findall(r"[a-z0-9_]+", re.sub(r"\{[^}]+\}", " ", frame).lower()))
    return bool(own) and any(f" {own} " in t for t in texts)


def aside(text: str) -> str:
    """A report going on after a connective ("Also, ..."): its first word in lower case where it is
    an ordinary word ("the amount", "why is", "someone noticed"), as it is where it is a name
    (`fct_orders`, "Summit Foods") or "I"."""
    first = text.split(" ", 1)[0]
    if first in ("I", "I'm", "I've", "I'd") or first.isupper():
        return text
    if _ENGLISH_START.match(text) or text.startswith(_NO_LEAD_IN) or _ASIDE_START.match(text):
        return text[:1].lower() + text[1:]
    return text


# more ordinary words a report may start with (beside _ENGLISH_START and _NO_LEAD_IN): how many, when
_ASIDE_START = re.compile(r"^(most|almost|nearly|one|two|three|about|around|since|quite|dozens|hundreds|thousands|"
                          r"each|not|can|could|seeing|those|that|these|none|only|no|too|lots|well|close|all|four|five|"
                          r"six|seven|eight|nine)\b", re.I)
