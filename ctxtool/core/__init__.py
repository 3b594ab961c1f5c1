"""Pure transforms over iterables of entries: no I/O, no printing, no click/tqdm/anthropic."""
