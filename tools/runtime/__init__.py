"""Where work runs: the experiment pool, catalog-call lanes, the pooled checkpoint saver, a job's second thread
(docs/runtime.md)."""
