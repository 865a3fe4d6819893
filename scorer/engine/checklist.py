"""A checklist (of `scorer audit` and `scorer verify`): named checks that pass, warn or fail, as text lines and JSON.

Only a failed check makes the checklist fail (exit 1); a warning passes, with something worth a look.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

STATES = {"pass": "ok  ", "warn": "warn", "fail": "FAIL"}  # a state and its text mark


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool  # not failed: passed, or passed with a warning
    detail: str  # what was found; for a failed check it ends with the fix, for a warning with the advice
    warn: bool = False

    @property
    def state(self) -> str:
        return "fail" if not self.ok else "warn" if self.warn else "pass"


def failed(name: str, found: str, fix: str) -> Check:
    return Check(name, False, f"{found} — fix: {fix}")


def warned(name: str, found: str, advice: str) -> Check:
    return Check(name, True, f"{found} — consider: {advice}", warn=True)


def checklist_dict(checks: list[Check]) -> dict:
    return {"checks": [{**asdict(check), "state": check.state} for check in checks], "ok": all(check.ok for check in checks),
            "warnings": sum(check.state == "warn" for check in checks)}


def render(checks: list[Check], title: str, fmt: str = "text") -> str:
    """JSON {"checks": [{name, state, ok, warn, detail}], "ok", "warnings"}, or one line per check under a title."""
    if fmt == "json":
        return json.dumps(checklist_dict(checks), indent=2)
    width = max((len(check.name) for check in checks), default=0)
    lines = [title] + [f"  {STATES[check.state]}  {check.name:<{width}}  {check.detail}" for check in checks]
    counts = {state: sum(check.state == state for check in checks) for state in STATES}
    lines.append(f"{counts['pass'] + counts['warn']} of {len(checks)} checks passed"
                 + (f" ({counts['warn']} with a warning)" if counts["warn"] else "") + (f"; {counts['fail']} failed" if counts["fail"] else ""))
    return "\n".join(lines)
