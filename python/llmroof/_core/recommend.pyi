from typing import Any

from .deployment import Deployment
from .reports import Recommendation

def report(
    models: list[Deployment],
    labels: list[str],
    pool: list[tuple[dict[str, Any], int, int, float | None, float | None, float | None, float | None, float | None]],
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
) -> Recommendation: ...
def parse_pool(text: str) -> list[tuple[str, int]]: ...
def parse_prices(text: str) -> list[tuple[str, float | None, float | None]]: ...
