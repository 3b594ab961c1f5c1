"""OpenCode's own switches for its compaction ("auto") and its prune ("prune"), as the release
that recorded a session reads them.

* ``OPENCODE_DISABLE_AUTOCOMPACT`` / ``OPENCODE_DISABLE_PRUNE`` force ``compaction.auto`` /
  ``compaction.prune`` to false (every release).
* ``compaction.auto`` is on unless the config sets it to false (every release).
* ``compaction.prune`` changed meaning: up to 1.3.2 OpenCode pruned unless the config set it to
  false (``if (config.compaction?.prune === false) return``); 1.14.34 and the pinned 1.18.33
  prune only when it is true (``if (!cfg.compaction?.prune) return``; the schema says "default:
  false"). The releases between are not on the registry; upstream's dev tree was already
  opt-in on 2026-04-24 (anomalyco/opencode#24108, answered "disabled by default
  intentionally"), when 1.4 was current, so 1.4 is taken as the first opt-in release. A
  session without a version gets the newest rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the first release that prunes only when ``compaction.prune`` is true (see the docstring)
PRUNE_OPT_IN_SINCE = (1, 4)

FLAGS = {"auto": "OPENCODE_DISABLE_AUTOCOMPACT", "prune": "OPENCODE_DISABLE_PRUNE"}


def prunes_by_default(version: Any) -> bool:
    """True when the release that recorded the session (its ``version``) prunes with
    ``compaction.prune`` unset; unknown versions get the newest rule (it does not)."""
    if not isinstance(version, str):
        return False
    numbers = [int(n) for n in version.split("-")[0].split(".")[:2] if n.isdigit()]
    return len(numbers) == 2 and tuple(numbers) < PRUNE_OPT_IN_SINCE


def switched_off(kind: str, *, setting: bool | None, version: Any,
                 env: Mapping[str, str]) -> str | None:
    """Why OpenCode does not run ``kind`` ("auto", "prune") for a session recorded by
    ``version`` whose config's ``compaction.<kind>`` is ``setting`` (None: unset), named for
    the notice; None when it runs."""
    flag = FLAGS[kind]
    if env.get(flag, "").strip().lower() in ("1", "true"):
        return f"{flag} is set"
    if setting is False:
        return f"OpenCode's config sets compaction.{kind}: false"
    if kind == "prune" and setting is None and not prunes_by_default(version):
        shown = version if isinstance(version, str) else "of unknown version"
        return (f"OpenCode {shown} prunes only with compaction.prune: true "
                "(unset in its config)")
    return None
