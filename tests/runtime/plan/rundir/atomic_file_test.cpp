#include "base/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "temp_dir.h"

namespace bs::runtime {
namespace {

using testing::fileCount;
using testing::slurp;
using testing::TempDir;

TEST(AtomicFile, WritesAndReplaces)
{
    TempDir dir;
    const auto path = dir.path() / "a.txt";
    ASSERT_TRUE(writeFileAtomic(path, "first"));
    EXPECT_EQ(slurp(path), "first");
    ASSERT_TRUE(writeFileAtomic(path, "second, longer"));
    EXPECT_EQ(slurp(path), "second, longer");
    EXPECT_EQ(fileCount(dir.path()), 1u); // no temp file left
}

TEST(AtomicFile, FailingProducerLeavesTheOldFile)
{
    TempDir dir;
    const auto path = dir.path() / "summary.json";
    ASSERT_TRUE(writeFileAtomic(path, "old contents"));
    const Status s = writeFileAtomic(path, [](std::ostream& out) {
        out << "half of the new contents";
        return Status(makeError(ErrorCode::Internal, "producer gave up"));
    });
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message, "producer gave up");
    EXPECT_EQ(slurp(path), "old contents");
    EXPECT_EQ(fileCount(dir.path()), 1u);
}

TEST(AtomicFile, FailingStreamLeavesTheOldFile)
{
    TempDir dir;
    const auto path = dir.path() / "trace.json";
    ASSERT_TRUE(writeFileAtomic(path, "old"));
    const Status s = writeFileAtomic(path, [](std::ostream& out) {
        out << "partial";
        out.setstate(std::ios::badbit); // as a full disk would
        return ok();
    });
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
    EXPECT_EQ(slurp(path), "old");
    EXPECT_EQ(fileCount(dir.path()), 1u);
}

TEST(AtomicFile, DirectoryTargetIsRefusedLeavingNoTemp)
{
    TempDir dir;
    const auto target = dir.path() / "occupied";
    std::filesystem::create_directories(target / "child");
    const Status s = writeFileAtomic(target, "x");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
    EXPECT_NE(s.error().message.find("'" + target.string() + "': it is a directory"), std::string::npos);
    EXPECT_TRUE(std::filesystem::is_directory(target / "child"));
    EXPECT_EQ(fileCount(dir.path()), 1u);
}

TEST(AtomicFile, MissingDirectoryIsIoError)
{
    TempDir dir;
    const Status s = writeFileAtomic(dir.path() / "no" / "such" / "file", "x");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
}

std::filesystem::file_type typeOf(const std::filesystem::path& path)
{
    return std::filesystem::symlink_status(path).type();
}

/// A special file is refused with one line saying what it is, and stays what it was: before,
/// the temp file was renamed over it (run as root, `--csv /dev/full` made /dev/full a regular file).
void expectRefusedAndKept(const std::filesystem::path& path, std::filesystem::file_type type, const std::string& kind)
{
    const Status s = writeFileAtomic(path, "x");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
    EXPECT_NE(s.error().message.find("'" + path.string() + "'"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find(kind), std::string::npos) << s.error().message;
    EXPECT_EQ(s.error().message.find('\n'), std::string::npos);
    EXPECT_EQ(typeOf(path), type);
}

TEST(AtomicFile, NullDeviceIsRefusedAndStaysADevice)
{
    TempDir dir;
    const auto null = dir.path() / "null";
    if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
        GTEST_SKIP() << "mknod of a null device needs root (CAP_MKNOD): " << std::strerror(errno);
    }
    expectRefusedAndKept(null, std::filesystem::file_type::character, "it is a device");
    EXPECT_EQ(fileCount(dir.path()), 1u);
}

TEST(AtomicFile, FifoIsRefusedAndStaysAFifo)
{
    TempDir dir;
    const auto fifo = dir.path() / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expectRefusedAndKept(fifo, std::filesystem::file_type::fifo, "it is a FIFO");
    EXPECT_EQ(fileCount(dir.path()), 1u);
}

TEST(AtomicFile, SocketIsRefusedAndStaysASocket)
{
    TempDir dir;
    const auto path = dir.path() / "sock";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    ASSERT_LT(path.string().size(), sizeof(address.sun_path));
    std::strcpy(address.sun_path, path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    expectRefusedAndKept(path, std::filesystem::file_type::socket, "it is a socket");
    ::close(fd);
}

TEST(AtomicFile, SymlinkIsFollowedAndItsTargetReplaced)
{
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "real");
    const auto target = dir.path() / "real" / "trace.json";
    ASSERT_TRUE(writeFileAtomic(target, "old"));
    const auto link = dir.path() / "link.json";
    std::filesystem::create_symlink("real/trace.json", link); // relative, as ln -s makes them
    ASSERT_TRUE(writeFileAtomic(link, "new"));
    EXPECT_EQ(typeOf(link), std::filesystem::file_type::symlink);
    EXPECT_EQ(slurp(target), "new");
    EXPECT_EQ(fileCount(dir.path() / "real"), 1u); // no temp left beside the target

    const auto dangling = dir.path() / "dangling.json"; // a link to a file not there yet creates it
    std::filesystem::create_symlink(dir.path() / "real" / "new.json", dangling);
    ASSERT_TRUE(writeFileAtomic(dangling, "made"));
    EXPECT_EQ(typeOf(dangling), std::filesystem::file_type::symlink);
    EXPECT_EQ(slurp(dir.path() / "real" / "new.json"), "made");
}

TEST(AtomicFile, SymlinkToAFifoIsRefusedNamingBoth)
{
    TempDir dir;
    const auto fifo = dir.path() / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto link = dir.path() / "out.csv";
    std::filesystem::create_symlink(fifo, link);
    expectRefusedAndKept(link, std::filesystem::file_type::symlink, "it is a FIFO");
    EXPECT_EQ(typeOf(fifo), std::filesystem::file_type::fifo);

    const auto loop = dir.path() / "loop"; // a link to itself: ELOOP, not an endless walk
    std::filesystem::create_symlink(loop, loop);
    const Status s = writeFileAtomic(loop, "x");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
}

} // namespace
} // namespace bs::runtime
