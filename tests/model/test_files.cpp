// model/files.hpp: bounded reads of regular files only, atomic writes that never turn
// a link or a device into a regular file, errors that say why, and temporaries of
// killed writers cleaned up.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hdlab/model/error.hpp"
#include "hdlab/model/files.hpp"

using hdlab::model::ConfigError;
namespace fs = std::filesystem;
namespace model = hdlab::model;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("hdlab_test_files_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string at(const std::string& name) const { return (path / name).string(); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The message of the ConfigError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A pid that belonged to a process which has since exited (and was reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

}  // namespace

TEST_CASE("read_text_file refuses what is not a bounded regular file and says why", "[files][bad-input]") {
  TempDir dir;
  const std::string fifo = dir.at("pipe.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string big = dir.at("big.json");
  { std::ofstream(big) << "{}"; }
  fs::resize_file(big, model::max_input_file_bytes + 1);  // sparse: 64 MiB + 1 byte
  struct Case {
    std::string path;
    std::string message;
  };
  const std::vector<Case> cases = {
      {dir.at("missing.json"), dir.at("missing.json") + ": cannot open file: No such file or directory"},
      {dir.at("missing/x.json"), dir.at("missing/x.json") + ": cannot open file: No such file or directory"},
      {dir.path.string(), dir.path.string() + ": is a folder, not a file"},
      {"/dev/zero", "/dev/zero: is not a regular file (a device, pipe or socket, whose reading might never end); give a file"},
      {fifo, fifo + ": is not a regular file (a device, pipe or socket, whose reading might never end); give a file"},
      {big, big + ": is 67108865 bytes (64.0 MiB), more than the 64 MiB an input file may have"},
      {std::string(300, 'x') + ".json", std::string(300, 'x') + ".json: cannot open file: File name too long"},
  };
  for (const Case& c : cases) {
    // A read that never ends would hang the test, not fail it: bounded by a timeout.
    auto read = std::async(std::launch::async, [&] { return error_of([&] { model::read_text_file(c.path); }); });
    REQUIRE(read.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK(read.get() == c.message);
  }
  // The bound is the caller's: a smaller one refuses a small file.
  const std::string small = dir.at("small.json");
  { std::ofstream(small) << std::string(100, ' '); }
  CHECK(model::read_text_file(small).size() == 100);
  CHECK(error_of([&] { model::read_text_file(small, 99); }) == small + ": is 100 bytes, more than the 99 bytes an input file may have");
}

TEST_CASE("write_file_atomic writes through a symbolic link and keeps it a link", "[files][bad-input]") {
  TempDir dir;
  fs::create_directories(dir.at("dated"));
  { std::ofstream(dir.at("dated/2025.json")) << "old"; }
  fs::create_symlink("dated/2025.json", dir.at("latest.json"));
  ::chmod(dir.at("dated/2025.json").c_str(), 0600);
  model::write_file_atomic(dir.at("latest.json"), "new");
  CHECK(fs::is_symlink(dir.at("latest.json")));
  CHECK(fs::read_symlink(dir.at("latest.json")) == "dated/2025.json");
  CHECK(slurp(dir.at("dated/2025.json")) == "new");
  CHECK((fs::status(dir.at("dated/2025.json")).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  // A dangling link: the file it names is created, the link stays.
  fs::create_symlink("dated/2026.json", dir.at("next.json"));
  model::write_file_atomic(dir.at("next.json"), "first");
  CHECK(fs::is_symlink(dir.at("next.json")));
  CHECK(slurp(dir.at("dated/2026.json")) == "first");
  CHECK(fs::directory_iterator(dir.at("dated")) != fs::directory_iterator());
  for (const auto& e : fs::directory_iterator(dir.at("dated")))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);  // no temporary left
}

TEST_CASE("write_file_atomic writes through devices and pipes and never replaces them", "[files][bad-input]") {
  TempDir dir;
  // /dev/full, through a link in the scratch folder (so that a writer that renamed over
  // the path would replace the link, never the device): a write that fails is an error
  // with errno's reason, and both the link and the device stay what they were.
  const std::string full = dir.at("full");
  fs::create_symlink("/dev/full", full);
  CHECK(error_of([&] { model::write_file_atomic(full, "x"); }) == full + ": cannot write: No space left on device");
  CHECK(fs::is_symlink(full));
  struct stat st {};
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // /dev/null takes the bytes.
  CHECK(error_of([] { model::write_file_atomic("/dev/null", "x"); }).empty());
  // A FIFO: the reader gets the bytes and the FIFO is still a FIFO.
  const std::string fifo = dir.at("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  CHECK(error_of([&] { model::write_file_atomic(fifo, "x"); }) == fifo + ": is a pipe that nothing reads");
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  // The reader opens the FIFO at some point: retry until a writer sees it.
  std::string error = "not tried";
  for (int i = 0; i < 2000 && !error.empty(); ++i) {
    error = error_of([&] { model::write_file_atomic(fifo, "through the pipe"); });
    if (!error.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(error.empty());
  REQUIRE(reader.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(reader.get() == "through the pipe");
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("write_file_atomic and check_output_file refuse what they cannot write and say why", "[files][bad-input]") {
  TempDir dir;
  fs::create_directories(dir.at("folder"));
  { std::ofstream(dir.at("file")) << "x"; }
  struct Case {
    std::string path;
    std::string message;
  };
  const std::vector<Case> cases = {
      {dir.at("folder"), dir.at("folder") + ": is a folder, not a file"},
      {dir.at("missing/out.json"), dir.at("missing/out.json") + ": the folder " + dir.at("missing") + " does not exist"},
      {dir.at("file/out.json"), dir.at("file/out.json") + ": cannot write: Not a directory"},
      {dir.at(std::string(300, 'x')), dir.at(std::string(300, 'x')) + ": cannot write: File name too long"},
      {"", "the output path is empty"},
  };
  for (const Case& c : cases) {
    CHECK(error_of([&] { model::check_output_file(c.path); }) == c.message);
    CHECK(error_of([&] { model::write_file_atomic(c.path, "x"); }) == c.message);
  }
  CHECK(fs::is_directory(dir.at("folder")));
  CHECK(error_of([&] { model::check_output_file(dir.at("new.json")); }).empty());
  CHECK(error_of([&] { model::check_output_file("/dev/null"); }).empty());
}

TEST_CASE("check_output_folder accepts a folder or one it can create and says why not", "[files][bad-input]") {
  TempDir dir;
  { std::ofstream(dir.at("file")) << "x"; }
  CHECK(error_of([&] { model::check_output_folder(dir.path.string()); }).empty());
  CHECK(error_of([&] { model::check_output_folder(dir.at("a/b/c")); }).empty());
  CHECK(!fs::exists(dir.at("a")));  // checking creates nothing
  CHECK(error_of([&] { model::check_output_folder(dir.at("file")); }) == dir.at("file") + ": is not a folder");
  CHECK(error_of([&] { model::check_output_folder(dir.at("file/sub")); }) ==
        dir.at("file/sub") + ": cannot use it as a folder: Not a directory");
  CHECK(error_of([] { model::check_output_folder(""); }) == "the output folder is empty");
}

TEST_CASE("a write removes the temporaries that killed writers left and only those", "[files][bad-input]") {
  TempDir dir;
  // A writer really killed between creating its temporary and renaming it: the child
  // writes a temporary under its own pid and is killed with SIGKILL.
  const pid_t writer = ::fork();
  if (writer == 0) {
    const std::string temp = dir.at(".out.json.tmp." + std::to_string(::getpid()));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd < 0 || ::write(fd, "half", 4) != 4) ::_exit(1);
    ::pause();
  }
  REQUIRE(writer > 0);
  const std::string killed = dir.at(".out.json.tmp." + std::to_string(writer));
  for (int i = 0; i < 2000 && !fs::exists(killed); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(fs::exists(killed));
  ::kill(writer, SIGKILL);
  int status = 0;
  ::waitpid(writer, &status, 0);
  REQUIRE(WIFSIGNALED(status));

  const std::string exited = dir.at(".out.json.tmp." + std::to_string(dead_pid()));
  const std::string running = dir.at(".out.json.tmp." + std::to_string(::getppid()));  // a live process's
  const std::string other = dir.at(".other.json.tmp." + std::to_string(dead_pid()));   // another file's
  const std::string users = dir.at(".out.json.tmp.notes");                             // not a pid
  for (const std::string& f : {exited, running, other, users}) std::ofstream(f) << "x";
  model::write_file_atomic(dir.at("out.json"), "done");
  CHECK(slurp(dir.at("out.json")) == "done");
  CHECK_FALSE(fs::exists(killed));
  CHECK_FALSE(fs::exists(exited));
  CHECK(fs::exists(running));
  CHECK(fs::exists(other));
  CHECK(fs::exists(users));
  CHECK(model::remove_stale_temporaries(dir.path.string(), "other.json") == 1);
  CHECK_FALSE(fs::exists(other));
}
