// hdlab calibrate --backend cpu|cuda -o profiles/hardware/NAME.json [--quick] [--threads N]
// (GPU profiles from measured kernels, --from-kerneldb / --derive-from: cmd_calibrate_kernels.cpp)
// Microbenchmarks on the executor (GEMM over a grid of shapes, attention over lengths,
// mask densities and decode contexts, the vector ops, gathers, the smallest ops) and a
// fit of a hardware profile's rates and efficiency curves to them (calibration/fit.hpp).
// The profile written records the machine (CPU model, cores, caches, memory, GPU), the
// run (when, how long, the load average around it), the fit's residuals and every
// sample. --refit PROFILE fits the samples of an earlier calibration again without
// measuring. A cuda calibration on a machine without a usable device exits 2.
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "calibrate_kernels.hpp"
#include "hdlab/calibration/profile.hpp"
#include "hdlab/calibration/validation.hpp"
#include "hdlab/executor/backends.hpp"
#include "hdlab/model/files.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

using namespace hdlab::calibration;

struct CalibrateCli {
  std::string backend = "cpu", output, name, refit;
  int threads = 0;
  bool quick = false, quiet = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

double load_average() {
  std::istringstream in(read_text("/proc/loadavg"));
  double v = 0;
  in >> v;
  return v;
}

// What this machine is, from the OS (main-side: the library takes it as data).
MachineFacts machine_facts(const executor::Backend& backend) {
  MachineFacts m;
  parse_cpuinfo(read_text("/proc/cpuinfo"), m);
  m.memory_bytes = static_cast<double>(backend.memory().total_bytes);
  m.l2_cache_bytes = parse_cache_size(read_text("/sys/devices/system/cpu/cpu0/cache/index2/size"));
  m.l3_cache_bytes = parse_cache_size(read_text("/sys/devices/system/cpu/cpu0/cache/index3/size"));
  if (backend.name() == "cuda") m.gpu = backend.description();
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.host = host;
  return m;
}

std::unique_ptr<executor::Backend> open_backend(const std::string& name, int threads) {
  if (name == "cpu") return executor::make_cpu_backend(executor::CpuOptions{threads, "auto"});
  if (name != "cuda") throw model::ConfigError("--backend", "must be cpu or cuda, got " + name);
  const executor::CudaProbe probe = executor::probe_cuda();
  if (probe.devices == 0) throw model::ConfigError("--backend", "cuda: no CUDA device (" + probe.reason + ")");
  try {
    return executor::make_cuda_backend(0);
  } catch (const executor::BackendError& e) {
    throw model::ConfigError("--backend", std::string("cuda: no usable CUDA device (") + e.what() + ")");
  }
}

void print_fit(const FitResult& fit, const simulator::HardwareProfile& h, const std::string& path) {
  std::cout << fmt::format("calibrated {}: peak {:.1f} GFLOP/s fp32, stream bandwidth {:.1f} GB/s, launch {:.2f} us\n",
                           h.name, fit.peak_flop_per_s * 1e-9, fit.bandwidth_bytes_per_s * 1e-9, fit.launch_s * 1e6);
  std::cout << fmt::format("{} curves fitted ({}); residuals of the fit on its own samples:\n", fit.curves.size(),
                           [&] {
                             std::string s;
                             for (const auto& [k, c] : fit.curves) s += (s.empty() ? "" : ", ") + k;
                             return s;
                           }());
  std::cout << fmt::format("  {:<10} {:>8} {:>18} {:>15}\n", "bench", "samples", "median |error|", "max |error|");
  for (const auto& [k, s] : fit.summary)
    std::cout << fmt::format("  {:<10} {:>8} {:>17.1f}% {:>14.1f}%\n", k, s.samples, 100 * s.median_abs_error,
                             100 * s.max_abs_error);
  std::cout << "profile written to " << path << "\n";
}

std::vector<Sample> measure(executor::Backend& be, const CalibrateCli& o, CalibrationRun& run) {
  const BenchPlan plan = o.quick ? quick_plan() : full_plan();
  run.plan = plan.name;
  run.rounds = plan.rounds;
  run.load_start = load_average();
  const auto t0 = std::chrono::steady_clock::now();
  run.measured_utc = utc_now();
  auto progress = [&](const Sample& s, int done, int total) {
    if (!o.quiet)
      std::cerr << fmt::format("\r[{:>3}/{}] {:<64.64} {:>10.2f} us", done, total, s.name, s.seconds * 1e6) << std::flush;
  };
  std::vector<Sample> samples = run_benchmarks(be, plan, progress);
  if (!o.quiet) std::cerr << "\n";
  run.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.load_end = load_average();
  return samples;
}

int calibrate(const CalibrateCli& o) {
  if (o.output.empty()) throw model::ConfigError("-o", "give the profile to write, e.g. -o profiles/hardware/cpu-NAME.json");
  check_output_file("-o", o.output);  // before minutes of measuring, not after
  std::vector<Sample> samples;
  CalibrationRun run;
  MachineFacts machine;
  if (!o.refit.empty()) {  // the samples (and the facts) of an earlier calibration
    const simulator::HardwareProfile old = load_hardware(o.refit, "--refit");
    samples = calibration_samples(old);
    if (samples.empty()) throw model::ConfigError("--refit", o.refit + " has no calibration samples");
    machine = machine_from_json(old.calibration.value("machine", nlohmann::json::object()));
    const nlohmann::json r = old.calibration.value("run", nlohmann::json::object());
    run.backend = r.value("backend", "cpu");
    run.device = r.value("device", "");
    run.threads = r.value("threads", 0);
    run.plan = r.value("plan", "");
    run.rounds = r.value("rounds", 1);
    run.measured_utc = r.value("measured_utc", "");
    run.elapsed_s = r.value("elapsed_s", 0.0);
  } else {
    auto be = open_backend(o.backend, o.threads);
    machine = machine_facts(*be);
    run.backend = be->name();
    run.device = be->description();
    run.threads = o.backend == "cpu" ? (o.threads > 0 ? o.threads : machine.cpu_cores) : 0;
    samples = measure(*be, o, run);
  }
  run.fitted_utc = utc_now();
  run.version = "hdlab 0.1.0";
  const FitResult fit = fit_samples(samples);
  const std::string name = !o.name.empty() ? o.name
                           : run.backend == "cuda" ? machine.gpu + " (hdlab calibrate)"
                                                   : fmt::format("{} ({} thread{}, hdlab calibrate)", machine.cpu_model, run.threads,
                                                                 run.threads == 1 ? "" : "s");
  const simulator::HardwareProfile h = make_profile(name, fit, samples, machine, run);
  const nlohmann::json j = simulator::to_json(h);
  if (!(simulator::parse_hardware_profile(j) == h))  // what is written reads back as it is
    throw std::logic_error("calibrate: the profile does not round-trip through its JSON");
  model::write_file_atomic(o.output, j.dump(2) + "\n");
  print_fit(fit, h, o.output);
  return exit_ok;
}

}  // namespace

