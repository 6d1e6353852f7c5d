"""The report's history section: this campaign after its predecessors in a store.

With ``report --store URL``, the campaigns of the same plan that started before this
one (on any host) are read from the store, and each headline metric's series that
this campaign is part of is shown as in ``pgfsbench history``, ending at it.
"""

from __future__ import annotations

from pgfsbench.compare.series import Series, history
from pgfsbench.store.read import Campaign
from pgfsbench.store.sources import campaigns


def campaign_history(campaign: Campaign, store_url: str) -> list[Series]:
    """The series this campaign ends; empty when the store holds no predecessor."""
    found = [(campaign, str(campaign.results_dir))]
    found += [
        (c, s)
        for c, s in campaigns([], store_url)
        if c.plan_name == campaign.plan_name
        and c.started < campaign.started
        and c.uuid != campaign.uuid
    ]
    if len(found) == 1:
        return []
    return [
        s
        for s in history(found, plan=campaign.plan_name)
        if len(s.points) > 1 and s.points[-1].campaign is campaign
    ]
