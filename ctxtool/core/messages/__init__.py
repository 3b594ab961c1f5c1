"""The messages of a transcript as a model sees them, whatever the agent: content blocks and
tool pairs (``blocks``), the context left after compactions (``filter_compacted``) and plain
Messages/Chat API messages (``convert``). The lowest floor of ``core``."""
