"""The base report in the shapes people write it, per kind of finding (fields as in `phrases`):

- `rule`: the expectation the data breaks, in the business's terms ("X should have one row per
  Y", "<entity>'s <thing> should be A, not B");
- `example`: one entity by its name and its value now / what it should be, and roughly how many
  others share the problem;
- `question`: the same as a question ("Why is ...?");
- `story`: what the person was doing when they saw it ("I was checking ... and ...");
- `plain`: a one-liner naming the table and what looks wrong, no numbers.

A task's voice picks the shape (render.Voice); only the one example quotes exact values, counts
are rough ("most of the accounts"). Sentences that say every row is affected are only used when
the measurement says so (render._fits), and none claims a symptom the diff does not show.
"""
from __future__ import annotations

SHAPES_BANK: dict[str, dict[str, list[str]]] = {
    "values_high": {
        "rule": [
            "{Whos} {col} in {t} should be {exp}, not {obs}. {also}",
            "{col} in {t} is supposed to be {exp} for {who}, but it says {obs}.",
        ],
        "example": [
            "{Who} shows {obs} for {col} in {t}, should be {exp}.",
            "{col} is too high in {t} for {share}. {Who}, for example, has {obs} instead of {exp}.",
            "{Whos} {m} went from {exp} to {obs} in {t}, and {others_have} gone up too.",
        ],
        "question": [
            "Why is {col} {obs} for {who} in {t}? Should be {exp}.",
            "Why did {m} go up for {share} in {t}? {Who} went from {exp} to {obs}.",
            "Why does {t} give {who} {a_m} of {obs}? It should be {exp}.",
        ],
        "story": [
            "I was checking {who} in {t} and {col} says {obs}, but it should be {exp}.",
            "I was pulling {m} from {t} and the numbers are too high. {Who} has {obs} instead of {exp}.",
            "I compared {t} with last week's numbers and {m} is up for {share}. {Who} had {exp}, now {obs}.",
        ],
        "plain": [
            "{col} in {t} is too high for {share}.",
            "{m} in {t} looks inflated.",
            "{t} is overstating the {m}.",
        ],
    },
    "values_low": {
        "rule": [
            "{Whos} {col} in {t} should be {exp}, not {obs}. {also}",
            "{col} in {t} is supposed to be {exp} for {who}, but it only says {obs}.",
        ],
        "example": [
            "{Who} shows {obs} for {col} in {t}, should be {exp}.",
            "{col} is too low in {t} for {share}. {Who}, for example, has {obs} instead of {exp}.",
            "{Whos} {m} dropped from {exp} to {obs} in {t}, and {others_have} dropped too.",
        ],
        "question": [
            "Why is {col} only {obs} for {who} in {t}? Should be {exp}.",
            "Why did {m} go down for {share} in {t}? {Who} went from {exp} to {obs}.",
            "Why does {t} give {who} {a_m} of {obs}? It should be {exp}.",
        ],
        "story": [
            "I was checking {who} in {t} and {col} says {obs}, but it should be {exp}.",
            "I was pulling {m} from {t} and the numbers are too low. {Who} has {obs} instead of {exp}.",
            "I compared {t} with last week's numbers and {m} is down for {share}. {Who} had {exp}, now {obs}.",
        ],
        "plain": [
            "{col} in {t} is too low for {share}.",
            "{m} in {t} looks too low.",
            "{t} is understating the {m}.",
        ],
    },
    "values_scaled": {
        "rule": [
            "{Whos} {col} in {t} should be {exp}, not {obs}. The whole column is {rw} what it should be.",
            "{col} in {t} should be {exp} for {who}. It says {obs}, and {share_are} off by the same factor.",
        ],
        "example": [
            "{col} in {t} is {rw} what it should be. {Who} has {obs}, the real number is {exp}.",
            "{Who} shows {obs} for {col} in {t}, should be {exp}. {Share_are} off by the same factor.",
        ],
        "question": [
            "Why is {col} in {t} {rw} what it should be? {Who}: {obs} instead of {exp}.",
            "Why is {col} way {direction} in {t}? {Who} has {obs}, should be {exp}.",
        ],
        "story": [
            "I was adding up {m} from {t} and the total is way {direction}. {Who} alone shows {obs} instead of {exp}.",
            "I was looking at {who} in {t} and {col} is {obs}. It should be {exp}, and {share_are} off the same way.",
        ],
        "plain": [
            "{col} in {t} is way {direction} across the board.",
            "{col} in {t} is way {direction} for {share}.",
            "All the {m} numbers in {t} are way {direction}.",
        ],
    },
    "values_changed": {
        "rule": [
            "{Whos} {col} in {t} should be {exp}, not {obs}.",
            "{col} in {t} is supposed to be {exp} for {who}, but it says {obs}. {also}",
            "{Who} has the wrong {col} in {t}. {also}",
        ],
        "example": [
            "{Who} has {obs} as {col} in {t}; it should be {exp}.",
            "{col} is wrong for {share} in {t}. {Who}, for one, shows {obs} instead of {exp}.",
            "{Whos} {m} in {t} is wrong, and it's not the only one.",
        ],
        "question": [
            "Why does {who} have {col} {obs} in {t}? It should be {exp}.",
            "Why did {col} change for {share} in {t}? {Who} was {exp} and is {obs} now.",
            "Why did {col} change for {who} in {t}?",
        ],
        "story": [
            "I was looking up {who} in {t} and {col} says {obs}. It should be {exp}.",
            "I compared {t} with last week's export and {col} is different for {share}. {Who} had {exp}, now {obs}.",
            "I was looking up {who} in {t} and {col} doesn't match what I expected. It's off for {share}.",
        ],
        "plain": [
            "{col} in {t} is wrong for {share}.",
            "The {m} values in {t} look wrong.",
            "{col} in {t} doesn't look right.",
        ],
    },
    "values_blank": {
        "rule": [
            "{col} shouldn't be empty in {t}, but it is for {share}. {Who} should have {exp}.",
            "{Who} should have {exp} as {col} in {t}, and it's blank.",
            "{Who} should have {a_m} in {t}, and it's blank. {Share_have} lost it.",
        ],
        "example": [
            "{col} is empty for {who} in {t}. It should be {exp}.",
            "{Who} has no {m} in {t} anymore (should be {exp}). Same for {others}.",
            "{Who} has no {m} in {t} anymore, and neither do {others}.",
        ],
        "question": [
            "Why is {col} blank for {share} in {t}? {Who} should show {exp}.",
            "Why did {who} lose its {m} in {t}? It should be {exp}.",
            "Why is {col} empty for {who} in {t}? {Share_have} it blank now.",
        ],
        "story": [
            "I was going through {t} and {col} is empty for {share}. {Who} should be {exp}, for example.",
            "I was looking up {who} in {t} and there's no {m}. It should be {exp}.",
            "I was looking up {who} in {t} and there's no {m} anymore.",
        ],
        "plain": [
            "{col} is blank for {share} in {t}.",
            "{Share_have} no {m} in {t} anymore.",
            "{t} has empty {col} values.",
        ],
    },
    "values_filled": {
        "rule": [
            "{col} in {t} should be null for {who}, but it has {obs}.",
            "{Who} shouldn't have {a_m} in {t} at all, and it shows {obs}. {Share_have} one now.",
        ],
        "example": [
            "{Who} has {obs} in {col} in {t}; that should be null.",
            "{col} is filled in for {share} in {t} that should have none, {who} among them.",
        ],
        "question": [
            "Why does {who} have {a_m} in {t}? It should be null, but it shows {obs}.",
            "Why does {who} have {a_m} in {t}? It shouldn't have one.",
        ],
        "story": [
            "I was counting {es} with {a_m} in {t} and the number jumped: {share_have} one now, {who} included.",
        ],
        "plain": [
            "{col} in {t} is filled in for {es} that shouldn't have one.",
            "{t} has {m} values where there shouldn't be any.",
        ],
    },
    "sign_flipped": {
        "rule": [
            "{col} in {t} should be {exp} for {who}, not {obs}. The sign is backwards for {share}.",
        ],
        "example": [
            "{Whos} {col} in {t} is {obs}; it should be {exp}.",
        ],
        "question": [
            "Why did {col} flip sign in {t}? {Who} shows {obs}, should be {exp}.",
        ],
        "story": [
            "I was totaling {m} from {t} and the signs are backwards. {Who} has {obs} where it should be {exp}.",
        ],
        "plain": [
            "{col} in {t} has the wrong sign for {share}.",
            "The sign of {col} in {t} is flipped.",
        ],
    },
    "fraction_lost": {
        "rule": [
            "{col} in {t} should keep its decimals. {Who} shows {obs}, it should be {exp}.",
        ],
        "example": [
            "{Whos} {col} in {t} is {obs}, should be {exp}. Looks like it's being rounded.",
        ],
        "question": [
            "Why is {col} in {t} a whole number now? {Who} has {obs} instead of {exp}.",
        ],
        "story": [
            "I was reconciling {m} from {t} and it's off by a bit. {Who} shows {obs} where it should be {exp}.",
        ],
        "plain": [
            "{col} in {t} lost its decimals.",
        ],
    },
    "time_lost": {
        "rule": [
            "{col} in {t} should have the time of day, but it's midnight for {share}. {Who}: {obs}, should be {exp}.",
        ],
        "example": [
            "{Whos} {col} in {t} is {obs}; it should be {exp}.",
        ],
        "question": [
            "Why is {col} at midnight for {share} in {t}? {Who} should be {exp}.",
        ],
        "story": [
            "I was charting {t} by hour and everything lands at midnight. {Who} should be {exp}, not {obs}.",
        ],
        "plain": [
            "{col} in {t} lost the time part.",
        ],
    },
    "date_grain": {
        "rule": [
            "{col} in {t} should be {gi}, but the dates look {gb} now. {Who} has {obs} instead of {exp}.",
            "{col} in {t} should always be {gi_start}. {Who} has {obs}; it should be {exp}.",
        ],
        "example": [
            "{Whos} {col} in {t} is {obs}; should be {exp}.",
        ],
        "question": [
            "Why is {col} in {t} {gb} now? {Who} shows {obs}, it should be {exp}.",
        ],
        "story": [
            "I was grouping {t} by {m} and got {more_fewer} periods than usual. {Who} has {obs} instead of {exp}.",
        ],
        "plain": [
            "{col} in {t} is at the wrong grain.",
            "The {m} dates in {t} aren't {gi} anymore.",
        ],
    },
    "date_shifted": {
        "rule": [
            "{col} in {t} should be {exp} for {who}, but it's {obs}, {dur} {later}.",
        ],
        "example": [
            "{Whos} {col} in {t} is {obs}, should be {exp}.",
        ],
        "question": [
            "Why is {col} in {t} {dur} {later} than it should be? {Who}: {obs}, should be {exp}.",
        ],
        "story": [
            "I was lining up {t} with our calendar and {col} is off by {dur}. {Who} shows {obs}, should be {exp}.",
        ],
        "plain": [
            "{col} in {t} is off by {dur}.",
            "The {m} dates in {t} are off.",
        ],
    },
    "labels_swapped": {
        "rule": [
            "{Whos} {m} shows as {obs} in {t}, but it's {exp}.",
            "{es} that are {sa} show up as {sb} in {t}, and the other way round. {Who} is one of them.",
            "{Whos} {m} in {t} doesn't match what it really is. {also}",
        ],
        "example": [
            "In {t}, {who} has {col} {obs} instead of {exp}. {sa} and {sb} look swapped.",
            "{Who} has the wrong {col} in {t}, and so do {others}.",
        ],
        "question": [
            "Why is {who} marked {obs} in {t}? It should be {exp}.",
            "Why does {who} have the wrong {m} in {t}?",
        ],
        "story": [
            "I was counting {sa} {es} in {t} and the number's off. {Who}, for one, shows up as {obs} instead of {exp}.",
            "I was counting {es} by {m} in {t} and the numbers are off. {Who}, for one, is in the wrong group.",
        ],
        "plain": [
            "{col} in {t} has {sa} and {sb} mixed up.",
            "The {m} labels in {t} are swapped around.",
        ],
    },
    "flag_flipped": {
        "rule": [
            "{Whos} {col} should be {exp}; {t} says {obs}.",
            "{Whos} {m} in {t} is the wrong way round, and {others_are} too.",
        ],
        "example": [
            "{Who} is flagged {obs} for {m} in {t}, should be {exp}. {also}",
        ],
        "question": [
            "Why is {col} {obs} for {who} in {t}? It should be {exp}.",
        ],
        "story": [
            "I was filtering {t} on {m} and got the wrong {es}. {Who} shows {obs} instead of {exp}.",
        ],
        "plain": [
            "{col} in {t} is backwards for {share}.",
        ],
    },
    "type_changed": {
        "rule": [
            "{col} in {t} should hold {ti}, but it's {tb} now: {who} shows {obs} instead of {exp}.",
        ],
        "example": [
            "{Whos} {col} in {t} comes out as {obs}; it used to be {exp}. It's all {tb} now.",
        ],
        "question": [
            "Why is {col} in {t} {tb} now? {Who} has {obs}, it was {exp}.",
        ],
        "story": [
            "I was loading {t} into a sheet and {col} comes through as {tb} now. {Who} has {obs} instead of {exp}.",
        ],
        "plain": [
            "{col} in {t} is {tb} now instead of {ti}.",
        ],
    },
    "rows_lost": {
        "rule": [
            "{Who} should be in {t} and it's not. {Share_are} missing.",
            "{t} should have all {before}, but {share_are} gone.",
        ],
        "example": [
            "{Who} is missing from {t}, and so are {others}.",
            "I can't find {who} in {t} anymore.",
        ],
        "question": [
            "Where did {who} go? It's not in {t} anymore.",
            "Why is {t} missing {share}?",
        ],
        "story": [
            "I was counting {es} in {t} and only got {after_n}. There should be {before_n}.",
            "I was looking for {who} in {t} and it's not there. {Share_are} gone.",
        ],
        "plain": [
            "{t} is missing {es}.",
            "{Share_are} missing from {t}.",
        ],
    },
    "rows_added": {
        "rule": [
            "{Who} shouldn't be in {t}.",
            "{t} should have {before}, and it has {after} now.",
        ],
        "example": [
            "{Who} showed up in {t} and doesn't belong there.",
        ],
        "question": [
            "Why is {who} in {t}? It wasn't there before.",
            "Why did {t} grow from {before_n} to {after_n} {es}?",
        ],
        "story": [
            "I was counting {es} in {t} and got {after_n} instead of {before_n}.",
        ],
        "plain": [
            "{t} has extra {es}.",
        ],
    },
    "rows_replaced": {
        "rule": [
            "{Who} should be in {t}, and instead there are {es} that don't belong there.",
        ],
        "example": [
            "{Who} is gone from {t}, and other {es} showed up in its place.",
        ],
        "question": [
            "Why did the set of {es} in {t} change? {Who} is gone.",
        ],
        "story": [
            "I was matching {t} against our list of {es} and it's off: {who} is missing and there are new ones.",
        ],
        "plain": [
            "{t} has the wrong {es} in it.",
        ],
    },
    "duplicated": {
        "rule": [
            "{t} should have one row per {e}, but {who} is in there {copies_w}.",
            "{t} is supposed to be unique by {k}. {Share_are} in there more than once now.",
        ],
        "example": [
            "{Who} shows up {copies_w} in {t}.",
            "{Who} appears {copies_w} in {t}, and {others_are} duplicated too.",
        ],
        "question": [
            "Why is {who} in {t} {copies_w}?",
            "Why are there duplicate {es} in {t}?",
        ],
        "story": [
            "I was counting {es} in {t} and got way more rows than {es}. {Who} alone shows up {copies_w}.",
        ],
        "plain": [
            "{t} has duplicate {es}.",
            "{t} isn't one row per {e} anymore.",
        ],
    },
    "table_empty": {
        "rule": [
            "{t} should have {before} in it, and it has none.",
            "{t} shouldn't be empty, but it came back with no rows.",
        ],
        "example": [
            "{t} is empty. Normally it has {before}.",
        ],
        "question": [
            "Why is {t} empty?",
            "Why is there nothing in {t}?",
        ],
        "story": [
            "I was pulling {es} from {t} and got nothing back. It's completely empty.",
        ],
        "plain": [
            "{t} is empty.",
            "{t} has no rows.",
        ],
    },
    "column_gone": {
        "rule": [
            "{t} should still have {a_c} column. Our {topic} report reads it.",
        ],
        "example": [
            "The {c} column is gone from {t}, and the {topic} report that uses it broke.",
        ],
        "question": [
            "What happened to the {c} column in {t}? The {topic} report needs it.",
            "Where did {c} go in {t}?",
        ],
        "story": [
            "I was refreshing the {topic} dashboard and it errors because {t} has no {c} column anymore.",
        ],
        "plain": [
            "{c} is missing from {t}.",
            "{t} lost its {c} column.",
        ],
    },
    "column_added": {
        "rule": ["{t} shouldn't have {a_c} column; the export that reads it breaks on it."],
        "plain": ["{t} has a new {c} column."],
    },
    "relation_kind": {
        "rule": [
            "{t} should be a {kind_i}, like the rest of our {layer} models. It's a {kind_b} now.",
            "All our {layer} models are {kind_i}s, but {t} is a {kind_b} now.",
            "{t} is supposed to be a {kind_i}, not a {kind_b}.",
        ],
        "example": [
            "{t} got built as a {kind_b} in the last run. It should be a {kind_i}.",
        ],
        "question": [
            "Why is {t} a {kind_b} now? It's supposed to be a {kind_i}.",
        ],
        "story": [
            "I was looking through the warehouse and {t} is a {kind_b} now, not a {kind_i}.",
        ],
        "plain": [
            "{t} should be a {kind_i}, not a {kind_b}.",
        ],
    },
    "build_failed": {
        "rule": ["{t} used to build fine, now it fails:\n\n{msg}"],
        "example": ["dbt run fails on {t}:\n\n{msg}"],
        "question": ["Why does {t} fail to build?\n\n{msg}"],
        "story": ["I kicked off a dbt run and {t} fails:\n\n{msg}"],
        "plain": ["{t} doesn't build anymore:\n\n{msg}"],
    },
    "table_gone": {
        "plain": ["{t} is gone from the warehouse."],
        "question": ["Where did {t} go?"],
    },
}
