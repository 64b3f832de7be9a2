// The llmroof command's shared layer: the option schema, the parsed command
// line, the resolved deployment it asks for (make_setup), number parsing and
// the text formatting of tables; one declaration per job's entry point.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmroof/llmroof.hpp"
#include "report/json.hpp"

namespace llmroof::cli {

using report::json;
using report::setup;

struct usage_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct options;

/// A command: what it is for, how it is called, the only options it takes
/// and the job that runs it (the schema is the dispatch table).
struct command_spec {
  const char* name;
  const char* synopsis;
  const char* summary;
  std::vector<std::string> options;
  int (*run)(const cli::options&);
};

struct options {
  std::string command;
  std::string sub;
  /// Further points files after the first (calibrate, validate read them together).
  std::vector<std::string> more_points;
  std::map<std::string, std::string> values;
  /// Every value of every option, in order (`values` keeps the last): compare
  /// takes two of --model, --device, --engine, --weights or --kv, recommend
  /// any number of --model.
  std::map<std::string, std::vector<std::string>> given;
  bool json = false;
  bool help = false;

  [[nodiscard]] std::optional<std::string> get(const std::string& k) const {
    auto it = values.find(k);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  /// Every value given for `k`, in order (none: empty).
  [[nodiscard]] const std::vector<std::string>& all(const std::string& k) const {
    static const std::vector<std::string> none;
    auto it = given.find(k);
    return it == given.end() ? none : it->second;
  }
  /// Whether a flag option (one that takes no value) was given.
  [[nodiscard]] bool flag(const std::string& k) const { return values.count(k) > 0; }
  [[nodiscard]] std::string require(const std::string& k) const {
    auto v = get(k);
    if (!v) throw usage_error("--" + k + " is required for '" + command + "'");
    return *v;
  }
};

// ---- the option schema and the command line (options.cpp) ------------------

const std::vector<command_spec>& commands();
/// Null when no command has that name.
const command_spec* find_command(const std::string& name);
std::string command_names();
std::string usage_text();
std::string command_help(const command_spec& c);
/// Reads the command line against the command's option schema: an option the
/// command does not take, a missing value or a stray word is a usage error.
options parse(int argc, char** argv);

/// The price of --price-per-hour, --purchase, --years, --electricity, --pue
/// (validated: std::invalid_argument naming the field).
price price_of(const options& o);
/// --prefix and --prefix-hit into `w` (validated with the workload).
void read_prefix(const options& o, workload& w);
/// --arrivals mixed|lockstep into the workload.
void read_arrivals(const options& o, workload& w);

/// Each throws std::invalid_argument naming `field`.
double parse_tokens(const std::string& field, const std::string& s);
double parse_seconds(const std::string& field, const std::string& s);
double parse_count(const std::string& field, const std::string& s, double hi = 1e9);
double parse_number(const std::string& field, const std::string& s, double lo = -1e300, double hi = 1e300,
                    bool open_low = false);
const device& device_of(const std::string& spec);
/// --memory-utilization, --block-tokens, --max-num-batched-tokens,
/// --max-num-seqs, --max-model-len and --prefix-caching.
engine_overrides engine_options_of(const options& o);
/// The deployment the options ask for, through resolve(); `which` picks one
/// of several --model values (compare).
setup make_setup(const options& o, bool need_device, std::optional<std::string> which = std::nullopt);

// ---- text tables (format.cpp) -------------------------------------------------

std::string fmt(const char* f, double v);
using report::thousands;  // json.hpp: the Python reprs write numbers alike
std::string gib(bytes b);
std::string gb(bytes b);
std::string ms(seconds t);
std::string ctx_label(double c);
std::string device_label(const setup& s);
/// "1 user", "4 users".
std::string users_label(double n);
/// ", each a turn of a conversation grown to 131,072 tokens (120,832 of them cached)" where the
/// context holds more than one request (workload::history), else empty.
std::string history_label(const workload& w);
/// The weight format with the modules stored otherwise: "mxfp4 (attention
/// bf16)"; with `bits`, "mxfp4 (4.25 bits; attention bf16)".
std::string weights_label(const precision& pr, bool bits = false);
/// One line naming the published checkpoint whose formats are planned ("" otherwise).
std::string formats_note(const setup& s);
void print_ops(const phase_timing& p);

// ---- the jobs: one entry point each, returning the exit code -----------------

int cmd_plan(const options& o);      // serve.cpp
int cmd_decode(const options& o);    // serve.cpp
int cmd_prefill(const options& o);   // serve.cpp
int cmd_speculate(const options& o); // serve.cpp
int cmd_kv(const options& o);        // serve.cpp
int cmd_moe(const options& o);       // compare.cpp
int cmd_compare(const options& o);   // compare.cpp
int cmd_users(const options& o);     // serve.cpp
int cmd_calibrate(const options& o); // fit.cpp
int cmd_validate(const options& o);  // fit.cpp
int cmd_list(const options& o);      // list.cpp
int cmd_recommend(const options& o); // recommend.cpp

}  // namespace llmroof::cli
