"""ctxtool's own store for ``cleanup``: ``$CTXTOOL_STORE/<session or default>/tool-results/``.

The store's session folders that hold only what ctxtool writes (``marker.is_ours``) each join
their session's unit, whichever agent it is ("default" stands alone). Anything else someone put
in the store (a loose file, a folder of photos, a file of theirs in a session folder) is never
touched; nor is a symlink (never followed: a session's keeps that session whole).
"""

from __future__ import annotations

from ctxtool.storage import marker
from ctxtool.storage.cleanup_source import STORE_AGENT, CleanupSource, OnError
from ctxtool.storage.cleanup_tree import STORE, Part, Tree, add_part, entries


class StoreSource(CleanupSource):
    agent = STORE_AGENT
    categories = (STORE,)

    def scan(self, tree: Tree, on_error: OnError) -> None:
        for entry in entries(self.folder):
            if not marker.SESSION_NAME.fullmatch(entry.name) or not (
                    entry.is_symlink() or marker.is_ours(entry.path)):
                continue
            unit = (tree.unit(entry.name, entry.name, STORE_AGENT) if entry.name != "default"
                    else tree.unit(f"store/{entry.name}", None, STORE_AGENT))
            add_part(unit, Part(self.folder, entry.name, "store", STORE), entry)
