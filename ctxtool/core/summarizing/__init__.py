"""Summarizing a transcript's head: the request built from it (``request``), the prompt, the
model and offline summarizers, and the compaction written back (``summarize``, ``output``). The
top floor of ``core``: imports ``clearing``, ``sizing`` and ``messages``."""
