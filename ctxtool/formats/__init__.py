"""Bytes <-> entries: JSONL framing, format detection, schemas."""

from ctxtool.formats.detect import classify, detect_format
from ctxtool.formats.jsonl import dumps_entry, iter_entries, iter_lines_out, write_entries

__all__ = ["classify", "detect_format", "dumps_entry", "iter_entries", "iter_lines_out",
           "write_entries"]
