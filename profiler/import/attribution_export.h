#pragma once
// The measured attribution of an imported job as a Perfetto / Chrome trace: one process per rank;
// thread "compute" with the recovered actions, "bubbles" with every idle span named by its cause,
// "recv" with each receive split into "wait for sender" and "transfer" slices, and flow arrows from
// each send to its receive.

#include "base/result.h"
#include "profiler/import/measured_bubbles.h"

#include <iosfwd>

namespace bs::profiler::kineto {

Status writeAttributionTrace(std::ostream& out, const ImportedJob& job, const JobBubbles& bubbles);

} // namespace bs::profiler::kineto
