#pragma once
// File I/O shared by every layer: outputs are written atomically so that nothing a user
// already has is lost to a crash or a kill half-way through a write.
#include <string>

namespace hdlab::model {

// Writes `text` to `path` through a temporary file in the same folder and a rename.
// Throws ConfigError naming the path when the folder is missing or not writable.
void write_file_atomic(const std::string& path, const std::string& text);

// Reads a whole file; ConfigError naming the path when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace hdlab::model
