#include "standard_streams.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace hdlab::cli {

void reserve_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

StandardOutput::StandardOutput() {
  setp(buffer_, buffer_ + sizeof buffer_);
  previous_ = std::cout.rdbuf(this);
}

StandardOutput::~StandardOutput() {
  drain();
  std::cout.rdbuf(previous_);
}

bool StandardOutput::drain() {
  const char* p = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  while (left > 0 && error_ == 0) {
    const ssize_t n = ::write(STDOUT_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error_ = errno;
    else {
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  setp(buffer_, buffer_ + sizeof buffer_);  // after a failure the rest is dropped, never retried
  return error_ == 0;
}

StandardOutput::int_type StandardOutput::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize StandardOutput::xsputn(const char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    if (pptr() == epptr() && !drain()) return done;
    const std::streamsize room = epptr() - pptr();
    const std::streamsize take = std::min(room, n - done);
    std::memcpy(pptr(), s + done, static_cast<std::size_t>(take));
    pbump(static_cast<int>(take));
    done += take;
  }
  return done;
}

int StandardOutput::sync() { return drain() ? 0 : -1; }

std::string StandardOutput::finish() {
  std::cout.flush();
  drain();
  if (error_ == 0 && !std::cout) error_ = EIO;  // a failure the stream saw but no write reported
  return error_ == 0 ? "" : std::generic_category().message(error_);
}

}  // namespace hdlab::cli
