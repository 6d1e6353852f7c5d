"""The fleet report: the store's listing, and each target's headline metric on every host.

    fleet_report.py --store URL --results DIR HOST...
    fleet_report.py --store URL --results DIR --preview HOST...
    fleet_report.py --store URL --check-store

DIR/HOST is the campaign the playbook collected from HOST (fleet/tasks/collect.yml).
Writes DIR/fleet-list.txt (`pgfsbench list --store URL`) and DIR/fleet-report.md, and
prints the report. Everything comes from pgfsbench's own JSON (`list --format json`,
`export --format json`), so this script computes nothing the project does not.
``--preview`` (the playbook's --check) writes nothing: it says which hosts' campaigns
are collected and where the report would go. ``--check-store`` connects to the store
(setting it up, as the first import would, if the database is empty) and exits: 0, or
2 with pgfsbench's one-line reason. The store URL goes to pgfsbench in its environment
(PGFSBENCH_STORE), not its arguments, and no message shows it.

Across hosts each target's headline figure is shown side by side (its geometric mean,
as `pgfsbench show` gives it), then the comparison exactly as `pgfsbench compare FIRST
OTHER...` makes it: the same target paired across campaigns, the first host the
baseline, each other host a contender, each pair's ratio with its interval and mark
(unpaired: campaigns on different hosts share no rounds). No figure is computed here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

PGFSBENCH = [sys.executable, "-m", "pgfsbench"]


def pgfsbench(*args: str, store: str | None = None) -> str:
    # Wide: the listing's lines are not wrapped to a terminal's 80 columns. The store
    # in the environment: a password in its URL is not in any process's arguments.
    env = {**os.environ, "COLUMNS": "200", **({"PGFSBENCH_STORE": store} if store else {})}
    done = subprocess.run([*PGFSBENCH, *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"pgfsbench {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def headline_cells(export: dict) -> dict[tuple[str, str, str], dict]:
    """(measurement, metric, target) -> the comparison's cell (centre, CI, n) and unit."""
    cells = {}
    for row in export["comparison"]["rows"]:
        if not row["headline"]:
            continue
        for target, cell in row["cells"].items():
            measurement = f"{row['workload']} {row['label']}".strip()
            cells[(measurement, row["metric"], target)] = {
                **cell,
                "unit": row["unit"],
                "direction": row["direction"],
            }
    return cells


