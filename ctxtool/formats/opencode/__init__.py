"""OpenCode: its export documents, its session view, compaction, prune marks, truncation and
overflow rule, and the adapter that gives transforms all of it."""
