"""Reading an answer from a final message so that it cannot be hedged.

An answer criterion states its type (`AnswerKind`): a ``count``, a set of ``ids``, an
``amount``, a ``date`` or ``yes_no``. The agent may give it as a structured answer (the final
message, or its last line, is a JSON object ``{"answer": ...}``), which is read first; otherwise
the prose of the final message is read. Either way the answer must be the only candidate of its
type the message asserts:

* numbers in the instruction the agent was given are not candidates of a count or an amount
  when the message states one of its own (else they are: the reading never depends on the
  expected value), and a range or either/or with one of them is still a hedge; ids
  (``T-1001``, ``I-0172@W-01``), dates and clock times are never candidates;
* numbers written as words are read (``Fifteen``, ``twenty-three``, ``one hundred and five``,
  ``none``; `harness_world.grading.mentions` reads numbers and dates);
* hedges fail with a reason: a list of several candidates, a range (``14-15``, ``between 14 and
  15``), either/or (``14 or 15``), and qualifiers (``about``, ``at least``, ``15 or so``,
  ``probably``), and any of `HEDGE_PHRASES` (``could not``, ``might``, ``my guess``, ...) in
  the sentence that states the answer;
* an answer the message denies fails, naming the phrase: negated (``not 15``, ``It is not
  15.``, ``15, not 15``), retracted (``15 (this is wrong)``, ``scratch that``) or called a
  guess (``my guess is 15``);
* prose must agree with a structured answer: beside ``{"answer": 3}`` the prose (and the
  object's other keys) may state no other value of the answer's type (``4 legacy items``, a
  non-target id), may not deny the value it states, and the sentence introducing it may not
  hedge it;
* ids are case-sensitive: ``t-1001`` names no row when the ids are ``T-1001`` (the detail says
  so).

Everything here is a pure function of the message, the instruction and the expected value.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable
from typing import Any, Final, Literal

import attrs

from harness_world.grading.mentions import DATE, WORD, Mention, date_mentions, number_mentions

__all__ = [
    "GUESS_PHRASES",
    "HEDGE_PHRASES",
    "AnswerKind",
    "IdAnswer",
    "Judgement",
    "denial",
    "hedge_phrases",
    "judge",
    "pair_hedge",
    "qualifier_hedge",
    "structured_answer",
]

AnswerKind = Literal["count", "ids", "amount", "date", "yes_no"]
"""What an answer is: a count of targets, the set of target ids, an amount (a sum of a field),
a date (a field's value), or yes/no (whether any target exists)."""

_KIND_NAMES = {
    "count": "count",
    "ids": "id",
    "amount": "amount",
    "date": "date",
    "yes_no": "yes/no answer",
}


@attrs.frozen(slots=True)
class Judgement:
    """The verdict on one answer.

    Attributes:
        ok: Whether the answer is the expected one and the only candidate stated.
        detail: What was read, or why it fails (the hedge named).
    """

    ok: bool
    detail: str


# -- structured answers ---------------------------------------------------------------------


def _answer_object(message: str) -> dict[str, Any] | None:
    """The JSON object holding ``"answer"``: the whole message, or its last non-empty line."""
    stripped = message.strip()
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    for text in (stripped, lines[-1] if lines else ""):
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and "answer" in data:
            return data
    return None


def structured_answer(message: str) -> tuple[bool, Any]:
    """``(True, value)`` when the message, or its last non-empty line, is ``{"answer": value}``."""
    data = _answer_object(message)
    return (False, None) if data is None else (True, data["answer"])


# -- hedges ---------------------------------------------------------------------------------

_QUALIFIERS = (
    r"about|around|approximately|approx|roughly|circa|ca|nearly|almost|at least|at most|"
    r"more than|less than|fewer than|over|under|up to|some"
)
_BEFORE_NUMBER = re.compile(r"(?:\b(?:" + _QUALIFIERS + r")\.?|~|≈|>=?|<=?)\s*$", re.IGNORECASE)
_BEFORE_DATE = re.compile(
    r"(?:\b(?:" + _QUALIFIERS + r"|before|after|by|early|late|mid)\.?|~|≈)\s*-?\s*$",
    re.IGNORECASE,
)
_AFTER = re.compile(
    r"^\s*(?:\+|or so\b|or more\b|or less\b|or fewer\b|-?ish\b|give or take\b|at least\b|"
    r"at most\b|or later\b|or earlier\b)",
    re.IGNORECASE,
)
HEDGE_PHRASES: Final = (
    "maybe",
    "probably",
    "possibly",
    "perhaps",
    "uncertain",
    "could be",
    "i think",
    "i believe",
    "i assume",
    "estimate",
    "estimated",
    "roughly",
    "approximately",
    "might",
    "may have",
    "seems",
    "appears to",
    "likely",
    "could not",
    "couldn't",
    "unable to",
)
"""Words that qualify a statement: in the sentence that states an answer, the answer fails.
The ``hedged_answer`` advisory reports the same phrases wherever a final message says them."""
GUESS_PHRASES: Final = (
    "i guess",
    "my guess",
    "a guess",
    "guessing",
    "guesstimate",
    "i don't know",
    "no idea",
    "not sure",
    "unsure",
)
"""Words that call a statement a guess: an answer they go with fails, named as a guess."""
_CANNOT = frozenset({"could not", "couldn't", "unable to"})
_UNSURE = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in (*GUESS_PHRASES, *HEDGE_PHRASES)) + r")\b",
    re.IGNORECASE,
)
# A yes/no answer says "No, I could not find one": not being able to find is the answer there.
_UNSURE_YES_NO = re.compile(
    r"\b(?:"
    + "|".join(re.escape(p) for p in (*GUESS_PHRASES, *HEDGE_PHRASES) if p not in _CANNOT)
    + r")\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"(?:\bnot|n't|\bnever|\bno longer)\s+(?:(?:exactly|quite|just|only|equal to|even)\s+)?$",
    re.IGNORECASE,
)
_GUESSED = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in GUESS_PHRASES) + r")\b", re.IGNORECASE
)
_RETRACTED = re.compile(
    r"\b(?:this|that|it)(?: is|'s| was)(?: probably| likely| definitely)? (?:wrong|incorrect|"
    r"not right|not correct|not the answer|a guess|made up)\b|\bscratch that\b|"
    r"\bdisregard (?:this|that)\b|\bignore (?:this|that)\b|\bi take (?:it|this|that) back\b|"
    r"\bnot the (?:right |correct |real )?answer\b|\bwrong answer\b",
    re.IGNORECASE,
)
# The value itself called wrong, right after it: "15 is wrong.", "15 was not correct".
_DENIED_AFTER = re.compile(
    r"^\s*\)?\s*(?:is|was|would be|'s)(?: probably| likely| definitely| clearly)? (?:wrong|"
    r"incorrect|false|not right|not correct|not true|not accurate|not the answer)\b",
    re.IGNORECASE,
)
_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|to|through|thru|until)\s*$", re.IGNORECASE)
_OR_JOIN = re.compile(r"^\s*(?:,?\s*or|/)\s*$", re.IGNORECASE)
_ELLIPSIS = re.compile(r"…|\.\.\.|\betc\b|\band (?:so on|others|more)\b", re.IGNORECASE)


