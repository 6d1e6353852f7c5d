"""Crash testing: the recording layer under a loop image, the crash states built from
what it recorded, and the checks run on each state (issue 37)."""
