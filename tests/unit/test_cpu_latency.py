"""The CPUs' wake-up latency held through the kernel's PM QoS while a campaign runs, let
go when it ends, and recorded with the host's facts (a warning where it cannot be)."""

from __future__ import annotations

import os

import pytest

from pgfsbench.campaign import events as ev
from pgfsbench.plan.load import parse_plan
from pgfsbench.provision import cpu_latency
from pgfsbench.store.read import load_campaign
from tests.unit.test_campaign import PLAN, lab  # noqa: F401 (a fixture)

needs_qos = pytest.mark.skipif(
    not os.access(cpu_latency.DEVICE, os.W_OK), reason="needs root and /dev/cpu_dma_latency"
)


def test_nothing_asked_holds_nothing() -> None:
    before = cpu_latency.current_us()
    with cpu_latency.held(None) as record:
        assert record == {}
        assert cpu_latency.current_us() == before


@needs_qos
def test_the_latency_is_held_while_the_block_runs_and_let_go_after() -> None:
    before = cpu_latency.current_us()
    with cpu_latency.held(0) as record:
        assert (record["asked_us"], record["held"], record["effective_us"]) == (0, True, 0)
        assert cpu_latency.current_us() == 0
    assert cpu_latency.current_us() == before
    with pytest.raises(RuntimeError), cpu_latency.held(0):
        raise RuntimeError  # an error inside lets it go too
    assert cpu_latency.current_us() == before


def test_without_the_device_nothing_is_held_and_it_says_why(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(cpu_latency, "DEVICE", tmp_path / "missing")
    with cpu_latency.held(0) as record:
        assert record["held"] is False
        assert record["why_not"].endswith("missing: No such file or directory")


def test_a_campaign_records_what_it_held_and_warns_when_it_cannot(
    lab,
    tmp_path,
    monkeypatch,
) -> None:
    monkeypatch.setattr(cpu_latency, "DEVICE", tmp_path / "missing")
    plan = PLAN.format(fresh="true") + "\n[machine]\ncpu_latency = 0\n"
    campaign, status = lab(plan)
    assert status == "ok"
    assert load_campaign(tmp_path / "r").host["cpu_latency"]["held"] is False
    [note] = [e for e in campaign.said if isinstance(e, ev.Note) and "wake-up" in e.text]
    assert note.level == "warning"
    assert note.text.startswith("cannot hold the CPUs' wake-up latency at 0 µs (")
    assert note.text.endswith("): measuring with the machine as it is")


def test_a_plan_refuses_a_negative_latency() -> None:
    text = PLAN.format(fresh="true") + "\n[machine]\ncpu_latency = -1\n"
    with pytest.raises(Exception, match="cpu_latency"):
        parse_plan(text, "bad")


def test_campaigns_measured_with_and_without_cpus_held_awake_are_not_compared_silently():
    from dataclasses import replace

    from pgfsbench.compare.comparable import differences
    from tests.unit.test_memory_results import campaign, target

    as_is = campaign([target("ext4")])
    awake = replace(as_is, host={"cpu_latency": {"asked_us": 0, "held": True}})
    [diff] = [d for d in differences(as_is, awake, [("ext4", "ext4")]) if "wake-up" in d.what]
    assert (diff.baseline, diff.contender, diff.key) == (
        "as the machine had it",
        "held at 0 µs",
        True,
    )
    # asked but not held (no root): measured as the machine was, like a campaign before
    unheld = replace(as_is, host={"cpu_latency": {"asked_us": 0, "held": False}})
    assert not [d for d in differences(as_is, unheld, [("ext4", "ext4")]) if "wake-up" in d.what]
