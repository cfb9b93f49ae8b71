#include "runtime/train/data/token_files.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>

namespace bs::runtime {

namespace {

Result<std::shared_ptr<const MappedFile>> mapFile(const std::filesystem::path& path, const char* kind)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return makeError(
            ErrorCode::IoError, std::string(kind) + " file '" + path.string() + "' does not exist", path.string());
    }
    Result<MappedFile> file = MappedFile::open(path, kMaxTokenFileBytes, std::string(kind) + " file");
    if (!file) {
        return file.error();
    }
    return std::make_shared<const MappedFile>(std::move(*file));
}

/// A validation pass drops the pages behind it every this many bytes (or tokens), so checking a
/// 17 GB file never holds more than a window of it resident.
constexpr std::size_t kReleaseEvery = std::size_t{32} << 20;

/// The mapped bytes as a span-like view (the helpers below index it).
struct Bytes
{
    const unsigned char* p;
    std::size_t n;
    std::size_t size() const { return n; }
    bool empty() const { return n == 0; }
    unsigned char operator[](std::size_t i) const { return p[i]; }
};

std::string byteContext(const std::filesystem::path& path, std::size_t offset)
{
    return path.string() + ": byte offset " + std::to_string(offset);
}

/// Length of the valid UTF-8 sequence starting at bytes[i], or 0 when it is invalid (overlong
/// forms, surrogates and code points above U+10FFFF included).
std::size_t utf8SequenceLength(const Bytes& b, std::size_t i)
{
    const unsigned char c = b[i];
    if (c < 0x80) {
        return 1;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (i + len > b.size() || b[i + 1] < lo || b[i + 1] > hi) {
        return 0;
    }
    for (std::size_t k = 2; k < len; ++k) {
        if (b[i + k] < 0x80 || b[i + k] > 0xBF) {
            return 0;
        }
    }
    return len;
}

std::int32_t readInt32(const Bytes& b, std::size_t index)
{
    const std::size_t o = index * 4;
    const std::uint32_t u = static_cast<std::uint32_t>(b[o]) | (static_cast<std::uint32_t>(b[o + 1]) << 8)
        | (static_cast<std::uint32_t>(b[o + 2]) << 16) | (static_cast<std::uint32_t>(b[o + 3]) << 24);
    return static_cast<std::int32_t>(u);
}

} // namespace

Result<TokenArray> mapTextTokens(const std::filesystem::path& path)
{
    Result<std::shared_ptr<const MappedFile>> file = mapFile(path, "text");
    if (!file) {
        return file.error();
    }
    const Bytes b{(*file)->data(), (*file)->size()};
    std::size_t released = 0;
    for (std::size_t i = 0; i < b.size();) {
        const std::size_t len = utf8SequenceLength(b, i);
        if (len == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b[i]));
            return makeError(ErrorCode::ParseError,
                "'" + path.string() + "' is not UTF-8 text: invalid byte " + hex + " at offset " + std::to_string(i)
                    + " (for pre-tokenised files use bin:PATH)",
                byteContext(path, i));
        }
        i += len;
        if (i - released >= kReleaseEvery) { // validated pages need not stay resident
            (*file)->release(released, i - released);
            released = i;
        }
    }
    (*file)->release(released, b.size() - released);
    return TokenArray(*file, 0, b.size(), 1);
}

