"""A resumed campaign's resumptions, in words (report, terminal and Markdown alike)."""

from __future__ import annotations

import time


def resumed_text(resume: dict) -> str:
    """One resumption (``schedule["resumes"]``, recorded by campaign/resume.py)."""
    at = resume.get("at")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at)) if at else "?"
    settle = (
        ", after a settling round on the re-made targets" if resume.get("settling_again") else ""
    )
    return (
        f"{when}: resumed ({resume.get('previous_status')}) from round "
        f"{resume.get('from_round')}{settle}; {resume.get('superseded_runs', 0)} earlier "
        f"run(s) of that round or cut short kept as 'superseded', not counted; every "
        f"target provisioned again (a new mkfs); "
        f"{resume.get('spent_minutes', 0):g} min spent before count toward the budget"
    )