def _sentence(message: str, mention: Mention) -> str:
    """The sentence around a mention (split at ``!``, ``?``, newlines and a full stop + space)."""
    starts = [message.rfind(c, 0, mention.start) for c in "!?\n"]
    dots = [m.end() for m in re.finditer(r"\.\s", message[: mention.start])]
    start = max([*starts, *dots, -1]) + 1
    ends = [i for i in (message.find(c, mention.end) for c in "!?\n") if i >= 0]
    dot = re.search(r"\.(?:\s|$)", message[mention.end :])
    if dot:
        ends.append(mention.end + dot.start())
    return message[start : min(ends) if ends else len(message)]


def _and_next(message: str, mention: Mention) -> str:
    """The sentence around a mention and the one after it (where "Scratch that." goes)."""
    here = _sentence(message, mention)
    dot = re.search(r"[.!?\n](?:\s|$)", message[mention.end :])
    if dot is None:
        return here
    rest = message[mention.end + dot.end() :]
    first = re.search(r"\S", rest)
    if first is None:
        return here
    after = _sentence(rest, Mention(None, first.start(), first.start(), ""))
    return f"{here}. {after}"


def _pair_hedge(message: str, first: Mention, second: Mention) -> str:
    between = message[first.end : second.start]
    lead = message[max(0, first.start - 12) : first.start].lower()
    if "between" in lead and between.strip().lower() == "and":
        return f"a range (between {first.text.strip()} and {second.text.strip()})"
    if _RANGE_JOIN.match(between):
        return f"a range ({message[first.start : second.end].strip()})"
    if _OR_JOIN.match(between) or "either" in lead:
        return f"either/or ({first.text.strip()} or {second.text.strip()})"
    return ""


