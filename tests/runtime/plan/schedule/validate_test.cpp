// The validator must reject hand-broken schedules with a message that says where and why.

#include "runtime/plan/schedule/validate.h"

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"

#include <gtest/gtest.h>

namespace bs::runtime {
namespace {

Schedule twoStage(std::vector<Action> s0, std::vector<Action> s1, int m = 2)
{
    Schedule schedule;
    schedule.params = {.name = "custom", .stages = 2, .microbatches = m, .accum = m, .batches = 1};
    schedule.programs = {std::move(s0), std::move(s1)};
    schedule.inflightBound = {m, m};
    schedule.weightVersionBound = {1, 1};
    return schedule;
}

void expectRejected(const Schedule& schedule, const std::string& fragment)
{
    auto status = validate(schedule);
    ASSERT_FALSE(status) << "expected rejection: " << fragment;
    EXPECT_NE(status.error().message.find(fragment), std::string::npos) << status.error().message;
    EXPECT_FALSE(status.error().context.empty());
}

const Action u0 = update(0, 0, 0, 1);
const Action u1 = update(1, 0, 0, 1);

TEST(Validate, AcceptsAHandWrittenLegalSchedule)
{
    auto s = twoStage({forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1), u0},
        {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), u1});
    EXPECT_TRUE(validate(s));
}

// Stage 1 takes micro-batch 1's activation before micro-batch 0's, but stage 0 sends 0 first:
// over one point-to-point stream the tensors would be swapped silently.
TEST(Validate, RejectsReceivesOutOfTheSendersOrder)
{
    auto s = twoStage({forward(0, 0), forward(0, 1), backward(0, 1), backward(0, 0), u0},
        {forward(1, 1), backward(1, 1), forward(1, 0), backward(1, 0), u1});
    expectRejected(s,
        "rank 1 receives message 0 from rank 0 out of order: it expects the activation of stage 0, "
        "micro-batch 1 but rank 0 sends the activation of stage 0, micro-batch 0");
}

// Several stages per rank: the rank's program may only hold its own stages, and its in-flight
// bound counts all of them together.
TEST(Validate, MultiStageRanksHoldOnlyTheirStagesWithinTheirBound)
{
    auto made = makeSchedule({.name = "interleaved-1f1b", .stages = 2, .microbatches = 4, .batches = 1});
    ASSERT_TRUE(made) << made.error().describe();
    EXPECT_EQ(made->rankOfStage, (std::vector<int>{0, 1, 0, 1}));
    Schedule wrongRank = *made;
    wrongRank.programs[0][0] = forward(1, 0);
    expectRejected(wrongRank, "action belongs to stage 1, which this rank does not hold");
    Schedule tight = *made;
    tight.inflightBound[0] -= 1;
    expectRejected(tight, "micro-batches in flight, bound is");
    auto v = makeSchedule({.name = "zb-v", .stages = 3, .microbatches = 6, .batches = 1});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rankOfStage, (std::vector<int>{0, 1, 2, 2, 1, 0}));
}

// checkIndices() guards what the scheduler core indexes by (it asks each action as it comes, with
// validate() beside): stages of the action's own rank, micro-batches that exist, both halves of
// an overlapped pair. Every schedule validate() accepts passes it.
TEST(Validate, IndexCheckRefusesWhatTheSchedulerCoreCouldNotIndex)
{
    const auto legal = [] {
        return twoStage({forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1), u0},
            {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), u1});
    };
    EXPECT_TRUE(checkIndices(legal()));
    const auto refused = [](const Schedule& s, const std::string& fragment) {
        auto status = checkIndices(s);
        ASSERT_FALSE(status) << fragment;
        EXPECT_NE(status.error().message.find(fragment), std::string::npos) << status.error().message;
        EXPECT_FALSE(validate(s)) << "validate() must refuse what checkIndices() refuses";
    };
    Schedule pastTheEnd = legal();
    pastTheEnd.programs[1][2] = forward(1, 2); // m = 2: micro-batches 0..1
    refused(pastTheEnd, "rank 1, step 2 (1F2) names a stage this rank does not hold or a micro-batch outside 0..1");
    Schedule negative = legal();
    negative.programs[0][0] = forward(0, -1);
    refused(negative, "rank 0, step 0");
    Schedule otherRank = legal();
    otherRank.programs[0][1] = forward(1, 1);
    refused(otherRank, "rank 0, step 1");
    Schedule pairHalf = legal();
    pairHalf.programs[0][2] = overlapForwardBackward(0, 0, 0, 7);
    refused(pairHalf, "rank 0, step 2");
    for (const auto& info : scheduleCatalogue()) {
        auto made = makeSchedule({.name = info.name, .stages = 4, .microbatches = 8, .batches = 2});
        ASSERT_TRUE(made) << info.name << ": " << made.error().describe();
        EXPECT_TRUE(checkIndices(*made)) << info.name;
    }
}

TEST(Validate, RejectsBackwardBeforeForward)
{
    expectRejected(twoStage({backward(0, 0), forward(0, 0), forward(0, 1), backward(0, 1), u0},
                       {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), u1}),
        "backward before its forward");
}

TEST(Validate, RejectsDuplicateForward)
{
    expectRejected(twoStage({forward(0, 0), forward(0, 0), backward(0, 0), u0}, {forward(1, 0), backward(1, 0), u1}),
        "second forward");
}

