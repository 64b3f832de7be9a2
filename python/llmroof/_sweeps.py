"""Grids of decode steps and prefills over models, devices and formats,
computed in C++ over threads, as DataFrames: :func:`sweep_decode`,
:func:`sweep_prefill`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _core
from ._catalog import Device, DeviceLike, Model, ModelLike
from ._checks import _integer
from ._fields import Efficiency  # noqa: F401 (named by the shown keywords' type hints)
from ._options import SweepDecodeOptions, SweepOptions
from ._resolve import _compile, _device, _device_count, _format_name, _formats, _model
from ._signature import _takes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import Unpack
else:
    from ._hints import *  # noqa: F403 (Unpack and a lazy pd, for typing.get_type_hints)


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
