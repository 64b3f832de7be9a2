"""llmroof: typed roofline models for LLM inference.

Count FLOP and bytes from a model's architecture, divide by a device's roofs,
and report the ideal bound beside a calibrated estimate: time to first token,
tokens/s per user and in total, KV-cache capacity, dense versus MoE.

All floats are in base units, with the unit in the name: ``time_s``,
``bytes``, ``tokens_per_s``.

>>> import llmroof
>>> p = llmroof.plan(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell",
...                  weights="fp8", kv="bf16", users=4, context=131072)
>>> p.memory.fits
False
"""

from __future__ import annotations

try:
    from . import _core  # noqa: F401
except ImportError as err:  # pragma: no cover - only without a build
    raise ImportError(
        "llmroof's compiled core (llmroof._core) is missing: install the package with "
        "'pip install .' from the source tree (it needs the Debian packages of "
        "scripts/install-deps.sh)"
    ) from err

from ._core.memory_plan import MemoryPlan
from ._core.reports import Calibration, Comparison, KvCache, MoeReport, Phase, Plan, Recommendation, Speculation, Users
from ._catalog import Device, Format, Model, Parameters, Speculative
from ._serving import Estimator, plan, recommend, users
from ._phases import (
    compare,
    decode,
    expected_distinct_experts,
    kv_cache,
    moe,
    moe_table,
    prefill,
    simulate_routing,
    speculate,
    zipf_popularity,
)
from ._calibration import calibrate, validate
from ._sweeps import sweep_decode, sweep_prefill
from . import _fields, _options
from ._fields import *  # noqa: F403 (what fields and model files say; _fields.__all__ lists them)
from ._options import *  # noqa: F403 (the typed keywords; _options.__all__ lists them)

__version__: str = _core.__version__

__all__ = [
    "Calibration",
    "Comparison",
    "Device",
    "Estimator",
    "Format",
    "KvCache",
    "MemoryPlan",
    "MoeReport",
    "Model",
    "Parameters",
    "Phase",
    "Plan",
    "Recommendation",
    "Speculation",
    "Speculative",
    "Users",
    "__version__",
    "calibrate",
    "validate",
    "compare",
    "decode",
    "expected_distinct_experts",
    "kv_cache",
    "moe",
    "moe_table",
    "plan",
    "prefill",
    "recommend",
    "simulate_routing",
    "speculate",
    "sweep_decode",
    "sweep_prefill",
    "users",
    "zipf_popularity",
]
__all__ += _fields.__all__ + _options.__all__


def __getattr__(name: str) -> object:
    # llmroof.plot after a plain `import llmroof`, without importing matplotlib
    # until a plot is asked for.
    if name == "plot":
        import importlib

        return importlib.import_module(".plot", __name__)
    raise AttributeError(f"module 'llmroof' has no attribute {name!r}")
