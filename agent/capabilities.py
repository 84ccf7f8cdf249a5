"""User-facing fixed texts (the LLM prompts live in agent/prompts.py). Each line is one line as shown: the chat keeps
line breaks, so prose is never wrapped here (tests/agent/test_capabilities.py)."""

CAPABILITIES = "\n".join(
    [
        "I can answer, from DataHub:",
        '  - what depends on a field: "What depends on payments.transactions.amount?"',
        '  - who owns a dataset or model: "Who owns payments.public.transactions?"',
        '  - the latest verdict and impact document of a model: "What is the latest verdict for fraud_detector?"',
        "and I can test a proposed change to a field against every production model that uses it:",
        '  "What happens if payments.transactions.amount is sent in cents instead of dollars?"',
        "Changes I can test: unit changes (scale), shifts and time-zone shifts, N% nulls, renamed or new categories, "
        "rounding, clipping, noise, sign flips, shuffling, constant values; a dropped or renamed column is judged by "
        "the policy's structural rule, as `provenance check` judges it.",
    ]
)
