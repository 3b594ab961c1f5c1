"""JSON Schemas for the input formats and the reports of ctxtool (shipped as package data)."""
