#pragma once
// Trains `config` to its end in one RunSession and returns what the tests compare: the summary and
// the trace. A failure to create or run is a test failure (EXPECT, with the error), and an empty
// result. Header-only; for the runtime tests that train (exec/, dist/).

#include "runtime/train/exec/run_session.h"

#include <gtest/gtest.h>

#include <memory>

namespace bs::test {

struct TrainedRun
{
    runtime::RunSummary summary;
    std::shared_ptr<const profiler::TraceSnapshot> trace;
};

inline TrainedRun trainRun(const runtime::RunConfig& config, const runtime::SessionOptions& options = {})
{
    auto session = runtime::RunSession::create(config, options);
    EXPECT_TRUE(session.has_value()) << session.error().describe();
    if (!session) {
        return {};
    }
    const Status s = session->run();
    EXPECT_TRUE(s.has_value()) << s.error().describe();
    return {session->summary(), session->trace()};
}

} // namespace bs::test
