// libFuzzer harness: PyTorch-style schedule CSV, parsed and validated against a few shapes, under a
// catalogue name (its bounds) and under an unknown one (the file's own bounds, as `simulate
// --schedule-csv` without --schedule reads it); what parses is simulated, as `simulate` does, so a
// schedule that deadlocks must end in an error, never a hang.
#include "runtime/plan/schedule/csv_io.h"
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/simulator.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* name : {"1f1b", "gpipe.csv"}) {
        for (int stages : {1, 2, 4}) {
            bs::runtime::ScheduleParams params;
            params.name = name;
            params.stages = stages;
            params.microbatches = 4;
            auto schedule = bs::runtime::scheduleFromCsv(text, params);
            if (!schedule || schedule->totalMicrobatches() * schedule->stages() > 4096) {
                continue; // simulating is linear in the actions: keep each input fast
            }
            auto costs = bs::runtime::costModelFromString("1,1,1", schedule->ranks(), 0.5);
            if (costs) {
                (void)bs::runtime::simulateSchedule(std::move(*schedule), *costs, 1);
            }
        }
    }
    return 0;
}
