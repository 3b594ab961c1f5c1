"""How big a context is: token estimates and thresholds (``tokens``), the one-pass meter
anchored on recorded usage (``meter``), the ``estimate`` report and what builds on it (status
line, timeline, session lists, tail reading). Imports only ``core.messages`` below it."""
