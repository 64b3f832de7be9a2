"""One deployment's phases and parts: :func:`decode`, :func:`prefill` (with
a cache of catalog deployments), :func:`kv_cache`, the MoE questions
(:func:`moe`, :func:`moe_table`, :func:`expected_distinct_experts`,
:func:`simulate_routing`, :func:`zipf_popularity`), :func:`speculate` and
:func:`compare`."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Callable, Sequence, Union, cast

import numpy as np

from . import _core
from ._catalog import Device, DeviceLike, Model, ModelLike
from ._checks import Tokens, _floats, _integer, _number, _text, _tokens
from ._core.reports import Comparison, KvCache, MoeReport, Phase, Speculation
from ._fields import Efficiency, RoutingSample  # noqa: F401 (Efficiency: named by the shown keywords' type hints)
from ._options import CompareOptions, DeploymentOptions
from ._resolve import _acceptance, _compile, _draft, _format_name, _model, _names_a_file
from ._signature import _takes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import Unpack
else:
    from ._hints import *  # noqa: F403 (Unpack and a lazy pd, for typing.get_type_hints)


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