TEST(Validate, RejectsMissingMicrobatchWork)
{
    expectRejected(twoStage({forward(0, 0), backward(0, 0), update(0, 0, 0, 0)},
                       {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), u1}),
        "micro-batch 1 has no forward");
}

TEST(Validate, RejectsUpdateBeforeGradients)
{
    expectRejected(twoStage({forward(0, 0), forward(0, 1), u0, backward(0, 0), backward(0, 1)},
                       {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), u1}),
        "before its weight gradient exists");
}

TEST(Validate, RejectsWeightGradientWithoutInputGradient)
{
    expectRejected(twoStage({forward(0, 0), backwardWeight(0, 0), backwardInput(0, 0), update(0, 0, 0, 0)},
                       {forward(1, 0), backward(1, 0), update(1, 0, 0, 0)}, 1),
        "weight gradient needs exactly one earlier input gradient");
}

TEST(Validate, RejectsInflightAboveTheStatedBound)
{
    auto s = twoStage({forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1), u0},
        {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1), u1});
    s.inflightBound = {1, 1};
    expectRejected(s, "2 micro-batches in flight, bound is 1");
}

// A micro-batch forwarded on version 0 is still in flight when the stage reaches version 2, with
// another in flight on version 1: three versions held. Two-version (2bw) bound: rejected; a stash
// bound of 3 accepts it.
TEST(Validate, RejectsWeightVersionsAboveTheStatedBound)
{
    Schedule s;
    s.params = {.name = "custom", .stages = 1, .microbatches = 4, .accum = 1, .batches = 1};
    s.programs = {{forward(0, 0), forward(0, 1), backward(0, 1), update(0, 0, 1, 1), forward(0, 2), forward(0, 3),
        backward(0, 3), update(0, 1, 3, 3), backward(0, 0), update(0, 2, 0, 0), backward(0, 2), update(0, 3, 2, 2)}};
    s.inflightBound = {4};
    s.weights = WeightPolicy::TwoVersions;
    s.weightVersionBound = {2};
    expectRejected(s, "3 weight versions held, bound is 2");
    s.weights = WeightPolicy::Stash;
    s.weightVersionBound = {3};
    EXPECT_TRUE(validate(s));
    s.weights = WeightPolicy::InPlace; // one copy, updated in place: nothing is held
    s.weightVersionBound = {1};
    EXPECT_TRUE(validate(s));
}

TEST(Validate, RejectsDeadlockAndMarksTheStep)
{
    // Stage 0 wants the gradient of micro-batch 0 before it forwards micro-batch 1; stage 1
    // wants micro-batch 1's activation before it runs that gradient.
    auto s = twoStage({forward(0, 0), backward(0, 0), forward(0, 1), backward(0, 1), u0},
        {forward(1, 0), forward(1, 1), backward(1, 0), backward(1, 1), u1});
    auto status = validate(s);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, ErrorCode::Deadlock);
    EXPECT_NE(status.error().message.find("deadlock"), std::string::npos);
    EXPECT_NE(status.error().context.find("<-- ERROR HERE"), std::string::npos) << status.error().context;
}

TEST(Validate, FlushSchedulesMayNotForwardTheNextBatchBeforeTheUpdate)
{
    auto s = makeSchedule({.name = "1f1b", .stages = 2, .microbatches = 2, .batches = 2});
    ASSERT_TRUE(s);
    auto& program = s->programs[1];
    // Move stage 1's first update to the end: batch 1's forwards now precede it.
    auto it =
        std::find_if(program.begin(), program.end(), [](const Action& a) { return a.kind == ActionKind::Update; });
    const Action u = *it;
    program.erase(it);
    program.push_back(u);
    expectRejected(*s, "before this stage's update of the previous batch");
}

TEST(ScheduleCsv, RejectsBadCellsNamingLineAndCell)
{
    const ScheduleParams params{.name = "custom", .stages = 2, .microbatches = 1};
    struct Case
    {
        std::string csv, message, context;
    };
    for (const auto& c : {Case{"0F0,0Q0\n1F0,1B0\n", "unknown action letter 'Q'", "line 1, cell 2"},
             Case{"0F0,0B0\n0F0,1B0\n", "names stage 0 but sits on line 2", "line 2, cell 1"},
             Case{"0F0,0Bx\n1F0,1B0\n", "missing micro-batch", "line 1, cell 2"},
             Case{"", "no lines", "one line of actions per stage"}}) {
        auto s = scheduleFromCsv(c.csv, params);
        ASSERT_FALSE(s) << c.csv;
        EXPECT_NE(s.error().message.find(c.message), std::string::npos) << s.error().message;
        EXPECT_NE(s.error().context.find(c.context), std::string::npos) << s.error().context;
    }
}

TEST(ScheduleCsv, ReadsPyTorchStyleCsvWithoutUpdateCells)
{
    // PyTorch's artifacts have no U cells: one update per batch is added after its last backward.
    auto s = scheduleFromCsv("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", {.name = "custom", .stages = 2, .microbatches = 2});
    ASSERT_TRUE(s) << s.error().describe();
    EXPECT_EQ(s->programs[0].back(), update(0, 0, 0, 1));
    EXPECT_EQ(s->programs[1].back(), update(1, 0, 0, 1));
}

TEST(ScheduleCsv, UnreadableFileIsAnIoError)
{
    auto s = readScheduleCsv("/nonexistent/dir/schedule.csv", {});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
    EXPECT_NE(s.error().context.find("/nonexistent/dir/schedule.csv"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
