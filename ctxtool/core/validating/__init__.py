"""Checking a transcript the way its agent would read it (``validate``). Imports only
``core.messages``."""