Verb add_calibrate(CLI::App& app) {
  auto* sub = app.add_subcommand("calibrate", "Measure the executor's ops and fit a hardware profile to them");
  auto o = std::make_shared<CalibrateCli>();
  auto* backend = sub->add_option("--backend", o->backend, "cpu | cuda")->capture_default_str();
  sub->add_option("-o,--output", o->output, "the profile to write (JSON), e.g. profiles/hardware/cpu-NAME.json")
      ->check(non_empty());
  sub->add_option("--name", o->name, "the profile's name (default: the CPU model or GPU, threads)")->check(non_empty());
  auto* threads = sub->add_option("--threads", o->threads,
                                  "threads measuring (--backend cpu) or fitting (--from-kerneldb); 0: all")
                      ->capture_default_str()
                      ->check(thread_count());
  auto* quick = sub->add_flag("--quick", o->quick, "a smaller plan (CI smoke runs: under a minute on 2 cores)");
  // --refit measures nothing: the options that shape a measurement would be ignored.
  auto* refit = sub->add_option("--refit", o->refit, "fit the samples of this calibrated profile again, measuring nothing")
      ->check(non_empty())
      ->excludes(backend)
      ->excludes(threads)
      ->excludes(quick);
  sub->add_flag("--quiet", o->quiet, "no progress lines on stderr");
  // GPU profiles from measured kernels: nothing is measured here either.
  auto k = std::make_shared<KernelCalibrateCli>();
  auto* kernels = sub->add_option_group("kerneldb", "Fit a GPU profile to measured kernels (nothing run here)");
  auto* from = kernels->add_option("--from-kerneldb", k->kerneldb, "folder of kerneldb device folders, e.g. profiles/kerneldb")
                   ->check(CLI::ExistingDirectory);
  auto* derive = kernels->add_option("--derive-from", k->derive_from,
                                     "a fitted profile whose kernel models are scaled to --datasheet's device")
                     ->check(non_empty())
                     ->excludes(from);
  kernels->add_option("--device", k->device, "kerneldb device folder: h100_sxm, a100_sxm or b200_sxm")
      ->check(non_empty())
      ->needs(from);
  kernels->add_option("--datasheet", k->datasheet,
                      "datasheet profile to fit or derive onto (default with --from-kerneldb: "
                      "profiles/hardware/datasheet/ of the device)")
      ->check(non_empty());
  for (CLI::Option* opt : {from, derive}) opt->excludes(backend)->excludes(quick)->excludes(refit);
  derive->excludes(threads);  // derives by datasheet ratios: nothing to run at once
  return {sub, [o, k] {
            if (!k->kerneldb.empty() || !k->derive_from.empty()) {
              k->output = o->output;
              k->threads = o->threads;
              if (k->output.empty()) throw model::ConfigError("-o", "give the profile to write, e.g. -o profiles/hardware/h100-sxm.json");
              if (!k->kerneldb.empty() && k->device.empty())
                throw model::ConfigError("--device", "give the kerneldb device folder to fit (h100_sxm, a100_sxm, b200_sxm)");
              return k->kerneldb.empty() ? derive_profile(*k) : calibrate_from_kerneldb(*k);
            }
            return calibrate(*o);
          }};
}

}  // namespace hdlab::cli
