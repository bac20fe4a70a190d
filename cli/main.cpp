// hdlab: what a latent-computation design costs, and proof by running it.
// Exit codes: 0 ok, 2 bad input (message on stderr), 1 internal error, 3 a requested check
// failed (validate --max-median-error).
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <vector>

#include <unistd.h>

#include "hdlab/executor/backends.hpp"
#include "standard_streams.hpp"
#include "verbs.hpp"

namespace {

// An exception no frame catches (one thrown in a worker thread, or from a destructor):
// a message and exit 1 instead of std::terminate's abort and core dump.
[[noreturn]] void on_terminate() {
  const char* what = "an unhandled error";
  std::string text;
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      what = "out of memory";
    } catch (const std::exception& x) {
      text = x.what();
      what = text.c_str();
    } catch (...) {
    }
  }
  std::cerr << "hdlab: internal error: " << what << "\n";
  std::cerr.flush();
  ::_exit(hdlab::cli::exit_internal);
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  using namespace hdlab::cli;
  std::set_terminate(on_terminate);
  reserve_standard_descriptors();
  StandardOutput out;
  int rc = run(argc, argv);
  // A report that did not reach stdout (a full disk, a closed pipe) is a failure.
  if (const std::string error = out.finish(); !error.empty()) {
    std::cerr << "hdlab: error: cannot write to standard output: " << error << "\n";
    if (rc == exit_ok) rc = exit_internal;
  }
  return rc;
}

namespace {

int run(int argc, char** argv) {
  using namespace hdlab::cli;
  // Bundled profiles: $HDLAB_PROFILES_DIR, else the source tree this hdlab was built from.
  const char* profiles = std::getenv("HDLAB_PROFILES_DIR");
  set_profiles_dir(profiles && *profiles ? profiles : HDLAB_PROFILES_DIR);
  // The CUDA backend's module, loaded only by --backend cuda: $HDLAB_CUDA_MODULE, else this build's.
  const char* cuda_module = std::getenv("HDLAB_CUDA_MODULE");
  hdlab::executor::set_cuda_module(cuda_module && *cuda_module ? cuda_module : HDLAB_CUDA_MODULE);
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
      add_serve(app),
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
  } catch (const std::length_error& e) {  // a container asked for more than it can hold
    std::cerr << "hdlab: internal error: out of memory (" << e.what() << ")\n";
    return exit_internal;
  } catch (const std::exception& e) {
    std::cerr << "hdlab: internal error: " << e.what() << "\n";
    return exit_internal;
  }
}

}  // namespace
