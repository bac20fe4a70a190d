// hdlab check MODEL [--design D]: validate and print the normalised config.
#include <iostream>

#include "verbs.hpp"

namespace hdlab::cli {

Verb add_check(CLI::App& app) {
  auto* sub = app.add_subcommand("check", "Validate a model and design; print the normalised config");
  auto opts = std::make_shared<ModelOptions>();
  auto json = std::make_shared<bool>(false);
  opts->add_to(*sub);
  sub->add_flag("--json", *json, "Print the normalised config as JSON (the default prints a summary and the JSON)");
  return {sub, [opts, json] {
    const model::Config c = load_config(*opts);
    if (*json) {
      print_json(model::to_json(c));
      return exit_ok;
    }
    std::cout << "ok: " << c.effective.name << ", " << model::describe(c.design) << "\n";
    for (const auto& [field, note] : c.effective.assumptions) std::cout << "assumed " << field << ": " << note << "\n";
    for (const auto& [pointer, value] : c.design.defaults) std::cout << "assumed " << pointer << ": " << value << "\n";
    std::cout << model::to_json(c).dump(2) << "\n";
    return exit_ok;
  }};
}

}  // namespace hdlab::cli
