"""Which rows a described change touches, for the deterministic planner.

An experiment can change every row or a random share of them (`fraction`, rows picked by a seed). So a share
the text states is read ("half the rows", "1/2 of rows", "one in twenty", "10 percent of records"); a share it
mentions but does not quantify ("some rows", "occasionally") is a question back, never 100 %; and a change the
text limits to rows chosen by what they hold ("only for transactions from Brazil", "values above 2000 doubled")
is refused, because a random share of rows is not those rows.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from agent.planning.phrases import NUM, rx, to_number

_ROWS: Final = (
    r"(?:rows?|records?|values?|entries|entry|transactions?|payments?|events?|cases?|samples?|observations?|data"
    r"|items?|lines?|them|the\s+time)"
)
_DET: Final = r"(?:(?:the|all|our|of\s+the|of\s+all|of)\s+){0,2}"


# Between a share and its rows, a word that says the rows are picked ("20% of US transactions") or that the
# percentage is a size, not a share ("noise of 2% to values").
_NOT_ROWS: Final = r"(?:to|by|in|on|for|into|from|at)\b|(?-i:[A-Z]{2,3}\b)"


class Share(NamedTuple):
    fraction: float
    said: str | None  # the words the share came from; None when the text gives none (every row is assumed)


_PCT: Final = r"(?:%|p(?:er|re)\s*c?ents?|pct)"
_PCT_OF: Final = rx(rf"({NUM})\s*{_PCT}\s+(?:of\s+)?{_DET}(?:(?!{_NOT_ROWS})\w+\s+)?{_ROWS}\b")
_PCT_ON: Final = rx(
    rf"\b(?:on|for|affecting|across|in|to|at)\s+(?:about\s+|around\s+|roughly\s+|~\s*)?({NUM})\s*{_PCT}"
    r"(?!\s*(?:nulls?|missing|empty|noise|jitter|higher|lower|more|less|larger|smaller|bigger|up|down)\b)"
)
_PCT_TIME: Final = rx(rf"({NUM})\s*(?:%|percent|per\s*cent)\s+of\s+the\s+time\b")
_SLASH: Final = rx(
    r"(?<![\w./])([0-9]{1,6})\s*/\s*([0-9]{1,9})(?![\w/])(?!\s*(?:hours?|h|days?)\b)"
    rf"(?:\s+of\s+{_DET}(?:\w+\s+)?{_ROWS}\b)?"
)
_N_IN_M: Final = rx(
    rf"({NUM})\s+(?:{_ROWS}\s+)?(?:in|out\s+of|of)\s+(?:every\s+|each\s+)?({NUM})(?!\s*(?:%|percent|hours?|days?|minutes?|years?))"
)
_FRACTION_WORDS: Final[dict[str, float]] = dict(
    half=1 / 2, third=1 / 3, quarter=1 / 4, fourth=1 / 4, fifth=1 / 5, sixth=1 / 6, eighth=1 / 8, tenth=1 / 10,
    twentieth=1 / 20, hundredth=1 / 100, thousandth=1 / 1000,
)  # fmt: skip
_COUNT_WORDS: Final[dict[str, float]] = dict(a=1, an=1, one=1, two=2, three=3, four=4, five=5, seven=7, nine=9)
_PART: Final = "|".join(_FRACTION_WORDS)
_WORDS: Final = rx(
    rf"\b(?:(a|an|one|two|three|four|five|seven|nine)[\s-]+)?({_PART})s?(?!\s+of\s+(?:its|their|what))\s+(?:of\s+)?{_DET}(?:\w+\s+)?{_ROWS}\b"
    rf"|(?<!\bcut\s)(?<!\bsplit\s)\b(?:in|for|on|to)\s+(?:(a|an|one|two|three|four)\s+)?({_PART})s?\b(?!\s+(?:an?\s+)?(?:hour|day|minute))"
    r"(?!\s+of\s+(?:its|their|the\s+value|what|the\s+original))"
)
_EVERY_NTH: Final = rx(rf"\bevery\s+(other|second|third|fourth|fifth|tenth|({NUM})(?:st|nd|rd|th))\s+{_ROWS}\b")
_ORDINALS: Final[dict[str, float]] = dict(other=2, second=2, third=3, fourth=4, fifth=5, tenth=10)
_ALL: Final = rx(
    rf"\b(?:on|for|in|to|across)\s+(?:all|every|each)\s+(?:of\s+the\s+|the\s+)?(?:\w+\s+)?{_ROWS}\b"
    r"|\b(?:every|all)\s+(?:single\s+)?(?:row|record|value|transaction)s?\b|\beverywhere\b|\balways\b"
)

# A share mentioned without a number a random selection could use.
VAGUE: Final = rx(
    rf"{NUM}\s+(?:{_ROWS})\b|\ba\s+lot\b|\bchunk\b|\b(?:big|large|small|good|sizable|significant)\s+(?:part|portion|share|number)\b"
    r"|p(?:er|re)c?ents?\b|\b(?:some|a\s+few|few|several|many|(?<!at\s)most|majority|minority|portion|part\s+of|parts\s+of|fraction\s+of"
    r"|subset|sample\s+of|sometimes|occasionally|occasional|randomly|at\s+random|intermittent\w*|now\s+and\s+then"
    r"|rarely|rare|often|frequently|sporadic\w*|partial\w*|a\s+bunch\s+of|a\s+lot\s+of|lots\s+of|handful|percentage"
    r"|share\s+of|proportion\s+of|chunk\s+of|half|quarter|third|percent|per\s*cent|a\s+small\s+number|a\s+number\s+of"
    r"|certain|random\s+\w+s)\b|%"
)
# Where a percentage is the size of the change, not a share of rows ("increased by 10%", "±5% noise", "5% nulls").
_SIZE_PCT: Final = rx(
    r"\bcut\s+in\s+half\b|\bhalv\w*|"
    rf"(?:\bby|\bup|\bdown|±|\+/-|\+-|→|->|=>|\bto|\bbecomes?|\bof)\s*(?:about\s+|around\s+|roughly\s+|~\s*)?{NUM}\s*(?:%|percent|per\s*cent)"
    rf"|{NUM}\s*(?:%|percent|per\s*cent)\s+(?:\w+\s+)?(?:higher|lower|larger|smaller|bigger|greater|more|less|up|down"
    r"|noise|jitter|errors?|relative|nulls?|missing|empty|blanks?|nans?|inflation|increase|decrease|drop|rise|bump"
    r"|discount|markup|fee|tax|off)\b|\b(?:percent(?:age)?s?|per\s*cent)\s+(?:instead|rather|to|into|as)\b"
    r"|\b(?:as|in|into|to|from)\s+(?:an?\s+)?(?:percent(?:age)?s?|per\s*cent|%)"
)

# A range of shares ("between 5 and 10 percent"): either end would be a guess.
RANGE: Final = rx(rf"\bbetween\s+{NUM}\s*%?\s+and\s+{NUM}\s*{_PCT}|{NUM}\s*%?\s*(?:-|–|to)\s*{NUM}\s*{_PCT}")

# Rows picked by a quoted value: "for merchant_category 'grocery'" (the field's name reads as "values").
QUOTED_SUBSET: Final = rx(
    r"\b(?:for|where|among|only\s+in|only\s+on)\s+(?:the\s+)?(?:values?\s+)?(?:=\s*)?(['\"])([^'\"]+)\1"
    r"|\bin\s+(['\"])([^'\"]+)\3\s+(?:rows|transactions|records|payments)\b"
)

# The change limited to rows chosen by what they hold: a random share is not those rows.
SUBSET: Final = (
    QUOTED_SUBSET,
    rx(r"\bonly\s+(?:for|on|in|when|where|if|from|at|during|to|with|within|among|after|before)\b"),
    rx(r"\b(?:where|whenever|unless|except|excluding|but\s+not)\b"),
    rx(rf"\b(?:first|last|top|bottom|latest|oldest|newest|earliest)\s+(?:{NUM}\s+)?{_ROWS}"),
    rx(
        rf"(?:^|\b(?:is|are|when|if|amounts?|values?|rows?))\s*(?:above|over|below|under|greater\s+than|less\s+than|"
        rf"more\s+than|exceeding|bigger\s+than|smaller\s+than)\s+{NUM}(?!\s*%)"
    ),
    rx(r"\b(?:if|when)\s+(?:the\s+|a\s+|its\s+)?\w+\s+(?:is|are|was|were|equals?|has|have|exceeds?)\b"),
    rx(
        r"\b(?:for|on|in|from|of|to|among)\s+(?:\w+\s+){0,2}?(?:transactions|users|customers|merchants|accounts|"
        r"orders|payments|cards|clients|countries|regions|stores|devices|members|vendors|partners|shops|sellers|"
        r"buyers|applicants|markets|segments|cohorts?)\s+(?:from|in|with|where|that|which|whose|made|over|under|"
        r"above|below|older|newer|based|located|outside|inside)\b"
    ),
    rx(
        r"\b(?:for|on|to|among)\s+(?!all\b|every\b|each\b|any\b|the\s+whole\b|the\s+wrong\b|wrong\b|[0-9])"
        r"(?:[\w-]+\s+){1,2}?(?:transactions|users|"
        r"customers|merchants|accounts|orders|payments|cards|clients|stores|devices|members|applicants)\b"
    ),
    rx(
        r"\b(?:for|on|to|among|in|of)\s+(?:the\s+|our\s+)?(?:refunds|returns|chargebacks|disputes|subscriptions|vips?|"
        r"businesses|guests|trials|renewals|reversals|withdrawals|deposits|transfers|cross-border\s+\w+|"
        r"mobile\s+\w+|web\s+\w+|app\s+\w+|android|ios|premium\s+\w+|enterprise\s+\w+|some\s+\w+)\b"
    ),
    re.compile(rf"\b[A-Z]{{2,3}}\s+{_ROWS}"),  # "on 20% of US transactions": rows of one country or currency
    rx(  # rows picked by where they come from: "for events sent by the mobile app"
        r"\b(?:for|on|to|among|in|of)\s+(?:the\s+|our\s+|all\s+)?(?:[\w-]+\s+){1,2}?(?:sent|made|placed|coming|"
        r"originating|created|submitted|processed|routed|received)\s+(?:by|from|through|via|in|on|at|with)\b"
    ),
    rx(
        r"\b(?:on|during|at|over|in)\s+(?:the\s+)?(?:weekends?|weekdays?|nights?|holidays?|mornings?|evenings?|"
        r"black\s+friday|peak\s+(?:hours?|times?|season)|(?:january|february|march|april|may|june|july|august|"
        r"september|october|november|december)|summer|winter|q[1-4])\b"
    ),
    rx(
        rf"\b(?:values?|amounts?|rows?|records?|transactions?|numbers?|ones|those|anything|everything|entries)\s+"
        rf"(?:that\s+are\s+|which\s+are\s+)?(?:above|over|below|under|greater\s+than|less\s+than|more\s+than|"
        rf"bigger\s+than|smaller\s+than|exceeding|higher\s+than|lower\s+than|between|equal\s+to)\s+{NUM}"
    ),
    rx(
        r"\b(?:the\s+)?(?:negative|positive|large|small|big|high|low|extreme|outlier|zero|tiny|huge|old|older|recent|"
        r"international|domestic|foreign|online|offline|fraudulent|flagged)\s+(?:values?|amounts?|rows?|records?|"
        r"transactions?|numbers?|ones|entries|payments?|orders?|accounts?|customers?|users?)\b"
    ),
)


def read_share(text: str) -> Share | None:
    """The share of rows the text states; None when it states none (the caller assumes every row and says so)."""
    for reader in (_percent, _slash, _n_in_m, _words, _every_nth, _every_row):
        if (share := reader(text)) is not None:
            return share
    return None


def _percent(text: str) -> Share | None:
    for regex in (_PCT_OF, _PCT_TIME, _PCT_ON):
        for m in regex.finditer(text):
            value = to_number(m.group(1))
            if value is not None and 0 < value <= 100:
                return Share(value / 100, m.group().strip())
    return None


def _slash(text: str) -> Share | None:
    m = _SLASH.search(text)
    if m is None:
        return None
    a, b = float(m.group(1)), float(m.group(2))
    return Share(a / b, m.group()) if 0 < a <= b else None


def _n_in_m(text: str) -> Share | None:
    for m in _N_IN_M.finditer(text):
        a, b = to_number(m.group(1)), to_number(m.group(2))
        if a is not None and b is not None and 0 < a <= b:
            return Share(a / b, m.group())
    return None


def _words(text: str) -> Share | None:
    m = _WORDS.search(text)
    if m is None:
        return None
    count = _COUNT_WORDS[(m.group(1) or m.group(3) or "one").lower()]
    part = _FRACTION_WORDS[(m.group(2) or m.group(4)).lower()]
    return Share(count * part, m.group().strip()) if 0 < count * part <= 1 else None


def _every_nth(text: str) -> Share | None:
    m = _EVERY_NTH.search(text)
    if m is None:
        return None
    nth = _ORDINALS.get(m.group(1).lower()) or to_number(m.group(2) or "")
    return Share(1 / nth, m.group()) if nth is not None and nth >= 1 else None


def _every_row(text: str) -> Share | None:
    m = _ALL.search(text)
    return None if m is None else Share(1.0, m.group())


def unread_share(text: str, said: str | None) -> str | None:
    """Words that speak of a share of rows which `read_share` did not turn into one (sizes of the change aside)."""
    rest = text.replace(said, " ") if said else text
    rest = _SIZE_PCT.sub(" ", rest)
    m = VAGUE.search(rest)
    return m.group() if m else None


def subset(text: str, op: str | None = None) -> str | None:
    """The words that limit the change to rows picked by their content, if any, up to the end of their clause
    ("only for transactions from Brazil"), so that the refusal names the rows."""
    for regex in SUBSET:
        for m in regex.finditer(text):
            if op == "sign_flip" and m.group().strip().lower().startswith(("negative", "positive")):
                continue  # "sent as negative numbers" is the sign flip itself
            clause = CLAUSE_END.search(text, m.end())
            end = min(clause.start() if clause else len(text), m.end() + 60)
            return text[m.start() : end].strip()
    return None


CLAUSE_END: Final = rx(r"[,.;:!?—–()]|\s-\s|\b(?:and|but|so|because|while)\b")


SELECTABLE: Final = (
    'Provenance changes every row or a random share of rows, e.g. "on 10% of rows", "half the rows", "one in twenty"'
)
