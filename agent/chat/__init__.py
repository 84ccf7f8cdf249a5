"""What the chat shows, kept apart from Chainlit so it can be tested without a browser.

`chainlit_app.py` only wires UI events; everything it renders comes from here:
- `auth`: the single local login and the secret Chainlit signs login tokens with;
- `datalayer`: the chat history database (the schema Chainlit's SQLAlchemy data layer expects);
- `chainlit_names`: Chainlit's lazy names made to raise AttributeError (else a skops model cannot load here);
- `narration`: one step per graph node, with what the node worked on and what it produced;
- `messages`: the starters, plain-text Markdown, answers and the unreachable-catalog message;
- `cards`: the verdict card, the run's files, the approval question and the publication result;
- `replay`: the `/replay` command (past conversations, and the replay of one).
"""
