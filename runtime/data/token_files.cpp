#include "runtime/data/token_files.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace bs::runtime {

namespace {

Result<std::vector<unsigned char>> readBytes(const std::filesystem::path& path, const char* kind)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return makeError(
            ErrorCode::IoError, std::string(kind) + " file '" + path.string() + "' does not exist", path.string());
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return makeError(
            ErrorCode::IoError, "cannot open " + std::string(kind) + " file '" + path.string() + "'", path.string());
    }
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
        return makeError(
            ErrorCode::IoError, "cannot read " + std::string(kind) + " file '" + path.string() + "'", path.string());
    }
    return bytes;
}

std::string byteContext(const std::filesystem::path& path, std::size_t offset)
{
    return path.string() + ": byte offset " + std::to_string(offset);
}

/// Length of the valid UTF-8 sequence starting at bytes[i], or 0 when it is invalid (overlong
/// forms, surrogates and code points above U+10FFFF included).
std::size_t utf8SequenceLength(const std::vector<unsigned char>& b, std::size_t i)
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

std::int32_t readInt32(const std::vector<unsigned char>& b, std::size_t index)
{
    const std::size_t o = index * 4;
    const std::uint32_t u = static_cast<std::uint32_t>(b[o]) | (static_cast<std::uint32_t>(b[o + 1]) << 8)
        | (static_cast<std::uint32_t>(b[o + 2]) << 16) | (static_cast<std::uint32_t>(b[o + 3]) << 24);
    return static_cast<std::int32_t>(u);
}

std::vector<std::uint16_t> decodeUint16(const std::vector<unsigned char>& b, std::size_t offset)
{
    std::vector<std::uint16_t> tokens((b.size() - offset) / 2);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::size_t o = offset + 2 * i;
        tokens[i] = static_cast<std::uint16_t>(b[o] | (b[o + 1] << 8));
    }
    return tokens;
}

} // namespace

Result<std::vector<std::uint16_t>> readTextTokens(const std::filesystem::path& path)
{
    Result<std::vector<unsigned char>> bytes = readBytes(path, "text");
    if (!bytes) {
        return bytes.error();
    }
    const std::vector<unsigned char>& b = *bytes;
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
    }
    return std::vector<std::uint16_t>(b.begin(), b.end());
}

Result<std::vector<std::uint16_t>> readBinTokens(const std::filesystem::path& path)
{
    Result<std::vector<unsigned char>> bytes = readBytes(path, "token");
    if (!bytes) {
        return bytes.error();
    }
    const std::vector<unsigned char>& b = *bytes;
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
        return decodeUint16(b, headerBytes);
    }
    if (b.size() % 2 != 0) {
        return makeError(ErrorCode::ParseError,
            "token file " + name + " has an odd size (" + std::to_string(b.size())
                + " bytes); expected uint16 tokens, optionally after an llm.c header (magic 20240520)",
            byteContext(path, b.size() - 1));
    }
    return decodeUint16(b, 0);
}

Status checkTokenRange(const std::vector<std::uint16_t>& tokens, int vocab, const std::filesystem::path& path)
{
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (static_cast<int>(tokens[i]) >= vocab) {
            return makeError(ErrorCode::ParseError,
                "token " + std::to_string(tokens[i]) + " at index " + std::to_string(i) + " of '" + path.string()
                    + "' is >= model.vocab = " + std::to_string(vocab),
                path.string() + ": token index " + std::to_string(i));
        }
    }
    return ok();
}

} // namespace bs::runtime
