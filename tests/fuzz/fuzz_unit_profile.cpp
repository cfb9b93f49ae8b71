// libFuzzer harness: a unit profile (`partition --measured --json`, read by simulate/compare/tune
// --unit-costs): parsed as readUnitProfile parses it, then checked field by field. Nothing may
// throw or overflow; a profile that is accepted holds the ranges its reader promises.
#include "runtime/plan/partition/unit_profile_io.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    } catch (const nlohmann::json::exception&) { // as readUnitProfile: a number past double's range
        return 0;
    }
    if (j.is_discarded()) {
        return 0;
    }
    auto profile = bs::runtime::unitProfileFromJson(j);
    if (!profile) {
        return 0;
    }
    if (profile->microBatchSize < 1 || profile->units.empty()) {
        std::abort();
    }
    for (const auto& u : profile->units) {
        if (!std::isfinite(u.forwardMs) || !std::isfinite(u.backwardMs) || u.forwardMs < 0 || u.backwardMs < 0
            || u.staticBytes < 0 || u.activationBytes < 0 || u.paramBytes < 0) {
            std::abort();
        }
    }
    return 0;
}
