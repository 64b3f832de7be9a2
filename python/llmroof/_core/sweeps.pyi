from collections.abc import Mapping
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

class _SweepColumns(TypedDict):
    """What `sweep` hands over: the number columns as the rows of one block
    (in `names` order) and the bool columns; rows run combination-major."""
    names: list[str]
    values: npt.NDArray[np.float64]
    flags: dict[str, npt.NDArray[np.bool_]]

def sweep(
    phase: str,
    models: list[dict[str, Any]],
    devices: list[dict[str, Any]],
    weights: list[str],
    kvs: list[str],
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    n_devices: int,
    profile: Mapping[str, Any] | None,
    engine: str,
    settings: Mapping[str, float] | None,
    threads: int,
) -> _SweepColumns: ...
def time_decode_ns(model: dict[str, Any], device: dict[str, Any], weights: str, batch: float, n: int) -> float: ...
