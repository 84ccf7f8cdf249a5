"""Phrase tables for the deterministic planner: which words describe which mutation (docs/design.md §5 allowlist).

Separate from ``phrases.py`` (numbers, quoting and routing) only to keep modules short. Time-zone abbreviations
match in upper case only ("EST", "WEST"), so that ordinary English words are never read as zones.
"""

from __future__ import annotations

import re
from typing import Final

from agent.planning.phrases import DOTTED, NUM, QUOTED, VAL, rx

# --- plan: what a refusal says ------------------------------------------------------------------------------
CAN_TEST: Final = (
    "Provenance tests value-level changes to one field. It can test: unit or scale changes (dollars → cents, in "
    "thousands, multiplied by 10), nulls (5% nulls), renamed or new categories ('grocery' renamed to 'groceries', "
    "a new category 'crypto'), shifts and time-zone shifts (shifted by +5, UTC → CET on an hour field), rounding "
    "(to whole dollars), clipping (capped at 1000), noise (jitter ±5%), sign flips (refunds as negative), shuffling "
    '(a misaligned join) and constant values (all values set to 0). For example: "what happens if amount is sent '
    'in cents instead of dollars?"'
)
STRUCTURAL_REFUSAL: Final = (
    "Retyping, encrypting, masking, splitting or merging a column, or changing a whole table, is a schema change, "
    'not a change to the values of one field, so it cannot be simulated by mutating data; ask "what depends on '
    '…?" to see who reads it. A dropped or renamed column is judged by the policy\'s structural rule: ask "what if '
    'amount is dropped?" or "what if amount is renamed to amount_usd?". '
)

# --- plan: guards -----------------------------------------------------------------------------------------------
URN_OR_DOTTED: Final = rx(rf"({QUOTED})|urn:li:\S+|{DOTTED}")  # identifiers are masked; quoted values are kept
ABSOLUTE: Final = rx(r"\babsolute\s+values?\b|\babs\s*\(")
IMPUTE: Final = rx(
    r"\b(?:nulls?|missing(?:\s+values)?|nans?|blanks?|empty\s+values)\s+(?:are\s+|get\s+|being\s+)?(?:filled|imputed|"
    r"replaced|defaulted|backfilled)|\b(?:impute|fill)\w*\s+(?:the\s+)?(?:nulls?|missing|nans?|gaps?)"
)
STRUCTURAL: Final = rx(
    r"\b(?:column|field|table|dataset|schema|attribute)s?\s+(?:\w+\s+){0,2}?(?:is\s+|are\s+|gets?\s+|was\s+|were\s+|"
    r"being\s+)?(?:renamed|dropped|deleted|removed|moved|split|merged|retyped|deprecated)"
    r"|\b(?:rename|drop|delete|remove|split)\s+(?:the\s+)?(?:\w+\s+)?(?:column|field|table|dataset|schema)\b"
    r"|\bencrypt\w*|\bhash(?:ed|ing)?\b|\btokeni[sz]\w*|\bmask(?:ed|ing)\b|\banonymi[sz]\w*|\bpartition\w*"
    r"|\b(?:data\s+)?type\s+(?:change|changes|changed)|\bchanges?\s+(?:its\s+|the\s+)?(?:data\s+)?type\b"
    r"|\b(?:cast\s+to|sent\s+as|stored\s+as|encoded\s+as)\s+(?:an?\s+)?(?:string|varchar|text|json|bytes)\b"
    r"|\b(?:table|column|field)\s+(?:goes\s+away|disappears)|\b(?:is|are|gets?)\s+(?:dropped|deleted|removed)\b"
)
# Conversions one operator cannot express without facts Provenance does not have (a rate, an affine formula).
TEMPERATURE: Final = rx(r"\b(?:celsius|fahrenheit|kelvin|°[cf])\b")
CURRENCY: Final = rx(
    r"\b(?:euros?|eur|gbp|pounds?\s+sterling|yen|jpy|yuan|cny|rupees?|inr|francs?|chf|exchange\s+rates?|currenc\w+)\b"
)

