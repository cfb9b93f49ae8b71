// validate() checks a flush schedule batch by batch (validate_batches.cpp): each batch that is not
// the one before moved on, as a schedule of one batch. Its verdict must be the whole schedule's
// checks' verdict on every schedule, legal or broken: broken in one batch (which then differs from
// its neighbours and is checked on its own) or in every batch alike (still one block repeated, so
// only the first is checked), and it must step aside where the argument does not hold.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/schedule/validate_rules.h"

#include <gtest/gtest.h>

#include <random>

namespace bs::runtime {
namespace {

constexpr int kBatches = 5;

// One random change at position i of batch n's block on rank r, or of every batch's block.
void breakBlocks(Schedule& schedule, std::mt19937& rng, int kind, bool everyBatch)
{
    const std::size_t r = rng() % schedule.programs.size();
    auto& program = schedule.programs[r];
    const std::size_t length = program.size() / kBatches;
    if (length < 2) {
        return;
    }
    const std::size_t i = rng() % length;
    const std::size_t j = rng() % length;
    const int m = schedule.params.microbatches;
    const int only = static_cast<int>(rng() % kBatches);
    for (int n = 0; n < kBatches; ++n) {
        if (!everyBatch && n != only) {
            continue;
        }
        Action* block = program.data() + length * static_cast<std::size_t>(n);
        switch (kind % 4) {
        case 0:
            std::swap(block[i], block[j]);
            break;
        case 1: // a micro-batch of this batch for another of it (the kinds stay as they were)
            if (block[i].kind != ActionKind::Update) {
                block[i].microbatch = n * m + (block[i].microbatch + 1) % m;
            }
            break;
        case 2: // an action of another stage
            block[i].stage = (block[i].stage + 1) % schedule.stages();
            break;
        default: // a bound too tight
            schedule.inflightBound[r] = std::max(1, schedule.inflightBound[r] - 1);
        }
    }
}

TEST(ValidateBatchByBatch, AgreesWithTheWholeScheduleOnLegalAndBrokenSchedules)
{
    std::mt19937 rng(2026);
    int checkedByBatch = 0, refused = 0, accepted = 0;
    for (const auto& info : scheduleCatalogue()) {
        for (const int p : {2, 3, 4}) {
            auto made = makeSchedule({.name = info.name, .stages = p, .microbatches = 2 * p, .batches = kBatches});
            if (!made) {
                continue; // a placement this p does not allow
            }
            const std::optional<bool> legal = detail::passesBatchByBatch(*made);
            if (made->weights != WeightPolicy::Flush) {
                EXPECT_FALSE(legal.has_value()) << info.name << ": asynchronous, the argument does not hold";
                continue;
            }
            ASSERT_TRUE(legal.has_value()) << info.name << " p=" << p << " is one batch after another";
            ASSERT_TRUE(*legal) << info.name << " p=" << p;
            for (int t = 0; t < 160; ++t) {
                Schedule broken = *made;
                breakBlocks(broken, rng, t, t % 2 == 0);
                const Status whole = detail::validateStepByStep(broken);
                const std::optional<bool> byBatch = detail::passesBatchByBatch(broken);
                if (byBatch) {
                    ASSERT_EQ(*byBatch, static_cast<bool>(whole))
                        << info.name << " p=" << p << " change " << t << ": " << (whole ? "" : whole.error().message);
                    ++checkedByBatch;
                }
                ASSERT_EQ(static_cast<bool>(validate(broken)), static_cast<bool>(whole));
                (whole ? accepted : refused) += 1;
            }
        }
    }
    // Both verdicts, and mostly through the batch-by-batch path: the comparison can fail either way.
    EXPECT_GT(refused, 1000);
    EXPECT_GT(accepted, 100);
    EXPECT_GT(checkedByBatch, 2000);
}

// A batch that names a micro-batch of the next one is outside the argument: the whole schedule is
// walked, and its verdict stands (here: legal, since the two batches' actions swap consistently).
TEST(ValidateBatchByBatch, StepsAsideForABatchReadingAnother)
{
    auto made = makeSchedule({.name = "gpipe", .stages = 2, .microbatches = 2, .batches = 3});
    ASSERT_TRUE(made) << made.error().describe();
    Schedule crossed = *made;
    for (auto& program : crossed.programs) {
        for (Action& a : program) {
            if (a.kind != ActionKind::Update && a.microbatch == 1) {
                a.microbatch = 2; // batch 0's second micro-batch and batch 1's first change places
            } else if (a.kind != ActionKind::Update && a.microbatch == 2) {
                a.microbatch = 1;
            }
        }
    }
    EXPECT_FALSE(detail::passesBatchByBatch(crossed).has_value());
    EXPECT_EQ(static_cast<bool>(validate(crossed)), static_cast<bool>(detail::validateStepByStep(crossed)));
}

} // namespace
} // namespace bs::runtime
