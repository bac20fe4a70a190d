// The CUDA entry points of a build with CUDA: the backend lives in a module loaded on
// first use (dlopen), so that verbs which never run CUDA start without the CUDA
// libraries (cuBLAS alone maps about 200 MB and runs static initialisers for tens of
// milliseconds) and run where no CUDA runtime is installed.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <utility>

#include "cuda_module_abi.hpp"
#include "matrix_product.hpp"

namespace hdlab::executor {

namespace {

// The module: where it is, and the outcome of the one load attempt made for that path.
class CudaModule {
 public:
  void set_path(std::string path) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (entry_ || path == path_) return;  // a loaded module stays; the same path is tried once
    path_ = std::move(path);
    tried_ = false;
    error_.clear();
  }

  // The module's entry points, or nullptr and why not.
  const cuda_module::EntryPoints* get(std::string& why) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!tried_) load();
    why = error_;
    return entry_;
  }

 private:
  void load() {
    tried_ = true;
    if (path_.empty()) {
      error_ = "the CUDA backend module's location was not given (main() sets it)";
      return;
    }
    // RTLD_LOCAL: the module's symbols (its own copies of the executor core among them)
    // never resolve anyone else's references. Never closed: see set_cuda_module.
    void* handle = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      error_ = "cannot load the CUDA backend module: " + std::string(e ? e : path_);
      return;
    }
    using Entry = const cuda_module::EntryPoints* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, HDLAB_CUDA_MODULE_ENTRY));
    if (!entry) {
      const char* e = dlerror();
      error_ = path_ + " is not an hdlab CUDA module (" + std::string(e ? e : "no entry point") + ")";
      return;
    }
    const cuda_module::EntryPoints* points = entry();
    if (!points || !points->abi || std::strcmp(points->abi, HDLAB_CUDA_MODULE_ABI_STRING) != 0) {
      error_ = path_ + " comes from another hdlab build (module: \"" + std::string(points && points->abi ? points->abi : "?") +
               "\", this program: \"" HDLAB_CUDA_MODULE_ABI_STRING "\")";
      return;
    }
    entry_ = points;
  }

  std::mutex mutex_;
  std::string path_;
  bool tried_ = false;
  std::string error_;
  const cuda_module::EntryPoints* entry_ = nullptr;
};

CudaModule& module() {
  static CudaModule m;
  return m;
}

}  // namespace

void set_cuda_module(std::string path) { module().set_path(std::move(path)); }

bool cuda_compiled() { return true; }

CudaProbe probe_cuda() {
  std::string why;
  const cuda_module::EntryPoints* m = module().get(why);
  if (!m) return CudaProbe{0, why, false, {}};
  CudaProbe probe = m->probe();
  probe.module_loaded = true;
  return probe;
}

std::unique_ptr<Backend> make_cuda_backend(int device) {
  std::string why;
  const cuda_module::EntryPoints* m = module().get(why);
  if (!m) throw BackendError("cuda backend: " + why);
  return std::unique_ptr<Backend>(m->make_backend(device));
}

std::unique_ptr<MatrixProduct> make_matrix_product(Backend& backend, MatrixPrecision precision, std::int64_t m,
                                                   std::int64_t n, std::int64_t k) {
  check_matrix_product_shape(m, n, k);
  if (backend.name() != "cuda") return make_generic_matrix_product(backend, precision, m, n, k);
  std::string why;
  const cuda_module::EntryPoints* module_points = module().get(why);
  if (!module_points) throw BackendError("cuda backend: " + why);
  return std::unique_ptr<MatrixProduct>(module_points->make_matrix_product(backend, precision, m, n, k));
}

bool supports_matrix_precision(const Backend& backend, MatrixPrecision precision) {
  return backend.name() == "cuda" || generic_matrix_precision(backend, precision);
}

}  // namespace hdlab::executor
