#include <doctest/doctest.h>

#include "llmroof/deployment.hpp"

using namespace llmroof;

TEST_CASE("infer_layout: tensor parallel over every device unless told otherwise") {
  const auto plan = [](int per_node, int nodes, std::optional<int> tp, std::optional<int> pp, std::optional<int> ep) {
    return infer_layout({per_node, nodes, tp, pp, ep, std::nullopt, std::nullopt});
  };
  CHECK(plan(1, 1, {}, {}, {}).tp == 1);
  CHECK(plan(8, 1, {}, {}, {}).tp == 8);
  CHECK(plan(8, 2, {}, {}, {}).tp == 16);  // 2 nodes x 8
  const parallel_plan pp = plan(8, 1, {}, 2, {});  // pp alone: tp = 8 / 2
  CHECK((pp.tp == 4 && pp.pp == 2));
  // ep 1 splits no experts: the devices are tensor parallel, as with nothing given.
  CHECK(plan(8, 1, {}, {}, 1).tp == 8);
  const parallel_plan pp_ep1 = plan(8, 1, {}, 2, 1);
  CHECK((pp_ep1.tp == 4 && pp_ep1.pp == 2 && pp_ep1.ep == 1));
  const parallel_plan ep = plan(8, 1, {}, {}, 8);
  CHECK((ep.ep == 8 && ep.tp == 1 && ep.devices() == 8));
  CHECK_THROWS_WITH_AS(plan(8, 1, 4, {}, {}), "tp x pp (4 x 1 = 4) must equal the devices (8)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(plan(8, 1, {}, {}, 4), "ep (4) must equal the devices (8)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(plan(1024, 65, {}, {}, {}), "nodes x devices must be <= 65536 (got 65 x 1024)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(plan(0, 1, {}, {}, {}), "devices must be in [1, 1024] (got 0)", std::invalid_argument);
}

TEST_CASE("resolve: formats, engine profile and layout decided once") {
  request q;
  q.model = &find_model("llama-3.1-8b");
  q.dev = &find_device("h100-sxm");
  // Nothing given: BF16 weights and KV, vLLM, the engine's profile on the device.
  const deployment d = resolve(q);
  CHECK(d.pr.weights.name == "bf16");
  CHECK(d.pr.kv.name == "bf16");
  CHECK(d.engine.id == engine_id::vllm);
  CHECK(d.devices() == 1);
  CHECK(d.efficiency().memory == default_profile(*q.dev, "vllm").memory);
  // A file's formats, module by module, unless weights are named; its KV format unless kv is.
  precision file = precision::of(find_format("awq-int4"), find_format("fp8-e4m3"));
  file.lm_head = find_format("bf16");
  q.file_formats = file;
  const deployment f = resolve(q);
  CHECK(f.pr.weights.name == "awq-int4");
  CHECK(f.pr.kv.name == "fp8-e4m3");
  q.weights = find_format("fp8");
  q.kv = find_format("bf16");
  const deployment g = resolve(q);
  CHECK(g.pr.weights.name == "fp8");
  CHECK(g.pr.kv.name == "bf16");
  // The engine's traits come with it: llama.cpp multiplies quantized weights in int8.
  q.engine = "llama.cpp";
  CHECK(resolve(q).efficiency().quantized_path == kernel_path::int8_dot);
  // A layout nobody asked for says where it came from.
  q.layout.devices_per_node = 6;
  CHECK_THROWS_WITH_AS(resolve(q),
                       "tp must be a divisor of the 32 attention heads of 'llama-3.1-8b' (got 6); tp defaults to "
                       "the 6 devices: give tp, pp or ep",
                       std::invalid_argument);
  q.model = nullptr;
  CHECK_THROWS_WITH_AS(resolve(q), "model is required", std::invalid_argument);
}
