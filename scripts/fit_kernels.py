#!/usr/bin/env python3
"""Fit the physics of each kernel family to AIConfigurator's kernel database.

Development-time only: reads the parquet files of the kernel database
(AIConfigurator 0.12.0, Apache-2.0; data release 4) with pandas/pyarrow and
writes the fitted parameters as rows of ``src/engine/kernel_fits.inc`` plus a
residual table in Markdown (docs/calibration.md quotes it). Nothing in the
build, the tests or the library reads the parquet files.

    python scripts/fit_kernels.py KERNEL_DB_DIR [--write-rows src/engine/kernel_fits.inc]
                                                [--write-report report.md]

KERNEL_DB_DIR holds ``<system>/<op>/<framework>/<version>/*.parquet``.

Each family is a roofline with few parameters; each time is the one measured
call (``latency``, ms) of the engine's own kernel on one GPU:

- GEMM (bf16, fp8 per-tensor; fp8-block and nvfp4 reported):
  t = t0 + max(2MNK / (P * eta_c * M / (M + M_half)), bytes / (B * eta_m)),
  bytes = N K w + 2 (M K + M N) (weights in their format, 16-bit activations).
  low_precision = eta_c(fp8) / eta_c(bf16), as efficiency_profile has it.
- generation attention: t = t0 + bytes / (B * eta_kv), bytes = B (ctx + 1)
  kv_heads head_dim 2 w_kv + 4 B heads head_dim (query and output); ctx is
  capped by the window. attention_memory = eta_kv / eta_m of the GEMMs.
- context attention: t = t0 + F / (P * eta_a * L / (L + L_half)),
  F = 4 head_dim heads B pairs, pairs = sum_i min(i, window) (causal).
- MoE grouped GEMM (balanced routing): the experts one rank holds and the
  tokens routed to it, t = t0 + max(F / (P eta_c s), bytes / (B eta_e)),
  touched = min(E / ep, T k / ep) experts, s = r / (r + M_half) with r
  tokens per expert and M_half the system's bf16 GEMM fit (the shape the
  roofline prices every GEMM with).
- all-reduce (the engine's graph-captured custom kernel, NCCL for TensorRT-LLM):
  t = alpha + 2 (n - 1) / n S / (link * eta_link).

Leave one device out: the device's times predicted from its datasheet roofs
and the median of the other devices' fitted parameters (the dimensionless
shares and the fixed times), which is what a device without measurements gets.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

# Datasheet roofs per system, from the repository's own device catalog
# (src/hardware/catalog_devices.inc, data/accelerators.csv): bandwidth TB/s, dense
# bf16 / fp8 / fp4 TFLOPS, and the per-direction link bandwidth GB/s
# (src/hardware/links.cpp: NVLink 3 300, NVLink 4 450, NVLink 5 900; PCIe 4.0 x16 32,
# PCIe 5.0 x16 64, x8 32).
@dataclass(frozen=True)
class Roofs:
    device: str
    bw: float
    bf16: float
    fp8: float
    fp4: float
    link: float


ROOFS = {
    "a100_sxm": Roofs("a100-80gb-sxm", 2.039, 312.0, 0.0, 0.0, 300.0),
    "h100_sxm": Roofs("h100-sxm", 3.35, 989.5, 1979.0, 0.0, 450.0),
    "h200_sxm": Roofs("h200", 4.8, 989.5, 1979.0, 0.0, 450.0),
    "b200_sxm": Roofs("b200", 8.0, 2250.0, 4500.0, 9000.0, 900.0),
    "gb200": Roofs("gb200", 8.0, 2500.0, 5000.0, 10000.0, 900.0),
    "l40s": Roofs("l40s", 0.864, 362.05, 733.0, 0.0, 32.0),
    # The server edition (600 W, 2,430 MHz) of the catalog's workstation card.
    "rtx_pro_6000_server": Roofs("rtx-pro-6000-blackwell", 1.792, 500.0, 1000.0, 2000.0, 64.0),
    "b60": Roofs("arc-pro-b60", 0.456, 98.3, 0.0, 0.0, 32.0),
}

FRAMEWORKS = ("vllm", "sglang", "trtllm")
ENGINE_OF = {"vllm": "vllm", "sglang": "sglang", "trtllm": "tensorrt-llm"}


def with_defaults(d: pd.DataFrame, **defaults: object) -> pd.DataFrame:
    """Older collections lack some columns (no window: 0)."""
    for c, v in defaults.items():
        if c not in d:
            d[c] = v
    return d


def latest(root: str, system: str, op: str, framework: str, name: str) -> str | None:
    """The newest version's file of a family (versions compared numerically)."""
    files = glob.glob(os.path.join(root, system, op, framework, "*", name))
    if not files:
        return None

    def key(path: str) -> tuple[int, ...]:
        v = path.split(os.sep)[-2]
        parts = []
        for p in v.replace("rc", ".").replace("post", ".").replace("dev", ".").split("."):
            parts.append(int(p) if p.isdigit() else 0)
        return tuple(parts)

    return max(files, key=key)


