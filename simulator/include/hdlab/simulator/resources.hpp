#pragma once
// What this process may hold in memory, and refusing work whose known size exceeds it
// before it starts (a sweep's result table, a pipeline's task graph, a JSON timeline):
// failing up front names the input that asked for too much; failing later is a kill by
// the kernel's OOM killer or a bad_alloc half-way through.
#include <cstdint>
#include <string>

namespace hdlab::simulator {

// The machine's physical memory, or the process's address-space limit (ulimit -v) when
// that is smaller; 0 when neither can be found (nothing is refused then).
std::uint64_t memory_budget_bytes();

// Throws ConfigError(place, "<what> need(s) about X GiB, more than the Y GiB <of memory
// here | this process may use (ulimit -v)>; <advice>") when `bytes` exceed the budget.
void require_memory(double bytes, const std::string& place, const std::string& what, const std::string& advice);

}  // namespace hdlab::simulator