Result<TokenArray> mapBinTokens(const std::filesystem::path& path)
{
    Result<std::shared_ptr<const MappedFile>> file = mapFile(path, "token");
    if (!file) {
        return file.error();
    }
    const Bytes b{(*file)->data(), (*file)->size()};
    const std::string name = "'" + path.string() + "'";
    if (b.empty()) {
        return makeError(ErrorCode::ParseError, "token file " + name + " is empty", byteContext(path, 0));
    }
    if (b.size() >= 4 && readInt32(b, 0) == kLlmcMagic) {
        const std::size_t headerBytes = kLlmcHeaderInts * 4;
        if (b.size() < headerBytes) {
            return makeError(ErrorCode::ParseError,
                "llm.c token file " + name + " is truncated inside its 1024-byte header (" + std::to_string(b.size())
                    + " bytes)",
                byteContext(path, b.size()));
        }
        const std::int32_t version = readInt32(b, 1);
        if (version != kLlmcVersion) {
            return makeError(ErrorCode::ParseError,
                "llm.c token file " + name + " has version " + std::to_string(version)
                    + "; supported: 1 (GPT-2, uint16 tokens; version 2 is llama 3 with uint32 tokens)",
                byteContext(path, 4));
        }
        const std::int32_t count = readInt32(b, 2);
        const std::size_t have = b.size() - headerBytes;
        if (count < 0 || have != 2 * static_cast<std::size_t>(count)) {
            return makeError(ErrorCode::ParseError,
                "llm.c token file " + name + " header says " + std::to_string(count) + " tokens ("
                    + std::to_string(2 * static_cast<std::int64_t>(count)) + " bytes) but " + std::to_string(have)
                    + " bytes follow the header"
                    + (have < 2 * static_cast<std::size_t>(std::max(count, 0)) ? " (truncated)" : ""),
                byteContext(path, b.size()));
        }
        return TokenArray(*file, headerBytes, have / 2, 2);
    }
    if (b.size() % 2 != 0) {
        return makeError(ErrorCode::ParseError,
            "token file " + name + " has an odd size (" + std::to_string(b.size())
                + " bytes); expected uint16 tokens, optionally after an llm.c header (magic 20240520)",
            byteContext(path, b.size() - 1));
    }
    return TokenArray(*file, 0, b.size() / 2, 2);
}

Result<std::vector<std::uint16_t>> readTextTokens(const std::filesystem::path& path)
{
    Result<TokenArray> tokens = mapTextTokens(path);
    if (!tokens) {
        return tokens.error();
    }
    return tokens->toVector();
}

Result<std::vector<std::uint16_t>> readBinTokens(const std::filesystem::path& path)
{
    Result<TokenArray> tokens = mapBinTokens(path);
    if (!tokens) {
        return tokens.error();
    }
    return tokens->toVector();
}

TokenArray::TokenArray(std::vector<std::uint16_t> tokens)
    : m_owned(std::make_shared<const std::vector<std::uint16_t>>(std::move(tokens)))
    , m_base(reinterpret_cast<const unsigned char*>(m_owned->data()))
    , m_count(m_owned->size())
    , m_width(2)
{
    static_assert(std::endian::native == std::endian::little, "owned tokens are read as little-endian bytes");
}

TokenArray::TokenArray(std::shared_ptr<const MappedFile> file, std::size_t offset, std::size_t count, int width)
    : m_file(std::move(file))
    , m_base(m_file->data() ? m_file->data() + offset : nullptr)
    , m_count(count)
    , m_width(width)
{}

std::vector<std::uint16_t> TokenArray::toVector() const
{
    std::vector<std::uint16_t> out(m_count);
    for (std::size_t i = 0; i < m_count; ++i) {
        out[i] = (*this)[i];
    }
    return out;
}

void TokenArray::releasePages(std::size_t first, std::size_t count) const
{
    if (m_file && first < m_count) {
        const auto width = static_cast<std::size_t>(m_width);
        m_file->release(static_cast<std::size_t>(m_base - m_file->data()) + first * width,
            std::min(count, m_count - first) * width);
    }
}

Status checkTokenRange(const TokenArray& tokens, int vocab, const std::filesystem::path& path)
{
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i % kReleaseEvery == 0 && i > 0) { // keep the pass's resident set to one window
            tokens.releasePages(i - kReleaseEvery, kReleaseEvery);
        }
        if (static_cast<int>(tokens[i]) >= vocab) {
            return makeError(ErrorCode::ParseError,
                "token " + std::to_string(tokens[i]) + " at index " + std::to_string(i) + " of '" + path.string()
                    + "' is >= model.vocab = " + std::to_string(vocab),
                path.string() + ": token index " + std::to_string(i));
        }
    }
    tokens.releasePages(0, tokens.size());
    return ok();
}

Status checkTokenRange(const std::vector<std::uint16_t>& tokens, int vocab, const std::filesystem::path& path)
{
    return checkTokenRange(TokenArray(tokens), vocab, path);
}

} // namespace bs::runtime
