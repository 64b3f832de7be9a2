// Device names as users and datasets spell them, and devices users bring.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "llmroof/hardware/device.hpp"

using namespace llmroof;

TEST_CASE("the catalog is the shared table, the 60-core M3 Ultra, the 16-core M4 Pro and GB300: 194 devices, each sourced") {
  CHECK(devices().size() == 194);
  for (const auto& d : devices()) {
    CAPTURE(d.id);
    CHECK_FALSE(d.source.empty());
    CHECK(d.peak(math_format::bf16).value() > 0);
  }
}

TEST_CASE("vendor spellings resolve to the catalog id") {
  const std::pair<const char*, const char*> cases[] = {
      // desktop NVIDIA
      {"GeForce RTX 4090 24GB", "rtx-4090"}, {"NVIDIA GeForce RTX 4090", "rtx-4090"},
      {"RTX 2080 Ti", "rtx-2080-ti"}, {"RTX 3080 Ti", "rtx-3080-ti"}, {"3080 Ti", "rtx-3080-ti"},
      {"RTX 4070 Ti", "rtx-4070-ti"}, {"4070 Ti SUPER", "rtx-4070-ti-super"}, {"RTX 3060 12GB", "rtx-3060"},
      {"RTX 3060 8GB", "rtx-3060-8gb"}, {"NVIDIA RTX 3080 10GB", "rtx-3080"}, {"GTX 1080 Ti", "gtx-1080-ti"},
      {"RTX 5060 Ti 16GB", "rtx-5060-ti-16gb"},
      // laptop
      {"RTX 4070 Laptop GPU", "rtx-4070-laptop"}, {"laptop RTX 4070", "rtx-4070-laptop"},
      {"GeForce RTX 4090 Mobile", "rtx-4090-laptop"}, {"RTX 3080 Laptop 16GB", "rtx-3080-laptop"},
      // workstation and datacenter
      {"RTX A4000", "rtx-a4000"}, {"A2000", "rtx-a2000-12gb"}, {"RTX 6000 Ada", "rtx-6000-ada"},
      {"H100 80GB HBM3", "h100-sxm"}, {"NVIDIA H100 PCIe 80GB", "h100-pcie"}, {"H100 SXM", "h100-sxm"},
      {"NVIDIA A100 SXM 80GB", "a100-80gb-sxm"}, {"A100 40GB PCIe", "a100-40gb-pcie"}, {"NVIDIA H200 141GB", "h200"},
      {"Tesla V100 SXM2 32GB", "v100-sxm2-32gb"}, {"NVIDIA B200", "b200"}, {"B200 SXM6", "b200"},
      {"NVIDIA B300 SXM6 AC", "b300"}, {"B300 SXM6", "b300"}, {"GB300", "gb300"}, {"NVIDIA GB300 NVL72", "gb300"}, {"GB200 NVL72", "gb200"}, {"Tesla T4", "t4"}, {"Jetson Orin Nano 8GB", "jetson-orin-nano-8gb"},
      {"Jetson Orin Nano Super", "jetson-orin-nano-8gb-super"},
      {"NVIDIA DGX Spark (GB10, 128 GB LPDDR5x unified)", "dgx-spark"},
      // Apple
      {"M3 Max 40-core", "m3-max-40c"}, {"Apple M3 Max 40-Core GPU 64GB", "m3-max-40c"},
      {"Apple M2 Ultra 76-Core GPU 192GB", "m2-ultra-76c"}, {"M1 Max 24-core", "m1-max-24c"},
      {"Apple M1 7-Core GPU 8GB", "m1-7c"},
      {"M4 Pro 20-core", "m4-pro-20c"}, {"M4 Pro 16-core", "m4-pro-16c"}, {"M5", "m5-10c"},
      // AMD
      {"Radeon RX 7900 XTX", "rx-7900-xtx"}, {"RX 7900 XT", "rx-7900-xt"}, {"RX 9070 XT", "rx-9070-xt"},
      {"Radeon AI PRO R9700", "radeon-ai-pro-r9700"}, {"W7700", "radeon-pro-w7700"},
      {"Radeon PRO W7800 48GB", "radeon-pro-w7800-48gb"}, {"Instinct MI300X", "mi300x"},
      {"AMD Instinct MI300X OAM", "mi300x"}, {"MI355X OAM", "mi355x"}, {"Strix Halo", "ryzen-ai-max-395"},
      // Intel
      {"Arc B580", "arc-b580"}, {"Intel Arc A770 16GB", "arc-a770-16gb"}, {"Arc Pro B60", "arc-pro-b60"},
      {"Gaudi 3", "gaudi-3"},
      // CPUs
      {"N100", "n100"}, {"Core i5-1135G7", "core-i5-1135g7"}, {"Intel Core i9-14900K", "core-i9-14900k"},
      {"Raspberry Pi 5", "raspberry-pi-5"}, {"Threadripper 3970X", "threadripper-3970x"},
      {"AMD Ryzen 9 7950X", "ryzen-9-7950x"}, {"Xeon Platinum 8480+", "xeon-8480"}, {"EPYC 9654", "epyc-9654"},
  };
  int n = 0;
  for (const auto& [name, id] : cases) {
    CAPTURE(name);
    CHECK(find_device(name).id == id);
    ++n;
  }
  CHECK(n >= 40);
}

