// libFuzzer harness: Chrome trace JSON (SAX reader, ours and foreign) and the cut-short reader.
#include "profiler/io/chrome_trace.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto trace = bs::profiler::readChromeTrace(text);
    if (trace) {
        auto snapshot = bs::profiler::makeSnapshot(trace->meta, trace->events);
        (void)bs::profiler::toChromeTraceJson(*snapshot); // what reads must also write
    }
    (void)bs::profiler::readCutShortChromeTrace(text);
    return 0;
}
