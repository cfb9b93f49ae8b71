#include "runtime/train/data/token_source.h"

#include "runtime/train/data/synthetic_source.h"
#include "runtime/train/data/token_files.h"
#include "runtime/train/data/window_source.h"

#include <cmath>

namespace bs::runtime {

Result<std::unique_ptr<TokenSource>> openTokenSource(
    std::string_view spec, int vocab, int seqLen, std::uint64_t seed, double valFraction)
{
    if (vocab < 2) {
        return makeError(ErrorCode::InvalidArgument,
            "model.vocab = " + std::to_string(vocab) + " is too small; allowed: >= 2", "model.vocab");
    }
    if (seqLen < 1) {
        return makeError(ErrorCode::InvalidArgument, "model.seq_len = " + std::to_string(seqLen) + "; allowed: >= 1",
            "model.seq_len");
    }
    if (!(valFraction >= 0.0 && valFraction < 1.0)) {
        return makeError(ErrorCode::InvalidArgument,
            "data.val_fraction = " + std::to_string(valFraction) + " is out of range; allowed: [0, 1)",
            "data.val_fraction");
    }
    if (spec == "synthetic") {
        return std::unique_ptr<TokenSource>(std::make_unique<SyntheticSource>(vocab, seqLen, seed));
    }
    const std::size_t colon = spec.find(':');
    const std::string_view kind = spec.substr(0, colon);
    const std::string path(colon == std::string_view::npos ? std::string_view() : spec.substr(colon + 1));
    if ((kind != "text" && kind != "bin") || path.empty()) {
        return makeError(ErrorCode::InvalidArgument,
            "data.spec = \"" + std::string(spec)
                + "\" is not allowed; allowed: \"synthetic\", "
                  "\"text:PATH\" or \"bin:PATH\"",
            "data.spec");
    }
    Result<TokenArray> tokens = kind == "text" ? mapTextTokens(path) : mapBinTokens(path);
    if (!tokens) {
        return tokens.error();
    }
    if (Status range = checkTokenRange(*tokens, vocab, path); !range) {
        Error e = range.error();
        if (kind == "text") {
            e.message += " (byte-level text needs model.vocab >= 256)";
        }
        return e;
    }
    return WindowSource::create(
        std::move(*tokens), vocab, seqLen, seed, valFraction, std::string(kind) + " file '" + path + "'");
}

} // namespace bs::runtime
