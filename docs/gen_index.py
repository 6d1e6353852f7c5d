"""Write docs/index.md, the documentation site's home, from README.md.

    python docs/gen_index.py          # rewrite the page
    python docs/gen_index.py --check  # exit 1 if the committed page differs

The README is the one source: the page is it, with its links made the site's (the
README links docs/X.md from the repository's root; the site links X.md) and links to the
repository's own files (CHANGELOG.md, LICENSE ...), which the site does not hold, shown
as their names. tests/unit/test_docs_build.py fails when the page is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "index.md"
NOTE = "<!-- Generated from README.md by docs/gen_index.py: edit README.md, not this page. -->"


def _link(m: re.Match) -> str:
    text, target = m.group(1), m.group(2)
    if target.startswith(("http://", "https://", "#")):
        return m.group(0)
    if target.startswith("docs/"):
        return f"[{text}]({target.removeprefix('docs/')})"
    # A file of the repository the site does not hold: its name, not a link.
    return f"`{target}`" if text.strip("`") == target else f"{text} (`{target}`)"


def render(readme: str) -> str:
    """The site's home page from the README's text."""
    title, _, rest = readme.partition("\n")
    body = re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", _link, rest)
    body = re.sub(r"!\[([^\]]*)\]\(docs/([^)]+)\)", r"![\1](\2)", body)
    return f"{title}\n\n{NOTE}\n{body}"


def main() -> int:
    wanted = render((ROOT / "README.md").read_text())
    if "--check" in sys.argv[1:]:
        if PAGE.read_text() != wanted:
            print("docs/index.md is out of date: run python docs/gen_index.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