# --- plan: nulls, categories --------------------------------------------------------------------------------------
_NULLISH: Final = r"(?:nulls?|missing|empty|blanks?|nans?|none|nas?)\b"
NULL_PCT: Final = rx(
    rf"({NUM})\s*(?:%|percent|per\s*cent)\s+(?:of\s+(?:the\s+|all\s+)?(?:\w+\s+){{0,2}}?)?(?:(?:is|are|become|becomes|"
    rf"being|get|gets|set\s+to|sent\s+as|turn|turned|go|goes)\s+)?{_NULLISH}"
)
NULL_ALL: Final = rx(rf"\b(?:all|every|entirely|completely|always|fully)\s+(?:\w+\s+){{0,3}}?{_NULLISH}")
NULL_ANY: Final = rx(
    r"\bstops?\s+being\s+(?:populated|filled|set|sent)\b|\bno\s+values?\b|\b(?:has|have|had|with)\s+no\s*(?:$|[,.;]|"
    r"(?=\s+(?:at\s+all|for|on|in)\b))|\b(?:nulls?|null\s+values|missing(?:\s+values)?|nans?|empty(?!\s+strings?)|blank(?:s|ed)?|nulled(?:\s+out)?|nul|"
    r"nill?|none(?=\s+(?:in|on|for))|dropped\s+values|absent|unset|n/?a(?=\s+(?:in|on|for))|"
    r"not\s+populated|unpopulated)\b"
)
# --- plan: units (name -> pattern, dimension, units per base unit) --------------------------------------------------
UNITS: Final[dict[str, tuple[str, str, float]]] = {
    "dollars": (r"dollars?|usd|\$", "money", 1.0),
    "cents": (r"cents?|pennies|penny", "money", 100.0),
    "thousands": (r"thousands?(?:\s+of\s+(?:dollars|usd))?|\$?k|k\$", "money", 1e-3),
    "millions": (r"millions?(?:\s+of\s+dollars)?", "money", 1e-6),
    "kilograms": (r"kilo(?:gram)?s?|kgs?", "mass", 1.0),
    "grams": (r"grams?|g", "mass", 1e3),
    "pounds": (r"pounds?|lbs?", "mass", 1 / 0.45359237),
    "meters": (r"met(?:er|re)s?|m", "length", 1.0),
    "centimeters": (r"centimet(?:er|re)s?|cm", "length", 1e2),
    "millimeters": (r"millimet(?:er|re)s?|mm", "length", 1e3),
    "kilometers": (r"kilomet(?:er|re)s?|km", "length", 1e-3),
    "miles": (r"miles?|mi", "length", 1 / 1609.344),
    "feet": (r"feet|foot|ft", "length", 1 / 0.3048),
    "seconds": (r"seconds?|secs?|s", "time", 1.0),
    "milliseconds": (r"milliseconds?|millis|msecs?|ms", "time", 1e3),
    "microseconds": (r"microseconds?|micros|µs|us", "time", 1e6),
    "minutes": (r"minutes?|mins?", "time", 1 / 60),
    "hours": (r"hours?|hrs?|h", "time", 1 / 3600),
    "days": (r"days?", "time", 1 / 86400),
    "weeks": (r"weeks?", "time", 1 / 604800),
    "years": (r"years?|yrs?", "time", 1 / 31557600),
    "percent": (r"percent(?:age)?s?|%|0-100", "ratio", 100.0),
    "fraction": (r"fractions?|ratios?|proportions?|0-1", "ratio", 1.0),
}
# When only the new unit is named ("sent in cents"), the current one is assumed to be its usual partner.
DEFAULT_SOURCE: Final = dict(
    cents="dollars", dollars="cents", thousands="dollars", millions="dollars", milliseconds="seconds",
    seconds="milliseconds", grams="kilograms", kilograms="grams", centimeters="meters", meters="centimeters",
    percent="fraction", fraction="percent", weeks="days",
)  # fmt: skip
UNIT: Final = r"(?<![\w$%])(?:" + "|".join(p for p, _, _ in UNITS.values()) + r")(?![\w%])"
# Target-only phrasings skip the one-letter symbols ("in s", "as g" are rarely units).
_TARGET: Final = (
    r"cents?|dollars?|usd|thousands?(?:\s+of\s+dollars)?|\$?k|millions?|milli(?:second)?s|msecs?|ms|seconds?|secs?"
    r"|weeks?|years?|minutes?|mins?|hours?|days?|pennies|grams?|kilo(?:gram)?s?|kgs?|centimet(?:er|re)s?|cm|met(?:er|re)s?"
    r"|percent(?:age)?s?|fractions?|ratios?|proportions?"
)
CONVERSIONS: Final = (
    (rx(rf"\bfrom\s+(?:an?\s+)?({UNIT})\s+(?:to|into|→|->)\s+(?:an?\s+)?({UNIT})"), False),
    (rx(rf"({UNIT})\s*(?:→|->|=>|⇒|\bto\b|\binto\b)\s*({UNIT})"), False),
    (rx(rf"({UNIT})\s+(?:instead\s+of|rather\s+than)\s+(?:an?\s+)?({UNIT})"), True),  # new unit comes first
)
UNIT_TARGET: Final = rx(
    r"\b(?:in|as|into|to|using)\s+(?:an?\s+|the\s+)?(?:(?:integer|whole|raw)\s+)?(?:(?:number|amount|count)\s+of\s+)?"
    rf"(?:usd\s+|us\s+)?(?<![\w$%])({_TARGET})(?![\w%])(?!\s+of\b)"
)
UNIT_ANY: Final = rx(UNIT)

