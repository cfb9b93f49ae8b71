#pragma once
// The words of an exception from LibTorch, without its stack trace: c10::Error::what() appends the
// C++ backtrace (31 frames for an allocation failure) to the message, which then reached the
// terminal and summary.json (issue 14). Torch-free header; torch_error.cpp is a torch TU.

#include <exception>
#include <string>

namespace bs::runtime {

/// c10::Error: what_without_backtrace(); any other exception: what(). Trailing newlines removed.
std::string torchErrorText(const std::exception& e);

} // namespace bs::runtime
