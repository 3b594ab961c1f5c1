"""ctxtool's cache folder: ``$CTXTOOL_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctxtool``, else
``~/.cache/ctxtool``; ``CTXTOOL_CACHE_DIR=off`` (or ``0``, ``none``) turns every cache off.
Standard library only: the statusline's fast path finds its cache here too."""

from __future__ import annotations

import os
from collections.abc import Mapping


def cache_dir(env: Mapping[str, str]) -> str | None:
    """The folder ctxtool's caches live in, or None when caching is turned off."""
    configured = (env.get("CTXTOOL_CACHE_DIR") or "").strip()
    if configured.lower() in ("off", "0", "none"):
        return None
    if configured:
        return os.path.expanduser(configured)
    base = (env.get("XDG_CACHE_HOME") or "").strip()
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(base or os.path.join(home, ".cache"), "ctxtool")


__all__ = ["cache_dir"]
