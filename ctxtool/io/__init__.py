"""How bytes get in and out of a command safely: the plumbing every command in ``ctxtool.cli``
shares, and no transform needs.

Inputs and outputs (``streams``: files or stdin, stdout or -o FILE; ``spool``: inputs read twice;
``live``: --in-place on sessions an agent may still be writing; ``database``: OpenCode's database
as an input and an --in-place target; ``vacuum_files``: vacuuming one file and undoing it), finding
and naming sessions (``session_files``, ``tail_read``, ``opencode_sessions``, ``selectors``),
what goes to people on stderr (``messages``, ``progress``, ``terminal``), and the option bundles
and per-file runs the commands share (``options``, ``clearing``, ``batch``). It may import click
and tqdm, so nothing in ``core``, ``formats``, ``storage`` or ``llm`` imports it; it imports
nothing from ``ctxtool.cli``. This file imports no module: the group loads what a command uses.
"""

ARGS_KEY = "ctxtool.args"  # ctx.meta: the command's arguments as typed (set by the group's
# resolve_command, read by options for --backup)
