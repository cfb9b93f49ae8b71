#pragma once
// Token files: byte-level UTF-8 text and llm.c / nanoGPT uint16 .bin files, memory-mapped (an
// OpenWebText-sized 17 GB file costs page cache, not a private copy). Everything is checked up
// front (regular file, size, magic, version, UTF-8, token range) so training never meets a bad
// token.

#include "base/bounded_read.h"
#include "base/result.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace bs::runtime {

inline constexpr std::int32_t kLlmcMagic = 20240520;
inline constexpr std::int32_t kLlmcVersion = 1; ///< uint16 tokens (GPT-2 tokenizer)
inline constexpr std::size_t kLlmcHeaderInts = 256;
/// Largest token file accepted (mapped, so this bounds address space, not memory).
inline constexpr std::uint64_t kMaxTokenFileBytes = std::uint64_t{1} << 40;

/// Read-only tokens, either mapped from a file (1 byte per token for text, 2 little-endian bytes
/// for .bin, after an optional header) or held in a vector. Cheap to copy (shares the mapping).
class TokenArray
{
public:
    TokenArray() = default;
    TokenArray(std::vector<std::uint16_t> tokens); // NOLINT(google-explicit-constructor): a vector is tokens
    /// `count` tokens of `width` bytes (1 or 2) from byte `offset` of `file`.
    TokenArray(std::shared_ptr<const MappedFile> file, std::size_t offset, std::size_t count, int width);

    std::size_t size() const { return m_count; }
    std::uint16_t operator[](std::size_t i) const
    {
        if (m_width == 1) {
            return m_base[i];
        }
        const unsigned char* p = m_base + 2 * i;
        return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
    }
    std::vector<std::uint16_t> toVector() const;
    /// Drops the pages of tokens [first, first + count) from the resident set once a pass over
    /// them is done (MappedFile::release); contents are unchanged. No-op for owned tokens.
    void releasePages(std::size_t first, std::size_t count) const;

private:
    std::shared_ptr<const MappedFile> m_file;
    std::shared_ptr<const std::vector<std::uint16_t>> m_owned;
    const unsigned char* m_base = nullptr;
    std::size_t m_count = 0;
    int m_width = 2;
};

/// Bytes of a UTF-8 text file as tokens 0..255, mapped. ParseError with the byte offset in context
/// when the file is not valid UTF-8 (e.g. a .bin passed as text); IoError naming the file when it
/// is missing, unreadable, not a regular file (a directory, FIFO, /dev/zero) or over the limit.
Result<TokenArray> mapTextTokens(const std::filesystem::path& path);

/// Tokens of an llm.c file (header int32[256]: magic 20240520, version 1, token count; then
/// uint16 tokens) or of a headerless uint16 file, mapped. Little-endian. ParseError for a bad
/// version, a size that disagrees with the header, an odd size, an empty file; IoError as above.
Result<TokenArray> mapBinTokens(const std::filesystem::path& path);

/// Copying forms of the two above (tests, small files).
Result<std::vector<std::uint16_t>> readTextTokens(const std::filesystem::path& path);
Result<std::vector<std::uint16_t>> readBinTokens(const std::filesystem::path& path);

/// ParseError naming the first token >= vocab and its index, or ok.
Status checkTokenRange(const TokenArray& tokens, int vocab, const std::filesystem::path& path);
Status checkTokenRange(const std::vector<std::uint16_t>& tokens, int vocab, const std::filesystem::path& path);

} // namespace bs::runtime
