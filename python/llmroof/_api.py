"""Pythonic layer over the compiled core: catalog objects, estimates, sweeps."""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypedDict, TypeVar, Union, cast

import numpy as np

from . import _core
from ._catalog import Device, DeviceLike, Format, Model, ModelLike, Parameters, Speculative
from ._checks import Tokens, _flag, _floats, _integer, _number, _text, _tokens
from ._core.memory_plan import MemoryPlan
from ._core.reports import Calibration, Comparison, KvCache, MoeReport, Phase, Plan, Recommendation, Speculation, Users
from ._fields import Efficiency, ModuleFormats, RoutingSample
from ._options import (
    CompareOptions,
    DeploymentOptions,
    EngineOptions,
    PlanLoad,
    PlanOptions,
    PriceOptions,
    SweepDecodeOptions,
    SweepOptions,
    UsersOptions,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import Unpack
else:
    # For typing.get_type_hints of Model.custom and Device.custom (3.9 and
    # 3.10: where typing_extensions is installed).
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        try:
            from typing_extensions import Unpack
        except ImportError:  # pragma: no cover
            pass

    class _LazyPandas:
        """``pd`` of this module's annotations for ``typing.get_type_hints``
        (pydantic, typeguard, sphinx): pandas is imported when a hint naming
        it is resolved, not when llmroof is."""

        def __getattr__(self, name: str) -> Any:
            import pandas

            return getattr(pandas, name)

    pd = _LazyPandas()



def _names_a_file(m: str) -> bool:
    """Whether ``model=`` names a file: the command's one rule for ``--model``
    (readers.hpp names_a_model_file)."""
    return bool(_core.catalog.names_a_model_file(m))


def _model(m: ModelLike) -> Model:
    if isinstance(m, Model):
        return m
    if isinstance(m, os.PathLike):
        return Model.from_file(m)
    if isinstance(m, str):
        return Model.from_file(m) if _names_a_file(m) else Model.get(m)
    raise TypeError(f"model must be a catalog id, a path or a Model (got {type(m).__name__})")


def _device_count(spec: DeviceLike) -> tuple[DeviceLike, int | None]:
    """``"h100-sxm:4"`` -> (``"h100-sxm"``, 4): the device count of the command's
    ``--device ID:N`` (ID:N, NAME:N, FILE.json:N, custom:K=V,...:N; the rule of
    src/cli/options.cpp), else (spec, None)."""
    if not isinstance(spec, str):
        return spec, None
    colon = spec.rfind(":")
    if colon < 0 or (spec.startswith("custom:") and colon <= 6) or any(c in spec[colon:] for c in ",="):
        return spec, None
    count = spec[colon + 1:]
    if not count.isdigit() or not 1 <= int(count) <= 1024:
        raise ValueError(f"device ID:N needs a whole device count N in [1, 1024] per node (got '{count}')")
    return spec[:colon], int(count)


def _device(d: DeviceLike) -> Device:
    if isinstance(d, Device):
        return d
    if isinstance(d, str):
        # an id or vendor name, "custom:memory=...,..." or a device JSON file
        return Device(_core.catalog.device_from_spec(_text("device", d)))
    raise TypeError(f"device must be a catalog id or a Device (got {type(d).__name__})")


def _host(h: object) -> dict[str, Any]:
    """The offload host's fields, resolved as the command's --host is."""
    if isinstance(h, (str, Device)):
        return dict(_device(h).fields)
    raise TypeError(f"host must be a catalog id or a Device (got {type(h).__name__})")


def _parallel(devices: int, tp: int | None, pp: int, ep: int, nodes: int, link: str | None,
              inter_link: str | None, dp_attention: bool = False) -> dict[str, int | str | None] | None:
    """The layout as asked for (the core infers what is not given, as the
    command does); None for one device on its own link."""
    if (tp is None and pp == 1 and ep == 1 and nodes == 1 and devices == 1 and link is None and inter_link is None
            and not dp_attention):
        return None
    out: dict[str, int | str | None] = {
        "tp": None if tp is None else _integer("tp", tp, minimum=1, maximum=65536),
        "pp": None if pp == 1 else pp, "ep": None if ep == 1 else ep, "nodes": nodes, "devices_per_node": devices}
    if dp_attention:
        out["dp_attention"] = True
    if link is not None:
        out["link"] = _text("link", link)
    if inter_link is not None:
        out["inter_link"] = _text("inter_link", inter_link)
    return out


def _devices(n: object) -> int:
    return _integer("devices", n, minimum=1, maximum=1024)


def _layout(devices: object, tp: int | None, pp: int, ep: int, nodes: object, link: str | None,
            inter_link: str | None, dp_attention: bool = False) -> tuple[int, dict[str, int | str | None] | None]:
    """Checked devices per node and the parallel plan over them."""
    n = _devices(devices)
    k = _integer("nodes", nodes, minimum=1, maximum=65536)
    return n, _parallel(n, tp, _integer("pp", pp, minimum=1, maximum=65536), _integer("ep", ep, minimum=1, maximum=65536),
                        k, link, inter_link, _flag("dp_attention", dp_attention))


def _lm_head(lm_head: str | None) -> str | None:
    return None if lm_head is None else _format_name("lm_head", lm_head)


# ---- results ----------------------------------------------------------------
# The reports are compiled classes (_core.reports: Phase, Plan, Users, KvCache,
# MoeReport, Comparison, Calibration, Speculation; _core.memory_plan: MemoryPlan): their
# properties, docstrings and frames come from the command's report tables.


# ---- estimates ----------------------------------------------------------------


def _format_name(name: str, value: object) -> str:
    text = _text(name, value)
    note = _core.catalog.shorthand_note(text)
    if note:  # the command's stderr note, as a warning
        warnings.warn(f"{name}: {note}", stacklevel=3)
    return Format.get(text).name


def _formats(m: Model, weights: str | None, kv: str | None) -> tuple[str, str, ModuleFormats | None]:
    """Weight and KV format names, and the file's per-module formats when the
    caller named no weight format ("" for a catalog model: the core plans its
    published checkpoint's formats, else bf16)."""
    fmts = None if m.source is None else m.source["formats"]  # read only here: no copy as Model.formats hands out
    w = _format_name("weights", weights) if weights is not None else ""
    if kv is not None:
        k = _format_name("kv", kv)
    elif fmts is not None and fmts["kv"]["name"] in Format.names():
        k = str(fmts["kv"]["name"])
    else:
        k = "bf16"
    mods = fmts if (weights is None and fmts is not None) else None
    return w, k, mods


def _compile(
    m: Model,
    device: DeviceLike | None,
    *,
    weights: str | None = None,
    kv: str | None = None,
    lm_head: str | None = None,
    engine: str | None = None,
    devices: int = 1,
    tp: int | None = None,
    pp: int = 1,
    ep: int = 1,
    dp_attention: bool = False,
    nodes: int = 1,
    link: str | None = None,
    inter_link: str | None = None,
    efficiency: Efficiency | None = None,
    memory_utilization: float | None = None,
    block_tokens: int | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_model_len: int | None = None,
    prefix_caching: bool | None = None,
) -> _core.deployment.Deployment:
    """The compiled deployment every question asks (``device`` None: a
    question without one, the KV cache's). The one place the deployment
    keywords (:class:`EngineOptions`) get their defaults: the public functions
    take them as ``**options`` and show this signature (:func:`_takes`)."""
    w, k, mods = _formats(m, weights, kv)
    if device is not None:
        device, n = _device_count(device)
        if n is not None:
            if devices not in (1, n):
                raise ValueError(f"device '{device}:{n}' names {n} devices; devices={devices} contradicts it")
            devices = n
    dev_n, par = _layout(devices, tp, pp, ep, nodes, link, inter_link, dp_attention)
    settings = _engine_settings(memory_utilization, block_tokens, max_num_seqs, max_num_batched_tokens, max_model_len,
                                prefix_caching)
    return _core.deployment.Deployment(m.fields, None if device is None else _device(device).fields, w, k,
                                       _lm_head(lm_head), dev_n, efficiency, mods, par,
                                       "" if engine is None else _text("engine", engine),
                                       settings, m.source or None, m.asked)


def _engine_settings(memory_utilization: float | None, block_tokens: int | None, max_num_seqs: int | None,
                     max_num_batched_tokens: int | None, max_model_len: int | None,
                     prefix_caching: bool | None) -> dict[str, float | bool]:
    """The engine settings a caller set (:class:`EngineOptions`), checked, as the core takes them."""
    settings: dict[str, float | bool] = {**_settings(
        memory_utilization=memory_utilization, block_tokens=block_tokens, max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens, max_model_len=max_model_len)}
    if prefix_caching is not None:
        if not isinstance(prefix_caching, bool):
            raise ValueError(f"prefix_caching must be True, False or None (got {prefix_caching!r})")
        settings["prefix_caching"] = prefix_caching
    return settings


def _settings(**given: float | None) -> dict[str, float]:
    """The engine settings a caller set (None: the engine's default), checked."""
    return {name: _number(name, v) if name == "memory_utilization" else _integer(name, v, minimum=1)
            for name, v in given.items() if v is not None}


def _plan_args(
    *,
    users: float = 1,
    context: Tokens = 4096,
    prompt: Tokens | None = None,
    prefix: Tokens = 0,
    prefix_hit: float | None = None,
    arrivals: str = "mixed",
    rate: float | None = None,
    concurrency: float | None = None,
    output: float = 512,
    ttft_target_s: float = 1.0,
    offload: float | str | None = None,
    host: DeviceLike = "ryzen-9-7950x",
    price_per_hour: float | None = None,
    purchase: float | None = None,
    years: float | None = None,
    electricity: float | None = None,
    pue: float | None = None,
    pd: int | str | None = None,
    min_tokens_per_s: float | None = None,
    kv_link: str | None = None,
    kv_link_efficiency: float | None = None,
    kv_overlap: bool = False,
    burst: float | None = None,
    burst_lengths: str = "fixed",
    speculative: Speculative | None = None,
) -> dict[str, Any]:
    """A plan's load (:class:`PlanLoad`), checked, as the keywords of
    ``_core.deployment.PlanRequest``: the one place its defaults are decided."""
    return dict(
        users=_number("users", users),
        context=_tokens("context", context),
        prompt=0.0 if prompt is None else _tokens("prompt", prompt, minimum=1),
        rate=None if rate is None else _number("rate", rate, minimum=0),
        output=_number("output", output, minimum=1),
        ttft_target_s=_number("ttft_target_s", ttft_target_s, minimum=0),
        offload=offload if isinstance(offload, str) or offload is None else _number("offload", offload),
        host=_host(host),
        concurrency=None if concurrency is None else _number("concurrency", concurrency, minimum=1),
        **_price_args(price_per_hour=price_per_hour, purchase=purchase, years=years, electricity=electricity, pue=pue),
        **_prefix_args(prefix, prefix_hit),
        arrivals=_text("arrivals", arrivals),
        pd=_pd(pd),
        min_tokens_per_s=None if min_tokens_per_s is None else _number("min_tokens_per_s", min_tokens_per_s),
        kv_link=None if kv_link is None else _text("kv_link", kv_link),
        kv_link_efficiency=None if kv_link_efficiency is None else _number("kv_link_efficiency", kv_link_efficiency,
                                                                           minimum=0),
        kv_overlap=_flag("kv_overlap", kv_overlap),
        burst=None if burst is None else _integer("burst", burst, minimum=1, maximum=_core.deployment.max_burst_requests),
        burst_lengths=_text("burst_lengths", burst_lengths),
        speculative=speculative if speculative is None else _speculative(speculative),
    )


def _speculative(spec: object) -> Speculative:
    if not isinstance(spec, Speculative):
        raise TypeError(f"speculative must be a Speculative or None (got {type(spec).__name__})")
    return spec


def _pd(pd: int | str | None) -> int | str | None:
    """``pd``: None, ``"auto"`` or a device count per instance."""
    if pd is None or pd == "auto":
        return pd
    if isinstance(pd, str):
        raise ValueError(f"pd must be 'auto' or a device count (got {pd!r})")
    return _integer("pd", pd, minimum=1)


class _Prefix(TypedDict):
    prefix: float
    prefix_hit: float | None


def _prefix_args(prefix: Tokens, prefix_hit: float | None) -> _Prefix:
    """A shared prefix and its hit rate, checked (the core checks them against the prompt)."""
    return _Prefix(prefix=_tokens("prefix", prefix),
                   prefix_hit=None if prefix_hit is None else _number("prefix_hit", prefix_hit, minimum=0))


def _price_args(*, price_per_hour: float | None = None, purchase: float | None = None, years: float | None = None,
                electricity: float | None = None, pue: float | None = None) -> dict[str, float | None]:
    """A price (:class:`PriceOptions`), checked, as the core's keywords
    (None: the core's default, or no price)."""
    given = dict(price_per_hour=price_per_hour, purchase=purchase, years=years, electricity=electricity, pue=pue)
    return {name: None if v is None else _number(name, v, minimum=0) for name, v in given.items()}


# What each keyword means, written once; _takes puts the entries
# of the keywords a function takes where its docstring says {options}.
_OPTION_DOCS = (
    ("users", "Concurrent sequences (>= 1)."),
    ("context", """Tokens each user holds (>= 0). Longer than one request's prompt and output, it is a
conversation that grows to it: each request a turn over its earlier turns (cached by the
engine's prefix cache), decoding up to the context."""),
    ("prompt", "New prompt tokens of a request (a turn); default min(context, 2048)."),
    ("prefix, prefix_hit", """Prompt tokens every request shares (a system prompt, tool definitions;
at most ``prompt``), and the share of requests that find them in the
engine's prefix cache (default 1): a hit prefills only the rest of the
prompt (whole cache blocks are reused, never the last token), and
block-sharing engines (vLLM, SGLang, TensorRT-LLM) hold the prefix once for
all users; as the command's ``--prefix`` and ``--prefix-hit``. The report's
``prefix`` section gives the TTFT on a hit."""),
    ("rate, output, ttft_target_s", """With ``rate`` (requests/s), the plan gains a ``load`` section: steady-state
users, TTFT (M/D/1 prefill queue), TPOT, and the highest rate whose mean
TTFT stays under ``ttft_target_s``."""),
    ("concurrency", """Instead of ``rate``: N closed-loop users, each sending its next request
(``prompt`` + ``output`` tokens) when the last completes, as
``vllm bench serve --max-concurrency N`` and AIPerf measure. The ``load``
section then gives ``ttft_s``, ``tpot_s``, ``output_tokens_per_s``,
``requests_per_s``, the requests inside the engine and what limits them.
Without ``rate`` or ``concurrency``, more than one of ``users`` are that
closed loop (as the command's plan prints it)."""),
    ("burst, burst_lengths", """Instead of ``rate`` or ``concurrency``: ``burst`` requests (at most
100,000) sent at once with no concurrency cap, as ``vllm bench serve
--request-rate inf`` runs them (the command's ``--burst`` and
``--burst-lengths``). The engine's steps are simulated: the server handles
the requests one at a time, the engine admits as many as its slots hold and
one more as each completes, and each step carries the running decodes and
then prompt tokens up to its token budget. ``burst_lengths``: ``"fixed"``
(every answer ``output`` tokens, the default) or ``"exponential"`` (spread
about ``output``, at most ``context - prompt``: a chat dataset such as
ShareGPT). The ``load`` section (``model`` "burst") gives the mean
``ttft_s`` and ``tpot_s`` over the requests, ``duration_s``,
``output_tokens_per_s`` and ``first_wave_ttft_s``."""),
    ("arrivals", """How a closed loop's requests meet, as the command's ``--arrivals``:
``"mixed"`` (the default: users whose lengths differ drift apart and meet
each other at random points) or ``"lockstep"`` (identical requests started
together, as a fixed-length benchmark runs them: requests that finish in one
step come back together and their prompts are prefilled in one batch; the
engine's steps are simulated). The ``load`` section says which, and in
lockstep gives ``first_wave_ttft_s``, the cold start's mean TTFT."""),
    ("pd, min_tokens_per_s, kv_link, kv_link_efficiency, kv_overlap", """Prefill and decode apart (as the command's ``--pd``, ``--tps``,
``--kv-link``, ``--kv-link-efficiency``, ``--kv-overlap``): ``pd`` = the devices
of one instance (``"auto"``: the fewest that hold a request and decode it
within ``1 / min_tokens_per_s``); the plan's devices as aggregated
replicas of it, as one instance, and in every split into x prefill and y
decode instances, each at its goodput (the most requests/s with mean TTFT
<= ``ttft_target_s`` and TPOT <= ``1 / min_tokens_per_s``); the KV cache
crosses ``kv_link`` (default: the node's link, across nodes the
inter-node one) at ``kv_link_efficiency`` of its bandwidth (default 0.87),
layer by layer with ``kv_overlap``. The report's ``disaggregation``
section holds the rows, the best and why, and each row's ``loop``: the
same layout under the plan's closed loop (``concurrency``, or its ``users``
when more than one and no ``rate``) without the targets (aggregated
replicas share the users as evenly as they go); vLLM, SGLang and
TensorRT-LLM only."""),
    ("speculative", """Speculative decoding (:class:`Speculative`: method, draft tokens,
acceptance, draft model), as the command's ``--spec``: the deployment decodes
speculatively (the memory counts the drafter, the load's steps draft and
verify, each keeping the accepted tokens) and the report gains a
``speculation`` section, :func:`speculate` at the plan's users and context."""),
    ("offload, host", """llama.cpp-style placement on one device: a share of the layers in
[0, 1], ``"experts"`` (routed experts), or ``"auto"`` (the fewest whole
layers that make the users fit, as ``--offload auto``), in the RAM of ``host`` (a CPU:
an id, a vendor name, ``"custom:..."``, a device JSON file or a
:class:`Device`, as the command's ``--host``), computed there at its DRAM
bandwidth."""),
    ("price_per_hour, purchase, years, electricity, pue", """The price the ``energy`` section (of a plan, or of the most users)
counts its cost at (USD; no default price): a rate per device-hour, or a purchase price per device
amortised over ``years`` of continuous use (default 3), plus electricity per
kWh times the facility's ``pue`` (default 1.0); as the command's ``--price-per-hour``, ``--purchase``,
``--years``, ``--electricity``, ``--pue``. Power comes from the device's TDP
and the step's compute- and memory-bound time (without a TDP: None)."""),
    ("weights, kv", """Storage formats of the weights and the KV cache (``Format.names()``);
default: the model file's own formats, else the published checkpoint's (gpt-oss MXFP4
experts, DeepSeek-V3 FP8, Kimi K2.5 INT4 experts), else bf16; the KV cache bf16."""),
    ("lm_head", "Format of lm_head and embeddings; default bf16 for quantized checkpoints."),
    ("engine", """``vllm``, ``sglang``, ``tensorrt-llm``, ``llama.cpp``, ``ollama`` or ``mlx``:
its efficiency profile and kernel traits, and how device memory becomes KV
cache; ``vllm@0.10`` or ``llama.cpp@2024`` for an older release; ``llama.cpp-vulkan``,
``llama.cpp-hip``, ``llama.cpp-sycl`` for a backend other than the device's own
(Metal on Apple, CUDA on NVIDIA, HIP on AMD, SYCL on Intel GPUs). None: the
device's own (vLLM on NVIDIA and datacenter GPUs, llama.cpp on Apple, CPUs and
other GPUs), as the command's default."""),
    ("devices, tp, pp, ep, dp_attention, nodes", """Devices per node and nodes; tensor parallel over all unless ``tp``,
``pp`` or ``ep`` say otherwise (llama.cpp and Ollama: split by layers, ``pp`` = the
devices, unless ``tp`` asks for its row split; ``ep`` > 1 alone: data-parallel attention and
expert-parallel experts; ``tp`` and ``ep`` together: tensor-parallel attention with the
experts in ``ep`` groups; ``dp_attention`` beside ``tp``: data-parallel attention with a
tensor-parallel FFN, SGLang's ``--enable-dp-attention``). Collectives cost link time."""),
    ("link, inter_link", """The link between devices of a node (default: the device's own, e.g.
nvlink4 on an H100 SXM, pcie4 on an RTX 4090) and between nodes (default
ib-ndr); ids of ``llmroof list links``."""),
    ("efficiency", "Override fields of the engine's efficiency profile on the device (:class:`Efficiency`)."),
    ("memory_utilization, block_tokens, max_num_seqs, max_num_batched_tokens, max_model_len, prefix_caching",
     """Engine settings; None keeps the engine's default for the device (vLLM:
0.9, 16, 1024 and 8192 on GPUs of >= 70 GiB other than the A100, else
256 and 2048; max_model_len = ``context``; prefix caching on, off for
vLLM before 0.8 and TensorRT-LLM 2023). A plan says whether the
engine would start (``memory["starts"]``), its KV tokens and blocks."""),
)

_F = TypeVar("_F", bound=Callable[..., Any])


def _takes(options: Any, *, source: tuple[Callable[..., Any], ...] = (_compile, _plan_args),
           docs: tuple[tuple[str, str], ...] = _OPTION_DOCS) -> Callable[[_F], _F]:
    """For a function written with ``**options: Unpack[options]``: its
    signature (help(), inspect, Jupyter) lists the options' keywords with
    their defaults from ``source`` (the one place each is decided), its
    docstring's ``{options}`` line becomes their ``docs``, and a keyword it
    does not take is refused as Python refuses one."""
    names = tuple(options.__annotations__)
    defaults = {k: v for f in source for k, v in inspect.signature(f).parameters.items()}
    entries = [(heading, text.splitlines()) for heading, text in docs if heading.split(",")[0] in names]

    def document(doc: str | None) -> str:
        out = []
        for line in (doc or "").splitlines():
            indent = line[:len(line) - len(line.lstrip())]
            if line.strip() != "{options}":
                out.append(line)
                continue
            for heading, text in entries:
                out += [indent + heading] + [indent + "    " + t for t in text]
        return "\n".join(out)

    def wrap(func: _F) -> _F:
        if isinstance(func, type):  # a class: its __init__, and its docstring
            func.__init__ = wrap(func.__init__)  # type: ignore[misc]
            func.__doc__ = document(func.__doc__)
            return func
        sig = inspect.signature(func)
        own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        known = frozenset(p.name for p in own if p.kind is not inspect.Parameter.POSITIONAL_ONLY) | frozenset(names)

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if not kwargs.keys() <= known:
                unknown = next(k for k in kwargs if k not in known)
                raise TypeError(f"{func.__qualname__}() got an unexpected keyword argument '{unknown}'")
            return func(*args, **kwargs)

        shown = sig.replace(parameters=own + [defaults[n] for n in names])
        if func.__name__ == "__init__":  # a class's signature has no return annotation
            shown = shown.replace(return_annotation=inspect.Signature.empty)
        checked.__signature__ = shown  # type: ignore[attr-defined]
        # What typing.get_type_hints (pydantic, typeguard, sphinx) reads: the
        # shown keywords, not the **options: Unpack[...] only mypy resolves.
        checked.__annotations__ = {p.name: p.annotation for p in shown.parameters.values()
                                   if p.annotation is not inspect.Parameter.empty}
        if shown.return_annotation is not inspect.Signature.empty:
            checked.__annotations__["return"] = shown.return_annotation
        checked.__doc__ = document(func.__doc__)
        return cast(_F, checked)

    return wrap




def _draft(draft_model: ModelLike, options: Mapping[str, Any]) -> _core.deployment.Deployment:
    """A draft model's formats (the deployment's weights, kv, lm_head and
    engine options), without a device: the core lays it out beside the target."""
    formats = {k: v for k, v in options.items() if k in ("weights", "kv", "lm_head", "engine")}
    return _compile(_model(draft_model), None, **formats)


def _acceptance(acceptance: float | Sequence[float] | None) -> list[float]:
    """One acceptance for all positions, one per position, or none (the default), checked."""
    single = isinstance(acceptance, (int, float)) and not isinstance(acceptance, bool)
    return [] if acceptance is None else _floats("acceptance", [acceptance] if single else acceptance)


@_takes(PlanOptions)
def plan(*, model: ModelLike, device: DeviceLike, **options: Unpack[PlanOptions]) -> Plan:
    """Plan ``users`` concurrent users of ``context`` tokens each.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    {options}

    Returns
    -------
    Plan
        Memory plan, TTFT and the decode curve; ``repr`` prints a readable table.

    Raises
    ------
    ValueError
        An unknown id or format, or a value out of range (the message names it).
    TypeError
        An argument of the wrong type.
    """
    load: dict[str, Any] = {k: v for k, v in options.items() if k in PlanLoad.__annotations__}
    deployment: dict[str, Any] = {k: v for k, v in options.items() if k not in load}
    return Estimator(model=model, device=device, **deployment)._plan(_plan_args(**load))


@_takes(UsersOptions)
def users(
    *,
    model: ModelLike,
    device: DeviceLike,
    min_tokens_per_s: float,
    ttft_target_s: float = 0,
    context: Tokens = 4096,
    prompt: Tokens = 0,
    output: float = 512,
    prefix: Tokens = 0,
    prefix_hit: float | None = None,
    arrivals: str = "mixed",
    speculative: Speculative | None = None,
    **options: Unpack[UsersOptions],
) -> Users:
    """The most concurrent users at ``context`` tokens such that each gets at
    least ``min_tokens_per_s``, a new arrival's TTFT stays at or under
    ``ttft_target_s`` (0 = no target), and all fit in memory.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    min_tokens_per_s, ttft_target_s
        The per-user decode speed each user gets, and the TTFT a new arrival
        waits at most (seconds; 0 = no target).
    context, prompt, output
        Tokens each user holds; the closed loop's prompt and output tokens per
        request.
    prefix, prefix_hit
        The prompt tokens every request shares and the share of requests
        that find them cached (as :func:`plan`'s).
    arrivals
        ``"mixed"`` or ``"lockstep"``: how the closed loop's requests meet (as
        :func:`plan`'s).
    speculative
        Speculative decoding (:class:`Speculative`), as the command's
        ``--spec``: the closed loop decodes in draft + verify steps, each
        keeping the accepted tokens, and the drafter's memory is counted.
    {options}

    Returns
    -------
    Users
        ``to_dict()``: the ``llmroof users --json`` report: ``max_users`` and
        ``limit`` (what one more user breaks: ``tokens/s``, ``ttft`` or
        ``memory``), and ``closed_loop``: those users each sending ``prompt`` +
        ``output``-token requests, the next when the last completes (TTFT,
        TPOT, tokens/s), or None when no user qualifies.
    """
    price: dict[str, Any] = {k: v for k, v in options.items() if k in PriceOptions.__annotations__}
    deployment: dict[str, Any] = {k: v for k, v in options.items() if k not in price}
    return Estimator(model=model, device=device, **deployment).users(
        min_tokens_per_s=min_tokens_per_s, ttft_target_s=ttft_target_s, context=context, prompt=prompt, output=output,
        prefix=prefix, prefix_hit=prefix_hit, arrivals=arrivals, speculative=speculative, **price)


_SEARCH_PARTS = ("formats", "replicas", "offload", "pd", "mtp")


def _pool(pool: object) -> list[tuple[Device, int]]:
    """The command's ``--pool`` string, or ``{device: count}``, or ``[(device, count)]``."""
    items: Iterable[object]
    if isinstance(pool, str):
        items = [(name, count) for name, count in _core.recommend.parse_pool(pool)]
    else:
        items = pool.items() if isinstance(pool, Mapping) else pool  # type: ignore[assignment]
    if not isinstance(items, Iterable):
        raise TypeError(f"pool must be 'id:n,...', a mapping of devices to counts or (device, count) pairs "
                        f"(got {type(pool).__name__})")
    out: list[tuple[Device, int]] = []
    for entry in items:
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise TypeError(f"pool entries must be (device, count) pairs (got {entry!r})")
        dev = _device(entry[0])
        for seen, _ in out:
            if seen.id == dev.id:
                raise ValueError(f"pool names '{dev.id}' twice")
        out.append((dev, _integer("pool count", entry[1], minimum=1, maximum=65536)))
    if not out:
        raise ValueError("pool: give at least one device kind")
    return out


def _prices(price: object) -> dict[str, tuple[str, float | None, float | None]]:
    """Device id -> (the name as given, USD per hour, purchase USD): the command's ``--price``
    string, or ``{device: "2.5/h" | "1800" | USD per hour}``."""
    if price is None:
        return {}
    if isinstance(price, str):
        pairs = [(name, (h, b)) for name, h, b in _core.recommend.parse_prices(price)]
    elif isinstance(price, Mapping):
        pairs = []
        for name, value in price.items():
            if isinstance(value, str):
                (_, h, b), = _core.recommend.parse_prices(f"{_text('price device', name)}={value}")
                pairs.append((name, (h, b)))
            else:
                pairs.append((name, (_number("price", value, minimum=0), None)))
    else:
        raise TypeError(f"price must be 'id=USD/h,...' or a mapping of devices to prices (got {type(price).__name__})")
    out: dict[str, tuple[str, float | None, float | None]] = {}
    for name, value in pairs:
        key = _device(name).id
        if key in out:
            raise ValueError(f"price names '{key}' twice (as '{out[key][0]}' and '{name}')")
        out[key] = (str(name), *value)
    return out


def recommend(
    *,
    models: ModelLike | Sequence[ModelLike],
    pool: str | Mapping[DeviceLike, int] | Sequence[tuple[DeviceLike, int]],
    users: float | None = None,
    rate: float | None = None,
    context: Tokens = 4096,
    prompt: Tokens | None = None,
    output: float = 512,
    prefix: Tokens = 0,
    prefix_hit: float | None = None,
    min_tokens_per_s: float = 10,
    ttft_target_s: float = 0,
    max_cost_per_million: float = 0,
    max_joules_per_token: float = 0,
    budget: float = 0,
    price: str | Mapping[str, str | float] | None = None,
    years: float | None = None,
    electricity: float | None = None,
    pue: float | None = None,
    per_node: int | None = None,
    engines: Sequence[str] | None = None,
    weights: str | None = None,
    kv: str | None = None,
    lm_head: str | None = None,
    skip: Sequence[str] = (),
    threads: int = 0,
    memory_utilization: float | None = None,
    block_tokens: int | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_model_len: int | None = None,
    prefix_caching: bool | None = None,
) -> Recommendation:
    """What to run: every way to serve the workload on ``pool``, scored
    against the targets (the command's ``llmroof recommend``, same numbers).

    The search tries each model on each device kind under each engine
    (default: vLLM and llama.cpp on NVIDIA and datacenter GPUs, llama.cpp and
    mlx-lm on Apple, llama.cpp elsewhere), in its published formats and the
    engine's smaller KV formats and quantized weights, at 1, 2, 4, ... devices
    of tensor, pipeline or expert parallelism, as replicas, with llama.cpp's
    smallest offload on one device, as x prefill + y decode instances (with
    a TTFT target) and with the model's own MTP layers. Memory prunes first;
    each survivor is scored with the closed loop of ``users`` (or the open
    loop at ``rate``) and again under the band's slower profile.

    Parameters
    ----------
    models
        One model or several: catalog ids or :class:`Model` objects.
    pool
        The devices it may use: ``"h100-sxm:8,rtx-4090:2"`` (as ``--pool``),
        ``{"h100-sxm": 8}`` or ``[(Device, 8)]``.
    users, rate
        A closed loop of ``users`` (default 1), each holding ``context``
        tokens, or an open loop of ``rate`` requests/s; one of them.
    context, prompt, output, prefix, prefix_hit
        Tokens each user holds (a conversation that grows to it when longer
        than one request); prompt (default min(context, 2048)) and
        output tokens per request; the shared prompt prefix and its hit
        rate (as :func:`plan`'s).
    min_tokens_per_s, ttft_target_s, max_cost_per_million, max_joules_per_token
        The targets (0: none): tokens/s each user decodes (default 10), mean
        TTFT in seconds, USD per million output tokens (needs ``price``),
        joules per output token.
    budget
        USD the devices may cost to buy (0: none; needs ``price`` as purchase
        prices for every kind): a deployment over it misses, as ``--budget``.
    price, years, electricity, pue
        Per device kind: ``"h100-sxm=2.5/h,rtx-4090=1800"`` (as ``--price``) or
        ``{"h100-sxm": "2.5/h"}`` (a number: USD per hour); a purchase is
        amortised over ``years`` (default 3); electricity per kWh times
        ``pue`` on top. Every kind priced, or none (then devices are the cost).
    per_node
        Devices per node (default: all of a kind in one node).
    engines, weights, kv, lm_head
        Engines to try; a weight format (then only it) and a KV format
        (then only it).
    skip
        Parts of the search to leave out: ``"formats"``, ``"replicas"``,
        ``"offload"``, ``"pd"``, ``"mtp"``.
    threads
        Threads of the search (0: one per hardware thread); the answer is the same.
    memory_utilization, block_tokens, max_num_seqs, max_num_batched_tokens, max_model_len, prefix_caching
        Engine settings for every candidate (None: each engine's default).

    Returns
    -------
    Recommendation
        ``best`` (a candidate row, or None), ``front``, ``per_device``,
        ``closest``, ``why``, ``met``; ``frame()``: every candidate as a
        DataFrame with its status and first reason.

    Raises
    ------
    ValueError
        An unknown id, engine or format, a value out of range, or prices on
        some kinds only (the message names the field).
    TypeError
        An argument of the wrong type.
    """
    many: list[ModelLike] = [models] if isinstance(models, (str, os.PathLike, Model)) else list(models)
    if not many:
        raise ValueError("models: give at least one model")
    compiled = [_compile(_model(m), None, weights=weights, lm_head=lm_head) for m in many]
    labels = [os.fspath(m) if isinstance(m, (str, os.PathLike)) else m.id for m in many]  # as the command's --model
    prices = _prices(price)
    entries = []
    seen: set[str] = set()
    for dev, count in _pool(pool):
        _, h, b = prices.get(dev.id, ("", None, None))
        seen.add(dev.id)
        entries.append((dict(dev.fields), count, 0 if per_node is None else _integer("per_node", per_node, minimum=1, maximum=1024),
                        h, b, None if years is None or b is None else _number("years", years, minimum=0),
                        None if electricity is None else _number("electricity", electricity, minimum=0),
                        None if pue is None else _number("pue", pue, minimum=0)))
    for key, (name, _, _) in prices.items():
        if key not in seen:
            raise ValueError(f"price names '{name}', which is not in pool")
    if years is not None and all(e[4] is None for e in entries):
        raise ValueError("years amortises a purchase price: give one in price (like {'rtx-4090': 1800})")
    if users is not None and rate is not None:
        raise ValueError("users and rate are two loads; give one")
    parts = [_text("skip", s) for s in ([skip] if isinstance(skip, str) else skip)]
    for part in parts:
        if part not in _SEARCH_PARTS:
            raise ValueError(f"skip takes formats, replicas, offload, pd, mtp (got '{part}')")
    settings = _engine_settings(memory_utilization, block_tokens, max_num_seqs, max_num_batched_tokens, max_model_len,
                                prefix_caching)
    shared = _prefix_args(prefix, prefix_hit)
    return _core.recommend.report(
        compiled, labels, entries,
        None if users is None else _number("users", users, minimum=1),
        None if rate is None else _number("rate", rate, minimum=0),
        _tokens("context", context, minimum=0), 0 if prompt is None else _tokens("prompt", prompt, minimum=0),
        _number("output", output, minimum=1), shared["prefix"], shared["prefix_hit"],
        _number("ttft_target_s", ttft_target_s, minimum=0), _number("min_tokens_per_s", min_tokens_per_s, minimum=0),
        _number("max_cost_per_million", max_cost_per_million, minimum=0),
        _number("max_joules_per_token", max_joules_per_token, minimum=0),
        _number("budget", budget, minimum=0),
        [] if engines is None else [_text("engines", e) for e in ([engines] if isinstance(engines, str) else engines)],
        settings, [] if kv is None else [_format_name("kv", kv)],
        weights is None and "formats" not in parts, "replicas" not in parts, "offload" not in parts,
        "pd" not in parts, "mtp" not in parts, _integer("threads", threads, minimum=0, maximum=4096))


@_takes(EngineOptions)
class Estimator:
    """A deployment resolved once (model, device, formats, layout, engine and its
    profile), answering decode and prefill questions repeatedly at the cost of
    one compiled call: for searches, optimisers and simulators.

    ``decode`` and ``prefill`` return a compiled :class:`Phase` whose
    numbers are read from the timing itself (the per-op report is built when
    asked for), the same numbers ``llmroof.decode`` reports;
    ``plan``, ``users`` and ``memory`` answer what :func:`plan` and
    :func:`users` do. It pickles (for multiprocessing or joblib workers): the
    copy is resolved again from the same arguments.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    {options}

    Examples
    --------
    >>> est = Estimator(model="llama-3.1-8b", device="h100-sxm")
    >>> round(1 / est.decode(batch=1, context=4096).estimate_s)  # doctest: +SKIP
    """

    __slots__ = ("_obj", "_model", "_options")

    def __init__(self, *, model: ModelLike, device: DeviceLike, **options: Unpack[EngineOptions]) -> None:
        self._model = _model(model)
        self._obj = _compile(self._model, device, **options)
        # A plan's draft model takes the same formats and engine.
        self._options: dict[str, Any] = dict(options)

    def decode(self, *, batch: float = 1, context: float = 4096) -> Phase:
        """One decode step of ``batch`` sequences at ``context`` cached tokens each.
        Raises ValueError naming the field when out of range."""
        return self._obj.decode(batch, context)

    def prefill(self, *, prompt: float = 2048, cached: float = 0, batch: float = 1) -> Phase:
        """Prefill of ``prompt`` tokens after ``cached`` ones for ``batch`` sequences."""
        return self._obj.prefill(prompt, cached, batch)

    def decode_phase(self, *, batch: float = 1, context: Tokens = 4096) -> Phase:
        """:meth:`decode` with its arguments checked as :func:`decode` checks them ("32k" contexts too)."""
        return self._obj.decode(_number("batch", batch), _tokens("context", context))

    @_takes(PlanLoad)
    def plan(self, **load: Unpack[PlanLoad]) -> Plan:
        """:func:`plan` of this deployment (same load arguments and defaults).

        Parameters
        ----------
        {options}
        """
        return self._plan(_plan_args(**load))

    def users(
        self, *, min_tokens_per_s: float, ttft_target_s: float = 0, context: Tokens = 4096, prompt: Tokens = 0,
        output: float = 512, prefix: Tokens = 0, prefix_hit: float | None = None, arrivals: str = "mixed",
        speculative: Speculative | None = None, **price: Unpack[PriceOptions],
    ) -> Users:
        """:func:`users` of this deployment (same arguments and defaults)."""
        question = dict(context=_tokens("context", context, minimum=0), prompt=_tokens("prompt", prompt, minimum=0),
                        min_tokens_per_s=_number("min_tokens_per_s", min_tokens_per_s, minimum=0),
                        ttft_target_s=_number("ttft_target_s", ttft_target_s, minimum=0),
                        output=_number("output", output, minimum=1), **_price_args(**price),
                        **_prefix_args(prefix, prefix_hit), arrivals=_text("arrivals", arrivals))
        return self._users(question, speculative)

    def memory(self, *, users: float = 1, context: Tokens = 4096) -> MemoryPlan:
        """The memory plan of :func:`plan` alone (``users`` at ``context``
        tokens each): whether they fit, the KV budget, the most users and the
        longest context; one compiled call (about 3 us), for searches."""
        return self._obj.memory(_number("users", users), _tokens("context", context))

    def _spec_args(self, spec: Speculative | None) -> dict[str, Any]:
        """A speculation as the compiled requests take it: method, k, acceptance, draft."""
        if spec is None:
            return dict(spec_method=None, draft_tokens=1, acceptance=[], draft=None)
        spec = _speculative(spec)
        draft = None if spec.draft_model is None else _draft(spec.draft_model, self._options)
        return dict(spec_method=_text("method", spec.method), draft_tokens=_integer("draft_tokens", spec.draft_tokens),
                    acceptance=_acceptance(spec.acceptance), draft=draft)

    def _plan(self, question: dict[str, Any]) -> Plan:
        spec = question.pop("speculative")
        return self._obj.plan(_core.deployment.PlanRequest(**question, **self._spec_args(spec)))

    def _users(self, question: dict[str, Any], speculative: Speculative | None = None) -> Users:
        return self._obj.users(_core.deployment.UsersRequest(**question, **self._spec_args(speculative)))


def _cacheable(x: object, kind: type) -> bool:
    """A catalog name, or a Model/Device object that is all fields (a model
    read from a file also carries its formats, which its fields do not say)."""
    if isinstance(x, str):
        return not (_names_a_file(x) if kind is Model else os.path.exists(x))
    return isinstance(x, kind) and not getattr(x, "source", None)


@functools.lru_cache(maxsize=128)
def _resolved(model: ModelLike, device: DeviceLike,
              options: tuple[tuple[str, str, Any], ...]) -> _core.deployment.Deployment:
    """_compile of catalog names or built objects, once per deployment."""
    return _compile(_model(model), device, **{k: v for k, _, v in options})


def _cached(model: ModelLike, device: DeviceLike, options: DeploymentOptions,
            question: Callable[[_core.deployment.Deployment], Phase]) -> Phase | None:
    """``question`` of the cached deployment, for catalog names or built
    objects (not files, which may change between calls) without a custom
    profile; None where the deployment is not cacheable or the question
    refuses (the uncached path then raises the command's error)."""
    if not (_cacheable(model, Model) and _cacheable(device, Device) and options.get("efficiency") is None):
        return None
    try:
        # The key holds each value's type: True and 1 are equal, but only 1 is a valid pp.
        key = cast(Union[str, Model], model)  # _cacheable: a catalog name or a built Model, never a path
        return question(_resolved(key, device, tuple(sorted((k, type(v).__name__, v) for k, v in options.items()))))
    except (ValueError, TypeError):
        return None


@_takes(DeploymentOptions)
def decode(
    *,
    model: ModelLike,
    device: DeviceLike,
    batch: float = 1,
    context: Tokens | Sequence[float] = 4096,
    **options: Unpack[DeploymentOptions],
) -> Phase:
    """One decode step of ``batch`` sequences at ``context`` cached tokens each,
    as ``llmroof decode`` computes it.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    batch
        Sequences decoded together (>= 1).
    context
        Cached tokens of each sequence (default 4096, as the command's), or a
        sequence of them: one sequence each, at its own context.
    {options}

    Returns
    -------
    Phase
        Bound and estimate of the step (per-user tokens/s = 1 / ``estimate_s``)
        and its ops.

    Raises
    ------
    ValueError, TypeError
        A value out of range or of the wrong type (the message names the field).
    """
    if not isinstance(context, (list, tuple, np.ndarray)):
        def step(est: _core.deployment.Deployment) -> Phase:
            b, c = _number("batch", batch), _tokens("context", context)
            return est.decode(b, c)

        cached = _cached(model, device, options, step)
        if cached is not None:
            return cached
    dep = _compile(_model(model), device, **options)  # the deployment first, as the command checks it
    if isinstance(context, (list, tuple, np.ndarray)):
        contexts = [_tokens("context", c) for c in context]
        if not contexts:
            raise ValueError("context must hold at least one sequence (got an empty sequence)")
        if len(contexts) == 1:  # one sequence: any layout
            return dep.decode(1.0, contexts[0])
        return dep.decode_sequences(contexts)
    return dep.decode(_number("batch", batch), _tokens("context", context))


@_takes(DeploymentOptions)
def prefill(
    *,
    model: ModelLike,
    device: DeviceLike,
    prompt: Tokens = 2048,
    cached: Tokens = 0,
    batch: float = 1,
    **options: Unpack[DeploymentOptions],
) -> Phase:
    """Prefill of ``prompt`` tokens after ``cached`` ones for ``batch``
    sequences, as ``llmroof prefill`` computes it; its ``estimate_s`` is the
    time to first token without queueing.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    prompt, cached, batch
        New tokens per sequence, tokens already cached before them, sequences.
    {options}
    """
    def fill(est: _core.deployment.Deployment) -> Phase:
        p, c, b = _tokens("prompt", prompt), _tokens("cached", cached), _number("batch", batch)
        return est.prefill(p, c, b)

    cached_phase = _cached(model, device, options, fill)
    return cached_phase if cached_phase is not None else fill(_compile(_model(model), device, **options))


def kv_cache(
    *,
    model: ModelLike,
    kv: str | None = None,
    context: Tokens = 4096,
    users: float = 1,
    engine: str | None = None,
    block_tokens: int | None = None,
) -> KvCache:
    """KV-cache bytes per token, per sequence at ``context`` and for ``users``
    (``llmroof kv --json``). ``kv`` defaults to the model file's KV format,
    else bf16; ``engine`` (None: vLLM) refuses formats it cannot hold and sets the block
    size (``block_tokens`` overrides it), as ``llmroof kv --engine`` does."""
    m = _model(model)
    kv_name = None if kv is None else _format_name("kv", kv)
    context_v, users_v = _tokens("context", context), _number("users", users)
    dep = _compile(m, None, kv=kv_name, engine=engine, block_tokens=block_tokens)
    return dep.kv_report(context_v, users_v)


def expected_distinct_experts(
    *, num_experts: int | None = None, experts_per_token: int, tokens: float,
    popularity: Sequence[float] | None = None,
) -> float:
    """Expected distinct experts per layer for ``tokens`` routed tokens: uniform
    E * (1 - (1 - k/E)^tokens), or with a popularity vector (Zipf, a router
    histogram) sum_e 1 - (1 - min(1, k p_e))^tokens."""
    if popularity is not None:
        return _core.moe.expected_distinct_experts_skewed(_floats("popularity", popularity),
                                                      _integer("experts_per_token", experts_per_token, minimum=1),
                                                      _number("tokens", tokens))
    if num_experts is None:
        raise ValueError("give num_experts (uniform routing) or popularity")
    return _core.moe.expected_distinct_experts(
        _integer("num_experts", num_experts, minimum=1, maximum=1_000_000),
        _integer("experts_per_token", experts_per_token, minimum=1),
        _number("tokens", tokens),
    )


@_takes(DeploymentOptions)
def moe(
    *,
    model: ModelLike,
    device: DeviceLike,
    context: Tokens = 4096,
    max_batch: float = 1024,
    **options: Unpack[DeploymentOptions],
) -> MoeReport:
    """A MoE model against batch: experts touched per layer (and their spread),
    bytes per step, tokens/s per user and in total, beside a dense model of the
    same total size, and the batch where the MoE advantage is gone.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    context, max_batch
        Cached tokens per sequence; the largest batch of the table.
    {options}

    Returns
    -------
    MoeReport
        ``to_dict()``: ``llmroof moe --json``, schema ``llmroof.moe/1``.

    Raises
    ------
    ValueError
        For a dense model, or a value out of range.
    """
    m = _model(model)
    dep = _compile(m, device, **options)
    return dep.moe_report(_tokens("context", context, minimum=0), _number("max_batch", max_batch, minimum=1))


@_takes(DeploymentOptions)
def speculate(
    *,
    model: ModelLike,
    device: DeviceLike,
    method: str = "mtp",
    draft_tokens: int = 1,
    acceptance: float | Sequence[float] | None = None,
    draft_model: ModelLike | None = None,
    batch: float = 1,
    context: Tokens = 4096,
    max_batch: float = 1024,
    **options: Unpack[DeploymentOptions],
) -> Speculation:
    """Speculative decoding of one deployment, as ``llmroof speculate``
    computes it: tokens kept per step, the draft passes and the target's
    verify step of width ``draft_tokens`` + 1, tokens/s per user with and
    without, against batch, and the batch where it stops paying.

    Parameters
    ----------
    model, device
        Catalog ids or :class:`Model` / :class:`Device` objects; ``"h100-sxm:4"`` is four
        of them, as the command's ``--device ID:N``. ``model`` may also be a path (``str`` or
        ``pathlib.Path``) to a config.json, a folder, a .gguf or a .safetensors file, as
        ``--model PATH``.
    method
        ``"mtp"`` (the model's own multi-token-prediction layers), ``"draft"``
        (``draft_model``), ``"eagle"`` (an EAGLE-3 head: one decoder layer and a
        32,000-token lm_head) or ``"ngram"`` (prompt lookup: no GPU work); the
        engine must run it (Ollama runs none, mlx-lm draft models only).
    draft_tokens
        Tokens drafted per step (k, 1-16).
    acceptance
        Conditional acceptance of each draft position, or one value for all;
        default for ``mtp``: 0.85 at k = 1 (DeepSeek-V3 report), else 0.60
        (SGLang's accept length 2.18 at k = 3); for ``eagle`` 0.76, 0.74, 0.77
        (cumulative 76/56/43%, MiniMax-M3 EAGLE-3), 0.75 beyond; required for
        the others.
    draft_model
        The draft model (same vocabulary), on the same devices and options.
    batch, context, max_batch
        Sequences, cached tokens each, and the largest batch of the table.
    {options}

    Returns
    -------
    Speculation
        ``to_dict()``: ``llmroof speculate --json``, schema ``llmroof.speculative/1``.
    """
    dep = _compile(_model(model), device, **options)
    draft = None if draft_model is None else _draft(draft_model, options)
    return dep.speculate_report(_text("method", method), _integer("draft_tokens", draft_tokens),
                                _acceptance(acceptance), draft, _number("batch", batch), _tokens("context", context),
                                _number("max_batch", max_batch, minimum=1))


def moe_table() -> pd.DataFrame:
    """Total and active parameters of every catalog MoE model, with the active share."""
    import pandas as pd

    return pd.DataFrame(_core.moe.moe_table_report()["models"])


@_takes(CompareOptions)
def compare(
    *,
    models: ModelLike | Sequence[ModelLike],
    device: DeviceLike | Sequence[DeviceLike],
    weights: str | Sequence[str] | None = None,
    kv: str | Sequence[str] | None = None,
    engine: str | Sequence[str] | None = None,
    context: Tokens = 4096,
    max_batch: float = 1024,
    **options: Unpack[CompareOptions],
) -> Comparison:
    """Two deployments decoding side by side against batch, and the batch where
    the first stops being faster per user (``speed_crossover_batch``), as
    ``llmroof compare`` computes it: two models on one machine, one model on
    two machines, two engines or two formats.

    Parameters
    ----------
    models, device, weights, kv, engine
        Each one value for both sides or two (one per side); at least one of
        them gives two. ``models``: catalog ids or :class:`Model` objects;
        ``device``: catalog ids (``"h100-sxm:4"``) or :class:`Device` objects;
        formats default to the model file's own, else the published
        checkpoint's, else bf16; ``engine`` to the device's own. Two models on the same
        devices under one engine share the first's device plan (a dense model
        beside an expert-parallel one takes TP).
    context, max_batch
        Cached tokens per sequence; the largest batch of the table.
    {options}

    Returns
    -------
    Comparison
        ``to_dict()``: ``llmroof compare --json``.
    """
    def sides(name: str, value: Any, one: tuple[type, ...]) -> list[Any]:
        values = [value] if value is None or isinstance(value, one) else list(value)
        if len(values) not in (1, 2):
            raise ValueError(f"{name} must be one value or two (one per side), got {len(values)}")
        return values

    given = {"models": sides("models", models, (str, Model)), "device": sides("device", device, (str, Device)),
             "weights": sides("weights", weights, (str,)), "kv": sides("kv", kv, (str,)),
             "engine": sides("engine", engine, (str,))}
    if all(len(v) == 1 for v in given.values()):
        raise ValueError("compare needs two sides: give models, device, engine, weights or kv as two values "
                         "(two models on one device, one model on two devices, ...)")

    def side(i: int) -> _core.deployment.Deployment:
        pick = {k: v[min(i, len(v) - 1)] for k, v in given.items()}
        eng = {} if pick["engine"] is None else {"engine": pick["engine"]}
        return _compile(_model(pick["models"]), pick["device"], weights=pick["weights"], kv=pick["kv"], **eng,
                        **options)

    return side(0).compare_report(side(1), _tokens("context", context, minimum=0),
                                  _number("max_batch", max_batch, minimum=1))


def simulate_routing(
    *, popularity: Sequence[float], experts_per_token: int, tokens: int, trials: int = 1000, seed: int = 0,
    ranks: int = 1,
) -> RoutingSample:
    """Seeded Monte-Carlo routing: mean and variance of distinct experts per
    layer, and the busiest expert-parallel rank's load."""
    return cast(RoutingSample, dict(_core.moe.simulate_routing(
        _floats("popularity", popularity), _integer("experts_per_token", experts_per_token, minimum=1),
        _integer("tokens", tokens, minimum=0), _integer("trials", trials, minimum=1), _integer("seed", seed, minimum=0, maximum=2**63 - 1),
        _integer("ranks", ranks, minimum=1))))


def zipf_popularity(*, num_experts: int, alpha: float) -> list[float]:
    """Zipf(alpha) routing popularity over ``num_experts`` experts (sums to 1)."""
    return list(_core.moe.zipf_popularity(_integer("num_experts", num_experts, minimum=1, maximum=1_000_000),
                                      _number("alpha", alpha, minimum=0)))


PointsFiles = Union[str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]]


