"""The timeline's HTML and SVG, rendered by a real browser (headless Chromium): not blank, and
every compaction of a real corpus session drawn.

Chromium comes from Debian's packages: when it is missing and the tests run as root with apt-get
(CI's machine), the fixture installs it; elsewhere the test is skipped saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxtool.cli.estimate_timeline import COLORS
from tests.conftest import CORPUS, run_ctxtool
from tests.sessions.helpers import full_estimate
from tests.sessions.png import count_near, read_png

REAL = CORPUS / "entireio__cli" / "b8__659b3a4dd4__0__full.jsonl"  # two compactions
NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _find() -> str | None:
    return next((path for name in NAMES if (path := shutil.which(name))), None)


def _install() -> str:
    """apt-get install chromium (as root only); the reason when that cannot be done."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return "chromium is not installed (and not root with apt-get to install it)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "install", "-y", "-qq", "chromium"],
                 ["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{' '.join(argv)}: {exc}"
        if argv[1] == "install" and proc.returncode == 0 and _find():
            return ""
    return f"apt-get install chromium failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = _find()
    if found is None:
        why = _install()
        found = _find()
        if found is None:
            pytest.skip(why)
    return found


def screenshot(browser: str, page: Path, out: Path, profile: Path) -> tuple:
    proc = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}",
                           f"--screenshot={out}", "--window-size=960,560", page.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return read_png(out.read_bytes())


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


@pytest.mark.skipif(not REAL.is_file(), reason=f"corpus not found at {CORPUS}")
@pytest.mark.parametrize("suffix", [".html", ".svg"])
def test_a_browser_draws_the_timeline_of_a_real_session(chromium: str, tmp_path: Path,
                                                        suffix: str) -> None:
    page = tmp_path / f"timeline{suffix}"
    proc = run_ctxtool("estimate", str(REAL), "--timeline", str(page))
    assert proc.returncode == 0, proc.stderr
    assert page.read_text().count('class="mark-compact"') == full_estimate(
        REAL).compact_boundaries == 2
    png = screenshot(chromium, page, tmp_path / "shot.png", tmp_path / "profile")
    width, height, _, _ = png
    assert (width, height) == (960, 560)
    white = count_near(png, (255, 255, 255), tolerance=4)
    assert white < width * height * 0.97  # not blank
    assert count_near(png, _rgb(COLORS["curve"])) > 300  # the context curve
    assert count_near(png, _rgb(COLORS["fill"]), tolerance=6) > 5_000  # the area under it
    # two compaction lines, 2 px wide, across the plot's height
    assert count_near(png, _rgb(COLORS["compact"]), tolerance=30) > 2 * 2 * 150


def test_the_png_reader_sees_a_blank_page(chromium: str, tmp_path: Path) -> None:
    """The control: the same checks fail on an empty page."""
    page = tmp_path / "blank.html"
    page.write_text("<!doctype html><html><body style='background:#fff'></body></html>")
    png = screenshot(chromium, page, tmp_path / "blank.png", tmp_path / "profile")
    assert count_near(png, (255, 255, 255), tolerance=4) == png[0] * png[1]
    assert count_near(png, _rgb(COLORS["curve"])) == 0
