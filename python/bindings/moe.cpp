// MoE routing (moe.hpp, compare.hpp): distinct experts under uniform or
// skewed popularity, seeded routing simulation, the catalog's MoE table.
#include <pybind11/stl.h>

#include <cstdint>
#include <vector>

#include "bindings.hpp"
#include "report/json.hpp"

namespace llmroof::python {

void register_moe(py::module_& m) {
  m.def("moe_table_report", [] { return to_python(report::moe_table_json(moe_catalog())); });

  m.def(
      "simulate_routing",
      [](const std::vector<double>& popularity, int experts_per_token, int tokens, int trials, std::uint64_t seed,
         int ranks) {
        const routing_sample r = simulate_routing(popularity, experts_per_token, tokens, trials, seed, ranks);
        py::dict d;
        d["mean_distinct"] = r.mean_distinct;
        d["variance_distinct"] = r.variance_distinct;
        d["mean_busiest_rank_tokens"] = r.mean_busiest_rank_tokens;
        d["mean_busiest_rank_experts"] = r.mean_busiest_rank_experts;
        return d;
      },
      py::arg("popularity"), py::arg("experts_per_token"), py::arg("tokens"), py::arg("trials"), py::arg("seed"),
      py::arg("ranks"));

  m.def("expected_distinct_experts_skewed",
        py::overload_cast<const std::vector<double>&, int, double>(&expected_distinct_experts),
        py::arg("popularity"), py::arg("experts_per_token"), py::arg("tokens"));
  m.def("zipf_popularity", &zipf_popularity, py::arg("num_experts"), py::arg("alpha"));

  m.def("expected_distinct_experts",
        py::overload_cast<int, int, double>(&expected_distinct_experts), py::arg("num_experts"),
        py::arg("experts_per_token"), py::arg("tokens"));
}

}  // namespace llmroof::python
