#!/usr/bin/env python3
"""End-to-end tests of the llmroof command (run by ctest with the binary path)."""
import json
import os
import re
import tempfile
import subprocess
import sys

BIN = sys.argv[1]
failures = []
passed = 0


def run(*args, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {detail}")


SEED = ["--model", "devstral-small-2-24b", "--device", "rtx-pro-6000-blackwell",
        "--weights", "fp8", "--kv", "bf16", "--users", "4", "--context", "128k"]

# Seed scenario, human output.
r = run("plan", *SEED)
check("seed exit", r.returncode == 0, r.stderr)
out = r.stdout
check("seed kv per token", "163,840 B" in out, out)
check("seed does not fit", "4 users at 131,072 tokens do NOT fit" in out, out)
check("seed most users", "Most users that fit at 131,072 tokens: 2" in out, out)
check("seed longest context", "Longest context that fits 4 users:" in out, out)
check("seed GiB said", "GiB" in out and "GB" in out, out)

# A prompt longer than the context is refused; one user reads as one.
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "8k", "--context", "4k")
check("prompt beyond the context", r.returncode == 2 and r.stderr.strip().endswith(
    "prompt must be <= the context (4096 tokens) (got 8192)") and len(r.stderr.strip().splitlines()) == 1, r.stderr)
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm")
check("1 user", "1 user at 4,096 tokens fits" in r.stdout and "1 users" not in r.stdout, r.stdout)
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--engine", "llama.cpp")
check("vLLM's wording on vLLM plans only", "as vLLM prints it" not in r.stdout, r.stdout)

# The README's seed blocks are what the command prints: every line of them
# (but "...", which elides) is a line of the output, in order.
readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
with open(readme, encoding="utf-8") as f:
    text = f.read()
for marker in ("The first command prints the seed scenario", "When a plan does not fit, it says what would"):
    block = text.split(marker, 1)[1].split("```", 2)[1].strip("\n").splitlines()
    lines = out.splitlines()
    at = 0
    for line in block:
        if line == "...":
            continue
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            check("README seed block: " + marker, False, f"line not printed (in order): {line!r}")
            break
    else:
        check("README seed block: " + marker, True)

# Seed scenario, JSON: same numbers, stable schema.
r = run("plan", *SEED, "--json")
check("json exit", r.returncode == 0, r.stderr)
j = json.loads(r.stdout)
check("json schema", j["schema"] == "llmroof.plan/1", j.get("schema"))
m = j["memory"]
check("json kv per token", m["kv_bytes_per_token"] == 163840, m["kv_bytes_per_token"])
check("json not fits", m["fits"] is False and m["shortfall_bytes"] > 0, m)
check("json max users", m["max_users_at_context"] == 2, m)
check("json engine starts", m["starts"] is True and m["max_model_len"] == 131072 and m["kv_tokens"] > 131072, m)
check("json max context", 90000 < m["max_context_for_users"] < 110000, m["max_context_for_users"])
check("json one KV rate without windows", m["kv_bytes_per_token_past_window"] == 163840, m)

# gpt-oss: half its layers slide over 128 tokens. Its memory says both rates:
# 36 x 2 x 8 x 64 x 2 B = 73,728 B within the window, the 18 global layers'
# 36,864 B past it; the per-user figure, 2.25 GiB at 64k, is the second.
r = run("plan", "--model", "gpt-oss-120b", "--device", "h100-sxm", "--users", "10", "--context", "64k")
check("gpt-oss both KV rates", "73,728 B  (72.0 KiB, 36,864 B past the sliding windows)" in r.stdout, r.stdout)
check("gpt-oss per user at the slope past the window", "KV per user at 65,536 tokens           2.25 GiB" in r.stdout, r.stdout)

# A laptop's name with its memory: the configuration asked, not the row's largest.
r = run("plan", "--model", "qwen3-8b", "--device", "MacBook Pro M4 Max 48GB")
check("laptop name with memory", r.returncode == 0 and "M4 Max (16-core CPU / 40-core GPU) with 48 GB" in r.stdout
      and "75% of 48.00 GiB RAM" in r.stdout, r.stdout + r.stderr)
r = run("plan", "--model", "qwen3-8b", "--device", "MacBook Pro M4 Max 128GB")
check("laptop name, the row's own memory", r.returncode == 0 and "with 128 GB" not in r.stdout
      and "of 128.00 GiB RAM" in r.stdout, r.stdout + r.stderr)
curve = j["decode_curve"]
check("curve starts at 0", curve[0]["context"] == 0, curve[0])
check("curve ends at 128k", curve[-1]["context"] == 131072, curve[-1])
e0 = curve[0]["single_user_tokens_per_s_estimate"]
e1 = curve[-1]["single_user_tokens_per_s_estimate"]
check("curve starts near 50 t/s", 45 <= e0 <= 55, e0)
check("curve ends in 20-30 t/s", 20 <= e1 <= 30, e1)
check("bound beside estimate", all(p["single_user_tokens_per_s_bound"] >= p["single_user_tokens_per_s_estimate"] for p in curve), curve)
check("curve never rises", all(a["single_user_tokens_per_s_estimate"] >= b["single_user_tokens_per_s_estimate"] for a, b in zip(curve, curve[1:])), curve)

# The engine's start-up verdict (issue 16): vLLM refuses a max_model_len whose one sequence
# cannot fit, and says the longest that would start.
r = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm", "--context", "16000", "--max-model-len", "32000")
check("refusal exit 0", r.returncode == 0, r.stderr)
check("refusal said", "vllm would refuse to start: one sequence of 32,000 tokens needs 7.81 GiB of KV" in r.stdout, r.stdout)
r = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm", "--context", "16000", "--max-model-len", "32000", "--json")
m = json.loads(r.stdout)["memory"]
check("refusal json", m["starts"] is False and m["fits"] is False and 16000 < m["longest_start_context"] < 32000, m)
# Knobs reach the plan: more sequences profiled, a larger sampler peak, a smaller KV budget.
base = json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--json").stdout)
few = json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--max-num-seqs", "128", "--json").stdout)
check("max-num-seqs reaches the plan", few["memory"]["activation_bytes"] < base["memory"]["activation_bytes"], (few["memory"], base["memory"]))
check("engine settings reported", base["engine_settings"]["max_sequences"] == 1024 and few["engine_settings"]["max_sequences"] == 128, base["engine_settings"])
old = json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "a100-80gb-sxm", "--engine", "vllm@0.10", "--json").stdout)
check("vllm@0.10 on A100: 256 sequences, 2048 tokens", old["engine_settings"]["max_sequences"] == 256 and old["engine_settings"]["max_batched_tokens"] == 2048 and old["engine_settings"]["version"] == "0.10", old["engine_settings"])

# Open loop below one user (issue 34): Little's users are fractional, the output is what
# the arrivals ask for (rate x output), an idle server serves nothing.
light = json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--rate", "0.01", "--output", "512",
                       "--json").stdout)["load"]
check("open loop 0.01/s: a fraction of a user", 0 < light["users"] < 0.1 and
      abs(light["users"] - 0.01 * (light["ttft_s"] + 511 * light["tpot_s"])) < 1e-12, light)
check("open loop 0.01/s: 5.12 output tokens/s", abs(light["tokens_per_s_total"] - 5.12) < 1e-9, light)
idle = json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--rate", "0", "--json").stdout)["load"]
check("open loop idle", idle["users"] == 0 and idle["tokens_per_s_total"] == 0 and idle["stable"], idle)
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--rate", "0.01")
check("open loop text: fractional users", "steady state: 0.0377" in r.stdout and ", 5 tokens/s total" in r.stdout, r.stdout)

# Closed loop (issue 18): N users each sending the next request when the last completes.
NIM = ["--model", "llama-3.3-70b", "--device", "h100-sxm:2", "--weights", "fp8", "--kv", "fp8-e4m3",
       "--engine", "tensorrt-llm", "--prompt", "5000", "--output", "500", "--context", "5500"]
loads = {c: json.loads(run("plan", *NIM, "--concurrency", str(c), "--json").stdout)["load"] for c in (1, 25, 250)}
check("closed loop fields", all(k in loads[1] for k in ("ttft_s", "tpot_s", "output_tokens_per_s", "requests_per_s")), loads[1])
check("closed loop: more users, slower steps", loads[1]["tpot_s"] < loads[25]["tpot_s"] < loads[250]["tpot_s"], loads)
check("closed loop: beyond the KV slots they queue", loads[250]["limit"] == "kv_cache" and loads[250]["queue_wait_s"] > 10, loads[250])
r = run("plan", *NIM, "--concurrency", "4")
check("closed loop text", "Closed loop: 4 users" in r.stdout and "output tokens/s total" in r.stdout, r.stdout)
# Saturation: the same at 25 and 250 users (the engine's slots bind), equal to the loop at 250.
sat = [loads[c]["saturation"] for c in (1, 25, 250)]
check("saturation: one answer for the deployment", sat[0] == sat[1] == sat[2] and sat[0]["limit"] == "kv_cache", sat)
check("saturation is the loop at its slots", abs(sat[2]["requests_per_s"] - loads[250]["requests_per_s"]) < 1e-9 * loads[250]["requests_per_s"], (sat[2], loads[250]))
check("saturation text", "saturation: " in r.stdout and "limit: kv_cache" in r.stdout, r.stdout)
# One user alone: TTFT = request handling (5 ms) + its prefill, no queue.
solo = json.loads(run("prefill", "--model", "llama-3.3-70b", "--device", "h100-sxm:2", "--weights", "fp8", "--kv", "fp8-e4m3",
                      "--engine", "tensorrt-llm", "--prompt", "5000", "--json").stdout)
