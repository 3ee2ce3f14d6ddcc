// Status and StatusOr<T>: the error values every rockcache layer returns instead of throwing.
//
// This is the bottom layer (config/) so that config, storage, pool, cache and server share one
// error type. A Status is cheap to copy when ok (no allocation). The message of a non-ok Status
// is written for a Redis client: server/ turns kWrongType into "-WRONGTYPE ..." and every other
// non-ok code into "-ERR <message>" (see server/protocol/reply.h), so storage code words its
// messages as Redis does ("value is not an integer or out of range").
//
// Thread-safety: values; a Status may be moved between threads like any value.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace rockcache {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kNotFound,
    kWrongType,        // operation against a key holding the wrong kind of value
    kInvalidArgument,  // bad user input; message is the Redis error text without "ERR "
    kIOError,          // disk or RocksDB failure
    kCorruption,       // undecodable data on disk
    kBusy,             // resource temporarily unavailable
    kShutdown,         // the component is stopping
    kOverLimit,        // a result passed the byte limit its caller set (output-buffer limit)
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string msg = "not found") {
    return {Code::kNotFound, std::move(msg)};
  }
  static Status WrongType() {
    return {Code::kWrongType, "Operation against a key holding the wrong kind of value"};
  }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status IOError(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status Busy(std::string msg) { return {Code::kBusy, std::move(msg)}; }
  static Status Shutdown(std::string msg = "shutting down") {
    return {Code::kShutdown, std::move(msg)};
  }

  static Status OverLimit(std::string msg = "result over the reply byte limit") {
    return {Code::kOverLimit, std::move(msg)};
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsOverLimit() const { return code_ == Code::kOverLimit; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsWrongType() const { return code_ == Code::kWrongType; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A T or the Status explaining why there is none. REQUIRES: constructed from a non-ok Status
// only; value() REQUIRES ok().
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  StatusOr(T value) : value_(std::move(value)) {}                                  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

inline std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      return "NotFound: " + message_;
    case Code::kWrongType:
      return "WrongType: " + message_;
    case Code::kInvalidArgument:
      return "InvalidArgument: " + message_;
    case Code::kIOError:
      return "IOError: " + message_;
    case Code::kCorruption:
      return "Corruption: " + message_;
    case Code::kBusy:
      return "Busy: " + message_;
    case Code::kShutdown:
      return "Shutdown: " + message_;
    case Code::kOverLimit:
      return "OverLimit: " + message_;
  }
  return message_;
}

}  // namespace rockcache