# --- plan: generic scale (pattern, how the number becomes a factor) ----------------------------------------------
_UP: Final = r"(?:increase[sd]?|increasing|inflated|raised|grows?|grew|goes\s+up|went\s+up|up)"
_DOWN: Final = (
    r"(?:decrease[sd]?|decreasing|reduced|lowered|drops?|dropped|goes\s+down|went\s+down|down|shrinks?|shrunk)"
)
_LARGER: Final = r"(?:larger|bigger|higher|greater|more|as\s+(?:large|big|high))"
SCALE: Final = (
    (rx(rf"({NUM})\s?(?:[x×]|times)\s+(?:too\s+)?(?:small|low|smaller|lower|less)\b"), "inverse"),  # 10x too small
    (rx(rf"\b(?:multipl\w*|scal\w*)\s+(?:up\s+|down\s+)?by\s+(?:a\s+factor\s+(?:of\s+)?)?({NUM})"), "n"),
    (rx(rf"\bfactor\s+(?:of\s+)?({NUM})"), "n"),
    (rx(r"(?<!\w)[x×]\s?([0-9][0-9,]*(?:\.[0-9]+)?)\b"), "n"),
    (rx(rf"({NUM})\s?(?:[x×](?!\w)|-?fold\b|\s+times\s+{_LARGER})"), "n"),
    (rx(rf"({NUM})\s+times\s+(?:smaller|lower|less)\b"), "inverse"),
    (rx(rf"\bdivided\s+by\s+({NUM})"), "inverse"),
    (rx(rf"\b{_UP}\s+(?:by\s+)?({NUM})\s*(?:%|percent)"), "up"),
    (rx(rf"(?:^|\s)[*×]\s*({NUM})"), "n"),
    (rx(rf"(?:^|\s)/\s*({NUM})"), "inverse"),
    (rx(rf"({NUM})\s+times\s+(?:what|the|its|as\s+(?:much|big|large|high))"), "n"),
    (
        rx(
            rf"\b(?:add\w*|appl\w*|includ\w*|charg\w*|with)\s+(?:an?\s+|the\s+)?(?:extra\s+)?({NUM})\s*(?:%|percent)\s+"
            r"(?:\w+\s+)?(?:tax|fees?|markup|surcharge|premium|vat|inflation|tip)\b"
        ),
        "up",
    ),
    (
        rx(
            rf"({NUM})\s*(?:%|percent)\s+(?:\w+\s+)?(?:tax|fee|markup|surcharge|premium|vat|inflation)\s+(?:is\s+|gets?\s+)?"
            r"(?:added|applied|included|charged)"
        ),
        "up",
    ),
    (
        rx(
            rf"({NUM})\s*(?:%|percent)\s+(?:discount|off)\b|\bdiscount(?:ed)?\s+(?:of\s+|by\s+)?({NUM})\s*(?:%|percent)"
        ),
        "down",
    ),
    (rx(rf"\b{_DOWN}\s+(?:by\s+)?({NUM})\s*(?:%|percent)"), "down"),
    (rx(rf"({NUM})\s*(?:%|percent)\s+(?:higher|larger|bigger|greater|more|up)\b"), "up"),
    (rx(rf"({NUM})\s*(?:%|percent)\s+(?:lower|smaller|less|down)\b"), "down"),
    (rx(rf"({NUM})\s*(?:→|->|=>|⇒|\bbecomes\b|\bturns\s+into\b)\s*({NUM})\s*%?"), "ratio"),  # "0.5 → 50%": 100
)
# Which way a person says the values move; a plan moving them the other way read the words wrong.
DOWNWARD: Final = rx(
    r"\btoo\s+(?:small|low|little)\b|\b(?:smaller|lower|understated|undercount\w*|shrinks?|shrunk|decreas\w*|"
    r"reduc\w*|drops?|dropped|deflated)\b|\b(?:goes|go|went|moves?|shifted|shifts?)\s+down\b|\bdown\s+by\b"
)
UPWARD: Final = rx(
    r"\btoo\s+(?:big|large|high|much)\b|\b(?:bigger|larger|higher|overstated|overcount\w*|grows?|grew|increas\w*|"
    r"inflated|rais\w*)\b|\b(?:goes|go|went|moves?|shifted|shifts?)\s+up\b|\bup\s+by\b"
)
SCALE_PART: Final = rx(
    r"\b(?:to|by|down\s+to)\s+(?:a|one)\s+(half|third|quarter|fifth|tenth|hundredth|thousandth)\s+(?:of\s+)?(?:its|the|what)"
)
PART_OF: Final = dict(half=0.5, third=1 / 3, quarter=0.25, fifth=0.2, tenth=0.1, hundredth=0.01, thousandth=0.001)
SCALE_WORDS: Final = ((rx(r"\bdoubl\w*"), 2.0), (rx(r"\btripl\w*"), 3.0), (rx(r"\bquadrupl\w*"), 4.0),
                      (rx(r"\bhalv\w*|\bcut\s+in\s+half\b"), 0.5))  # fmt: skip

