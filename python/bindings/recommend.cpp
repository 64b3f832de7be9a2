// The deployment search (recommend.hpp): the command's `recommend`, its
// report as a compiled `Recommendation`.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace llmroof::python {

namespace {

std::optional<double> maybe(const py::object& v) {
  return v.is_none() ? std::nullopt : std::optional<double>(v.cast<double>());
}

}  // namespace

void register_recommend(py::module_& m) {
  py::class_<pool_entry>(m, "PoolEntry", "Devices of one kind a search may use (search/recommend.hpp).")
      .def(py::init([](const py::dict& device, int count, int per_node, const py::object& per_device_hour,
                       const py::object& purchase, const py::object& years, const py::object& electricity,
                       const py::object& pue) {
             pool_entry e;
             e.dev = device_from_dict(device);
             e.count = count;
             e.per_node = per_node;
             e.cost.per_device_hour = maybe(per_device_hour);
             e.cost.purchase = maybe(purchase);
             e.cost.years = maybe(years);
             e.cost.electricity_kwh = maybe(electricity);
             e.cost.pue = maybe(pue);
             return e;
           }),
           py::kw_only(), py::arg("device"), py::arg("count"), py::arg("per_node") = 0,
           py::arg("per_device_hour") = py::none(), py::arg("purchase") = py::none(), py::arg("years") = py::none(),
           py::arg("electricity") = py::none(), py::arg("pue") = py::none());
  py::class_<recommend_input>(m, "Request", "What the recommend job is asked (search/recommend.hpp).")
      .def(py::init([](const py::list& models, const std::vector<std::string>& labels, const std::vector<pool_entry>& pool,
                       const py::object& users, const py::object& rate, double context, double prompt, double output,
                       double prefix, const py::object& prefix_hit, double ttft, double tps, double max_cost,
                       double max_joules, double budget, const std::vector<std::string>& engines,
                       const py::object& engine_options, const std::vector<std::string>& kv, bool formats, bool replicas,
                       bool offload, bool disaggregated, bool speculation, int threads) {
             recommend_input in;
             for (const py::handle& d : models) in.models.push_back(deployment_of(d));
             in.labels = labels;
             in.pool = pool;
             if (!users.is_none() && !rate.is_none()) throw std::invalid_argument("users and rate are two loads; give one");
             if (!users.is_none()) in.w.users = users.cast<double>();
             in.rate = maybe(rate);
             in.w.context = context;
             in.w.prompt = prompt;
             in.w.output = output;
             in.w.prefix = prefix;
             in.w.prefix_hit = maybe(prefix_hit);
             in.target.ttft = make_seconds(ttft);
             in.target.min_tokens_per_s = tps;
             in.target.max_cost_per_million = max_cost;
             in.target.max_joules_per_token = max_joules;
             in.target.max_purchase = budget;
             in.space.engines = engines;
             for (const std::string& e : engines) (void)find_engine(e);
             in.space.engine_options = overrides_from(engine_options);
             in.space.kv = kv;
             in.space.formats = formats;
             in.space.replicas = replicas;
             in.space.offload = offload;
             in.space.disaggregated = disaggregated;
             in.space.speculation = speculation;
             in.space.threads = threads;
             return in;
           }),
           py::kw_only(), py::arg("models"), py::arg("labels"), py::arg("pool"), py::arg("users"), py::arg("rate"),
           py::arg("context"), py::arg("prompt"), py::arg("output"), py::arg("prefix"), py::arg("prefix_hit"),
           py::arg("ttft"), py::arg("tps"), py::arg("max_cost"), py::arg("max_joules"), py::arg("budget"),
           py::arg("engines"), py::arg("engine_options"), py::arg("kv"), py::arg("formats"), py::arg("replicas"),
           py::arg("offload"), py::arg("disaggregated"), py::arg("speculation"), py::arg("threads"));
  m.def(
      "report",
      [](const recommend_input& in) {
        const recommendation r = [&] {
          py::gil_scoped_release free;
          return recommend(in);
        }();
        return recommend_report{report::recommend_json(in, r)};
      },
      py::arg("request"), "The recommend job's answer to a Request (llmroof recommend --json).");
  m.def(
      "parse_pool",
      [](const std::string& text) { return parse_pool(text); }, py::arg("text"),
      "'h100-sxm:8,rtx-4090:2' as [(name, count)] (the command's --pool).");
  m.def(
      "parse_prices",
      [](const std::string& text) {
        std::vector<py::tuple> out;
        for (const auto& [name, p] : parse_prices(text)) {
          out.push_back(py::make_tuple(name, p.per_device_hour ? py::object(py::float_(*p.per_device_hour)) : py::none(),
                                       p.purchase ? py::object(py::float_(*p.purchase)) : py::none()));
        }
        return out;
      },
      py::arg("text"), "'h100-sxm=2.5/h,rtx-4090=1800' as [(name, per_hour, purchase)] (the command's --price).");
}

}  // namespace llmroof::python
