// Errors as values: Result<T> holds a T or an Error. Used at every protocol boundary so that
// bad input from a rank or a peer becomes a message, never an exception through libuv.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace lattice {

// What callers may decide on; the message is for people. Never match on message text.
enum class ErrorKind {
  other,
  eof,             // a byte stream ended (the peer closed its end)
  closed_by_peer,  // a link ended cleanly, as its peer chose
  closed_here,     // a link this side ended, by its own choice
  refused,         // the peer answered a request with an error (it did not do what was asked)
  no_reader,       // a write found nobody left to read it (EPIPE)
  too_large,       // a peer's input went past a bound before it was whole
};

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::other;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Result<void>;

inline Error make_error(std::string message, ErrorKind kind = ErrorKind::other) {
  return Error{std::move(message), kind};
}

}  // namespace lattice