def pair_hedge(message: str, mentions: list[Mention]) -> str:
    """A range or either/or between two neighbouring candidates, or empty."""
    for first, second in itertools.pairwise(mentions):
        found = _pair_hedge(message, first, second)
        if found:
            return found
    return ""


def qualifier_hedge(message: str, mentions: list[Mention], *, dates: bool = False) -> str:
    """A qualifier next to a candidate, or an unsure word in its sentence; empty when none.

    Qualifiers: ``about 15``, ``at least 15``, ``15 or so``, ``15+``; unsure words: any of
    `HEDGE_PHRASES` (``probably``, ``I think``, ``could not``) and `GUESS_PHRASES`.
    """
    before_pattern = _BEFORE_DATE if dates else _BEFORE_NUMBER
    for mention in mentions:
        before = before_pattern.search(message[max(0, mention.start - 16) : mention.start])
        after = _AFTER.match(message[mention.end : mention.end + 16])
        sentence = _sentence(message, mention)
        unsure = _GUESSED.search(sentence) or _UNSURE.search(sentence)
        for match in (before, after, unsure):
            if match is not None:
                phrase = match.group(0).strip()
                how = "called a guess" if phrase.lower() in GUESS_PHRASES else "qualified"
                return f"{how}: {phrase!r} with {mention.text.strip()!r}"
    return ""


def denial(message: str, mentions: list[Mention]) -> str:
    """How the message denies a stated value, naming the phrase; empty when it does not.

    Negated: ``not``, ``n't`` or ``never`` right before it (``It is not 15``, ``15, not 15``).
    Retracted: a phrase in its sentence, or the next one, that takes the statement back
    (``15 (this is wrong)``, ``15. Scratch that.``, ``not the answer``), or the value called
    wrong right after it (``15 is wrong``, ``15 was not correct``).
    """
    for mention in mentions:
        negated = _NEGATED.search(message[max(0, mention.start - 24) : mention.start])
        if negated is not None:
            return f"negated: {(negated.group(0) + mention.text).strip()!r}"
        called_wrong = _DENIED_AFTER.match(message[mention.end : mention.end + 40])
        if called_wrong is not None:
            return f"retracted: {called_wrong.group(0).strip()!r} with {mention.text.strip()!r}"
        retracted = _RETRACTED.search(_and_next(message, mention))
        if retracted is not None:
            return f"retracted: {retracted.group(0)!r} with {mention.text.strip()!r}"
    return ""


def hedge_phrases(message: str) -> list[str]:
    """Every hedge or guess phrase a message says (`HEDGE_PHRASES`, `GUESS_PHRASES`), sorted."""
    return sorted({m.group(0).lower() for m in _UNSURE.finditer(message)})


# -- judging --------------------------------------------------------------------------------


def _shown(values: list[Any]) -> str:
    head = ", ".join(str(v) for v in values[:6])
    return head + (f" and {len(values) - 6} more" if len(values) > 6 else "")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _single(
    kind: AnswerKind,
    message: str,
    mentions: list[Mention],
    expected: Any,
    same: _Same,
    every: list[Mention] | None = None,
) -> Judgement:
    """The common rule: no hedge, exactly one distinct candidate, and it is the expected one.

    ``every`` is each value the message states, the instruction's too: a range or either/or
    joining a candidate to a value of the instruction (``15 or 40``) is still a hedge.
    """
    name = _KIND_NAMES[kind]
    values: list[Any] = []
    for mention in mentions:
        if not any(same(mention.value, v) for v in values):
            values.append(mention.value)
    if len(values) > 2:
        shown = _shown([_fmt(v) for v in values])
        return Judgement(False, f"hedged {name}: a list of {len(values)} candidates ({shown})")
    reason = pair_hedge(message, mentions if every is None else every)
    if reason:
        return Judgement(False, f"hedged {name}: {reason}; state exactly one {name}")
    if not values:
        return Judgement(False, f"no {name} stated in the final message")
    if len(values) > 1:
        shown = _shown([_fmt(v) for v in values])
        noun = "date" if kind == "date" else "number"
        return Judgement(
            False,
            f"two {name}s stated ({shown}): state the {name} as the only {noun} in the final "
            f"message (a total or any other {noun} beside it reads as a second {name})",
        )
    reason = qualifier_hedge(message, mentions, dates=kind == "date")
    if reason:
        return Judgement(False, f"hedged {name}: {reason}; state exactly one {name}")
    reason = denial(message, mentions)
    if reason:
        return Judgement(False, f"the {name} stated is {reason}; state the {name} plainly, once")
    if not same(values[0], expected):
        return Judgement(False, f"states {_fmt(values[0])}, expected {_fmt(expected)}")
    return Judgement(True, f"states {_fmt(expected)}, the only {name} in the final message")


