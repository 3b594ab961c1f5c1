"""Claude Code: its transcript lines (uuid/parentUuid chain, compact and microcompact
boundaries) and the adapter that gives transforms all of it."""
