#include "base/bounded_read.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bs {

namespace {

Error ioError(std::string_view what, const std::filesystem::path& path, const std::string& why)
{
    return makeError(ErrorCode::IoError, "cannot read " + std::string(what) + " '" + path.string() + "': " + why,
        path.string());
}

} // namespace

const char* describeFileKind(unsigned int mode)
{
    if (S_ISDIR(mode)) {
        return "it is a directory";
    }
    if (S_ISFIFO(mode)) {
        return "it is a FIFO (named pipe)";
    }
    if (S_ISCHR(mode) || S_ISBLK(mode)) {
        return "it is a device";
    }
    if (S_ISSOCK(mode)) {
        return "it is a socket";
    }
    return "it is not a regular file";
}

namespace {

/// An open descriptor of a checked regular file, closed on scope exit.
struct CheckedFd
{
    int fd = -1;
    std::uint64_t size = 0;
    ~CheckedFd()
    {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

Status openChecked(CheckedFd& out, const std::filesystem::path& path, std::uint64_t maxBytes, std::string_view what)
{
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. fstat on
    // the descriptor (not stat on the path) so a symlink swapped after the check cannot fool it.
    out.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (out.fd < 0) {
        return ioError(what, path, std::strerror(errno));
    }
    struct stat info = {};
    if (::fstat(out.fd, &info) != 0) {
        return ioError(what, path, std::strerror(errno));
    }
    if (!S_ISREG(info.st_mode)) {
        return ioError(what, path, std::string(describeFileKind(info.st_mode)) + "; a regular file is needed");
    }
    out.size = static_cast<std::uint64_t>(info.st_size);
    if (out.size > maxBytes) {
        return ioError(what, path,
            "it is " + describeBytes(out.size) + "; the limit is " + describeBytes(maxBytes));
    }
    // Back to blocking reads: a regular file never blocks, and O_NONBLOCK has no other effect.
    const int flags = ::fcntl(out.fd, F_GETFL);
    if (flags >= 0) {
        ::fcntl(out.fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    return ok();
}

} // namespace

std::string describeBytes(std::uint64_t bytes)
{
    char buf[48];
    if (bytes >= kGiB) {
        std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
    } else if (bytes >= kMiB) {
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
    } else {
        std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
    }
    return buf;
}

Result<std::string> readBoundedFile(const std::filesystem::path& path, std::uint64_t maxBytes, std::string_view what)
{
    CheckedFd file;
    if (Status opened = openChecked(file, path, maxBytes, what); !opened) {
        return opened.error();
    }
    std::string text;
    text.resize(static_cast<std::size_t>(file.size));
    std::size_t have = 0;
    for (;;) {
        if (have == text.size()) {
            if (text.size() > maxBytes) {
                return ioError(what, path, "it grew past the limit of " + describeBytes(maxBytes));
            }
            // The file may be longer than fstat said (it grows, or a /proc-like file reports 0).
            text.resize(text.size() + 64 * 1024);
        }
        const ssize_t got = ::read(file.fd, text.data() + have, text.size() - have);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return ioError(what, path, std::strerror(errno));
        }
        if (got == 0) {
            break;
        }
        have += static_cast<std::size_t>(got);
    }
    if (have > maxBytes) {
        return ioError(what, path, "it grew past the limit of " + describeBytes(maxBytes));
    }
    text.resize(have);
    return text;
}

Result<MappedFile> MappedFile::open(const std::filesystem::path& path, std::uint64_t maxBytes, std::string_view what)
{
    CheckedFd file;
    if (Status opened = openChecked(file, path, maxBytes, what); !opened) {
        return opened.error();
    }
    if (file.size == 0) {
        return MappedFile();
    }
    void* data = ::mmap(nullptr, static_cast<std::size_t>(file.size), PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (data == MAP_FAILED) {
        return ioError(what, path, std::string("cannot map it: ") + std::strerror(errno));
    }
    return MappedFile(static_cast<const unsigned char*>(data), static_cast<std::size_t>(file.size));
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(other.m_data)
    , m_size(other.m_size)
{
    other.m_data = nullptr;
    other.m_size = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept
{
    if (this != &other) {
        if (m_data) {
            ::munmap(const_cast<unsigned char*>(m_data), m_size);
        }
        m_data = other.m_data;
        m_size = other.m_size;
        other.m_data = nullptr;
        other.m_size = 0;
    }
    return *this;
}

MappedFile::~MappedFile()
{
    if (m_data) {
        ::munmap(const_cast<unsigned char*>(m_data), m_size);
    }
}

void MappedFile::release(std::size_t offset, std::size_t length) const
{
    if (!m_data || offset >= m_size) {
        return;
    }
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t begin = (offset + page - 1) / page * page; // whole pages inside the range only
    const std::size_t end = std::min(m_size, offset + length) / page * page;
    if (end > begin) {
        ::madvise(const_cast<unsigned char*>(m_data) + begin, end - begin, MADV_DONTNEED);
    }
}

} // namespace bs