# --- plan: time zones and time shifts --------------------------------------------------------------------------------
TZ_HOURS: Final[dict[str, float]] = dict(
    UTC=0, GMT=0, WET=0, CET=1, WEST=1, BST=1, CEST=2, EET=2, EEST=3, MSK=3, IST=5.5, SGT=8, HKT=8, JST=9, KST=9,
    AEST=10, AEDT=11, NZST=12, EST=-5, EDT=-4, CST=-6, CDT=-5, MST=-7, MDT=-6, PST=-8, PDT=-7,
)  # fmt: skip
TZ: Final = (
    r"(?<![\w])(?:(?i:utc|gmt)|" + "|".join(z for z in TZ_HOURS if z not in {"UTC", "GMT"}) + r")"
    r"(?:\s?[+\-−]\s?[0-9]{1,2}(?::?[0-9]{2})?)?(?![\w])"
)
TZ_PAIR: Final = re.compile(rf"({TZ})\s*(?:→|->|=>|⇒|(?i:\bto\b|\binto\b))\s*({TZ})")
TZ_INSTEAD: Final = re.compile(rf"({TZ})\)?\s+(?i:(?:time\s+)?(?:instead\s+of|rather\s+than))\s+({TZ})")
TZ_SINGLE: Final = re.compile(rf"(?i:\b(?:in|as|to|into|using)\s+)({TZ})")
TZ_ANY: Final = re.compile(TZ)
TZ_EXPLICIT: Final = re.compile(r"\(\s*((?i:utc|gmt)\s?[+\-−]\s?[0-9]{1,2}(?::?[0-9]{2})?)\s*\)")
TZ_TOKEN: Final = re.compile(r"([A-Za-z]+)\s?(?:([+\-−])\s?([0-9]{1,2})(?::?([0-9]{2}))?)?")
TZ_WORDS: Final = rx(r"\btime[-\s]?zones?\b|\btz\b|\bdaylight\s+saving|\bdst\b|\blocal\s+time\b")
HOURS: Final = rx(rf"({NUM})\s*-?\s*(?:hours?|hrs?|h)\b|\b(an)\s+hour\b")
MINUTES: Final = rx(rf"({NUM})\s*-?\s*(?:minutes?|mins?)\b")
DAYS: Final = rx(rf"({NUM})\s*-?\s*days?\b|\b(a)\s+day\b")
BACKWARDS: Final = rx(r"\b(?:back(?:wards?)?|earlier|behind|minus|down)\b")
TIME_SHIFT_KW: Final = rx(
    r"\bshift\w*|\boffset\w*|\bmov(?:e|es|ed|ing)\b|\bearlier\b|\blater\b|\bahead\b|\bbehind\b|\boff\s+by\b"
)
HOUR_FIELD: Final = rx(r"(?:^|_)hour(?:_of_day)?(?:$|_)|hour_?of_?day|(?:^|_)hod(?:$|_)")
DOW_FIELD: Final = rx(r"day_?of_?week|(?:^|_)(?:dow|weekday)(?:$|_)")
TIMESTAMP_FIELD: Final = rx(r"(?:^|_)(?:ts|timestamp|time|epoch|datetime|date)(?:$|_)|_at$")
MILLIS_FIELD: Final = rx(r"(?:^|_)(?:ms|millis|milliseconds?)(?:$|_)|millisecond")

