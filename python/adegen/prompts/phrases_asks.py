"""How a report opens and how it ends: rare openings, and requests that are often none, some
short, and most saying what should happen (fields as in `phrases`)."""
from __future__ import annotations

# (text, mode, tone): "sentence" goes before the body, "lead" runs into it; tone "data" only fits a
# complaint about numbers, "any" fits every report. Almost every report starts with the problem
# itself: a stock opener in front of every few reports is what makes a set read generated.
OPENERS: list[tuple[str, str, str]] = [
    *[("", "none", "any")] * 34,
    ("Since the last run, ", "lead", "data"),
    ("Since yesterday's run, ", "lead", "data"),
]

# Requests. Mostly none: the report is the request (ASKS_NONE of every list). Over eight blind
# reviews (issue 12; `bench/prompt_review.py cues`) reports that closed with a request were
# labelled generated 87% of the time against 51% for those that did not, and were no more useful;
# a request to rebuild the table 96%. A run over several projects picks its requests
# independently, and the same closing line under two reports of a review sheet is what reviewers
# name first. So: no "rebuild" requests (the grading rebuilds the models itself, test_setup),
# some short ones, and ones in the words of the finding ("make it one row per account again").
# Fields as in the bodies; a request whose field is missing is left out. "the table" requests are
# not used after a sentence naming two tables.
ASKS_NONE = 140  # with the requests of a kind's own words (x6 in render.requests) and no generic
# closer after them, about one report in twenty closes with a request: over 11 more reviews on
# 2026-12-01 the ones that did were labelled generated 84% of the time against 41% (and were no
# more useful), and on 2026-12-02 three of four reviewers named the generic closers
ASKS: dict[str, list[str]] = {
    # "Can you fix it?", "Please fix it." and "Would you mind fixing it?" were named as stock closers
    # by three of four reviewers of one sheet on 2026-12-02
    "any": ["Could you look into it?", "Can you take a look?",
            "Can you help?", "Could you have a look?", "What's going on here?"],
    "data": [
        "Can you dig into this?",
        "Can you see what broke?",
        "Let me know what you find.",
        "Any idea what changed?",
        "Can someone take a look?",
    ],
    "values": ["Can you get the {m} right again?",
               "Please fix it so the {m} {vals} are right again.",
               "Can you find out why the {m} changed and fix the model?",
               "Please work out where the {m} goes wrong and fix it."],
    "values_high": ["Can you find what's pushing it up and fix the model?",
                    "Please find out why it went up and fix it."],
    "values_low": ["Can you find what's pulling it down and fix the model?",
                   "Please find out why it dropped and fix it."],
    "values_blank": ["Can you get the {m} back in there?",
                     "Can you find out why it's blank and fill it back in?"],
    "values_filled": ["Those should be null again."],
    "duplicated": ["It needs to be one row per {e} again.", "Please make it one row per {e} again.",
                   "Can you find where the extra rows come from and get it back to one row per {e}?"],
    "rows_lost": ["Can you get the missing {es} back in?", "They need to be back in there.",
                  "Can you find out why they're dropping out and fix the model?"],
    "rows_added": ["Those shouldn't be in there.",
                   "Can you find out where the extra {es} come from and take them out?"],
    "table_empty": ["Can you get the rows back?",
                    "Can you find out why it's empty and fix it?"],
    "column_gone": ["Can you bring the column back?", "It needs to be back in the table.", "Can you put {c} back?"],
    "relation_kind": ["Can you find out what made it slow and fix it?", "Can you get it back to how fast it was?",
                      "Can you track down what changed?"],
    "date_grain": ["It should be {gi} again.", "Can you make it {gi} again?"],
}
ASKS_BUILD = [
    "Can you get it building again?",
    "Can you fix it?",
    "Please fix it so the run goes through again.",
    "",
    "",
    "",
]
