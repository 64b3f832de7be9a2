from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

from .deployment import Deployment

class _SweepColumns(TypedDict):
    """What `sweep` hands over: the number columns as the rows of one block
    (in `names` order) and the bool columns; rows run combination-major."""
    names: list[str]
    values: npt.NDArray[np.float64]
    flags: dict[str, npt.NDArray[np.bool_]]

def sweep(
    phase: str,
    deployments: list[Deployment],
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    threads: int,
) -> _SweepColumns: ...
def time_decode_ns(model: dict[str, Any], device: dict[str, Any], weights: str, batch: float, n: int) -> float: ...
