"""Reading the values a message states: numbers (digits and words) and dates.

`number_mentions` reads every number a text asserts, in digits (``1,250``, ``$40.50``) or in
words (``Fifteen``, ``twenty-three``, ``one hundred and five``, ``none``), leaving aside the
digits of ids (``T-1001``, ``I-0172@W-01``), dates and clock times; ``one`` is not read where
it is a pronoun (``the one``, ``one of``). `date_mentions` reads ISO dates and written ones
(``5 March 2025``, ``March 5, 2025``). Each `Mention` keeps where its text stands, so the
answer check (`harness_world.grading.answers`) can read what surrounds it.
"""

from __future__ import annotations

import re
from typing import Any, Final

import attrs

__all__ = [
    "DATE",
    "NUMBER_WORDS",
    "TENS_WORDS",
    "WORD",
    "Mention",
    "date_mentions",
    "number_mentions",
]


@attrs.frozen(slots=True)
class Mention:
    """One candidate value found in a message.

    Attributes:
        value: The value read (an int or float for numbers, ``YYYY-MM-DD`` for dates, a key for
            ids, a bool for yes/no).
        start: Where its text starts in the message.
        end: Where its text ends.
        text: The text it was read from.
    """

    value: Any
    start: int
    end: int
    text: str


# -- numbers --------------------------------------------------------------------------------

_ID = re.compile(r"(?<![\w])[A-Za-z][A-Za-z0-9_]*(?:[-@#/][A-Za-z0-9_]+)+")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?Z?)?")
"""An ISO date, with or without a time of day (its first ten characters are the date)."""
_TIME = re.compile(r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?![\w:])")
_NUMBER = re.compile(r"(?<![\w.])[$€£]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|\.\d)")
NUMBER_WORDS: Final = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
"""The numbers 0-19 as words, in order (index = value)."""
TENS_WORDS: Final = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
"""The tens 20-90 as words, in order (``TENS_WORDS[i]`` is ``10 * (i + 2)``)."""
_UNITS = {w: i for i, w in enumerate(NUMBER_WORDS)}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(TENS_WORDS)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
WORD = re.compile(r"[A-Za-z]+")
"""A word of letters (how number words and yes/no are read)."""
# "one" is a pronoun as often as a number: not read as 1 after these words or before "of".
_ONE_PRONOUN_BEFORE = {"the", "each", "this", "that", "which", "no", "any", "every", "another"}


def _mask(text: str, patterns: tuple[re.Pattern[str], ...]) -> str:
    """Blank out every match (keeping positions) so its digits are not read as numbers."""
    for pattern in patterns:
        # Only tokens holding a digit: "twenty-one" is a number, "T-1001" an id.
        text = pattern.sub(
            lambda m: " " * len(m.group(0)) if any(c.isdigit() for c in m.group(0)) else m.group(0),
            text,
        )
    return text


_MAX_DIGITS = 64
"""Digits of a number mention at most: a longer run answers nothing a task asks (and past
4,300 digits Python refuses to read it as an int), so it is not read as a number."""


def _digit_mentions(text: str) -> list[Mention]:
    out = []
    for m in _NUMBER.finditer(text):
        whole = m.group(1).replace(",", "")
        if len(whole) > _MAX_DIGITS:
            continue
        value: int | float = float(whole + m.group(2)) if m.group(2) else int(whole)
        out.append(Mention(value, m.start(), m.end(), m.group(0)))
    return out


def _word_value(words: list[str]) -> int | None:
    """The value of a run of number words, or None when the run is not a number."""
    total, current, seen = 0, 0, False
    for word in words:
        if word in _UNITS or word in _TENS:
            current += _UNITS.get(word, 0) + _TENS.get(word, 0)
            seen = True
        elif word in _SCALES and seen:
            if _SCALES[word] == 100:
                current *= 100
            else:
                total += current * _SCALES[word]
                current = 0
        elif word != "and":
            return None
    return total + current if seen else None


def _word_mentions(text: str) -> list[Mention]:
    """Numbers written as words: a run of number words (``and`` inside a run) is one number."""
    tokens = [(m.group(0).lower(), m.start(), m.end()) for m in WORD.finditer(text)]
    numeric = set(_UNITS) | set(_TENS) | set(_SCALES)
    out: list[Mention] = [
        Mention(0, t[1], t[2], text[t[1] : t[2]]) for t in tokens if t[0] == "none"
    ]
    i = 0
    while i < len(tokens):
        if tokens[i][0] not in numeric or tokens[i][0] in _SCALES:
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and (
            tokens[j + 1][0] in numeric
            or (tokens[j + 1][0] == "and" and j + 2 < len(tokens) and tokens[j + 2][0] in numeric)
        ):
            j += 1
        words = [t[0] for t in tokens[i : j + 1]]
        value = _word_value(words)
        if value is not None and not _pronoun_one(words, tokens, i, j):
            start, end = tokens[i][1], tokens[j][2]
            out.append(Mention(value, start, end, text[start:end]))
        i = j + 1
    return out


def _pronoun_one(words: list[str], tokens: list[tuple[str, int, int]], i: int, j: int) -> bool:
    if words != ["one"]:
        return False
    before = tokens[i - 1][0] if i > 0 else ""
    after = tokens[j + 1][0] if j + 1 < len(tokens) else ""
    return before in _ONE_PRONOUN_BEFORE or after in ("of", "by")


def number_mentions(text: str) -> list[Mention]:
    """Every number a text asserts, in order: digits and words; ids, dates and times aside."""
    masked = _mask(text, (_ID, DATE, _TIME))
    found = _digit_mentions(masked) + _word_mentions(masked)
    return sorted(found, key=lambda m: m.start)


# -- dates ----------------------------------------------------------------------------------

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTH = r"(" + "|".join(_MONTHS) + r")"
_DAY_MONTH = re.compile(r"\b(\d{1,2}) " + _MONTH + r",? (\d{4})\b", re.IGNORECASE)
_MONTH_DAY = re.compile(r"\b" + _MONTH + r" (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b", re.IGNORECASE)


def date_mentions(text: str) -> list[Mention]:
    """ISO dates (with or without a time) and ``5 March 2025`` / ``March 5, 2025`` dates."""
    out = [Mention(m.group(0)[:10], m.start(), m.end(), m.group(0)) for m in DATE.finditer(text)]
    for m in _DAY_MONTH.finditer(text):
        day, month, year = int(m.group(1)), _MONTHS[m.group(2).lower()], m.group(3)
        out.append(Mention(f"{year}-{month:02d}-{day:02d}", m.start(), m.end(), m.group(0)))
    for m in _MONTH_DAY.finditer(text):
        month, day, year = _MONTHS[m.group(1).lower()], int(m.group(2)), m.group(3)
        out.append(Mention(f"{year}-{month:02d}-{day:02d}", m.start(), m.end(), m.group(0)))
    return sorted(out, key=lambda m: m.start)
