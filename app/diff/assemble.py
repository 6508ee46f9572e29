"""A unified diff put together from a code host's per-file patches (GitHub's PR files,
GitLab's MR and compare diffs), for when the host gives no whole diff. Pure."""

from __future__ import annotations

MODES = {"added": "new", "removed": "deleted"}


def file_diff(old: str, new: str, status: str, patch: str | None) -> str:
    """One file's part of a unified diff: ``status`` is added | removed | renamed | other;
    ``patch`` the hunks (None, or empty for a file that only changed name: no hunks;
    None for a binary file)."""
    header = f"diff --git a/{old} b/{new}\n"
    if status in MODES:  # without it, a deletion's ``+++ /dev/null`` reads as no diff
        header += f"{MODES[status]} file mode 100644\n"
    if status == "renamed" and old != new:
        header += f"rename from {old}\nrename to {new}\n"
    if patch is None:
        return header + f"Binary files a/{old} and b/{new} differ\n"
    if not patch:
        return header
    source = "/dev/null" if status == "added" else f"a/{old}"
    target = "/dev/null" if status == "removed" else f"b/{new}"
    return f"{header}--- {source}\n+++ {target}\n{patch.rstrip(chr(10))}\n"
