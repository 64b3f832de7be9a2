"""The seed scenario from Python: print the plan, then what changes would hold 128k each."""

import llmroof


def seed_plan(*, kv: str, engine: str = "vllm") -> llmroof.Plan:
    return llmroof.plan(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8", users=4,
                        context=131072, kv=kv, engine=engine)


print(seed_plan(kv="bf16"))
# vLLM (the default engine) caches in bf16 or fp8; a 4-bit q4_0 cache is llama.cpp's.
for kv, engine in (("fp8-e4m3", "vllm"), ("q4_0", "llama.cpp")):
    m = seed_plan(kv=kv, engine=engine).memory
    print(f"KV {kv}: 4 users at 128k fit: {m.fits} (max users {m.max_users_at_context:g})")