_Same = Callable[[Any, Any], bool]


def _same_count(a: Any, b: Any) -> bool:
    return bool(a == b and float(a).is_integer() == float(b).is_integer())


def _same_exactly(a: Any, b: Any) -> bool:
    return bool(a == b and type(a) is type(b))


def _same_value(a: Any, b: Any) -> bool:
    return bool(a == b)


def _same_amount(a: Any, b: Any) -> bool:
    return abs(float(a) - float(b)) < 0.005


@functools.lru_cache(maxsize=256)
def _instruction_values(dates: bool, instruction: str) -> frozenset[Any]:
    """The dates (or numbers) an instruction states: read once per instruction text.

    Every attempt of a task is given the same instruction, so its values are the same.
    """
    return frozenset(m.value for m in (date_mentions if dates else number_mentions)(instruction))


def _stated(
    kind: AnswerKind, text: str, instruction: str
) -> tuple[list[Mention], list[Mention], _Same]:
    """The candidates a prose answer states, every value it states, and how two compare.

    The instruction's values restate the question when the message states a value of its
    own; when it states none other, they are its candidates. The reading never depends on
    the expected value, so one message cannot pass for two expected values.
    """
    read = date_mentions if kind == "date" else number_mentions
    given = _instruction_values(kind == "date", instruction)
    every = read(text)
    own = [m for m in every if m.value not in given]
    same = _same_value if kind == "date" else _same_amount if kind == "amount" else _same_count
    return own or every, every, same


def _candidates(
    kind: AnswerKind, text: str, instruction: str, expected: Any
) -> tuple[list[Mention], _Same]:
    """The dates or numbers a text states that the instruction does not, and how two compare.

    A value from the instruction restates the question (a warehouse's 300 items, a budget of
    40 tool calls); it is not the agent's answer, unless it is the expected value itself.
    """
    read = date_mentions if kind == "date" else number_mentions
    given = _instruction_values(kind == "date", instruction)
    kept = [m for m in read(text) if m.value not in given or m.value == expected]
    if kind == "date":
        return kept, _same_value
    return kept, _same_amount if kind == "amount" else _same_count


def _structured(kind: AnswerKind, value: Any, expected: Any, ids: IdAnswer | None) -> Judgement:
    checks: dict[str, Callable[[Any], bool]] = {
        "count": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "amount": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "date": lambda v: isinstance(v, str) and bool(DATE.fullmatch(v.strip())),
        "yes_no": lambda v: isinstance(v, bool),
        "ids": lambda v: isinstance(v, list) and all(isinstance(i, str | int) for i in v),
    }
    if not checks[kind](value):
        return Judgement(False, f"structured answer {value!r} is not a {_KIND_NAMES[kind]}")
    if kind == "ids":
        if ids is None:
            return Judgement(False, "no id set to compare with")
        said = {str(v) for v in value}
        return _compare_ids(said, ids, set(), "structured answer", said)
    if kind == "date":
        value = value.strip()[:10]
    same: _Same = _same_amount if kind == "amount" else _same_exactly
    if not same(value, expected):
        return Judgement(False, f"structured answer {_fmt(value)}, expected {_fmt(expected)}")
    return Judgement(True, f"structured answer {_fmt(expected)}")