TEST_CASE("a user's name matches with every word; a dataset's may drop words no catalog name uses") {
  // A near miss is refused with the closest ids, as for models (it used to
  // plan an H100 SXM, the unknown word dropped).
  CHECK_THROWS_WITH_AS(find_device("h100-sxmx"), "unknown device 'h100-sxmx'; closest: h100-sxm, h800-sxm5, p100-sxm2",
                       std::invalid_argument);
  CHECK_THROWS_AS(find_device("NVIDIA RTX PRO 6000 Blackwell Server Edition 96GB"), std::invalid_argument);
  // Measured datasets' names carry such words; their reader resolves them leniently.
  CHECK(match_devices("NVIDIA RTX PRO 6000 Blackwell Server Edition 96GB") ==
        std::vector<std::string>{"rtx-pro-6000-blackwell"});
  CHECK(match_devices("Apple M4 Max (64GB; GPU core count not stated)") == std::vector<std::string>{"m4-max-40c"});
}

TEST_CASE("ids used before the generated scheme keep working") {
  for (const char* id : {"rtx-4090", "h100-sxm", "rtx-pro-6000-blackwell", "m2-ultra-76c", "ryzen-9-7950x", "rtx-3060",
                         "rtx-3080", "v100-sxm2-32gb", "p40", "xeon-8480", "threadripper-7995wx", "core-i9-14900k",
                         "epyc-9654", "rtx-4060-ti-16gb", "a40", "rtx-4000-ada", "rtx-5000-ada"}) {
    CAPTURE(id);
    CHECK(find_device(id).id == id);
  }
}

TEST_CASE("an ambiguous name lists its candidates") {
  CHECK_THROWS_WITH_AS(find_device("M3 Max"),
                       "device 'M3 Max' is ambiguous: it matches 2 devices: m3-max-30c (Apple M3 Max (14-core CPU / "
                       "30-core GPU)); m3-max-40c (Apple M3 Max (16-core CPU / 40-core GPU)). Give an id or a more "
                       "specific name",
                       std::invalid_argument);
  // The M4 Pro comes with a 16- or a 20-core GPU, both at 273 GB/s.
  CHECK(match_devices("M4 Pro") == std::vector<std::string>{"m4-pro-20c", "m4-pro-16c"});
  CHECK(match_devices("RTX 3080") == std::vector<std::string>{"rtx-3080", "rtx-3080-12gb"});
  CHECK(match_devices("H100") == std::vector<std::string>{"h100-pcie", "h100-sxm", "h100-nvl"});
  CHECK(match_devices("Jetson Orin Nano").size() == 2);
  CHECK(match_devices("4090").front() == "rtx-4090");  // the desktop card: only the product line is added
  CHECK(match_devices("RTX 9999").empty());
}

TEST_CASE("inline custom device: units are required and converted") {
  const device d = parse_custom_device("custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF,int8=284TOPS");
  CHECK(d.memory.value() == doctest::Approx(24.0 * 1073741824.0));  // 24 x 2^30 B
  CHECK(d.bandwidth.value() == doctest::Approx(9.36e11));           // 936 x 1e9 B/s
  CHECK(d.published_peak(math_format::bf16).value() == doctest::Approx(7.1e13));
  CHECK(d.published_peak(math_format::int8).value() == doctest::Approx(2.84e14));
  // fp8 not given: runs at the bf16 rate, and the source says so.
  CHECK(d.peak(math_format::fp8).value() == doctest::Approx(7.1e13));
  CHECK(d.source.find("not given: fp32, fp8, fp4") != std::string::npos);
  const device e = parse_custom_device("custom: memory = 1.5 TB , bandwidth=3.35TB/s, fp32=67 TFLOPS, tdp=700W");
  CHECK(e.memory.value() == doctest::Approx(1.5e12));
  CHECK(e.bandwidth.value() == doctest::Approx(3.35e12));
  CHECK(e.peak(math_format::bf16).value() == doctest::Approx(6.7e13));  // no bf16: the fp32 rate
  CHECK(e.tdp_w == doctest::Approx(700));
}

