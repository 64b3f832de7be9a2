#!/usr/bin/env python3
"""Generate src/hardware/catalog_devices.inc from data/accelerators.csv (the project's
copy of the team's accelerator table, 191 rows; conventions in
data/ACCELERATORS.md).

Every row becomes a device. Ids are made from the name by `make_id` (vendor
and brand words dropped, Apple GPU core counts as `-NNc`); `IDS` pins the ids
that existed before the generated scheme (tests and calibration use them) and
a few names the rule would make awkward. Classes come from the family by
`make_class`, with overrides. `ALIASES` adds other spellings a user may type
(the resolver in src/hardware/devices.cpp also matches normalised names). Derived peaks
(for rows whose vendor published only one figure) are the rows of
data/accelerators_derived.csv, each with its reasoning; Apple GPUs' fp32
estimates are computed here. Run with --check to fail when the committed file is stale (the test
suite does).
"""
import csv
import pathlib
import re
import sys

from generated import cxx, write_or_check

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "hardware" / "catalog_devices.inc"

# name -> (id, class): ids kept from before the generated scheme, and overrides.
IDS = {
    "NVIDIA GeForce RTX 3090": ("rtx-3090", "consumer"),
    "NVIDIA GeForce RTX 3090 Ti": ("rtx-3090-ti", "consumer"),
    "NVIDIA GeForce RTX 4090": ("rtx-4090", "consumer"),
    "NVIDIA GeForce RTX 5090": ("rtx-5090", "consumer"),
    "NVIDIA RTX A6000": ("rtx-a6000", "workstation"),
    "NVIDIA RTX 6000 Ada Generation": ("rtx-6000-ada", "workstation"),
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": ("rtx-pro-6000-blackwell", "workstation"),
    "NVIDIA L4": ("l4", "datacenter"),
    "NVIDIA L40S": ("l40s", "datacenter"),
    "NVIDIA A10": ("a10", "datacenter"),
    "NVIDIA A100 40GB PCIe": ("a100-40gb-pcie", "datacenter"),
    "NVIDIA A100 80GB PCIe": ("a100-80gb-pcie", "datacenter"),
    "NVIDIA A100 40GB SXM4": ("a100-40gb-sxm", "datacenter"),
    "NVIDIA A100 80GB SXM4": ("a100-80gb-sxm", "datacenter"),
    "NVIDIA H100 PCIe": ("h100-pcie", "datacenter"),
    "NVIDIA H100 SXM5": ("h100-sxm", "datacenter"),
    "NVIDIA H100 NVL": ("h100-nvl", "datacenter"),
    "NVIDIA H200 SXM": ("h200", "datacenter"),
    "NVIDIA H200 NVL": ("h200-nvl", "datacenter"),
    "NVIDIA H20": ("h20", "datacenter"),
    "NVIDIA B200 (HGX/DGX, per GPU)": ("b200", "datacenter"),
    "NVIDIA GB200 (per Blackwell GPU in GB200 NVL72)": ("gb200", "datacenter"),
    "NVIDIA B300 / Blackwell Ultra (HGX, per GPU)": ("b300", "datacenter"),
    "NVIDIA GB300 (per Blackwell Ultra GPU in GB300 NVL72)": ("gb300", "datacenter"),
    "NVIDIA DGX Spark (GB10 Grace Blackwell)": ("dgx-spark", "unified"),
    "NVIDIA Jetson AGX Orin 64GB": ("jetson-agx-orin-64gb", "unified"),
    "NVIDIA Jetson AGX Thor (T5000)": ("jetson-agx-thor", "unified"),
    "AMD Instinct MI250X": ("mi250x", "datacenter"),
    "AMD Instinct MI300X": ("mi300x", "datacenter"),
    "AMD Instinct MI325X": ("mi325x", "datacenter"),
    "AMD Instinct MI355X": ("mi355x", "datacenter"),
    "AMD Radeon RX 7900 XTX": ("rx-7900-xtx", "consumer"),
    "AMD Ryzen AI Max+ 395 (Strix Halo, Radeon 8060S)": ("ryzen-ai-max-395", "unified"),
    "Intel Gaudi 3 (HL-325L OAM)": ("gaudi-3", "datacenter"),
    "Google Cloud TPU v5e": ("tpu-v5e", "datacenter"),
    "Google Cloud TPU v6e (Trillium)": ("tpu-v6e", "datacenter"),
    "Apple M1 (8-core GPU)": ("m1-8c", "unified"),
    "Apple M1 Pro (16-core GPU)": ("m1-pro-16c", "unified"),
    "Apple M1 Max (32-core GPU)": ("m1-max-32c", "unified"),
    "Apple M1 Ultra (64-core GPU)": ("m1-ultra-64c", "unified"),
    "Apple M2 (10-core GPU)": ("m2-10c", "unified"),
    "Apple M2 Pro (19-core GPU)": ("m2-pro-19c", "unified"),
    "Apple M2 Max (38-core GPU)": ("m2-max-38c", "unified"),
    "Apple M2 Ultra (76-core GPU)": ("m2-ultra-76c", "unified"),
    "Apple M3 (10-core GPU)": ("m3-10c", "unified"),
    "Apple M3 Pro (18-core GPU)": ("m3-pro-18c", "unified"),
    "Apple M3 Max (14-core CPU / 30-core GPU)": ("m3-max-30c", "unified"),
    "Apple M3 Max (16-core CPU / 40-core GPU)": ("m3-max-40c", "unified"),
    "Apple M3 Ultra (80-core GPU)": ("m3-ultra-80c", "unified"),
    "Apple M4 (10-core GPU)": ("m4-10c", "unified"),
    "Apple M4 Pro (20-core GPU)": ("m4-pro-20c", "unified"),
    "Apple M4 Pro (16-core GPU)": ("m4-pro-16c", "unified"),
    "Apple M4 Max (14-core CPU / 32-core GPU)": ("m4-max-32c", "unified"),
    "Apple M4 Max (16-core CPU / 40-core GPU)": ("m4-max-40c", "unified"),
    "NVIDIA GeForce RTX 3060 12GB": ("rtx-3060", "consumer"),
    "NVIDIA GeForce RTX 3070": ("rtx-3070", "consumer"),
    "NVIDIA GeForce RTX 3080 10GB": ("rtx-3080", "consumer"),
    "NVIDIA GeForce RTX 4060 Ti 16GB": ("rtx-4060-ti-16gb", "consumer"),
    "NVIDIA GeForce RTX 4070": ("rtx-4070", "consumer"),
    "NVIDIA GeForce RTX 4080": ("rtx-4080", "consumer"),
    "NVIDIA GeForce RTX 5080": ("rtx-5080", "consumer"),
    "NVIDIA A40": ("a40", "datacenter"),
    "NVIDIA Tesla V100 SXM2 32GB": ("v100-sxm2-32gb", "datacenter"),
    "NVIDIA Tesla P40": ("p40", "datacenter"),
    "NVIDIA RTX 4000 Ada Generation": ("rtx-4000-ada", "workstation"),
    "NVIDIA RTX 5000 Ada Generation": ("rtx-5000-ada", "workstation"),
    "AMD Ryzen 9 7950X": ("ryzen-9-7950x", "cpu"),
    "Intel Core i9-14900K": ("core-i9-14900k", "cpu"),
    "AMD EPYC 9654": ("epyc-9654", "cpu"),
    "Intel Xeon Platinum 8480+": ("xeon-8480", "cpu"),
    "AMD Ryzen Threadripper PRO 7995WX": ("threadripper-7995wx", "cpu"),
    "NVIDIA GH200 Grace Hopper Superchip (96 GB HBM3, per GPU)": ("gh200", "datacenter"),
    "NVIDIA Jetson Orin Nano 8GB (Super mode, JetPack 6.1+)": ("jetson-orin-nano-8gb-super", "unified"),
    "AMD Radeon PRO W7800 (32 GB)": ("radeon-pro-w7800-32gb", "workstation"),
    "AMD Radeon PRO W7800 48GB": ("radeon-pro-w7800-48gb", "workstation"),
    "NVIDIA RTX PRO 5000 Blackwell (48 GB)": ("rtx-pro-5000-blackwell-48gb", "workstation"),
    "NVIDIA RTX PRO 5000 Blackwell (72 GB)": ("rtx-pro-5000-blackwell-72gb", "workstation"),
    "NVIDIA GeForce RTX 3080 Laptop GPU (8/16 GB)": ("rtx-3080-laptop", "consumer"),
    "NVIDIA A16 (per GPU; board = 4 GPUs)": ("a16", "datacenter"),
    "Intel Data Center GPU Max 1100": ("gpu-max-1100", "datacenter"),
    "AMD Instinct MI300A (APU)": ("mi300a", "datacenter"),
    "Raspberry Pi 5 (BCM2712, 4x Cortex-A76)": ("raspberry-pi-5", "cpu"),
    "AMD Ryzen Threadripper 3970X": ("threadripper-3970x", "cpu"),
}


