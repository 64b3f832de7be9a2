"""The seed scenario from Python: print the plan, then what changes would hold 128k each."""

import llmroof

seed = dict(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8", users=4, context=131072)
print(llmroof.plan(kv="bf16", **seed))
for kv in ("fp8-e4m3", "q4_0"):
    m = llmroof.plan(kv=kv, **seed).memory
    print(f"KV {kv}: 4 users at 128k fit: {m.fits} (max users {m.max_users_at_context:g})")