def _points_files(path: PointsFiles) -> list[str]:
    # One file, or several read together (``llmroof validate A.csv B.csv``).
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("path must name at least one points file (got an empty list)")
        return [os.fspath(p) for p in path]
    raise TypeError(f"path must be a file or a list of files (got {type(path).__name__})")


def calibrate(path: PointsFiles, *, scope: str = "engine-kind") -> Calibration:
    """Fit efficiency profiles to measured points (the column layout of
    calibration.csv, docs/calibration.md), from one file or a list of files
    read together: one per engine and memory kind (``engine-kind``), per
    engine, or ``global``. Returns :class:`Calibration` (``to_dict()``: the
    ``llmroof calibrate --json`` report): fitted values with standard errors,
    residuals, and the rows that could not be mapped with the reason."""
    return _core.calibrate.calibrate_report(_points_files(path), _text("scope", scope))


def validate(path: PointsFiles, *, refit: bool = False,
             report: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Predict every row of a points file (the column layout of
    calibration.csv, docs/calibration.md) and compare with what was measured.

    Parameters
    ----------
    path
        The points file, or a list of files read together (the shipped fit
        reads ``calibration.csv`` and ``release3/single_stream.csv``).
    refit
        False (default): the profiles llmroof ships, no fitting: what
        llmroof answers out of the box on your measurements. True:
        leave-one-source-out cross-validation at the profile scope
        ``llmroof validate`` chooses. Either way each prediction carries its
        band (``low``, ``high``: the profile one standard error slower and
        faster).
    report
        A folder to write ``report.md`` (MdAPE by scope, metric and engine;
        the worst points with their likely reasons; the rows not mapped) and
        ``predictions.csv`` into, as ``llmroof validate --report DIR`` does.

    Returns
    -------
    pandas.DataFrame
        One row per mapped point: id, source, engine, device, devices,
        memory_kind, model, weights, metric, batch, prompt, measured,
        predicted, low, high, ape, likely_reason (why it is off, in words). ``attrs`` holds the headline MdAPEs
        (``scopes``; ``metrics`` with band coverage) and the rows that could not be mapped
        (``skipped_rows``), as ``llmroof validate --json`` reports them.
    """
    if not isinstance(refit, bool):
        raise TypeError(f"refit must be a bool (got {type(refit).__name__})")
    return _core.calibrate.validate_report(_points_files(path), refit, None if report is None else os.fspath(report))


# ---- sweeps -------------------------------------------------------------------


def _as_list(name: str, value: object) -> list[Any]:
    if isinstance(value, (str, Model, Device)):
        return [value]
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"{name} must not be empty")
        return list(value)
    raise TypeError(f"{name} must be an id, an object or a list of them (got {type(value).__name__})")


def _grid(**axes: object) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    points = 1
    for name, v in axes.items():
        if isinstance(v, (str, bytes, dict)):
            raise TypeError(f"{name} must be a number or a sequence of numbers (got {type(v).__name__})")
        try:
            a = np.atleast_1d(np.asarray(v, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} must be a number or a sequence of numbers ({e})") from None
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"{name} must be a number or a non-empty 1-D sequence")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite")
        points *= a.size
        if points > 10_000_000:
            raise ValueError(f"a sweep must have at most 1e7 grid points (got {points:g} by {name})")
        arrays[name] = a
    mesh = np.meshgrid(*arrays.values(), indexing="ij")
    return {name: np.ascontiguousarray(m.ravel()) for name, m in zip(arrays, mesh)}


def _sweep(
    phase: str,
    model: object,
    device: object,
    axes: dict[str, object],
    *,
    weights: str | Sequence[str] | None = None,
    kv: str | Sequence[str] | None = None,
    threads: int | None = None,
    **deployment: Any,
) -> pd.DataFrame:
    """A sweep's frame: the combination labels (model, device, weights, kv, in
    that order), then the core's columns (the grid axes repeated per
    combination, the results, the flags). Each combination is the deployment
    decode and prefill compile (a file's own formats and bytes, the layout,
    the engine): ``deployment`` are :func:`_compile`'s keywords, with its
    defaults. The one place the sweeps' own keywords (formats as lists,
    threads) get theirs."""
    import pandas as pd

    models = [_model(x) for x in _as_list("model", model)]
    # Each device with its count ("h100-sxm:4"), as the command's --device takes it.
    devs = [(_device(base), n) for base, n in (_device_count(x) for x in _as_list("device", device))]
    ws: list[str | None] = [None] if weights is None else [_format_name("weights", x) for x in _as_list("weights", weights)]
    kvs: list[str | None] = [None] if kv is None else [_format_name("kv", x) for x in _as_list("kv", kv)]
    x, y = _grid(**axes).values()
    combos = [(m, d, w, k) for m in models for d in devs for w in ws for k in kvs]
    compiled = [_compile(m, d, weights=w, kv=k, **({**deployment, "devices": n} if n else deployment))
                for m, (d, n), w, k in combos]
    out = _core.sweeps.sweep(phase, compiled, x, y, _threads(threads))
    # The core's number columns are the rows of one block: the frame holds it
    # as its one float block, uncopied (a million points: ~12 ms less).
    frame = pd.DataFrame(out["values"].T, columns=out["names"], copy=False)
    labels_of = [(m.id, f"{d.id}:{n}" if n else d.id, c.weights, _formats(m, w, k)[1])
                 for (m, (d, n), w, k), c in zip(combos, compiled)]
    for pos, name in enumerate(["model", "device", "weights", "kv"]):
        # Categorical columns: one small table of labels plus integer codes,
        # so a million-row frame costs no million Python strings. The core's
        # rows run combination by combination, x.size points each.
        labels = [c[pos] for c in labels_of]
        categories = list(dict.fromkeys(labels))
        codes = np.repeat(np.asarray([categories.index(x) for x in labels], dtype=np.int32), x.size)
        frame.insert(pos, name, pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(categories))))
    for name, flag in out["flags"].items():
        frame[name] = flag
    return frame


# What each sweep keyword means (as _OPTION_DOCS for the single questions).
_SWEEP_DOCS = (
    ("weights, kv", """Formats, one or a list each (default: a model file's own formats, else
the published checkpoint's, else bf16); every combination is swept."""),
    ("lm_head, engine, devices, tp, pp, ep, dp_attention, nodes, link, inter_link", """As in :func:`decode`: each combination is the deployment
:func:`decode` and :func:`prefill` resolve (layout, links, engine profile,
kernel traits and memory settings)."""),
    ("efficiency", "Override fields of the engine's efficiency profile on each device (:class:`Efficiency`)."),
    ("threads", """Threads of the compiled sweep (default: one per CPU this process may use;
each thread takes at least 16,384 points, so smaller grids run on fewer)."""),
    ("memory_utilization, block_tokens", "The engine's memory settings that decide ``fits``; None: the engine's."),
)


