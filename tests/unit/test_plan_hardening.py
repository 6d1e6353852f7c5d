"""A careless or hostile plan: every string that reaches a file, an argv or the terminal
is checked when the plan loads, with one clear error naming the key."""

from __future__ import annotations

import pytest

from pgfsbench.errors import UserError
from pgfsbench.plan.load import MAX_PLAN_BYTES, load_plan, parse_plan

GOOD = """
name = "p"
[[targets]]
name = "a"
fs = "ext4"
{target}
[[workloads]]
type = "fsync"
"""


def plan(target: str = "", extra: str = "") -> str:
    return GOOD.format(target=target) + extra


@pytest.mark.parametrize(
    "text, expected",
    [
        # The injection the issue found: a key smuggling archive_command into postgresql.conf.
        (
            plan(
                "[targets.postgres.settings]\n\"application_name = 'k'\\narchive_command = "
                '\'touch /tmp/x\'\\nwal_level" = "replica"'
            ),
            "targets.a.postgres.settings: a key contains a newline (U+000A)",
        ),
        (
            plan("[targets.postgres.settings]\napplication_name = \"k\\narchive_command = 'x'\""),
            "targets.a.postgres.settings.application_name: contains a newline (U+000A)",
        ),
        (
            plan(extra='[postgres.settings]\n"work mem" = "4MB"\n'),
            "'work mem' is not a PostgreSQL parameter name",
        ),
        (plan(extra='[postgres.settings]\n"a.b.c" = 1\n'), "'a.b.c' is not a PostgreSQL"),
        (
            plan(extra='[postgres.settings]\ninclude = "/etc/shadow"\n'),
            "include: pgfsbench sets this itself (a configuration directive, not a setting)",
        ),
        (
            plan(extra='[postgres.settings]\nListen_Addresses = "*"\n'),
            "Listen_Addresses: pgfsbench sets this itself",
        ),
        (
            plan(extra='[postgres.settings]\nunix_socket_permissions = "0777"\n'),
            "unix_socket_permissions: pgfsbench sets this itself",
        ),
        (
            plan('queue = { "../../../proc/sys/kernel/x" = 1 }'),
            "queue: '../../../proc/sys/kernel/x' is not a block queue setting name",
        ),
        (plan('sysctls = { "../x" = 1 }'), "'../x' is not a sysctl name"),
        (
            plan('mount = "noatime,journal_path=/dev/sdb"'),
            "option 'journal_path=/dev/sdb' names a device",
        ),
        (plan('mkfs = ["-J", "device=/dev/sdb1"]'), "option 'device=/dev/sdb1' names a device"),
        (plan('mkfs = ["/dev/sdb"]'), "option '/dev/sdb' names a device"),
        (plan('mount = "noatime\\u0000,nobarrier"'), "targets.a.mount: contains a NUL (U+0000)"),
        (plan('mkfs = ["-L", "x\\u001b[31m"]'), "targets.a.mkfs.1: contains an escape (U+001B)"),
        (
            plan(extra='[[targets]]\nname = "b"\ndir = "/srv/\\u202eevil"\n'),
            "targets.b.dir: contains a control character (U+202E)",
        ),
        (plan(extra="[verdicts]\nnoise = nan\n"), "verdicts.noise"),
        (plan(extra="[repetitions]\nmax_minutes = inf\n"), "Input should be a finite number"),
        ("a = " + "[" * 3000 + "]" * 3000, "nested too deeply"),
        # sizes that would make plan check (and the run) loop for ever: found by the fuzzer
        (
            plan(extra="[repetitions]\ncount = 100000000\n"),
            "repetitions.count: Input should be less than or equal to 1000 or Input should be 'auto'",
        ),
        (plan(extra="[repetitions]\ncount = 0\n"), "repetitions.count: Input should be greater"),
        (
            plan(
                extra="[[matrix]]\n[matrix.axes]\n"
                + "".join(f'k{i} = ["a", "b", "c", "d"]\n' for i in range(8))
            ),
            "matrix.0.axes: makes 65,536 targets; at most 1,000",
        ),
    ],
)
def test_dangerous_plans_are_refused_naming_the_key(text, expected):
    with pytest.raises(UserError) as info:
        parse_plan(text, "bad.toml")
    assert expected in str(info.value)
    assert str(info.value).startswith("plan bad.toml: ")


def test_a_description_may_span_lines_but_hold_no_escape():
    text = plan().replace('name = "p"', 'name = "p"\ndescription = """two\n\tlines 👍🏽"""')
    assert parse_plan(text, "ok.toml").description == "two\n\tlines 👍🏽"
    with pytest.raises(UserError, match="description: contains an escape"):
        parse_plan(text.replace("two", "two\\u001b[2J"), "bad.toml")


def test_extension_settings_and_odd_but_valid_values_load():
    text = plan(
        extra='[postgres.settings]\n"auto_explain.log_min_duration" = 0\n'
        'application_name = "it\'s C:\\\\temp"\n'
    )
    settings = parse_plan(text, "ok.toml").postgres.settings
    assert settings == {"auto_explain.log_min_duration": 0, "application_name": "it's C:\\temp"}


def test_a_huge_file_is_not_read_as_a_plan(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * MAX_PLAN_BYTES)
    with pytest.raises(UserError, match=r"big.toml: 1,048,578 bytes is not a plan file"):
        load_plan(str(big))
