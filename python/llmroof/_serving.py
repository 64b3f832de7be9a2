"""Serving questions of one deployment or a pool: :func:`plan`, :func:`users`,
:func:`recommend` and :class:`Estimator` (a deployment resolved once). The
reports are compiled classes (``_core.reports``, ``_core.memory_plan``): their
properties, docstrings and frames come from the command's report tables."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from . import _core
from ._catalog import Device, DeviceLike, Model, ModelLike, Speculative
from ._checks import Tokens, _integer, _number, _text, _tokens
from ._core.memory_plan import MemoryPlan
from ._core.reports import Phase, Plan, Recommendation, Users
from ._fields import Efficiency  # noqa: F401 (named by the shown keywords' type hints)
from ._options import EngineOptions, PlanLoad, PlanOptions, PriceOptions, UsersOptions
from ._resolve import (
    _acceptance,
    _compile,
    _device,
    _draft,
    _engine_settings,
    _format_name,
    _model,
    _plan_args,
    _prefix_args,
    _price_args,
    _speculative,
)
from ._signature import _takes

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Unpack
else:
    from ._hints import *  # noqa: F403 (Unpack and a lazy pd, for typing.get_type_hints)


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
    bought = False  # a purchase price on some kind (what years amortise)
    for dev, count in _pool(pool):
        _, h, b = prices.get(dev.id, ("", None, None))
        seen.add(dev.id)
        bought = bought or b is not None
        entries.append(_core.recommend.PoolEntry(
            device=dict(dev.fields), count=count,
            per_node=0 if per_node is None else _integer("per_node", per_node, minimum=1, maximum=1024),
            per_device_hour=h, purchase=b, years=None if years is None or b is None else _number("years", years, minimum=0),
            electricity=None if electricity is None else _number("electricity", electricity, minimum=0),
            pue=None if pue is None else _number("pue", pue, minimum=0)))
    for key, (name, _, _) in prices.items():
        if key not in seen:
            raise ValueError(f"price names '{name}', which is not in pool")
    if years is not None and not bought:
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
    request = _core.recommend.Request(
        models=compiled, labels=labels, pool=entries,
        users=None if users is None else _number("users", users, minimum=1),
        rate=None if rate is None else _number("rate", rate, minimum=0),
        context=_tokens("context", context, minimum=0), prompt=0 if prompt is None else _tokens("prompt", prompt, minimum=0),
        output=_number("output", output, minimum=1), prefix=shared["prefix"], prefix_hit=shared["prefix_hit"],
        ttft=_number("ttft_target_s", ttft_target_s, minimum=0),
        tps=_number("min_tokens_per_s", min_tokens_per_s, minimum=0),
        max_cost=_number("max_cost_per_million", max_cost_per_million, minimum=0),
        max_joules=_number("max_joules_per_token", max_joules_per_token, minimum=0),
        budget=_number("budget", budget, minimum=0),
        engines=[] if engines is None else [_text("engines", e) for e in ([engines] if isinstance(engines, str) else engines)],
        engine_options=settings, kv=[] if kv is None else [_format_name("kv", kv)],
        formats=weights is None and "formats" not in parts, replicas="replicas" not in parts,
        offload="offload" not in parts, disaggregated="pd" not in parts, speculation="mtp" not in parts,
        threads=_integer("threads", threads, minimum=0, maximum=4096))
    return _core.recommend.report(request)


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