def _yes_no(message: str, expected: bool) -> Judgement:
    first = re.split(r"(?<=[.!?])\s|\n", message.strip(), maxsplit=1)[0]
    words = [w.lower() for w in WORD.findall(first)]
    said = [w == "yes" for w in words if w in ("yes", "no")]
    unsure = _UNSURE_YES_NO.search(first)
    if unsure or (True in said and False in said):
        why = repr(unsure.group(0)) if unsure else "both yes and no"
        return Judgement(False, f"hedged yes/no answer: {why} in {first.strip()!r}")
    if not said:
        return Judgement(False, "no yes/no answer in the first sentence of the final message")
    if said[0] != expected:
        return Judgement(False, f"answers {_fmt(said[0])}, expected {_fmt(expected)}")
    return Judgement(True, f"answers {_fmt(expected)}")


# -- a structured answer and the prose around it ------------------------------------------


def _prose(message: str) -> str:
    """The message without its structured answer's value (empty when nothing else is said).

    The answer object's other keys are prose too (``"alternatives": [14, 16]`` states two
    more counts), read before the lines above it, so the sentence introducing the answer line
    stays last.
    """
    data = _answer_object(message) or {}
    others = {k: v for k, v in data.items() if k != "answer"}
    rest = json.dumps(others, ensure_ascii=False) if others else ""
    return "\n".join(part for part in (rest, _lines_above(message)) if part)


def _lines_above(message: str) -> str:
    """The message without its structured answer line (empty when the answer is the whole)."""
    stripped = message.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict) and "answer" in data:
            return ""
    lines = [line for line in stripped.splitlines() if line.strip()]
    return "\n".join(lines[:-1])


def _introduced(prose: str, name: str) -> Judgement | None:
    """A guess, a hedge or a retraction in the prose's last sentence, which introduces the answer.

    A hedge there (``Probably:``, ``I could not finish counting.``) qualifies the answer line
    as one in the answer's own sentence would; a yes/no keeps "could not" as an answer.
    """
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n", prose.strip()) if s.strip()]
    last = sentences[-1] if sentences else ""
    guessed, retracted = _GUESSED.search(last), _RETRACTED.search(last)
    unsure = (_UNSURE_YES_NO if name == "yes/no answer" else _UNSURE).search(last)
    if guessed is not None:
        return Judgement(False, f"the structured {name} is called a guess: {guessed.group(0)!r}")
    if unsure is not None:
        return Judgement(False, f"the structured {name} is qualified: {unsure.group(0)!r}")
    if retracted is not None:
        return Judgement(False, f"the structured {name} is retracted: {retracted.group(0)!r}")
    return None


def _agreeing(
    kind: AnswerKind, prose: str, mentions: list[Mention], value: Any, same: _Same
) -> Judgement | None:
    """Prose stating another value than the structured one, or denying it; None: it agrees."""
    name = _KIND_NAMES[kind]
    other = [m for m in mentions if not same(m.value, value)]
    if other:
        return Judgement(
            False,
            f"the prose states {other[0].text.strip()!r} besides the structured answer "
            f"{_fmt(value)}: state one {name}, nothing else of its kind",
        )
    reason = qualifier_hedge(prose, mentions, dates=kind == "date") or denial(prose, mentions)
    if reason:
        return Judgement(False, f"the prose around the structured {name} is {reason}")
    return _introduced(prose, name)


def _prose_agrees(
    kind: AnswerKind, prose: str, value: Any, instruction: str, ids: IdAnswer | None
) -> Judgement | None:
    """Why the prose beside a right structured answer says otherwise (None: it agrees)."""
    if not prose.strip():
        return None
    if kind == "yes_no":
        said = [w.lower() for w in WORD.findall(prose)[:1] if w.lower() in ("yes", "no")]
        if said and (said[0] == "yes") != bool(value):
            return Judgement(
                False, f"the prose answers {said[0]}, the structured answer {_fmt(value)}"
            )
        return _introduced(prose, "yes/no answer")
    if kind == "ids":
        return _ids_agree(prose, value, ids, instruction)
    mentions, same = _candidates(kind, prose, instruction, value)
    return _agreeing(
        kind, prose, mentions, str(value).strip()[:10] if kind == "date" else value, same
    )


