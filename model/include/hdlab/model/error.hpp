#pragma once
// Errors a user can cause: every one names the place in the input (a JSON pointer such as
// "/design/hd/n") and the reason. The CLI maps ConfigError to exit code 2.
#include <stdexcept>
#include <string>

namespace hdlab::model {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string pointer, std::string reason)
      : std::runtime_error(pointer.empty() ? reason : pointer + ": " + reason),
        pointer_(std::move(pointer)),
        reason_(std::move(reason)) {}
  const std::string& pointer() const { return pointer_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string pointer_;
  std::string reason_;
};

}  // namespace hdlab::model