def sigmoid(x: np.ndarray | float) -> np.ndarray | float:
    return 1 / (1 + np.exp(-x))


def logit(p: float) -> float:
    return math.log(p / (1 - p))


@dataclass
class Fit:
    names: tuple[str, ...]
    values: np.ndarray
    sd: np.ndarray
    n: int
    mdape: float
    tile: float = 0


def fit_family(model, x0: np.ndarray, names: tuple[str, ...], data: pd.DataFrame, roofs: Roofs,
               transforms: tuple[str, ...]) -> Fit:
    """Least squares on log(pred / measured); parameters through logit (shares)
    or log (times, rows); standard errors from sigma^2 (J^T J)^-1 carried
    through the transforms."""
    meas = data["latency"].to_numpy()

    def to_params(z: np.ndarray) -> np.ndarray:
        return np.array([sigmoid(v) if t == "share" else math.exp(v) for v, t in zip(z, transforms)])

    def residual(z: np.ndarray) -> np.ndarray:
        return np.log(model(to_params(z), data, roofs)) - np.log(meas)

    z0 = np.array([logit(v) if t == "share" else math.log(v) for v, t in zip(x0, transforms)])
    res = least_squares(residual, z0, loss="soft_l1", f_scale=0.1)
    p = to_params(res.x)
    r = residual(res.x)
    dof = max(1, len(r) - len(p))
    sigma2 = float(np.sum(r**2) / dof)
    try:
        cov = np.linalg.inv(res.jac.T @ res.jac) * sigma2
        sd_z = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:
        sd_z = np.full(len(p), np.nan)
    deriv = np.array([v * (1 - v) if t == "share" else v for v, t in zip(p, transforms)])
    return Fit(names, p, sd_z * deriv, len(r), mdape(model(p, data, roofs), meas))


def mdape(pred: np.ndarray, meas: np.ndarray) -> float:
    return float(np.median(np.abs(pred / meas - 1)))


# ---------------------------------------------------------------- GEMM


def gemm_model(p: np.ndarray, d: pd.DataFrame, roofs: Roofs) -> np.ndarray:
    eta_c, m_half, eta_m, t0 = p
    m, n, k = d["m"].to_numpy(float), d["n"].to_numpy(float), d["k"].to_numpy(float)
    peak = d["peak"].to_numpy(float)
    w = d["w"].to_numpy(float)
    flop = 2 * m * n * k
    comp = flop / (peak * 1e12 * eta_c * m / (m + m_half)) * 1e3
    mem = (n * k * w + 2 * (m * k + m * n)) / (roofs.bw * 1e12 * eta_m) * 1e3
    return t0 + np.maximum(comp, mem)