def judge(
    kind: AnswerKind,
    message: str,
    expected: Any,
    *,
    instruction: str = "",
    structured_only: bool = False,
    ids: IdAnswer | None = None,
) -> Judgement:
    """Judge a final message against the expected answer of a given kind.

    Args:
        kind: The answer's type.
        message: The agent's final message.
        expected: The expected value (an int count, a float amount, a ``YYYY-MM-DD`` date, a
            bool; for ``ids`` the id check does the comparison).
        instruction: The text the agent was given; its numbers are not candidates.
        structured_only: Only a structured answer ``{"answer": ...}`` counts.
        ids: For ``ids``: the target ids and which tokens name rows of their entity.
    """
    given, value = structured_answer(message)
    if given:
        judged = _structured(kind, value, expected, ids)
        if not judged.ok:
            return judged
        return _prose_agrees(kind, _prose(message), value, instruction, ids) or judged
    if structured_only:
        return Judgement(False, 'no structured answer: end the final message with {"answer": ...}')
    if kind == "yes_no":
        return _yes_no(message, bool(expected))
    if kind == "ids":
        if ids is None:
            return Judgement(False, "no id set to compare with")
        return _ids(message, ids, instruction)
    mentions, every, same = _stated(kind, message, instruction)
    return _single(kind, message, mentions, expected, same, every)


# -- ids ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"[\w#@.\-]*\w")


@attrs.frozen(slots=True)
class IdAnswer:
    """What an id-set answer is checked against.

    Attributes:
        targets: The expected ids (the target set's keys, as text).
        is_row: Whether a token names a row of the targets' entity (a non-target one is an
            extra, unless the instruction named it).
    """

    targets: frozenset[str]
    is_row: Callable[[str], bool]


def _compare_ids(
    named: set[str], expected: IdAnswer, given: set[str], how: str, said: set[str] | None = None
) -> Judgement:
    missing = sorted(expected.targets - named)
    extra = sorted(t for t in named - expected.targets - given if expected.is_row(t))
    problems = []
    if missing:
        folded = {t.casefold(): t for t in (said if said is not None else named)}
        cased = [
            f"{folded[m.casefold()]} for {m}" for m in missing if folded.get(m.casefold(), m) != m
        ]
        note = f" (written {_shown(cased)}: ids are case-sensitive)" if cased else ""
        problems.append(f"lacks {_shown(missing)}{note}")
    if extra:
        problems.append(f"also names rows that are not targets: {_shown(extra)}")
    if problems:
        return Judgement(False, f"{how} " + "; ".join(problems))
    return Judgement(True, f"{how} names exactly the targets")


def _ids(message: str, expected: IdAnswer, instruction: str) -> Judgement:
    """Whole tokens, not substrings (``T-100`` is not found in ``T-1001``); no hedging."""
    mentions = [
        Mention(m.group(0), m.start(), m.end(), m.group(0))
        for m in _TOKEN.finditer(message)
        if m.group(0) in expected.targets or expected.is_row(m.group(0))
    ]
    reason = pair_hedge(message, mentions)
    truncated = _ELLIPSIS.search(message) if mentions else None
    if not reason and truncated:
        reason = f"a truncated list ({truncated.group(0)!r})"
    reason = reason or qualifier_hedge(message, mentions) or denial(message, mentions)
    if reason:
        return Judgement(False, f"hedged id list: {reason}; name every id, once, plainly")
    given = set(_TOKEN.findall(instruction))
    said = set(_TOKEN.findall(message))
    return _compare_ids({m.value for m in mentions}, expected, given, "final message", said)


def _ids_agree(
    prose: str, value: list[Any], expected: IdAnswer | None, instruction: str
) -> Judgement | None:
    """Ids the prose names beside a structured id list that the list does not hold."""
    if expected is None:
        return None
    named = {str(v) for v in value}
    given = set(_TOKEN.findall(instruction))
    mentions = [
        Mention(m.group(0), m.start(), m.end(), m.group(0))
        for m in _TOKEN.finditer(prose)
        if m.group(0) in expected.targets or expected.is_row(m.group(0))
    ]
    other = sorted({m.value for m in mentions if m.value not in named and m.value not in given})
    if other:
        return Judgement(
            False,
            f"the prose names {_shown(other)}, which the structured answer does not: name "
            "every id once, in the answer",
        )
    reason = qualifier_hedge(prose, mentions) or denial(prose, mentions)
    if reason:
        return Judgement(False, f"the prose around the structured id list is {reason}")
    return _introduced(prose, "id list")
