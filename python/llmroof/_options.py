"""The keywords the package's functions take (deployment, layout, engine,
load, price, sweep), as typed dicts. It imports the catalog objects they name
(``Device``, ``Speculative``) and nothing that imports it back."""

from __future__ import annotations

from typing import Sequence, TypedDict

from ._catalog import Device, Speculative
from ._fields import Efficiency

__all__ = [
    "CompareOptions",
    "DeploymentOptions",
    "EngineOptions",
    "LayoutOptions",
    "PlanLoad",
    "PlanOptions",
    "PriceOptions",
    "SweepDecodeOptions",
    "SweepOptions",
    "UsersOptions",
]


class _Formats(TypedDict, total=False):
    weights: str | None
    kv: str | None


class _LmHead(TypedDict, total=False):
    lm_head: str | None


class _Engine(TypedDict, total=False):
    engine: str | None


class _Devices(TypedDict, total=False):
    devices: int
    tp: int | None
    pp: int
    ep: int
    dp_attention: bool
    nodes: int
    link: str | None
    inter_link: str | None
    efficiency: Efficiency | None


class CompareOptions(_LmHead, _Devices, total=False):
    """The deployment keywords both sides of :func:`compare` share (each side
    has its own model, device, engine and formats)."""


class LayoutOptions(_LmHead, _Engine, _Devices, total=False):
    """The deployment keywords beside the model, device and storage formats."""


class DeploymentOptions(_Formats, LayoutOptions, total=False):
    """The keywords that describe a deployment beside its model and device:
    what :func:`decode`, :func:`prefill` and :func:`moe` take, the command's
    model and layout options. Their defaults are decided once (the package's
    ``_compile``) and shown in each function's signature and docs."""


class EngineOptions(DeploymentOptions, total=False):
    """:class:`DeploymentOptions` and the engine's memory settings (the
    command's ``--memory-utilization`` ... ``--max-model-len``): what
    :class:`Estimator`, :func:`plan` and :func:`users` take."""

    memory_utilization: float | None
    block_tokens: int | None
    max_num_seqs: int | None
    max_num_batched_tokens: int | None
    max_model_len: int | None
    prefix_caching: bool | None


class PriceOptions(TypedDict, total=False):
    """The price a plan's or users' ``energy`` section counts its cost at (USD;
    no default price); ``years`` and ``pue`` default to 3 and 1.0."""

    price_per_hour: float | None
    purchase: float | None
    years: float | None
    electricity: float | None
    pue: float | None


class PlanLoad(PriceOptions, total=False):
    """The load of a plan (:meth:`Estimator.plan`): users and their context,
    the TTFT prompt, an open (``rate``) or closed (``concurrency``) loop or a
    ``burst``,
    llama.cpp-style offload, and the price its cost is counted at. Defaults
    are shown in the signatures."""

    users: float
    context: float | str
    prompt: float | str | None
    prefix: float | str
    prefix_hit: float | None
    arrivals: str
    rate: float | None
    concurrency: float | None
    output: float
    ttft_target_s: float
    offload: float | str | None
    host: str | Device
    pd: int | str | None
    min_tokens_per_s: float | None
    kv_link: str | None
    kv_link_efficiency: float | None
    kv_overlap: bool
    burst: float | None
    burst_lengths: str
    speculative: Speculative | None


class UsersOptions(PriceOptions, EngineOptions, total=False):
    """The keywords :func:`users` takes besides its targets and loop: the
    deployment's and the price."""


class PlanOptions(PlanLoad, EngineOptions, total=False):
    """What :func:`plan` takes beside the model and device: the load and the
    deployment."""


class SweepOptions(LayoutOptions, total=False):
    """What :func:`sweep_prefill` takes beside the models, devices and its two
    axes: formats (one or a list each; every combination is swept), the
    deployment's layout and engine (:class:`LayoutOptions`) and threads."""

    weights: str | Sequence[str] | None
    kv: str | Sequence[str] | None
    threads: int | None


class SweepDecodeOptions(SweepOptions, total=False):
    """:class:`SweepOptions` and the engine's memory settings that decide
    ``fits`` (what :func:`sweep_decode` takes)."""

    memory_utilization: float | None
    block_tokens: int | None