GEMM_DTYPES = {"bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "fp8_block": ("fp8", 1.0), "nvfp4": ("fp4", 0.5625)}


def gemm_rows(root: str, system: str, framework: str, roofs: Roofs) -> pd.DataFrame | None:
    f = latest(root, system, "gemm", framework, "gemm_perf.parquet")
    if f is None:
        return None
    d = pd.read_parquet(f)
    # The fastest of the framework's kernels for each shape: what its dispatch
    # picks where it autotunes, and an upper bound of its speed elsewhere.
    d = d.groupby(["gemm_dtype", "m", "n", "k"], as_index=False)["latency"].min()
    d = d[d["gemm_dtype"].isin(GEMM_DTYPES)]
    d["roof"] = d["gemm_dtype"].map(lambda t: GEMM_DTYPES[t][0])
    d["w"] = d["gemm_dtype"].map(lambda t: GEMM_DTYPES[t][1]).astype(float)
    d["peak"] = d["roof"].map({"bf16": roofs.bf16, "fp8": roofs.fp8, "fp4": roofs.fp4}).astype(float)
    d = d[(d["peak"] > 0) & (d["latency"] > 0)]
    return d


def fit_gemm(d: pd.DataFrame, roofs: Roofs) -> dict[str, Fit]:
    out: dict[str, Fit] = {}
    bf = d[d["gemm_dtype"] == "bfloat16"]
    if len(bf) < 20:
        return out
    out["bfloat16"] = fit_family(gemm_model, np.array([0.7, 64, 0.8, 0.008]),
                                 ("eta_c", "m_half", "eta_m", "t0_ms"), bf, roofs,
                                 ("share", "log", "share", "log"))
    base = out["bfloat16"].values
    for dtype in ("fp8", "fp8_block", "nvfp4"):
        q = d[d["gemm_dtype"] == dtype]
        if len(q) < 20:
            continue
        # The 16-bit fit's rows and fixed time; the format's own compute share
        # (low_precision = its eta_c over bf16's) and streaming share.
        def model(p, dd, rr, base=base):
            return gemm_model(np.array([p[0], base[1], p[1], base[3] * p[2]]), dd, rr)

        f = fit_family(model, np.array([0.5, 0.8, 1.0]), ("eta_c", "eta_m", "t0_ratio"), q, roofs,
                       ("share", "share", "log"))
        out[dtype] = f
    return out


# ---------------------------------------------------------------- attention

KV_BYTES = {"bfloat16": 2.0, "float16": 2.0, "fp8": 1.0, "int8": 1.0, "nvfp4": 0.5625}


def gen_attn_model(p: np.ndarray, d: pd.DataFrame, roofs: Roofs) -> np.ndarray:
    eta_kv, t0 = p
    return t0 + d["bytes"].to_numpy(float) / (roofs.bw * 1e12 * eta_kv) * 1e3


def gen_attn_rows(root: str, system: str, framework: str) -> pd.DataFrame | None:
    f = latest(root, system, "attention", framework, "generation_attention_perf.parquet")
    if f is None:
        return None
    d = with_defaults(pd.read_parquet(f), window_size=0, isl=1, kv_cache_dtype="bfloat16")
    keys = ["batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "window_size"]
    d = d.groupby(keys, as_index=False)["latency"].min()
    d = d[d["kv_cache_dtype"].isin(KV_BYTES)]
    ctx = d["step"] + d["isl"]
    ctx = np.where(d["window_size"] > 0, np.minimum(ctx, d["window_size"]), ctx)
    w = d["kv_cache_dtype"].map(KV_BYTES).astype(float)
    b = d["batch_size"]
    d["bytes"] = b * ctx * d["num_key_value_heads"] * d["head_dim"] * 2 * w + 4 * b * d["num_heads"] * d["head_dim"]
    return d[d["latency"] > 0]


def ctx_attn_model(p: np.ndarray, d: pd.DataFrame, roofs: Roofs) -> np.ndarray:
    eta_a, l_half, t0 = p
    length = d["isl"].to_numpy(float)
    return t0 + d["flop"].to_numpy(float) / (roofs.bf16 * 1e12 * eta_a * length / (length + l_half)) * 1e3


def ctx_attn_rows(root: str, system: str, framework: str) -> pd.DataFrame | None:
    f = latest(root, system, "attention", framework, "context_attention_perf.parquet")
    if f is None:
        return None
    d = with_defaults(pd.read_parquet(f), window_size=0, kv_cache_dtype="bfloat16")
    keys = ["batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "window_size"]
    d = d.groupby(keys, as_index=False)["latency"].min()
    length = d["isl"].to_numpy(float)
    w = d["window_size"].to_numpy(float)
    full = length * (length + 1) / 2
    # Token i sees min(i, w) keys: w (w + 1) / 2 for the first w, then w each.
    windowed = np.where(length > w, w * (w + 1) / 2 + (length - w) * w, full)
    pairs = np.where(w > 0, windowed, full)
    d["flop"] = 4 * d["head_dim"] * d["num_heads"] * d["batch_size"] * pairs
    return d[d["latency"] > 0]


# ---------------------------------------------------------------- MoE


def moe_model(p: np.ndarray, d: pd.DataFrame, roofs: Roofs, half: float = 64) -> np.ndarray:
    """The experts' shape is the GEMMs': r / (r + M_half), r tokens per expert."""
    eta_c, eta_e, t0 = p
    per_expert = d["tpe"].to_numpy(float)
    share = per_expert / (per_expert + half)
    comp = d["flop"].to_numpy(float) / (d["peak"].to_numpy(float) * 1e12 * eta_c * share)
    mem = d["bytes"].to_numpy(float) / (roofs.bw * 1e12 * eta_e)
    return t0 + np.maximum(comp, mem) * 1e3


MOE_DTYPES = {"float16": ("bf16", 2.0), "bfloat16": ("bf16", 2.0), "fp8": ("fp8", 1.0), "fp8_block": ("fp8", 1.0),
              "nvfp4": ("fp4", 0.5625), "w4afp8": ("fp8", 0.5625)}


def moe_rows(root: str, system: str, framework: str, roofs: Roofs) -> pd.DataFrame | None:
    f = latest(root, system, "moe", framework, "moe_perf.parquet")
    if f is None:
        return None
    d = with_defaults(pd.read_parquet(f), moe_tp_size=1, moe_ep_size=1)
    if "distribution" in d:
        d = d[d["distribution"] == "balanced"]
    d = d[d["moe_dtype"].isin(MOE_DTYPES)]
    keys = ["moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size"]
    d = d.groupby(keys, as_index=False)["latency"].min()
    t, h = d["num_tokens"].astype(float), d["hidden_size"].astype(float)
    inter = d["inter_size"] / d["moe_tp_size"]
    local = d["num_experts"] / d["moe_ep_size"]
    routed = t * d["topk"] / d["moe_ep_size"]
    touched = np.maximum(1.0, np.minimum(local, routed))
    w = d["moe_dtype"].map(lambda x: MOE_DTYPES[x][1]).astype(float)
    d["tpe"] = routed / touched
    d["flop"] = 2 * routed * 3 * h * inter
    d["bytes"] = touched * 3 * h * inter * w + routed * (h + h) * 2
    d["peak"] = d["moe_dtype"].map(lambda x: {"bf16": roofs.bf16, "fp8": roofs.fp8, "fp4": roofs.fp4}[MOE_DTYPES[x][0]]).astype(float)
    return d[(d["peak"] > 0) & (d["latency"] > 0)]


# ---------------------------------------------------------------- all-reduce


def ar_model(p: np.ndarray, d: pd.DataFrame, roofs: Roofs) -> np.ndarray:
    alpha, eta_link = p
    n = d["num_gpus"].to_numpy(float)
    s = d["message_size"].to_numpy(float) * 2  # bf16 elements
    return alpha + 2 * (n - 1) / n * s / (roofs.link * 1e9 * eta_link) * 1e3


def ar_rows(root: str, system: str, framework: str) -> pd.DataFrame | None:
    f = latest(root, system, "comm", framework, "custom_allreduce_perf.parquet")
    if f is None:
        return None
    d = pd.read_parquet(f)
    if "kernel_source" in d and d["kernel_source"].str.contains("graph").any():
        d = d[d["kernel_source"].str.contains("graph")]
    d = d.groupby(["num_gpus", "message_size"], as_index=False)["latency"].min()
    return d[d["latency"] > 0]


# ---------------------------------------------------------------- driver


FAMILIES = {
    "gemm": None,  # handled specially (per dtype)
    "generation_attention": (gen_attn_rows, gen_attn_model, np.array([0.6, 0.01]), ("eta_kv", "t0_ms"), ("share", "log")),
    "context_attention": (ctx_attn_rows, ctx_attn_model, np.array([0.5, 512, 0.01]), ("eta_a", "l_half", "t0_ms"),
                          ("share", "log", "log")),
    "moe": (moe_rows, moe_model, np.array([0.5, 0.7, 0.02]), ("eta_c", "eta_e", "t0_ms"), ("share", "share", "log")),
    "all_reduce": (ar_rows, ar_model, np.array([0.01, 0.5]), ("alpha_ms", "eta_link"), ("log", "share")),
}


def load(root: str) -> dict[tuple[str, str, str], pd.DataFrame]:
    data: dict[tuple[str, str, str], pd.DataFrame] = {}
    for system, roofs in ROOFS.items():
        for fw in FRAMEWORKS:
            g = gemm_rows(root, system, fw, roofs)
            if g is not None:
                for dtype, part in g.groupby("gemm_dtype"):
                    data[(f"gemm_{dtype}", system, fw)] = part
            for fam, spec in FAMILIES.items():
                if spec is None:
                    continue
                reader = spec[0]
                rows = reader(root, system, fw, roofs) if fam == "moe" else reader(root, system, fw)
                if rows is not None and len(rows) >= 10:
                    data[(fam, system, fw)] = rows
    return data


def fit_all(data, systems):
    fits: dict[tuple[str, str, str], Fit] = {}
    for system in systems:
        roofs = ROOFS[system]
        for fw in FRAMEWORKS:
            parts = [data[k] for k in data if k[0].startswith("gemm_") and k[1] == system and k[2] == fw]
            if parts:
                for dtype, f in fit_gemm(pd.concat(parts), roofs).items():
                    fits[(f"gemm_{dtype}", system, fw)] = f
            for fam, spec in FAMILIES.items():
                if spec is None or (fam, system, fw) not in data:
                    continue
                _, model, x0, names, tr = spec
                if fam == "moe":
                    # The experts priced with the GEMMs' own shape (rows at
                    # half) and a share of their own, as the roofline does.
                    g = fits.get(("gemm_bfloat16", system, fw))
                    if g is None:
                        continue
                    half = float(g.values[1])
                    f = fit_family(lambda p, d, r, half=half: moe_model(p, d, r, half), x0, names,
                                   data[(fam, system, fw)], roofs, tr)
                    f.tile = half
                    fits[(fam, system, fw)] = f
                    continue
                fits[(fam, system, fw)] = fit_family(model, x0, names, data[(fam, system, fw)], roofs, tr)
    return fits


def predict(fam: str, params: np.ndarray, d: pd.DataFrame, roofs: Roofs, base: np.ndarray | None,
            tile: float = 64) -> np.ndarray:
    if fam == "gemm_bfloat16":
        return gemm_model(params, d, roofs)
    if fam.startswith("gemm_"):
        assert base is not None
        return gemm_model(np.array([params[0], base[1], params[1], base[3] * params[2]]), d, roofs)
    if fam == "moe":
        return moe_model(params, d, roofs, tile)
    return FAMILIES[fam][1](params, d, roofs)


def leave_one_device_out(data, fits):
    """MdAPE of each (family, system, framework) predicted from the median
    parameters of the framework's other systems and the system's roofs."""
    out = {}
    for (fam, system, fw), d in data.items():
        others = [f.values for (f2, s2, w2), f in fits.items() if f2 == fam and w2 == fw and s2 != system]
        if not others:
            others = [f.values for (f2, s2, _), f in fits.items() if f2 == fam and s2 != system]
        if not others:
            continue
        p = np.median(np.array(others), axis=0)
        tiles = [f.tile for (f2, s2, w2), f in fits.items() if f2 == fam and w2 == fw and s2 != system] or [64]
        tile = float(np.median(tiles))  # the MoE fit's M_half (the GEMMs')
        base = None
        if fam.startswith("gemm_") and fam != "gemm_bfloat16":
            b = [f.values for (f2, s2, w2), f in fits.items() if f2 == "gemm_bfloat16" and w2 == fw and s2 != system]
            if not b:
                continue
            base = np.median(np.array(b), axis=0)
        out[(fam, system, fw)] = mdape(predict(fam, p, d, ROOFS[system], base, tile), d["latency"].to_numpy())
    return out


def write_rows(path: str, fits) -> None:
    """One row per (device, engine) with a GEMM fit: the efficiency_profile
    fields the kernel families set (src/engine/profiles.cpp, detail/kernel_fit_row.hpp)."""
    lines = [
        "// Generated by: python scripts/fit_kernels.py KERNEL_DB --write-rows src/engine/kernel_fits.inc",
        "// from AIConfigurator 0.12.0's kernel database (Apache-2.0; data release 4), each engine's newest",
        "// measured version per system (scripts/fit_kernels.py says each family's model). Columns:",
        "// device id, engine class, bf16 GEMM eta_c and sd, GEMM rows at half eta_c, GEMM weight-streaming",
        "// eta_m and sd, fixed time of a GEMM kernel s and sd, low_precision (fp8 eta_c / bf16 eta_c; 0: no",
        "// fp8 rows) and low_precision_memory (fp8 eta_m / bf16 eta_m), context attention's share of the bf16 roof (0: none), generation attention's share of",
        "// peak bandwidth reading the KV cache and its fixed time per call s (0: none), the MoE layer's",
        "// fixed time s (0: none; its grouped GEMM's compute share is reported in docs/calibration.md, not",
        "// shipped), the custom all-reduce's share",
        "// of the link and its latency s (0: none), GEMM rows fitted, the GEMM fit's median APE.",
    ]

    def val(f, i, scale=1.0):
        return f"{f.values[i] * scale:.6g}" if f is not None else "0"

    for system, roofs in ROOFS.items():
        for fw in FRAMEWORKS:
            g = fits.get(("gemm_bfloat16", system, fw))
            if g is None:
                continue
            eta_c, m_half, eta_m, t0 = g.values
            q = fits.get(("gemm_fp8", system, fw))
            ca = fits.get(("context_attention", system, fw))
            ga = fits.get(("generation_attention", system, fw))
            mo = fits.get(("moe", system, fw))
            ar = fits.get(("all_reduce", system, fw))
            row = [
                f'"{roofs.device}"', f'"{ENGINE_OF[fw]}"', f"{eta_c:.6g}", f"{g.sd[0]:.6g}", f"{m_half:.6g}",
                f"{eta_m:.6g}", f"{g.sd[2]:.6g}", f"{t0 * 1e-3:.6g}", f"{g.sd[3] * 1e-3:.6g}",
                f"{min(1.0, q.values[0] / eta_c):.6g}" if q is not None else "0",
                f"{min(1.0, q.values[1] / eta_m):.6g}" if q is not None else "0",
                val(ca, 0),
                val(ga, 0), val(ga, 1, 1e-3), val(mo, 2, 1e-3),
                val(ar, 1), val(ar, 0, 1e-3),
                f"{g.n}", f"{g.mdape:.6g}",
            ]
            lines.append("{" + ", ".join(row) + "},")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def report(fits, lodo) -> str:
    out = ["| family | system | engine | rows | parameters (sd) | MdAPE in-sample | leave device out |",
           "|---|---|---|---|---|---|---|"]
    for (fam, system, fw), f in sorted(fits.items()):
        ps = ", ".join(f"{n} {v:.3g} ({s:.2g})" for n, v, s in zip(f.names, f.values, f.sd))
        if f.tile:
            ps += f", M_half {f.tile:.3g} (the GEMMs')"
        lo = lodo.get((fam, system, fw))
        out.append(f"| {fam} | {system} | {fw} | {f.n} | {ps} | {100 * f.mdape:.1f}% | "
                   f"{'' if lo is None else f'{100 * lo:.1f}%'} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", help="the kernel database: <system>/<op>/<framework>/<version>/*.parquet")
    ap.add_argument("--write-rows", help="write the fitted rows (src/engine/kernel_fits.inc)")
    ap.add_argument("--write-report", help="write the residual table (Markdown)")
    args = ap.parse_args()
    if not os.path.isdir(args.root):
        print(f"fit_kernels: {args.root}: not a directory", file=sys.stderr)
        return 2
    data = load(args.root)
    fits = fit_all(data, ROOFS.keys())
    lodo = leave_one_device_out(data, fits)
    table = report(fits, lodo)
    print(table)
    if args.write_rows:
        write_rows(args.write_rows, fits)
    if args.write_report:
        with open(args.write_report, "w") as fh:
            fh.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
