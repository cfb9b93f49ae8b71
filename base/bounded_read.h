#pragma once
// Reading user-supplied files without trusting them: a path may name a directory, a FIFO that
// never delivers, /dev/zero, or a file far larger than any real input. Every reader of the
// product opens files through here, so each of those is one IoError that names the file, never a
// hang, an exception or memory exhaustion.

#include "base/result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace bs {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

/// Reads the whole of `path` into memory. `what` names the kind of file in messages ("config
/// file", "schedule CSV"). IoError, naming `what` and the path, when the file cannot be opened,
/// is not a regular file (directory, FIFO, device: opened without blocking, so a FIFO with no
/// writer cannot hang the caller), or is larger than `maxBytes` (checked before reading and again
/// while reading, for files that grow).
Result<std::string> readBoundedFile(const std::filesystem::path& path, std::uint64_t maxBytes, std::string_view what);

/// A regular file mapped read-only (large token files and traces: pages come from the page cache
/// as they are touched, instead of a private copy of the whole file). Same checks and errors as
/// readBoundedFile. Move-only; unmaps on destruction.
class MappedFile
{
public:
    static Result<MappedFile> open(const std::filesystem::path& path, std::uint64_t maxBytes, std::string_view what);

    MappedFile() = default;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    const unsigned char* data() const { return m_data; }
    std::size_t size() const { return m_size; }
    std::string_view text() const { return {reinterpret_cast<const char*>(m_data), m_size}; }

    /// Tells the kernel the pages of [offset, offset + length) are not needed now (a validation
    /// pass over the whole file is done): they leave this process's resident set and are read
    /// again from the page cache when touched. Contents are unchanged.
    void release(std::size_t offset, std::size_t length) const;

private:
    MappedFile(const unsigned char* data, std::size_t size) : m_data(data), m_size(size) {}

    const unsigned char* m_data = nullptr;
    std::size_t m_size = 0;
};

/// "it is a directory", "it is a FIFO (named pipe)", "it is a device", "it is a socket" for a
/// `st_mode` that is not a regular file's; the reason a reader or writer refuses it.
const char* describeFileKind(unsigned int mode);

/// "12.0 MiB", for the size limits in messages.
std::string describeBytes(std::uint64_t bytes);

} // namespace bs
