"""The seed scenario from Python: print the plan, then what changes would hold 128k each."""

import llmroof

seed = dict(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8", users=4, context=131072)
print(llmroof.plan(kv="bf16", **seed))
# vLLM (the default engine) caches in bf16 or fp8; a 4-bit q4_0 cache is llama.cpp's.
for kv, engine in (("fp8-e4m3", "vllm"), ("q4_0", "llama.cpp")):
    m = llmroof.plan(kv=kv, engine=engine, **seed).memory
    print(f"KV {kv}: 4 users at 128k fit: {m.fits} (max users {m.max_users_at_context:g})")
