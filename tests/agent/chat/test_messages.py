"""Plain text in Markdown, answers (an unreachable catalog said plainly), the starters."""

from __future__ import annotations

from agent.chat.messages import (
    DEMO_QUESTION,
    STARTERS,
    answer_markdown,
    plain,
    planned_experiment_markdown,
    text_markdown,
)
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


def _html(markdown: str) -> str:
    from markdown_it import MarkdownIt  # CommonMark, as the chat's renderer reads it

    return MarkdownIt("commonmark").render(markdown)


def test_an_answer_shows_its_items_as_a_list_and_commands_as_code() -> None:
    """The help listed its items as literal "- " lines and showed `provenance check` with its backticks."""
    from agent.capabilities import CAPABILITIES

    html = _html(text_markdown("I could not map that to something I can do. " + CAPABILITIES))
    assert html.count("<li>") == 3 and "<code>provenance check</code>" in html
    assert "`" not in html and "\\-" not in html
    changes = next(block for block in html.split("<br />") if "Changes I can test:" in block)
    assert changes.endswith("as <code>provenance check</code> judges it.</p>\n")  # one line: no break inside it


def test_an_answers_urns_and_punctuation_survive_and_its_line_breaks_stay() -> None:
    text = "Verdict: BLOCK\n  - fraud_detector BLOCK: flip rate 78.8% >= 10%\nEvidence: /x/run (1)/report.md"
    html = _html(text_markdown(text))
    assert "<li>fraud_detector BLOCK: flip rate 78.8% &gt;= 10%</li>" in html
    assert "<p>Evidence: /x/run (1)/report.md</p>" in html and "<p>Verdict: BLOCK</p>" in html
    two = _html(text_markdown("Owners of urn:li:dataset:(urn:li:dataPlatform:postgres,a.b,PROD):\nalice"))
    assert "urn:li:dataset:(urn:li:dataPlatform:postgres,a.b,PROD):<br />\nalice" in two
