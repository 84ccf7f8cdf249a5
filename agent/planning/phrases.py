"""Phrase tables for the deterministic router and planner (``agent/planning/deterministic.py``).

Kept apart from the logic so that teaching the offline planner a new phrasing is one line here. The patterns run
on arbitrary user text, so every repetition that could overlap another is bounded and numbers are atomic groups.
"""

from __future__ import annotations

import math
import re
from typing import Final

_I: Final = re.IGNORECASE


def rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


RENAME_TARGET: Final = rx(r"\brenam\w*\s+(?:\w+\s+)?(?:to|as|into)\s+([`'\"]?[A-Za-z_][\w.]*[`'\"]?)")


_ONES: Final[dict[str, float]] = dict(
    zero=0, one=1, two=2, three=3, four=4, five=5, six=6, seven=7, eight=8, nine=9, ten=10, eleven=11, twelve=12,
    thirteen=13, fourteen=14, fifteen=15, sixteen=16, seventeen=17, eighteen=18, nineteen=19,
)  # fmt: skip
_TENS: Final[dict[str, float]] = dict(
    twenty=20, thirty=30, forty=40, fourty=40, fifty=50, sixty=60, seventy=70, eighty=80, ninety=90
)  # fmt: skip
_SCALES: Final[dict[str, float]] = dict(hundred=100, thousand=1000, million=1e6, milion=1e6, billion=1e9)
# "dozen" counts like "hundred" ("two dozen"), not as a number of its own
_WORD_NUMBERS: Final[dict[str, float]] = {**_ONES, **_TENS, **_SCALES}
_SMALL: Final = rf"(?:(?:{'|'.join(_TENS)})(?:[\s-](?:{'|'.join(w for w in _ONES if w != 'zero')}))?|{'|'.join(_ONES)})"
_SCALE: Final = "|".join(_SCALES)
# "a hundred", "two hundred", "twenty-five", "ten thousand", "a dozen": words read as one number. "a" alone is not
# one; the scale words need a count before them or stand alone ("hundred" as in "by hundred").
WORD_NUM: Final = (
    rf"\b(?:(?:an?|{_SMALL})\s+(?:(?:{_SCALE}|dozens?)\b)(?:\s+(?:{_SCALE})\b)?"
    rf"|{_SMALL}(?:\s+(?:{_SCALE})\b)?|(?:{_SCALE})\b)(?:\s+and\s+{_SMALL}\b)?(?![\w-])"
)
# A number as people type it: 3, +3, -0.5, .5, 1e6, 1,000, $1,000, 10k, "three", "a hundred". Atomic, so a lookahead
# after it can never make it give back digits ("10%" is not read as "1" followed by "0%").
NUM: Final = (
    r"(?<![\w.,])(?>[+\-−]?\$?(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)?(?:\.[0-9]+)?(?<=[0-9])"
    r"(?:e[+\-]?[0-9]{1,3})?(?:k(?!\w)|\s?(?:mil(?:l?ions?)?|milions?|mn)\b)?"
    rf"|{WORD_NUM})"
)
QUOTED: Final = (
    r"(?:(?<!\w)'[^'\n]{1,80}'(?!\w)|\"[^\"\n]{1,80}\""  # 'single' (not an apostrophe) and "double"
    r"|“[^”\n]{1,80}”|‘[^’\n]{1,80}’|`[^`\n]{1,80}`)"  # typographic quotes and `backticks`
)
# A category value: quoted, or one bare token. The lookbehind starts tokens only at their first character, so a
# long run of letters is scanned once rather than once per position.
VAL: Final = rf"(?:{QUOTED}|(?<![\w&/+.\-])[\w&/+]+(?:[.\-][\w&/+]+){{0,8}})"
_QUOTES: Final = {"'": "'", '"': '"', "“": "”", "‘": "’", "`": "`"}


