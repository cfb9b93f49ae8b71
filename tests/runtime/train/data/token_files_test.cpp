#include "runtime/train/data/token_files.h"

#include "runtime/train/data/token_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

namespace bs::runtime {
namespace {

namespace fs = std::filesystem;

class TokenFiles : public ::testing::Test
{
protected:
    void SetUp() override
    {
        m_dir = fs::temp_directory_path()
            / ("bs_data_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path write(const std::string& name, const std::string& bytes)
    {
        const fs::path path = m_dir / name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }

    static void putInt32(std::string& out, std::int32_t v)
    {
        const auto u = static_cast<std::uint32_t>(v);
        for (int k = 0; k < 4; ++k) {
            out += static_cast<char>((u >> (8 * k)) & 0xFF);
        }
    }

    static void putUint16(std::string& out, std::uint16_t v)
    {
        out += static_cast<char>(v & 0xFF);
        out += static_cast<char>(v >> 8);
    }

    /// An llm.c file: header (magic, version, count as given) then `tokens`.
    static std::string llmc(const std::vector<std::uint16_t>& tokens, std::int32_t magic = kLlmcMagic,
        std::int32_t version = 1, std::int32_t count = -1)
    {
        std::string out;
        putInt32(out, magic);
        putInt32(out, version);
        putInt32(out, count < 0 ? static_cast<std::int32_t>(tokens.size()) : count);
        out.resize(1024, '\0');
        for (const std::uint16_t t : tokens) {
            putUint16(out, t);
        }
        return out;
    }

    fs::path m_dir;
};

std::vector<std::uint16_t> ramp(std::size_t n, int mod)
{
    std::vector<std::uint16_t> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<std::uint16_t>(static_cast<int>(i) % mod);
    }
    return v;
}

TEST_F(TokenFiles, LlmcFileLoadsItsTokens)
{
    const std::vector<std::uint16_t> tokens = ramp(500, 50000);
    const fs::path path = write("a.bin", llmc({1, 50256, 7, 65535}));
    Result<std::vector<std::uint16_t>> read = readBinTokens(path);
    ASSERT_TRUE(read) << read.error().describe();
    EXPECT_EQ(*read, (std::vector<std::uint16_t>{1, 50256, 7, 65535}));
}

TEST_F(TokenFiles, HeaderlessUint16FileLoadsItsTokens)
{
    std::string bytes;
    for (const std::uint16_t t : {3, 300, 40000}) {
        putUint16(bytes, t);
    }
    Result<std::vector<std::uint16_t>> read = readBinTokens(write("plain.bin", bytes));
    ASSERT_TRUE(read);
    EXPECT_EQ(*read, (std::vector<std::uint16_t>{3, 300, 40000}));
}

TEST_F(TokenFiles, BinSourceServesWindowsOfTheFile)
{
    const fs::path path = write("ramp.bin", llmc(ramp(2000, 1000)));
    auto source = openTokenSource("bin:" + path.string(), 1000, 32, 5, 0.1);
    ASSERT_TRUE(source) << source.error().describe();
    EXPECT_EQ((*source)->tokenCount(Split::Train), 1800);
    const MicroBatch mb = (*source)->batch(Split::Train, 0, 2);
    for (std::size_t k = 0; k < mb.inputs.size(); ++k) {
        EXPECT_EQ(mb.targets[k], (mb.inputs[k] + 1) % 1000);
    }
}

TEST_F(TokenFiles, UnsupportedVersionIsNamed)
{
    Result<std::vector<std::uint16_t>> read = readBinTokens(write("v2.bin", llmc({1, 2}, kLlmcMagic, 2)));
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::ParseError);
    EXPECT_NE(read.error().message.find("has version 2; supported: 1"), std::string::npos) << read.error().message;
    EXPECT_NE(read.error().context.find("byte offset 4"), std::string::npos);
}

TEST_F(TokenFiles, TruncatedLlmcFileIsAnError)
{
    std::string bytes = llmc(ramp(100, 50), kLlmcMagic, 1, 100);
    bytes.resize(bytes.size() - 10); // lose the last 5 tokens
    Result<std::vector<std::uint16_t>> read = readBinTokens(write("cut.bin", bytes));
    ASSERT_FALSE(read);
    EXPECT_NE(
        read.error().message.find("header says 100 tokens (200 bytes) but 190 bytes follow the header (truncated)"),
        std::string::npos)
        << read.error().message;
}

TEST_F(TokenFiles, TruncatedHeaderIsAnError)
{
    Result<std::vector<std::uint16_t>> read = readBinTokens(write("head.bin", llmc({}).substr(0, 100)));
    ASSERT_FALSE(read);
    EXPECT_NE(read.error().message.find("truncated inside its 1024-byte header"), std::string::npos);
}

TEST_F(TokenFiles, TrailingBytesAfterDeclaredTokensAreAnError)
{
    Result<std::vector<std::uint16_t>> read = readBinTokens(write("long.bin", llmc(ramp(10, 5), kLlmcMagic, 1, 8)));
    ASSERT_FALSE(read);
    EXPECT_NE(read.error().message.find("header says 8 tokens (16 bytes) but 20 bytes follow"), std::string::npos);
}

TEST_F(TokenFiles, BadMagicMeansHeaderlessSoTheHeaderTripsTheVocabCheck)
{
    // Without the magic the file is read as plain uint16 tokens; the header's bytes then decode to
    // tokens outside a small vocabulary, so a wrong magic cannot go unnoticed.
    const fs::path path = write("magic.bin", llmc(ramp(600, 200), 20240521));
    auto source = openTokenSource("bin:" + path.string(), 256, 16, 1, 0.1);
    ASSERT_FALSE(source);
    EXPECT_EQ(source.error().message, "token 55433 at index 0 of '" + path.string() + "' is >= model.vocab = 256");
    EXPECT_EQ(source.error().context, path.string() + ": token index 0");
}

TEST_F(TokenFiles, TokenOutsideVocabNamesIndexAndValue)
{
    std::vector<std::uint16_t> tokens = ramp(300, 100);
    tokens[257] = 100;
    const fs::path path = write("range.bin", llmc(tokens));
    auto source = openTokenSource("bin:" + path.string(), 100, 16, 1, 0.1);
    ASSERT_FALSE(source);
    EXPECT_EQ(source.error().message, "token 100 at index 257 of '" + path.string() + "' is >= model.vocab = 100");
}

TEST_F(TokenFiles, OddSizeAndEmptyFilesAreErrors)
{
    Result<std::vector<std::uint16_t>> odd = readBinTokens(write("odd.bin", "abc"));
    ASSERT_FALSE(odd);
    EXPECT_NE(odd.error().message.find("odd size (3 bytes)"), std::string::npos);
    Result<std::vector<std::uint16_t>> empty = readBinTokens(write("empty.bin", ""));
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().message.find("is empty"), std::string::npos);
}

TEST_F(TokenFiles, MissingFileIsIoError)
{
    for (const char* kind : {"bin:", "text:"}) {
        auto source = openTokenSource(std::string(kind) + (m_dir / "nope").string(), 256, 8, 1, 0.1);
        ASSERT_FALSE(source);
        EXPECT_EQ(source.error().code, ErrorCode::IoError);
        EXPECT_NE(source.error().message.find("does not exist"), std::string::npos);
    }
}

TEST_F(TokenFiles, TextFileIsBytesIncludingMultiByteUtf8)
{
    const std::string text = "héllo → wörld\n";
    Result<std::vector<std::uint16_t>> read = readTextTokens(write("a.txt", text));
    ASSERT_TRUE(read);
    ASSERT_EQ(read->size(), text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        EXPECT_EQ((*read)[i], static_cast<unsigned char>(text[i]));
    }
}

TEST_F(TokenFiles, InvalidUtf8GivesTheByteOffset)
{
    for (const auto& [bytes, offset] : std::vector<std::pair<std::string, std::size_t>>{
             {std::string("abc\xFF", 4), 3}, // never valid
             {std::string("ab\xC3", 3), 2}, // truncated sequence
             {std::string("a\xC0\xAF", 3), 1}, // overlong '/'
             {std::string("xy\xED\xA0\x80", 5), 2}, // UTF-16 surrogate
         }) {
        const fs::path path = write("bad.txt", bytes);
        Result<std::vector<std::uint16_t>> read = readTextTokens(path);
        ASSERT_FALSE(read);
        EXPECT_EQ(read.error().context, path.string() + ": byte offset " + std::to_string(offset));
        EXPECT_NE(read.error().message.find("is not UTF-8 text"), std::string::npos);
    }
}

TEST_F(TokenFiles, NonAsciiTextNeedsByteVocab)
{
    const fs::path path = write("u.txt", std::string(200, 'a') + "é");
    auto source = openTokenSource("text:" + path.string(), 128, 8, 1, 0.1);
    ASSERT_FALSE(source);
    EXPECT_NE(source.error().message.find("(byte-level text needs model.vocab >= 256)"), std::string::npos);
}

TEST_F(TokenFiles, TextSourceIsDeterministic)
{
    std::string text;
    for (int i = 0; i < 200; ++i) {
        text += "line " + std::to_string(i) + " of a small corpus\n";
    }
    const fs::path path = write("corpus.txt", text);
    auto a = openTokenSource("text:" + path.string(), 256, 32, 9, 0.1);
    auto b = openTokenSource("text:" + path.string(), 256, 32, 9, 0.1);
    ASSERT_TRUE(a && b);
    EXPECT_EQ((*a)->batch(Split::Validation, 4, 3), (*b)->batch(Split::Validation, 4, 3));
    EXPECT_EQ((*a)->batch(Split::Train, 4, 3), (*b)->batch(Split::Train, 4, 3));
    EXPECT_FALSE((*a)->entropyFloorNats().has_value());
}

// Issue 14: `train --data bin:/tmp` and `text:/tmp` aborted on an uncaught std::ios_base::failure,
// `text:/dev/zero` read until memory ran out.
TEST_F(TokenFiles, DirectoriesDevicesAndFifosAreIoErrorsNamingTheFile)
{
    for (const char* spec : {"bin:/tmp", "text:/tmp", "text:/dev/zero", "bin:/dev/zero"}) {
        auto source = openTokenSource(spec, 256, 8, 1, 0.1);
        ASSERT_FALSE(source) << spec;
        EXPECT_EQ(source.error().code, ErrorCode::IoError) << spec;
        const std::string path = std::string(spec).substr(std::string(spec).find(':') + 1);
        EXPECT_NE(source.error().message.find("'" + path + "'"), std::string::npos) << source.error().message;
        EXPECT_NE(source.error().message.find("a regular file is needed"), std::string::npos) << source.error().message;
    }
    const fs::path fifo = m_dir / "pipe.bin";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto source = openTokenSource("bin:" + fifo.string(), 256, 8, 1, 0.1); // must not wait for a writer
    ASSERT_FALSE(source);
    EXPECT_NE(source.error().message.find("FIFO"), std::string::npos) << source.error().message;
}

TEST_F(TokenFiles, MappedTokensEqualTheCopiedOnes)
{
    std::vector<std::uint16_t> tokens = ramp(5000, 60000);
    const fs::path bin = write("m.bin", llmc(tokens));
    Result<TokenArray> mapped = mapBinTokens(bin);
    ASSERT_TRUE(mapped);
    ASSERT_EQ(mapped->size(), tokens.size());
    EXPECT_EQ(mapped->toVector(), tokens);
    mapped->releasePages(0, mapped->size()); // dropping the resident pages keeps the contents
    EXPECT_EQ((*mapped)[4999], tokens[4999]);
    const fs::path txt = write("m.txt", "pipeline\n");
    Result<TokenArray> text = mapTextTokens(txt);
    ASSERT_TRUE(text);
    ASSERT_EQ(text->size(), 9u);
    EXPECT_EQ((*text)[0], 'p');
    EXPECT_EQ((*text)[8], '\n');
}

} // namespace
} // namespace bs::runtime
