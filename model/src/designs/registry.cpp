// The registry of design modules: one std::visit per question over model::Method, and the
// compile-time check that every alternative is a complete module.
#include <ostream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::model {

namespace {

// Every question a module answers (see designs/interface.hpp for the value types).
template <class D>
concept DesignModule =
    std::default_initializable<D> && std::equality_comparable<D> &&
    requires(D d, const D& cd, ObjectReader r, const Backbone& b, DesignDefaults& defaults, std::ostream& os,
             MaskSpec& mask, ParamCounts& params, const LayerAttentionRole& role, Layout layout) {
      { D::key } -> std::convertible_to<const char*>;
      designs::parse(r, b, defaults, d);
      { designs::block_json(cd) } -> std::same_as<Json>;
      designs::describe(cd, os);
      { designs::short_label(cd) } -> std::same_as<std::string>;
      { designs::features(cd) } -> std::same_as<DesignFeatures>;
      { designs::layer_schedule(cd, std::int64_t{}) } -> std::same_as<LayerSchedule>;
      { designs::layer_runs(cd, std::int64_t{}) } -> std::same_as<std::vector<LayerRun>>;
      { designs::layer_role(cd, b, std::int64_t{}) } -> std::same_as<LayerAttentionRole>;
      designs::shape_mask(cd, b, std::int64_t{}, mask);
      { designs::default_layout(cd) } -> std::same_as<Layout>;
      designs::add_params(cd, b, params);
      { designs::prefill_tail(cd, std::int64_t{}) } -> std::same_as<std::optional<std::int64_t>>;
      { designs::decode_attention(cd, role, 0.0, layout, false) } -> std::same_as<DecodeAttention>;
      { designs::kv_entries(cd, role, 0.0) } -> std::same_as<double>;
      { designs::size_knob(cd) } -> std::same_as<std::optional<SizeKnob>>;
      designs::set_size(d, 0.0);
      { designs::conformance_examples(cd) } -> std::same_as<std::vector<std::string>>;
      { designs::form(cd) } -> std::same_as<DesignForm>;
      { designs::label_detail(cd) } -> std::same_as<std::string>;
      { designs::derived_fields(cd, b) } -> std::same_as<std::vector<std::string>>;
    };

template <class... D>
constexpr bool all_modules(std::variant<D...>*) {
  return (DesignModule<D> && ...);
}
static_assert(all_modules(static_cast<Method*>(nullptr)),
              "every alternative of model::Method must be a complete design module (see DesignModule)");

// A Method{} (a design JSON with no method block, the cost model's reference) is the baseline.
static_assert(std::is_same_v<std::variant_alternative_t<0, Method>, BaselineDesign>);

// Calls f(std::type_identity<D>{}) for each alternative D of Method, in order.
template <class F>
void for_each_method(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::type_identity<std::variant_alternative_t<I, Method>>{}), ...);
  }(std::make_index_sequence<std::variant_size_v<Method>>{});
}

}  // namespace

const char* method_name(const Method& m) {
  return std::visit([](const auto& d) { return std::decay_t<decltype(d)>::key; }, m);
}

std::vector<std::string> design_keys() {
  std::vector<std::string> keys;
  for_each_method([&]<class D>(std::type_identity<D>) { keys.emplace_back(D::key); });
  return keys;
}

std::vector<std::pair<std::string, std::string>> conformance_examples() {
  std::vector<std::pair<std::string, std::string>> out;
  for_each_method([&]<class D>(std::type_identity<D>) {
    for (auto& text : designs::conformance_examples(D{})) out.emplace_back(D::key, std::move(text));
  });
  return out;
}

DesignForm design_form(const std::string& key) {
  std::optional<DesignForm> out;
  for_each_method([&]<class D>(std::type_identity<D>) {
    if (key == D::key) out = designs::form(D{});
  });
  if (!out) throw std::out_of_range("no design is registered under \"" + key + "\"");
  return *out;
}

DesignFeatures design_features(const Method& m) {
  return std::visit([](const auto& d) { return designs::features(d); }, m);
}

std::string method_label(const Method& m) {
  return std::visit([](const auto& d) { return designs::short_label(d); }, m);
}

std::string label_detail(const Method& m) {
  return std::visit([](const auto& d) { return designs::label_detail(d); }, m);
}

std::vector<std::string> derived_fields(const Method& m, const Backbone& b) {
  return std::visit([&](const auto& d) { return designs::derived_fields(d, b); }, m);
}

