"""scripts/bench.py's check of the file system store timings are taken on: ext4 without a journal
(where creating files right after deleting many costs kernel time per file) gets a warning, other
file systems none. Hand-written mountinfo lines and a /sys tree under tmp_path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402

VDA, LOOP0, DM0, ZRAM = os.makedev(254, 0), os.makedev(7, 0), os.makedev(253, 0), os.makedev(252, 0)
MOUNTINFO = "\n".join([
    "22 27 0:21 / /proc rw,relatime - proc proc rw",
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resuid=65534",
    "42 27 7:0 / /tmp/fj rw,relatime shared:7 - ext4 /dev/loop0 rw",
    "43 27 253:0 / /srv/my\\040data rw,relatime shared:9 master:2 - ext4 /dev/mapper/vg-data rw",
    "44 27 252:0 / /var/tmp rw,relatime - xfs /dev/zram0 rw,attr2",
    "45 27 0:40 / /run/user tmpfs rw - tmpfs tmpfs rw,size=100k",
]) + "\n"


def sys_tree(root: Path, journals: dict[str, str], links: dict[str, str]) -> Path:
    """/sys with /sys/fs/ext4/NAME/journal_task and /sys/dev/block/MAJ:MIN links to NAME."""
    for name, task in journals.items():
        folder = root / "fs" / "ext4" / name
        folder.mkdir(parents=True)
        (folder / "journal_task").write_text(task + "\n")
    (root / "dev" / "block").mkdir(parents=True)
    for device, name in links.items():
        (root / "dev" / "block" / device).symlink_to(f"../../devices/virtual/block/{name}")
    return root


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    return sys_tree(tmp_path / "sys", {"vda": "<none>", "loop0": "14670", "dm-0": "<none>"},
                    {"254:0": "vda", "7:0": "loop0", "253:0": "dm-0", "252:0": "zram0"})


def test_the_mount_is_found_by_its_device() -> None:
    assert bench.mount_of(VDA, MOUNTINFO) == bench.Mount("254:0", "/", "ext4", "/dev/vda")
    # optional fields (shared:, master:) before the "-"; an escaped space in the mount point
    assert bench.mount_of(DM0, MOUNTINFO) == bench.Mount("253:0", "/srv/my data", "ext4",
                                                         "/dev/mapper/vg-data")
    assert bench.mount_of(os.makedev(8, 1), MOUNTINFO) is None  # no line names it
    assert bench.mount_of(VDA, "") is None


def test_ext4_without_a_journal_gets_the_warning(sysfs: Path) -> None:
    warning = bench.no_journal_warning("/tmp", VDA, MOUNTINFO, sysfs)
    assert warning is not None
    assert "/tmp" in warning and "/dev/vda" in warning and "without a journal" in warning
    assert "--tmp" in warning and "wait 5 minutes" in warning  # what to do about it


def test_ext4_with_a_journal_gets_none(sysfs: Path) -> None:
    assert bench.no_journal_warning("/tmp/fj", LOOP0, MOUNTINFO, sysfs) is None


def test_a_device_mapper_source_is_read_under_its_kernel_name(sysfs: Path) -> None:
    mount = bench.mount_of(DM0, MOUNTINFO)
    assert mount is not None and bench.block_device_name(mount, sysfs) == "dm-0"
    warning = bench.no_journal_warning("/srv/my data/x", DM0, MOUNTINFO, sysfs)
    assert warning is not None and "/dev/mapper/vg-data" in warning


def test_without_a_sys_dev_link_the_source_names_the_device(tmp_path: Path) -> None:
    bare = sys_tree(tmp_path / "sys", {"vda": "<none>"}, {})
    assert bench.no_journal_warning("/tmp", VDA, MOUNTINFO, bare) is not None


def test_other_file_systems_and_unknown_devices_get_none(sysfs: Path, tmp_path: Path) -> None:
    assert bench.no_journal_warning("/var/tmp", ZRAM, MOUNTINFO, sysfs) is None  # xfs
    assert bench.no_journal_warning("/run/user", os.makedev(0, 40), MOUNTINFO, sysfs) is None
    assert bench.no_journal_warning("/x", os.makedev(8, 1), MOUNTINFO, sysfs) is None
    # ext4, but /sys says nothing about it (an older kernel, another /sys)
    assert bench.no_journal_warning("/tmp", VDA, MOUNTINFO, tmp_path / "empty") is None


def test_only_store_writing_commands_ask() -> None:
    writes = {name for name, command in bench.COMMANDS.items() if command.writes_store}
    assert {"persist", "snip", "snip-o", "microcompact", "microcompact-o"} <= writes
    assert not writes & {"estimate", "validate", "restore", "filter-compacted"}