def _threads(threads: int | None) -> int:
    """The core's thread count: by default the CPUs this process may run on."""
    if threads is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return _integer("threads", threads, minimum=1, maximum=4096)


@_takes(SweepDecodeOptions, source=(_compile, _sweep), docs=_SWEEP_DOCS)
def sweep_decode(
    *,
    model: ModelLike | Sequence[ModelLike],
    device: DeviceLike | Sequence[DeviceLike],
    batch: float | Sequence[float] | np.ndarray = 1,
    context: float | Sequence[float] | np.ndarray = 0,
    **options: Unpack[SweepDecodeOptions],
) -> pd.DataFrame:
    """Decode steps over the grid of every model x device x weights x kv x batch
    x context, computed in C++ with the GIL released, over threads.

    Parameters
    ----------
    model, device
        One or a list each: catalog ids or :class:`Model` / :class:`Device` objects.
    batch, context
        Sequences per step and cached tokens per sequence: a number or a 1-D
        sequence each (their grid is swept).
    {options}

    Returns
    -------
    pandas.DataFrame
        One row per point: ``model``, ``device``, ``weights``, ``kv``
        (categoricals), ``batch``, ``context``, ``tpot_s_bound``,
        ``tpot_s_estimate``, ``bytes_per_step``, ``weight_bytes_per_step``,
        ``kv_read_bytes_per_step``, ``flop_per_step``,
        ``tokens_per_s_per_user_estimate``, ``tokens_per_s_per_user_bound``,
        ``tokens_per_s_total_estimate``, ``power_w`` (all devices over the
        step: idle 13% of TDP plus the span weighted by its compute- and
        memory-bound time, as a plan's ``energy``; NaN without a TDP) and
        ``joules_per_token`` (per output token), then the bools ``fits`` (all
        ``batch`` sequences' KV fit beside the weights) and ``compute_bound``.
    """
    return _sweep("decode", model, device, {"batch": batch, "context": context}, **options)


@_takes(SweepOptions, source=(_compile, _sweep), docs=_SWEEP_DOCS)
def sweep_prefill(
    *,
    model: ModelLike | Sequence[ModelLike],
    device: DeviceLike | Sequence[DeviceLike],
    prompt: float | Sequence[float] | np.ndarray = 2048,
    cached: float | Sequence[float] | np.ndarray = 0,
    **options: Unpack[SweepOptions],
) -> pd.DataFrame:
    """Prefills over the grid of every model x device x weights x kv x prompt x
    cached: :func:`sweep_decode`'s grid for the prompt.

    Parameters
    ----------
    prompt, cached
        New tokens and tokens already cached before them: a number or a 1-D
        sequence each (their grid is swept).
    model, device
        As in :func:`sweep_decode`.
    {options}

    Returns
    -------
    pandas.DataFrame
        One row per point: the labels, ``prompt``, ``cached``,
        ``ttft_s_bound``, ``ttft_s_estimate``, ``flop``, ``bytes``,
        ``prefill_tokens_per_s_estimate``, ``power_w`` and ``joules_per_token``
        (per prompt token; NaN without a TDP).
    """
    return _sweep("prefill", model, device, {"prompt": prompt, "cached": cached}, **options)
