"""A checklist (of `scorer audit` and `scorer verify`): named checks that pass or fail, as text lines and JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str  # what was found; for a failed check it ends with the fix


def failed(name: str, found: str, fix: str) -> Check:
    return Check(name, False, f"{found} — fix: {fix}")


def checklist_dict(checks: list[Check]) -> dict:
    return {"checks": [asdict(check) for check in checks], "ok": all(check.ok for check in checks)}


def render(checks: list[Check], title: str, fmt: str = "text") -> str:
    """JSON {"checks": [{name, ok, detail}], "ok"}, or one line per check under a title."""
    if fmt == "json":
        return json.dumps(checklist_dict(checks), indent=2)
    width = max((len(check.name) for check in checks), default=0)
    lines = [title] + [f"  {'ok  ' if check.ok else 'FAIL'}  {check.name:<{width}}  {check.detail}" for check in checks]
    bad = sum(not check.ok for check in checks)
    lines.append(f"{len(checks) - bad} of {len(checks)} checks passed" + (f"; {bad} failed" if bad else ""))
    return "\n".join(lines)
