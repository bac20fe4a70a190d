#pragma once
// The output folder of a sweep: whose it is, and who is writing it.
//
// A sweep writes into a folder it made, or one holding an earlier run of a sweep (its
// manifest.json): a folder holding other files (a user's own results.csv; "/") is
// refused unless forced, since the sweep's files would overwrite theirs. One sweep at a
// time: two writing one folder would both resume from the same journal and append every
// row twice, so a sweep holds an exclusive lock (flock(2), released by the kernel when
// the process ends however it ends) on the folder's lock file, which records its pid
// for the message that tells another sweep who holds the folder.
#include <string>

namespace hdlab::simulator::sweep_detail {

class SweepFolder {
 public:
  // Creates `dir` if missing, checks that it is empty or a sweep's (unless `force`),
  // takes the lock and removes temporaries left by writers that were killed.
  // ConfigError naming the folder when any of that fails.
  SweepFolder(const std::string& dir, bool force);
  ~SweepFolder();
  SweepFolder(const SweepFolder&) = delete;
  SweepFolder& operator=(const SweepFolder&) = delete;

  static constexpr const char* lock_file = ".hdlab-sweep.lock";

 private:
  int lock_fd_ = -1;
};

}  // namespace hdlab::simulator::sweep_detail
