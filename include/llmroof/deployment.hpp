// A deployment: one model in one precision on a device plan under an engine,
// resolved once from what a user asked for. It owns its values and is the one
// dispatcher between a single device, tensor/pipeline/expert parallelism and
// offload: decode, prefill, memory and the weights fit are asked of it, and
// every planning function (serving.hpp, compare.hpp, calibrate.hpp) takes it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "llmroof/engine/engine_profile.hpp"
#include "llmroof/engine/memory_plan.hpp"
#include "llmroof/layout/offload.hpp"
#include "llmroof/layout/parallel.hpp"
#include "llmroof/step/phases.hpp"
#include "llmroof/model/readers.hpp"
#include "llmroof/layout/speculative_setup.hpp"

namespace llmroof {

/// Where the model runs: the parallel plan over the devices, and the part of
/// the model kept in host RAM (one device only).
struct placement {
  parallel_plan parallel;
  std::optional<offload_plan> offload;
  /// Data-parallel copies of `parallel`, each on devices of its own behind a
  /// router that spreads the users evenly (vLLM/SGLang --data-parallel-size,
  /// or one engine per node): [1, 65536]. Steps and memory are one copy's;
  /// the serving questions (plan, serve_load, max_users) split the users.
  int replicas = 1;
};

/// Whether a model's weights fit a device plan, and with how much room.
struct weights_fit {
  bool fits = false;
  bytes weights = make_bytes(0);   ///< per device
  bytes usable = make_bytes(0);    ///< per device, capacity x the engine's utilisation
  bytes short_by = make_bytes(0);  ///< what the weights and reserves overrun (0 when they fit)
  double max_users = 0;            ///< sequences of `context` tokens the KV budget holds
  double context = 0;              ///< tokens per sequence the room is counted at

  /// Whether the deployment holds `sequences` of `context` tokens: the
  /// weights fit and, past an empty context, their KV does too.
  [[nodiscard]] bool holds(double sequences) const { return fits && (context <= 0 || sequences <= max_users); }
};

namespace detail {

// What a step counts on one device or under a parallel plan: independent of
// the profile, so a fit counts each point's shapes once and times them under
// every profile it tries (calibrate.cpp).
inline pipelined_counts count_decode_on(const architecture& a, const precision& pr, const device& d,
                                        const parallel_plan& p, double batch, double context, double width = 1) {
  if (p.devices() == 1) return {count_decode(a, pr, batch, context, width)};
  return {count_decode_parallel(a, pr, d, p, batch, context, width)};
}

inline pipelined_counts count_prefill_on(const architecture& a, const precision& pr, const device& d,
                                         const parallel_plan& p, double prompt, double cached, double batch,
                                         double chunk = 0) {
  if (p.devices() == 1) return {count_prefill_chunked(a, pr, prompt, cached, batch, chunk)};
  // A pipeline fills with the engine's passes (512 tokens where a prompt runs in one).
  return count_prefill_parallel(a, pr, d, p, prompt, cached, chunk > 0 ? chunk : 512, batch, chunk);
}

// The one dispatcher between one device, a parallel plan and an offload
// (deployment::decode/prefill; calibration's fits share its counting). A plan
// of several devices is timed per device.
inline phase_timing time_on(pipelined_counts c, const roofline& r, const parallel_plan& p) {
  if (p.devices() == 1 || r.devices() == 1) return time_pipelined(std::move(c), r);
  return time_pipelined(std::move(c), roofline(r.dev(), r.efficiency(), 1));
}

inline phase_timing decode_on(const architecture& a, const precision& pr, const roofline& r, const placement& w,
                              double batch, double context, double width = 1) {
  if (w.offload) {
    if (width != 1) detail::fail("width", "1 for an offloaded decode", width);
    return decode_step_offload(a, pr, r, *w.offload, batch, context);
  }
  return time_on(count_decode_on(a, pr, r.dev(), w.parallel, batch, context, width), r, w.parallel);
}

// decode_on's estimate and compute time alone (detail::seconds_on: the same seconds).
inline phase_seconds decode_seconds_on(const architecture& a, const precision& pr, const roofline& r,
                                       const placement& w, double batch, double context, double width = 1) {
  if (w.offload || (w.parallel.devices() > 1 && r.devices() > 1)) {
    const phase_timing t = decode_on(a, pr, r, w, batch, context, width);
    return {t.estimate, t.compute_time};
  }
  const pipelined_counts c = count_decode_on(a, pr, r.dev(), w.parallel, batch, context, width);
  const phase_seconds s = seconds_on(c.counts, r);
  return c.fill != 1 ? phase_seconds{c.fill * s.estimate, c.fill * s.compute} : s;
}

inline phase_timing prefill_on(const architecture& a, const precision& pr, const roofline& r, const placement& w,
                               double prompt, double cached, double batch) {
  if (w.offload) {
    if (batch != 1) detail::fail("batch", "1 for an offloaded prefill", batch);
    return prefill_offload(a, pr, r, *w.offload, prompt, cached);
  }
  return time_on(count_prefill_on(a, pr, r.dev(), w.parallel, prompt, cached, batch, r.efficiency().prefill_chunk), r,
                 w.parallel);
}

}  // namespace detail

/// The configured whole every estimate reads: copyable, owning its values.
/// Build it with resolve() from a request, or directly from parts (the
/// constructor checks them as resolve does).
class deployment {
 public:
  architecture model;
  precision pr;
  placement where;
  engine_settings engine;
  /// Weight bytes as loaded (a model file's, loaded_weight_bytes); unset:
  /// counted from the architecture in `pr`.
  std::optional<bytes> stored;
  /// The file the model came from, if any (shared, never changed).
  std::shared_ptr<const model_source> source;
  /// Where `pr`'s weight formats came from (resolve): "asked", "file" (the
  /// model file's own), "name" (a quantized checkpoint's name: "-AWQ"),
  /// "checkpoint" (the publisher's) or "default" (bf16: a model published
  /// in 16 bits); `checkpoint` names the repository or the name.
  std::string formats_from = "default";
  std::string checkpoint;
  /// Speculative decoding as the engine runs it (none: one token per
  /// sequence per step). The load model's decode steps are speculative_step.hpp's
  /// step_of: draft + verify, keeping accepted_tokens per sequence.
  std::optional<speculation> speculative;

