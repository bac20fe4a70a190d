// Fuzz target for the config loader: any byte string must either load or be refused with
// a ConfigError. Anything else (another exception, a crash, a sanitizer report, a hang)
// is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The parse every user-written JSON goes through (depth limit, repeated keys).
  Json doc;
  try {
    doc = parse_json_text(text, "fuzz input");
  } catch (const ConfigError&) {
    try {
      design_json_from_shorthand(text);
    } catch (const ConfigError&) {
    }
    return 0;
  }
  try {
    Config c = parse_config(doc);
    (void)count_params(c);
    // A normalised config must load again to the same config.
    if (!(parse_config(to_json(c)) == c)) __builtin_trap();
  } catch (const ConfigError&) {
  }
  try {
    (void)load_backbone(doc);
  } catch (const ConfigError&) {
  }
  return 0;
}
