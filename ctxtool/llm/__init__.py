"""Summarizer and token-counter backends: offline (default) and Anthropic (opt-in, lazy)."""