def to_number(raw: str) -> float | None:
    """The value of a NUM match; None when it is not a finite number."""
    text = " ".join(raw.strip().lower().replace("−", "-").replace("$", "").replace(",", "").split())
    sign = -1.0 if text.startswith("-") else 1.0
    text = text.lstrip("+-")
    if text and text[0].isalpha():
        return None if (value := _words_value(text)) is None else sign * value
    factor = 1.0
    for suffix, scale in (
        ("millions", 1e6),
        ("million", 1e6),
        ("milions", 1e6),
        ("milion", 1e6),
        ("mil", 1e6),
        ("mn", 1e6),
        ("k", 1e3),
    ):
        if text.endswith(suffix) and text[: -len(suffix)].strip()[-1:].isdigit():
            text, factor = text[: -len(suffix)].strip(), scale
            break
    try:
        value = sign * float(text) * factor
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _words_value(text: str) -> float | None:
    """ "a hundred" 100, "twenty-five" 25, "two hundred thousand" 200000; None for anything else."""
    total, current = 0.0, 0.0
    for word in text.replace("-", " ").split():
        if word == "and":
            continue
        if word in ("a", "an"):
            current = 1.0
        elif word in _ONES or word in _TENS:
            current += _ONES.get(word, 0.0) + _TENS.get(word, 0.0)
        elif word in ("hundred", "dozen"):
            current = (current or 1.0) * (100 if word == "hundred" else 12)
        elif word in _SCALES:
            total += (current or 1.0) * _SCALES[word]
            current = 0.0
        else:
            return None
    return total + current


def is_quoted(raw: str) -> bool:
    return len(raw) >= 2 and _QUOTES.get(raw[0]) == raw[-1]


def unquote(raw: str) -> str:
    raw = raw.strip()
    return raw[1:-1] if is_quoted(raw) else raw


# --- subjects -------------------------------------------------------------------------------------------------
_PART: Final = r"[A-Za-z_]\w*(?:-\w+)*"
DOTTED: Final = rf"(?<![\w.\-]){_PART}(?:\.{_PART})+"
DOTTED_RX: Final = rx(DOTTED)
FIELD_IN_DATASET: Final = rx(
    rf"(?<![\w.\-])({_PART})\s+(?:(?:field|column)\s+)?(?:in|of|from)\s+(?:the\s+)?"
    rf"(?:(?:table|dataset|view|(?:kafka\s+)?(?:topic|stream)|feature\s+(?:table|view))\s+)?({DOTTED})"
)
DATASET_SENDS_FIELD: Final = rx(
    rf"({DOTTED})\s+(?:sends|emits|publishes|writes|produces|has|carries|delivers|reports|ships)\s+(?:the\s+|its\s+)?"
    rf"(?:(?:field|column)\s+)?({_PART})"
)
# Names that end like a model's: in "with amount in cents, does fraud_detector still work?" the change is to amount.
# "does review_time_estimator use hour?": the model asked about comes first, the field it may read second.
DOES_USE: Final = rx(
    rf"\b(?:does|do|is|are)\s+({_PART})\s+(?:even\s+|still\s+|actually\s+|really\s+)?(?:use|read|need|using|reading)s?\s+"
    rf"(?:the\s+)?(?:(?:column|field|feature)\s+)?({DOTTED}|{_PART})"
)
MODELISH: Final = rx(r"(?:detector|model|scorer|classifier|predictor|regressor|ranker|forecaster|_v[0-9]+)$")
WORD_BEFORE: Final = re.compile(rf"(?<![\w.\-'])({_PART})\s*")
# Words between a field and its change: "amount is being sent in cents", "amount arriving in cents".
LINKING: Final = frozenset(
    """is are was were be been being gets get got will would to sent sending send arrives arriving arrive comes coming
    come reported stored written delivered shipped switches switched starts started suddenly now in as the all every
    values value field column""".split()
)
BACKTICKED: Final = re.compile(r"`([^`\n]{1,200})`")
SNAKE: Final = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w])")
# Zero-width after the keyword, so "shift on hour" can try "on hour" after "shift on" failed.
AFTER_KEYWORD: Final = rx(
    r"\b(?:on|of|for|in|to|uses?|using|owns|consumes?|reads?|maintains|about|if|when|round(?:ing)?|clip(?:ping)?|capping|"
    r"every|each|all|attaches|where\s+is|switch(?:es)?|sends?|ships?|emits?|test|try|evaluate|simulate|assess|"
    r"scal(?:e|ing)|shift(?:ing)?|negating|shuffl(?:e|ing)|renam(?:e|ing))\s+"
    rf"(?=(?:the\s+)?(?:(?:field|column|model|dataset|table|feature)\s+)?({_PART}))"
)
STOPWORDS: Final = frozenset(
    """a an the this that these those it its them they their there here my our your me you us we i he she is are
    was were be been being am do does did has have had will would shall should can could may might must if then
    than else when what which who whom whose how why where all any some every each none no not nothing both either
    values value rows row records record data entries entry nulls null missing empty cents cent dollars dollar
    thousands millions percent percentage instead whole integers integer half quarter third models model field
    fields column columns table tables dataset datasets schema production prod change changes case example owner
    owners ownership dependents dependencies consumers users downstream upstream lineage impact status verdict
    verdicts result results report latest last recent provenance to of in on for from by with at as into about
    and or but so just also only more most less many other another same such new old unseen unknown category
    categories type types units unit hours minutes seconds days sent send switch switches renamed rename rounded
    rounding shift shifted noise jitter shuffle shuffled constant default negative sign time zone timezone utc
    everything anything something use uses used using please thanks hi hello hey help appears gets comes added
    introduced shows called named like whole nearest decimals decimal place places appear appearing arrive arrives
    occur occurs show start starts begin begins emerge emerges up down out off over back away around through again
    now too very still yet ever never suddenly later soon we someone somebody one ones pops turns goes went come
    tagged blocked blocking passed failing team teams maintains reads ship shipping send sending sends know see
    check wonder want need make happen happens work works deploy release push source system upstream vendor api
    service feed kafka topic stream job pipeline arriving arrives coming plan planning next sprint wrong bad join
    joins attaches radius blast effect effects utc gmt cet cest est edt pst pdt cst cdt mst mdt ist jst bst eet wet
    aest reading pulling loading taking""".split()
) | frozenset(_WORD_NUMBERS)

