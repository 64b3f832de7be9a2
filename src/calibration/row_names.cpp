// A measured row's device, model and formats as the catalog knows them,
// from the names datasets write.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/phrases.hpp"
#include "calibration/rows.hpp"
#include "model/readers/common.hpp"

namespace llmroof::rows {

namespace {


/// The names a dataset's device may be read as, most specific first: as
/// written; without its remarks in parentheses (but a "76-core GPU" said
/// there: "Apple M2 Ultra (76-core GPU per ggerganov setup)"); then only what
/// comes before the first comma or " / " ("AMD Ryzen AI Max+ 395 / Radeon
/// 8060S (gfx1151), Framework Desktop 128GB"; "NVIDIA RTX 3090 24GB (EVGA
/// FTW3, 450 W cap)"). A power cap or an overclock leaves the part's
/// bandwidth, what decode reads at; prefill rows of capped parts carry it.
std::vector<std::string> device_names(const std::string& written) {
  std::string counted;
  const std::string d = device_count_prefix(written, counted) > 0 ? counted : written;
  std::vector<std::string> out{d};
  std::string plain;
  std::string cores;
  int depth = 0;
  std::string inner;
  for (char c : d) {
    if (c == '(') {
      ++depth;
    } else if (c == ')' && depth > 0) {
      if (--depth == 0) {
        const auto at = inner.find("-core GPU");
        if (at != std::string::npos) {
          auto from = inner.find_last_not_of("0123456789", at - 1);
          from = from == std::string::npos ? 0 : from + 1;
          cores = " " + inner.substr(from, at - from) + "-core GPU";
        }
        inner.clear();
      }
    } else if (depth > 0) {
      inner.push_back(c);
    } else {
      plain.push_back(c);
    }
  }
  plain += cores;
  out.push_back(plain);
  for (const char* cut : {",", " / "}) {
    const auto at = plain.find(cut);
    if (at != std::string::npos) out.push_back(plain.substr(0, at) + cores);
  }
  return out;
}

/// Apple's GPU-core variants of one chip, where the name gives no count:
/// the memory a row states picks the variant when the variants differ in
/// bandwidth (M3 Max and M4 Max: 36 and 96 GB are the smaller GPU's
/// configurations, 48, 64 and 128 GB the larger's, Apple's MacBook Pro tech
/// specs, Nov 2023 / Nov 2024); when they share it (M1/M2 Pro, Max, Ultra),
/// the base configuration, fewer GPU cores: decode reads at the same
/// bandwidth, prefill may be up to the core ratio slower than that variant's.
std::optional<std::string> apple_variant(const std::vector<std::string>& ids, const std::string& name) {
  if (ids.size() < 2) return std::nullopt;
  std::vector<const device*> ds;
  for (const auto& id : ids) {
    const device& d = find_device(id);
    if (d.vendor != "Apple") return std::nullopt;
    ds.push_back(&d);
  }
  const auto fewest = *std::min_element(ds.begin(), ds.end(), [](const device* a, const device* b) {
    return a->peak(math_format::bf16) < b->peak(math_format::bf16);
  });
  const bool one_bandwidth = std::all_of(ds.begin(), ds.end(), [&](const device* d) { return d->bandwidth == ds[0]->bandwidth; });
  if (one_bandwidth) return fewest->id;
  if (ds.size() != 2) return std::nullopt;
  const auto most = *std::max_element(ds.begin(), ds.end(), [](const device* a, const device* b) {
    return a->peak(math_format::bf16) < b->peak(math_format::bf16);
  });
  for (const char* gb : {"36GB", "96GB"}) {
    if (has(name, gb)) return fewest->id;
  }
  for (const char* gb : {"48GB", "64GB", "128GB"}) {
    if (has(name, gb)) return most->id;
  }
  return std::nullopt;
}

}  // namespace


// The count a device name starts with ("8x NVIDIA H200", "8 x H100",
// "4× MI300X"), 0 when it starts with none; `rest` is the name after it.
int device_count_prefix(const std::string& d, std::string& rest) {
  std::size_t i = 0;
  while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) != 0) ++i;
  if (i == 0 || i > 4) return 0;
  std::size_t j = i;
  while (j < d.size() && d[j] == ' ') ++j;
  if (d.compare(j, 1, "x") == 0 || d.compare(j, 1, "X") == 0 || d.compare(j, 1, "*") == 0) {
    ++j;
  } else if (d.compare(j, 2, "\u00d7") == 0) {  // the multiplication sign in UTF-8
    j += 2;
  } else {
    return 0;
  }
  if (j >= d.size() || d[j] != ' ') return 0;
  rest = d.substr(j + 1);
  return std::stoi(d.substr(0, i));
}

/// The catalog device a dataset's device name means (the general resolver:
/// "NVIDIA RTX 4090 24GB", "Apple M3 Max 40-Core GPU 64GB"); none when the
/// name is unknown or ambiguous. A datacenter name without its form factor
/// ("NVIDIA H100 80GB", "NVIDIA A100 80GB": NIM's tables, the llama.cpp
/// scoreboard) means the SXM module when exactly one candidate is one: the
/// part of NVIDIA's DGX/HGX benchmark systems and of most cloud offerings.
std::optional<std::string> device_id(const std::string& d) {
  for (const std::string& name : device_names(d)) {
    const auto ids = match_devices(name);
    if (ids.size() == 1) return ids.front();
    if (const auto apple = apple_variant(ids, name)) return apple;
    std::optional<std::string> sxm;
    bool several = false;
    for (const auto& id : ids) {
      if (id.find("-sxm") == std::string::npos) continue;
      several = several || sxm.has_value();
      sxm = id;
    }
    const bool form_factor_given = has(name, "PCIe") || has(name, "NVL") || has(name, "SXM");
    if (sxm && !several && !form_factor_given) return sxm;
    if (!ids.empty()) return std::nullopt;  // ambiguous: a shorter name is no better
  }
  return std::nullopt;
}