  /// A device-free deployment (KV-cache questions). Throws
  /// std::invalid_argument on invalid engine settings or a KV format the engine cannot hold.
  deployment(architecture a, precision p, engine_settings e = {});
  /// Throws std::invalid_argument naming the field: engine settings, a KV
  /// format the engine cannot hold, a layout the model cannot split into, an
  /// offload on several devices. A roofline over n > 1 devices with a
  /// one-device plan means tensor parallelism over them.
  deployment(architecture a, precision p, const roofline& r, placement w = {}, engine_settings e = {},
             std::optional<bytes> stored_weights = std::nullopt);

  [[nodiscard]] bool has_device() const { return roof_.has_value(); }
  /// One device under the engine's profile (the parallel plan spreads the
  /// work). Throws std::invalid_argument on a device-free deployment.
  [[nodiscard]] const roofline& roof() const {
    require_device();
    return *roof_;
  }
  /// Throws std::invalid_argument on a device-free deployment.
  void require_device() const {
    if (!roof_) throw std::invalid_argument("device is required for this question");
  }
  [[nodiscard]] const device& dev() const { return roof().dev(); }
  [[nodiscard]] const efficiency_profile& efficiency() const { return roof().efficiency(); }
  [[nodiscard]] const parallel_plan& parallel() const { return where.parallel; }
  [[nodiscard]] const std::optional<offload_plan>& offload() const { return where.offload; }
  /// Every device: each replica's parallel plan times the replicas.
  [[nodiscard]] int devices() const { return where.parallel.devices() * where.replicas; }
  [[nodiscard]] int replicas() const { return where.replicas; }
  /// Nodes of all replicas together.
  [[nodiscard]] int nodes() const { return where.parallel.nodes() * where.replicas; }
  /// One replica: the deployment whose steps, memory and loops these are.
  [[nodiscard]] deployment instance() const {
    deployment d = *this;
    d.where.replicas = 1;
    return d;
  }
  /// This deployment as `n` replicas of its parallel plan. Throws
  /// std::invalid_argument outside [1, 65536] or beside an offload.
  [[nodiscard]] deployment with_replicas(int n) const {
    deployment d = *this;
    d.where.replicas = n;
    d.check();
    return d;
  }

  /// This deployment under another profile (bands: slower and faster).
  [[nodiscard]] deployment with_efficiency(const efficiency_profile& e) const {
    deployment d = *this;
    d.roof_.emplace(dev(), e);
    return d;
  }

