"""The sentences: several ways to report each kind of finding at three levels of detail (fields
in braces: see fields.py). Openings and requests are in phrases_asks.py; the base report's
frames and handles (`report`, `rule`, `question`, `story`) in phrases_base.py.

Levels here: `specific` names the table and gives a concrete observation (a fallback when no
frame fits); `general` names the table and the kind of problem only; `business` is what someone
who reads the report, not the SQL, would say.
"""
from __future__ import annotations

from adegen.prompts.phrases_asks import ASKS, ASKS_BUILD, ASKS_NONE, OPENERS  # noqa: F401 (the bank's other half)
from adegen.prompts.phrases_base import SHAPES_BANK

BODIES: dict[str, dict[str, list[str]]] = {
    "values_scaled": {
        "specific": [
            "Why is {c} for {who} {obs} in {t}? The right number is {exp}, and the rest look off by the same factor.",
            "The {c} numbers in {t} are {rw} what they should be. {Who} shows {obs} and it should be {exp}.",
            "{t} has {c} at {rw} the right value: {who} comes out at {obs} instead of {exp}.",
            "Every {c} value in {t} seems off by the same factor. Take {who}: {obs}, where the real number is {exp}.",
            "{Who} has {c} = {obs} in {t}. The correct figure is {exp}, and the other {es} look off by the same factor.",
            "I compared a few {es} in {t} and {c} is consistently {rw} what it should be ({who}: {obs} vs {exp}).",
        ],
        "counts": [
            "The {c} numbers in {t} are {rw} what they should be, for {n_of}.",
            "{c} in {t} is way {direction} for {n_of}, {who} among them.",
        ],
        "general": [
            "The {c} values in {t} look way {direction}.",
            "{t} is reporting {m} numbers that are way {direction}.",
            "Something is throwing off {c} in {t}, the numbers are all {direction}.",
        ],
        "business": [
            "The {m} numbers we report out of {t} are way {direction}.",
            "The {m} numbers coming out of {t} are way {direction}.",
            "Our {m} numbers in {t} are way out of line.",
        ],
    },
    "values_high": {
        "specific": [
            "Why does {who} show {c} = {obs} in {t}? It should be {exp}, and {others_are} too high as well.",
            "Some {c} values in {t} are higher than they should be: {who} shows {obs}, but it should be {exp}. {N_are} affected.",
            "{c} in {t} is too high for {n_of}. {Who} shows {obs}, it should be {exp}.",
            "{Who} is showing {c} of {obs} in {t}, should be {exp}.",
            "{Who} has {c} at {obs} in {t} when it should be {exp}.",
        ],
        "specific_nokey": [
            "The total {c} in {t} comes to {tot_b}, it should be {tot_i}.",
            "Summing {c} over {t} gives {tot_b} instead of {tot_i}.",
        ],
        "counts": [
            "{c} in {t} is too high for {n_of}, {who} among them.",
            "{c} in {t} came out too high for {n_of}.",
        ],
        "general": [
            "The {c} numbers in {t} look too high for some {es}.",
            "The {m} in {t} is too high for some {es}.",
            "{c} in {t} is inflated for some {es}.",
            "Some of the numbers in {t} look too high.",
            "The {c} numbers in {t} look too high.",
            "The {m} in {t} seems too high.",
        ],
        "business": [
            "The {m} in {t} looks inflated.",
            "The {m} numbers in {t} seem higher than they really are.",
            "Why did the {m} in {t} go up so much?",
        ],
    },
    "values_low": {
        "specific": [
            "Why is {c} only {obs} for {who} in {t}? It should be {exp}.",
            "Some {c} values in {t} are lower than they should be: {who} shows {obs}, but it should be {exp}. {N_are} affected.",
            "{c} in {t} is too low for {n_of}. {Who} shows {obs}, it should be {exp}.",
            "{c} for {who} in {t} is only {obs}. It should be {exp}, and {others_are} too low as well.",
            "{Who} has {c} at {obs} in {t} when it should be {exp}.",
        ],
        "specific_nokey": [
            "The total {c} in {t} comes to {tot_b}, it should be {tot_i}.",
            "Summing {c} over {t} gives {tot_b} instead of {tot_i}.",
        ],
        "counts": [
            "{c} in {t} is too low for {n_of}, {who} among them.",
            "{c} in {t} came out too low for {n_of}.",
        ],
        "general": [
            "The {c} numbers in {t} look too low for some {es}.",
            "The {m} in {t} is too low for some {es}.",
            "{c} in {t} comes out short for some {es}.",
            "Some of the numbers in {t} look too low.",
            "The {c} numbers in {t} look too low.",
            "The {m} in {t} seems too low.",
        ],
        "business": [
            "The {m} in {t} looks too low.",
            "The {m} numbers in {t} dropped and nothing in the business explains it.",
            "Why did the {m} in {t} go down so much?",
        ],
    },
    "values_changed": {
        "specific": [
            "Why does {who} have {c} = {obs} in {t}? It should be {exp}.",
            "{c} in {t} is wrong for {n_of}. {Who} shows {obs} where it should be {exp}.",
            "{Who} has {c} {obs} in {t}. It should be {exp}.",
            "The {c} values in {t} don't add up: {who} gets {obs} instead of {exp}.",
            "{Who} has the wrong {c} in {t} ({obs}, should be {exp}). Same problem for {n_of}.",
            "Some {es} in {t} have a wrong {c}. {Who}, for example, shows {obs} but the right value is {exp}.",
        ],
        "specific_nokey": [
            "{c} in {t} has values that shouldn't be there (like {ob}), and values like {oi} are gone.",
            "The {c} values in {t} changed: {oi} no longer shows up and {ob} appears instead.",
        ],
        "counts": [
            "{c} in {t} is wrong for {n_of}. {Who} is one of them.",
            "{N_are} showing the wrong {c} in {t}, {who} for one.",
        ],
        "general": [
            "{c} in {t} looks wrong for a number of {es}.",
            "The {c} values in {t} are off.",
            "Some {c} values in {t} don't look right.",
            "The data in {t} doesn't look right anymore.",
            "Some of the {vals} in {t} are off.",
        ],
        "business": [
            "The {m} {vals} in {t} don't look right.",
            "Something is wrong with the {m} in {t}.",
            "The {m} in {t} doesn't match what the business expects.",
        ],
    },
    "values_blank": {
        "specific": [
            "Why is {c} empty for {who} in {t}? It should be {exp}.",
            "{c} is blank for {n_of} in {t}. {Who}, for instance, should show {exp}.",
            "{N_have} no {m} in {t} anymore. {Who}, for one, should show {exp}.",
            "A bunch of {c} values went empty in {t}. {Who} should show {exp} but it's blank.",
            "{Who} has an empty {c} in {t}, and {others_are} blank too. It should be {exp}.",
        ],
        "specific_nokey": [
            "{c} is empty in {n_rows_of} of {t} where it used to be filled in.",
            "{t} has {n_rows} with a blank {c} that used to have a value.",
        ],
        "counts": [
            "{c} is blank for {n_of} in {t}, {who} among them.",
            "{N_are} missing {c} in {t}.",
        ],
        "general": [
            "{t} has blank {c} values where there should be data.",
            "Some {es} in {t} are missing their {m}.",
            "{c} in {t} is empty for some {es}.",
            "{t} has empty values where there should be data.",
        ],
        "business": [
            "There are gaps in the {m} data in {t}.",
            "Part of the {m} in {t} is just missing.",
            "The {m} in {t} has holes in it.",
        ],
    },
    "values_filled": {
        "specific": [
            "{t} shows {c} = {obs} for {n} that shouldn't have a value there, e.g. {who}.",
            "{Who} has {c} = {obs} in {t}, but it should be empty, and {others_are} like that too.",
            "{c} in {t} is filled in for {n_of} where it should be blank ({who} shows {obs}).",
        ],
        "counts": [
            "{c} in {t} is filled in for {n_of} that should have none, {who} among them.",
        ],
        "general": [
            "{c} in {t} has values for {es} where it should be empty.",
            "{t} fills in {c} for {es} that shouldn't have one.",
            "{c} in {t} has {now_w} where it should be null.",
        ],
        "business": [
            "The {m} in {t} counts things it shouldn't.",
            "{t} shows {m} values for {es} that shouldn't have any.",
        ],
    },
    "sign_flipped": {
        "specific": [
            "The {c} values in {t} have the wrong sign: {who} shows {obs} instead of {exp}.",
            "{Who} has {c} = {obs} in {t}, but it should be {exp}. The sign is flipped for {n_of}.",
            "{c} in {t} comes out with the opposite sign, e.g. {obs} instead of {exp} for {who}.",
        ],
        "counts": [
            "{c} in {t} has the wrong sign for {n_of}.",
        ],
        "general": [
            "Some {c} values in {t} have the wrong sign.",
            "{c} in {t} looks inverted, positive where it should be negative and the other way round.",
            "The signs on the {c} values in {t} look backwards.",
        ],
        "business": [
            "The {m} in {t} doesn't add up. Amounts look like they have the wrong sign.",
            "The {m} in {t} has the wrong sign.",
        ],
    },
    "fraction_lost": {
        "specific": [
            "{c} in {t} has lost its decimals: {who} shows {obs}, the real value is {exp}.",
            "{t} is rounding {c} to whole numbers now. {Who} should be {exp} but shows {obs}.",
            "The {c} values in {t} are cut to whole numbers ({who}: {obs} instead of {exp}).",
        ],
        "counts": [
            "{c} in {t} lost its decimals for {n_of}.",
        ],
        "general": [
            "{t} is rounding {c} to whole numbers.",
            "{c} in {t} is missing its decimal part.",
        ],
        "business": [
            "The {m} totals in {t} are slightly off, looks like rounding.",
            "Small differences keep showing up in the {m} of {t}.",
        ],
    },
    "time_lost": {
        "specific": [
            "All the {c} values in {t} are at midnight now. {Who} should be {exp}, it shows {obs}.",
            "{c} in {t} lost the time of day: {who} has {obs} instead of {exp}.",
        ],
        "counts": [
            "{c} in {t} shows midnight for {n_of}.",
        ],
        "general": [
            "The time part of {c} in {t} is gone.",
            "{c} in {t} only has dates, no times.",
        ],
        "business": [
            "Anything by hour of day in {t} is broken, every {m} is at midnight.",
            "The hourly view of {t} shows everything at 00:00.",
        ],
    },
    "date_grain": {
        "specific": [
            "{c} in {t} looks {gb} instead of {gi}: {who} shows {obs} where it should be {exp}.",
            "The {c} dates in {t} are at the wrong grain. {Who} has {obs}, but it should be {exp}.",
            "{Who} shows {c} = {obs} in {t}. That should be {exp}, the dates look {gb}, not {gi}.",
        ],
        "specific_nokey": [
            "{c} in {t} looks {gb} instead of {gi}: values like {ob} show up, and {oi} is gone.",
        ],
        "counts": [
            "{c} in {t} looks {gb} instead of {gi} for {n_of}.",
        ],
        "general": [
            "The {c} dates in {t} look like they're at the wrong grain.",
            "{c} in {t} doesn't line up with the periods it should.",
        ],
        "business": [
            "The period breakdown in {t} doesn't line up with our calendar anymore.",
            "Dates in {t} look bucketed wrong.",
        ],
    },
    "date_shifted": {
        "specific": [
            "{c} in {t} is {dur} {later} than it should be: {who} shows {obs}, it should be {exp}.",
            "The {c} values in {t} are shifted by {dur}. {Who} has {obs} instead of {exp}.",
            "{Who} shows {c} = {obs} in {t}, {dur} {later} than the right date ({exp}).",
        ],
        "counts": [
            "{c} in {t} is off by {dur} for {n_of}.",
        ],
        "general": [
            "The {c} dates in {t} are shifted.",
            "{c} in {t} is off by a bit for every {e}.",
        ],
        "business": [
            "The dates in {t} are off, everything looks shifted.",
            "Timelines built on {t} don't match what actually happened.",
        ],
    },
    "labels_swapped": {
        "specific": [
            "{c} looks swapped in {t}: {es} that should be {sa} show up as {sb}, and the other way round. {Who} is one of them.",
            "In {t}, {c} is mixed up between {sa} and {sb}. {Who}, for example, shows {obs} instead of {exp}.",
            "The {sa} and {sb} values of {c} in {t} are reversed ({who}: {obs} instead of {exp}).",
        ],
        "counts": [
            "{c} is mixed up in {t} for {n_of}, {who} among them.",
        ],
        "general": [
            "The {c} categories in {t} look mixed up.",
            "{c} in {t} assigns {es} to the wrong category.",
        ],
        "business": [
            "The {m} breakdown in {t} doesn't look right anymore.",
            "Numbers per {m} in {t} look reversed.",
        ],
    },
    "labels_new": {
        "specific": [
            "{Who} shows {obs} for {c} in {t}, and that's not a value we use. {N_are} like that.",
            "{c} in {t} has values that don't belong there: {who} shows {obs}, for one.",
        ],
        "counts": [
            "{c} in {t} has values we don't use for {n_of}, {who} among them.",
        ],
        "general": [
            "The {c} values in {t} don't match our usual list anymore.",
            "{c} in {t} has some values that don't belong there.",
        ],
        "business": [
            "The {m} breakdown from {t} has categories nobody recognizes.",
            "Reports grouped by {m} from {t} show extra categories.",
        ],
    },
    "flag_flipped": {
        "specific": [
            "The {m} in {t} is inverted for {n_of}: {who} is {obs} but should be {exp}.",
            "{Who} has {c} = {obs} in {t}, it should be {exp}. {N_are} flagged the wrong way.",
        ],
        "counts": [
            "{c} in {t} is flipped for {n_of}, including {who}.",
        ],
        "general": [
            "{c} in {t} is set the wrong way for some {es}.",
            "The {m} in {t} looks backwards.",
            "The {c} in {t} doesn't look right anymore.",
        ],
        "business": [
            "The {m} in {t} doesn't match reality.",
            "Counts by {m} in {t} look flipped.",
        ],
    },
    "rows_lost": {
        "specific": [
            "Where did {who} go? It's not in {t} anymore, and {t} is down to {after} from {before}.",
            "{t} is missing {es}: it has {after} now, it should have {before}. {Who} isn't there anymore, for example.",
            "{Who} doesn't show up in {t} anymore. {N_are} gone in total ({after_n} left of {before_n}).",
            "We lost {n} from {t} ({after_n} left out of {before_n}), including {who}.",
            "{t} dropped from {before} to {after}. I can't find {who} in there, for one.",
        ],
        "specific_nokey": [
            "{t} has {after} now, it should have {before}.",
            "{n} went missing from {t}: it's down to {after} from {before}.",
        ],
        "counts": [
            "{t} is down to {after} from {before}.",
            "{N_are} gone from {t}.",
        ],
        "general": [
            "Some {es} have disappeared from {t}.",
            "{t} has fewer {es} than it should.",
            "{t} doesn't have all the {es} it should.",
        ],
        "business": [
            "Our {topic} numbers dropped and it looks like {t} is missing data.",
            "{t} seems to be missing part of our {topic}.",
            "The {topic} report built on {t} looks incomplete.",
        ],
    },
    "rows_added": {
        "specific": [
            "{t} has {after} now, but it should have {before}. There are {n} extra, e.g. {who}.",
            "{Who} shows up in {t}, and it shouldn't be there. {t} went from {before} to {after}.",
            "{t} picked up {n} that don't belong there (like {who}). It should have {before}.",
        ],
        "specific_nokey": [
            "{t} has {after} now, it should have {before}.",
            "{t} grew from {before} to {after} and the extra {es} don't belong there.",
        ],
        "counts": [
            "{t} went from {before} to {after}.",
        ],
        "general": [
            "{t} has more {es} than it should.",
            "There are {es} in {t} that shouldn't be there.",
        ],
        "business": [
            "{t} seems to count more {es} than we actually have.",
            "The {topic} numbers in {t} look too high, as if extra {es} got in.",
        ],
    },
    "duplicated": {
        "specific": [
            "Why is {who} in {t} {copies} times? It should appear once.",
            "{t} should have one row per {e}, but {n_keys} appear more than once. {Who} is in there {copies} times.",
            "{t} has duplicates: {who} shows up {copies} times, and {n_keys} are duplicated overall.",
            "I'm seeing {who} {copies} times in {t}. It should be there once, and {n_keys} have the same problem.",
        ],
        "counts": [
            "{n_keys} appear more than once in {t}.",
        ],
        "general": [
            "There are duplicate {es} in {t}.",
            "{t} isn't unique per {e} anymore.",
        ],
        "business": [
            "Totals based on {t} are inflated because some {es} are counted more than once.",
            "Some {es} are double counted in {t}.",
            "There's double counting in {t}.",
            "Anything summed from {t} comes out too high, {es} are counted more than once.",
        ],
    },
    "rows_replaced": {
        "specific": [
            "The {es} in {t} changed: {n} that should be there are gone (like {who}) and {n_extra} showed up that shouldn't.",
            "{Who} is missing from {t}, while {n_extra} appeared that don't belong there.",
            "{t} has the wrong set of {es}: {n_are} missing, e.g. {who}, and there are {n_extra} instead.",
        ],
        "counts": [
            "{N_are} missing from {t} and {n_extra} showed up instead.",
        ],
        "general": [
            "{t} has the wrong set of {es} in it.",
            "{t} doesn't have the {es} it should.",
            "Some {es} are missing from {t} and others showed up instead.",
        ],
        "business": [
            "{t} is showing the wrong {es}.",
            "The {topic} in {t} doesn't match what we have.",
        ],
    },
    "table_empty": {
        "specific": [
            "Why is {t} empty? It should have {before}.",
            "{t} is empty. It should have {before}.",
            "{t} came back with nothing in it. Normally it has {before}.",
            "All {before} are gone from {t}, the table is empty now.",
        ],
        "general": [
            "{t} is suddenly empty.",
            "There's nothing in {t} anymore.",
        ],
        "business": [
            "The {topic} report is blank.",
            "Our {topic} dashboard has been empty since the last run.",
        ],
    },
    "column_gone": {
        "specific": [
            "The {c} column disappeared from {t}, and the {topic} dashboard that uses it is broken now.",
            "Our {topic} dashboard broke this morning. It reads {c} from {t} and that column isn't there anymore.",
            "{t} no longer has the {c} column, and a couple of reports depend on it.",
            "Where did {c} go? It used to be in {t} and our {topic} report needs it.",
            "Queries against {t} fail now because {c} doesn't exist anymore.",
            "{c} is missing from {t}. Did someone drop it? The {topic} report needs it.",
            "Since when does {t} not have {c}? Our {topic} dashboard reads it.",
        ],
        "general": [
            "Something changed in {t} and the {topic} dashboard that reads it stopped working.",
            "The {topic} dashboard errors out when it queries {t}.",
            "A report on top of {t} stopped working.",
            "Our {topic} dashboard is throwing errors since the last run. It reads from {t}.",
            "Something about {t} changed and a query I run on it every week fails now.",
            "The {topic} report is broken. It pulls from {t}, if that helps.",
            "Anything reading {t} for the {topic} numbers errors out now.",
        ],
        "business": [
            "The {topic} dashboard is broken.",
            "Reports that use {t} stopped loading.",
        ],
    },
    "type_changed": {
        "specific": [
            "{c} in {t} comes out as {tb} now instead of {ti}: {who} shows {obs} where it used to be {exp}.",
            "The {c} values in {t} changed type, they're {tb} now. {Who} has {obs}, it should be {exp}.",
            "{Who} shows {c} = {obs} in {t}. It should be {exp}, the column holds {tb} now instead of {ti}.",
        ],
        "counts": [
            "{c} in {t} holds {tb} now instead of {ti}, for {n_of}.",
        ],
        "general": [
            "The {c} values in {t} don't have the format they should.",
            "{c} in {t} changed type.",
        ],
        "business": [
            "The {m} in {t} isn't in the format it used to be.",
        ],
    },
    "column_added": {
        "specific": ["{t} has a new {c} column nobody asked for, and it breaks the export that reads it."],
        "general": ["The shape of {t} changed and the export that reads it broke."],
        "business": [],
    },
    "relation_kind": {
        # what readers notice when a table they query becomes a view: slowness, never the object
        # kind (naming "view" or "table" would state the fix; checks.states_fix rejects it)
        "specific": [
            "Anything that reads {t} got a lot slower after the last deploy. Queries that came back in seconds take minutes.",
            "{t} has become really slow to query since the last run, and the dashboards on top of it time out.",
            "The models built on {t} take much longer since the last deploy, and the data didn't grow.",
            "Every query against {t} crawls since the last run. Same rows as last week, just way slower.",
        ],
        "general": [
            "Something about {t} changed in the last deploy and everything reading it is slow.",
            "Reading from {t} got slow after the last run.",
            "{t} isn't performing like it did before the last deploy.",
        ],
        "business": [],
    },
    "build_failed": {
        "specific": [
            "dbt run fails on {t} with this error:\n\n{msg}",
            "{t} stopped building. Here's what dbt says:\n\n{msg}",
            "The scheduled run broke at {t}:\n\n{msg}",
        ],
        "general": [
            "{t} fails to build now.",
            "Our dbt run breaks at {t}.",
            "The daily run keeps failing on {t}.",
        ],
        "business": [],
    },
    "table_gone": {
        "specific": ["{t} is gone from the warehouse after the last run."],
        "general": ["{t} isn't there anymore."],
        "business": ["The {topic} report can't load {t}."],
    },
}

