"""One module per ML task, each registering an `MLTask` (tools/task_registry.py, which loads them by name)."""
