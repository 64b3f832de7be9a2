"""What a public function shows of the keywords it takes as ``**options:
Unpack[...]``: its signature with their defaults (from ``_compile`` and
``_plan_args``, where they are decided), its type hints, the docs of each
keyword in its docstring, and Python's refusal of a keyword it does not take."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar, cast

from ._resolve import _compile, _plan_args


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
