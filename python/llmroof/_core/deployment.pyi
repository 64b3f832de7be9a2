from collections.abc import Mapping
from typing import Any

from .memory_plan import MemoryPlan
from .reports import Comparison, KvCache, MoeReport, Phase, Plan, Speculation, Users

max_burst_requests: int

class PlanRequest:
    def __init__(
        self,
        *,
        users: float,
        context: float,
        prompt: float,
        output: float,
        prefix: float,
        prefix_hit: float | None,
        arrivals: str,
        rate: float | None,
        concurrency: float | None,
        ttft_target_s: float,
        burst: float | None,
        burst_lengths: str,
        offload: float | str | None,
        host: str | Mapping[str, Any],
        price_per_hour: float | None,
        purchase: float | None,
        years: float | None,
        electricity: float | None,
        pue: float | None,
        pd: int | str | None,
        min_tokens_per_s: float | None,
        kv_link: str | None,
        kv_link_efficiency: float | None,
        kv_overlap: bool,
        spec_method: str | None,
        draft_tokens: int,
        acceptance: list[float],
        draft: Deployment | None,
    ) -> None: ...

class UsersRequest:
    def __init__(
        self,
        *,
        context: float,
        prompt: float,
        output: float,
        prefix: float,
        prefix_hit: float | None,
        arrivals: str,
        min_tokens_per_s: float,
        ttft_target_s: float,
        price_per_hour: float | None,
        purchase: float | None,
        years: float | None,
        electricity: float | None,
        pue: float | None,
        spec_method: str | None,
        draft_tokens: int,
        acceptance: list[float],
        draft: Deployment | None,
    ) -> None: ...

class Deployment:
    def __init__(
        self,
        model: dict[str, Any],
        device: dict[str, Any] | None,
        weights: str,
        kv: str,
        lm_head: str | None,
        devices: int,
        profile: Mapping[str, Any] | None,
        module_formats: Mapping[str, Any] | None,
        parallel: dict[str, Any] | None,
        engine: str,
        engine_options: dict[str, float | bool] | None,
        source: Mapping[str, Any] | None,
        name: str,
    ) -> None: ...
    def __getstate__(self) -> tuple[Any, ...]: ...
    def __setstate__(self, state: tuple[Any, ...]) -> None: ...
    @property
    def weights(self) -> str: ...
    @property
    def formats_from(self) -> str: ...
    def decode(self, batch: float, context: float) -> Phase: ...
    def prefill(self, prompt: float, cached: float, batch: float) -> Phase: ...
    def decode_sequences(self, contexts: list[float]) -> Phase: ...
    def kv_report(self, context: float, users: float) -> KvCache: ...
    def memory(self, users: float, context: float) -> MemoryPlan: ...
    def plan(self, request: PlanRequest) -> Plan: ...
    def speculate_report(
        self,
        method: str,
        draft_tokens: int,
        acceptance: list[float],
        draft: Deployment | None,
        batch: float,
        context: float,
        max_batch: float,
    ) -> Speculation: ...
    def users(self, request: UsersRequest) -> Users: ...
    def moe_report(self, context: float, max_batch: float) -> MoeReport: ...
    def compare_report(self, other: Deployment, context: float, max_batch: float) -> Comparison: ...
