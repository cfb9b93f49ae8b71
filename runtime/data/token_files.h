#pragma once
// Loading token files into memory: byte-level UTF-8 text and llm.c / nanoGPT uint16 .bin files.
// Everything is checked up front (magic, version, size, UTF-8, token range) so training never
// meets a bad token.

#include "base/result.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace bs::runtime {

inline constexpr std::int32_t kLlmcMagic = 20240520;
inline constexpr std::int32_t kLlmcVersion = 1; ///< uint16 tokens (GPT-2 tokenizer)
inline constexpr std::size_t kLlmcHeaderInts = 256;

/// Bytes of a UTF-8 text file as tokens 0..255. ParseError with the byte offset in context when
/// the file is not valid UTF-8 (e.g. a .bin passed as text), IoError when unreadable.
Result<std::vector<std::uint16_t>> readTextTokens(const std::filesystem::path& path);

/// Tokens of an llm.c file (header int32[256]: magic 20240520, version 1, token count; then
/// uint16 tokens) or of a headerless uint16 file. Little-endian. ParseError for a bad version,
/// a size that disagrees with the header, an odd size, an empty file.
Result<std::vector<std::uint16_t>> readBinTokens(const std::filesystem::path& path);

/// ParseError naming the first token >= vocab and its index, or ok.
Status checkTokenRange(const std::vector<std::uint16_t>& tokens, int vocab, const std::filesystem::path& path);

} // namespace bs::runtime
