#pragma once
// Every verb of `hdlab`: add_<verb> creates its subcommand on `app` and returns the Verb;
// main() wires them; nothing else reads argv.
#include "common.hpp"

namespace hdlab::cli {

Verb add_check(CLI::App& app);
Verb add_params(CLI::App& app);
Verb add_mask(CLI::App& app);
Verb add_cost(CLI::App& app);
Verb add_sweep(CLI::App& app);
Verb add_pipeline(CLI::App& app);
Verb add_run(CLI::App& app);
Verb add_calibrate(CLI::App& app);
Verb add_validate(CLI::App& app);
Verb add_serve(CLI::App& app);

}  // namespace hdlab::cli