# --- plan: shift, round, clip --------------------------------------------------------------------------------------
SHIFT_DOWN: Final = rx(
    r"\b(?:decrease[sd]?|decreasing|decrement\w*|reduced?|lower(?:ed)?|dropp?(?:ed|s)?|subtract\w*|minus|"
    rf"goes\s+down|went\s+down|shift\w*\s+(?:down|back(?:wards?)?))\s+(?:by\s+|of\s+)?({NUM})(?!\s*%)"
)
SHIFT_UP: Final = rx(
    r"\b(?:shift\w*(?:\s+up|\s+forward)?|offset|off|moved?|bump\w*(?:\s+up)?|increment\w*|increase[sd]?|increasing|"
    rf"raised?|add(?:s|ed|ing)?|plus|goes\s+up|went\s+up)\s+(?:by\s+|of\s+)?({NUM})(?!\s*%)"
)
SHIFT_FEE: Final = rx(
    rf"({NUM})\s+(?:\w+\s+)?(?:fees?|surcharges?|charges?|tax|offset|bias|markup|premium|bonus|tip|extra)\s+"
    r"(?:is\s+|are\s+|gets?\s+|being\s+)?(?:added|included|applied|tacked\s+on|charged|on\s+top)"
    rf"|\b(?:add(?:s|ed|ing)?|includ\w*|appl(?:y|ies|ied))\s+(?:an?\s+|the\s+)?(?:extra\s+)?({NUM})\s+"
    r"(?:\w+\s+)?(?:fees?|surcharges?|charges?|markup|premium|bonus|tip|extra|offset)\b"
)
_AMOUNT_UNIT: Final = r"(?:\s*(?:dollars?|usd|bucks|days?|units?|points?|hours?|cents?))?"
SHIFT_MORE: Final = rx(
    rf"({NUM})(?!\s*%){_AMOUNT_UNIT}\s+(?:is\s+|are\s+|gets?\s+|being\s+)?(?:higher|more|larger|greater|later|bigger|"
    r"extra|added|up)\b"
)
SHIFT_LESS: Final = rx(
    rf"({NUM})(?!\s*%){_AMOUNT_UNIT}\s+(?:is\s+|are\s+|gets?\s+|being\s+)?(?:lower|less|smaller|fewer|earlier|"
    r"subtracted|removed|deducted|taken\s+off|down)\b"
)
# "starts counting at 1 instead of 0", "1-24 instead of 0-23": the same values moved by the difference.
SHIFT_INSTEAD: Final = rx(
    rf"(?:at|from)\s+({NUM})\s+(?:instead\s+of|rather\s+than)\s+(?:at\s+|from\s+)?({NUM})"
    rf"|({NUM})\s*[-–]\s*({NUM})\s+(?:instead\s+of|rather\s+than)\s+({NUM})\s*[-–]\s*({NUM})"
)
SHIFT_PLUS: Final = rx(rf"(?:^|\s)\+\s*({NUM})(?!\s*%)")
SHIFT_MINUS: Final = rx(rf"(?:^|\s)[-−]\s+({NUM})(?!\s*%)")
SHIFT_SIGNED: Final = rx(rf"(?<!\w)({NUM})\s*(?:offset|shift|bias)\b")
ROUND_KW: Final = rx(
    r"\bround\w*|\btruncat\w*\s+to\s+(?:an?\s+)?(?:integers?|ints?|whole)|\bcast\s+(?:to|as)\s+(?:an?\s+)?int\w*"
    rf"|\bas\s+(?:whole\s+numbers|integers)\b|\bprecision\b|{NUM}\s*decim[ae]l(?:\s+places?)?s?\b|\bno\s+decimal"
)
TRUNCATE: Final = rx(r"\btruncat\w*|\bcast\b")
ROUND_UP_DOWN: Final = rx(
    r"\bround\w*\s+(?:up|down)\b|\bceil\w*|\bfloor(?:ed)?\s+to\s+(?:the\s+)?(?:whole|nearest|integer)|\btruncat\w*"
)
ROUND_DECIMALS: Final = rx(
    rf"({NUM})\s*(?:decim[ae]l(?:\s+(?:places?|digits?|points?))?s?|dp|digits?\s+after\s+the\s+(?:decimal\s+)?point)\b"
)
NEAREST: Final[dict[str, int]] = {
    "integer": 0, "int": 0, "whole number": 0, "number": 0, "unit": 0, "dollar": 0, "euro": 0, "cent": 2,
    "penny": 2, "tenth": 1, "hundredth": 2, "thousandth": 3, "hundred": -2, "thousand": -3, "million": -6,
}  # fmt: skip
ROUND_NEAREST: Final = rx(rf"\b(?:nearest|to\s+the)\s+(?:whole\s+)?({NUM}|{'|'.join(NEAREST)})s?\b")
_CLIP_VERB: Final = r"(?:clip\w*|clamp\w*|capp?\w*|limit\w*|bound\w*|restrict\w*|constrain\w*|truncat\w*|saturat\w*)"
CLIP_BOTH: Final = rx(
    rf"\b{_CLIP_VERB}\s+(?:\w+\s+){{0,3}}?(?:between|within|to|in|into)\s+(?:the\s+)?(?:range\s+)?[\[(]?\s*({NUM})\s*"
    rf"(?:,|\band\b|\bto\b|-|–|\.\.)\s*({NUM})"
)
CLIP_UPPER: Final = rx(
    r"\b(?:cap(?:ped|s)?|clip(?:ped|s)?|clamp(?:ed|s)?|truncat(?:e|ed|es)|limit(?:ed|s)?|ceiling(?:ed)?|"
    r"max(?:es|ed|ing)?\s+out|maxed|top(?:s|ped)?\s+out|peaks?|saturat\w*)\s+(?:[A-Za-z_]\w*\s+)?(?:at|to)\s+(?:an?\s+)?"
    rf"(?:max(?:imum)?\s+(?:of\s+)?|ceiling\s+of\s+)?({NUM})"
    r"|\b(?:at\s+most|no\s+more\s+than|not\s+(?:more|higher|greater)\s+than|(?:never|can'?t|cannot|can\s+not|won'?t)\s+"
    r"(?:be\s+|go(?:es)?\s+|gets?\s+|rises?\s+)?(?:above|over|exceeds?|more\s+than|higher\s+than|greater\s+than)|"
    rf"max(?:imum)?\s+(?:of\s+)?|upper\s+(?:bound|limit)\s+(?:of\s+|at\s+)?|ceiling\s+of|cap\s+of)\s*({NUM})"
)
CLIP_LOWER: Final = rx(
    rf"\b(?:floor(?:ed)?|bottom(?:ed)?\s+out)\s+(?:at|to)\s+({NUM})"
    r"|\b(?:at\s+least|no\s+less\s+than|not\s+(?:less|lower)\s+than|(?:never|can'?t|cannot|can\s+not|won'?t)\s+"
    r"(?:be\s+|go(?:es)?\s+|gets?\s+|drops?\s+|falls?\s+|dips?\s+)?(?:below|under|less\s+than|lower\s+than)|"
    rf"min(?:imum)?\s+(?:of\s+)?|lower\s+(?:bound|limit)\s+(?:of\s+|at\s+)?|floor\s+of)\s*({NUM})"
)
# "values above 2000 are set to 2000" is a clip; "set to 1500" is not (the rows in 1500-2000 keep their value).
_ABOVE: Final = r"(?:above|over|greater\s+than|more\s+than|exceeding|higher\s+than|bigger\s+than|larger\s+than)"
_BELOW: Final = r"(?:below|under|less\s+than|lower\s+than|smaller\s+than|beneath)"
_SET_TO: Final = (
    r"\s+(?:\w+\s+){0,3}?(?:(?:are\s+|is\s+|get\s+|gets\s+|will\s+be\s+)?(?:set|capped|clipped|"
    r"clamped|truncated|replaced|limited|reduced|lowered|raised|forced|changed|floored|rounded\s+(?:up|down))\s+"
    r"(?:down\s+|up\s+)?(?:to|at|with)|become|becomes|turn\s+into|→|->)\s+"
)
THRESHOLD_UPPER: Final = rx(rf"\b{_ABOVE}\s+({NUM}){_SET_TO}({NUM})")
THRESHOLD_LOWER: Final = rx(rf"\b{_BELOW}\s+({NUM}){_SET_TO}({NUM})")
NEGATIVES_ZEROED: Final = rx(
    r"\bnegatives?(?:\s+(?:values|amounts|numbers|ones))?\s+(?:are\s+|get\s+|gets\s+|become\s+|becomes\s+|will\s+be\s+)?"
    r"(?:(?:zeroed|clipped|clamped|floored)(?:\s+(?:out|to\s+(?:0|zero)|at\s+(?:0|zero)))?"
    r"|(?:set|replaced|capped|truncated|turned|forced|changed|mapped)\s+(?:in)?to\s+(?:0|zero)|(?:→|->)?\s*(?:0|zero))\b"
    r"|\b(?:never|can'?t|cannot|can\s+not|no\s+longer|won'?t)\s+(?:be\s+|go\s+|get\s+)?negative\b|\bno\s+(?:more\s+)?negatives\b"
    r"|\bnon-?negative\b"
)
ANY_NUMBER: Final = rx(NUM)
_PLUS_MINUS: Final = r"(?:±|\+/-|\+-)\s*[$€£]?\s*"  # "±5%", "+-$3"
NOISE_ABS: Final = rx(rf"{_PLUS_MINUS}[0-9]")
ZERO_FLOOR: Final = rx(
    r"\b(?:clip\w*|clamp\w*|truncat\w*|bound\w*)\s+(?:[A-Za-z_]\w*\s+)?(?:at|to)\s+(?:0|zero)\b"
    r"(?!\s*(?:-|–|and|to|,))"
)
CLIP_KW: Final = rx(r"\b(?:capp?(?:ed)?|clipp?(?:ed)?|clamp(?:ed)?|floor(?:ed)?|saturat\w*)\b")
BETWEEN: Final = rx(rf"\bbetween\s+({NUM})\s+and\s+({NUM})")

