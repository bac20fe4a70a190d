// Bounded reads of regular files and atomic writes (see files.hpp for what each kind of
// path gets and why). POSIX calls rather than iostreams: errno says why a call failed,
// which a stream's failbit does not.
#include "hdlab/model/files.hpp"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hdlab/model/error.hpp"

namespace hdlab::model {

namespace {

namespace fs = std::filesystem;

// errno's text, thread-safe (std::strerror is not).
std::string reason(int error) { return std::generic_category().message(error); }

// "100 bytes", "64 MiB", "209715200 bytes (200.0 MiB)".
std::string size_text(std::uint64_t bytes) {
  constexpr std::uint64_t mib = 1 << 20;
  char buf[64];
  if (bytes < mib) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (bytes % mib == 0) std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(bytes / mib));
  else
    std::snprintf(buf, sizeof buf, "%llu bytes (%.1f MiB)", static_cast<unsigned long long>(bytes),
                  static_cast<double>(bytes) / static_cast<double>(mib));
  return buf;
}

std::string folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// The file a chain of symbolic links finally names (it may not exist yet); the path
// itself when it is no link. `magic` tells whether the chain went through /proc (as
// /dev/stdout does), whose links name open files, not places to create one.
std::string follow_links(const std::string& path, bool& magic) {
  std::string p = path;
  magic = false;
  for (int hop = 0; hop < 40; ++hop) {
    magic = magic || p.rfind("/proc/", 0) == 0;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::string link(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
    if (n < 0) throw ConfigError(path, "cannot read the symbolic link " + p + ": " + reason(errno));
    link.resize(static_cast<std::size_t>(n));
    p = fs::path(link).is_absolute() ? link : (fs::path(folder_of(p)) / link).string();
  }
  throw ConfigError(path, "cannot write through it: " + reason(ELOOP));
}

// ".NAME.tmp." (a name too long to take the suffix is cut, so the temporary still fits
// the 255 bytes a file name may have).
std::string temp_prefix(const std::string& name) { return "." + name.substr(0, 200) + ".tmp."; }

void check_writable_folder(const std::string& path, const std::string& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) {
    if (errno == ENOENT) throw ConfigError(path, "the folder " + folder + " does not exist");
    throw ConfigError(path, "cannot use the folder " + folder + ": " + reason(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw ConfigError(path, folder + " is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw ConfigError(path, "cannot write in the folder " + folder + ": " + reason(errno));
}

// Where the bytes for an output path go (see files.hpp).
struct Destination {
  enum class Kind { stream, replace, create } kind = Kind::create;
  std::string target;  // stream: the path as given; otherwise the file after its links
  mode_t mode = 0;     // replace: the permission bits to keep; stream: the file type
};

Destination resolve_output(const std::string& path) {
  if (path.empty()) throw ConfigError("", "the output path is empty");
  const char* other = "hdlab writes regular files, character devices and pipes only";
  struct stat st {};
  Destination d;
  bool magic = false;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw ConfigError(path, "is a folder, not a file");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {Destination::Kind::stream, path, st.st_mode};
    if (!S_ISREG(st.st_mode)) throw ConfigError(path, std::string("is neither a regular file nor a device: ") + other);
    d.target = follow_links(path, magic);
    // An open file of this process (/dev/stdout redirected to a file): written in place.
    if (magic) return {Destination::Kind::stream, path, st.st_mode};
    d.kind = Destination::Kind::replace;
    d.mode = st.st_mode & 07777;
  } else if (errno == ENOENT) {
    d.target = follow_links(path, magic);  // a dangling link: create the file it names
  } else {
    throw ConfigError(path, "cannot write: " + reason(errno));
  }
  return d;
}

}  // namespace

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  const std::string not_regular =
      "is not a regular file (a device, pipe or socket, whose reading might never end); give a file";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw ConfigError(path, "cannot open file: " + reason(errno));
  if (S_ISDIR(st.st_mode)) throw ConfigError(path, "is a folder, not a file");
  if (!S_ISREG(st.st_mode)) throw ConfigError(path, not_regular);
  auto too_large = [&](std::uint64_t bytes) {
    return ConfigError(path, "is " + size_text(bytes) + ", more than the " + size_text(max_bytes) +
                                 " an input file may have");
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) throw too_large(static_cast<std::uint64_t>(st.st_size));
  // O_NONBLOCK: should the path have become a FIFO since the stat, open must not wait.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw ConfigError(path, "cannot open file: " + reason(errno));
  std::string text;
  try {
    if (::fstat(fd, &st) != 0) throw ConfigError(path, "cannot read: " + reason(errno));
    if (!S_ISREG(st.st_mode)) throw ConfigError(path, not_regular);
    text.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw ConfigError(path, "cannot read: " + reason(errno));
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > max_bytes) throw too_large(text.size());  // it grew while read
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

void check_output_file(const std::string& path) {
  const Destination d = resolve_output(path);
  if (d.kind != Destination::Kind::stream) check_writable_folder(path, folder_of(d.target));
}

void check_output_folder(const std::string& path) {
  if (path.empty()) throw ConfigError("", "the output folder is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw ConfigError(path, "is not a folder");
    if (::access(path.c_str(), W_OK | X_OK) != 0) throw ConfigError(path, "cannot write in it: " + reason(errno));
    return;
  }
  if (errno != ENOENT) throw ConfigError(path, "cannot use it as a folder: " + reason(errno));
  // Created with its missing parents: the deepest existing ancestor must take them.
  fs::path p = fs::path(path).lexically_normal();
  do {
    p = p.has_parent_path() && p.parent_path() != p ? p.parent_path() : fs::path(".");
  } while (::stat(p.c_str(), &st) != 0 && errno == ENOENT && p != ".");
  check_writable_folder(path, p.string());
}

AtomicFileWriter::AtomicFileWriter(const std::string& path) : path_(path) {
  const Destination d = resolve_output(path);
  target_ = d.target;
  if (d.kind == Destination::Kind::stream) {
    // A FIFO nobody reads would block open(): O_NONBLOCK makes that ENXIO instead.
    const bool fifo = S_ISFIFO(d.mode);
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0) | (S_ISREG(d.mode) ? O_TRUNC : 0));
    if (fd_ < 0 && errno == ENXIO) throw ConfigError(path, "is a pipe that nothing reads");
    if (fd_ < 0) throw ConfigError(path, "cannot open for writing: " + reason(errno));
    if (fifo) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    return;
  }
  const std::string folder = folder_of(target_);
  const std::string name = fs::path(target_).filename().string();
  remove_stale_temporaries(folder, name);
  temp_ = (fs::path(folder) / (temp_prefix(name) + std::to_string(::getpid()))).string();
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd_ < 0) {
    const int error = errno;
    temp_.clear();
    if (error == ENOENT) throw ConfigError(path, "the folder " + folder + " does not exist");
    throw ConfigError(path, "cannot create a file in the folder " + folder + ": " + reason(error));
  }
  if (d.kind == Destination::Kind::replace) ::fchmod(fd_, d.mode);  // keep the replaced file's permissions
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFileWriter::fail(const std::string& what, int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  throw ConfigError(path_, what + ": " + reason(error));
}

void AtomicFileWriter::write(std::string_view bytes) {
  if (fd_ < 0) throw std::logic_error("AtomicFileWriter::write after commit or failure: " + path_);
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write", errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw std::logic_error("AtomicFileWriter::commit twice or after a failure: " + path_);
  // fsync before the rename: after a power cut the name holds the old file or the new
  // one, never an empty one.
  if (!temp_.empty() && ::fsync(fd_) != 0) fail("cannot write", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write", errno);
  if (temp_.empty()) return;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot replace the file", errno);
  temp_.clear();
}

void write_file_atomic(const std::string& path, const std::string& text) {
  AtomicFileWriter out(path);
  out.write(text);
  out.commit();
}

int remove_stale_temporaries(const std::string& folder, const std::string& name) {
  const std::string prefix = temp_prefix(name);
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.size() <= prefix.size() || file.size() > prefix.size() + 10 || file.compare(0, prefix.size(), prefix) != 0)
      continue;
    const std::string digits = file.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid <= 0 || pid == ::getpid()) continue;
    // ESRCH: no such process. EPERM means it runs under another user: leave it.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code status_ec;
    if (!fs::is_regular_file(fs::symlink_status(it->path(), status_ec))) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace hdlab::model