  /// This deployment in another layout, one instance of it (no replicas).
  /// Throws std::invalid_argument when the model cannot split into it or an
  /// offload meets several devices.
  [[nodiscard]] deployment with_layout(const parallel_plan& p) const {
    deployment d = *this;
    d.where.parallel = p;
    d.where.replicas = 1;
    d.where.parallel.row_split = d.row_split_of(p);
    d.check();
    return d;
  }
  /// This deployment with part of the model in host RAM (or none). Throws
  /// std::invalid_argument on an invalid offload or several devices.
  [[nodiscard]] deployment with_offload(std::optional<offload_plan> o) const {
    deployment d = *this;
    d.where.offload = std::move(o);
    d.check();
    return d;
  }
  /// This deployment decoding speculatively (or not). Throws
  /// std::invalid_argument as detail::check_speculation.
  [[nodiscard]] deployment with_speculation(std::optional<speculation> s) const {
    deployment d = *this;
    d.speculative = std::move(s);
    d.check();
    return d;
  }
  /// This deployment laid out over `other`'s device plan (the layout_for
  /// this model of `other`'s parallel plan): the second side of a comparison.
  [[nodiscard]] deployment beside(const deployment& other) const {
    return with_layout(layout_for(model, other.parallel()));
  }
  /// Another model in `p` on the same devices, engine and profile, laid out
  /// by layout_for (a dense model on an expert-parallel plan takes tensor
  /// and pipeline parallelism); its weights counted, nothing offloaded.
  [[nodiscard]] deployment with_model(architecture m, precision p) const {
    const parallel_plan q = layout_for(m, where.parallel);
    return {std::move(m), std::move(p), roof(), {q, std::nullopt, where.replicas}, engine};
  }

  /// Weight bytes the devices hold: stored (or counted) less what an offload
  /// keeps in host RAM; unset when counted and nothing is offloaded.
  [[nodiscard]] std::optional<bytes> device_weights() const {
    if (!where.offload) return stored;
    return (stored ? *stored : weight_bytes(model, pr)) - host_weight_bytes(model, pr, *where.offload);
  }

  /// One decode step of `batch` sequences at `context` cached tokens each;
  /// `width` tokens per sequence in a speculative verify step (speculative_step.hpp).
  [[nodiscard]] phase_timing decode(double batch, double context, double width = 1) const {
    return detail::decode_on(model, pr, roof(), where, batch, context, width);
  }
  /// decode(...).estimate without the per-op breakdown (the same seconds).
  [[nodiscard]] seconds decode_estimate(double batch, double context, double width = 1) const {
    return decode_seconds(batch, context, width).estimate;
  }
  /// decode(...)'s estimate and compute_time without the per-op breakdown.
  [[nodiscard]] phase_seconds decode_seconds(double batch, double context, double width = 1) const {
    return detail::decode_seconds_on(model, pr, roof(), where, batch, context, width);
  }
  /// Prefill of `prompt` tokens after `cached` ones for `batch` sequences, in
  /// the engine's passes (efficiency_profile::prefill_chunk; one pass for most).
  [[nodiscard]] phase_timing prefill(double prompt, double cached = 0, double batch = 1) const {
    return detail::prefill_on(model, pr, roof(), where, prompt, cached, batch);
  }
  /// Memory of one device for `users` sequences of `context` tokens whose
  /// first `shared` tokens are one copy (a shared prompt prefix in whole
  /// blocks: prefix_cache.hpp decides it); a speculative drafter's weights,
  /// KV and lookahead slots in it (detail::drafter_terms).
  [[nodiscard]] memory_plan memory(double users, double context, double shared = 0) const {
    return plan_memory_parallel(model, pr, dev(), where.parallel, users, context, engine, device_weights(), shared,
                                speculative ? detail::drafter_terms(*speculative, model, pr, dev(), where.parallel, engine)
                                            : drafter_load{});
  }
  /// The weights' fit, and the sequences of `context` tokens the KV budget holds.
  /// Why the engine would refuse sequences of `context` tokens (its
  /// max_model_len, which defaults to the context, beyond the model's
  /// positions where the engine refuses that: vLLM, SGLang), or empty. The
  /// one rule behind max_model_len's check and a workload's context.
  [[nodiscard]] std::string context_refusal(double context) const {
    const double len = engine.max_model_len.value_or(context);
    if (model.max_context > 0 && len > model.max_context && engine_row_of(engine.id).refuses_context_beyond_positions) {
      return (engine.max_model_len ? "max_model_len (" : "context (") + detail::show(len) + ") is beyond the " +
             detail::show(model.max_context) + " positions of '" + model.id + "' (max_position_embeddings): " +
             std::string(engine.name()) + " refuses to start";
    }
    return {};
  }
  [[nodiscard]] weights_fit fit(double context) const {
    const memory_plan m = memory(1, context);
    return {m.weights_fit, m.weights, m.usable, m.weights_fit ? make_bytes(0) : make_bytes(-m.kv_budget.value()),
            m.max_sequences, context};
  }

