"""The offline backend: deterministic, no network, no key. The default without an API key."""

from __future__ import annotations

from ctxtool.core.summary_offline import offline_summary
from ctxtool.llm.base import Progress, SummaryRequest, SummaryResult, no_progress


class OfflineSummarizer:
    """Extracts the nine sections from the transcript itself (see core/summary_offline.py)."""

    name = "offline"
    model: str | None = None

    def summarize(self, request: SummaryRequest, *, progress: Progress = no_progress) -> SummaryResult:
        return SummaryResult(text=offline_summary(request), backend=self.name, chunks=1)
