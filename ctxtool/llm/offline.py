"""The offline backend: deterministic, no network, no key. The default without an API key."""

from __future__ import annotations

from ctxtool.core.summary_offline import OfflineRun, offline_summary
from ctxtool.llm.base import Progress, SummaryRequest, SummaryResult, Turn, no_progress


class OfflineSummarizer:
    """Extracts the nine sections from the transcript itself (see core/summary_offline.py).
    Also a :class:`ctxtool.llm.base.StreamingSummarizer`: :meth:`begin` reads turns one by one."""

    name = "offline"
    model: str | None = None

    def summarize(self, request: SummaryRequest, *, progress: Progress = no_progress) -> SummaryResult:
        return SummaryResult(text=offline_summary(request), backend=self.name, chunks=1)

    def begin(self) -> OfflineSink:
        return OfflineSink(self.name)


class OfflineSink:
    """:class:`ctxtool.llm.base.TurnSink` over :class:`ctxtool.core.summary_offline.OfflineRun`."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.run = OfflineRun()

    def add(self, turn: Turn) -> None:
        self.run.add(turn)

    def compaction(self) -> None:
        self.run.compaction()

    def finish(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(text=self.run.finish(request), backend=self.backend, chunks=1)
