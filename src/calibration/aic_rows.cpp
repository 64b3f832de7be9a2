// AIConfigurator's silicon rows (data release 4) in the calibration layout.
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


// AIConfigurator's silicon rows (its silicon_sample.csv; data release 4,
// data/measured/release4/README.md) as rows of the calibration layout: each
// row's measured mean TTFT and TPOT, its layout in the words read_layout and
// read_split take, its fixed lengths and concurrency in a closed loop whose
// users run in lockstep (N identical requests, fixed lengths, all started
// together). The source is the model, so that leave-one-source-out over these
// rows leaves each model out. Rows whose layout the plans cannot hold are
// skipped with the reason.
std::vector<std::vector<std::string>> aic_records(const std::vector<std::vector<std::string>>& recs,
                                                  const std::string& path, std::vector<skipped_row>& skipped) {
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < recs[0].size(); ++i) col[recs[0][i]] = i;
  for (const char* need : {"id", "backend", "backend_version", "model_path", "system", "mode", "isl", "osl",
                           "gemm_quant_mode", "moe_quant_mode", "batch_size", "tp_size", "pp_size",
                           "attention_dp_size", "moe_tp_size", "moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms"}) {
    if (!col.count(need)) throw std::invalid_argument(path + ": line 1: missing column '" + std::string(need) + "'");
  }
  std::vector<std::vector<std::string>> out{{"id", "source", "source_detail", "device", "n_devices", "backend", "model",
                                             "weight_format", "kv_format", "batch", "prompt_tokens", "context_depth",
                                             "gen_tokens", "metric", "value", "unit", "notes"}};
  const auto count = [](const std::string& v) { return v.empty() ? 1.0 : number(v); };
  for (std::size_t r = 1; r < recs.size(); ++r) {
    const auto& rec = recs[r];
    if (rec.size() != recs[0].size()) {
      fail_at(path, r + 1, std::to_string(rec.size()) + " fields, the header has " + std::to_string(recs[0].size()));
    }
    const auto get = [&](const char* k) { return rec[col.at(k)]; };
    const std::string id = get("id");
    const std::string engine = get("backend") == "trtllm" ? "TensorRT-LLM" : get("backend") == "sglang" ? "SGLang"
                                                                                                        : "vLLM";
    const std::string system = get("system");
    const std::string device = system == "h100_sxm" ? "NVIDIA H100 SXM5" : system == "h200_sxm" ? "NVIDIA H200 SXM"
                                                                                                : system;
    // One pool's layout: attention TP x DP, the experts' TP x EP.
    std::string why;
    const auto layout = [&](const std::string& prefix, double& devices) {
      const auto at = [&](const char* k) { return count(get((prefix + k).c_str())); };
      const double tp = at("tp_size"), dp = at("attention_dp_size"), ep = at("moe_ep_size"), pp = at("pp_size");
      devices = tp * dp * pp;
      if (pp > 1) why = "a pipeline of " + detail::show(pp) + " stages (AIConfigurator's pp_size) is not read";
      if (tp > 1 && dp > 1) {
        why = "attention TP" + detail::show(tp) + " x DP" + detail::show(dp) +
              " (a plan holds attention TP or DP over the instance, not both)";
      }
      const double n = tp * dp;
      std::string t = "TP" + detail::show(n);
      if (ep > 1) t += " EP" + detail::show(ep);
      if (dp > 1) t += " DP attention";
      return t;
    };
    std::string backend = engine + " " + get("backend_version");
    double n = 0;
    if (get("mode") == "disagg") {
      double pn = 0, dn = 0;
      const std::string pre = layout("prefill_", pn), dec = layout("decode_", dn);
      const double pw = count(get("prefill_num_workers")), dw = count(get("decode_num_workers"));
      // 248 of the 291 disaggregated rows leave both counts blank: their
      // concurrency (up to 3,584 users) ran over an unknown number of decode
      // workers, which sets each worker's batch, so they are not predicted.
      if (get("prefill_num_workers").empty() || get("decode_num_workers").empty()) {
        why = "a disaggregated row that does not say its worker counts (prefill_num_workers, decode_num_workers): "
              "its users ran over an unknown number of decode workers";
      }
      n = pw * pn + dw * dn;
      backend += ", disaggregated " + detail::show(pw) + "P" + detail::show(dw) + "D; prefill " + pre + "; decode " + dec;
    } else {
      backend += ", " + layout("", n);
    }
    if (!why.empty()) {
      skipped.push_back({id + "/ttft", why});
      skipped.push_back({id + "/tpot", why});
      continue;
    }
    // The weights the row's model runs on: the experts' format for MoE
    // checkpoints (gpt-oss, Kimi), the GEMMs' otherwise; block-scaled FP8 is FP8.
    const auto written = [](const std::string& q) {
      const std::string t = detail::to_lower(q);
      if (starts(t, "fp8")) return std::string("FP8");
      if (t == "nvfp4") return std::string("NVFP4");
      if (t == "int4_wo") return std::string("W4A16");
      if (t == "bfloat16" || t == "float16") return std::string("BF16");
      return q;
    };
    // Dense rows leave the quant modes empty and give `precision` (fp8, fp4,
    // int4); rows with neither ran the checkpoint as published (Qwen3-32B's
    // and Llama-3.1-8B-Instruct's BF16).
    const std::string precision_text = col.count("precision") ? rec[col.at("precision")] : "";
    const std::string weights = written(!get("moe_quant_mode").empty()    ? get("moe_quant_mode")
                                        : !get("gemm_quant_mode").empty() ? get("gemm_quant_mode")
                                        : precision_text == "fp4"         ? "nvfp4"
                                        : precision_text == "int4"        ? "int4_wo"
                                        : precision_text.empty()          ? "bfloat16"
                                                                          : precision_text);
    // The benchmark's users: silicon_concurrency= in the source column (a
    // disaggregated row's decode pool holds them all), else batch_size per
    // attention-DP rank.
    const std::string source_text = col.count("silicon_data_source") ? rec[col.at("silicon_data_source")] : "";
    const double stated = number_after(source_text, "silicon_concurrency=", setting_value);
    const double users = stated >= 1 ? stated : count(get("batch_size")) * count(get("attention_dp_size"));
    const std::string detail_text = "AIConfigurator 0.12.0 silicon_sample.csv; " + source_text;
    const std::string notes = "fixed-length benchmark in lockstep, --max-concurrency " + detail::show(users);
    for (const auto& [metric_name, column] :
         {std::pair<const char*, const char*>{"ttft_ms", "silicon_ttft_ms"}, {"tpot_ms", "silicon_tpot_ms"}}) {
      out.push_back({id + (std::string(metric_name) == "ttft_ms" ? "/ttft" : "/tpot"), "aiconfigurator:" + get("model_path"),
                     detail_text, device, detail::show(n), backend, get("model_path"), weights, "not stated",
                     detail::show(users), get("isl"), "0", get("osl"), metric_name, get(column), "ms", notes});
    }
  }
  return out;
}

}  // namespace llmroof::rows
