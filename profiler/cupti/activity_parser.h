#pragma once
// Parsing a completed CUPTI activity buffer: a pure function over bytes, so it is tested on
// hand-made buffers without a GPU. Records lie back to back, each padded to 8 bytes, in the
// layout of the CUPTI version this build was compiled against (activity_adapter.h).

#include "profiler/cupti/activity_record.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bs::profiler::cupti {

struct ParsedBuffer
{
    std::vector<ActivityRecord> records;
    std::size_t skippedRecords = 0; ///< known layout, kind we do not use
    std::size_t unparsedBytes = 0;  ///< from the first record of unknown size to the end: lost
};

/// Reads the first `validSize` bytes of a CUPTI activity buffer. Never reads past them.
ParsedBuffer parseActivityBuffer(std::span<const std::uint8_t> valid);

} // namespace bs::profiler::cupti