def make_id(name):
    """`NVIDIA GeForce RTX 4070 Ti SUPER` -> `rtx-4070-ti-super`; `Apple M1 Pro
    (14-core GPU)` -> `m1-pro-14c`; parenthesised notes are dropped."""
    m = re.match(r"Apple (M\d)( Pro| Max| Ultra)? \((?:.*?/ )?(\d+)-core GPU\)", name)
    if m:
        return f"{m[1]}{m[2] or ''}-{m[3]}c".lower().replace(" ", "-")
    n = re.sub(r"\(.*?\)", " ", name)
    n = re.sub(r"\b(NVIDIA|GeForce|Tesla|Instinct|Intel|Google Cloud|Laptop GPU)\b",
               lambda k: "laptop" if k[0] == "Laptop GPU" else " ", n)
    n = re.sub(r"^\s*(AMD|Apple)\b", " ", n)
    n = re.sub(r"\bRadeon (RX)\b", r"\1", n)
    n = n.replace("Ada Generation", "Ada").replace("+", "")
    return re.sub(r"[^a-z0-9.]+", "-", n.lower()).strip("-")


def make_class(r):
    """Market class from vendor and family: the efficiency profile's key."""
    fam = r["family"]
    if "CPU" in fam and "Grace" not in fam:
        return "cpu"
    if r["vendor"] in ("Apple",) or "unified memory" in fam or "Orin" in fam:
        return "unified"
    if "GeForce" in fam or ("Radeon" in r["name"] and "PRO" not in r["name"]):
        return "consumer"
    if r["name"].startswith("Intel Arc ") and "Pro" not in r["name"]:
        return "consumer"
    if "workstation" in fam:
        return "workstation"
    return "datacenter"