std::optional<SizeKnob> size_knob(const Method& m) {
  return std::visit([](const auto& d) { return designs::size_knob(d); }, m);
}

Method with_size(const Method& m, double x) {
  Method out = m;
  std::visit([x](auto& d) { designs::set_size(d, x); }, out);
  return out;
}

LayerAttentionRole layer_role(const Method& m, const Backbone& b, std::int64_t layer) {
  return std::visit([&](const auto& d) { return designs::layer_role(d, b, layer); }, m);
}

std::optional<std::int64_t> prefill_tail(const Method& m, std::int64_t tokens) {
  return std::visit([tokens](const auto& d) { return designs::prefill_tail(d, tokens); }, m);
}

DecodeAttention decode_attention(const Method& m, const LayerAttentionRole& layer, double context, Layout layout,
                                 bool final_only_decode) {
  return std::visit(
      [&](const auto& d) { return designs::decode_attention(d, layer, context, layout, final_only_decode); }, m);
}

double kv_entries(const Method& m, const LayerAttentionRole& layer, double context) {
  return std::visit([&](const auto& d) { return designs::kv_entries(d, layer, context); }, m);
}

std::int64_t copies_per_token(const Method& m) { return design_features(m).copies; }

LayerSchedule layer_schedule(const Method& m, std::int64_t layer) {
  return std::visit([layer](const auto& d) { return designs::layer_schedule(d, layer); }, m);
}

std::vector<LayerRun> layer_runs(const Method& m, std::int64_t num_layers) {
  return std::visit([num_layers](const auto& d) { return designs::layer_runs(d, num_layers); }, m);
}

void method_to_json(const Method& m, Json& design) {
  std::visit([&](const auto& d) { design[std::decay_t<decltype(d)>::key] = designs::block_json(d); }, m);
}

Method parse_method(ObjectReader& r, const Backbone& b, DesignDefaults& defaults) {
  Method method;
  std::string first;  // the method block already read
  for_each_method([&]<class D>(std::type_identity<D>) {
    if (!r.has(D::key)) return;
    if (!first.empty()) fail(r.at(D::key), "a design has one method; \"" + first + "\" is already given");
    first = D::key;
    D d;
    designs::parse(*r.optional_object(D::key), b, defaults, d);
    method = std::move(d);
  });
  if (first.empty()) defaults[r.pointer().empty() ? "/" : r.pointer()] = "no method given: baseline (hdlab's default)";
  return method;
}

void shape_layer_mask(const Method& m, const Backbone& b, std::int64_t layer, MaskSpec& mask) {
  std::visit([&](const auto& d) { designs::shape_mask(d, b, layer, mask); }, m);
}

void add_method_params(const Method& m, const Backbone& b, ParamCounts& p) {
  std::visit([&](const auto& d) { designs::add_params(d, b, p); }, m);
}

Layout default_layout(const Method& m) {
  return std::visit([](const auto& d) { return designs::default_layout(d); }, m);
}

Layout default_layout(const Design& d) { return default_layout(d.method); }

void designs::common::note_default(DesignDefaults& defaults, const ObjectReader& r, const char* key,
                                   const std::string& value) {
  if (!r.has(key)) defaults[r.at(key)] = value + " (hdlab's default)";
}

// An optional question: only a design with its own mixing op answers it. The template
// (declared, never defined) is what overload resolution finds for the others; a module's
// overload on its own struct is preferred to it.
namespace designs {
struct NoAnswer {};
template <class D>
NoAnswer mixing_ops(const D&, const OpDims&, double, OpNode&);
}  // namespace designs

void design_mixing_ops(const Method& m, const OpDims& s, double rows, OpNodes& out) {
  std::visit(
      [&](const auto& d) {
        OpNode& coefficients = node(out, OpKind::ghc_dynamic);
        using Answer = decltype(designs::mixing_ops(d, s, rows, coefficients));
        if constexpr (!std::is_same_v<Answer, designs::NoAnswer>)
          designs::mixing_ops(d, s, rows, coefficients);
        else if (designs::features(d).module_mixing)
          throw std::logic_error(std::string(method_name(m)) + " says module_mixing but has no mixing_ops");
      },
      m);
}

void describe_method(const Method& m, std::ostream& s) {
  std::visit([&s](const auto& d) { designs::describe(d, s); }, m);
}

}  // namespace hdlab::model
