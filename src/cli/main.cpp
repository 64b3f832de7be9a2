// The llmroof command: plan, decode, prefill, kv, users, moe, compare,
// calibrate, validate, list (one file per job; cli.hpp the shared layer).
//
// Exit codes: 0 success, 2 bad input (one line on stderr), 1 internal error.
// `--json` prints a stable schema (docs/cli-json.md); human output is a table
// that says GB (1e9 B) or GiB (2^30 B) explicitly.
#include <exception>
#include <iostream>
#include <string>

#include "cli/cli.hpp"

using namespace llmroof::cli;

int main(int argc, char** argv) {
  try {
    const std::string first = argc >= 2 ? argv[1] : "";
    if (first == "--help" || first == "-h" || first == "help") {
      if (first == "help" && argc >= 3) {
        const command_spec* c = find_command(argv[2]);
        if (c == nullptr) throw usage_error("unknown command '" + std::string(argv[2]) + "'; commands: " + command_names());
        std::cout << command_help(*c);
      } else {
        std::cout << usage_text();
      }
      return 0;
    }
    if (first == "--version") {
      std::cout << "llmroof " << llmroof::version << "\n";
      return 0;
    }
    const options o = parse(argc, argv);
    if (o.help) {
      std::cout << command_help(*find_command(o.command));
      return 0;
    }
    return find_command(o.command)->run(o);  // parse() takes only known commands
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();  // one line, whatever a file name or value held
    for (char& c : what) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    std::cerr << "llmroof: error: " << what << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmroof: internal error: " << e.what() << "\n";
    return 1;
  }
}

