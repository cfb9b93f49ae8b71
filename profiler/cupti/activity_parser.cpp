#include "profiler/cupti/activity_parser.h"

#include "profiler/cupti/activity_adapter.h"

namespace bs::profiler::cupti {

namespace {

// The offset of the record after the one at `offset`, by CUPTI's own walker, which knows every
// kind of the library we were built against; 0 when it cannot step (an invalid or cut record).
std::size_t nextByCupti(std::span<const std::uint8_t> valid, std::size_t offset)
{
    // cuptiActivityGetNextRecord only reads the buffer (it needs no device; the tests rely on it).
    auto* buffer = const_cast<std::uint8_t*>(valid.data());
    auto* record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
    if (cuptiActivityGetNextRecord(buffer, valid.size(), &record) != CUPTI_SUCCESS || record == nullptr) {
        return 0;
    }
    const auto next = static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(record) - valid.data());
    return next > offset && next <= valid.size() ? next : 0;
}

} // namespace

ParsedBuffer parseActivityBuffer(std::span<const std::uint8_t> valid)
{
    ParsedBuffer out;
    std::size_t offset = 0;
    while (offset + sizeof(CUpti_Activity) <= valid.size()) {
        const auto kind = detail::load<CUpti_Activity>(valid.data() + offset).kind;
        const std::size_t size = detail::recordSize(kind);
        if (size == 0) {
            // A kind this adapter does not read (CUPTI writes only kinds someone enabled, but a
            // kind enabled elsewhere in the process lands in our buffers too): step over it.
            const std::size_t next = kind == CUPTI_ACTIVITY_KIND_INVALID ? 0 : nextByCupti(valid, offset);
            if (next == 0) {
                out.unparsedBytes = valid.size() - offset; // nothing after it can be found
                return out;
            }
            ++out.unknownRecords;
            offset = next;
            continue;
        }
        if (offset + size > valid.size()) {
            break; // cut short
        }
        if (auto record = detail::adaptRecord(valid.data() + offset)) {
            if (incompleteGpuRecord(*record)) {
                ++out.incompleteRecords;
            } else {
                out.records.push_back(*record);
            }
        } else {
            ++out.skippedRecords;
        }
        offset += (size + ACTIVITY_RECORD_ALIGNMENT - 1) / ACTIVITY_RECORD_ALIGNMENT * ACTIVITY_RECORD_ALIGNMENT;
    }
    out.unparsedBytes = valid.size() - offset;
    return out;
}

} // namespace bs::profiler::cupti
