#include "profiler/cupti/activity_parser.h"

#include "profiler/cupti/activity_adapter.h"

namespace bs::profiler::cupti {

ParsedBuffer parseActivityBuffer(std::span<const std::uint8_t> valid)
{
    ParsedBuffer out;
    std::size_t offset = 0;
    while (offset + sizeof(CUpti_Activity) <= valid.size()) {
        const auto kind = detail::load<CUpti_Activity>(valid.data() + offset).kind;
        const std::size_t size = detail::recordSize(kind);
        if (size == 0 || offset + size > valid.size()) {
            // Unknown kind: its size is unknown, so nothing after it can be found.
            out.unparsedBytes = valid.size() - offset;
            return out;
        }
        if (auto record = detail::adaptRecord(valid.data() + offset)) {
            out.records.push_back(*record);
        } else {
            ++out.skippedRecords;
        }
        offset += (size + ACTIVITY_RECORD_ALIGNMENT - 1) / ACTIVITY_RECORD_ALIGNMENT * ACTIVITY_RECORD_ALIGNMENT;
    }
    out.unparsedBytes = valid.size() - offset;
    return out;
}

} // namespace bs::profiler::cupti
