"""Phrase tables for category changes: renames, merges and new (unseen) categories. Read by ``categories.py``."""

from __future__ import annotations

from typing import Final

from agent.planning.phrases import QUOTED, VAL, rx

RENAME_KW: Final = rx(r"\b(?:renam\w*|relabel\w*|recod\w*|re-?mapp?\w*|mapped)\b")
_ARROW: Final = r"(?:→|->|=>|⇒|\bbecomes?\b)"
PAIR: Final = rx(
    rf"({VAL})\s*(?:(?:is|are|was|were|gets?|will\s+be|would\s+be)\s+)?(?:(?:renamed|changed|mapped|relabell?ed|"
    rf"recoded|sent|spelled|misspelled|mistyped|written|abbreviated|shortened|encoded|reported|logged)\s+)?"
    rf"({_ARROW}|\bto\b|\binto\b|\bas\b)\s*({VAL})"
)
INSTEAD: Final = rx(rf"({VAL})\s+(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing)\s+({VAL})")  # new first
FROM_TO: Final = rx(rf"\bfrom\s+({VAL})\s+(?:to|into|→|->)\s+({VAL})")  # on a category field: a rename
ARROW: Final = rx(_ARROW)
MERGE: Final = rx(
    rf"({VAL}(?:\s*(?:,|\band\b|&)\s*{VAL}){{1,20}})\s+(?:are\s+|get\s+|were\s+)?(?:both\s+|all\s+)?(?:merged|"
    rf"combined|collapsed|folded|renamed|mapped|relabell?ed|recoded)\s+(?:in)?to\s+({VAL})"
)
VAL_RX: Final = rx(VAL)
UNSEEN: Final = rx(
    r"\b(?:new|unseen|unknown|novel|never[-\s]seen|unexpected|additional|extra)\s+(?:\w+\s+)?(?:categor(?:y|ies)|"
    rf"values?|labels?|class(?:es)?|levels?|codes?)\b(?:\s+(?:called|named|like|such\s+as|=|:))?(?:\s*({VAL}))?"
)
UNSEEN_QUOTED: Final = rx(
    rf"\b(?:new|unseen|unknown|novel|never[-\s]seen)\s+({QUOTED})|({QUOTED})\s+(?:\w+\s+){{0,2}}?(?:shows?\s+up|"
    r"turns?\s+up|pops?\s+up|appears?|starts?\s+(?:appearing|showing\s+up)|arrives?)\b"
)
UNSEEN_CONTAINS: Final = rx(rf"\b(?:contain\w*|includ\w*|hav(?:e|ing))\s+({QUOTED})")
NEVER_SEEN: Final = rx(r"\bnever\s+(?:saw|seen)\b|\bunseen\b|\bnew\b|\bunknown\b")
RENAMED_BARE: Final = rx(rf"({VAL})\s+(?:is\s+|are\s+|gets?\s+)?(?:renamed|relabell?ed|recoded)\s+({VAL})")
SENT_AS: Final = rx(
    rf"({VAL})\s+(?:is\s+|are\s+|gets?\s+)?(?:sent|written|spelled|spelt|coded|encoded|reported|logged|recorded|"
    rf"stored)\s+as\s+({VAL})"
)
UNSEEN_BEFORE: Final = rx(
    rf"({QUOTED})\s+(?:is\s+|gets\s+)?(?:added|introduced|appears|shows\s+up)?\s*(?:as\s+)?(?:an?\s+)?"
    r"(?:new|unseen)\s+(?:categor|value|label)"
)
