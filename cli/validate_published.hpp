#pragma once
// `hdlab validate --published`: published measurements of real GPU systems against the
// simulator's predictions (calibration/published.hpp), in cmd_validate_published.cpp.
#include <string>

#include "verbs.hpp"

namespace hdlab::cli {

struct PublishedCli {
  std::string path;    // a published-source file, or a folder of them (every *.json)
  std::string output;  // report folder
  std::string hw_dir;  // profiles looked up here by the files' names (default: the bundled ones)
  double max_median_error = -1;  // exit 3 above it (median |error| over every case)
  double max_signed_error = -1;  // exit 3 when a source's |signed median| of a metric exceeds it
};

int validate_published(const PublishedCli& o);

}  // namespace hdlab::cli