/// The catalog model a dataset's model name means (the general resolver:
/// "Llama-3.3-70B-Instruct", "gemma-3-4b-it-qat", "DeepSeek-R1 (671B MoE)").
std::optional<std::string> model_id(const std::string& m) {
  auto ids = match_models(m);
  if (ids.empty() && m.find('(') != std::string::npos) {
    // Then without its remarks: "LLaMA-7B (v1/v2 7B)".
    ids = match_models(m.substr(0, m.find('(')));
  }
  if (ids.size() != 1) return std::nullopt;
  return ids.front();
}

std::optional<precision> formats(const std::string& weights, const std::string& kv_text, const architecture& a,
                                 bool gguf) {
  // Any case: "FP8", "fp8", "NVFP4", "nvfp4".
  std::string w = weights;
  std::string kv = kv_text;
  for (std::string* t : {&w, &kv}) {
    for (char& c : *t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  // The KV cache as written ("F16", "FP8 e4m3", llama.cpp's -ctk "Q8_0",
  // TensorRT-LLM's "INT8" and "NVFP4"); anything else, "not stated" or
  // "auto", is the engines' default, 16-bit.
  const auto kv_fmt = [&]() -> numeric_format {
    if (starts(kv, "F16") || starts(kv, "FP16")) return find_format("fp16");
    if (starts(kv, "FP8")) return find_format("fp8-e4m3");
    if (starts(kv, "Q8_0")) return find_format("q8_0");
    if (starts(kv, "Q4_0")) return find_format("q4_0");
    if (starts(kv, "INT8")) return find_format("int8");
    if (starts(kv, "NVFP4") || starts(kv, "FP4")) return find_format("nvfp4");
    return find_format("bf16");
  }();
  std::optional<numeric_format> wf;
  if (starts(w, "Q4_K_M")) wf = find_format("q4_k_m");
  else if (starts(w, "Q8_0")) wf = find_format("q8_0");
  else if (starts(w, "Q4_0")) wf = find_format("q4_0");
  else if (starts(w, "F16") || starts(w, "FP16")) wf = find_format("fp16");
  else if (starts(w, "BF16")) wf = find_format("bf16");
  else if (starts(w, "FP8") || (starts(w, "W8A8") && has(w, "FP8"))) wf = find_format("fp8");
  else if (starts(w, "FP4") || starts(w, "NVFP4")) wf = find_format("nvfp4");
  // Integer formats by their packers' names: AWQ (int4 with a zero point),
  // 8-bit weight-only (GPTQ-Int8, W8A16), W8A8 int8 (SmoothQuant-style),
  // GPTQ and compressed-tensors W4A16 (symmetric int4); a bare INT4 is AWQ's,
  // as the format table's alias has it.
  else if (has(w, "AWQ")) wf = find_format("awq-int4");
  else if (has(w, "W8A16") || (has(w, "GPTQ") && (has(w, "INT8") || has(w, "8-BIT") || has(w, "8BIT"))))
    wf = find_format("int8-wo");
  else if (starts(w, "INT8") || starts(w, "W8A8")) wf = find_format("int8");
  else if (starts(w, "GPTQ") || starts(w, "W4A16")) wf = find_format("gptq-int4");
  else if (starts(w, "INT4")) wf = find_format("awq-int4");
  else if (starts(w, "MXFP4")) {
    // gpt-oss: MXFP4 experts. In the GGUF files (llama.cpp) the other weights
    // are Q8_0 (11.27 GiB for gpt-oss-20b is 4.6 bits per parameter on
    // average) and llama.cpp's kernel path decides how MXFP4 is multiplied
    // (roofline.hpp kernel_path); elsewhere attention and embeddings stay
    // 16-bit and MXFP4 runs on FP4 units.
    if (gguf) {
      precision p = precision::of(find_format("q8_0"), kv_fmt);
      p.experts = make_format("mxfp4-ggml", 4.25, math_format::bf16, "MXFP4 blocks in a GGUF file (llama.cpp)");
      return p;
    }
    precision p = precision::of(find_format("bf16"), kv_fmt);
    p.experts = find_format("mxfp4");
    return p;
  } else if (starts(w, "MLX")) {
    // MLX affine quantization: an fp16 scale and bias per group: k + 32/group bits.
    int bits = 0;
    int group = 64;
    const std::string lower = detail::to_lower(weights);
    for (int b : {8, 6, 5, 4, 3}) {
      if (has(lower, (std::to_string(b) + "-bit").c_str())) bits = b;
    }
    if (has(lower, "group 32")) group = 32;
    if (bits == 0) return std::nullopt;
    wf = make_format("mlx-q" + std::to_string(bits) + "-g" + std::to_string(group), bits + 32.0 / group,
                     math_format::bf16, "MLX affine quantization, fp16 scale and bias per group");
  }
  if (!wf) {
    // Another GGUF type by its own name ("Q4_1 (3.95 GiB)", "Q6_K", "Q5_K_M"):
    // the format table's, when it has it (q5_k_s is not there).
    std::string word = w.substr(0, w.find_first_of(" (,"));
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word.size() >= 3 && word[0] == 'q' && std::isdigit(static_cast<unsigned char>(word[1]))) {
      for (const auto& f : llmroof::formats()) {
        if (f.name == word) wf = f;
      }
    }
  }
  if (!wf) return std::nullopt;
  (void)a;
  return precision::of(*wf, kv_fmt);
}

}  // namespace llmroof::rows