TEST_CASE("inline custom device: one-line errors name the field") {
  const std::pair<const char*, const char*> bad[] = {
      {"custom:memory=24GiB,bandwidth=936,bf16=71TF", "custom device: bandwidth must have a unit like GB/s (got '936')"},
      {"custom:memory=24,bandwidth=936GB/s,bf16=71TF", "custom device: memory must have a unit like GiB (got '24')"},
      {"custom:memory=24GiB,bandwidth=936GB/s,bf16=71", "custom device: bf16 must have a unit like TF or TOPS (got '71')"},
      {"custom:memory=24GB/s,bandwidth=936GB/s,bf16=71TF",
       "custom device: memory has unit 'GB/s', which is not one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB"},
      {"custom:bandwidth=936GB/s,bf16=71TF", "custom device: memory is required (e.g. memory=24GiB)"},
      {"custom:memory=24GiB,bf16=71TF", "custom device: bandwidth is required (e.g. bandwidth=936GB/s)"},
      {"custom:memory=24GiB,bandwidth=936GB/s", "custom device: a compute rate is required: fp32 or bf16 (e.g. bf16=71TF)"},
      {"custom:memory=24GiB,bandwidth=-1GB/s,bf16=71TF", "custom device: bandwidth must be > 0 (got '-1GB/s')"},
      {"custom:memory=lots,bandwidth=936GB/s,bf16=71TF", "custom device: memory must be a number with a unit like GiB (got 'lots')"},
      {"custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF,class=gpu",
       "custom device: class must be datacenter, workstation, consumer, unified or cpu (got 'gpu')"},
      {"custom:memory=24GiB,memory=2GiB", "custom device: memory is given twice"},
      {"custom:memory", "custom device: 'memory' must be KEY=VALUE (e.g. memory=24GiB)"},
      // Bits are not bytes: a unit whose B/b is the other one is named.
      {"custom:memory=24Gib,bandwidth=936GB/s,bf16=71TF",
       "custom device: memory has unit 'Gib': B is bytes, b is bits (did you mean 'GiB'?)"},
      // The 16-bit rate named twice, once each way.
      {"custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF,fp16=80TF",
       "custom device: bf16 and fp16 both set the 16-bit rate: give one"},
      // Physical ranges, said in the message.
      {"custom:memory=1e-9GiB,bandwidth=936GB/s,bf16=71TF",
       "custom device: memory must be in [64 MiB, 64 TiB] (got '1e-9GiB')"},
      {"custom:memory=24GiB,bandwidth=1e30B/s,bf16=71TF",
       "custom device: bandwidth must be in [0.1 GB/s, 1 PB/s] (got '1e30B/s')"},
      {"custom:memory=24GiB,bandwidth=936GB/s,bf16=1e30TF",
       "custom device: bf16 must be in [0.1 GFLOP/s, 10 EFLOP/s] (got '1e30TF')"},
  };
  for (const auto& [spec, msg] : bad) {
    CAPTURE(spec);
    CHECK_THROWS_WITH_AS(parse_custom_device(spec), msg, std::invalid_argument);
  }
  // 900 Gb/s is 112.5 GB/s (900e9 / 8 B/s); 7.2 Tbps 900 GB/s; GiB/s binary.
  CHECK(parse_custom_device("custom:memory=24GiB,bandwidth=900Gb/s,bf16=71TF").bandwidth.value() == 112.5e9);
  CHECK(parse_custom_device("custom:memory=24GiB,bandwidth=7.2Tbps,bf16=71TF").bandwidth.value() == doctest::Approx(900e9));
  CHECK(parse_custom_device("custom:memory=24GiB,bandwidth=900gb/s,bf16=71TF").bandwidth.value() == 112.5e9);
  CHECK(parse_custom_device("custom:memory=24GiB,bandwidth=1GiB/s,bf16=71TF").bandwidth.value() == 1073741824.0);
  CHECK(parse_custom_device("custom:memory=24GiB,bandwidth=936GB/s,fp16=71TF").peak(math_format::bf16).value() == 71e12);
  CHECK_THROWS_WITH_AS(parse_custom_device("custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF,colour=red"),
                       doctest::Contains("custom device: unknown field 'colour'"), std::invalid_argument);
}

