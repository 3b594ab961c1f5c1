"""``vacuum``: take out what a session holds twice or never reads again, keeping it in the store
first, with a recipe that rebuilds the original byte for byte (:mod:`.recipe`).

What may go is the adapter's answer (:mod:`ctxtool.formats.vacuum`); :mod:`.lines` applies it
to a session file.
"""
