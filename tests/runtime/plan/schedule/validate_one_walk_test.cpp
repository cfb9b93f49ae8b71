// validate() first checks every rule in one walk (the deadlock replay, feeding each rank's rules as
// it runs their actions) and checks them one by one only when that walk fails. Its verdict must be
// the one-by-one checks' verdict on every schedule, legal or broken, or validate() would accept
// what they refuse (or spend a second walk on every legal schedule).

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/schedule/validate_rules.h"

#include <gtest/gtest.h>

#include <random>

namespace bs::runtime {
namespace {

// One random change to one rank's program: the kinds of breakage a hand edit or an importer makes.
void breakOne(Schedule& schedule, std::mt19937& rng, int kind)
{
    auto& program = schedule.programs[rng() % schedule.programs.size()];
    if (program.empty()) {
        return;
    }
    const std::size_t i = rng() % program.size();
    const std::size_t j = rng() % program.size();
    switch (kind % 6) {
    case 0:
        std::swap(program[i], program[j]);
        break;
    case 1:
        program.erase(program.begin() + static_cast<std::ptrdiff_t>(i));
        break;
    case 2:
        program.insert(program.begin() + static_cast<std::ptrdiff_t>(j), program[i]);
        break;
    case 3:
        ++program[i].microbatch;
        break;
    case 4:
        program[i].stage = (program[i].stage + 1) % schedule.stages();
        break;
    default: { // move one action elsewhere
        const Action moved = program[i];
        program.erase(program.begin() + static_cast<std::ptrdiff_t>(i));
        program.insert(program.begin() + static_cast<std::ptrdiff_t>(std::min(j, program.size())), moved);
    }
    }
}

TEST(ValidateInOneWalk, AgreesWithTheChecksOneByOneOnLegalAndBrokenSchedules)
{
    std::mt19937 rng(15);
    int accepted = 0, refused = 0;
    for (const auto& info : scheduleCatalogue()) {
        for (const int p : {2, 3, 4}) {
            auto made = makeSchedule({.name = info.name, .stages = p, .microbatches = 2 * p, .batches = 2});
            if (!made) {
                continue; // a placement this p does not allow
            }
            ASSERT_TRUE(detail::passesInOneWalk(*made)) << info.name << " p=" << p;
            ++accepted;
            for (int t = 0; t < 120; ++t) {
                Schedule broken = *made;
                breakOne(broken, rng, t);
                const bool oneWalk = detail::passesInOneWalk(broken);
                const Status stepByStep = detail::validateStepByStep(broken);
                ASSERT_EQ(oneWalk, static_cast<bool>(stepByStep)) << info.name << " p=" << p << " change " << t << ": "
                                                                  << (stepByStep ? "" : stepByStep.error().message);
                (oneWalk ? accepted : refused) += 1;
                ASSERT_EQ(static_cast<bool>(validate(broken)), oneWalk);
            }
        }
    }
    // Both verdicts are exercised: the comparison can fail either way.
    EXPECT_GT(refused, 1000);
    EXPECT_GT(accepted, scheduleCatalogue().size() * 3);
}

// Stated bounds are rules of the walk too: a bound tightened below what the schedule needs fails it.
TEST(ValidateInOneWalk, FailsOnEveryStatedBoundTheScheduleExceeds)
{
    auto made = makeSchedule({.name = "paci", .stages = 4, .microbatches = 8, .accum = 2, .batches = 2});
    ASSERT_TRUE(made) << made.error().describe();
    ASSERT_TRUE(detail::passesInOneWalk(*made));
    Schedule lag = *made;
    ASSERT_FALSE(lag.lagBound.empty());
    lag.lagBound[0] = 0;
    EXPECT_FALSE(detail::passesInOneWalk(lag));
    EXPECT_NE(validate(lag).error().message.find("the stated lag bound is 0"), std::string::npos);
    Schedule inflight = *made;
    inflight.inflightBound[0] = 1;
    EXPECT_FALSE(detail::passesInOneWalk(inflight));
    Schedule shape = *made;
    shape.lagBound.pop_back();
    EXPECT_FALSE(detail::passesInOneWalk(shape));
    EXPECT_NE(validate(shape).error().message.find("the lag bound names 3 stages"), std::string::npos);
}

} // namespace
} // namespace bs::runtime