TEST_CASE("a device JSON round trip keeps every number; missing fields are named") {
  const device& r = find_device("rtx-3090");
  const device d = parse_device_json(device_json(r), "rtx-3090.json");
  CHECK(d.id == r.id);
  CHECK(d.klass == r.klass);
  CHECK(d.vendor == r.vendor);
  CHECK(d.memory_type == r.memory_type);
  CHECK(d.memory.value() == r.memory.value());
  CHECK(d.bandwidth.value() == r.bandwidth.value());
  for (std::size_t i = 0; i < r.peaks.size(); ++i) CHECK(d.peaks[i].value() == r.peaks[i].value());
  CHECK(d.fp16_accumulate_speedup() == r.fp16_accumulate_speedup());
  // Units in strings are accepted; bare numbers are bytes, B/s, FLOP/s.
  const device s = parse_device_json(
      R"({"memory_bytes": "24GiB", "bandwidth_bytes_per_s": 936e9, "bf16_flops_per_s": "71TF"})", "s.json");
  CHECK(s.memory.value() == doctest::Approx(24.0 * 1073741824.0));
  CHECK_THROWS_WITH_AS(parse_device_json(R"({"memory_bytes": 1e9, "bf16_flops_per_s": 1e12})", "x.json"),
                       "device file x.json: bandwidth_bytes_per_s is required", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_device_json(R"({"memory_bytes": 1e9, "bandwidth_bytes_per_s": "9e11"})", "x.json"),
                       "device file x.json: bandwidth_bytes_per_s must have a unit like GB/s (got '9e11')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_device_json(R"({"memory_bytes": 1e9, "bandwith_bytes_per_s": 1e9})", "x.json"),
                       "device file x.json: unknown field 'bandwith_bytes_per_s'", std::invalid_argument);
  CHECK_THROWS_AS(parse_device_json("{", "x.json"), std::invalid_argument);
  // Device files pass the readers' guard: the model files' messages.
  CHECK_THROWS_WITH_AS(read_device_json("/nonexistent/d.json"), "/nonexistent/d.json: no such file",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_device_json("/dev/zero"), "/dev/zero: is a device, not a regular file",
                       std::invalid_argument);
}

TEST_CASE("device_from_spec takes ids, names, inline forms and files") {
  CHECK(device_from_spec("H100 80GB HBM3").id == "h100-sxm");
  CHECK(device_from_spec("custom:memory=8GiB,bandwidth=100GB/s,fp32=1TF").id == "custom");
  CHECK_THROWS_AS(device_from_spec("missing.json"), std::invalid_argument);
}

TEST_CASE("the computer around an Apple chip and its memory size name a configuration") {
  // "MacBook Pro", "Mac Studio", "Mac mini" and a screen size name no chip;
  // 128 GB rules out the 32-core M4 Max (36 GB at most).
  CHECK(find_device("MacBook Pro M4 Max 128GB").id == "m4-max-40c");
  CHECK(find_device("MacBook Pro 16-inch M4 Max 128GB").id == "m4-max-40c");
  CHECK(find_device("Mac Studio M3 Ultra 512GB").id == "m3-ultra-80c");
  CHECK(find_device("Mac mini M4 Pro 20-core").id == "m4-pro-20c");
  // The chip's own "Pro" still counts after the computer's.
  CHECK(find_device("MacBook Pro M4 Pro 20-core").id == "m4-pro-20c");
  // A unified-memory row is its largest configuration; a smaller size is the
  // machine asked about: 48 GB = 48 x 2^30 B (Apple's GB).
  const device d = configured_device("MacBook Pro M4 Max 48GB");
  CHECK(d.id == "m4-max-40c");
  CHECK(d.memory.value() == 48.0 * 1073741824.0);
  CHECK(d.name == "Apple M4 Max (16-core CPU / 40-core GPU) with 48 GB");
  CHECK(configured_device("m4-max-40c").memory.value() == find_device("m4-max-40c").memory.value());
  // A discrete card's size only chooses among variants: never changed.
  CHECK(configured_device("GeForce RTX 4090 24GB").memory.value() == find_device("rtx-4090").memory.value());
  CHECK(device_from_spec("M4 Max 48GB").memory.value() == 48.0 * 1073741824.0);
}