# --- plan: noise, sign, shuffle, constant ----------------------------------------------------------------------------
NOISE_KW: Final = rx(
    rf"\b(?:noise|noisy|jitter\w*|perturb\w*|measurement\s+errors?|random\s+errors?|fuzz\w*)\b|{_PLUS_MINUS}[0-9.]"
)
NOISE_PCT: Final = rx(
    rf"(?:±|\+/-|\+-)\s*({NUM})\s*(?:%|percent)|({NUM})\s*(?:%|percent)\s+(?:relative\s+)?(?:\w+\s+)?"
    r"(?:noise|jitter|errors?|perturbation)"
    r"|\b(?:nois\w*|jitter\w*|errors?|perturb\w*|fuzz\w*)\s+(?:\w+\s+){0,2}?(?:of|by|around|about|up\s+to|with|at)?"
    rf"\s*(?:about\s+|around\s+|roughly\s+|approximately\s+|~\s*)?(?:±|\+/-|\+-)?\s*({NUM})\s*(?:%|percent)"
)
PART_VALUES: Final = dict(half=0.5, third=1 / 3, quarter=0.25, fifth=0.2, tenth=0.1, twentieth=0.05, hundredth=0.01)
PART_WORD: Final = rx(rf"\b(?:{'|'.join(PART_VALUES)})s?\b")
NOISE_PART: Final = rx(
    r"\b(?:nois\w*|jitter\w*|errors?|perturb\w*|off)\s+(?:\w+\s+){0,2}?(?:of|by)?\s*(?:about\s+|around\s+|roughly\s+)?"
    rf"(?:a|one)\s+({'|'.join(PART_VALUES)})\b"
)
NOISE_STD: Final = rx(
    rf"\b(?:relative[_\s]std|std|standard\s+deviation|sigma|σ)\s*(?:of|=|:|is)?\s*[$€£]?\s*({NUM})\s*(%|percent)?"
)
SIGN_FLIP: Final = rx(
    r"\bsigns?\s+(?:is\s+|are\s+|gets?\s+)?(?:flip\w*|invert\w*|revers\w*|swap\w*)|\bflip\w*\s+(?:the\s+)?signs?\b"
    r"|\bnegat\w*|\bnegative\b|\bsign[-\s]flip\w*|\bopposite\s+sign|\bwrong\s+sign|\bsigns?\s+(?:is\s+)?wrong"
)
SHUFFLE: Final = rx(
    r"\bshuffl\w*|\bmisalign\w*|\bjoin\w*\s+(?:wrong\w*|incorrect\w*|on\s+the\s+wrong|badly)|\b(?:wrong|bad|broken)\s+"
    r"join|\bpermut\w*|\bscrambl\w*|\bmixed\s+up\b|\bout\s+of\s+order\b|\boff-by-one\s+join"
)
CONSTANT_VALUE: Final = rx(
    r"\b(?:set|fixed|hard-?coded|pinned|stuck|frozen|defaults?|defaulted|filled|replaced|overwritten|becomes?|equals?|"
    r"always|constant|default\s+value)\s+(?:(?:says|reads|shows|returns|reports|contains|holds|comes\s+(?:in\s+)?as|"
    r"is|equals)\s+)?(?:(?:to|at|with|as|of|equal\s+to|is|=)\s+)?(?:the\s+(?:value|constant|"
    rf"string|number)\s+)?({NUM}|{VAL})"
)
CONSTANT_IS: Final = rx(r"\b(?:is|are|becomes?)\s+(?:all\s+|always\s+|just\s+)?(zero|true|false|0)\b(?![.,]?[0-9%])")
CONSTANT_KW: Final = rx(
    r"\bconstant\b|\bstuck\b|\bfrozen\b|\bhard-?coded\b|\bdefault\w*|\ball\s+(?:the\s+)?values\s+set\b"
)
BOOLEANS: Final = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}

