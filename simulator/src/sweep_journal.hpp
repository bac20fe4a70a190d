#pragma once
// The journal of finished points: how a sweep survives a kill (SIGKILL included) and
// resumes without recomputing or losing a finished row.
//
// Files in the output folder:
//  - manifest.json, written atomically before any point runs: the sweep's name, its
//    identity (a hash of the base document, the axes' pointers and values, and the stored
//    columns: everything a row's values depend on), the engine that computes the rows
//    (SweepOptions::engine), the point count and the columns. A folder whose manifest
//    names another identity or engine is refused unless started fresh.
//  - journal.tsv, append-only, one line per finished point:
//        <point>\t<value>\t...\t<value>\t<checksum>\n        (a row; values in
//                                                        shortest round-trip form)
//        <point>\t!<message, \t \n \\ escaped>\t<checksum>\n   (a failed point)
//    checksum: FNV-1a 64 of the bytes before the last tab, 16 hex digits. Workers buffer
//    lines and append them under a mutex with one write(2) each (at least every 100 ms),
//    so a kill loses at most the last ~100 ms of work, never a line already written:
//    the kernel keeps what write(2) accepted even when the process dies. A line cut by
//    the kill (no newline, or a bad checksum) is dropped on resume and the journal
//    rewritten without it; its point runs again.
// Values read back are bit-identical to the computed ones, so a resumed sweep's outputs
// equal an uninterrupted run's.
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "hdlab/simulator/sweep.hpp"

namespace hdlab::simulator::sweep_detail {

class SweepJournal {
 public:
  // Checks or writes the manifest of `dir` (fresh: removes the folder's sweep files
  // first) and reads back the rows an earlier run finished into `results` (whose state
  // marks excluded points already; rows of points now excluded are ignored).
  SweepJournal(const SweepSpec& spec, const std::string& dir, bool fresh, const std::string& engine,
               SweepResults& results);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  std::uint64_t resumed() const { return resumed_; }
  std::uint64_t dropped() const { return dropped_; }

  // Appends complete lines; thread-safe, one write(2) per call. ConfigError on failure.
  void append(std::string_view lines);

  static void add_row(std::string& buf, std::uint64_t point, const double* values, std::size_t n);
  static void add_failure(std::string& buf, std::uint64_t point, const std::string& message);

  // The sweep files of a folder (what `fresh` removes).
  static constexpr const char* files[] = {"manifest.json", "journal.tsv", "results.csv",
                                          "results.json",  "summary.json", "table.txt"};

 private:
  void read_back(const SweepSpec& spec, SweepResults& results);
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;
  std::uint64_t resumed_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace hdlab::simulator::sweep_detail
