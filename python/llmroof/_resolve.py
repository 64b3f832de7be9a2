"""Turning a caller's arguments into what the core takes: models, devices and
formats resolved as the command resolves them, the compiled deployment
(``_compile``: where the deployment keywords get their defaults) and a plan's
load as the keywords of ``_core.deployment.PlanRequest`` (``_plan_args``:
where the load's get theirs), each checked. It imports the catalog objects
and checks, and nothing that imports it back."""

from __future__ import annotations

import os
import warnings
from typing import Any, Mapping, Sequence, TypedDict

from . import _core
from ._catalog import Device, DeviceLike, Format, Model, ModelLike, Speculative
from ._checks import Tokens, _flag, _floats, _integer, _number, _text, _tokens
from ._fields import Efficiency, ModuleFormats


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


def _draft(draft_model: ModelLike, options: Mapping[str, Any]) -> _core.deployment.Deployment:
    """A draft model's formats (the deployment's weights, kv, lm_head and
    engine options), without a device: the core lays it out beside the target."""
    formats = {k: v for k, v in options.items() if k in ("weights", "kv", "lm_head", "engine")}
    return _compile(_model(draft_model), None, **formats)


def _acceptance(acceptance: float | Sequence[float] | None) -> list[float]:
    """One acceptance for all positions, one per position, or none (the default), checked."""
    single = isinstance(acceptance, (int, float)) and not isinstance(acceptance, bool)
    return [] if acceptance is None else _floats("acceptance", [acceptance] if single else acceptance)
