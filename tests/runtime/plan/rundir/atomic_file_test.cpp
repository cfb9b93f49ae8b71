#include "base/atomic_file.h"

#include <gtest/gtest.h>

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

TEST(AtomicFile, FailedRenameLeavesTargetAndNoTemp)
{
    TempDir dir;
    const auto target = dir.path() / "occupied";
    std::filesystem::create_directories(target / "child"); // rename(file, non-empty dir) fails
    const Status s = writeFileAtomic(target, "x");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
    EXPECT_EQ(s.error().context, target.string());
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

} // namespace
} // namespace bs::runtime
