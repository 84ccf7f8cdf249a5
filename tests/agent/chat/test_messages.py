"""Plain text in Markdown, answers (an unreachable catalog said plainly), the starters."""

from __future__ import annotations

from agent.chat.messages import DEMO_QUESTION, STARTERS, answer_markdown, plain, planned_experiment_markdown
from agent.state import AgentState
from tools.evidence.schema import StageFailure


def test_plain_text_keeps_urns_lines_and_indentation() -> None:
    text = "Owners: urn:li:corpuser:alice\n  - path: a -> b [IDENTITY]"
    assert plain(text) == "Owners\\: urn\\:li\\:corpuser\\:alice  \n\u00a0\u00a0\\- path\\: a \\-\\> b \\[IDENTITY\\]"


def test_answer_says_plainly_when_the_catalog_is_unreachable() -> None:
    failure = StageFailure(
        stage="catalog_qa", message="CatalogError: could not start the DataHub MCP server", service="catalog"
    )
    answer = answer_markdown(AgentState(answer="Stage catalog_qa failed: ...", failures=[failure]))
    assert answer.startswith("**The DataHub catalog could not be reached.**")
    assert answer_markdown(AgentState(answer="Owners of x", failures=[])) == "Owners of x"
    refused = StageFailure(stage="plan", message="cannot model 'make it blue'", kind="input")
    assert "could not be reached" not in answer_markdown(AgentState(answer="I could not run this", failures=[refused]))


def test_starters_cover_the_demo_and_the_three_catalog_questions() -> None:
    messages = [message for _, message in STARTERS]
    assert messages[0] == DEMO_QUESTION
    assert {"owners", "dependents", "latest verdict"} <= {
        "owners" if "Who owns" in m else "dependents" if "depends on" in m else "latest verdict" for m in messages[1:]
    }


def test_the_planned_experiment_keeps_its_words_with_a_bold_label() -> None:
    sentence = "Planned experiment: scale a.b ×100 on 100% of rows (seed 0) — cents. Assumed: no share: 100% of rows."
    assert planned_experiment_markdown(sentence) == (
        "**Planned experiment:** scale a\\.b ×100 on 100% of rows \\(seed 0\\) — cents\\. Assumed\\: no share\\: "
        "100% of rows\\."
    )
