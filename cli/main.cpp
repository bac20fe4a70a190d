// hdlab: what a latent-computation design costs, and proof by running it.
// Exit codes: 0 ok, 2 bad input (message on stderr), 1 internal error, 3 a requested check
// failed (validate --max-median-error).
#include <cstdlib>
#include <iostream>
#include <new>
#include <vector>

#include "verbs.hpp"

int main(int argc, char** argv) {
  using namespace hdlab::cli;
  // Bundled profiles: $HDLAB_PROFILES_DIR, else the source tree this hdlab was built from.
  const char* profiles = std::getenv("HDLAB_PROFILES_DIR");
  set_profiles_dir(profiles && *profiles ? profiles : HDLAB_PROFILES_DIR);
  CLI::App app{"hdlab: costs of latent-computation designs (HD, PHD, VWN, looped, growth), predicted and measured"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hdlab 0.1.0");
  const std::vector<Verb> verbs = {
      add_check(app),
      add_params(app),
      add_mask(app),
      add_cost(app),
      add_sweep(app),
      add_pipeline(app),
      add_run(app),
      add_calibrate(app),
      add_validate(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/version (rc 0) or the usage error
    return rc == 0 ? exit_ok : exit_bad_input;
  }
  try {
    for (const Verb& v : verbs)
      if (v.command->parsed()) return v.run();
    return exit_internal;
  } catch (const hdlab::model::ConfigError& e) {
    std::cerr << "hdlab: error: " << e.what() << "\n";
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    std::cerr << "hdlab: internal error: out of memory\n";
    return exit_internal;
  } catch (const std::exception& e) {
    std::cerr << "hdlab: internal error: " << e.what() << "\n";
    return exit_internal;
  }
}
