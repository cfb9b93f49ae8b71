#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace bs {

namespace {

std::filesystem::path tempPathFor(const std::filesystem::path& path)
{
    static std::atomic<unsigned> counter{0};
    // Hidden, same directory (rename is atomic only within a file system), unique per process
    // and call so concurrent writers never share a temp file.
    return path.parent_path()
        / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
}

Error ioError(const std::string& what, const std::filesystem::path& path, int err)
{
    return makeError(ErrorCode::IoError, what + " '" + path.string() + "': " + std::strerror(err), path.string());
}

/// fsync through a fresh descriptor (std::ofstream does not expose its own).
Status syncPath(const std::filesystem::path& path, bool directory)
{
    const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0) {
        return ioError("cannot open for fsync", path, errno);
    }
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
        return ioError("fsync failed for", path, err);
    }
    return ok();
}

} // namespace

Status writeFileAtomic(const std::filesystem::path& path, const std::function<Status(std::ostream&)>& produce)
{
    const std::filesystem::path temp = tempPathFor(path);
    auto fail = [&](Status status) {
        std::error_code ignored;
        std::filesystem::remove(temp, ignored);
        return status;
    };
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) {
            return fail(ioError("cannot create temp file for", path, errno));
        }
        errno = 0; // so a failed write(2) below is what names the cause
        if (Status produced = produce(out); !produced) {
            Error e = produced.error();
            if (e.code == ErrorCode::IoError && e.context.empty()) { // a full disk must name the file
                e.message = "cannot write '" + path.string() + "': " + e.message
                    + (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string());
                e.context = path.string();
            }
            return fail(e);
        }
        out.flush();
        if (!out) {
            return fail(ioError("cannot write", path, errno));
        }
    }
    if (Status synced = syncPath(temp, false); !synced) {
        return fail(synced);
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        return fail(ioError("cannot replace", path, errno));
    }
    const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    return syncPath(dir, true); // makes the rename itself durable
}

Status writeFileAtomic(const std::filesystem::path& path, std::string_view contents)
{
    return writeFileAtomic(path, [&](std::ostream& out) {
        out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        return ok();
    });
}

} // namespace bs
