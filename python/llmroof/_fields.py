"""What a caller's fields say (a custom model's or device's, an efficiency
profile) and what a model file says (its module formats and tensors), as
typed dicts. This module imports nothing of the package: the catalog objects
(``_catalog``) and the options (``_options``) build on it.

The reports' own keys are not typed here: they are the compiled classes'
properties (``_core.reports``)."""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = [
    "DeviceFields",
    "Efficiency",
    "ModelFields",
    "ModelSource",
    "ModuleFormat",
    "ModuleFormats",
    "RoutingSample",
    "TensorTotal",
    "Tensors",
]


class ModelFields(TypedDict, total=False):
    """The fields of an architecture (:attr:`Model.fields`, the keywords of
    :meth:`Model.custom`): sizes as config.json names them, the attention,
    FFN and bias variants, MLA, linear-attention and MoE dimensions, and
    what the catalog knows of the model. A catalog or file model has them
    all; a custom one takes the defaults for those it leaves out."""

    id: str
    name: str
    family: str
    source: str
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    ffn_size: int
    vocab_size: int
    attention: Literal["gqa", "mla"]
    gated_ffn: bool
    tied_embeddings: bool
    qkv_bias: bool
    o_bias: bool
    mlp_bias: bool
    lm_head_bias: bool
    qk_norm: bool
    attn_output_gate: bool
    attention_sinks: bool
    norm_bias: bool
    norms_per_layer: int
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    linear_num_key_heads: int
    linear_num_value_heads: int
    linear_key_head_dim: int
    linear_value_head_dim: int
    linear_conv_kernel: int
    num_experts: int
    experts_per_token: int
    shared_experts: int
    expert_ffn: int
    shared_expert_ffn: int
    first_dense_layers: int
    mtp_layers: int
    router_bias: bool
    expert_bias: bool
    shared_expert_gate: bool
    layer_kinds: list[str]
    sliding_window: int
    max_context: int
    published_total_b: float
    published_active_b: float
    aliases: list[str]
    global_kv_heads: int
    global_head_dim: int
    global_k_is_v: bool


class DeviceFields(TypedDict, total=False):
    """The fields of a device in base units (:attr:`Device.fields`, the
    keywords of :meth:`Device.custom`: ``memory_bytes``,
    ``bandwidth_bytes_per_s`` and ``bf16_flops_per_s`` at least)."""

    id: str
    name: str
    vendor: str
    family: str
    device_class: str
    memory_type: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    fp32_flops_per_s: float
    bf16_flops_per_s: float
    fp8_flops_per_s: float
    int8_ops_per_s: float
    fp4_flops_per_s: float
    interconnect: str
    link_bandwidth_bytes_per_s: float
    tdp_w: float
    aliases: list[str]
    source: str


class ModuleFormat(TypedDict):
    """A numeric format as a model file stores a module: its id, bits per
    weight (scales included) and the math format its kernels run in."""

    name: str
    bits: float
    math: str


class ModuleFormats(TypedDict):
    """The format of each module of a model read from a file (:attr:`Model.formats`)."""

    weights: ModuleFormat
    attention: ModuleFormat
    ffn: ModuleFormat
    experts: ModuleFormat
    embedding: ModuleFormat
    lm_head: ModuleFormat
    kv: ModuleFormat


class TensorTotal(TypedDict):
    """Bytes and elements of a group of tensors."""

    bytes: float
    elements: float


class Tensors(TypedDict):
    """What a GGUF or safetensors file's tensors hold: their count, bytes and
    elements, by component (``attention``, ``ffn``, ...) and by stored type."""

    count: int
    bytes: float
    elements: float
    by_component: dict[str, TensorTotal]
    by_type: dict[str, TensorTotal]


class ModelSource(TypedDict):
    """Where a model read from a file came from (:attr:`Model.source`): the
    path, the family, whether it is quantized, the vision tower's parameters
    (counted apart, not decoded), what was assumed, each module's format and,
    for GGUF and safetensors, the tensors (None for a config.json)."""

    path: str
    family: str
    quantized: bool
    vision_params: float
    warnings: list[str]
    formats: ModuleFormats
    tensors: Tensors | None


class RoutingSample(TypedDict):
    """What :func:`simulate_routing` returns: per layer, over the trials."""

    mean_distinct: float
    variance_distinct: float
    mean_busiest_rank_tokens: float
    mean_busiest_rank_experts: float


class Efficiency(TypedDict, total=False):
    """Fields of an efficiency profile (``efficiency=`` of every estimate):
    each one given overrides the engine's profile on the device; what
    ``llmroof list devices`` and ``default_profile`` print."""

    name: str
    memory: float
    compute: float
    compute_half_rows: float
    attention: float
    per_kernel_s: float
    per_launch_s: float
    per_step_s: float
    per_request_s: float
    kv_memory: float
    low_precision: float
    stream_cap_bytes_per_s: float
    fp16_accumulate: bool
    fused_attention: bool
    quantized_path: str
    host_overlap: str
    scheduler_steps: int
    prefill_chunk_tokens: float
    per_hop_s: float
    per_sequence_s: float
    kv_stream: float
    attention_floor_s: float
    expert_floor_s: float
    low_precision_memory: float
    collective_latency_s: float
    source: str
    points: int
    at_limit: list[str]  # derived from the values (read back, never set)
