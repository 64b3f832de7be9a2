"""Property test of issue 34: 10,000 random valid requests (catalog models and
devices, and custom devices anywhere in the physical ranges) plan with every
printed number finite and non-negative (but the budgets that say by how much
something does not fit), and their users and tokens/s agree with the rate and
the memory. Seeded: the same 10,000 every run."""
from __future__ import annotations

import math
import random
from typing import Any

import pytest

import llmroof

from test_plan_properties import SIGNED, numbers  # noqa: E402  (one walk of a report's numbers)

MODELS = llmroof.Model.ids()
DEVICES = llmroof.Device.ids()
N = 10_000


def custom_device(rng: random.Random) -> str:
    """A device anywhere inside the physical ranges (log-uniform), as the
    command's custom: form."""
    def log(lo: float, hi: float) -> float:
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return (f"custom:memory={log(0.0625, 65536):.6g}GiB,bandwidth={log(0.1, 1e6):.6g}GB/s,"
            f"bf16={log(0.1, 1e9):.6g}GF,class={rng.choice(['datacenter', 'workstation', 'consumer', 'unified'])}")


def request(rng: random.Random) -> dict[str, Any]:
    kw: dict[str, Any] = dict(model=rng.choice(MODELS),
                              device=custom_device(rng) if rng.random() < 0.3 else rng.choice(DEVICES),
                              users=rng.choice([1, 2, 4, 16, 256, rng.randint(1, 10**6)]),
                              context=rng.choice([1, 1024, 8192, 131072, rng.randint(1, 10**7)]),
                              engine=rng.choice(["vllm", "sglang", "tensorrt-llm", "llama.cpp", "mlx"]),
                              weights=rng.choice([None, "bf16", "fp8", "q4_k_m", "awq-int4"]))
    load = rng.random()
    if load < 0.4:
        kw["rate"] = rng.choice([0.0, 0.01, 0.5, 5.0, 500.0])
        kw["output"] = rng.choice([1, 64, 512])
    elif load < 0.5:
        kw["concurrency"] = rng.choice([1, 8, 64])
    # Issue 60: the newer options, each on a share of the requests.
    if rng.random() < 0.2:
        kw["prefix"] = rng.choice([16, 512, 2048, rng.randint(1, 10**6)])
        kw["prefix_hit"] = rng.choice([None, 0.0, 1e-300, 0.01, 0.5, 1.0])
    if rng.random() < 0.15:
        method = rng.choice(["ngram", "draft", "eagle", "mtp"])
        k = rng.randint(1, 4)
        kw["speculative"] = llmroof.Speculative(
            method=method, draft_tokens=k, acceptance=[round(rng.uniform(0, 1), 3) for _ in range(rng.choice([1, k]))],
            draft_model=rng.choice(["qwen3-0.6b", "llama-3.2-1b"]) if method == "draft" else None)
    price = rng.random()
    if price < 0.1:
        kw["price_per_hour"] = rng.choice([0.0, 0.5, 2.5, 1e4])
    elif price < 0.2:
        kw["purchase"] = rng.choice([0.0, 1800.0, 30000.0])
        kw["years"] = rng.choice([0.5, 3.0, 5.0])
    if rng.random() < 0.1:
        kw["electricity"] = rng.choice([0.0, 0.15, 0.4])
        kw["pue"] = rng.choice([1.0, 1.3])
    if rng.random() < 0.04 and "rate" not in kw:
        kw["devices"] = rng.choice([2, 4, 8])
        kw["pd"] = rng.choice(["auto", 1, 2])
        kw["min_tokens_per_s"] = rng.choice([10.0, 50.0])
    return kw


def test_ten_thousand_random_requests_print_finite_consistent_numbers() -> None:
    rng = random.Random(34)
    planned = refused = 0
    for _ in range(N):
        kw = request(rng)
        try:
            p = llmroof.plan(**kw)
        except ValueError:
            refused += 1  # an invalid combination (a layout, a format the engine lacks) is refused, never planned
            continue
        planned += 1
        d = p.to_dict()
        for path, v in numbers(d):
            assert math.isfinite(v), (kw, path, v)
            if path.rsplit(".", 1)[-1] not in SIGNED:
                assert v >= 0, (kw, path, v)
        m = d["memory"]
        assert m["max_users_at_context"] >= 0 and (not m["fits"] or m["max_users_at_context"] >= kw["users"]), kw
        load = d.get("load")
        if "rate" in kw and load is not None:
            # Little's law users, fractional at light load; no more output than asked for.
            assert load["tokens_per_s_total"] <= kw["rate"] * kw["output"] * (1 + 1e-9), (kw, load)
            if load["stable"]:
                # A request holds TTFT and output - 1 steps (its prefill samples the first token).
                steps = max(0, kw["output"] - 1)
                assert load["users"] == pytest.approx(kw["rate"] * (load["ttft_s"] + steps * load["tpot_s"]),
                                                      rel=1e-9, abs=1e-12), (kw, load)
                assert load["tokens_per_s_total"] == pytest.approx(kw["rate"] * kw["output"], rel=1e-9), (kw, load)
            if kw["rate"] == 0:
                assert load["users"] == 0 and load["tokens_per_s_total"] == 0, (kw, load)
        # Conservation laws of the newer options.
        e = d["energy"]
        if e.get("cost_per_hour") is not None and e.get("cost_per_million_output_tokens") is not None:
            assert e["cost_per_million_output_tokens"] == pytest.approx(
                e["cost_per_hour"] / (3600 * e["output_tokens_per_s"] / 1e6), rel=1e-9), (kw, e)
        pre = d.get("prefix")
        if pre is not None:
            prompt = d["workload"]["prompt"] if "workload" in d else None
            assert 0 <= pre["shared_tokens"] <= pre["hit_rate"] * pre["cached_tokens"] * (1 + 1e-12), (kw, pre)
            if prompt is not None:
                assert pre["computed_tokens"] == pytest.approx(prompt - pre["hit_rate"] * pre["cached_tokens"]), (kw, pre)
        spec = d.get("speculation")
        if spec is not None:
            for row in spec.get("rows", []):
                assert row.get("accepted_tokens", 1) >= 1, (kw, row)
    assert planned > N // 2 and planned + refused == N, (planned, refused)


def test_the_commands_text_never_prints_minus_zero_inf_or_nan(cli: str) -> None:
    import re
    import subprocess

    rng = random.Random(3434)
    bad = re.compile(r"(?<![\w.])-0(\.0+)?(?![\w.])|\binf\b|\bnan\b", re.IGNORECASE)
    printed = 0
    for _ in range(200):
        kw = request(rng)
        argv = [cli, "plan", "--model", kw["model"], "--device", kw["device"], "--users", str(kw["users"]),
                "--context", str(kw["context"]), "--engine", kw["engine"]]
        if kw["weights"]:
            argv += ["--weights", kw["weights"]]
        if "rate" in kw:
            argv += ["--rate", str(kw["rate"]), "--output", str(kw["output"])]
        if "concurrency" in kw:
            argv += ["--concurrency", str(kw["concurrency"])]
        out = subprocess.run(argv, capture_output=True, text=True)
        if out.returncode == 2:
            continue
        assert out.returncode == 0, (argv, out.stderr)
        printed += 1
        assert not bad.search(out.stdout), (argv, bad.search(out.stdout), out.stdout)
    assert printed > 100
