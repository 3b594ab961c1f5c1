"""The ``ctxtool`` command (also ``python -m ctxtool``).

``ctxtool statusline`` runs on every message of a Claude Code session: it is dispatched here,
before click (and the group of every command) is imported; whatever its own small parser leaves
(``--help``, a usage error) falls through to the click group like every other command.
"""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "statusline":
        import signal

        if hasattr(signal, "SIGPIPE"):  # `ctxtool statusline | head` ends quietly
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        from ctxtool.statusline import main as statusline

        statusline(sys.argv[2:])  # exits unless click is to handle the arguments
    from ctxtool.cli import main as cli

    cli()


if __name__ == "__main__":
    main()
