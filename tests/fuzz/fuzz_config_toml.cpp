// libFuzzer harness: run config TOML (toml++ parse, strict field mapping, validation).
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    bs::Result<bs::runtime::RunConfig> config = bs::runtime::parseRunConfig(text, "fuzz.toml");
    if (config) {
        (void)bs::runtime::validate(*config);
        (void)bs::runtime::toToml(*config); // what parses must also write
    }
    return 0;
}
