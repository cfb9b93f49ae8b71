#include "base/atomic_file.h"

#include "base/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
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

/// Where the bytes for `named` go. A symlink (a chain of them, as the kernel follows: at most 40)
/// is followed, so the link stays and its target is replaced; a missing or regular final target is
/// replaced by rename. Anything else is refused: renaming over a device, FIFO or socket would
/// turn it into a regular file (run as root, `--csv /dev/full` did), and a directory is never an
/// output file.
Result<std::filesystem::path> outputTarget(const std::filesystem::path& named)
{
    std::filesystem::path path = named;
    for (int hops = 0;; ++hops) {
        struct stat info
        {};
        if (::lstat(path.c_str(), &info) != 0) {
            if (errno == ENOENT) {
                return path; // created by the rename (a dangling link's target too)
            }
            return ioError("cannot write", named, errno);
        }
        if (S_ISREG(info.st_mode)) {
            return path;
        }
        if (!S_ISLNK(info.st_mode)) {
            const std::string through = path == named ? std::string() : " (through the link, '" + path.string() + "')";
            return makeError(ErrorCode::IoError,
                "cannot write '" + named.string() + "'" + through + ": " + describeFileKind(info.st_mode)
                    + "; name a regular file (outputs are written to a temp file and renamed, and a device, FIFO, "
                      "socket or directory is never replaced)"); // one line: the message names the path
        }
        if (hops == 40) {
            return ioError("cannot write", named, ELOOP);
        }
        std::error_code error;
        const std::filesystem::path link = std::filesystem::read_symlink(path, error);
        if (error) {
            return ioError("cannot write", named, error.value());
        }
        path = link.is_absolute() ? link : path.parent_path() / link;
    }
}

} // namespace

Status writeFileAtomic(const std::filesystem::path& named, const std::function<Status(std::ostream&)>& produce)
{
    const Result<std::filesystem::path> target = outputTarget(named);
    if (!target) {
        return target.error();
    }
    const std::filesystem::path& path = *target;
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
