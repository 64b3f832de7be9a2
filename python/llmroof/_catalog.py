"""The catalog objects: formats, devices, models (their fields and
parameters) and the speculative setup a plan takes. They hold the compiled
catalog's dicts; nothing here imports the modules of the functions."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, NoReturn, Sequence, Union, cast

from . import _core
from ._checks import GB, GIB, _text
from ._fields import DeviceFields, ModelFields, ModelSource, ModuleFormats

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Unpack
elif sys.version_info >= (3, 11):
    from typing import Unpack
else:  # For typing.get_type_hints of Model.custom and Device.custom (3.9, 3.10).
    try:
        from typing_extensions import Unpack
    except ImportError:  # pragma: no cover
        pass

# ---- catalog objects --------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """A numeric storage format: bits per element (block scales included)."""

    name: str
    bits: float
    math: str
    mix: bool
    description: str
    source: str

    @classmethod
    def get(cls, name: str) -> Format:
        """Look a format up by name (case-insensitive); ValueError lists the closest."""
        return cls(**_core.catalog.find_format(_text("format", name)))

    @staticmethod
    def names() -> list[str]:
        """Every built-in format name."""
        return list(_core.catalog.format_names())

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __repr__(self) -> str:
        return f"Format({self.name!r}, {self.bits:g} bits, computes in {self.math})"


class _Fields(Dict[str, Any]):
    """The fields of a Model or Device: a dict (what the compiled core reads)
    that refuses edits, so a frozen Model is frozen, and hashes by value, so
    models and devices can key a dict or an lru_cache."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("fields are read-only: build a new one, e.g. Model.custom(**{**m.fields, 'num_layers': 2})")

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        h: int | None = self.__dict__.get("hash")
        if h is None:  # the fields cannot change, so neither can their hash
            h = hash(json.dumps(self, sort_keys=True))
            self.__dict__["hash"] = h
        return h

    def __reduce__(self) -> tuple[type[_Fields], tuple[dict[str, Any]]]:
        return (_Fields, (dict(self),))