 private:
  void check() const;
  /// Tensor parallelism on an engine that splits by layers is its row split
  /// (llama.cpp --split-mode row): the one place that is decided.
  [[nodiscard]] bool row_split_of(const parallel_plan& p) const {
    return p.tp > 1 && engine_row_of(engine.id).splits_layers;
  }
  std::optional<roofline> roof_;
};

inline deployment::deployment(architecture a, precision p, engine_settings e)
    : model(std::move(a)), pr(std::move(p)), engine(std::move(e)) {
  check();
}

inline deployment::deployment(architecture a, precision p, const roofline& r, placement w, engine_settings e,
                              std::optional<bytes> stored_weights)
    : model(std::move(a)), pr(std::move(p)), where(std::move(w)), engine(std::move(e)), stored(stored_weights) {
  if (where.parallel.devices() == 1 && r.devices() > 1) where.parallel.tp = r.devices();
  roof_.emplace(r.devices() == 1 ? r : roofline(r.dev(), r.efficiency()));
  where.parallel.row_split = row_split_of(where.parallel);
  check();
}

inline void deployment::check() const {
  validate(engine);
  validate_kv_format(engine, pr.kv);
  if (engine.max_model_len) {
    if (const std::string why = context_refusal(*engine.max_model_len); !why.empty()) throw std::invalid_argument(why);
  }
  if (stored) detail::require_non_negative("stored weights", stored->value());
  if (speculative) detail::check_speculation(*speculative, model, where.parallel, where.offload.has_value(), engine);
  if (!roof_) return;
  const engine_row& row = engine_row_of(engine.id);
  if (where.parallel.tp > 1 && row.splits_layers && !row.row_split) {
    throw std::invalid_argument("tp: " + std::string(engine.name()) +
                                " splits a model over devices by layers only (it exposes no --split-mode row); "
                                "give pp or no degree");
  }
  validate(where.parallel, model);
  if (where.parallel.dp_attention_tp() && !engine_row_of(engine.id).dp_attention_beside_tp) {
    throw std::invalid_argument("dp_attention beside tp: " + std::string(engine.name()) +
                                " does not run it (SGLang and TensorRT-LLM do; for data-parallel attention "
                                "give ep alone)");
  }
  detail::require_in("replicas", where.replicas, 1, 65536);
  if (where.offload) {
    if (devices() > 1) throw std::invalid_argument("offload needs a single device (got " + std::to_string(devices()) + ")");
    validate(*where.offload, model);
  }
}

/// A deployment as asked for: every choice optional, never a sentinel.
struct request {
  const architecture* model = nullptr;  ///< required
  const model_source* source = nullptr;  ///< the file the model came from, if any
  /// The catalog name as asked: a quantization word in it ("-AWQ", "-FP8",
  /// "Q4_K_M": format_in_name) selects the weights, and refuses other ones.
  std::string name;
  /// The model file's formats, module by module (set from `source` when null).
  std::optional<precision> file_formats;
  const device* dev = nullptr;  ///< null: a question without a device (kv)
  layout_request layout;
  std::optional<offload_plan> offload;
  std::optional<numeric_format> weights;  ///< unset: the file's formats, else the published checkpoint's, else bf16
  std::optional<numeric_format> kv;       ///< unset: the file's KV format, else bf16
  std::optional<numeric_format> lm_head;  ///< also the embedding table's
  std::string engine;  ///< name[-backend][@version] (find_engine); empty: default_engine_for(device)
  engine_overrides engine_options;
  /// Unset: default_profile(device, engine), the engine's fitted or class profile.
  std::optional<efficiency_profile> efficiency;
};

/// The one place where a request's formats, layout, engine settings,
/// efficiency profile and stored weight bytes are decided. Throws
/// std::invalid_argument naming the field (layout, engine, a KV format the
/// engine cannot hold, a layout the model cannot split into, an offload).
inline deployment resolve(const request& r) {
  if (r.model == nullptr) throw std::invalid_argument("model is required");
  std::optional<precision> file = r.file_formats ? r.file_formats
                                  : r.source != nullptr ? std::optional<precision>(r.source->pr)
                                                        : std::nullopt;
  // A catalog model without a file: the format its name announces, else its
  // publisher's checkpoint.
  const std::optional<std::string> named = file || r.name.empty() ? std::nullopt : format_in_name(r.name);
  if (named && r.weights && r.weights->name != *named) {
    throw std::invalid_argument("weights '" + std::string(r.weights->name) + "' contradict the model name '" + r.name +
                                "' (" + *named + ")");
  }
  std::optional<published_checkpoint> published;
  if (!file && !r.weights && !named && (published = published_formats(*r.model))) file = published->pr;
  const numeric_format kv = r.kv ? *r.kv : file ? file->kv : find_format("bf16");
  precision pr;
  if (file && !r.weights) {
    pr = *file;  // the file's own formats, module by module
    pr.kv = kv;
  } else {
    pr = precision::of(r.weights ? *r.weights : find_format(named ? *named : "bf16"), kv);
  }
  if (r.lm_head) {
    pr.lm_head = *r.lm_head;
    pr.embedding = *r.lm_head;
  }
  std::optional<bytes> stored;
  if (r.source != nullptr) stored = loaded_weight_bytes(*r.source, pr, !r.weights);
  const auto with_source = [&](deployment d) {
    if (r.source != nullptr) d.source = std::make_shared<const model_source>(*r.source);
    d.formats_from = r.weights ? "asked" : named ? "name" : published ? "checkpoint" : file ? "file" : "default";
    if (published && !r.weights) d.checkpoint = published->repo;
    if (named && !r.weights) d.checkpoint = r.name;
    return d;
  };
  if (r.dev == nullptr) {
    const std::string name = r.engine.empty() ? std::string(to_string(default_engine)) : r.engine;
    return with_source(deployment(*r.model, pr, configure_engine(name, r.engine_options)));
  }
  engine_settings e = configure_engine(r.engine.empty() ? default_engine_for(*r.dev) : r.engine, *r.dev, r.engine_options);
  // Several devices and no degree: the engine's own split (llama.cpp: by layers).
  layout_request lr = r.layout;
  const bool by_layers = !lr.tp && !lr.pp && !lr.ep && engine_row_of(e.id).splits_layers;
  if (by_layers) lr.pp = lr.devices_per_node * lr.nodes;
  const parallel_plan p = infer_layout(lr);
  efficiency_profile eff = r.efficiency ? *r.efficiency : default_profile(*r.dev, e.qualified_name());
  // An engine that runs prompts in passes runs them in passes of its token
  // budget: the default (the class's) or the one asked (llama.cpp's -ub).
  if (!r.efficiency && eff.prefill_chunk > 0) eff.prefill_chunk = e.max_batched_tokens;
  validate(eff);
  // Across nodes with no degree given: one instance per node, as replicas,
  // when one node holds the model (its weights, and one sequence of
  // max_model_len when that is set); TP over every node only when the model
  // needs them. Replicas serve each its share of the users with no
  // collective crossing a node; TP 16 pays two InfiniBand all-reduces a layer.
  if (lr.nodes > 1 && !by_layers && !lr.tp && !lr.pp && !lr.ep && !lr.dp_attention && !r.offload) {
    layout_request node = lr;
    node.nodes = 1;
    try {
      const deployment one(*r.model, pr, roofline(*r.dev, eff), {infer_layout(node), std::nullopt, lr.nodes}, e,
                           stored);
      const memory_plan m = one.memory(1, e.max_model_len.value_or(1));
      if (m.weights_fit && (!e.max_model_len || m.starts)) return with_source(one);
    } catch (const std::invalid_argument&) {
      // One node cannot take the model's split: the nodes together may.
    }
  }
  try {
    return with_source(deployment(*r.model, pr, roofline(*r.dev, std::move(eff)), {p, r.offload}, std::move(e), stored));
  } catch (const std::invalid_argument& ex) {
    // Say where a layout nobody asked for came from.
    const std::string what = ex.what();
    if (r.layout.tp || r.layout.pp || r.layout.ep || p.devices() == 1 || what.rfind("offload", 0) == 0 ||
        what.rfind("kv format", 0) == 0 || what.rfind("dp_attention", 0) == 0) {
      throw;
    }
    throw std::invalid_argument(what + "; " + (by_layers ? "pp (layer split)" : "tp") + " defaults to the " +
                                std::to_string(p.devices()) + " devices: give tp, pp or ep");
  }
}

}  // namespace llmroof
