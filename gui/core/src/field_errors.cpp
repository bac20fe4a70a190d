#include "hdlab/gui_core/field_errors.hpp"

namespace hdlab::gui_core {

bool is_pointer_prefix(const std::string& prefix, const std::string& pointer) {
  if (prefix.size() > pointer.size() || pointer.compare(0, prefix.size(), prefix) != 0) return false;
  return prefix.size() == pointer.size() || pointer[prefix.size()] == '/' || prefix.empty();
}

int field_for_pointer(const std::string& pointer, const std::vector<std::string>& fields) {
  int best = -1;
  std::size_t best_len = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].empty() || !is_pointer_prefix(fields[i], pointer)) continue;
    if (best < 0 || fields[i].size() > best_len) {
      best = static_cast<int>(i);
      best_len = fields[i].size();
    }
  }
  return best;
}

}  // namespace hdlab::gui_core
