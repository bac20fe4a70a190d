#pragma once
// File I/O shared by every layer. Inputs are read only from regular files of bounded
// size (a path to /dev/zero or a FIFO would otherwise read without end). Outputs are
// written atomically, so that nothing a user already has is lost to a crash or a kill
// half-way through a write; every error names the path and says why (errno's reason).
//
// What an output path may name:
//  - a regular file, or nothing yet: written to ".NAME.tmp.PID" in the same folder and
//    renamed over NAME (the file keeps its permission bits);
//  - a symbolic link: written through. The file the link names is replaced atomically
//    and the link stays a link: a user who links results/latest.json to a dated file
//    means "update that file", and replacing the link would silently cut it;
//  - a character device or a pipe (/dev/null, /dev/stdout, a FIFO): written through,
//    not replaced. They cannot be renamed over without destroying them (as root, a
//    rename turns /dev/full into a regular file), there is no earlier content to keep,
//    and a user who names one asks for the bytes to go there; a write that fails there
//    (/dev/full: "No space left on device") is an error, never a success;
//  - anything else (a folder, a block device, a socket): refused.
// A writer killed before its rename leaves its temporary behind; the next write of the
// same file removes every ".NAME.tmp.PID" whose process is gone.
#include <cstdint>
#include <string>
#include <string_view>

namespace hdlab::model {

// Input files larger than this are refused: no model, profile, scenario, sweep or
// validation file comes near it, and it keeps a mistaken path from filling memory.
inline constexpr std::uint64_t max_input_file_bytes = std::uint64_t{64} << 20;  // 64 MiB

// Reads a whole regular file of at most `max_bytes`. ConfigError naming the path when it
// cannot be opened (errno's reason), is a folder or not a regular file, or is larger.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes = max_input_file_bytes);

// Checks, before any work, that write_file_atomic(path, ...) can succeed as far as the
// file system tells: a long run should not fail at its end. ConfigError naming the path:
// a folder, a missing or unwritable folder, a name too long, a block device...
void check_output_file(const std::string& path);
// Checks that `path` is a writable folder, or can be created as one (its deepest
// existing ancestor is a writable folder).
void check_output_folder(const std::string& path);

// Writes a file as the header describes, in pieces: write() appends, commit() makes it
// visible under its name. Destroyed without commit(), the temporary is removed and the
// target is untouched. Errors are ConfigErrors naming the target path.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view bytes);
  void commit();

 private:
  void fail(const std::string& what, int error);
  std::string path_;    // as the caller named it (errors name it)
  std::string target_;  // after following symbolic links
  std::string temp_;    // empty when writing through a device or pipe
  int fd_ = -1;
};

// Writes `text` to `path` through an AtomicFileWriter.
void write_file_atomic(const std::string& path, const std::string& text);

// Removes the temporaries ".NAME.tmp.PID" of `name` in `folder` whose process no longer
// runs (left by a killed writer); returns how many it removed.
int remove_stale_temporaries(const std::string& folder, const std::string& name);

}  // namespace hdlab::model
