"""The only code that touches the filesystem besides the command's own input/output streams."""