# --- plan: which rows, which seed -------------------------------------------------------------------------------------
FRACTION_PCT: Final = rx(
    rf"({NUM})\s*(?:%|percent|per\s*cent)\s+of\s+(?:the\s+|all\s+)?\w|\b(?:on|for|affecting|across|in)\s+({NUM})\s*"
    r"(?:%|percent)(?!\s*(?:nulls?|missing|noise))"
)
FRACTION_WORDS: Final = rx(r"\b(?:(half)|(?:a|one)\s+(quarter|third|fifth|tenth))\s+of\b")
FRACTION_WORD_VALUES: Final = dict(half=0.5, quarter=0.25, third=1 / 3, fifth=0.2, tenth=0.1)
FRACTION_ONE_IN: Final = rx(rf"\b(?:one|1)\s+(?:in|out\s+of)\s+(?:every\s+)?({NUM})")
FRACTION_EVERY_OTHER: Final = rx(r"\bevery\s+other\s+(?:row|record|value|transaction)")
BY_BEFORE: Final = rx(r"(?:\bby|±|\+/-|\+-)\s*$")
# Where the field's name was cut out, a preposition is left dangling before a verb ("values of get zeroed").
# Unsure wording: two readings offered, or none committed to.
HEDGE: Final = rx(
    r"\bor\s+(?:maybe|perhaps|possibly|probably|rather)\b|\bnot\s+(?:sure|certain)\b|\bunsure\b|\buncertain\b"
    r"|\b(?:don'?t|do\s+not|dunno)\s+know\b|\bno\s+idea\b|\bor\s+(?:was|is)\s+it\b|\bmight\s+be\s+\w+\s+or\b"
    r"|\beither\b[^.?!]{1,60}\bor\b|\?\s*or\b|\bdepending\s+on\b"
    rf"|{NUM}\s*(?:%|[a-z]+)?\s+or\s+{NUM}|\b(?:utc|gmt)\s?[+\-−]\s?[0-9]{{1,2}}\s+or\b"
    r"|\b(?:doubl|tripl|halv|quadrupl)\w*\s+or\s+\w+"
)
# Two changes joined in one request: each clause is read on its own, and two readings are refused.
CONJUNCTION: Final = rx(
    r"\s*(?:,\s*)?\b(?:and(?:\s+(?:also|then|is|are|gets?))*|also|plus|as\s+well\s+as|then)\b\s*|;\s*"
)
DANGLING: Final = rx(
    r"\b(?:of|in|for|on|from)\s+(?=(?:gets?|got|are|is|were|was|will|would|becomes?|turns?|goes|go|above|below|"
    r"over|under|that|which|being|can|may|might|should|must|has|have)\b)"
)
# The rows a clip names are the ones it changes: "values above 2000 are set to 2000" is not a subset of rows.
CLIP_CONDITION: Final = rx(
    rf"\b(?:values?|amounts?|numbers?|anything|everything|ones|those|entries)?\s*(?:that\s+are\s+|which\s+are\s+)?"
    rf"(?:above|over|below|under|greater\s+than|less\s+than|more\s+than|bigger\s+than|smaller\s+than|exceeding|"
    rf"higher\s+than|lower\s+than)\s+{NUM}|\bnegatives?(?:\s+(?:values|amounts|numbers|ones))?"
)
RANDOM_WORDS: Final = rx(r"\brandom\w*|\bat\s+random\b")
SEED: Final = rx(r"\bseed\s*(?:=|:|of|is)?\s*([0-9]{1,9})\b")
