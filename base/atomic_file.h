#pragma once
// Whole-file writes that either fully happen or leave the old file alone: the bytes go to a temp
// file in the same directory, which is fsynced and renamed over the target, then the directory is
// fsynced. A crash at any point leaves either the old file or the new one, never a mix.

#include "base/result.h"

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace bs {

/// Replaces `path` with `contents` atomically. IoError (context: the path) on failure, in which
/// case `path` is unchanged and no temp file is left behind. A symlink is followed: its final
/// target is replaced atomically and the link stays. A path that is (or links to) a device, FIFO,
/// socket or directory is refused with an IoError saying what it is, before anything is written.
Status writeFileAtomic(const std::filesystem::path& path, std::string_view contents);

/// Streaming form: `produce` writes the contents. If it returns an error, or the stream fails,
/// `path` is unchanged and that error is returned.
Status writeFileAtomic(const std::filesystem::path& path, const std::function<Status(std::ostream&)>& produce);

} // namespace bs