# id -> other spellings a user may type that the normalised name does not
# cover (marketing names, code names, SKU numbers).
ALIASES = {
    "ryzen-ai-max-395": ["Strix Halo", "Radeon 8060S", "Ryzen AI Max+ 395"],
    "dgx-spark": ["GB10"],
    "gaudi-3": ["HL-325L"],
    "gaudi-2": ["HL-225H"],
    "tpu-v6e": ["Trillium"],
    "rtx-pro-6000-blackwell": ["RTX PRO 6000", "RTX 6000 Blackwell"],
    "xeon-8480": ["Xeon 8480+", "Sapphire Rapids 8480+"],
    "jetson-agx-thor": ["Jetson Thor", "T5000"],
    "raspberry-pi-5": ["BCM2712", "RPi 5"],
    # Form factors the names leave out: nvidia-smi says "NVIDIA B200" or
    # "B300 SXM6 AC", AMD sells the Instinct parts as OAM modules.
    "b200": ["B200 SXM6"],
    "b300": ["B300 SXM6 AC"],
    "mi300x": ["MI300X OAM"],
    "mi325x": ["MI325X OAM"],
    "mi355x": ["MI355X OAM"],
}

# Apple M3/M4 GPU FP32 was never published: cores x 128 FP32 lanes x 2 (FMA)
# x clock. The clocks (M3 1.40 GHz, M4 1.67 GHz) are chosen so that a 32-core
# M4 Max gives the ~13.7 TFLOPS third-party figure quoted in ACCELERATORS.md.
def apple_fp32(cores, ghz):
    return round(cores * 128 * 2 * ghz / 1000, 1)

# name -> {column: (value, why)} for cells the vendor left empty: the rows of
# data/accelerators_derived.csv (each with its reasoning), and the Apple GPUs'
# fp32 estimates below.
DERIVED = {}
for d in csv.DictReader(open(ROOT / "data" / "accelerators_derived.csv", encoding="utf-8")):
    DERIVED.setdefault(d["name"], {})[d["column"]] = (float(d["value"]), d["why"])
