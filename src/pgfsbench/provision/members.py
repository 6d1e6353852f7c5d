"""The member devices of a multi-device target, as a ledger entry records them.

A loop member is recorded by its image, not its /dev/loopN name: after a crash
the number may belong to someone else's loop by the time ``cleanup`` runs, while
the image is ours. A named device is the user's own path, allowed by
``--allow-format``.
"""

from __future__ import annotations

from pgfsbench import proc


def member_record(device: str, image: str | None) -> dict:
    return {"device": device, "image": image}


def current_device(member: dict) -> str | None:
    """The block device a recorded member is now: a loop member's image looked up again
    (None: no longer attached, nothing of it is left to release)."""
    image = member.get("image")
    if not image:
        return member["device"]
    result = proc.run(["losetup", "-j", image, "-O", "NAME", "-n"], check=False)
    attached = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return attached[0] if attached else None
