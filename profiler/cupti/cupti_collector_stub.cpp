// Built when the CUDA toolkit (CUPTI) was not found at configure time.
#include "profiler/cupti/cupti_collector.h"

namespace bs::profiler::cupti {

class CuptiCollector::Impl
{
};

bool cuptiBuilt() { return false; }

Result<std::unique_ptr<CuptiCollector>> CuptiCollector::start(TraceStore&, const CuptiOptions&)
{
    return makeError(ErrorCode::Unavailable,
                     "CUPTI not available in this build (configured without the CUDA toolkit or with BS_WITH_CUPTI=OFF); "
                     "GPU kernels are not recorded, timings use host timestamps");
}

CuptiCollector::CuptiCollector(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
CuptiCollector::~CuptiCollector() = default;
Status CuptiCollector::pushActionTag(const ActionTag&) { return makeError(ErrorCode::Unavailable, "CUPTI not available in this build"); }
Status CuptiCollector::popActionTag() { return makeError(ErrorCode::Unavailable, "CUPTI not available in this build"); }
Status CuptiCollector::bindStream(int, int, void*)
{
    return makeError(ErrorCode::Unavailable, "CUPTI not available in this build");
}
Status CuptiCollector::flush() { return makeError(ErrorCode::Unavailable, "CUPTI not available in this build"); }
Status CuptiCollector::stop() { return ok(); }
CollectorStats CuptiCollector::stats() const { return {}; }

} // namespace bs::profiler::cupti
