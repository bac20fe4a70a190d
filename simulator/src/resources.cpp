#include "hdlab/simulator/resources.hpp"

#include <algorithm>
#include <cstdio>

#include <sys/resource.h>
#include <unistd.h>

#include "hdlab/model/error.hpp"

namespace hdlab::simulator {

namespace {

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::uint64_t address_space_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::uint64_t>(r.rlim_cur);
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1ull << 30));
  return buf;
}

}  // namespace

std::uint64_t memory_budget_bytes() {
  const std::uint64_t physical = physical_memory_bytes(), limit = address_space_limit();
  if (physical == 0 || limit == 0) return std::max(physical, limit);
  return std::min(physical, limit);
}

void require_memory(double bytes, const std::string& place, const std::string& what, const std::string& advice) {
  const std::uint64_t budget = memory_budget_bytes();
  if (budget == 0 || bytes <= static_cast<double>(budget)) return;
  const std::uint64_t limit = address_space_limit();
  const bool limited = limit != 0 && limit == budget && limit < physical_memory_bytes();
  throw model::ConfigError(place, what + " need about " + gib(bytes) + ", more than the " +
                                      gib(static_cast<double>(budget)) +
                                      (limited ? " this process may use (ulimit -v)" : " of memory of this machine") +
                                      (advice.empty() ? "" : "; " + advice));
}

}  // namespace hdlab::simulator
