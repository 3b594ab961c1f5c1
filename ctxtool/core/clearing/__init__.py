"""Making room without summarizing: choosing tool results (``twopass``), replacing them with
placeholders (``replace``), ``persist``, ``snip``, ``microcompact``, their boundary lines
(``boundary``) and ``restore``. Imports ``core.sizing`` and ``core.messages`` below it."""
