"""Readers for category changes: a rename or merge of values ('grocery' → 'groceries', "GB is sent as UK") and a
new category the models never saw. ``deterministic.plan`` tries them among the other readers."""

from __future__ import annotations

from agent.planning import category_phrases as cp
from agent.planning import change_phrases as c
from agent.planning import phrases as p
from agent.planning.change_phrases import CAN_TEST, STRUCTURAL_REFUSAL
from agent.planning.detectors import UNSEEN, Outcome, Proposal, kind
from agent.schemas import FieldContext


def remap(text: str, field: FieldContext) -> Outcome:
    renaming = cp.RENAME_KW.search(text) is not None
    categorical = kind(field) == "categorical"
    name = field.field.rsplit(".", 1)[-1].lower()
    mapping: dict[str, str] = {}
    for m in cp.MERGE.finditer(text):
        for key in cp.VAL_RX.findall(m.group(1)):
            if key.lower() != "and" and any(ch.isalnum() for ch in key):
                mapping.setdefault(p.unquote(key), p.unquote(m.group(2)))
    for m in cp.PAIR.finditer(text):
        key, value = p.unquote(m.group(1)), p.unquote(m.group(3))
        if key.lower() == name:  # "amount renamed to amount_usd" renames the column, not its values
            if renaming:
                return STRUCTURAL_REFUSAL + CAN_TEST
            continue
        quoted = p.is_quoted(m.group(1)) and p.is_quoted(m.group(3))
        plain = key.lower() not in p.STOPWORDS and value.lower() not in p.STOPWORDS
        # Unquoted "a → b" is a rename only on a category field: on a number field it is a unit or a ratio.
        arrow = cp.ARROW.fullmatch(m.group(2)) is not None
        if key != value and (quoted or (plain and (renaming or (categorical and arrow)))):
            mapping.setdefault(key, value)
    for regex in (cp.RENAMED_BARE, cp.SENT_AS) if categorical else ():  # "GB is sent as UK", "x is renamed y"
        for m in regex.finditer(text):
            key, value = p.unquote(m.group(1)), p.unquote(m.group(2))
            if key != value and key.lower() not in p.STOPWORDS and value.lower() not in p.STOPWORDS:
                mapping.setdefault(key, value)
    for m in cp.INSTEAD.finditer(text):  # "writes 'groceries' instead of 'grocery'": the new value comes first
        new, old = p.unquote(m.group(1)), p.unquote(m.group(2))
        quoted = p.is_quoted(m.group(1)) and p.is_quoted(m.group(2))
        if new != old and (
            quoted or (categorical and old.lower() not in p.STOPWORDS and new.lower() not in p.STOPWORDS)
        ):
            mapping.setdefault(old, new)
    for m in cp.FROM_TO.finditer(text) if categorical else ():
        key, value = p.unquote(m.group(1)), p.unquote(m.group(2))
        if key != value and key.lower() not in p.STOPWORDS and value.lower() not in p.STOPWORDS:
            mapping.setdefault(key, value)
    quoted_values = [p.unquote(q) for q in p.QUOTED_RX.findall(text)]
    if not mapping and renaming and len(quoted_values) == 2 and quoted_values[0] != quoted_values[1]:
        mapping[quoted_values[0]] = quoted_values[1]  # "'a' in the … field is renamed to 'b'"
    if not mapping:
        if renaming and not c.STRUCTURAL.search(text):  # a column rename is refused by structural() instead
            return f"Say which category is renamed to what, e.g. \"'grocery' renamed to 'groceries'\". {CAN_TEST}"
        return None
    pairs = ", ".join(f"{k!r} → {v!r}" for k, v in list(mapping.items())[:3]) + (", …" if len(mapping) > 3 else "")
    return Proposal("category_remap", {"mapping": mapping}, f"renames {pairs} in {field.field}")


def unseen(text: str, field: FieldContext) -> Outcome:
    if m := cp.UNSEEN_BEFORE.search(text):
        value = p.unquote(m.group(1))
    elif m := cp.UNSEEN_QUOTED.search(text):  # "a new 'crypto' shows up"
        value = p.unquote(m.group(1) or m.group(2))
    elif (m := cp.UNSEEN_CONTAINS.search(text)) and cp.NEVER_SEEN.search(text):
        value = p.unquote(m.group(1))
    elif m := cp.UNSEEN.search(text):
        raw = m.group(1) or ""
        value = p.unquote(raw) if p.is_quoted(raw) or raw.lower() not in p.STOPWORDS else UNSEEN
    else:
        return None
    value = value or UNSEEN
    return Proposal("unseen_category", {"value": value}, f"replaces {field.field} with the unseen category {value!r}")
