"""Building blocks shared by every part of the plan model (targets, workload kinds,
filesystem recipes): the strict base model and the size type."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

from pgfsbench.units import size_to_bytes


class Strict(BaseModel):
    # inf and nan are valid TOML floats, but no setting here means them
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _valid_size(text: str) -> str:
    if size_to_bytes(text) <= 0:
        raise ValueError(f"'{text}' must be larger than zero")
    return text


Size = Annotated[str, AfterValidator(_valid_size)]
