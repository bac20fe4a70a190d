// The registry of design modules' CUDA kernels (cuda_module_ops.hpp).
#include "cuda_module_ops.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace hdlab::executor::cuda {

namespace {

// Filled by static initialisers as the module loads, read afterwards only.
std::map<std::string, ModuleKernel>& kernels() {
  static std::map<std::string, ModuleKernel> table;
  return table;
}

}  // namespace

ModuleKernel module_kernel(const char* op_name) {
  const auto it = kernels().find(op_name);
  return it == kernels().end() ? nullptr : it->second;
}

RegisterModuleKernel::RegisterModuleKernel(const char* op_name, ModuleKernel kernel) {
  // Two designs giving one op name would run whichever registered last: refuse at load.
  if (!kernels().emplace(op_name, kernel).second)
    throw std::logic_error(std::string("two CUDA kernels registered for the module op ") + op_name);
}

}  // namespace hdlab::executor::cuda
