"""Bundled example transcripts."""
