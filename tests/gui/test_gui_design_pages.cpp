// The design conformance suite's GUI part (issue 13, part 3): every design the registry
// lists goes through the design editor and back unchanged. The editor is restored from
// each of the registry's examples (its widgets set from the design), and the design the
// editor then parses from its widgets must equal the example. A design added to the
// registry without a page in the editor, or with a field the page drops or rounds, fails
// here without this file being edited.
#include <catch2/catch.hpp>

#include <set>

#include "gui_test_support.hpp"
#include "design_editor.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/design.hpp"
#include "method_pages.hpp"
#include "session.hpp"

using namespace hdlab;

namespace {

// The conformance suite's backbone: four layers, so a loop has a prelude, a block and a
// coda, and a second layer sliding over 6 tokens.
model::Backbone page_backbone() {
  model::Backbone b;
  b.name = "tiny-dense";
  b.num_layers = 4;
  b.hidden = 32;
  b.num_heads = 4;
  b.num_kv_heads = 2;
  b.head_dim = 8;
  b.intermediate = 48;
  b.vocab_size = 61;
  b.vocab_pad_multiple = 8;
  b.layers.assign(4, model::LayerAttention{});
  b.layers[1] = {model::AttentionKind::sliding, 6};
  b.dtype = model::DType::fp32;
  return b;
}

}  // namespace

TEST_CASE("every registered design goes through the design editor and back unchanged", "[gui][designs]") {
  test::ensure_app();
  const model::Backbone b = page_backbone();
  std::set<std::string> keys_seen;
  for (const auto& [key, text] : model::conformance_examples()) {
    INFO(key << ": " << text);
    const model::Design d = model::parse_design(model::Json::parse(text), b, "/design");
    const model::Config written = model::make_config(b, d);
    gui::Session session(gui_core::read_catalog(test::profiles()));
    gui::DesignEditor editor(&session);
    editor.restore(written, {}, {});
    REQUIRE(editor.valid());
    REQUIRE(session.hasConfig());
    CHECK(editor.pages()->method().toStdString() == key);
    CHECK(session.config().design.method == written.design.method);
    CHECK(model::to_json(session.config().design) == model::to_json(written.design));
    keys_seen.insert(key);
  }
  const std::vector<std::string> keys = model::design_keys();
  CHECK(keys_seen == std::set<std::string>(keys.begin(), keys.end()));
}
