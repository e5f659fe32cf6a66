"""The `plain` level: how people often report a data problem, naming the table and the column and
saying what looks wrong, without counting rows or quoting values. A task whose voice is terse
(render.Voice.terse) gets its base prompt at this level. Fields as in `phrases`."""
from __future__ import annotations

PLAIN: dict[str, list[str]] = {
    "values_scaled": [
        "The {c} numbers in {t} look way {direction}.",
        "{c} in {t} is way {direction} across the board.",
        "All the {c} numbers in {t} are way {direction} now.",
    ],
    "values_high": [
        "Someone noticed that {c} in {t} looks way too high.",
        "The {c} values in {t} look too high for a lot of {es}.",
        "{c} in {t} seems inflated.",
    ],
    "values_low": [
        "{c} in {t} looks too low for a lot of {es}.",
        "Someone noticed that the {c} numbers in {t} are too low.",
        "{c} in {t} seems to be undercounting.",
    ],
    "values_changed": [
        "The {c} values in {t} look wrong.",
        "Someone noticed that {c} in {t} is wrong for some {es}.",
        "{c} in {t} doesn't match what we expect anymore.",
    ],
    "values_blank": [
        "{c} is blank for a bunch of {es} in {t}.",
        "A lot of {es} in {t} have no {m} anymore.",
        "Someone noticed empty {c} values in {t}.",
    ],
    "values_filled": [
        "{c} in {t} has values for {es} that shouldn't have any.",
        "Some {es} in {t} have a {m} when they shouldn't.",
    ],
    "sign_flipped": [
        "Some {c} values in {t} have the wrong sign.",
        "The sign of {c} in {t} looks wrong for some {es}.",
    ],
    "fraction_lost": [
        "{c} in {t} lost its decimals.",
        "The {c} values in {t} got rounded off somewhere.",
    ],
    "time_lost": [
        "The {c} values in {t} lost their time of day.",
    ],
    "date_grain": [
        "The {c} dates in {t} aren't {gi} anymore.",
        "{c} in {t} looks like it's at the wrong grain.",
    ],
    "date_shifted": [
        "The {c} dates in {t} are off.",
        "{c} in {t} is shifted for some {es}.",
    ],
    "labels_swapped": [
        "{c} in {t} looks mixed up.",
        "The {m} labels in {t} seem to be swapped around.",
    ],
    "flag_flipped": [
        "The {m} in {t} seems flipped for some {es}.",
        "{c} in {t} looks backwards for part of the {es}.",
    ],
    "rows_lost": [
        "{t} is missing a lot of {es}.",
        "Some {es} are missing from {t}.",
        "There are fewer {es} in {t} than there should be.",
    ],
    "rows_added": [
        "{t} has more {es} than it should.",
        "There are extra {es} in {t}.",
    ],
    "duplicated": [
        "{t} has duplicate {es}.",
        "Some {es} show up more than once in {t}.",
    ],
    "rows_replaced": [
        "{t} has the wrong set of {es} in it.",
    ],
}