@dataclass(frozen=True)
class Device:
    """An accelerator: capacity (bytes), bandwidth (B/s), peaks (FLOP/s), source.

    ``Device(memory="24GiB", bandwidth="936GB/s", bf16="71TF", int8="284TOPS")``
    builds one of your own, like ``--device custom:...``: every value needs its
    unit (B..TiB, B/s..TB/s, TF/TFLOPS/TOPS, W); memory, bandwidth and fp32 or
    bf16 are required, other rates fall back to bf16 then fp32 and ``source``
    says so. ValueError names the field.
    """

    fields: dict[str, Any] = field(repr=False)

    def __init__(
        self,
        fields: dict[str, Any] | str | None = None,
        *,
        memory: str | None = None,
        bandwidth: str | None = None,
        fp32: str | None = None,
        bf16: str | None = None,
        fp8: str | None = None,
        int8: str | None = None,
        fp4: str | None = None,
        tdp: str | None = None,
        link: str | None = None,
        device_class: str | None = None,
        vendor: str | None = None,
        memory_type: str | None = None,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        named: dict[str, object] = {
            "memory": memory, "bandwidth": bandwidth, "fp32": fp32, "bf16": bf16, "fp8": fp8,
            "int8": int8, "fp4": fp4, "tdp": tdp, "link": link, "class": device_class,
            "vendor": vendor, "memory_type": memory_type, "name": name, "id": id,
        }
        given = {k: v for k, v in named.items() if v is not None}
        if isinstance(fields, str):
            # Device("h100-sxm"), Device("custom:memory=24GiB,...") or a device JSON
            # file: what the command's --device takes.
            if given:
                raise TypeError("Device takes either a device spec string or keyword arguments, not both")
            object.__setattr__(self, "fields", _Fields(_core.catalog.device_from_spec(fields)))
            return
        if fields is not None:
            if given:
                raise TypeError("Device takes either a fields dict or keyword arguments, not both")
            object.__setattr__(self, "fields", _Fields(fields))
            return
        parts = []
        for key, value in given.items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise TypeError(
                    f"custom device: {key} must be a string such as '24GiB' (got {type(value).__name__})"
                )
            text = str(value)
            if "," in text or "=" in text:
                raise ValueError(f"custom device: {key} must not contain ',' or '=' (got {text!r})")
            parts.append(f"{key}={text}")
        object.__setattr__(self, "fields", _Fields(_core.catalog.parse_custom_device("custom:" + ",".join(parts))))

    @classmethod
    def get(cls, id: str) -> Device:
        """A catalog device by id or vendor name (``h100-sxm``, ``"H100 80GB HBM3"``,
        ``"M3 Max 40-core"``); ValueError lists the candidates of an ambiguous
        name, or the closest ids."""
        return cls(_core.catalog.find_device(_text("device", id)))

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> Device:
        """A device from a JSON file with the fields ``llmroof list devices --json``
        prints for one device (bytes, B/s, FLOP/s; strings with units work too)."""
        return cls(_core.catalog.read_device_json(os.fspath(path)))

    @classmethod
    def custom(cls, **fields: Unpack[DeviceFields]) -> Device:
        """A device of your own from base-unit fields: ``memory_bytes``,
        ``bandwidth_bytes_per_s``, ``bf16_flops_per_s`` at least. ValueError names
        the first bad field."""
        return cls(_core.catalog.validate_device(fields))

    @staticmethod
    def match(name: str) -> list[str]:
        """Ids a device name matches: one when it resolves, several when ambiguous."""
        return list(_core.catalog.match_devices(_text("device", name)))

    @staticmethod
    def ids() -> list[str]:
        return list(_core.catalog.device_ids())

    @property
    def id(self) -> str:
        return str(self.fields["id"])

    @property
    def memory_bytes(self) -> float:
        return float(self.fields["memory_bytes"])

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return float(self.fields["bandwidth_bytes_per_s"])

    def to_dict(self) -> dict[str, Any]:
        return dict(self.fields)

    def __repr__(self) -> str:
        f = self.fields
        return (
            f"Device({f['id']!r}, {f['memory_bytes'] / GIB:.0f} GiB, "
            f"{f['bandwidth_bytes_per_s'] / GB:.0f} GB/s, "
            f"bf16 {f['bf16_flops_per_s'] / 1e12:.1f} TFLOP/s)"
        )


@dataclass(frozen=True)
class Parameters:
    """Parameter counts by component (elements); ``active`` excludes the
    embedding table (a lookup reads one row)."""

    embedding: float
    attention: float
    dense_ffn: float
    routed_experts: float
    shared_experts: float
    router: float
    norms: float
    lm_head: float
    mtp: float
    total: float
    active: float
    active_with_embedding: float

    def to_dict(self) -> dict[str, float]:
        return dict(self.__dict__)

    def __repr__(self) -> str:
        return (
            f"Parameters(total={self.total / 1e9:.2f}B, active={self.active / 1e9:.2f}B "
            f"({100 * self.active / self.total:.1f}%))"
        )


@dataclass(frozen=True)
class Model:
    """A decoder-only architecture (catalog entry, local file, or your own fields).

    Models read from files also carry ``source``: the path, warnings about
    what was assumed, the weight format of each module (from
    ``quantization_config`` or the tensors' types), the vision tower's
    parameters (counted apart, not decoded) and, for GGUF and safetensors,
    the exact bytes of every component.
    """

    fields: dict[str, Any] = field(repr=False)
    source: ModelSource | None = field(default=None, repr=False, compare=False)
    loaded_weight_bytes: float | None = field(default=None, repr=False, compare=False)
    #: The catalog name as asked (``"Qwen/Qwen3-32B-AWQ"``): a quantization
    #: word in it selects the weight format when none is named.
    asked: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", _Fields(self.fields))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Model:
        """Read a config.json, a folder, a .gguf or a .safetensors (index) file.

        Raises ValueError naming the file, the key or offset, and the reason."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path (got {type(path).__name__})")
        r = _core.catalog.read_model(os.fspath(path))
        return cls(r["fields"], r["source"], float(r["loaded_weight_bytes"]))

    @classmethod
    def from_hf_config(cls, path: str | os.PathLike[str]) -> Model:
        """A HuggingFace config.json (or the folder holding it)."""
        return cls.from_file(path)

    @classmethod
    def from_gguf(cls, path: str | os.PathLike[str]) -> Model:
        """The header of a .gguf file: architecture and exact bytes per component."""
        if not os.fspath(path).endswith(".gguf"):
            raise ValueError(f"{os.fspath(path)}: a GGUF file name ends in .gguf")
        return cls.from_file(path)

    @classmethod
    def from_safetensors(cls, path: str | os.PathLike[str]) -> Model:
        """A .safetensors file, a model.safetensors.index.json, or their folder,
        with the config.json beside them."""
        p = os.fspath(path)
        if not (p.endswith(".safetensors") or p.endswith(".index.json") or os.path.isdir(p)):
            raise ValueError(f"{p}: expected a .safetensors file, an index.json or a folder")
        return cls.from_file(path)

    @property
    def formats(self) -> ModuleFormats | None:
        """Weight format of each module, when the model came from a file."""
        return None if self.source is None else cast(ModuleFormats, json.loads(json.dumps(self.source["formats"])))

    @property
    def warnings(self) -> list[str]:
        return [] if self.source is None else list(self.source["warnings"])

    @classmethod
    def get(cls, id: str) -> Model:
        """A catalog model by id (``llama-3.1-8b``); ValueError lists the closest ids."""
        return cls(_core.catalog.find_model(_text("model", id)), asked=id)

    @classmethod
    def custom(cls, **fields: Unpack[ModelFields]) -> Model:
        """A model of your own from architecture fields (``num_layers``,
        ``hidden_size``, ``num_heads``, ``num_kv_heads``, ``head_dim``,
        ``ffn_size``, ``vocab_size``, ...). ValueError names the first bad field."""
        return cls(_core.catalog.validate_model(fields))

    @staticmethod
    def ids() -> list[str]:
        return list(_core.catalog.model_ids())

    @property
    def id(self) -> str:
        return str(self.fields["id"])

    def parameters(self) -> Parameters:
        """Exact parameter counts by component."""
        return Parameters(**_core.catalog.count_parameters(self.fields))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.fields)

    def __repr__(self) -> str:
        p = self.parameters()
        return f"Model({self.id!r}, {p.total / 1e9:.2f}B total, {p.active / 1e9:.2f}B active)"


ModelLike = Union[str, "os.PathLike[str]", Model]
DeviceLike = Union[str, Device]


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding for :func:`plan` and :func:`users`
    (``speculative=``), as the command's ``--spec``, ``--draft-tokens``,
    ``--accept`` and ``--draft-model``: the deployment decodes speculatively
    (its closed loop in draft + verify steps, the drafter's weights, KV and
    lookahead slots in its memory); the plan also gains a ``speculation``
    section, :func:`speculate`'s report at its users and context (speed with
    and without, the batch where it stops paying, the memory it costs).

    Parameters
    ----------
    method
        ``"mtp"``, ``"draft"``, ``"eagle"`` or ``"ngram"`` (see :func:`speculate`).
    draft_tokens
        Tokens drafted per step (k, 1-16).
    acceptance
        Conditional acceptance per draft position, or one value for all;
        None: the method's published default (MTP, EAGLE).
    draft_model
        The draft model of ``method="draft"``, on the plan's devices and options.
    """

    method: str = "mtp"
    draft_tokens: int = 1
    acceptance: float | Sequence[float] | None = None
    draft_model: ModelLike | None = None
