#pragma once
// Which editor field a ConfigError belongs to. Errors name a JSON pointer
// ("/design/hd/layers/3", "/scenario/parallel/tp"); the editor registers one pointer per
// field and shows the message next to the field whose pointer is the longest prefix of
// the error's (at a segment boundary), so "/design/hd/layers/3" lands on the layer list
// and "/design/looped" (a sum that does not add up) on the looped group.
#include <string>
#include <vector>

namespace hdlab::gui_core {

// Index into `fields` of the best match; -1 when no field is a prefix.
int field_for_pointer(const std::string& pointer, const std::vector<std::string>& fields);

// True when `prefix` is a whole-segment prefix of `pointer`: "/a/b" of "/a/b/c" and of
// "/a/b", not of "/a/bc".
bool is_pointer_prefix(const std::string& prefix, const std::string& pointer);

}  // namespace hdlab::gui_core