# after a body: a sibling table has the same problem (one mistake made in two models)
ALSO = [
    "{t} has the same problem.",
    "Same thing in {t}.",
    "I'm seeing the same thing in {t}.",
    "{t} looks off in the same way.",
    "And {t} has the same issue, as far as I can tell.",
]
ALSO_COLUMN = [
    "{t} has the same problem with {c}.",
    "Same thing with {c} in {t}.",
    "I'm seeing the same thing in {t}, on {c}.",
    "{c} in {t} looks off in the same way.",
    "And {t}'s {c} has the same issue, as far as I can tell.",
]

ALSO_OTHER = ["{t} looks off too.", "Something's off in {t} as well.", "{t} doesn't look right either."]
ALSO_OTHER_COLUMN = ["{c} in {t} looks off too.", "Something's off with {c} in {t} as well.",
                     "{t}'s {c} doesn't look right either."]

# several tables at once (hard level, two or more downstream tables changed)
SEVERAL = [
    "A few of our {group} look off since the last run, {t} and {t2} among them.",
    "Both {t} and {t2} look wrong since the last run.",
    "The numbers in {t} and {t2} changed since the last run, and nobody touched them on purpose.",
]


def _plain_column(tpl: str) -> str:
    """The older levels name a column the way the task's voice writes columns, and never start
    a sentence with it."""
    if tpl.startswith("{c} "):
        tpl = "The {col} " + tpl[4:]
    return tpl.replace("{c}", "{col}")


for _kind, _levels in BODIES.items():
    if _kind not in ("column_gone", "column_added"):  # a dropped column is named as it was
        for _level, _tpls in _levels.items():
            _levels[_level] = [_plain_column(t) for t in _tpls]
for _kind, _levels in SHAPES_BANK.items():  # the base report's frames
    BODIES.setdefault(_kind, {}).update(_levels)
