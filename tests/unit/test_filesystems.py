from pgfsbench.filesystems.registry import recipe


def _argv(fs, options):
    return recipe(fs).mkfs_argv("/dev/loop9", options)[1:]  # without the tool


def test_ext_filesystems_are_made_without_background_lazy_init():
    assert _argv("ext4", []) == ["-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", "/dev/loop9"]


def test_defaults_join_the_plans_own_extended_options():
    # mke2fs keeps only the last -E: a second one would silently drop the stride
    assert _argv("ext4", ["-b", "4096", "-E", "stride=2,stripe-width=6"]) == [
        "-F",
        "-b",
        "4096",
        "-E",
        "stride=2,stripe-width=6,lazy_itable_init=0,lazy_journal_init=0",
        "/dev/loop9",
    ]


def test_the_plan_can_still_ask_for_lazy_init():
    assert _argv("ext4", ["-E", "lazy_itable_init=1"]) == [
        "-F",
        "-E",
        "lazy_itable_init=1,lazy_journal_init=0",
        "/dev/loop9",
    ]


def test_other_filesystems_are_untouched():
    assert _argv("xfs", ["-d", "agcount=4"]) == ["-f", "-d", "agcount=4", "/dev/loop9"]