# --- route ----------------------------------------------------------------------------------------------------
HELP_ONLY: Final = rx(
    r"\W*(?:(?:hi|hello|hey|hiya|yo|howdy|greetings|good\s+(?:morning|afternoon|evening))(?:\s+there)?|help(?:\s+me)?"
    r"|what\s+(?:can|do)\s+you\s+do|who\s+are\s+you|what\s+are\s+you|how\s+does\s+(?:this|it)\s+work|usage|menu"
    r"|commands|start|thanks?(?:\s+you)?)\W*"
)
HOW_TO: Final = rx(
    r"\bhow\s+(?:do|can|should)\s+i\s+(?:ask|use|start|run|request)\b|\bnew\s+here\b"
    r"|\b(?:syntax|format)\s+(?:for|of)\s+(?:asking|a\s+question|questions|requests?)\b"
)
HELP_LOOSE: Final = rx(
    r"\b(?:what\s+(?:can|do)\s+you\s+do|how\s+do\s+i\s+use|what\s+are\s+you\s+for|help)\b"
    r"|\bhow\s+does\s+(?:this|it|the)\s+(?:\w+\s+)?work\b|\bwhat\s+is\s+(?:provenance|this)\s+(?:for|about)\b"
    r"|\bwhat\s+(?:kinds?|sorts?|types?)\s+of\s+(?:changes|questions|things)\b|\bwhat\s+(?:questions|changes)\s+can\b"
)
VERDICT_WORDS: Final = re.compile(r"\b(?:PASS|BLOCK|WARNING|INCOMPLETE|BLOCKED)\b")
PAST: Final = rx(
    r"\b(?:was|were|did|had|last|latest|previous|previously|yesterday|earlier|already|tested|ran|got|been)\b"
)
"""Words that put a verdict in the past: "last verdict was PASS" asks what was found, not what a change would do."""
ASSESS_STRONG: Final = rx(
    r"\bwhat\s+if\b|\bwhat\s+(?:happens|would\s+happen|will\s+happen|breaks|would\s+break|will\s+break|changes|"
    r"is\s+the\s+(?:impact|effect))\b[^?!]{0,200}?\bif\b"
    r"|\b(?:break|breaks|hurt|hurts|degrade|degrades|affect|affected)\b[^?!]{0,200}?\bif\b"
    r"|\bis\s+it\s+safe\s+to\b|\bcan\s+we\s+safely\b"
    r"|\bif\b[^?!]{0,200}?\b(?:degrade|break|hurt|affect|harm)\w*"
    # a change asked about by its verdict: "what would the verdict be if …", "would it BLOCK if …"
    r"|\b(?:verdict|result|outcome|answer)s?\s+(?:\w+\s+){0,2}?(?:be|is|look)\b[^?!]{0,40}?\bif\b"
    r"|\b(?:would|will|does|do|could)\s+(?:\w+\s+){0,3}?(?:pass|block|warn|fail|break)\w*\b[^?!]{0,200}?\bif\b"
    r"|^\W*(?:(?:please|pls|can\s+you|could\s+you|let'?s|let\s+us|i\s+want\s+to|i'?d\s+like\s+to)\s+)?"
    r"(?:simulate|assess|test|evaluate|try)\b"
)
TOLERANCE: Final = rx(
    r"\btolerance\s+(?:map|scan)s?\b|\bhow\s+(?:much|far)\s+(?:\w+\s+){0,3}?can\s+(?:\S+\s+){0,4}?(?:take|tolerate|"
    r"move|change|drift|shift|handle|absorb|survive|stand|cope\s+with)\b"
    r"|\bwhat\s+(?:%|percent\w*|share|level|fraction|rate)\s+of\s+\w+\s+(?:\w+\s+){0,4}?(?:is\s+|are\s+)?"
    r"(?:tolerabl\w*|acceptable|ok|okay|safe|fine)\b|\b(?:scan|map)\s+(?:the\s+)?tolerance\b|\btolerances?\s+(?:of|for)\b"
    r"|\bhow\s+(?:robust|sensitive|resilient|fragile|tolerant)\b"
    r"|\bhow\s+many\s+(?:nulls?|missing\s+values?|empty\s+values?)\s+(?:can|could|will|would)\b"
    # the threshold asked for: "at what null rate does X start hurting", "max factor that still passes", "sweep"
    r"|\b(?:how\s+(?:many|much|coarse|far|big|large|small|often)|what\s+(?:fraction|share|portion|%|percent\w*)"
    r"|max(?:imum)?\s+(?:%|percent\w*|share|fraction|rate))(?!\w)[^?]{0,80}?\b(?:can|could)\b[^?]{0,80}?"
    r"\b(?:before|without|tolerat\w*|handle|take|absorb|survive)\b"
    r"|\bmax(?:imum)?\s+(?:%|(?:percent\w*|share|fraction|rate)\b)[^?]{0,60}?\b(?:tolerat\w*|handle|take|survive)\b"
    r"|\bsafe\s+(?:range|limits?|bounds?|thresholds?)\b|\bsweep\b|\bbreaking\s+point\b"
    r"|\bhow\s+(?:big|large|much|many|far|coarse|small)\s+(?:an?\s+)?(?:\S+\s+){0,5}?(?:is|are|would\s+be|stays?)\s+"
    r"(?:still\s+)?(?:ok|okay|fine|safe|acceptable|tolerable|allowed)\b"
    r"|\b(?:what|how\s+(?:much|many|big|far))\b[^?]{0,80}?\b(?:would|will|could)\s+still\s+(?:be\s+)?(?:an?\s+)?"
    r"(?:pass\w*|ok|okay|fine|safe|acceptable)\b"
    r"|\bat\s+what\s+(?:\w+\s+){0,2}?(?:rate|share|level|factor|point|percent\w*|size|amount\s+of)\b"
    r"|\b(?:max|maximum|min|minimum|largest|biggest|smallest|highest)\s+(?:\w+\s+){0,2}?(?:factor|scal\w*|shift|"
    r"offset|noise|null\s+rates?|nulls?|share)\b[^?]{0,80}?\b(?:still|pass\w*|ok|okay|safe|before|without)\b"
)
TOLERANCE_OF: Final = rx(r"\btolerances?\s+(?:map|scan)s?\b")
VERDICT: Final = rx(
    r"\bwhat\s+did\s+(?:\w+\s+){0,4}?(?:test|run|check|assessment)s?\b[^?]{0,60}?\b(?:come\s+back|show|say|return|find|give)\w*"
    r"|\bverdicts?\b|\bwhat\s+(?:was|were)\s+the\s+(?:outcomes?|results?|verdicts?)\b|\bimpact\s+doc(?:ument)?s?\b|\bprovenance\s+(?:status|results?|reports?)\b"
    r"|\b(?:latest|last|most\s+recent|recent|current|previous)\s+(?:\w+\s+){0,3}?(?:status|results?|assessments?|"
    r"reports?|evidence|runs?|decisions?|outcomes?|checks?)\b"
    r"|\b(?:did|has|does)\s+(?:\S+\s+){0,6}?(?:pass|passed|fail|failed)\b|\b(?:status|results?)\s+(?:of|for)\b"
    r"|\b(?:get|got|gets|was|been|is|were)\s+(?:\w+\s+)?(?:blocked|flagged|approved|warned)\b|\btagged\b"
    r"|\b(?:currently|now)\s+(?:marked|tagged|blocked|labell?ed)\b|\blast\s+(?:time|check|run|assessment)\b"
)
OWNERS: Final = rx(
    r"\bwho\s+(?:owns|is\s+(?:the\s+)?owner|are\s+the\s+owners|is\s+responsible\s+for|maintains|looks\s+after)\b"
    r"|\bowner(?:s|ship)?\b|\bowned\s+by\b|\bwho\s+(?:should\s+i|do\s+i)\s+(?:ask|contact|talk\s+to)\b"
    r"|\b(?:which|what)\s+(?:team|group|squad|org\w*)\b|\bwhose\b|\bwho\s+(?:manages|runs|is\s+in\s+charge\s+of|is\s+accountable\s+for|built)\b"
    r"|\bmaintainers?\b|\bresponsible\s+(?:team|person|people)\b|\bon[-\s]call\b|\bpoint\s+of\s+contact\b"
    r"|\bloop\s+in\b|\bwho\s+(?:do\s+i|should\s+i|to|must\s+i)\s+(?:need\s+to\s+|have\s+to\s+)?"
    r"(?:loop|notify|tell|inform|ping|warn|alert|cc|involve)\b"
    r"|\bwho(?:'s|\s+is)\s+(?:responsible|accountable|in\s+charge)\b|\bsign[-\s]?offs?\b|\boncall\b"
    r"|\bcontacts?\s+(?:for|of|on)\b|\bwhoever\s+(?:owns|maintains|runs|manages|built|looks\s+after)\b"
    r"|\bwho\s+(?:i|we)\s+(?:should|need\s+to|must|have\s+to|can|ought\s+to)\s+(?:contact|ask|talk\s+to|reach|ping|notify)\b|\bwho\s+(?:approves|signs|has\s+to\s+(?:approve|sign))\b"
)
CHANGE_HINT: Final = rx(
    r"\b(?:cents?|dollars?|thousands|millions|kilo\w*|grams?|centimet\w*|milli\w*|percent(?:age)?s?|nulls?|"
    r"missing|renam\w*|unseen|shift\w*|time-?\s?zones?|utc|round\w*|clip\w*|capped|floored|clamp\w*|noise|noisy|"
    r"jitter\w*|negat\w*|shuffl\w*|misalign\w*|constant|scaled?|multipl\w*|divided|doubled?|halved?|tripled?|"
    r"instead\s+of|rather\s+than|switch\w*|becomes?|increased?|decreased?|off\s+by|truncat\w*|pennies|weeks|"
    r"local\s+time|(?:in|as|into)\s+(?:days|hours|minutes|seconds|years|months|percent|utc|gmt|cet|cest|est|edt|pst|"
    r"pdt|cst|cdt|mst|mdt|ist|jst|bst|eet|aest))\b|%|→|->|(?:^|\s)[*×/+]\s*[0-9]"
    r"|(?<!\w)x\s?[0-9]|\btoo\s+(?:small|big|large|high|low)\b|\bscrambl\w*|\bmerg\w*\s+(?:'[^']*'|\S+)\s+(?:into|with)\b"
    r"|\bencrypt\w*|\bhash(?:ed|ing)\b|\bmask(?:ed|ing)\b|\btokeni[sz]\w*|\bfloor\w*|\b(?:be|is|are|becomes?|will\s+be)\s+(?:false|true|null|zero|empty|blank)\b|(?:^|\s)=\s*\S"
    r"|\brelabel\w*|\bhard-?cod\w*|\b(?:set|defaults?|defaulting|pinned|stuck)\s+(?:to|at)\b"
    r"|\b(?:goes|go|went|moves?|jumps?)\s+(?:up|down)\b|\b(?:up|down|higher|lower)\s+by\b"
    r"|\bcap(?:s|ping)?\s+(?:\S+\s+){0,2}?(?:at|to)\b|\b(?:would|will)\s+be\s+0\b|\bcounted\s+(?:twice|double|\w+\s+times)\b"
    r"|\b(?:days?|hours?|weeks?|times|fold)\s+(?:higher|lower|bigger|smaller|larger|more|less|off|ahead|behind)\b"
    r"|\btimes\s+(?:a\s+)?(?:hundred|thousand|ten)\b|\bnew\s+(?:\w+\s+)?(?:value|category|code)\b"
    r"|\bfold\w*\s+(?:'[^']*'|\S+)\s+into\b|\bmod(?:ulo)?\s+[0-9]|\b(?:upper|lower)-?cas\w*"
)
DEPENDENTS: Final = rx(
    r"\bwho\s+reads?\b|\bwhere\s+is\s+(?:\S+\s+)?used\b|\bcomes?\s+from\b|\b(?:models?|features?)\s+using\b|\bwhat\s+reads\b"
    r"|\bfed\s+by\b|\b(?:is|are)\s+\S+\s+(?:even\s+|still\s+|actually\s+)?(?:reading|using|consuming)\b|\b(?:gets?|being)\s+used\b|\bused\s+anywhere\b|\bmodels?\s+(?:touching|reading|consuming|that\s+(?:use|read|touch))\b|\b(?:wat|wich|whcih)\s+models?\b|\bworry\s+about\b|\bwho\s+would\s+(?:notice|care)\b|\breads?\s+from\b|\breaders?\b|\bwho\s+(?:is\s+)?using\b|\bfed\s+(?:in)?to\b|\bfeeds?\b|"
    r"\bdepend\w*|\bdeps\b|\breading\s+from\b|\bdoes\s+(?:\S+\s+)?(?:even\s+|still\s+|actually\s+)?(?:use|read|need)\b|\bdownstream\b|\bimpact\w*|\bconsum\w*|\blineage\b|\bused\s+by\b|\brel(?:y|ies)\s+on\b"
    r"|\b(?:who|what)\s+uses\b|\bblast\s+radius\b|\baffected\b|\b(?:readers?|users?)\s+of\b"
    r"|\b(?:anything|anyone|something|what)\s+(?:\w+\s+){0,3}?(?:using|uses|use|reading|reads|read)\b"
    r"|\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:models?|dashboards?|jobs?|pipelines?|features?|assets?|services?|"
    r"things)\b[^?]{0,200}?\b(?:use|uses|using|read|reads|need|needs|touch|touches|rel(?:y|ies)\s+on)\b"
)
TRIGGER_PREFIX: Final = rx(
    r"^\W*(?:(?:so|ok|okay|hey|please|pls|and|now)\W+){0,3}(?:what\s+(?:happens|would\s+happen|will\s+happen|breaks|"
    r"would\s+break|will\s+break|changes|is\s+the\s+(?:impact|effect))(?:\s+to\s+\S+)?\s+if|what\s+if"
    r"|what\s+is\s+the\s+(?:impact|effect)\s+of|is\s+it\s+safe\s+to|can\s+we\s+safely"
    r"|(?:(?:can|could)\s+you\s+|let'?s\s+|i\s+want\s+to\s+)?"
    r"(?:simulate|assess|test|evaluate|try))\b[\s,:;.!?-]*"
)
LEAD_RESIDUE: Final = rx(
    r"^(?:(?:the|its)\s+|(?:field|column)\s+|(?:is|are|was|were|gets|get|got|will\s+be|would\s+be|"
    r"were\s+to\s+be|is\s+being|are\s+being)\s+)"
)
TRAIL_RESIDUE: Final = rx(r"[\s?!.,;:]*(?:\b(?:in|on|of|for|from|at|the|field|column|table|dataset))?[\s?!.,;:]*$")
QUOTED_RX: Final = rx(QUOTED)
IF_CLAUSE: Final = rx(r"\b(?:if|when|once)\b")
EMPTY_QUOTES: Final = re.compile(r"(['\"`“‘])\s*(['\"`”’])")
