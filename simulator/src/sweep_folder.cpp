// A sweep's output folder: ownership, the lock, stale temporaries (sweep_folder.hpp).
#include "sweep_folder.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "hdlab/model/error.hpp"
#include "hdlab/model/files.hpp"
#include "sweep_journal.hpp"

namespace hdlab::simulator::sweep_detail {

namespace fs = std::filesystem;

namespace {

std::string reason(int error) { return std::generic_category().message(error); }

// A temporary of a sweep file (".results.csv.tmp.123"): the folder's own.
bool is_sweep_temporary(const std::string& name) {
  for (const char* f : SweepJournal::files) {
    const std::string prefix = "." + std::string(f) + ".tmp.";
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        name.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
      return true;
  }
  return false;
}

// Up to `most` names in `dir` that no sweep wrote, for the refusal's message.
std::vector<std::string> foreign_files(const std::string& dir, std::size_t most, std::size_t& count) {
  std::vector<std::string> names;
  count = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == SweepFolder::lock_file || is_sweep_temporary(name)) continue;
    if (++count <= most) names.push_back(name);
  }
  if (ec) throw model::ConfigError(dir, "cannot list the folder: " + reason(ec.value()));
  std::sort(names.begin(), names.end());
  return names;
}

void check_owned(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "manifest.json", ec)) return;  // an earlier run's: the journal checks whose
  std::size_t count = 0;
  const std::vector<std::string> names = foreign_files(dir, 5, count);
  if (count == 0) return;
  std::string listed;
  for (const std::string& n : names) listed += (listed.empty() ? "" : ", ") + n;
  if (count > names.size()) listed += " and " + std::to_string(count - names.size()) + " more";
  throw model::ConfigError(dir, "is not empty and holds no sweep (no manifest.json): the sweep's files would be written "
                                "among its own (" + listed + "); choose a new or empty folder, or --force to write "
                                "there anyway");
}

// The pid recorded in a lock file ("" when unreadable).
std::string holder(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : "";
}

}  // namespace

SweepFolder::SweepFolder(const std::string& dir, bool force) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw model::ConfigError(dir, "cannot create the output folder" + (ec ? ": " + ec.message() : std::string()));
  if (!force) check_owned(dir);
  const std::string lock = (fs::path(dir) / lock_file).string();
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw model::ConfigError(dir, "cannot create the lock file " + lock + ": " + reason(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = error == EWOULDBLOCK ? holder(lock_fd_) : "";
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (error != EWOULDBLOCK) throw model::ConfigError(dir, "cannot lock the folder (" + lock + "): " + reason(error));
    throw model::ConfigError(dir, "is in use by another hdlab sweep" + (pid.empty() ? "" : " (pid " + pid + ")") +
                                      ", which holds its lock (" + lock_file +
                                      "); two sweeps in one folder would write every row twice: wait for it to "
                                      "finish, or choose another folder");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw model::ConfigError(dir, "cannot write the lock file " + lock + ": " + reason(error));
  }
  for (const char* f : SweepJournal::files) model::remove_stale_temporaries(dir, f);
}

SweepFolder::~SweepFolder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock; the file stays for the next run
}

}  // namespace hdlab::simulator::sweep_detail
