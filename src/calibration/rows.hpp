// The measured-row reader's parts (src/calibration): each reads one thing a
// row says, in the grammar of phrases.hpp. read_measurements
// (measurements.cpp) puts them together. Internal, never installed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "llmroof/calibration/calibrate.hpp"

namespace llmroof::rows {

// measurements.cpp
[[noreturn]] void fail_at(const std::string& file, std::size_t line, const std::string& what);

// row_layout.cpp: the layout a row's words name.
double instance_size(const std::string& t);
int read_layout(const std::string& backend, int n, bool moe, parallel_plan& p);
bool said_disaggregated(const std::string& t);
std::optional<disaggregated_split> read_split(const std::string& t, int n, bool moe, std::string& why);

// row_names.cpp: the catalog's device, model and formats a row names.
int device_count_prefix(const std::string& d, std::string& rest);
std::optional<std::string> device_id(const std::string& d);
std::optional<std::string> model_id(const std::string& m);
std::optional<precision> formats(const std::string& weights, const std::string& kv_text, const architecture& a,
                                 bool gguf);

// row_speculation.cpp: the speculative decoding a row ran.
std::optional<speculation> drafted(const std::string& backend, const std::string& notes, const architecture& target,
                                   std::string& why);
std::optional<speculation> self_drafted(const std::string& t, const architecture& target, std::string& why);

// aic_rows.cpp: AIConfigurator's silicon rows as rows of the calibration layout.
std::vector<std::vector<std::string>> aic_records(const std::vector<std::vector<std::string>>& recs,
                                                  const std::string& path, std::vector<skipped_row>& skipped);

}  // namespace llmroof::rows