for name, cores, ghz in [
    ("Apple M3 (10-core GPU)", 10, 1.40), ("Apple M3 Pro (18-core GPU)", 18, 1.40),
    ("Apple M3 Max (14-core CPU / 30-core GPU)", 30, 1.40),
    ("Apple M3 Max (16-core CPU / 40-core GPU)", 40, 1.40),
    ("Apple M3 Ultra (80-core GPU)", 80, 1.40), ("Apple M4 (10-core GPU)", 10, 1.67),
    ("Apple M4 Pro (20-core GPU)", 20, 1.67),
    ("Apple M4 Max (14-core CPU / 32-core GPU)", 32, 1.67),
    ("Apple M4 Max (16-core CPU / 40-core GPU)", 40, 1.67),
    # M5: no published clock; the M4 estimate stands in [unverified here].
    ("Apple M5 (10-core GPU)", 10, 1.67), ("Apple M5 Max (40-core GPU)", 40, 1.67),
]:
    DERIVED[name] = {"fp32_tflops": (apple_fp32(cores, ghz),
                                     f"estimate: {cores} GPU cores x 128 lanes x 2 x {ghz} GHz")}


def num(x):
    return "0" if x in ("", None) else repr(float(x))


def main():
    rows = list(csv.DictReader(open(ROOT / "data" / "accelerators.csv", encoding="utf-8")))
    lines = ["// Generated by scripts/gen_device_catalog.py from data/accelerators.csv. Do not edit.",
             "// Columns: id, name, vendor, family, class, memory type, memory (marketed GB, read as GiB),",
             "// bandwidth GB/s, peak TFLOPS fp32, bf16, fp8, int8, fp4, tdp W, interconnect, link GB/s,",
             "// aliases ('|'-separated), source."]
    seen = {}
    for r in rows:
        did, klass = IDS.get(r["name"], (make_id(r["name"]), make_class(r)))
        if did in seen:
            sys.exit(f"id {did!r} of {r['name']!r} is taken by {seen[did]!r}: add an override to IDS")
        seen[did] = r["name"]
        notes = []
        for col, (v, why) in DERIVED.get(r["name"], {}).items():
            if r[col] == "":
                r[col] = str(v)
                notes.append(f"{col} {v} derived: {why}")
        # Apple GPUs run fp16 at the fp32 rate and have no matrix units.
        if r["vendor"] == "Apple" and r["fp16_bf16_dense_tflops"] == "":
            r["fp16_bf16_dense_tflops"] = r["fp32_tflops"]
            notes.append("bf16 roof = fp32 rate (Apple GPUs run fp16 at the fp32 rate)")
        if r["fp32_tflops"] == "" and r["fp16_bf16_dense_tflops"] == "":
            sys.exit(f"{r['name']!r} has no fp32 or bf16 rate: add a DERIVED entry")
        src = r["source"] + (" | derived here: " + "; ".join(notes) if notes else "")
        aliases = list(ALIASES.get(did, []))
        # "Apple M5" when the M5 has one GPU configuration in the table.
        tier = re.match(r"Apple (M\d(?: Pro| Max| Ultra)?) \(", r["name"])
        if tier and sum(x["name"].startswith(f"Apple {tier[1]} (") for x in rows) == 1:
            aliases.append(f"Apple {tier[1]}")
        lines.append("{" + ", ".join([
            cxx(did), cxx(r["name"]), cxx(r["vendor"]), cxx(r["family"]),
            "device_class::" + klass, cxx(r["memory_type"]), num(r["memory_gib_or_gb"]),
            num(r["memory_bandwidth_gbs"]), num(r["fp32_tflops"]), num(r["fp16_bf16_dense_tflops"]),
            num(r["fp8_dense_tflops"]), num(r["int8_dense_tops"]), num(r["fp4_dense_tflops"]),
            num(r["tdp_w"]), cxx(r["interconnect"]), num(r["interconnect_gbs"]),
            cxx("|".join(aliases)), cxx(src)]) + "},")
    unknown = set(ALIASES) - set(seen)
    if unknown:
        sys.exit(f"ALIASES names unknown ids: {sorted(unknown)}")
    write_or_check(OUT, "\n".join(lines) + "\n", "gen_device_catalog.py", "device catalog",
                   f"wrote {len(rows)} devices to {OUT}")
    if "--list" in sys.argv and "--check" not in sys.argv:
        for r in rows:
            did, klass = IDS.get(r["name"], (make_id(r["name"]), make_class(r)))
            print(f"{did:32} {klass:12} {r['name']}")


if __name__ == "__main__":
    main()
