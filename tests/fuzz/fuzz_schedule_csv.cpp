// libFuzzer harness: PyTorch-style schedule CSV, parsed and validated against a few shapes.
#include "runtime/plan/schedule/csv_io.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (int stages : {1, 2, 4}) {
        bs::runtime::ScheduleParams params;
        params.stages = stages;
        params.microbatches = 4;
        (void)bs::runtime::scheduleFromCsv(text, params);
    }
    return 0;
}
