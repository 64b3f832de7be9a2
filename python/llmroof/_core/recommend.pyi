from typing import Any

from .deployment import Deployment
from .reports import Recommendation

class PoolEntry:
    def __init__(
        self,
        *,
        device: dict[str, Any],
        count: int,
        per_node: int = 0,
        per_device_hour: float | None = None,
        purchase: float | None = None,
        years: float | None = None,
        electricity: float | None = None,
        pue: float | None = None,
    ) -> None: ...

class Request:
    def __init__(
        self,
        *,
        models: list[Deployment],
        labels: list[str],
        pool: list[PoolEntry],
        users: float | None,
        rate: float | None,
        context: float,
        prompt: float,
        output: float,
        prefix: float,
        prefix_hit: float | None,
        ttft: float,
        tps: float,
        max_cost: float,
        max_joules: float,
        budget: float,
        engines: list[str],
        engine_options: dict[str, float | bool] | None,
        kv: list[str],
        formats: bool,
        replicas: bool,
        offload: bool,
        disaggregated: bool,
        speculation: bool,
        threads: int,
    ) -> None: ...

def report(request: Request) -> Recommendation: ...
def parse_pool(text: str) -> list[tuple[str, int]]: ...
def parse_prices(text: str) -> list[tuple[str, float | None, float | None]]: ...
