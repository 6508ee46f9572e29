"""One finding of ``reviewbot doctor``: what was checked, whether it is fine, what was
seen, and what to do about it. Code-host checks (``app/github/checks.py``) and the
workflow's own (``app/flows/doctor.py``) return it alike."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    server_only: bool = False  # only the App's server needs it, not the CLI

    def as_json(self) -> dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        scope = " (server)" if self.server_only else ""
        said = f"{'ok  ' if self.ok else 'FAIL'} {self.name}{scope}: {self.detail}"
        return said + (f" -> {self.fix}" if self.fix and not self.ok else "")
