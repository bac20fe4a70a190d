// hdlab params MODEL [--design D ...]: parameter counts per component, one column per design.
#include <iostream>

#include <fmt/format.h>

#include "hdlab/model/params.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

// Components in reading order: (name, count).
std::vector<std::pair<const char*, std::int64_t>> components(const model::ParamCounts& p) {
  std::vector<std::pair<const char*, std::int64_t>> rows = {{"embedding_input", p.embedding_input},
          {"embedding_output", p.embedding_output},
          {"embedding", p.embedding()},
          {"attention", p.attention},
          {"qk_norm", p.qk_norm},
          {"norms", p.norms},
          {"router", p.router},
          {"routed_experts", p.routed_experts},
          {"shared_experts", p.shared_experts},
          {"dense_ffn", p.dense_ffn},
          {"ghc", p.ghc},
          {"adapters", p.adapters},
          {"mtp", p.mtp},
          {"non_embedding", p.non_embedding()},
          {"active_per_token", p.active_per_token},
          {"total", p.total}};
  // Hybrid backbones only, so the rows of attention-only models stay as they were.
  if (p.linear_attention > 0) rows.insert(rows.begin() + 4, {"linear_attention", p.linear_attention});
  return rows;
}

nlohmann::json params_json(const model::ParamCounts& p) {
  nlohmann::json j;
  for (const auto& [name, count] : components(p)) j[name] = count;
  return j;
}

std::string billions(std::int64_t v) { return fmt::format("{:.3f}", static_cast<double>(v) / 1e9); }

}  // namespace

Verb add_params(CLI::App& app) {
  auto* sub = app.add_subcommand("params", "Parameter counts: total, active per token, embedding, per component");
  struct Options {
    std::string model_path;
    std::vector<std::string> designs;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("model", o->model_path, "Model file: hdlab config/backbone JSON or a HuggingFace config.json")
      ->required()
      ->check(non_empty());
  sub->add_option("-d,--design", o->designs, "Design(s): file, inline JSON or shorthand (hd:n=4); repeat to compare")
      ->check(design_given);
  sub->add_flag("--json", o->json, "Print JSON (exact integers)");
  return {sub, [o] {
            std::vector<std::string> designs = o->designs;
            if (designs.empty()) designs.push_back("");
            std::vector<model::Config> configs;
            for (const auto& d : designs) configs.push_back(load_config(ModelOptions{o->model_path, d}));
            if (o->json) {
              nlohmann::json out = nlohmann::json::array();
              for (const auto& c : configs)
                out.push_back({{"model", c.effective.name},
                               {"design", model::describe(c.design)},
                               {"config", model::to_json(c.design)},
                               {"params", params_json(model::count_params(c))}});
              print_json(configs.size() == 1 ? out[0] : out);
              return exit_ok;
            }
            std::cout << fmt::format("{}: parameters in billions (1e9)\n", configs.front().base.name);
            std::vector<std::vector<std::pair<const char*, std::int64_t>>> columns;
            std::string header = fmt::format("{:<22}", "component");
            for (std::size_t i = 0; i < configs.size(); ++i) {
              columns.push_back(components(model::count_params(configs[i])));
              header += fmt::format(" {:>10}", fmt::format("#{}", i + 1));
              std::cout << fmt::format("  #{}: {}\n", i + 1, model::describe(configs[i].design));
            }
            std::cout << header << "\n";
            for (std::size_t row = 0; row < columns.front().size(); ++row) {
              bool any = false;
              for (const auto& col : columns) any = any || col[row].second != 0;
              if (!any) continue;
              std::string line = fmt::format("{:<22}", columns.front()[row].first);
              for (const auto& col : columns) line += fmt::format(" {:>10}", billions(col[row].second));
              std::cout << line << "\n";
            }
            return exit_ok;
          }};
}

}  // namespace hdlab::cli
