#pragma once
// Standard output that cannot fail silently. `hdlab cost ... > /dev/full` or with stdout
// closed used to exit 0 with the report lost: std::cout's errors surface only as a
// failbit, and errno's reason is gone by the time anyone looks. StandardOutput sends
// std::cout through its own buffer to file descriptor 1 and remembers the first write
// error; main() asks at the end and exits 1 naming it.
#include <ostream>
#include <streambuf>
#include <string>

namespace hdlab::cli {

// Opens /dev/null (read-only) on whichever of descriptors 0, 1 and 2 is closed, so that
// no file hdlab opens later takes its number (stdout's text would land in it); a write
// to such a stdout then fails (EBADF) and is reported like any other.
void reserve_standard_descriptors();

class StandardOutput : public std::streambuf {
 public:
  StandardOutput();  // takes over std::cout
  ~StandardOutput() override;
  StandardOutput(const StandardOutput&) = delete;
  StandardOutput& operator=(const StandardOutput&) = delete;

  // Flushes; "" when everything reached stdout, else errno's reason for the first failure.
  std::string finish();

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool drain();
  char buffer_[1 << 16];
  int error_ = 0;  // the first errno of a failed write
  std::streambuf* previous_ = nullptr;
};

}  // namespace hdlab::cli