check("one closed-loop user: handling + prefill", abs(loads[1]["ttft_s"] - (0.005 + solo["ttft_s_estimate"])) < 1e-6, (loads[1], solo.get("ttft_s_estimate")))
rate_sat = json.loads(run("plan", *NIM, "--rate", "0.5", "--json").stdout)["load"]["saturation"]
check("saturation under --rate too", rate_sat == sat[0], rate_sat)

# The seed plan's users are a closed loop (issue 18): --users 4 alone reports what --concurrency 4 does.
seed_load = json.loads(run("plan", *SEED, "--json").stdout)["load"]
check("seed plan: its users in a loop", seed_load == json.loads(run("plan", *SEED, "--concurrency", "4", "--json").stdout)["load"], seed_load)
check("seed plan: loop text", "Closed loop: 4 users" in run("plan", *SEED).stdout)
one = json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--json").stdout)
check("one user: no loop unless asked", "load" not in one, one.keys())
# users: the most users, then those users in the same loop as plan --concurrency N.
U = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--context", "8k", "--output", "300"]
u = json.loads(run("users", *U, "--tps", "20", "--json").stdout)
loop = json.loads(run("plan", *U, "--concurrency", str(int(u["max_users"])), "--json").stdout)["load"]
del loop["saturation"]
check("users: closed loop = plan --concurrency max_users", u["closed_loop"] == loop, (u["closed_loop"], loop))
check("users: loop text", "(a closed loop: 2,048-token prompts, 300-token answers" in run("users", *U, "--tps", "20").stdout)
# J per request = the loop's power over its requests/s = J per output token x 300 output tokens.
check("users: joules_per_request = power / requests_per_s",
      abs(u["joules_per_request"] - u["energy"]["power_w"] / u["closed_loop"]["requests_per_s"]) < 1e-9 * u["joules_per_request"]
      and abs(u["joules_per_request"] - 300 * u["energy"]["joules_per_output_token"]) < 1e-9 * u["joules_per_request"],
      (u["joules_per_request"], u["energy"]))
check("users: joules_per_request text",
      f"each request (2,048-token prompt, 300-token answer): {u['joules_per_request']:,.0f} J" in run("users", *U, "--tps", "20").stdout)
# Lockstep (identical requests started together): said in the text and the JSON, the same loop in users.
L = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "1000", "--output", "300", "--context", "1300"]
lock = json.loads(run("plan", *L, "--concurrency", "16", "--arrivals", "lockstep", "--json").stdout)["load"]
mixed = json.loads(run("plan", *L, "--concurrency", "16", "--json").stdout)["load"]
check("lockstep: said which", lock["arrivals"] == "lockstep" and mixed["arrivals"] == "mixed" and mixed["first_wave_ttft_s"] is None, (lock, mixed))
check("lockstep: the cohort's prompts prefilled together wait longer", lock["ttft_s"] > mixed["ttft_s"] and lock["first_wave_ttft_s"] >= lock["ttft_s"] * (1 - 1e-9), (lock, mixed))
# Published MTP figures (issue 30): SGLang's DeepSeek-V3 on 16 x H200 (DP attention, EP 16), 2 requests per rank,
# 65,536 in / 4,096 out, 3 draft tokens at accept length 2.18 (SGLang blog 2025-07-17): 60.4 -> 81.5 tokens/s per
# rank. The mean decode context is 65,536 + 4,096 / 2 = 67,584 tokens; within 10% each. Sixteen H200 are two
# HGX nodes of eight: the all-to-all crosses InfiniBand.
sg = json.loads(run("speculate", "--model", "deepseek-v3", "--device", "h200:8", "--nodes", "2", "--engine", "sglang", "--ep", "16",
                    "--dp-attention", "--batch", "32", "--context", "67584", "--spec", "mtp", "--draft-tokens", "3",
                    "--max-batch", "2", "--json").stdout)
check("SGLang MTP blog: 60.4 tokens/s per rank without", abs(2 * sg["plain_tokens_per_s_per_user"] / 60.4 - 1) < 0.1, sg)
check("SGLang MTP blog: 81.5 tokens/s per rank with 3 drafts", abs(2 * sg["tokens_per_s_per_user"] / 81.5 - 1) < 0.1, sg)
# Speculative decoding inside the closed loop: the loop says so, runs faster, and holds the drafter.
SPEC = ["--model", "deepseek-v3", "--device", "h200:8", "--engine", "sglang", "--users", "32", "--context", "8k",
        "--prompt", "4k", "--output", "1000"]
