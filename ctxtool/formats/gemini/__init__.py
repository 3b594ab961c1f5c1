"""Gemini CLI: its session files replayed as Gemini replays them (:mod:`.records`), what it
sends on resume (:mod:`.history`), its parts as blocks (:mod:`.parts`) and the adapter that
gives transforms all of it (:mod:`.adapter`)."""
