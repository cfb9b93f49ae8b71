// libFuzzer harness: one rank's torch.profiler (Kineto) trace, plain or gzip, through the reader
// (profiler/import/kineto_reader.h), action recovery, and the whole one-rank job import with its
// measured bubbles, as `analyze` and the GUI's import run them; a profile of several
// `ProfilerStep#N` ranges also imports and measures each step and picks the median one. The reader takes a path: each
// input is written to a memfd and read back through /proc/self/fd (a regular file, no disk).
#include "profiler/import/action_recovery.h"
#include "profiler/import/job_import.h"
#include "profiler/import/kineto_reader.h"
#include "profiler/import/measured_bubbles.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

/// The memfd every input goes through, and its path.
const std::string& inputPath(int& fd)
{
    static int file = ::memfd_create("kineto-input.json", 0);
    static const std::string path = "/proc/self/fd/" + std::to_string(file);
    if (file < 0) {
        std::abort(); // no memfd: nothing can be fuzzed
    }
    fd = file;
    return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    int fd = -1;
    const std::string& path = inputPath(fd);
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
        std::abort();
    }
    // Small limits: a mutated count must be refused, never allocated.
    bs::profiler::kineto::ReadLimits limits;
    limits.maxEvents = 100'000;
    limits.maxNames = 10'000;
    auto trace = bs::profiler::kineto::readKinetoTrace(path, limits);
    if (trace) {
        (void)bs::profiler::kineto::recoverActions(*trace, 0);
        (void)bs::profiler::kineto::recoverActions(*trace, 3);
    }
    auto job = bs::profiler::kineto::importKinetoJob({path});
    if (job) {
        (void)bs::profiler::kineto::measureBubbles(*job);
        (void)bs::profiler::kineto::stagesPerRankOf(*job);
        for (const auto& step : job->steps) {
            (void)bs::profiler::kineto::measureBubbles(step);
        }
        (void)bs::profiler::kineto::stepTimeOf(bs::profiler::kineto::medianStep(*job));
    }
    return 0;
}