def shown(cell: dict | None) -> str:
    if not cell or cell.get("centre") is None:
        return "—"
    text = f"{cell['centre']:.4g} {cell['unit']}"
    if cell.get("ci95"):
        low, high = cell["ci95"]
        text += f" [{low:.4g}, {high:.4g}]"
    return text + f" (n={cell['n']})"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table whose every row has the header's cells (a row of another
    width, or a delimiter row that differs, and renderers show no table at all)."""

    def line(cells: list[str]) -> str:
        assert len(cells) == len(header), (header, cells)
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(r) for r in rows)]


def headline_table(cells: dict[str, dict], compared: list[str]) -> list[str]:
    """Each host's headline cells side by side (the ratios are compare's, below)."""
    keys = sorted({k for per_host in cells.values() for k in per_host})
    if not keys:
        return ["No headline metric to compare (no collected campaign)."]
    base = compared[0]
    rows = []
    for key in keys:
        row = [cells[h].get(key) for h in compared]
        rows.append([*key, *(shown(c) for c in row)])
    ratios = f"; each host against {base} in the comparison below" if len(compared) > 1 else ""
    return [
        f"Geometric mean [95% CI] over the rounds of each host's campaign{ratios}.",
        "",
        *table(["measurement", "metric", "target", *compared], rows),
    ]


def report(store: str, root: Path, hosts: list[str], listing: str) -> str:
    listed = json.loads(pgfsbench("list", "--format", "json", store=store))
    in_store = {c["results_dir"]: c for c in listed}
    hosts_rows: list[list[str]] = []
    cells: dict[str, dict] = {}
    for host in hosts:
        directory = root / host
        if not (directory / "results.db").is_file():
            hosts_rows.append([host, "no campaign collected", "", "", "", ""])
            continue
        export = json.loads(pgfsbench("export", str(directory), "--format", "json"))
        campaign, stored = export["campaign"], in_store.get(str(directory))
        hosts_rows.append(
            [
                host,
                campaign["id"],
                campaign["status"],
                campaign["plan"],
                campaign["host"].get("hostname", "?"),
                stored["uuid"] if stored else "NO: import it",
            ]
        )
        cells[host] = headline_cells(export)
    compared = [h for h in hosts if h in cells]
    lines = [
        "# Fleet report",
        "",
        f"Results store: {len(listed)} campaign(s). Collected under {root}.",
        "",
        "## Hosts",
        "",
        *table(
            ["host", "campaign", "status", "plan", "hostname it reported", "UUID in the store"],
            hosts_rows,
        ),
        "",
        "## Headline metrics across hosts",
        "",
        *headline_table(cells, compared),
    ]
    if len(compared) > 1:
        lines += [
            "",
            f"## Compared with {compared[0]} (`pgfsbench compare`)",
            "",
            *compare(root, compared),
        ]
    lines += ["", "## The store's listing", "", "```", listing.rstrip(), "```", ""]
    return "\n".join(lines)


def compare(root: Path, hosts: list[str]) -> list[str]:
    """`compare` of the collected campaigns as Markdown; a refusal (e.g. hosts that ran
    different PostgreSQL versions or target recipes) is reported, not a comparison."""
    done = subprocess.run(
        [*PGFSBENCH, "compare", *(str(root / h) for h in hosts), "--format", "markdown"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    if done.returncode != 0:
        return [f"Not compared: {done.stderr.strip()}"]
    return done.stdout.rstrip().splitlines()


def preview(root: Path, hosts: list[str]) -> str:
    """What the report would hold now, from what is collected under ``root``; reads the
    collected campaigns (`pgfsbench list DIR`), writes nothing."""
    lines = [f"fleet report (--check: nothing written) for {len(hosts)} host(s):"]
    for host in hosts:
        directory = root / host
        if (directory / "results.db").is_file():
            [listed] = json.loads(pgfsbench("list", str(directory), "--format", "json"))
            lines.append(
                f"  {host}: campaign {listed['id']} ({listed['status']}) collected in "
                f"{directory}; a run collects it again if it changed on the host"
            )
        else:
            lines.append(f"  {host}: nothing collected yet; a run collects it to {directory}")
    lines.append(f"fleet report: would write {root / 'fleet-report.md'} and fleet-list.txt")
    return "\n".join(lines)


def check_store(store: str) -> None:
    """Exit 2 with pgfsbench's one-line reason if the store cannot be reached or set up."""
    from pgfsbench.errors import UserError
    from pgfsbench.store.importing import check_store

    try:
        check_store(store)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store",
        default=os.environ.get("PGFSBENCH_STORE"),
        help="the fleet's results store URL (default: $PGFSBENCH_STORE)",
    )
    parser.add_argument(
        "--results", type=Path, help="the directory holding each host's collected campaign"
    )
    parser.add_argument(
        "--preview", action="store_true", help="say what the report would hold; write nothing"
    )
    parser.add_argument(
        "--check-store", action="store_true", help="check the store can be reached, and exit"
    )
    parser.add_argument("hosts", nargs="*", help="inventory host names, baseline first")
    args = parser.parse_args()
    if not args.store:
        parser.error("give --store URL (or set PGFSBENCH_STORE)")
    if args.check_store:
        check_store(args.store)
        return
    if args.results is None or not args.hosts:
        parser.error("give --results DIR and the hosts")
    if args.preview:
        print(preview(args.results, args.hosts))
        return
    listing = pgfsbench("list", store=args.store)
    (args.results / "fleet-list.txt").write_text(listing)
    text = report(args.store, args.results, args.hosts, listing)
    out = args.results / "fleet-report.md"
    out.write_text(text)
    print(text)
    print(f"fleet report: {out}")


if __name__ == "__main__":
    main()
