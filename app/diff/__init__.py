"""Unified diffs: parsing, and mapping hunks to the functions they change."""
