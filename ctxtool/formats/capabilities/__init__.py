"""The format adapter's interface, one module per capability: each holds a base class with that
capability's defaults, and :class:`ctxtool.formats.adapter.FormatAdapter` composes them
(``reading`` under all, ``compaction`` under ``sizing``; ``clearing``, ``summarizing``,
``converting``, ``validating``, ``sessions``). This file imports nothing."""