sp = json.loads(run("plan", *SPEC, "--spec", "mtp", "--draft-tokens", "3", "--json").stdout)
pl = json.loads(run("plan", *SPEC, "--json").stdout)
check("plan --spec: the loop keeps 2.18 tokens per step", abs(sp["load"]["tokens_per_step"] - 2.176) < 1e-9 and pl["load"]["tokens_per_step"] == 1, (sp["load"], pl["load"]))
check("plan --spec: the loop is faster", sp["load"]["tpot_s"] < pl["load"]["tpot_s"] and sp["load"]["output_tokens_per_s"] > pl["load"]["output_tokens_per_s"], (sp["load"], pl["load"]))
check("plan --spec: the MTP module holds slots", sp["load"]["slots"] < pl["load"]["slots"] and sp["memory"]["weight_bytes"] > pl["memory"]["weight_bytes"], (sp["load"]["slots"], pl["load"]["slots"]))
r = run("plan", *SPEC, "--spec", "mtp", "--draft-tokens", "3")
check("plan --spec: text", "decoding speculatively (mtp, 3 draft tokens, 2.18 kept per step)" in r.stdout, r.stdout)
r = run("users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "30", "--spec", "ngram", "--accept", "1.5")
check("users --spec: a bad acceptance", r.returncode == 2 and r.stderr.strip().endswith("--accept must be >= 0 and <= 1 (got 1.5)") and len(r.stderr.strip().splitlines()) == 1, r.stderr)
r = run("plan", *L, "--concurrency", "16", "--arrivals", "lockstep")
check("lockstep text", "in lockstep (identical requests, started together)" in r.stdout and "the first 16 requests, sent at once" in r.stdout, r.stdout)
ul = json.loads(run("users", *L, "--tps", "20", "--arrivals", "lockstep", "--json").stdout)
loop = json.loads(run("plan", *L, "--concurrency", str(int(ul["max_users"])), "--arrivals", "lockstep", "--json").stdout)["load"]
del loop["saturation"]
check("users --arrivals lockstep: closed loop = plan --concurrency max_users", ul["closed_loop"] == loop, (ul["closed_loop"], loop))
check("users --arrivals lockstep: text", "(a closed loop in lockstep: 1,000-token prompts" in run("users", *L, "--tps", "20", "--arrivals", "lockstep").stdout)
# A burst (every request sent at once): the engine's steps simulated; said in the text and the JSON.
BU = ["--model", "qwen3-32b", "--device", "a100-sxm-80gb", "--prompt", "128", "--output", "4", "--burst", "1000"]
bu = json.loads(run("plan", *BU, "--json").stdout)["load"]
check("burst: its own load model", bu["model"] == "burst" and bu["requests"] == 1000 and bu["lengths"] == "fixed"
      and bu["limit"] == "kv_cache" and bu["output_tokens"] == 4000 and "saturation" in bu, bu)
check("burst: output tokens/s over its duration", abs(bu["output_tokens_per_s"] * bu["duration_s"] - 4000) < 1e-6, bu)
check("burst: README figure (TPOT 507 ms)", "4 out: 507 ms" in open(readme).read() and round(1e3 * bu["tpot_s"]) == 507, bu)
r = run("plan", *BU)
check("burst: text", "Burst: 1,000 requests sent at once, each 128 prompt + 4 output tokens" in r.stdout
      and f"TPOT {1e3 * bu['tpot_s']:.2f} ms" in r.stdout, r.stdout)
ex = json.loads(run("plan", *BU[:-4], "--prompt", "200", "--output", "200", "--context", "2048", "--burst", "200",
                    "--burst-lengths", "exponential", "--json").stdout)["load"]
fx = json.loads(run("plan", *BU[:-4], "--prompt", "200", "--output", "200", "--context", "2048", "--burst", "200",
                    "--json").stdout)["load"]
check("burst: exponential lengths keep the tokens, drain slower", ex["lengths"] == "exponential"
      and abs(ex["output_tokens"] / fx["output_tokens"] - 1) < 0.01 and ex["duration_s"] > fx["duration_s"], (ex, fx))
none = json.loads(run("plan", "--model", "llama-3.1-70b", "--device", "rtx-4090", "--burst", "4", "--json").stdout)["load"]
check("burst: nothing fits, no time made up", none["slots"] == 0 and none["limit"] == "kv_cache"
      and none["duration_s"] is None and none["ttft_s"] is None and none["output_tokens_per_s"] is None, none)
for args, said in ((["--burst", "0"], "--burst must be in [1, 100000] (got 0)"),
                   (["--burst", "200000"], "--burst must be in [1, 100000] (got 200000)"),
                   (["--burst", "5", "--rate", "1"], "a burst is a load model of its own; give it alone"),
                   (["--burst-lengths", "fixed"], "--burst-lengths needs --burst"),
                   (["--burst", "5", "--burst-lengths", "gamma"], "burst_lengths must be fixed or exponential (got 'gamma')"),
                   (["--burst", "5", "--arrivals", "lockstep"], "arrivals: lockstep is a closed loop; a burst sends every request at once")):
    r = run("plan", "--model", "qwen3-8b", "--device", "h100-sxm", *args)
    check(f"burst: bad input {args}", r.returncode == 2 and r.stderr.strip().endswith(said)
          and len(r.stderr.strip().splitlines()) == 1, r.stderr)
# The README's figures for the two loops (section "Load").
readme_text = open(readme).read()
for args, a, said in ((["--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "1000", "--output", "1000",
                        "--context", "2000", "--concurrency", "64"], "lockstep", "TTFT 290 ms (704 ms for the first wave)"),
                      (["--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "1000", "--output", "1000",
                        "--context", "2000", "--concurrency", "64"], "mixed", "mixed loop's 34,"),
                      (NIM + ["--concurrency", "50"], "lockstep", "lockstep 857 / 1,394 / 1,508"),
                      (NIM + ["--concurrency", "50"], "mixed", "mixed 444 / 576 / 701")):
    got = json.loads(run("plan", *args, "--arrivals", a, "--json").stdout)["load"]
    ms_ = round(1e3 * got["ttft_s"])
    check(f"README load figures: {a} {ms_} ms", said in readme_text and f"{ms_:,}" in said, (ms_, said))
check("users: one answer", u["per_user_tokens_per_s_estimate"] == u["closed_loop"]["output_tokens_per_s_per_user"] >= 20
      and u["total_tokens_per_s_estimate"] == u["closed_loop"]["output_tokens_per_s"]
      and u["ttft_s"] == u["closed_loop"]["ttft_s"], u)
check("users: nobody qualifies, no loop", json.loads(run("users", *U, "--tps", "1e6", "--json").stdout)["closed_loop"] is None)

# Human decode table shows the same figure as JSON.
r = run("plan", *SEED)
check("human matches json", f"{e0:.1f}" in r.stdout, (e0, r.stdout))

# Other commands.
for args in (["decode", "--model", "llama-3.1-70b", "--device", "h100-sxm:2", "--batch", "8", "--context", "4k"],
             ["prefill", "--model", "llama-3.1-8b", "--device", "a100-80gb-sxm", "--prompt", "2048"],
             ["kv", "--model", "gpt-oss-120b", "--context", "128k"],
             ["list", "devices"], ["list", "models"], ["list", "formats"]):
    r = run(*args)
    check(" ".join(args), r.returncode == 0 and r.stdout, r.stderr)
    r = run(*args, "--json")
    check(" ".join(args) + " --json", r.returncode == 0 and json.loads(r.stdout) is not None, r.stderr)

# MoE: the params table, GLM-4.5-Air against Devstral, and the FP8 fit.
r = run("moe")
for m in ("glm-4.5-air", "qwen3-30b-a3b", "deepseek-v3", "minimax-m2", "qwen3-coder-480b-a35b", "kimi-k2"):
    check(f"moe table {m}", m in r.stdout, r.stdout)
r = run("compare", "--model", "glm-4.5-air", "--model", "devstral-small-2-24b", "--device", "rtx-pro-6000-blackwell",
        "--weights", "awq-int4")
check("compare exit", r.returncode == 0, r.stderr)
check("compare crossover", "glm-4.5-air decodes faster per user up to batch" in r.stdout, r.stdout)
r = run("moe", "--model", "glm-4.5-air", "--device", "rtx-pro-6000-blackwell", "--weights", "fp8")
check("moe fp8 does not fit", "does NOT fit on 1 x NVIDIA RTX PRO 6000 Blackwell Workstation Edition" in r.stdout
      and "short by" in r.stdout, r.stdout)
check("moe mtp said", "counted apart and not decoded" in r.stdout, r.stdout)
r = run("compare", "--model", "glm-4.5-air", "--device", "h100-sxm")
check("compare needs two", r.returncode == 2 and "compare needs two sides: give --model, --device, --engine, --weights "
      "or --kv twice" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr)
r = run("compare", "--model", "glm-4.5-air", "--device", "h100-sxm", "--device", "h200", "--device", "b200")
check("compare three devices", r.returncode == 2 and "compare takes --device at most twice (got 3)" in r.stderr, r.stderr)
# A fit at its limit is said: llama.cpp Metal's attention share ran into 1.
r = run("plan", "--model", "qwen3-4b", "--device", "m4-max-40c", "--engine", "llama.cpp")
check("plan at-limit note", "(note: attention of this profile sits at the limit 1.00" in r.stdout, r.stdout)
j = json.loads(run("plan", "--model", "qwen3-4b", "--device", "m4-max-40c", "--engine", "llama.cpp", "--json").stdout)
check("plan at-limit json", j["efficiency"]["at_limit"] == ["attention"], str(j["efficiency"]))
r = run("plan", "--model", "qwen3-4b", "--device", "h100-sxm")
check("plan no at-limit note", "of this profile sits at the limit" not in r.stdout, r.stdout)
# One model on two machines, each under its own engine: each keeps its own
# layout and roofs; the same model reads the same bytes, so no bytes crossover.
r = run("compare", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--device", "m3-ultra-80c", "--engine", "vllm",
        "--engine", "llama.cpp", "--max-batch", "4")
check("compare two machines", r.returncode == 0 and "llmroof compare: 1 x h100-sxm, vllm vs 1 x m3-ultra-80c, llama.cpp"
      in r.stdout and "on 1 x Apple M3 Ultra (80-core GPU); llama.cpp, weights bf16, KV bf16" in r.stdout
      and "reads as many bytes" not in r.stdout, r.stdout)
j = json.loads(run("compare", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--device", "m3-ultra-80c",
                   "--engine", "vllm", "--engine", "llama.cpp", "--max-batch", "4", "--json").stdout)
check("compare two machines json", j["same_devices"] is False and j["device"] == "h100-sxm"
      and j["second"]["device"] == "m3-ultra-80c" and j["second"]["engine"] == "llama.cpp"
      and j["batches"][0]["first_bytes_per_step"] == j["batches"][0]["second_bytes_per_step"], str(j)[:400])
# Two custom machines are two machines (every custom device's id is "custom").
r = run("compare", "--model", "llama-3.1-8b", "--device", "custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF",
        "--device", "custom:memory=48GiB,bandwidth=1800GB/s,bf16=200TF", "--max-batch", "1", "--json")
check("compare two custom machines", r.returncode == 0 and json.loads(r.stdout)["same_devices"] is False, r.stderr)
# vLLM against llama.cpp on the same two GPUs: TP 2 beside a layer split.
r = run("compare", "--model", "llama-3.1-8b", "--device", "rtx-4090:2", "--engine", "vllm", "--engine", "llama.cpp",
        "--max-batch", "1")
check("compare two engines", r.returncode == 0 and "(TP 2)" in r.stdout and "(layer split, PP 2)" in r.stdout
      and "vllm stays faster per user" in r.stdout, r.stdout)
# Expert parallel: the dense twin runs TP over the same devices (it used to be
# refused as "ep > 1 needs a Mixture-of-Experts model" for the twin itself).
# TP attention x EP experts (issue 32): named in the header, same weights per device as TP.
r = run("plan", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:4", "--tp", "4", "--ep", "4")
check("tp x ep: layout named", "(TP 4 x EP 4)" in r.stdout.splitlines()[0], r.stdout.splitlines()[0])
tpep = json.loads(run("plan", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:4", "--tp", "4", "--ep", "4", "--json").stdout)
tp4 = json.loads(run("plan", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:4", "--json").stdout)
check("tp x ep: layout in the JSON", tpep["parallel"]["tp"] == 4 and tpep["parallel"]["ep"] == 4, tpep["parallel"])
check("tp x ep: weights per device as TP", tpep["memory"]["weight_bytes"] == tp4["memory"]["weight_bytes"], (tpep["memory"], tp4["memory"]))
# DP attention beside a TP FFN (SGLang --enable-dp-attention): each device its own users' latent KV.
DS = ["--model", "deepseek-v3", "--device", "h200:8", "--weights", "fp8", "--users", "64", "--context", "8k", "--engine", "sglang"]
dpa = json.loads(run("plan", *DS, "--dp-attention", "--json").stdout)
tp8 = json.loads(run("plan", *DS, "--json").stdout)
check("dp attention: in the JSON", dpa["parallel"]["dp_attention"] is True and tp8["parallel"]["dp_attention"] is False, dpa["parallel"])
check("dp attention: an eighth of the KV per device", abs(dpa["memory"]["kv_bytes_needed"] * 8 - tp8["memory"]["kv_bytes_needed"]) < 1e-6 * tp8["memory"]["kv_bytes_needed"], (dpa["memory"], tp8["memory"]))
check("dp attention: SGLang's flag pastes in", json.loads(run("plan", *DS, "--enable-dp-attention", "--json").stdout) == dpa)
check("dp attention: named in the header", "(TP 8 with DP attention)" in run("plan", *DS, "--dp-attention").stdout.splitlines()[0])
# SGLang's DeepSeek launch, --tp 8 --ep-size 8 --enable-dp-attention: DP attention beside EP experts (EP 8).
ep8 = json.loads(run("plan", *DS, "--tp", "8", "--ep-size", "8", "--enable-dp-attention", "--json").stdout)["parallel"]
check("dp attention + ep: the ep-alone layout", ep8["tp"] == 1 and ep8["ep"] == 8 and ep8["dp_attention"] is True, ep8)
r = run("moe", "--model", "deepseek-v3", "--device", "h200:8", "--ep", "8", "--weights", "fp8", "--max-batch", "64")
check("moe ep 8", r.returncode == 0 and "(EP 8)" in r.stdout and "dense same-total" in r.stdout, r.stderr)
check("moe kv room", "KV room for 704 sequences of 4,096 tokens" in r.stdout, r.stdout)
rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()[:1].isdigit()}
check("moe rows within the KV room unmarked", not rows["64"].endswith("*"), r.stdout)
r = run("moe", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--context", "32k", "--max-batch", "8")
rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()[:1].isdigit()}
# 3 GiB of KV per 32,768-token sequence (48 layers x 2 x 4 KV heads x 128 x 2 B = 96 KiB per token): the budget
# beside the weights, activations and reserves holds 2; batches 4 and 8 are marked.
check("moe rows past the KV room marked", "KV room for 2 sequences of 32,768 tokens" in r.stdout
      and not rows["2"].endswith("*") and rows["4"].endswith("  *") and rows["8"].endswith("  *")
      and "* more sequences than the KV room holds (2 of 32,768 tokens)" in r.stdout, r.stdout)
r = run("moe", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--context", "32k", "--max-batch", "8", "--json")
j = json.loads(r.stdout)
check("moe json kv_fits as the text marks", [b["kv_fits"] for b in j["batches"]] == [True, True, False, False]
      and j["fit"]["max_users_at_context"] == 2, r.stdout[:300])
r = run("moe", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--context", "0", "--max-batch", "4")
check("moe no kv room at context 0", r.returncode == 0 and "KV room" not in r.stdout and "*" not in r.stdout, r.stdout)
r = run("moe", "--model", "llama-3.1-8b", "--device", "h100-sxm")
check("moe dense model", r.returncode == 2 and "is dense" in r.stderr, r.stderr)

# Several devices, engines, load, users.
r = run("plan", "--model", "llama-3.1-405b", "--device", "h100-sxm", "--weights", "fp8")
check("405b one h100", "The weights alone do NOT fit: short by" in r.stdout, r.stdout)
r = run("plan", "--model", "llama-3.1-405b", "--device", "h100-sxm:8", "--weights", "fp8", "--json")
j8 = json.loads(r.stdout)
check("405b tp8 fits", j8["memory"]["fits"] and j8["parallel"]["tp"] == 8 and j8["memory"]["kv_budget_bytes"] > 0, j8["memory"])
check("405b tp8 link", j8["parallel"]["link"] == "nvlink4", j8["parallel"])
r = run("plan", "--model", "llama-3.1-8b", "--device", "rtx-4090:2")
check("tp link printed", "2 x NVIDIA GeForce RTX 4090 (TP 2); collectives over PCIe 4.0 x16" in r.stdout, r.stdout)
r = run("plan", "--model", "kimi-k2", "--device", "h100-sxm:8", "--nodes", "2", "--weights", "fp8")
check("kimi two nodes", "16 x NVIDIA H100 SXM5 (TP 16), 2 nodes; collectives over InfiniBand" in r.stdout
      and "fit" in r.stdout, r.stdout)
r = run("plan", "--model", "devstral-small-2-24b", "--device", "rtx-pro-6000-blackwell", "--weights", "fp8",
        "--users", "4", "--context", "128k")
check("seed alternatives", "What would make it fit" in r.stdout and "2 devices (TP 2)" in r.stdout, r.stdout)
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--rate", "2", "--output", "256")
check("plan rate", "Load: 2 requests/s" in r.stdout and "TTFT" in r.stdout, r.stdout)
r = run("users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "30", "--ttft", "500ms")
check("users", "most users:" in r.stdout and "<- most users" in r.stdout, r.stdout)
for sub in ("links", "engines"):
    r = run("list", sub)
    check("list " + sub, r.returncode == 0 and r.stdout, r.stderr)
r = run("plan", "--model", "llama-3.1-70b", "--device", "h100-sxm:8", "--tp", "4")
check("tp mismatch", r.returncode == 2 and "tp x pp (4 x 1 = 4) must equal the devices (8)" in r.stderr, r.stderr)
r = run("users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--ttft", "soon")
check("bad ttft", r.returncode == 2 and "--ttft must be a time like 1, 0.5s or 500ms (got 'soon')" in r.stderr, r.stderr)

# Devices users bring: a JSON file (the fields 'list devices --json' prints) and
# the inline form give the same plan as the catalog device.
def plan_json(device: str) -> dict:
    r = run("plan", "--model", "llama-3.1-8b", "--device", device, "--users", "4", "--context", "32k", "--json")
    if r.returncode != 0:
        return {"error": r.stderr}
    d = json.loads(r.stdout)
    d.pop("device")
    return d
r = run("list", "devices", "--json", "--filter", "rtx-3090 ampere")
listed = json.loads(r.stdout) if r.returncode == 0 else []
check("list --json --filter", [d["id"] for d in listed] == ["rtx-3090", "rtx-3090-ti"], r.stdout[:300] + r.stderr)
listed = [d for d in listed if d["id"] == "rtx-3090"]
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "my-gpu.json")
    with open(path, "w") as f:
        json.dump(listed[0] if listed else {}, f)
    want = plan_json("rtx-3090")
    check("custom device from a JSON file plans like the catalog device", plan_json(path) == want, str(plan_json(path))[:300])
    inline = ("custom:memory=24GiB,bandwidth=936GB/s,fp32=35.6TF,bf16=71TF,int8=284TOPS,class=consumer,vendor=NVIDIA,"
              "memory_type=GDDR6X,tdp=350W")
    check("inline custom device plans like the catalog device", plan_json(inline) == want, str(plan_json(inline))[:300])
    check("vendor name plans like the id", plan_json("GeForce RTX 3090 24GB") == want, "")
    r = run("plan", "--model", "llama-3.1-8b", "--device", path + ":2", "--json")
    check("device file with a count", r.returncode == 0 and json.loads(r.stdout)["devices"] == 2, r.stderr)
    with open(path, "w") as f:
        json.dump({"memory_bytes": 1e9, "bf16_flops_per_s": 1e12}, f)
    r = run("plan", "--model", "llama-3.1-8b", "--device", path)
    check("device file missing field", r.returncode == 2 and r.stderr.strip().endswith("my-gpu.json: bandwidth_bytes_per_s is required")
          and r.stderr.count("\n") == 1, r.stderr)
r = run("plan", "--model", "llama-3.1-8b", "--device", "custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF:2", "--json")
check("inline device with a count", r.returncode == 0 and json.loads(r.stdout)["devices"] == 2, r.stderr)
r = run("plan", "--model", "llama-3.1-8b", "--device", "custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF")
check("missing rates are noted", r.returncode == 0 and "note: custom: not given: fp32, fp8, int8, fp4" in r.stderr, r.stderr)
r = run("list", "devices")
check("list devices: 194 with sources", r.returncode == 0 and r.stdout.strip().endswith("194 devices")
      and "https://" in r.stdout, r.stdout[-200:])
r = run("list", "models")
check("list models: at least 80", r.returncode == 0 and int(r.stdout.strip().split("\n")[-1].split()[0]) >= 80, r.stdout[-200:])
r = run("list", "models", "--filter", "qwen3 moe")
check("list models --filter counts", r.returncode == 0 and " of " in r.stdout.strip().split("\n")[-1]
      and "match 'qwen3 moe'" in r.stdout, r.stdout[-200:])
r = run("list", "formats", "--filter", "x")
check("--filter only for devices and models", r.returncode == 2 and "--filter applies to 'list devices' and 'list models'" in r.stderr, r.stderr)

r = run("plan", "--model", "qwen3-30b-a3b", "--device", "rtx-3060", "--weights", "q4_k_m", "--engine", "llama.cpp",
        "--offload", "experts", "--json")
check("offload experts fits", r.returncode == 0 and json.loads(r.stdout)["memory"]["fits"], r.stdout[:500] + r.stderr)
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--offload", "2")
check("offload range", r.returncode == 2 and "--offload must be >= 0 and <= 1 (got 2)" in r.stderr, r.stderr)

# Calibration and validation against the shipped measurements.

points = os.path.join(os.path.dirname(__file__), "..", "..", "data", "measured", "calibration.csv")
r = run("calibrate", points)
check("calibrate", r.returncode == 0 and "llama.cpp-cuda/gddr" in r.stdout, r.stderr)
with tempfile.TemporaryDirectory() as d:
    # Cross-validation refits every profile once per source: ~1 s in a release
    # build, ~16 s in the unoptimized dev build, more on a loaded CI machine.
    r = run("validate", points, "--report", d, timeout=600)
    check("validate", r.returncode == 0 and "Worst ten points" in r.stdout and "Rows not mapped" in r.stdout, r.stderr)
    check("validate reports the headline figures per engine",
          "Single-stream decode and prefill tokens/s per engine" in r.stdout and "| llama.cpp-cuda | 2 | 30 |" in r.stdout
          and "| llama.cpp-cuda@2024 | 1 | 116 |" in r.stdout and "Worst ten points of llama.cpp-cuda@2024" in r.stdout,
          r.stdout[:400])
    check("validate report written", os.path.exists(os.path.join(d, "report.md")) and os.path.exists(os.path.join(d, "predictions.csv")), d)
# --no-refit: the shipped profiles scored on the points, every row with its band.
r = run("validate", points, "--no-refit", "--json")
v = json.loads(r.stdout)
check("validate --no-refit", r.returncode == 0 and v["refit"] is False and v["chosen_scope"] == "shipped"
      and len(v["rows"]) == v["points"] and all(x["low"] <= x["predicted"] <= x["high"] for x in v["rows"])
      and {"ttft_ms", "tpot_ms", "e2e_latency_s", "prefill_tps"} <= set(v["metrics"]), r.stderr)
# Several points files are read together: the third release's single-stream
# rows beside calibration.csv, each backend of llama.cpp its own class.
single = os.path.join(os.path.dirname(points), "release3", "single_stream.csv")
r = run("validate", points, single, "--no-refit")
check("validate two files", r.returncode == 0 and f"against {points} {single}" in r.stdout
      # sources per metric: Vulkan's decode from two, its prefill from one
      and re.search(r"\| llama\.cpp-vulkan \| 2 \| 16 \| [0-9.]+% \| 1 \| 15 \|", r.stdout) is not None
      and "| llama.cpp-hip | 3 | 21 |" in r.stdout
      and "| llama.cpp-sycl | 1 | 3 |" in r.stdout, r.stdout[:600] + r.stderr)
# A backend by name: the device's own unless named, refused where it cannot run.
j = json.loads(run("decode", "--model", "qwen3-30b-a3b", "--weights", "q4_k_m", "--device", "rx-7900-xtx",
                   "--engine", "llama.cpp-vulkan", "--json").stdout)
check("decode --engine llama.cpp-vulkan", j["engine_settings"]["backend"] == "vulkan"
      and "llama.cpp-vulkan" in j["efficiency"]["name"] + j["efficiency"]["source"], str(j["efficiency"])[:300])
j = json.loads(run("decode", "--model", "qwen3-30b-a3b", "--weights", "q4_k_m", "--device", "rx-7900-xtx",
                   "--engine", "llama.cpp", "--json").stdout)
check("decode llama.cpp on AMD: HIP", j["engine_settings"]["backend"] is None
      and "llama.cpp-hip" in j["efficiency"]["name"] + j["efficiency"]["source"], str(j["efficiency"])[:300])
r = run("decode", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--engine", "llama.cpp-hip")
check("backend on the wrong vendor", r.returncode == 2 and r.stderr.strip() ==
      "llmroof: error: engine backend 'hip' does not run on NVIDIA GPUs (device 'h100-sxm')", r.stderr)
r = run("decode", "--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--engine", "llama.cpp-opencl")
check("unknown backend", r.returncode == 2 and r.stderr.count("\n") == 1
      and "engine backend 'opencl' is not one of llama.cpp's" in r.stderr, r.stderr)
r = run("list", "engines")
check("list engines names the backends", "llama.cpp backends: llama.cpp-cuda, llama.cpp-hip, llama.cpp-vulkan, "
      "llama.cpp-sycl, llama.cpp-metal (default: the device's own)." in r.stdout, r.stdout)
j = json.loads(run("list", "engines", "--json").stdout)
check("list engines json backends", [e["backends"] for e in j if e["name"] == "ollama"] == [["cuda", "hip", "metal"]]
      and [e["backends"] for e in j if e["name"] == "vllm"] == [[]], str(j)[:200])
r = run("validate", points, "--no-refit=yes")
check("flag takes no value", r.returncode == 2 and r.stderr.strip() == "llmroof: error: --no-refit takes no value (got '--no-refit=yes')", r.stderr)
# Kernel paths: current llama.cpp multiplies Q4_0 weights in int8 (MMQ), its
# 2024 builds dequantized to 16 bit; vLLM runs fp8 weights on the fp8 roof.
def op_math(*args: str) -> dict:
    out = json.loads(run("prefill", "--model", "llama-2-7b", "--json", *args).stdout)
    return {o["name"]: o["math"] for o in out["prefill"]["ops"]} if "prefill" in out else {o["name"]: o["math"] for o in out["ops"]}
check("int8 path", op_math("--device", "rtx-4090", "--weights", "q4_0", "--kv", "fp16", "--engine", "llama.cpp")["ffn"] == "int8")
check("dequantize path", op_math("--device", "rtx-4090", "--weights", "q4_0", "--kv", "fp16", "--engine", "llama.cpp@2024")["ffn"] == "bf16")
check("native path", op_math("--device", "h100-sxm", "--weights", "fp8", "--engine", "vllm")["ffn"] == "fp8")
r = run("prefill", "--model", "llama-2-7b", "--device", "rtx-4090", "--engine", "llama.cpp@2023")
check("llama.cpp versions", r.returncode == 2 and r.stderr.strip() == "llmroof: error: engine version of llama.cpp must be 2024 or 'current' (got '2023')", r.stderr)
r = run("prefill", "--model", "llama-2-7b", "--device", "rtx-4090", "--weights", "q4_0", "--kv", "fp16", "--engine", "llama.cpp")
check("math column in the op table", r.returncode == 0 and " math " in r.stdout and " int8 " in r.stdout, r.stdout)
r = run("calibrate")
check("calibrate needs file", r.returncode == 2 and "calibrate needs a points file" in r.stderr, r.stderr)
r = run("calibrate", "/nonexistent.csv")
check("calibrate missing file", r.returncode == 2 and "/nonexistent.csv: no such file" in r.stderr, r.stderr)

r = run("kv", "--model", "deepseek-v3", "--json")
check("kv mla", json.loads(r.stdout)["kv_bytes_per_token"] == 70272, r.stdout)
r = run("kv", "--model", "gpt-oss-120b", "--context", "128k", "--json")
layers = {l["kind"]: l for l in json.loads(r.stdout)["layers"]}
check("kv sliding window", layers["sliding"]["tokens_held"] == 128, layers)

# Bad input: exit 2, one line on stderr, naming the field or the closest ids.
BAD = [
    (["plan", "--model", "llama-3.1-7b", "--device", "h100-sxm"], "unknown model 'llama-3.1-7b'; closest: llama-3.1-70b, llama-3.1-8b"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100"],
     "device 'h100' is ambiguous: it matches 3 devices: h100-pcie (NVIDIA H100 PCIe); h100-sxm"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h900"], "unknown device 'h900'; closest:"),
    (["plan", "--model", "llama-3.1-8b", "--device", "M3 Max"],
     "device 'M3 Max' is ambiguous: it matches 2 devices: m3-max-30c"),
    (["plan", "--model", "llama-3.1-8b", "--device", "custom:memory=24GiB,bandwidth=936,bf16=71TF"],
     "custom device: bandwidth must have a unit like GB/s (got '936')"),
    (["plan", "--model", "llama-3.1-8b", "--device", "custom:memory=24GiB,bandwidth=936GB/s,bf16=71"],
     "custom device: bf16 must have a unit like TF or TOPS (got '71')"),
    (["plan", "--model", "llama-3.1-8b", "--device", "custom:bandwidth=936GB/s,bf16=71TF"],
     "custom device: memory is required (e.g. memory=24GiB)"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--weights", "fp7"], "unknown format 'fp7'"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--users", "0"], "users must be in [1, 1000000000] (got 0)"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--users", "-3"], "--users must be in [1, 1000000000] (got -3)"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--context", "nan"], "--context must be a token count"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--context", "12q"], "--context must be a token count like 4096 or 128k (got '12q')"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:0"], "--device ID:N needs a whole device count N in [1, 1024] per node (got '0')"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--memory-utilization", "1.5"], "--memory-utilization must be > 0 and <= 1 (got 1.5)"),
    (["plan", "--device", "h100-sxm"], "--model is required for 'plan'"),
    (["plan", "--model"], "--model needs a value"),
    (["plan", "--bogus", "1"], "unknown option --bogus; run 'llmroof plan --help'"),
    # An option another command takes is an error naming the option and this command.
    (["decode", "--model", "llama-3-8b", "--device", "rtx-4090", "--offload", "0.5"],
     "'decode' does not take --offload; run 'llmroof decode --help'"),
    (["kv", "--model", "llama-3-8b", "--device", "rtx-4090"], "'kv' does not take --device"),
    (["validate", "x.csv", "--scope", "global"], "'validate' does not take --scope"),
    (["list", "devices", "--users", "3"], "'list' does not take --users"),
    (["plan", "--model", "llama-3-8b", "--device", "rtx-4090", "stray"], "unexpected argument 'stray' for 'plan'"),
    (["kv", "--model", "llama-3-8b", "--json=true"], "--json takes no value (got '--json=true')"),
    (["help", "frobnicate"], "unknown command 'frobnicate'; commands: plan, decode"),
    (["plan", "--model", "llama-3-8b", "--device", "rtx-4090", "--engine", "vllm@x"], "engine version must be a release like 0.10 or 'current' (got 'x')"),
    (["plan", "--model", "llama-3-8b", "--device", "rtx-4090", "--max-num-seqs", "0"], "max-num-seqs must be in [1, 1000000000] (got 0)"),
    (["plan", "--model", "llama-3-8b", "--device", "rtx-4090", "--rate", "1", "--concurrency", "4"], "concurrency and rate are two load models; give one"),
    (["plan", "--model", "llama-3-8b", "--device", "rtx-4090", "--arrivals", "sync"], "arrivals must be mixed or lockstep (got 'sync')"),
    (["plan", "--model", "deepseek-v3", "--device", "h200:8", "--dp-attention"], "dp_attention beside tp: vllm does not run it (SGLang and TensorRT-LLM do; for data-parallel attention give ep alone)"),
    (["plan", "--model", "deepseek-v3", "--device", "h200:8", "--tp", "8", "--ep", "4", "--dp-attention", "--engine", "sglang"], "dp_attention beside tp needs ep = 1 and pp = 1 (with expert parallelism give ep alone: DP attention + EP)"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:2", "--pp", "2", "--dp-attention"], "dp_attention needs tp > 1: the devices whose attention it splits by users"),
    (["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--rate", "2", "--arrivals", "lockstep"], "arrivals: lockstep is a closed loop of identical requests; a rate is an open loop"),
    (["plan", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:4", "--tp", "4", "--ep", "3"], "ep (3) must divide tp (4): each group of tp / ep devices splits its experts by tensor parallelism"),
    (["plan", "--model", "llama-3-8b", "--device", "rtx-4090", "--arrivals", "lockstep", "--concurrency", "4", "--prefix", "64", "--prefix-hit", "0.5"],
     "prefix_hit must be 0 or 1 in lockstep (identical requests all find the prefix or none does) (got 0.5)"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:0"], "--pool needs a whole count in [1, 65536] after ':' (got 'h100-sxm:0')"),
    (["recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm", "--users", "4", "--rate", "2"], "--users and --rate are two loads; give one"),
    (["recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm", "--skip", "speed"], "--skip takes formats, replicas, offload, pd, mtp (got 'speed')"),
    (["recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm", "--price", "a100-sxm-80gb=2/h"], "--price names 'a100-sxm-80gb', which is not in --pool"),
    (["recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm,rtx-4090", "--price", "h100-sxm=2/h"], "price: give every device kind of the pool a price, or none"),
    (["recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm", "--engines", "vllm,lama.cpp"], "lama.cpp"),
    (["recommend", "--model", "llama-3.1-8b"], "--pool is required for 'recommend'"),
    (["list", "gpus"], "list needs one of: devices, models, formats, links, engines (got 'gpus')"),
    ([], "missing command"),
]
for args, msg in BAD:
    r = run(*args)
    lines = r.stderr.strip().splitlines()
    check(f"bad {args}: exit 2", r.returncode == 2, (r.returncode, r.stderr))
    check(f"bad {args}: one line", len(lines) == 1, r.stderr)
    check(f"bad {args}: message", msg in r.stderr, r.stderr)
    check(f"bad {args}: no stdout", r.stdout == "", r.stdout)

r = run("--help")
check("help", r.returncode == 0 and "usage:" in r.stdout, r.stderr)

# Every command answers --help, -h and 'help COMMAND' with its own usage and options, status 0,
# even when other options around it are wrong.
TAKES = {"plan": "--offload", "decode": "--batch", "prefill": "--prompt", "kv": "--block-tokens",
         "moe": "--max-batch", "compare": "--max-batch", "users": "--tps", "calibrate": "--write-profiles",
         "validate": "--report", "list": "--json", "recommend": "--pool"}
for cmd, opt in TAKES.items():
    for args in ([cmd, "--help"], [cmd, "-h"], ["help", cmd], [cmd, "--model", "--help"]):
        r = run(*args)
        check(f"{args}: exit 0", r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr))
        check(f"{args}: usage line", r.stdout.startswith(f"usage: llmroof {cmd} "), r.stdout[:200])
        check(f"{args}: lists {opt}", opt in r.stdout, r.stdout)
r = run("decode", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--batch", "8", "--price-per-hour", "2.5")
check("decode energy line", r.returncode == 0 and "Energy, 8 users decoding at 4,096 tokens" in r.stdout
      and "J per output token" in r.stdout and "cost: $2.50 per hour" in r.stdout, r.stdout)
r = run("decode", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--purchase", "-1")
check("decode bad price", r.returncode == 2 and "purchase" in r.stderr and r.stderr.count("\n") == 1, r.stderr)
r = run("decode", "--help")
check("decode help omits plan-only options", "--offload" not in r.stdout and "--rate" not in r.stdout, r.stdout)

# Kernel launches and llama.cpp as it runs (issue 33 items 3 and 4).
dsv3 = json.loads(run("decode", "--model", "deepseek-v3", "--device", "h200:8", "--engine", "sglang@2024",
                      "--context", "256", "--json").stdout)
check("sglang@2024 DeepSeek-V3 batch 1 near 30 t/s (PR #2643: 30.3)",
      26 < dsv3["per_user_tokens_per_s_estimate"] < 36, dsv3.get("per_user_tokens_per_s_estimate"))
check("profile JSON names its per-kernel cost and points",
      dsv3["efficiency"]["per_launch_s"] == 16e-6 and dsv3["efficiency"]["points"] == 11, dsv3["efficiency"])
r = run("plan", "--model", "llama-3.1-8b", "--device", "arc-b580", "--engine", "llama.cpp", "--weights", "q4_k_m")
check("a profile with nothing measured behind it says so", "no measurements behind this profile" in r.stdout
      and "kernel traits of llama.cpp-sycl" in r.stdout, r.stdout)
# HIP compiles CUDA's kernels: without a fit of its own it takes CUDA's, and says so.
r = run("plan", "--model", "llama-3.1-8b", "--device", "mi300x", "--engine", "llama.cpp")
check("HIP takes CUDA's fit", "profile fitted llama.cpp-cuda" in r.stdout
      and "taken by llama.cpp-hip, which has no fit of its own" in r.stdout, r.stdout)
r = run("validate", points, "--no-refit", timeout=300)
check("validate names engines without decode or prefill points",
      "No single-stream decode or prefill points for vllm@v0, vllm, sglang" in r.stdout, r.stdout[-3000:])
LLAMA = ["--model", "qwen3-32b", "--engine", "llama.cpp", "--weights", "q4_k_m"]
r = run("plan", *LLAMA, "--device", "rtx-4090:2")
check("llama.cpp splits two GPUs by layers", "(layer split, PP 2)" in r.stdout.splitlines()[0], r.stdout[:300])
# --tp on llama.cpp is its row split: the whole KV cache on the main device
# (2 x 8 x 128 x 2 B x 64 layers = 262,144 B a token where TP 2 holds half),
# dense models only; Ollama has none.
r = run("plan", *LLAMA, "--device", "rtx-4090:2", "--tp", "2", "--json")
j = json.loads(r.stdout)
check("llama.cpp --tp is the row split", j["parallel"]["row_split"] is True
      and j["memory"]["kv_bytes_per_token"] == 262144, j["parallel"])
r = run("plan", *LLAMA, "--device", "rtx-4090:2", "--tp", "2")
check("row split named", "(row split, TP 2)" in r.stdout.splitlines()[0], r.stdout[:300])
r = run("plan", "--model", "qwen3-30b-a3b", "--engine", "llama.cpp", "--device", "rtx-4090:2", "--tp", "2")
check("no row split of experts", r.returncode == 2 and r.stderr.strip() ==
      "llmroof: error: tp: llama.cpp's row split (--split-mode row) does not split a Mixture-of-Experts model's "
      "experts; split 'qwen3-30b-a3b' by layers (pp, the default)", r.stderr)
r = run("plan", "--model", "qwen3-32b", "--engine", "ollama", "--device", "rtx-4090:2", "--tp", "2")
check("Ollama splits by layers only", r.returncode == 2 and "ollama splits a model over devices by layers only" in r.stderr
      and len(r.stderr.strip().splitlines()) == 1, r.stderr)
# Across nodes the default is a replica per node where one node holds the
# model (issue 55 item 5): Llama-3.3-70B on 2 x 8 H100 is 2 x TP 8, and its
# closed loop is the P/D table's "aggregated 2 x TP 8" row; Kimi K2 in FP8
# needs both nodes: TP 16.
r = run("plan", "--model", "llama-3.3-70b", "--device", "h100-sxm:8", "--nodes", "2", "--users", "64", "--pd", "8", "--json")
j = json.loads(r.stdout)
row = next(x for x in j["disaggregation"]["rows"] if x["layout"] == "aggregated 2 x TP 8")
check("nodes: replicas by default", j["parallel"]["replicas"] == 2 and j["parallel"]["tp"] == 8 and j["devices"] == 16
      and j["users_per_replica"] == 32 and j["memory"]["users"] == 32, j["parallel"])
check("nodes: the plan's loop is the replicas' row", abs(j["load"]["requests_per_s"] - row["loop"]["requests_per_s"]) < 1e-9
      and abs(j["load"]["ttft_s"] - row["loop"]["ttft_s"]) < 1e-12, (j["load"], row))
check("nodes: TP 16 stays a row beside them", any(x["layout"] == "aggregated 1 x TP 16" for x in j["disaggregation"]["rows"]), j["disaggregation"]["rows"])
r = run("plan", "--model", "llama-3.3-70b", "--device", "h100-sxm:8", "--nodes", "2", "--users", "64")
check("nodes: replicas named", "(2 replicas of TP 8, one per node)" in r.stdout.splitlines()[0]
      and "(each of 2 replicas holds at most 32 of the 64 users)" in r.stdout, r.stdout[:2000])
r = run("plan", "--model", "kimi-k2", "--weights", "fp8", "--device", "h100-sxm:8", "--nodes", "2", "--json")
check("nodes: a model that needs them spans them", json.loads(r.stdout)["parallel"]["tp"] == 16
      and json.loads(r.stdout)["parallel"]["replicas"] == 1, r.stdout[:500])

# A candidate that misses at its estimate has no slow edge priced: "-", not "(0.0)".
r = run("recommend", "--model", "llama-3.1-8b", "--pool", "rtx-4090:2", "--users", "64", "--tps", "60")
rows = [l for l in r.stdout.splitlines() if " misses: " in l]
check("no slow edge for a miss", rows and all("(     -)" in l for l in rows) and "(   0.0)" not in r.stdout, r.stdout)
r = run("plan", *LLAMA, "--device", "rtx-4090", "--users", "8", "--context", "8k", "--json")
loop = json.loads(r.stdout)["load"]
check("llama.cpp: 8 users queue for its one slot", loop["queue_wait_s"] > 60 and loop["limit"] == "max_num_seqs", loop)
r = run("plan", *LLAMA, "--device", "rtx-4090", "--users", "8", "--context", "8k")
check("a queue of whole requests reads in seconds", "(waiting for a slot 14" in r.stdout and "1 slot:" in r.stdout, r.stdout)
r = run("plan", *LLAMA, "--device", "rtx-4090", "--context", "32k", "--offload", "auto")
check("--offload auto: the fewest layers", "20% of the layers (13 of 64)" in r.stdout and "do NOT fit" not in r.stdout, r.stdout)
r = run("plan", *LLAMA, "--device", "rtx-4090", "--context", "32k")
check("what would make it fit: the smallest offload", "offload 13 of 64 layers    yes" in r.stdout, r.stdout)
r = run("plan", *LLAMA, "--device", "rtx-4090", "--context", "4m", "--offload", "auto")
check("--offload auto that cannot fit", r.returncode == 2 and r.stderr.strip() ==
      "llmroof: error: offload auto: 1 x 4194304 tokens do not fit even with every layer in host RAM", r.stderr)

# Engines' own flag names and "did you mean" (issue 33 item 7).
a = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm:2", "--tensor-parallel-size", "2",
        "--kv-cache-dtype", "fp8_e4m3", "--gpu-memory-utilization", "0.92", "--json").stdout
b = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm:2", "--tp", "2", "--kv", "fp8-e4m3",
        "--memory-utilization", "0.92", "--json").stdout
check("vLLM's flag names are aliases", a == b and a != "", a[:200])
a = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm", "--kv-cache-dtype", "auto", "--json").stdout
b = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm", "--json").stdout
check("--kv-cache-dtype auto is the model's own", a == b, a[:200])
a = run("plan", *LLAMA, "--device", "rtx-4090", "--parallel", "4", "--cache-type-k", "q8_0", "--json").stdout
b = run("plan", *LLAMA, "--device", "rtx-4090", "--max-num-seqs", "4", "--kv", "q8_0", "--json").stdout
check("llama.cpp's --parallel and --cache-type-k", a == b and a != "", a[:200])
r = run("plan", "--model", "qwen3-32b", "--device", "h100-sxm", "--contxt", "8k")
check("unknown option: did you mean", r.returncode == 2 and r.stderr.strip() ==
      "llmroof: error: unknown option --contxt (did you mean --context?); run 'llmroof plan --help'", r.stderr)

r = run("decode", "--model", "qwen3-8b", "--device", "h100-sxm", "--weights", "fp4")
check("fp4 on an H100 says which roof it runs on",
      "note: NVIDIA H100 SXM5 has no fp4 math: nvfp4 weights are read at 4.5 bits and computed on its bf16 roof"
      in r.stdout.splitlines()[1], r.stdout[:400])
# Issue 55 item 8: the TTFT line puts each rate beside the time it is of (2,048 / estimate, 2,048 / bound).
r = run("plan", "--model", "gpt-oss-120b", "--device", "h100-sxm", "--json")
tj = json.loads(r.stdout)["ttft"]
r = run("plan", "--model", "gpt-oss-120b", "--device", "h100-sxm")
line = next(l for l in r.stdout.splitlines() if l.startswith("Time to first token"))
check("TTFT line: the estimate's rate by the estimate, the bound's by the bound",
      f"({2048 / tj['estimate_s']:,.0f} tokens/s), bound" in line and f"({2048 / tj['bound_s']:,.0f} tokens/s, " in line,
      line)
# Issue 55 item 8: a shorthand for several formats is read as one and says so; a name is taken as named.
r = run("plan", "--model", "llama-3.1-8b", "--device", "rtx-4090", "--weights", "q4")
check("--weights q4: read as q4_0, said", r.returncode == 0 and r.stderr.strip() ==
      "llmroof: note: --weights q4 reads as q4_0 (also: q4_1, q4_k, q4_k_m, q4_k_s, iq4_xs, iq4_nl; name one to plan it)"
      and "weights q4_0" in r.stdout, r.stderr)
r = run("plan", "--model", "llama-3.1-8b", "--device", "rtx-4090", "--weights", "int4")
check("--weights int4: read as awq-int4, said", "--weights int4 reads as awq-int4 (also: gptq-int4, int4-g32" in r.stderr,
      r.stderr)
r = run("plan", "--model", "llama-3.1-8b", "--device", "rtx-4090", "--weights", "q4_k_m")
check("--weights q4_k_m: no note", r.returncode == 0 and r.stderr == "", r.stderr)
# list devices --filter matches whole words; a rate no source gives is '-'.
r = run("list", "devices", "--filter", "m4")
check("list --filter m4: the M4s, not an SXM4", "a100" not in r.stdout and "m4-max-40c" in r.stdout, r.stdout)
r = run("list", "devices", "--filter", "m3 ultra")
check("list --filter 'm3 ultra': not HBM3e's B300", "b300" not in r.stdout and "m3-ultra-80c" in r.stdout, r.stdout)
r = run("list", "devices", "--filter", "h800")
h800 = {line.split()[0]: line.split() for line in r.stdout.splitlines() if line.startswith("h800")}
check("list: H800 PCIe's tensor rate, H800 SXM5's unknown fp32 as '-'",
      h800["h800-pcie-80gb"][5] == "756.5" and h800["h800-sxm5"][4] == "-", r.stdout)
r = run("decode", "--model", "qwen3-8b", "--device", "b200", "--weights", "fp4")
check("fp4 on a B200 runs on its fp4 roof, no note", "has no fp4 math" not in r.stdout, r.stdout[:400])

# recommend (issue 31): the seed scenario's question, its JSON, and exit 1 when nothing meets.
REC = ["recommend", "--model", "devstral-small-2-24b", "--pool", "rtx-pro-6000-blackwell:2", "--users", "4",
       "--context", "128k", "--prompt", "8k", "--output", "1k", "--tps", "20", "--ttft", "10"]
r = run(*REC)
check("recommend seed: exit 0", r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr))
for line in ("1 x rtx-pro-6000-blackwell (1 device, vllm, weights bf16, KV bf16): no_fit: does not fit: 1 user of "
             "131,072 tokens per instance at most, or 60,032 tokens each for 4",
             "KV cache in fp8-e4m3", "2 devices (TP 2)               fits", "fewer users                    fits",
             "shorter context                fits          4 users at 60,032 tokens",
             "recommended: 2 x rtx-pro-6000-blackwell (TP 2, vllm, weights bf16, KV fp8-e4m3)", "why: the cheapest that meets every target at its band's slow edge"):
    check(f"recommend seed text: {line[:40]}", line in r.stdout, r.stdout)
# The README's recommend block is what the command prints, line by line in order.
block = text.split("The seed scenario's question:", 1)[1].split("```", 2)[1].strip("\n").splitlines()
lines, at = r.stdout.splitlines(), 0
for line in block:
    if line == "...":
        continue
    while at < len(lines) and lines[at] != line:
        at += 1
    check(f"README recommend line: {line[:50]}", at < len(lines), r.stdout)
rj = json.loads(run(*REC, "--json").stdout)
check("recommend json schema", rj["schema"] == "llmroof.recommend/1" and rj["met"] and rj["best"]["status"] == "meets"
      and rj["best"]["devices"] == 2 and rj["best"]["tokens_per_s_per_user_slow"] >= 20, rj.get("best"))
# Issue 55: the recommended deployment's speed is its plan's closed loop at the 128k asked for.
pl = json.loads(run("plan", "--model", "devstral-small-2-24b", "--device", "rtx-pro-6000-blackwell:2", "--kv", "fp8-e4m3",
                    "--users", "4", "--context", "128k", "--prompt", "8k", "--output", "1k", "--json").stdout)
check("recommend seed: the plan at 128k agrees", abs(pl["load"]["output_tokens_per_s_per_user"] - rj["best"]["tokens_per_s_per_user"])
      < 1e-3 * rj["best"]["tokens_per_s_per_user"] and rj["workload"]["history"] == 131072 - 8192 - 1024, (pl["load"], rj["best"]))
# Issue 55's team of developers at 64k: users answers at the 64k asked for, the
# plan's closed loop for that many users to 1e-3; the plan's decode-only 64k row
# (no prompts between the steps) is its upper edge, the other users' prompts
# (2,048 tokens after ~63k cached, each turn) taking the rest.
uj = json.loads(run("users", "--model", "qwen3-coder-30b-a3b", "--device", "a100-sxm-80gb:2", "--tps", "30",
                    "--context", "64k", "--json").stdout)
pj = json.loads(run("plan", "--model", "qwen3-coder-30b-a3b", "--device", "a100-sxm-80gb:2", "--users",
                    str(int(uj["max_users"])), "--context", "64k", "--json").stdout)
row64 = pj["decode_curve"][-1]
check("users at 64k: the plan's loop at 64k", uj["context"] == 65536 and row64["context"] == 65536
      and abs(uj["per_user_tokens_per_s_estimate"] - pj["load"]["output_tokens_per_s_per_user"])
      < 1e-3 * uj["per_user_tokens_per_s_estimate"], (uj["per_user_tokens_per_s_estimate"], pj["load"]))
check("users at 64k: below the decode-only 64k row by the prompts' share",
      0.85 * row64["per_user_tokens_per_s_estimate"] < uj["per_user_tokens_per_s_estimate"]
      < row64["per_user_tokens_per_s_estimate"], (uj["per_user_tokens_per_s_estimate"], row64))
# Issue 55 item 4: cost from the load served, by hand: $2 x 2 devices per hour over
# the closed loop's output tokens per hour; a month is 730.5 hours.
cj = json.loads(run("plan", "--model", "qwen3-coder-30b-a3b", "--device", "a100-sxm-80gb:2", "--users", "6",
                    "--context", "64k", "--price-per-hour", "2", "--json").stdout)
served = cj["load"]["output_tokens_per_s"]
check("plan cost: price / served tokens per hour", cj["energy"]["basis"] == "closed loop"
      and cj["energy"]["output_tokens_per_s"] == served
      and abs(cj["energy"]["cost_per_million_output_tokens"] - 4.0 / (served * 3600 / 1e6)) < 1e-9
      and cj["energy"]["cost_per_month"] == 4.0 * 730.5, cj["energy"])
r = run("plan", "--model", "qwen3-coder-30b-a3b", "--device", "a100-sxm-80gb:2", "--users", "6", "--context", "64k",
        "--price-per-hour", "2")
check("plan cost text: served, per month", "6 users served in the closed loop above at 65,536 tokens" in r.stdout
      and "$4.00 per hour ($2,922 per month)" in r.stdout, r.stdout)
r = run("plan", "--model", "qwen3-32b", "--device", "rtx-4090", "--users", "4")
check("plan energy of users that do not fit is marked", "if they fitted (they do NOT: nothing runs)" in r.stdout
      and json.loads(run("plan", "--model", "qwen3-32b", "--device", "rtx-4090", "--users", "4", "--json").stdout)[
          "energy"]["fits"] is False, r.stdout)
r = run("recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:4", "--users", "4", "--budget", "50000")
check("recommend --budget without purchase prices", r.returncode == 2 and r.stderr.strip() ==
      "llmroof: error: budget needs a purchase price for every device kind ('h100-sxm' has none: give its price as a "
      "purchase, e.g. h100-sxm=30000)", r.stderr)
r = run("recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:4", "--users", "4", "--price", "h100-sxm=30000",
        "--budget", "50000")
check("recommend --budget: said and applied", "bought for at most $50,000" in r.stdout
      and "recommended: 1 x h100-sxm" in r.stdout, r.stdout)
check("recommend json counts", sum(rj["counts"].values()) == rj["searched"] == len(rj["candidates"]), rj["counts"])
check("recommend json: the best is on the front", rj["best"]["index"] in [c["index"] for c in rj["front"]], rj["front"][:2])
check("recommend json: every rejection says why",
      all((c["status"] == "meets") == (c["reason"] == "") for c in rj["candidates"]), "")
r = run(*REC[:-4], "--tps", "10000", "--json")
nj = json.loads(r.stdout)
check("recommend: nothing meets, exit 1", r.returncode == 1 and not nj["met"] and nj["best"] is None
      and nj["closest"] and nj["closest"][0]["miss"] > 0 and nj["why"].startswith("nothing meets the targets; closest:"),
      (r.returncode, nj.get("why")))
r = run(*REC[:-4], "--tps", "10000")
check("recommend text: nothing meets", r.returncode == 1 and "nothing meets the targets" in r.stdout
      and "closest misses:" in r.stdout, r.stdout[-1500:])
r = run("recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:2,rtx-4090:2", "--rate", "5", "--prompt", "2k",
        "--output", "256", "--tps", "20", "--ttft", "1", "--price", "h100-sxm=2.5/h,rtx-4090=1800", "--json")
pj = json.loads(r.stdout)
check("recommend open loop with prices", r.returncode == 0 and pj["workload"]["rate"] == 5 and
      pj["best"]["cost_per_hour"] is not None and pj["pool"][1]["price_per_hour"] == 1800 / (3 * 365.25 * 24), pj.get("best"))
check("recommend: disaggregated candidates", any(c["prefill_instances"] > 0 for c in pj["candidates"]), "")

# plan --pd with --concurrency: every layout's closed loop of the users beside its goodput.
PD = ["plan", "--model", "llama-3.1-70b", "--device", "h100-sxm:8", "--weights", "fp8", "--context", "4608",
      "--prompt", "4k", "--output", "500", "--pd", "2"]
r = run(*PD, "--concurrency", "64")
check("plan --pd --concurrency: the loop table", r.returncode == 0 and
      "The same layouts with 64 users, each sending its next request when the last completes" in r.stdout
      and "Closed loop:" in r.stdout
      and "2P2D" in r.stdout.split("The same layouts")[-1].split("Closed loop:")[0], r.stdout[-2500:])
pdj = json.loads(run(*PD, "--concurrency", "64", "--json").stdout)
rows = pdj["disaggregation"]["rows"]
agg = next(x for x in rows if x["layout"] == "aggregated 1 x TP 8")
check("plan --pd --concurrency --json: a loop per row", all(x["loop"]["users"] == 64 for x in rows)
      and agg["loop"]["ttft_s"] == pdj["load"]["ttft_s"] and agg["loop"]["requests_per_s"] == pdj["load"]["requests_per_s"]
      and all(x["loop"]["output_tokens_per_s"] == x["loop"]["requests_per_s"] * 500 for x in rows), rows[1])
nj = json.loads(run(*PD, "--json").stdout)
check("plan --pd without a closed loop: no loops", all(x["loop"] is None for x in nj["disaggregation"]["rows"])
      and "The same layouts" not in run(*PD).stdout and "The same layouts" not in run(*PD, "--rate", "2").stdout, "")
uj = json.loads(run(*PD, "--users", "16", "--json").stdout)
check("plan --pd --users 16: the plan's own loop of 16 on every layout",
      all(x["loop"]["users"] == 16 for x in uj["disaggregation"]["rows"]) and uj["load"]["concurrency"] == 16,
      uj["disaggregation"]["rows"][0])

# Issue 60: plans that must not fail, answers that must not mislead.
r = run("plan", "--model", "phi-4", "--device", "rtx-4090")
check("plan phi-4 on one 4090: answered, no TP 4 alternative", r.returncode == 0 and "2 devices (TP 2)" in r.stdout
      and "TP 4" not in r.stdout, r.stderr)
r = run("recommend", "--model", "phi-4", "--pool", "rtx-4090:2", "--users", "8")
check("recommend phi-4: the search survives its alternatives", r.returncode in (0, 1) and "searched" in r.stdout, r.stderr)
r = run("compare", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--kv", "bf16", "--kv", "fp16")
# 102 sequences of 4,096 tokens fit: batches 1-64 tie, 128-1,024 decide nothing.
check("compare: equal rows are a tie, not 'second'", r.returncode == 0 and r.stdout.count("| tie") == 7
      and r.stdout.count("GB*| -") == 4, r.stdout)
# Issue 55 item 3: what does not fit is marked and concludes nothing, in text and JSON.
r = run("compare", "--model", "glm-4.5-air", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell")
check("compare: a side that does not fit concludes nothing", r.returncode == 0
      and "no conclusion: glm-4.5-air does not fit, short by 119.23 GiB" in r.stdout
      and "decodes faster" not in r.stdout and r.stdout.count("GB*| ") == 11 + 6
      and not any(line.endswith("| glm-4.5-air") for line in r.stdout.splitlines()), r.stdout)
cj = json.loads(run("compare", "--model", "glm-4.5-air", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell",
                    "--json").stdout)
check("compare json: holds per side and batch", cj["held_batch"] == 0 and cj["held_speed_crossover_batch"] is None
      and not any(b["first_holds"] for b in cj["batches"])
      and [b["second_holds"] for b in cj["batches"]] == [b["batch"] <= 18 for b in cj["batches"]], cj["batches"][:3])
r = run("compare", "--model", "qwen3-30b-a3b", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell", "--context", "32k")
check("compare: the conclusion stops at what both hold",
      "qwen3-30b-a3b stays faster per user up to batch 2, the most both hold at 32,768 tokens" in r.stdout
      and "|     44.3 (   62.7)     28.57 GB |" in r.stdout and "98.40 GB*| -" in r.stdout, r.stdout)
r = run("decode", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell", "--batch", "64")
check("decode: a batch beyond the KV room is marked",
      "batch 64 does NOT fit: the KV room holds 18 sequences of 4,096 tokens" in r.stdout, r.stdout)
dj = json.loads(run("decode", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell", "--batch", "64", "--json").stdout)
check("decode json: fit", dj["fit"]["weights_fit"] and not dj["fit"]["fits"] and dj["fit"]["max_users_at_context"] == 18,
      dj["fit"])
dj = json.loads(run("decode", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell", "--batch", "16", "--json").stdout)
check("decode json: a batch that fits", dj["fit"]["fits"], dj["fit"])
r = run("decode", "--model", "qwen3-32b", "--device", "rtx-4090")
check("decode: weights that do not fit are said", "does NOT fit on 1 x NVIDIA GeForce RTX 4090: weights 61.02 GiB, short by"
      in r.stdout, r.stdout)
r = run("speculate", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell", "--spec", "ngram", "--accept", "0.5")
check("speculate: rows beyond the room are marked, the conclusion stops there",
      r.stdout.count("  *\n") == 6 and "speculation pays at every batch that fits (up to 18 sequences)" in r.stdout, r.stdout)
sj = json.loads(run("speculate", "--model", "qwen3-32b", "--device", "rtx-pro-6000-blackwell", "--spec", "ngram",
                    "--accept", "0.5", "--json").stdout)
check("speculate json: fits per row", sj["fits"] and [b["fits"] for b in sj["batches"]] ==
      [b["batch"] <= sj["memory"]["max_users"] for b in sj["batches"]] and not sj["batches"][-1]["fits"], sj["batches"][-1])
r = run("users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "-0")
check("users --tps -0: no signed zero echoed", r.returncode == 0 and "-0.0" not in r.stdout, r.stdout)
hit = {h: json.loads(run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--prefix", "2k", "--prefix-hit", h,
                         "--users", "100", "--json").stdout)["memory"]["max_users_at_context"] for h in ("0", "1e-300", "0.5", "1")}
check("prefix hit 1e-300 holds what hit 0 holds (no cliff), 0.5 between", hit["1e-300"] == hit["0"] < hit["0.5"] < hit["1"], hit)
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:8", "--pd", "1", "--kv-link", "eth-10g",
        "--kv-link-efficiency", "0.01")
check("P/D rows that serve nothing: a lone request's TTFT, TPOT '-', the link named",
      r.returncode == 0 and "its KV hand-over alone takes" in r.stdout and " 0.00 ms" not in r.stdout, r.stdout[-1500:])
r = run("plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:8", "--pd", "1", "--kv-link", "eth-10g")
check("P/D summary names the link, not the prefill pool", r.returncode == 0 and "its KV hand-over link saturates" in r.stdout
      and "its prefill pool saturates" not in r.stdout, r.stdout[-800:])
rj = json.loads(run("recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:2048", "--per-node", "8", "--users",
                    "100000", "--json").stdout)
check("recommend searches past 64 devices a kind", rj["met"] and rj["best"]["devices"] > 64 and rj["pruned"] is False,
      rj.get("why"))

for f in failures:
    print("FAIL", f[:2000])
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
