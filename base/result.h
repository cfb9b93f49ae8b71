#pragma once
// Result<T> and Status: how expected, recoverable failures travel (bad configs, bad CSV, unknown
// schedule names, corrupt traces). Members use std::expected's names so a move to C++23 is a rename.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace bs {

enum class ErrorCode : std::uint8_t {
    InvalidArgument, ///< a user-supplied value is out of range or malformed
    ParseError,      ///< a file or string could not be parsed
    IoError,         ///< a file could not be read or written
    Deadlock,        ///< a schedule cannot make progress
    Diverged,        ///< training produced NaN/inf
    Cancelled,       ///< the user stopped the run
    Unavailable,     ///< the feature is not in this build or on this machine
    Internal,
};

struct Error
{
    ErrorCode code = ErrorCode::Internal;
    std::string message; ///< what went wrong, in words a user can act on
    std::string context; ///< where: "file:line", "stage 3 / microbatch 7", a byte offset

    /// "message" or "message (context)".
    std::string describe() const { return context.empty() ? message : message + " (" + context + ")"; }
};

inline Error makeError(ErrorCode code, std::string message, std::string context = {})
{
    return Error{code, std::move(message), std::move(context)};
}

template<typename T>
class [[nodiscard]] Result
{
public:
    Result(T value) // NOLINT(google-explicit-constructor): implicit, like std::expected
        : m_state(std::in_place_index<0>, std::move(value))
    {
    }
    Result(Error error) // NOLINT(google-explicit-constructor)
        : m_state(std::in_place_index<1>, std::move(error))
    {
    }

    bool has_value() const { return m_state.index() == 0; }
    explicit operator bool() const { return has_value(); }

    T& value() & { return std::get<0>(m_state); }
    const T& value() const& { return std::get<0>(m_state); }
    T&& value() && { return std::get<0>(std::move(m_state)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(m_state); }

private:
    std::variant<T, Error> m_state;
};

using Status = Result<std::monostate>;
inline Status ok() { return Status(std::monostate{}); }

} // namespace bs
