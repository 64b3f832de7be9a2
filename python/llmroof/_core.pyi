# Stubs of the compiled core; tests/python/test_stubs.py fails when they drift.
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

def format_names() -> list[str]: ...
def find_format(name: str) -> dict[str, Any]: ...
def device_ids() -> list[str]: ...
def find_device(id: str) -> dict[str, Any]: ...
def device_from_spec(spec: str) -> dict[str, Any]: ...
def parse_custom_device(spec: str) -> dict[str, Any]: ...
def read_device_json(path: str) -> dict[str, Any]: ...
def match_devices(name: str) -> list[str]: ...
def match_models(name: str) -> list[str]: ...
def model_ids() -> list[str]: ...
def find_model(id: str) -> dict[str, Any]: ...
def validate_model(fields: dict[str, Any]) -> dict[str, Any]: ...
def validate_device(fields: dict[str, Any]) -> dict[str, Any]: ...
def default_profile(device: dict[str, Any]) -> dict[str, Any]: ...
def count_parameters(model: dict[str, Any]) -> dict[str, float]: ...
def kv_report(
    model: dict[str, Any], kv: str, context: float, users: float, block_tokens: int
) -> str: ...
def decode_report(
    model: dict[str, Any],
    device: dict[str, Any],
    weights: str,
    kv: str,
    lm_head: str | None,
    devices: int,
    profile: dict[str, Any] | None,
    batch: float,
    contexts: list[float],
    module_formats: dict[str, Any] | None = None,
    parallel: dict[str, Any] | None = None,
    engine: str = "vllm",
) -> str: ...
def prefill_report(
    model: dict[str, Any],
    device: dict[str, Any],
    weights: str,
    kv: str,
    lm_head: str | None,
    devices: int,
    profile: dict[str, Any] | None,
    batch: float,
    prompt: float,
    cached: float,
    module_formats: dict[str, Any] | None = None,
    parallel: dict[str, Any] | None = None,
    engine: str = "vllm",
) -> str: ...
def plan_report(
    model: dict[str, Any],
    device: dict[str, Any],
    weights: str,
    kv: str,
    lm_head: str | None,
    devices: int,
    profile: dict[str, Any] | None,
    users: float,
    context: float,
    prompt: float,
    engine_options: dict[str, float] | None,
    module_formats: dict[str, Any] | None = None,
    stored_weight_bytes: float | None = None,
    parallel: dict[str, Any] | None = None,
    engine: str = "vllm",
    rate: float | None = None,
    output: float = 512.0,
    ttft_target: float = 1.0,
    offload: float | str | None = None,
    host: str = "ryzen-9-7950x",
    concurrency: float | None = None,
) -> str: ...
def users_report(
    model: dict[str, Any],
    device: dict[str, Any],
    weights: str,
    kv: str,
    devices: int,
    profile: dict[str, Any] | None,
    context: float,
    prompt: float,
    min_tokens_per_s: float,
    ttft_target: float,
    module_formats: dict[str, Any] | None = None,
    stored_weight_bytes: float | None = None,
    parallel: dict[str, Any] | None = None,
    engine: str = "vllm",
    engine_options: dict[str, float] | None = None,
    output: float = 512.0,
) -> str: ...
def read_model(path: str) -> dict[str, Any]: ...
def expected_distinct_experts(num_experts: int, experts_per_token: int, tokens: float) -> float: ...
def sweep_decode(
    models: list[dict[str, Any]],
    devices: list[dict[str, Any]],
    weights: list[str],
    kvs: list[str],
    batch: npt.NDArray[np.float64],
    context: npt.NDArray[np.float64],
    n_devices: int,
    profile: dict[str, Any] | None,
    memory_utilization: float | None = None,
    block_tokens: int | None = None,
    engine: str = "vllm",
    threads: int = 0,
) -> dict[str, npt.NDArray[np.float64]]: ...
def sweep_prefill(
    models: list[dict[str, Any]],
    devices: list[dict[str, Any]],
    weights: list[str],
    kvs: list[str],
    prompt: npt.NDArray[np.float64],
    cached: npt.NDArray[np.float64],
    n_devices: int,
    profile: dict[str, Any] | None,
    engine: str = "vllm",
    threads: int = 0,
) -> dict[str, npt.NDArray[np.float64]]: ...
def moe_report(
    model: dict[str, Any],
    device: dict[str, Any],
    weights: str,
    kv: str,
    devices: int,
    profile: dict[str, Any] | None,
    context: float,
    max_batch: float,
    module_formats: dict[str, Any] | None = None,
    parallel: dict[str, Any] | None = None,
    engine: str = "vllm",
) -> str: ...
def moe_table_report() -> str: ...
def compare_report(
    first: dict[str, Any],
    second: dict[str, Any],
    device: dict[str, Any],
    weights_first: str,
    weights_second: str,
    kv: str,
    devices: int,
    profile: dict[str, Any] | None,
    context: float,
    max_batch: float,
    parallel: dict[str, Any] | None = None,
    engine: str = "vllm",
) -> str: ...
def simulate_routing(
    popularity: list[float], experts_per_token: int, tokens: int, trials: int, seed: int, ranks: int
) -> dict[str, float]: ...
def expected_distinct_experts_skewed(popularity: list[float], experts_per_token: int, tokens: float) -> float: ...
def zipf_popularity(num_experts: int, alpha: float) -> list[float]: ...
def calibrate_report(path: str, scope: str) -> str: ...
def validate_report(path: str, refit: bool) -> str: ...
def time_decode_ns(model: dict[str, Any], device: dict[str, Any], weights: str, batch: float, n: int) -> float: ...

class PhaseTiming:
    @property
    def bound_s(self) -> float: ...
    @property
    def estimate_s(self) -> float: ...
    @property
    def tokens_per_s_bound(self) -> float: ...
    @property
    def tokens_per_s_estimate(self) -> float: ...
    @property
    def bytes(self) -> float: ...
    @property
    def flop(self) -> float: ...
    @property
    def sequences(self) -> float: ...
    @property
    def bottleneck(self) -> str: ...

class Estimator:
    def __init__(
        self,
        model: dict[str, Any],
        device: dict[str, Any],
        weights: str,
        kv: str,
        lm_head: str | None,
        devices: int,
        profile: dict[str, Any] | None,
        module_formats: dict[str, Any] | None,
        parallel: dict[str, Any] | None,
        engine: str,
    ) -> None: ...
    def decode(self, batch: float, context: float) -> PhaseTiming: ...
    def prefill(self, prompt: float, cached: float, batch: float) -> PhaseTiming: ...
    def decode_report(self, batch: float, context: float) -> str: ...
