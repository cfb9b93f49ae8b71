#pragma once
// A run's checkpoint: <run>/checkpoint/state.json (this file's schema, torch-free) beside one
// tensor archive per stage and one of the random generators, named by the checkpoint's step
// (stage3-step40.pt, rng-step40.pt; written by runtime/train/model/pipeline_checkpoint.cpp).
//
// Commit order: the archives of step N are written (each atomically), then state.json names N
// (atomically), then archives of other steps are removed. A crash at any point leaves a state.json
// whose archives are all present: the previous checkpoint, or the new one.
//
// A checkpoint is taken only where nothing is in flight: every micro-batch forwarded so far has
// been backwarded on every stage and every gradient applied (no accumulation window open, no
// stashed weight version, no activation held). Synchronous schedules reach such a point at every
// global-batch boundary; asynchronous ones (paci, pipedream, 2bw, async-1f1b) drain there, so a
// run with checkpoints every N batches trains as N-batch schedules one after the other.

#include "base/result.h"
#include "base/time.h"
#include "runtime/plan/config/run_config.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

inline constexpr const char* kCheckpointDirName = "checkpoint";
inline constexpr const char* kCheckpointStateFileName = "state.json";
inline constexpr int kCheckpointFormat = 1;
/// Largest state.json accepted (the loss series of a 10^6-batch run is ~25 MB).
inline constexpr std::uint64_t kMaxCheckpointStateBytes = std::uint64_t{256} << 20;

/// One live Apply that took effect before the checkpoint (RunSession's AppliedChange, flattened).
struct CheckpointChange
{
    int step = 0;
    std::int64_t firstMicrobatch = 0;
    TimeNs time = 0;
    std::string label;
    RunConfig config; ///< the configuration in force from `step` on

    friend bool operator==(const CheckpointChange&, const CheckpointChange&) = default;
};

struct CheckpointState
{
    int format = kCheckpointFormat;
    int step = 0; ///< global batches done; the resumed run trains step `step` next
    std::int64_t microbatchesDone = 0; ///< run-wide micro-batch ids used so far
    // The data position (DataCursor): micro-batch `cursorFirstMicrobatch` reads sequence
    // `cursorFirstSequence` on, in rows of `cursorBatchSize`.
    std::int64_t cursorFirstMicrobatch = 0;
    std::int64_t cursorFirstSequence = 0;
    int cursorBatchSize = 1;
    TimeNs virtualTime = 0; ///< end of the timeline so far (ns)
    std::vector<int> versions; ///< updates applied per stage
    int updatesOffset = 0; ///< the LR schedule's offset after live Applies (LrSchedule::updatesOffset)
    double tokensBefore = 0.0; ///< tokens trained before the settings in force
    int settingsStep = 0; ///< first step of the settings in force
    double trainWallS = 0.0;
    double evalWallS = 0.0;
    TimeNs busy = 0;
    RunConfig config; ///< the settings in force
    RunConfig initialConfig; ///< the run's first settings (validation set, trace analysis)
    std::vector<CheckpointChange> changes;
    // The summary's series so far (a NaN loss is written as null).
    std::vector<double> losses;
    std::vector<double> valLosses;
    std::vector<int> valSteps;
    std::vector<double> valVirtualTimesS;
    std::optional<double> timeToTargetS;
    std::optional<int> stepToTarget;

    friend bool operator==(const CheckpointState&, const CheckpointState&) = default;
};

/// "stage3-step40.pt", "rng-step40.pt": the archives of the checkpoint at `step`.
std::string stageCheckpointFileName(int stage, int step);
std::string rngCheckpointFileName(int step);

/// state.json atomically (base/atomic_file.h) in `checkpointDir` (created when missing).
Status writeCheckpointState(const std::filesystem::path& checkpointDir, const CheckpointState& state);
/// Parses state.json text. ParseError with context "sourceName: field" for a missing field, a wrong
/// type or a value out of range (negative counts, a config that does not parse or validate).
Result<CheckpointState> parseCheckpointState(std::string_view text, std::string_view sourceName = "state.json");
/// Reads `checkpointDir`/state.json (bounded read). IoError "no checkpoint" naming the file when
/// it is missing.
Result<CheckpointState> readCheckpointState(const std::filesystem::path& checkpointDir);
/// Removes the archives in `checkpointDir` that belong to other steps than `keepStep`.
void removeOtherCheckpointFiles(const std::filesystem::path& checkpointDir, int keepStep);

} // namespace bs::runtime
