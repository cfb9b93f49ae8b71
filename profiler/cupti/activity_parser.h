#pragma once
// Parsing a completed CUPTI activity buffer: a pure function over bytes, so it is tested on
// hand-made buffers without a GPU. Records lie back to back, each padded to 8 bytes, in the
// layout of the CUPTI version this build was compiled against (activity_adapter.h). Kinds the
// adapter does not read are stepped over with CUPTI's own walker (cuptiActivityGetNextRecord), so
// one unexpected kind never loses the rest of the buffer; GPU records a forced flush hands over
// before CUPTI filled in their timestamps are counted and left out (incompleteGpuRecord).

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
    std::size_t unknownRecords = 0; ///< kinds the adapter does not read, stepped over by CUPTI's walker
    std::size_t incompleteRecords = 0; ///< GPU records without timestamps yet (forced flush): left out
    std::size_t unparsedBytes = 0; ///< from a record nobody can step over (invalid kind, cut) to the end: lost
};

/// Reads the first `validSize` bytes of a CUPTI activity buffer. Never reads past them.
ParsedBuffer parseActivityBuffer(std::span<const std::uint8_t> valid);

} // namespace bs::profiler::cupti
